"""Weighted and edge BC on the CPU engine against NetworKit, in one run (issue 13's CPU targets).

For each graph: integer lengths uniform in 1..100 (seeded, the same both ways of an undirected
edge), then the median of ``--repeats`` runs of, on the same cores:

- turbobc (engine="graphblas"): vertex BC unweighted and weighted, edge BC unweighted and
  weighted;
- NetworKit: ``Betweenness`` unweighted and weighted, with ``computeEdgeCentrality=True`` for
  the edge rows.

Ratios are NetworKit seconds / turbobc seconds (above 1: turbobc faster). The largest relative
difference of turbobc's weighted vertex BC from NetworKit's (both unnormalized; NetworKit sums
an undirected graph's ordered pairs, networkx and turbobc halve them, so turbobc's values are
doubled) checks that both computed the same thing.

Usage: python bench/cpu_weighted.py [--graphs ego-Facebook] [--repeats 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import statistics
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


def with_lengths(A: sp.csr_array, seed: int = 1) -> sp.csr_array:
    """A's pattern with integer lengths 1..100, symmetric when A is."""
    upper = sp.triu(A, k=1).tocoo()
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 101, upper.nnz).astype(np.float64)
    half = sp.coo_array((lengths, (upper.row, upper.col)), shape=A.shape)
    return sp.csr_array(half + half.T)


def _median(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        began = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times), out


def _networkit(L: sp.csr_array, weighted: bool, edges: bool):
    import networkit as nk

    coo = sp.triu(L, k=1).tocoo()
    G = nk.Graph(L.shape[0], weighted=weighted, directed=False)
    for u, v, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
        G.addEdge(u, v, w) if weighted else G.addEdge(u, v)
    G.indexEdges()
    algo = nk.centrality.Betweenness(G, normalized=False, computeEdgeCentrality=edges)
    return lambda: (algo.run(), np.array(algo.scores()))[1]


def bench(name: str, repeats: int) -> dict:
    import networkit as nk

    A = graphs.graph(name)
    L = with_lengths(A)
    row = {"graph": name, "n": A.shape[0], "nnz": A.nnz, "lengths": "integers 1..100",
           "threads": nk.getMaxNumberOfThreads(), "repeats": repeats}
    runs = {
        "turbobc_vertex": lambda: turbobc.bc(A, engine="graphblas", normalized=False),
        "turbobc_vertex_weighted": lambda: turbobc.bc(L, weight=True, engine="graphblas",
                                                      normalized=False),
        "turbobc_edge": lambda: turbobc.edge_bc(A, engine="graphblas", normalized=False),
        "turbobc_edge_weighted": lambda: turbobc.edge_bc(L, weight=True, engine="graphblas",
                                                         normalized=False),
    }
    values = {}
    for label, fn in runs.items():
        row[f"{label}_seconds"], values[label] = _median(fn, repeats)
    for weighted in (False, True):
        for edges in (False, True):
            label = ("networkit_" + ("edge" if edges else "vertex")
                     + ("_weighted" if weighted else ""))
            run = _networkit(L, weighted, edges)
            row[f"{label}_seconds"], values[label] = _median(run, repeats)
    for kind in ("vertex", "vertex_weighted", "edge", "edge_weighted"):
        row[f"ratio_{kind}"] = row[f"networkit_{kind}_seconds"] / row[f"turbobc_{kind}_seconds"]
    row["weighted_over_unweighted"] = (row["turbobc_vertex_weighted_seconds"]
                                       / row["turbobc_vertex_seconds"])
    row["edge_over_vertex"] = row["turbobc_edge_seconds"] / row["turbobc_vertex_seconds"]
    ours, theirs = 2 * values["turbobc_vertex_weighted"], values["networkit_vertex_weighted"]
    row["max_rel_diff_weighted_vs_networkit"] = float(
        np.max(np.abs(ours - theirs) / np.maximum(np.abs(theirs), 1e-12)))
    print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=["ego-Facebook"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows = [bench(name, args.repeats) for name in args.graphs]
    print("record:", write_record("cpu_weighted", {"rows": rows}, results=args.out))


if __name__ == "__main__":
    main()
