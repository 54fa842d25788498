"""The compiled CPU engine (``engine="cpu"``) against NetworKit on the same threads, in one run
(issue 35's targets).

For each graph, every timed run alternating with NetworKit's (median of ``--repeats``), on
``--threads`` threads for both (``networkit.setNumberOfThreads``, ``numba.set_num_threads``):

- ``unweighted``: exact BC, NetworKit ``Betweenness`` against ``turbobc.bc(engine="cpu")``
  (trees folded, as ``bc`` does), and once each the graphblas reference and networkx where
  their estimated time is within ``--peer-seconds``;
- ``weighted``: integer lengths 1..100 (seed 1, the same both ways of an edge:
  bench/cpu_weighted.py ``with_lengths``), NetworKit's weighted ``Betweenness`` against
  ``bc(weight=True, engine="cpu")`` and the graphblas reference;
- ``approx``: ``bc(epsilon=ε, delta=0.1, engine="cpu")`` (its own choice of sampler) against
  NetworKit's ``KadabraBetweenness(ε, δ)`` (bench/approx_gpu.py ``kadabra``), alternating,
  the medians of ``--approx-repeats`` (9) runs each (a run is milliseconds on 16 threads),
  with the largest error of each against the exact values.

Ratios are NetworKit seconds / turbobc seconds (above 1: turbobc faster); the goals are
issue 35's. Each row also checks that the values agree (largest relative difference from
NetworKit's, whose unnormalized scores of an undirected graph sum ordered pairs: turbobc's
are doubled). The cpu engine's first call is timed apart (``first_call``): in fresh processes,
once with an empty numba cache (the compile a machine pays once, ``cache=True``) and once with
the cache this run left (what each new process pays), neither counted in the rows.

Usage: python bench/cpu_engine.py [--unweighted G ...] [--weighted G ...] [--approx G ...]
       [--epsilons 0.05 0.01] [--threads T] [--repeats 3] [--approx-repeats 9] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from approx_gpu import kadabra  # noqa: E402
from cpu_weighted import with_lengths  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

import turbobc  # noqa: E402

UNWEIGHTED = ["road-minnesota.mtx", "power.mtx", "ca-GrQc.txt.gz", "ego-Facebook",
              "wiki-Vote.txt.gz"]
WEIGHTED = ["road-minnesota.mtx", "power.mtx", "ego-Facebook"]
APPROX = ["ego-Facebook", "power.mtx", "ca-GrQc.txt.gz"]
GOALS = {("unweighted", "ego-Facebook"): 2.0, ("unweighted", "wiki-Vote.txt.gz"): 2.0}
"""NetworKit / turbobc wanted per (kind, graph); 1 where not listed (issue 35)."""

NETWORKX_SECONDS_PER_PAIR = 2e-7
"""networkx's seconds per (source, stored edge), to skip it where it would run long."""


def _median(fn, repeats: int) -> tuple[float, list, object]:
    times, out = [], None
    for _ in range(repeats):
        began = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times), times, out


def _networkit_graph(L: sp.csr_array, weighted: bool):
    import networkit as nk

    coo = sp.triu(L, k=1).tocoo()
    G = nk.Graph(L.shape[0], weighted=weighted, directed=False)
    for u, v, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
        G.addEdge(u, v, w) if weighted else G.addEdge(u, v)
    return G


def _networkit_bc(G):
    import networkit as nk

    algo = nk.centrality.Betweenness(G, normalized=False)
    algo.run()
    return np.array(algo.scores())


def _rel_diff(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.max(np.abs(ours - theirs) / np.maximum(np.abs(theirs), 1e-12)))


