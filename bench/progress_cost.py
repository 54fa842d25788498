"""What a progress bar costs: exact BC on the CPU engine with ``progress=True`` (what
``turbobc bc --progress`` passes) against the same run without it, NetworKit and networkx beside
them (issue 36: the bar made a 3,000-vertex random geometric graph 28% slower).

The bar draws to a string here (it is redrawn every second, turbobc/_progress.py); the
record says how many batches each run swept (earlier versions split the engine's batches while
a bar was shown). The two settings alternate, ``--repeats`` times each, in one process; the
ratio is the best time with the bar over the best without (the quietest run of each, on a
machine shared with other work), the median ratio beside it. Values with and without the bar
are compared too. ``--widths`` adds what a batch's width does to the time per source (with
GraphBLAS's threads and with one): why splitting a batch costs more than its fixed cost.
``--threads 1`` keeps the contention of busy shared cores out of the timings.

Usage: python bench/progress_cost.py [GRAPH ...] [--repeats R] [--widths W ...]
       [--threads T] [--no-peers] [--out DIR]
GRAPH: rgg-N-R (a random geometric graph of N vertices and radius R, networkx, seed 1) or a
name of bench/graphs.py (default: rgg-3000-0.04 road-minnesota.mtx).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from cpu_threads import _networkit_seconds  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

import turbobc  # noqa: E402

DEFAULT_GRAPHS = ["rgg-3000-0.04", "road-minnesota.mtx"]


def _graph(name: str) -> sp.csr_array:
    if not name.startswith("rgg-"):
        return graphs.graph(name)
    import networkx as nx

    _, n, radius = name.split("-")
    G = nx.random_geometric_graph(int(n), float(radius), seed=1)
    return sp.csr_array(nx.to_scipy_sparse_array(G, nodelist=range(int(n)), format="csr"))


ENGINE = "graphblas"
"""The engine timed (``--engine``): the graphblas engine as first measured, or the cpu
engine, the default without a GPU."""


def _timed_run(A, progress: bool):
    """Seconds, values and facts of exact BC on :data:`ENGINE`; the bar drawn into a
    string."""
    with contextlib.redirect_stderr(io.StringIO()):
        began = time.perf_counter()
        result = turbobc.run_bc(A, engine=ENGINE, progress=progress)
        seconds = time.perf_counter() - began
    return seconds, result.values, result.facts


def _seconds_per_source(A, widths, repeats: int) -> dict:
    """Best seconds per source of one batch of the first w sources, for each w, with
    GraphBLAS's threads as they are and with one: what splitting a batch costs."""
    import graphblas as gb

    threads = gb.ss.config["nthreads"]
    rows = {}
    for setting in (threads, 1):
        gb.ss.config["nthreads"] = setting
        try:
            for w in widths:
                best = min(_timed_sources(A, w) for _ in range(repeats))
                rows[f"{setting}_threads_{w}_sources"] = best / w
        finally:
            gb.ss.config["nthreads"] = threads
    return rows


def _timed_sources(A, w: int) -> float:
    began = time.perf_counter()
    turbobc.bc(A, engine="graphblas", sources=list(range(w)))
    return time.perf_counter() - began


def _networkx_seconds(A) -> float:
    import networkx as nx

    G = nx.from_scipy_sparse_array(A)
    began = time.perf_counter()
    nx.betweenness_centrality(G)
    return time.perf_counter() - began


def bench(name: str, repeats: int, peers: bool, widths) -> dict:
    A = _graph(name)
    _timed_run(A, False)  # warm: imports, GraphBLAS threads
    times = {False: [], True: []}
    facts, values = {}, {}
    for _ in range(repeats):
        for progress in (False, True):
            seconds, values[progress], facts[progress] = _timed_run(A, progress)
            times[progress].append(seconds)
    plain, shown = min(times[False]), min(times[True])
    import graphblas as gb

    row = {"graph": name, "engine": ENGINE, "n": A.shape[0], "nnz": A.nnz, "repeats": repeats,
           "graphblas_threads": gb.ss.config["nthreads"],
           "seconds_without_progress": times[False], "seconds_with_progress": times[True],
           "best_without": plain, "best_with": shown, "ratio_best": shown / plain,
           "ratio_median": statistics.median(t / p for t, p in zip(times[True], times[False])),
           "batches_without": facts[False].get("batches", facts[False].get("rounds")),
           "batches_with": facts[True].get("batches", facts[True].get("rounds")),
           "folded": facts[True].get("folded"),
           "max_abs_difference": float(np.max(np.abs(values[True] - values[False])))}
    if widths and ENGINE == "graphblas":
        row["seconds_per_source"] = _seconds_per_source(
            A, [w for w in widths if w < A.shape[0]] + [A.shape[0]], max(1, repeats // 2))
        print(f"{name:22s} seconds per source by batch width: {row['seconds_per_source']}",
              flush=True)
    if peers:
        row["networkit_seconds"] = _networkit_seconds(A, os.cpu_count() or 1)
        row["networkx_seconds"] = _networkx_seconds(A)
        row["networkit_over_turbobc"] = row["networkit_seconds"] / plain
        row["networkx_over_turbobc"] = row["networkx_seconds"] / plain
    print(f"{name:22s} n={row['n']:6d} without {plain:.3f} s, with {shown:.3f} s: "
          f"x{row['ratio_best']:.4f} best, x{row['ratio_median']:.4f} median; batches "
          f"{row['batches_without']} -> {row['batches_with']}"
          + (f"; networkit {row['networkit_seconds']:.3f} s, networkx "
             f"{row['networkx_seconds']:.3f} s" if peers else ""), flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*", default=DEFAULT_GRAPHS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-peers", dest="peers", action="store_false",
                        help="leave out NetworKit and networkx")
    parser.add_argument("--widths", type=int, nargs="*", default=[128, 1000],
                        help="also time one batch of this many sources, and of all, per "
                             "source, with GraphBLAS's threads and with one (none: skip)")
    parser.add_argument("--threads", type=int, default=None,
                        help="GraphBLAS threads (default: as it starts, one per core); one "
                             "thread keeps busy shared cores from timing their contention")
    parser.add_argument("--engine", choices=("graphblas", "cpu"), default="graphblas",
                        help="the engine timed (--widths applies to graphblas only)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    global ENGINE
    ENGINE = args.engine
    import graphblas as gb

    if args.threads is not None:
        gb.ss.config["nthreads"] = args.threads
    rows = [bench(name, args.repeats, args.peers, args.widths) for name in args.graphs]
    print("record:", write_record("progress_cost", {"rows": rows}, results=args.out))


if __name__ == "__main__":
    main()
