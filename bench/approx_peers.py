"""The other rows of an approximate-BC record (bench/approx_gpu.py, issue 49): turbobc's exact
run timed in the same call, SILVAN (Pellegrina and Vandin's sampler) on the same ε and δ,
and the top-k pair: ``turbobc.top_k`` against NetworKit's ``KadabraBetweenness(ε, δ, k)``.

SILVAN is not part of turbobc: build its public repository's ``silvan/`` folder in an ignored
folder (``g++ -fopenmp -std=c++11 -O3 -Iinclude main.cpp src/*.cpp -o silvan``, static
libstdc++ and libgomp where the binary travels to another host) and hand the binary to
``approx_gpu.py --silvan``. It reads one ``u v`` pair a line (0-based), writes ``id,estimate``
lines to its ``-o`` file and prints ``num_samples:``; it runs on ``OMP_NUM_THREADS`` threads.

Each peer runs in a child with a time limit: a run past it is recorded as such (a lower bound
of the ratio), never waited for.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["exact_seconds", "silvan", "top_k_rows", "within"]


def exact_seconds(A, engine: str, repeats: int = 3) -> tuple[float, np.ndarray]:
    """The median seconds of ``turbobc.run_bc(A, engine=engine)`` (exact, trees folded: what
    ``bc`` runs) over ``repeats`` warm runs, and its values."""
    import statistics

    import turbobc

    values = turbobc.bc(A, engine=engine)  # warm: the upload, the compile
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        turbobc.run_bc(A, engine=engine)
        times.append(time.perf_counter() - began)
    return statistics.median(times), values


def silvan(binary: Path, A, epsilon: float, delta: float, limit: float,
           threads: int | None = None) -> dict:
    """SILVAN on the undirected pattern of ``A``: the whole process's seconds (reading the
    edge list included, as its own "Total time" leaves out), its samples and values in
    networkx's normalization (its scale is ordered pairs over n (n − 1): networkx's normalized
    value times (n − 2) / n), or ``{"silvan_seconds_above": limit}`` when it ran longer."""
    n = A.shape[0]
    upper = sp.triu(sp.csr_array(A) + sp.csr_array(A).T, k=1).tocoo()
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    with tempfile.TemporaryDirectory() as folder:
        edges, out = Path(folder) / "graph.txt", Path(folder) / "est.csv"
        np.savetxt(edges, np.column_stack([upper.row, upper.col]), fmt="%d")
        began = time.perf_counter()
        try:
            done = subprocess.run([str(binary), "-o", str(out), str(epsilon), str(delta),
                                   str(edges)], capture_output=True, text=True, env=env,
                                  timeout=limit)
        except subprocess.TimeoutExpired:
            return {"silvan_seconds_above": limit}
        seconds = time.perf_counter() - began
        if done.returncode:
            return {"silvan_error": done.stderr[-500:] or done.stdout[-500:]}
        samples = re.search(r"num_samples:\s*(\d+)", done.stdout)
        values = np.zeros(n)
        for line in out.read_text().splitlines():
            vertex, _, estimate = line.partition(",")
            if vertex.strip().isdigit():
                values[int(vertex)] = float(estimate)
    return {"silvan_seconds": seconds, "silvan_values": values * n / (n - 2),
            "silvan_samples": int(samples[1]) if samples else None}


def _child(queue, function, args):
    try:
        queue.put(function(*args))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        queue.put(exc)


def within(function, args, limit: float):
    """``function(*args)`` in a child process stopped after ``limit`` seconds (the graph's
    build first: a minute more): its result, or None when it ran longer."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue, function, args))
    child.start()
    try:
        result = queue.get(timeout=limit + 60)
    except Exception:  # noqa: BLE001 - queue.Empty: still running
        result = None
    child.kill()
    child.join()
    if isinstance(result, Exception):
        raise result
    return result


def _kadabra_top(A, epsilon: float, delta: float, k: int):
    from topk_cpu import kadabra_top, networkit_graph

    return kadabra_top(networkit_graph(A), epsilon, delta, k)


def top_k_rows(A, k: int, epsilon: float, delta: float, engine: str, limit: float,
               reference) -> dict:
    """``turbobc.top_k(A, k, epsilon=ε)`` (warm) against KADABRA's top-k on all threads, and,
    with the exact values, whether each keeps the top-k guarantee."""
    import turbobc
    from topk_cpu import keeps_top_k

    turbobc.top_k(A, k, epsilon=0.3, delta=delta, seed=1, engine=engine)
    began = time.perf_counter()
    top = turbobc.top_k(A, k, epsilon=epsilon, delta=delta, seed=0, engine=engine)
    row = {"top_k": k, "top_k_seconds": time.perf_counter() - began,
           "top_k_samples": top.facts["samples"], "top_k_stopped_by": top.facts["stopped_by"],
           "top_k_ties": int(top.facts["ties"].size)}
    kadabra = within(_kadabra_top, (A, epsilon, delta, k), limit)
    if kadabra is None:
        row["kadabra_top_k_seconds_above"] = limit
    else:
        row.update(kadabra_top_k_seconds=kadabra[0], kadabra_top_k_samples=kadabra[2],
                   kadabra_top_k_over_turbobc=kadabra[0] / row["top_k_seconds"])
    if reference is not None:
        row["top_k_kept"] = keeps_top_k(top.vertices, reference, k, epsilon)
        if kadabra is not None:
            row["kadabra_top_k_kept"] = keeps_top_k(kadabra[1], reference, k, epsilon)
    return row
