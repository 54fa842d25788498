"""The CPU engine on many cores: batches swept at once (``Tuning.cpu_concurrent_batches``)
against one batch at a time with every GraphBLAS thread, NetworKit's exact Betweenness on the
same cores beside them (issue 12's CPU table).

For each graph (undirected, unweighted; trees folded as ``turbobc.bc`` does), on all of the
host's cores: NetworKit ``Betweenness``, then ``turbobc.bc(engine="graphblas")`` with 1, 2,
4 and 8 concurrent batches and with ``"auto"`` (best of two runs each; each setting's largest
relative difference from the first setting's values is recorded). Ratios are NetworKit
seconds / turbobc seconds (above 1: turbobc faster).

Usage: python bench/cpu_threads.py [GRAPH ...] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

import turbobc  # noqa: E402
from turbobc._tuning import tuning  # noqa: E402

DEFAULT_GRAPHS = ["road-minnesota.mtx", "power.mtx", "ca-GrQc.txt.gz", "ego-Facebook",
                  "wiki-Vote.txt.gz"]
SETTINGS = (1, 2, 4, 8, "auto")


def _networkit_seconds(A: sp.csr_array, cores: int) -> float:
    import networkit as nk

    coo = sp.triu(A, k=1).tocoo()
    G = nk.Graph(A.shape[0])
    for u, v in zip(coo.row.tolist(), coo.col.tolist()):
        G.addEdge(u, v)
    nk.setNumberOfThreads(cores)
    return _best_of_two(lambda: nk.centrality.Betweenness(G).run())[0]


def _best_of_two(fn) -> tuple[float, object]:
    times, out = [], None
    for _ in range(2):
        began = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - began)
    return min(times), out


def bench(name: str, cores: int) -> dict:
    A = graphs.graph(name)
    row = {"graph": name, "n": A.shape[0], "nnz": A.nnz, "cores": cores,
           "networkit_seconds": _networkit_seconds(A, cores)}
    reference = None
    for setting in SETTINGS:
        with tuning(cpu_concurrent_batches=setting):
            seconds, result = _best_of_two(lambda: turbobc.run_bc(A, engine="graphblas"))
        reference = result.values if reference is None else reference
        row[f"turbobc_{setting}_seconds"] = seconds
        row[f"turbobc_{setting}_batches"] = [result.facts.get("concurrent_batches"),
                                             result.facts.get("batches")]
        row[f"ratio_{setting}"] = row["networkit_seconds"] / seconds
        row[f"max_rel_diff_{setting}"] = float(np.max(
            np.abs(result.values - reference) / np.maximum(np.abs(reference), 1e-300)))
    print(f"{name:22s} n={row['n']:6d} cores={cores} networkit {row['networkit_seconds']:.3f} s;"
          + "".join(f" {s}: {row[f'turbobc_{s}_seconds']:.3f} s (x{row[f'ratio_{s}']:.2f})"
                    for s in SETTINGS), flush=True)
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
