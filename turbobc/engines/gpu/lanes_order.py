"""The order in which the lanes family sweeps its sources: nearby sources share units.

A unit is 32 sources of a batch, a lane each; a vertex's unit takes part in a level when any of
its lanes reaches the vertex there. Sources close together reach each vertex at nearly the same
level, so a unit takes part in few levels (docs/algorithm.md, "Many sources per sweep").
:func:`sweep_order` orders a run's sources; :func:`locality_order` ranks every vertex.
"""

from __future__ import annotations

import numpy as np

from turbobc._graph import Graph, bfs_levels
from turbobc._traverse import reverse_cuthill_mckee
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.memory import LANES

__all__ = ["locality_order", "sweep_order", "BFS_MAX_DEPTH", "CLUSTER_DEPTH",
           "CLUSTER_MIN_DEGREE", "CLUSTER_MAX_NNZ"]

# Source orders (the knob Tuning.order), how :func:`locality_order` ranks the sources: ``"bfs"``
# (breadth-first order from a pseudo-peripheral vertex, O(n + m) in SciPy), ``"cluster"``
# (greedy breadth-first balls of 32 vertices: compact groups on meshes and roads, O(n + m) in
# Python), ``"rcm"`` (reverse Cuthill-McKee, SciPy's permutation compiled in
# turbobc/_traverse.py, with a merge sort where SciPy's insertion sort was quadratic in the
# largest degree),
# ``"vertex"`` (as numbered), ``"auto"`` (``"cluster"`` on meshes: the breadth-first search from
# the vertex of largest degree is at least :data:`CLUSTER_DEPTH` levels deep, the mean degree at
# least :data:`CLUSTER_MIN_DEGREE` and the graph has at most :data:`CLUSTER_MAX_NNZ` stored
# edges; ``"bfs"`` when that search is at most :data:`BFS_MAX_DEPTH` deep; else ``"rcm"``).
#
# Measured on an H200 (bench/results/exact_gpu_variants-20261122T025208Z.json, device loop of
# the first 16384 sources, times n / 16384): kron18 rcm 58.3 s, bfs 73.6 s; myc16 rcm 7.8 s,
# bfs 7.4 s; del16 cluster 2.2 s, rcm 4.4 s; road-luxembourg-osm (mean degree 2.1) rcm 16.3 s,
# cluster 21.2 s. See bench/gpu_notes.md, "Source order".

BFS_MAX_DEPTH = 2
"""Eccentricity of the vertex of largest degree up to which ``"auto"`` takes the (cheap)
breadth-first order: on graphs this shallow every order does about as well (myc14, H200,
device loop of exact BC: bfs 0.092 s, rcm 0.094 s, vertex 0.136 s; ordering on the host:
bfs 0.011 s, rcm 0.035 s; bench/results/exact_gpu_variants-20261122T033838Z.json)."""

CLUSTER_DEPTH = 16
"""Eccentricity of the vertex of largest degree from which ``"auto"`` may group in balls."""

CLUSTER_MIN_DEGREE = 4.0
"""Least mean degree (stored edges / n) for ball groups: road networks (2.1) keep RCM."""

CLUSTER_MAX_NNZ = 8_000_000
"""Most stored edges for which the (Python) ball grouping runs: about 1 s per million."""


def _balls(indptr: np.ndarray, indices: np.ndarray, seq: np.ndarray) -> np.ndarray:
    """Groups of :data:`LANES` vertices grown greedily as breadth-first balls: each ball
    starts at the first vertex of ``seq`` not yet taken and takes the nearest vertices not
    yet taken (a ball that runs out of room is completed by the next one). Returns ``seq``
    reordered ball by ball. O(n + m) steps in Python: used on graphs of a few million edges.
    """
    from collections import deque

    ptr = indptr.tolist()
    idx = indices.tolist()
    taken = bytearray(len(ptr) - 1)
    out = []
    for start in seq.tolist():
        if taken[start]:
            continue
        need = LANES - len(out) % LANES
        queue = deque([start])
        taken[start] = 1
        out.append(start)
        need -= 1
        while queue and need:
            v = queue.popleft()
            for w in idx[ptr[v]:ptr[v + 1]]:
                if not taken[w]:
                    taken[w] = 1
                    out.append(w)
                    queue.append(w)
                    need -= 1
                    if not need:
                        break
    return np.asarray(out, dtype=np.int64)