def exact_row(name: str, kind: str, repeats: int, threads: int, peer_seconds: float) -> dict:
    """One graph, unweighted or weighted: NetworKit and the cpu engine alternating, the
    graphblas reference and networkx once where they fit in ``peer_seconds``."""
    A = graphs.graph(name)
    weighted = kind == "weighted"
    L = with_lengths(A) if weighted else A
    options = {"weight": True} if weighted else {}
    row = {"graph": name, "kind": kind, "n": A.shape[0], "nnz": int(A.nnz), "threads": threads,
           "lengths": "integers 1..100" if weighted else None, "repeats": repeats,
           "goal": GOALS.get((kind, name), 1.0)}
    G = _networkit_graph(L, weighted)
    cpu_times, nk_times, ours, theirs = [], [], None, None
    for _ in range(repeats):  # alternating: both see the same load on a shared machine
        began = time.perf_counter()
        result = turbobc.run_bc(L, engine="cpu", normalized=False, **options)
        cpu_times.append(time.perf_counter() - began)
        began = time.perf_counter()
        theirs = _networkit_bc(G)
        nk_times.append(time.perf_counter() - began)
    ours = result.values
    row.update(cpu_seconds=statistics.median(cpu_times), cpu_seconds_all=cpu_times,
               networkit_seconds=statistics.median(nk_times), networkit_seconds_all=nk_times,
               cpu_facts={k: v for k, v in result.facts.items()
                          if isinstance(v, (int, float, str, bool))})
    row["ratio"] = row["networkit_seconds"] / row["cpu_seconds"]
    row["met"] = row["ratio"] >= row["goal"]
    row["max_rel_diff_vs_networkit"] = _rel_diff(2 * ours, theirs)
    per_source = row["cpu_seconds"] / A.shape[0]
    # the graphblas reference: several times slower, once, where it fits the budget
    estimate = 20 * row["networkit_seconds"]
    if estimate <= peer_seconds or row["n"] <= 6000:
        seconds, _, values = _median(lambda: turbobc.bc(L, engine="graphblas", normalized=False,
                                                        **options), 1)
        row.update(graphblas_seconds=seconds, cpu_over_graphblas=seconds / row["cpu_seconds"],
                   max_rel_diff_vs_graphblas=_rel_diff(ours, values))
    else:
        row["graphblas_skipped"] = f"estimated {estimate:.0f} s > --peer-seconds"
    pairs = A.shape[0] * A.nnz
    if not weighted and pairs * NETWORKX_SECONDS_PER_PAIR <= peer_seconds:
        import networkx as nx

        H = nx.from_scipy_sparse_array(A)
        seconds, _, _ = _median(lambda: nx.betweenness_centrality(H, normalized=False), 1)
        row.update(networkx_seconds=seconds, networkx_over_cpu=seconds / row["cpu_seconds"])
    else:
        row["networkx_skipped"] = (f"about {pairs * NETWORKX_SECONDS_PER_PAIR:.0f} s "
                                   "> --peer-seconds" if not weighted else "not timed weighted")
    row["cpu_seconds_per_source"] = per_source
    row["load_average"] = _load()
    _print(row)
    return row


def approx_rows(name: str, epsilons: list[float], delta: float, threads: int,
                repeats: int) -> list[dict]:
    """bc(epsilon=) on the cpu engine against KADABRA, alternating, the medians of
    ``repeats`` runs each, with each one's largest error against the exact values."""
    A = graphs.graph(name)
    exact = turbobc.bc(A, engine="cpu")
    turbobc.run_bc(A, epsilon=0.5, delta=delta, seed=1, engine="cpu")  # its compile, apart
    rows = []
    for epsilon in epsilons:
        ours, theirs = [], []
        for _ in range(repeats):
            began = time.perf_counter()
            result = turbobc.run_bc(A, epsilon=epsilon, delta=delta, seed=0, engine="cpu")
            ours.append(time.perf_counter() - began)
            k_seconds, k_values, k_facts = kadabra(A, epsilon, delta)
            theirs.append(k_seconds)
        row = {"graph": name, "kind": "approx", "n": A.shape[0], "nnz": int(A.nnz),
               "threads": threads, "epsilon": epsilon, "delta": delta, "goal": 1.0,
               "repeats": repeats, "cpu_seconds": statistics.median(ours),
               "cpu_seconds_all": ours, "networkit_seconds": statistics.median(theirs),
               "networkit_seconds_all": theirs, "samples": result.facts["samples"],
               "pilot_samples": result.facts.get("pilot_samples", 0),
               "sampler": result.facts.get("sampler"),
               "stopped_by": result.facts["stopped_by"], "bound": result.facts["bound"],
               "cpu_max_error": float(np.max(np.abs(result.values - exact))),
               "kadabra_max_error": float(np.max(np.abs(k_values - exact))), **k_facts}
        row["ratio"] = row["networkit_seconds"] / row["cpu_seconds"]
        row["met"] = row["ratio"] >= row["goal"]
        row["load_average"] = _load()
        _print(row)
        rows.append(row)
    return rows


