"""Why deep graphs are slow on the batched GPU engine, measured on the host (no GPU needed).

For each graph (undirected), as the exact GPU run sees it:

- the core after tree folding (turbobc._reduce.fold_trees), its vertices of degree 2 (chain
  vertices) and the rest (branch vertices), and its largest biconnected component: what the
  exact reductions of issue 12 (degree-2 chains, articulation points) could still remove;
- **lane occupancy**: the batched kernels work a (vertex, 32 sources) unit with one warp, so
  a level step on unit (v, c) does useful work in the lanes whose source is at distance d
  from v only. For ``--units`` units of 32 consecutive sources in the engine's own sweep
  order (turbobc.engines.gpu.lanes_order.locality_order on the core), the mean number of lanes
  per (unit, level) the unit takes part in: 32 · n / Σ_v |{distinct distances to v}|. A warp
  does 32 lanes' worth of instructions per visit, so occupancy / 32 is the share of useful
  lanes.

Usage: python bench/deep_profile.py [--graphs road-luxembourg-osm.mtx.gz ...] [--units 4]
       [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from exact_gpu import LABELS, cached_graph  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

LANES = 32
DEFAULT_GRAPHS = ["road-luxembourg-osm.mtx.gz", "delaunay_n16.mtx.gz", "road-minnesota.mtx",
                  "ego-Facebook"]


def lane_occupancy(pattern, sources: np.ndarray) -> tuple[float, int]:
    """Mean lanes per (unit, level) of one unit whose lanes are ``sources`` (at most 32), and
    the deepest distance from them."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path

    D = shortest_path(sp.csr_matrix(pattern), unweighted=True, indices=sources)
    D = np.where(np.isinf(D), -1, D).astype(np.int64)
    # distinct reached distances per vertex: sort each column, count the changes
    col = np.sort(D, axis=0)
    reached = col >= 0
    new = reached & np.vstack([np.ones((1, col.shape[1]), bool), col[1:] != col[:-1]])
    visits = int(new.sum())
    return float(reached.sum() / max(visits, 1)), int(D.max())


def profile(name: str, units: int) -> dict:
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    from turbobc._graph import Graph
    from turbobc._reduce import fold_trees
    from turbobc.engines.gpu.lanes_order import locality_order

    A = sp.csr_array(cached_graph(name), dtype=np.float64)
    A = sp.csr_array(A + A.T)  # the undirected pattern, as validation makes it
    A.setdiag(0)
    A.eliminate_zeros()
    A.sort_indices()
    A.data[:] = 1.0
    graph = Graph(pattern=A, directed=False)
    folded = fold_trees(graph)
    core = graph if folded is None else folded.core  # None: nothing hangs off the graph
    degree = np.diff(core.pattern.indptr)
    row = {"graph": LABELS.get(name, name), "n": graph.n, "nnz": int(graph.nnz),
           "core_vertices": core.n, "core_degree_2": int((degree == 2).sum()),
           "core_branch": int((degree != 2).sum())}
    row["largest_biconnected_share_of_core"] = _largest_biconnected_share(core.pattern)
    began = time.perf_counter()
    rank, order, depth = locality_order(core)
    seq = np.argsort(rank, kind="stable")
    _, labels = connected_components(sp.csr_matrix(core.pattern), directed=False)
    rng = np.random.default_rng(0)
    starts = np.sort(rng.choice(max(1, core.n // LANES), size=units, replace=False)) * LANES
    samples = [lane_occupancy(core.pattern, seq[s:s + LANES]) for s in starts]
    row.update(order=order, depth_estimate=depth, units=units,
               lanes_per_unit_level=[round(x, 3) for x, _ in samples],
               mean_lanes_per_unit_level=float(np.mean([x for x, _ in samples])),
               useful_lane_share=float(np.mean([x for x, _ in samples]) / LANES),
               max_distance=[d for _, d in samples],
               components=int(labels.max() + 1) if labels.size else 0,
               seconds=time.perf_counter() - began)
    return row


def _largest_biconnected_share(pattern) -> float:
    """Share of the core's vertices in its largest biconnected component (networkx)."""
    import networkx as nx

    G = nx.from_scipy_sparse_array(pattern)
    sizes = [len(c) for c in nx.biconnected_components(G)]
    return max(sizes, default=0) / max(pattern.shape[0], 1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=DEFAULT_GRAPHS)
    parser.add_argument("--units", type=int, default=4)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows = []
    for name in args.graphs:
        row = profile(name, args.units)
        rows.append(row)
        print(f"{row['graph']:22s} n={row['n']:8d} core {row['core_vertices']:8d} "
              f"(degree 2: {row['core_degree_2']}, branch {row['core_branch']}), largest "
              f"biconnected {row['largest_biconnected_share_of_core']:.2f} of the core, order "
              f"{row['order']}, lanes per (unit, level) {row['mean_lanes_per_unit_level']:.2f}"
              f" of {LANES}", flush=True)
    path = write_record("deep_profile", {"lanes": LANES, "rows": rows}, results=args.out)
    print(f"record: {path}")


if __name__ == "__main__":
    main()