def locality_order(graph: Graph, order: str | None = None) -> tuple[np.ndarray, str, int]:
    """Rank of every vertex in the order the sources are swept, the order used (``"auto"``
    resolved) and the depth found.

    Sources are swept in this order, so the 32 sources of a unit sit close together: their
    distances to any vertex differ little, and a unit takes part in few levels. Edges count
    both ways; vertices the first breadth-first search does not reach follow in vertex order.
    ``order`` defaults to the knob ``Tuning.order`` (the orders: see the comment above). The depth is
    the eccentricity of the vertex of largest degree (-1 when no breadth-first search ran):
    a lower bound of the deepest batch, at least half the diameter of that component.
    The answer is kept on the graph (``graph.__dict__["_locality"]``, by the order asked)
    and read again, never modified: del20's reverse Cuthill–McKee order is 0.17 to 0.4 s, and
    a Dask client that computes it once spares each GPU worker its own
    (turbobc/_dask.py, ``built_ahead``).
    """
    order = current_tuning().order if order is None else order
    kept = graph.__dict__.setdefault("_locality", {})
    if order not in kept:
        kept[order] = _locality_order(graph, order)
    return kept[order]


def _locality_order(graph: Graph, order: str) -> tuple[np.ndarray, str, int]:
    """:func:`locality_order` computed (it keeps each order's answer on the graph, where it
    travels to Dask workers with it: ``Graph.__reduce__``)."""
    import scipy.sparse as sp

    depth = -1
    n = graph.n
    rank = np.empty(n, dtype=np.int64)
    if order == "vertex" or n == 0:
        rank[:] = np.arange(n)
        return rank, order, depth
    csr = sp.csr_matrix(graph.pattern)
    if order == "auto":
        # eccentricity of the vertex of largest degree: deep graphs are meshes and roads
        depth = graph.depth_estimate
        mesh = (depth >= CLUSTER_DEPTH and graph.nnz >= CLUSTER_MIN_DEGREE * n
                and graph.nnz <= CLUSTER_MAX_NNZ)
        order = "cluster" if mesh else "bfs" if depth <= BFS_MAX_DEPTH else "rcm"
    if order == "rcm":
        # SciPy's permutation, compiled (turbobc/_traverse.py): half its time, at any size
        seq = reverse_cuthill_mckee(csr, symmetric=not graph.directed)
        rank[seq] = np.arange(n, dtype=np.int64)
        return rank, order, depth
    if order not in ("bfs", "cluster"):
        raise ValueError(f"unknown source order {order!r}")
    # pseudo-peripheral vertex: the last one reached from the vertex of largest degree
    depth, peripheral = graph.hub_search
    seq1, _ = bfs_levels(csr, peripheral)
    if order == "bfs":
        head = seq1
    else:
        head = _balls(csr.indptr, csr.indices, seq1)
    rest = np.ones(n, dtype=bool)
    rest[head] = False
    seq = np.concatenate([head, np.flatnonzero(rest)])
    rank[seq] = np.arange(n, dtype=np.int64)
    return rank, order, depth


# Tuning.order_min_share (1/8): sources are put in locality order only when they are at least
# this share of the vertices: the order is an O(n + m) pass on the host whatever the number of
# sources, and a few sources spread over a large graph rarely neighbour each other (kron20,
# k = 1000, H200: rcm order 1.57 s on the host for a device loop of 0.50 s instead of 0.60 s
# in vertex order).


def sweep_order(graph: Graph, sources: np.ndarray) -> tuple[np.ndarray, str, int | None]:
    """The sources in the order they are swept, the order's name, and the depth estimate
    for :func:`spmv._batched.select_batched` (None when no search ran).

    Nearby sources share units (module docstring), so the sources follow
    :func:`locality_order` when they are at least ``Tuning.order_min_share`` of the vertices,
    and vertex order otherwise.
    """
    if sources.size < current_tuning().order_min_share * graph.n:
        return np.sort(sources), "vertex", None
    rank, order, depth = locality_order(graph)
    ordered = sources[np.argsort(rank[sources], kind="stable")]
    return ordered, order, (depth if depth >= 0 else None)
