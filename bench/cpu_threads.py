"""Where the CPU engine's time goes on many cores: GraphBLAS threads within a batch, or batches
spread over Python threads, against NetworKit's exact Betweenness on the same cores (issue 12's
CPU table).

For each graph (undirected, unweighted), on all of the host's cores:

- NetworKit ``Betweenness`` and ``turbobc.bc(engine="graphblas")`` (trees folded), best of two;
- the unfolded graph's sweeper over every source in one call, with SuiteSparse:GraphBLAS
  limited to k threads (a ``graphblas.ss.Context``), k = 1, 2, 4, 8, ... up to the cores;
- the same sources split into ``batches`` parts, swept by W Python threads at once, each
  with ``cores // W`` GraphBLAS threads (W = 2, 4, 8, 16; batches = W and 2 W). The partial sums
  are checked against the one-call sums.

Ratios are NetworKit seconds / turbobc seconds (above 1: turbobc faster). The record shows
whether a batch's GraphBLAS calls scale with threads and whether independent batches do
(they share the GIL between calls).

Usage: python bench/cpu_threads.py [GRAPH ...] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

import turbobc  # noqa: E402
from turbobc._graph import Graph  # noqa: E402
from turbobc.engines.graphblas import GraphblasSweeper  # noqa: E402
from turbobc.engines.protocol import Problem  # noqa: E402

DEFAULT_GRAPHS = ["road-minnesota.mtx", "power.mtx", "ca-GrQc.txt.gz", "ego-Facebook",
                  "wiki-Vote.txt.gz"]


def _networkit_seconds(A: sp.csr_array, cores: int) -> float:
    import networkit as nk

    coo = sp.triu(A, k=1).tocoo()
    G = nk.Graph(A.shape[0])
    for u, v in zip(coo.row.tolist(), coo.col.tolist()):
        G.addEdge(u, v)
    nk.setNumberOfThreads(cores)
    began = time.perf_counter()
    nk.centrality.Betweenness(G).run()
    return time.perf_counter() - began


def _best_of_two(fn) -> float:
    times = []
    for _ in range(2):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def bench(name: str, cores: int) -> dict:
    from graphblas.core.ss.context import Context

    A = graphs.graph(name).tocsr()
    A.sort_indices()
    n = A.shape[0]
    row = {"graph": name, "n": n, "nnz": A.nnz, "cores": cores}
    row["networkit_seconds"] = _networkit_seconds(A, cores)
    row["turbobc_seconds"] = _best_of_two(lambda: turbobc.bc(A, engine="graphblas"))
    row["ratio"] = row["networkit_seconds"] / row["turbobc_seconds"]
    graph = Graph(sp.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=A.shape), False)
    sweeper = GraphblasSweeper(Problem(graph))
    everyone = np.arange(n)
    whole = sweeper.run(everyone).vertex
    one_call = {}
    for k in sorted({1, 2, 4, 8, cores}):
        if k > cores:
            continue
        context = Context(nthreads=k)
        began = time.perf_counter()
        sweeper.run(everyone)
        one_call[str(k)] = time.perf_counter() - began
        context.disengage()
    row["one_call_seconds_by_graphblas_threads"] = one_call
    spread = []
    for workers in (2, 4, 8, 16):
        if workers > cores:
            continue
        for batches in (workers, 2 * workers):
            parts = np.array_split(everyone, batches)

            def sweep(part, threads=max(1, cores // workers)):
                context = Context(nthreads=threads)
                try:
                    return sweeper.run(part).vertex
                finally:
                    context.disengage()

            began = time.perf_counter()
            with ThreadPoolExecutor(workers) as pool:
                sums = list(pool.map(sweep, parts))
            seconds = time.perf_counter() - began
            diff = float(np.max(np.abs(sum(sums) - whole) / np.maximum(np.abs(whole), 1.0)))
            spread.append({"workers": workers, "batches": batches, "seconds": seconds,
                           "networkit_over_this": row["networkit_seconds"] / seconds,
                           "max_rel_diff": diff})
    row["threads_over_batches"] = spread
    best = min(spread, key=lambda r: r["seconds"]) if spread else None
    print(f"{name:22s} n={n:6d} cores={cores} networkit {row['networkit_seconds']:.3f} s, "
          f"turbobc {row['turbobc_seconds']:.3f} s (x{row['ratio']:.2f}); one call by "
          f"GraphBLAS threads {({k: round(v, 3) for k, v in one_call.items()})}; best spread "
          + (f"{best['workers']} threads x {best['batches']} batches {best['seconds']:.3f} s "
             f"(x{best['networkit_over_this']:.2f})" if best else "-"), flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*", default=DEFAULT_GRAPHS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    rows = [bench(name, cores) for name in args.graphs]
    print("record:", write_record("cpu_threads", {"rows": rows}, results=args.out))


if __name__ == "__main__":
    main()