def first_call(graph: str = "power.mtx") -> dict:
    """Seconds of the cpu engine's first call in a fresh process: with an empty numba cache
    (every function compiled, what a machine pays once) and with this run's cache (loaded,
    what each new process pays); unweighted exact, weighted, edge and approximate BC."""
    code = ("import sys, time; sys.path.insert(0, 'bench'); import graphs, turbobc;"
            f"A = graphs.graph({graph!r}); began = time.perf_counter();"
            "turbobc.bc(A, engine='cpu'); turbobc.bc(A, engine='cpu', weight=True);"
            "turbobc.edge_bc(A, engine='cpu'); turbobc.bc(A, engine='cpu', epsilon=0.3);"
            "print(time.perf_counter() - began)")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    out = {"graph": graph, "calls": "bc, bc(weight=True), edge_bc, bc(epsilon=0.3)"}
    with tempfile.TemporaryDirectory() as empty:
        for label, cache in (("empty_cache", empty), ("warm_cache", empty)):
            began = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                                  text=True, env=dict(env, NUMBA_CACHE_DIR=cache))
            if done.returncode:
                out[f"{label}_error"] = done.stderr[-2000:]
                continue
            out[f"{label}_calls_seconds"] = float(done.stdout.split()[-1])
            out[f"{label}_process_seconds"] = time.perf_counter() - began
    print("first call:", {k: round(v, 2) if isinstance(v, float) else v
                          for k, v in out.items()}, flush=True)
    return out


def _load() -> list[float]:
    """The host's load averages (1, 5, 15 minutes): other work on a shared machine stalls
    every parallel region whose threads wait for a descheduled one."""
    return [round(x, 2) for x in os.getloadavg()]


def _print(row: dict) -> None:
    what = row["kind"] + (f" eps={row['epsilon']}" if "epsilon" in row else "")
    peer = "kadabra" if row["kind"] == "approx" else "networkit"
    print(f"{row['graph']:20s} {what:16s} threads={row['threads']} cpu {row['cpu_seconds']:.3f} s"
          f"  {peer} {row['networkit_seconds']:.3f} s  ratio x{row['ratio']:.2f} (goal "
          f"{row['goal']:g}: {'met' if row['met'] else 'NOT met'}; load "
          f"{row['load_average'][0]})", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unweighted", nargs="*", default=UNWEIGHTED)
    parser.add_argument("--weighted", nargs="*", default=WEIGHTED)
    parser.add_argument("--approx", nargs="*", default=APPROX)
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.05, 0.01])
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--approx-repeats", type=int, default=9,
                        help="runs of each side of an approximate row (their medians): a run "
                             "takes milliseconds on 16 threads, where one descheduled thread "
                             "moves a single sample by half")
    parser.add_argument("--peer-seconds", type=float, default=120.0,
                        help="run graphblas and networkx once where they should take less")
    parser.add_argument("--no-first-call", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    import networkit as nk
    import numba

    nk.setNumberOfThreads(args.threads)
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    record = {"threads": args.threads, "repeats": args.repeats,
              "approx_repeats": args.approx_repeats, "rows": []}
    if not args.no_first_call:
        record["first_call"] = first_call()
    turbobc.bc(graphs.graph("karate"), engine="cpu")  # the compile (or the cache's load)
    path = None
    for kind, names in (("unweighted", args.unweighted), ("weighted", args.weighted)):
        for name in names:
            record["rows"].append(exact_row(name, kind, args.repeats, args.threads,
                                            args.peer_seconds))
            path = write_record("cpu_engine", record, results=args.out, path=path)
    for name in args.approx:
        record["rows"] += approx_rows(name, args.epsilons, args.delta, args.threads,
                                      args.approx_repeats)
        path = write_record("cpu_engine", record, results=args.out, path=path)
    path = write_record("cpu_engine", record, results=args.out, path=path)
    print("record:", path)


if __name__ == "__main__":
    main()
