"""Exact edge BC of whole graphs with the trees hanging off them folded (``Tuning.fold_trees``,
``FoldedTrees.expand_edges`` in turbobc/_reduce.py), and with the sources inside chains folded
too (``Tuning.fold_chains``, ``ChainFolding.edge_credit`` in turbobc/_chains.py), against the
same call without either, with exact vertex BC of the same graph beside it (issue 13: edge BC
within 1.3x of vertex BC; issue 33, item 4: within 1.5x on road-luxembourg-osm with chains
folded).

For each graph (undirected, unweighted): on the engine asked for (``--engine``; default the
GPU when CuPy sees one, else the compiled CPU engine), end to end after an untimed warm-up,
best of ``--repeats`` runs:

- ``turbobc.run_bc`` with the default knobs (vertex BC: trees, and on the GPU chains, folded)
  and with ``fold_chains=True`` (chains folded on every engine);
- ``turbobc.run_edge_bc`` with the trees folded and ``fold_chains=False`` (the trees alone),
  with ``fold_chains=True`` (trees and chains) and with ``fold_trees=False,
  fold_chains=False`` (nothing folded);

the ratios of edge to vertex BC (``edge_chains_over_vertex_chains``: both with chains
folded); the largest difference between each folded edge result and the unfolded one
(largest absolute difference over the largest value, and the largest per-entry relative
difference); the vertices folded; the host's load average. On a CPU engine graphs of more than ``--max-n`` vertices
(20,000) are left out (hours of unfolded edge BC on a few cores). Record ``edge_folding``.

Usage: python bench/edge_folding.py [GRAPH ...] [--engine gpu|cpu|graphblas] [--repeats 3]
[--max-n 20000] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
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


def _differences(folded, plain) -> tuple[float, float]:
    """The largest absolute difference between two edge results over the largest value, and
    the largest per-entry relative difference."""
    a, b = folded.values, plain.values  # the same pattern: compare the stored values
    assert (a.indptr == b.indptr).all() and (a.indices == b.indices).all()
    gap = np.abs(a.data - b.data)
    scale = max(float(np.abs(b.data).max(initial=0.0)), 1e-300)
    entry = gap / (np.abs(b.data) + 1e-12 * scale)
    return float(gap.max(initial=0.0)) / scale, float(entry.max(initial=0.0))


def bench(name: str, A, engine: str, repeats: int) -> dict:
    vertex_s, vertex = _timed(A, engine, repeats, run=run_bc)
    vertex_chains_s, vertex_chains = _timed(A, engine, repeats, run=run_bc, fold_chains=True)
    folded_s, folded = _timed(A, engine, repeats, run=run_edge_bc, fold_chains=False)
    chains_s, chains = _timed(A, engine, repeats, run=run_edge_bc, fold_chains=True)
    plain_s, plain = _timed(A, engine, repeats, run=run_edge_bc, fold_trees=False,
                            fold_chains=False)
    folded_gap, folded_entry = _differences(folded, plain)
    chains_gap, chains_entry = _differences(chains, plain)
    row = {"graph": name, "engine": engine, "n": A.shape[0], "nnz": int(A.nnz),
           "repeats": repeats,
           "vertex_seconds": vertex_s, "vertex_folded": vertex.facts.get("folded"),
           "vertex_chain_folded": vertex.facts.get("chain_folded"),
           "vertex_chains_seconds": vertex_chains_s,
           "vertex_chains_chain_folded": vertex_chains.facts.get("chain_folded"),
           "edge_folded_seconds": folded_s, "edge_folded": folded.facts.get("folded"),
           "edge_chains_seconds": chains_s,
           "edge_chain_folded": chains.facts.get("chain_folded"),
           "edge_chains": chains.facts.get("chains"),
           "edge_chain_seconds": chains.facts.get("chain_seconds"),
           "edge_unfolded_seconds": plain_s,
           "edge_folding_speedup": plain_s / folded_s,
           "edge_chain_folding_speedup": plain_s / chains_s,
           "edge_over_vertex": folded_s / vertex_s,
           "edge_chains_over_vertex": chains_s / vertex_s,
           "edge_chains_over_vertex_chains": chains_s / vertex_chains_s,
           "edge_unfolded_over_vertex": plain_s / vertex_s,
           "max_rel_diff_folded_vs_unfolded": folded_gap,
           "max_entry_rel_diff_folded_vs_unfolded": folded_entry,
           "max_rel_diff_chains_vs_unfolded": chains_gap,
           "max_entry_rel_diff_chains_vs_unfolded": chains_entry,
           # other work on a shared machine stalls the threads: the host's 1, 5 and 15 minute
           # load averages after the row's runs
           "load_average": [round(x, 2) for x in os.getloadavg()]}
    print(f"{name:22s} {engine}: vertex {vertex_s:.3f} s ({vertex_chains_s:.3f} s chains "
          f"folded), edge {folded_s:.3f} s trees folded ({row['edge_folded']} vertices) / "
          f"{chains_s:.3f} s trees and chains ({row['edge_chain_folded']} chain sources) / "
          f"{plain_s:.3f} s unfolded: edge / vertex {row['edge_over_vertex']:.2f}, chains "
          f"folded {row['edge_chains_over_vertex_chains']:.2f} (unfolded "
          f"{row['edge_unfolded_over_vertex']:.2f}), diff {folded_gap:.1e} / {chains_gap:.1e}",
          flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*", default=DEFAULT_GRAPHS)
    parser.add_argument("--engine", choices=["gpu", "cpu", "graphblas"], default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-n", type=int, default=CPU_MAX_N,
                        help="on a CPU engine, leave out graphs of more vertices")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    engine = args.engine or ("gpu" if gpu_status()[0] else "cpu")
    rows, path = [], None
    for name in args.graphs:  # the record rewritten after each graph: a cut run keeps its rows
        A = graphs.graph(name)
        if engine != "gpu" and A.shape[0] > args.max_n:
            print(f"{name}: n = {A.shape[0]:,} left out on the CPU engine", flush=True)
            continue
        rows.append(bench(name, A, engine, args.repeats))
        path = write_record("edge_folding", {"rows": rows}, Path(args.out), path)
    print(f"record: {path}")


if __name__ == "__main__":
    main()
