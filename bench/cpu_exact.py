"""Exact BC on the CPU: turbobc's graphblas engine against networkx, in one run.

    python -m bench.cpu_exact                 # ego-Facebook, the issue's benchmark
    python -m bench.cpu_exact --graph karate  # seconds, for a smoke test

Writes ``bench/results/cpu_exact-<graph>-<time>.json`` with both times, their ratio,
GTEPS and the largest difference between the two results.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import networkx as nx
import numpy as np

import turbobc
from bench.records import RESULTS, gteps, write_record

GRAPHS = {
    "ego-Facebook": turbobc.load_ego_facebook,
    "karate": lambda: nx.to_scipy_sparse_array(nx.karate_club_graph(), format="csr",
                                               weight=None),
}


def run(graph: str, repeats: int, results: Path) -> dict:
    """Time both engines on ``graph``; return the record written."""
    A = GRAPHS[graph]()
    n, nnz = A.shape[0], A.nnz
    turbobc.bc(A[:50, :50], engine="graphblas")  # warm-up: library load, first products
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        ours = turbobc.bc(A, engine="graphblas")
        times.append(time.perf_counter() - start)
    G = nx.from_scipy_sparse_array(A)
    start = time.perf_counter()
    theirs = nx.betweenness_centrality(G)
    networkx_seconds = time.perf_counter() - start
    expected = np.array([theirs[v] for v in range(n)])
    ours_seconds = statistics.median(times)
    record = {
        "graph": graph, "n": n, "nnz": nnz,
        "turbobc_graphblas_seconds": ours_seconds,
        "turbobc_graphblas_seconds_all": times,
        "networkx_seconds": networkx_seconds,
        "speedup_vs_networkx": networkx_seconds / ours_seconds,
        "turbobc_graphblas_gteps": gteps(n, nnz, ours_seconds),
        "max_abs_difference": float(np.max(np.abs(ours - expected))),
        "max_rel_difference": float(np.max(np.abs(ours - expected)
                                           / np.maximum(np.abs(expected), 1e-300))),
    }
    path = write_record(f"cpu_exact-{graph}", record, results)
    print(f"{graph}: n={n} nnz={nnz}  turbobc graphblas {ours_seconds:.3f} s (median of "
          f"{repeats})  networkx {networkx_seconds:.2f} s  ->  "
          f"{record['speedup_vs_networkx']:.1f}x faster; max |diff| "
          f"{record['max_abs_difference']:.2e}\nrecord: {path}")
    return record


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", choices=sorted(GRAPHS), default="ego-Facebook")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    run(args.graph, args.repeats, args.results)


if __name__ == "__main__":
    main()
