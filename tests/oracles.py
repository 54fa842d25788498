"""Independent references: networkx itself, and an exact big-integer Brandes for huge path counts."""

from __future__ import annotations

import heapq
from collections import deque
from decimal import Context, Decimal

import networkx as nx
import numpy as np
from networkx.algorithms.centrality.betweenness import (
    _accumulate_endpoints,
    _rescale,
    _single_source_dijkstra_path_basic,
    _single_source_shortest_path_basic,
)


def as_array(values: dict, G) -> np.ndarray:
    """A networkx result dict as an array in ``list(G)`` order."""
    return np.array([values[v] for v in G], dtype=np.float64)


def networkx_bc(G, *, selection: str, normalized: bool, endpoints: bool, k=None, seed=None,
                sources=None, weight=None) -> np.ndarray:
    """What networkx returns for the call turbobc mirrors.

    selection "all" and "k" are ``betweenness_centrality``; "sources" is
    ``betweenness_centrality_subset`` with every vertex a target, or, with
    endpoints (which the subset function lacks), networkx's own single-source
    pieces accumulated over exactly those sources and rescaled as full BC. ``weight``: the
    edge attribute of the lengths (networkx's Dijkstra), or None.
    """
    if selection == "all":
        result = nx.betweenness_centrality(G, normalized=normalized, endpoints=endpoints,
                                           weight=weight)
    elif selection == "k":
        result = nx.betweenness_centrality(G, k=k, seed=seed, normalized=normalized,
                                           endpoints=endpoints, weight=weight)
    elif not endpoints:
        result = nx.betweenness_centrality_subset(G, sources, list(G), normalized=normalized,
                                                  weight=weight)
    else:
        result = dict.fromkeys(G, 0.0)
        for s in sources:
            if weight is None:
                S, P, sigma, _ = _single_source_shortest_path_basic(G, s)
            else:
                S, P, sigma, _ = _single_source_dijkstra_path_basic(G, s, weight)
            result, _ = _accumulate_endpoints(result, S, P, sigma, s)
        result = _rescale(result, len(G), normalized=normalized, directed=G.is_directed(),
                          endpoints=True, sampled_nodes=None)
    return as_array(result, G)


def exact_single_source_dependencies(indptr: np.ndarray, indices: np.ndarray, source: int,
                                     digits: int = 60) -> np.ndarray:
    """Brandes' δ_s(v) of an undirected graph with exact integer path counts, and max σ.

    See :func:`exact_brandes`.
    """
    delta, sigma, _ = exact_brandes(indptr, indices, source, digits=digits)
    return delta, max(sigma)


def exact_brandes(indptr: np.ndarray, indices: np.ndarray, source: int, *,
                  directed: bool = False, digits: int = 60, lengths=None):
    """Brandes' δ_s(v) with exact integer path counts (no overflow, ever).

    σ is a Python int; each ratio (1 + δ(w)) / σ(w) is taken in ``digits``-digit
    decimal arithmetic with an unbounded exponent, so the result is exact to
    far more than float64 precision however large σ grows. ``indptr, indices`` is
    the CSR pattern (row v lists the heads of the arcs v -> w). ``lengths``: integer edge
    lengths aligned with ``indices`` (exact distances by Dijkstra on Python ints); None: one
    per edge (BFS). Returns δ as float64, σ as Python ints and the distance of every vertex
    (-1: unreached).
    """
    ctx = Context(prec=digits, Emax=10**9, Emin=-(10**9))
    n = len(indptr) - 1
    ptr, idx = indptr.tolist(), indices.tolist()
    out = [idx[ptr[v]:ptr[v + 1]] for v in range(n)]
    if lengths is None:
        dist, sigma, order = _exact_bfs(out, source)
        length_of = None
    else:
        weights = [int(x) for x in np.asarray(lengths).tolist()]
        length_of = [dict(zip(out[v], weights[ptr[v]:ptr[v + 1]])) for v in range(n)]
        dist, sigma, order = _exact_dijkstra(out, length_of, source)
    parents_of = out
    if directed:
        parents_of = [[] for _ in range(n)]
        for v in range(n):
            for w in out[v]:
                parents_of[w].append(v)
    delta = [Decimal(0)] * n
    for w in reversed(order):
        coeff = ctx.divide(ctx.add(Decimal(1), delta[w]), Decimal(sigma[w]))
        for v in parents_of[w]:
            step = 1 if length_of is None else length_of[v][w]
            if dist[v] >= 0 and dist[v] == dist[w] - step:
                delta[v] = ctx.add(delta[v], ctx.multiply(Decimal(sigma[v]), coeff))
    delta[source] = Decimal(0)
    return np.array([float(d) for d in delta]), sigma, dist


def _exact_bfs(out: list, source: int):
    """Hop distances, exact path counts and the BFS order from ``source``."""
    n = len(out)
    dist = [-1] * n
    sigma = [0] * n
    dist[source], sigma[source] = 0, 1
    order, queue = [], deque([source])
    while queue:
        v = queue.popleft()
        order.append(v)
        for w in out[v]:
            if dist[w] < 0:
                dist[w] = dist[v] + 1
                queue.append(w)
            if dist[w] == dist[v] + 1:
                sigma[w] += sigma[v]
    return dist, sigma, order


def _exact_dijkstra(out: list, length_of: list, source: int):
    """Integer distances, exact path counts and an order of non-decreasing distance."""
    n = len(out)
    dist = [-1] * n
    best = {source: 0}
    heap = [(0, source)]
    order = []
    while heap:
        d, v = heapq.heappop(heap)
        if dist[v] >= 0:
            continue
        dist[v] = d
        order.append(v)
        for w in out[v]:
            candidate = d + length_of[v][w]
            if dist[w] < 0 and candidate < best.get(w, candidate + 1):
                best[w] = candidate
                heapq.heappush(heap, (candidate, w))
    sigma = [0] * n
    sigma[source] = 1
    for v in order:  # parents come first: their distance is smaller
        for w in out[v]:
            if dist[w] == dist[v] + length_of[v][w]:
                sigma[w] += sigma[v]
    return dist, sigma, order


def assert_edge_values(E, G, want, *, rtol, atol):
    """E (csr, list(G) order) holds networkx's edge value ``want[(u, v)]`` on every edge, both
    ways when undirected, and nothing else (self loops in ``want`` are skipped: never on a
    shortest path, and turbobc drops them)."""
    import numpy as np

    index = {v: i for i, v in enumerate(G)}
    expected = {}
    for (u, v), x in want.items():
        if u == v:
            continue
        expected[(index[u], index[v])] = x
        if not G.is_directed():
            expected[(index[v], index[u])] = x
    coo = E.tocoo()
    got = dict(zip(zip(coo.row.tolist(), coo.col.tolist()), coo.data.tolist()))
    assert set(got) == set(expected)
    keys = sorted(expected)
    np.testing.assert_allclose([got[k] for k in keys], [expected[k] for k in keys],
                               rtol=rtol, atol=atol)
