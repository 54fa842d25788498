"""Exact edge BC of whole graphs with the trees hanging off them folded (``Tuning.fold_trees``,
``FoldedTrees.expand_edges`` in turbobc/_reduce.py) against the same call without it, with
exact vertex BC of the same graph beside it (issue 13: edge BC within 1.3x of vertex BC).

For each graph (undirected, unweighted): on the engine asked for (``--engine``; default the
GPU when CuPy sees one, else the CPU engine), end to end after an untimed warm-up, best of
``--repeats`` runs: ``turbobc.run_bc`` (vertex BC: trees, and on the GPU chains, folded),
``turbobc.run_edge_bc`` with the trees folded and with ``fold_trees=False``; the largest
difference between the two edge results (largest absolute difference over the largest
value, and the largest per-entry relative difference); the vertices folded. On the CPU
engine graphs of more than 20,000 vertices are left out (hours of edge BC on a few cores).
Record ``edge_folding``.

Usage: python bench/edge_folding.py [GRAPH ...] [--engine gpu|graphblas] [--repeats 3]
[--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from chain_folding import _timed  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

from turbobc._api import run_bc, run_edge_bc  # noqa: E402
from turbobc._engines import gpu_status  # noqa: E402

DEFAULT_GRAPHS = ["road-luxembourg-osm.mtx.gz", "power.mtx", "ca-GrQc.txt.gz", "ego-Facebook"]
CPU_MAX_N = 20_000  # the CPU engine runs graphs up to this size


def bench(name: str, A, engine: str, repeats: int) -> dict:
    vertex_s, vertex = _timed(A, engine, repeats, run=run_bc)
    folded_s, folded = _timed(A, engine, repeats, run=run_edge_bc)
    plain_s, plain = _timed(A, engine, repeats, run=run_edge_bc, fold_trees=False)
    a, b = folded.values, plain.values  # the same pattern: compare the stored values
    assert (a.indptr == b.indptr).all() and (a.indices == b.indices).all()
    gap = np.abs(a.data - b.data)
    scale = max(float(np.abs(b.data).max(initial=0.0)), 1e-300)
    entry = gap / (np.abs(b.data) + 1e-12 * scale)
    row = {"graph": name, "engine": engine, "n": A.shape[0], "nnz": int(A.nnz),
           "repeats": repeats,
           "vertex_seconds": vertex_s, "vertex_folded": vertex.facts.get("folded"),
           "vertex_chain_folded": vertex.facts.get("chain_folded"),
           "edge_folded_seconds": folded_s, "edge_folded": folded.facts.get("folded"),
           "edge_unfolded_seconds": plain_s,
           "edge_folding_speedup": plain_s / folded_s,
           "edge_over_vertex": folded_s / vertex_s,
           "edge_unfolded_over_vertex": plain_s / vertex_s,
           "max_rel_diff_folded_vs_unfolded": float(gap.max(initial=0.0)) / scale,
           "max_entry_rel_diff_folded_vs_unfolded": float(entry.max(initial=0.0))}
    print(f"{name:22s} {engine}: vertex {vertex_s:.3f} s, edge {folded_s:.3f} s folded "
          f"({row['edge_folded']} vertices) / {plain_s:.3f} s unfolded: edge / vertex "
          f"{row['edge_over_vertex']:.2f} (unfolded {row['edge_unfolded_over_vertex']:.2f}), "
          f"diff {row['max_rel_diff_folded_vs_unfolded']:.1e}", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*", default=DEFAULT_GRAPHS)
    parser.add_argument("--engine", choices=["gpu", "graphblas"], default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    engine = args.engine or ("gpu" if gpu_status()[0] else "graphblas")
    rows, path = [], None
    for name in args.graphs:  # the record rewritten after each graph: a cut run keeps its rows
        A = graphs.graph(name)
        if engine == "graphblas" and A.shape[0] > CPU_MAX_N:
            print(f"{name}: n = {A.shape[0]:,} left out on the CPU engine", flush=True)
            continue
        rows.append(bench(name, A, engine, args.repeats))
        path = write_record("edge_folding", {"rows": rows}, Path(args.out), path)
    print(f"record: {path}")


if __name__ == "__main__":
    main()
