"""The chains of an undirected graph, found and laid out: the maximal paths of degree-2 vertices
between two vertices of another degree (:func:`find_chains`), the rows of chains one
accumulate call handles (:class:`ChainRows`), and each chain position's distance from its
first end (:func:`chain_positions`). turbobc/_chains.py folds the sources inside them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from turbobc._graph import Graph

__all__ = ["ChainRows", "Chains", "chain_positions", "find_chains"]


@dataclass(frozen=True, eq=False)
class Chains:
    """Maximal paths of degree-2 vertices between two vertices of another degree.

    Attributes
    ----------
    first, last : numpy.ndarray
        int64 per chain: its ends a and b (equal for a loop).
    offsets : numpy.ndarray
        int64; chain c's inner vertices are ``inner[offsets[c]:offsets[c + 1]]``, from a to b.
    inner : numpy.ndarray
        int64, the inner vertices of every chain.
    """

    first: np.ndarray
    last: np.ndarray
    offsets: np.ndarray
    inner: np.ndarray

    @property
    def count(self) -> int:
        return int(self.first.size)

    @property
    def inner_count(self) -> np.ndarray:
        """k per chain: its inner vertices (the chain has L = k + 1 edges)."""
        return np.diff(self.offsets)

    def select(self, keep: np.ndarray) -> "Chains":
        """The chains where ``keep`` (bool per chain) holds."""
        k = self.inner_count[keep]
        offsets = np.zeros(k.size + 1, dtype=np.int64)
        np.cumsum(k, out=offsets[1:])
        starts = self.offsets[:-1][keep]
        inner = (self.inner[np.repeat(starts - offsets[:-1], k) + np.arange(offsets[-1])]
                 if k.size else np.zeros(0, dtype=np.int64))
        return Chains(first=self.first[keep], last=self.last[keep], offsets=offsets,
                      inner=inner)


def find_chains(graph: Graph) -> Chains:
    """The chains of an undirected graph (no self loops: the canonical pattern): every path
    x_1 .. x_k of degree-2 vertices whose outer neighbours a and b have another degree. The
    vertices of a component that is a cycle belong to no chain (it has no end).

    A chain is walked from the end pair (a, x_1) that comes first in (end, inner vertex)
    order, and the chains are listed in the order of those pairs. Array passes only: the
    chains are the components of the graph the degree-2 vertices induce that have an end
    (scipy.sparse.csgraph), and a breadth-first search from a root joined to every chain's
    x_1 ranks each chain's vertices from a to b (road-luxembourg-osm: 15,143 chains in
    0.07 s, where a Python walk along them took 0.25 s on 2 cores)."""
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    pattern, n = graph.pattern, graph.n
    ptr, idx = pattern.indptr, pattern.indices
    degree = np.diff(ptr)
    is_inner = degree == 2
    inner = np.flatnonzero(is_inner)
    # the two neighbours of each degree-2 vertex
    left = idx[ptr[inner]].astype(np.int64)
    right = idx[ptr[inner] + 1].astype(np.int64)
    # end pairs (a, x): a neighbour a of another degree beside a degree-2 vertex x, in order
    ends = np.concatenate([left, right])
    beside = np.concatenate([inner, inner])
    outer = ~is_inner[ends]
    ends, beside = ends[outer], beside[outer]
    order = np.lexsort((beside, ends))
    ends, beside = ends[order], beside[order]
    # the graph the degree-2 vertices induce, and a root (vertex n) joined to each chain's x_1
    linked = np.concatenate([is_inner[left], is_inner[right]])
    tails = np.concatenate([inner, inner])[linked]
    heads = np.concatenate([left, right])[linked]
    induced = sp.csr_array((np.ones(tails.size, dtype=np.int8), (tails, heads)),
                           shape=(n + 1, n + 1))
    _, component = connected_components(induced, directed=False)
    # a chain's start: its first end pair in that order (its other end pair comes later)
    _, first_pair = np.unique(component[beside], return_index=True)
    first_pair.sort()
    first, x1 = ends[first_pair], beside[first_pair]
    chain_of_component = np.full(n + 1, -1, dtype=np.int64)
    chain_of_component[component[x1]] = np.arange(x1.size)
    root = np.full(x1.size, n)
    rooted = sp.csr_array((np.ones(tails.size + 2 * x1.size, dtype=np.int8),
                           (np.concatenate([tails, root, x1]), np.concatenate([heads, x1, root]))),
                          shape=(n + 1, n + 1))
    walk = breadth_first_order(rooted, n, directed=True, return_predecessors=False)[1:]
    # the chains' vertices in chain order, each chain's from a to b (search order along it)
    chain = chain_of_component[component[walk]]
    walk = walk[np.argsort(chain, kind="stable")].astype(np.int64)
    lengths = np.bincount(chain, minlength=x1.size)
    offsets = np.zeros(x1.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # b: the neighbour of x_k of another degree (with k = 1, the one that is not a)
    xk = walk[offsets[1:] - 1]
    at = np.searchsorted(inner, xk)
    left_k, right_k = left[at], right[at]
    last = np.where(is_inner[left_k] | ((lengths == 1) & (left_k == first)), right_k, left_k)
    return Chains(first=first, last=last, offsets=offsets, inner=walk)


@dataclass
class ChainRows:
    """The chains one :meth:`SlotCounts.chain_terms` call handles (host arrays, one entry per
    chain): their ids, their ends' slots and vertices, their lengths L, where their prefix
    sums P(0..k) start in ``ChainFolding.prefix``, and where their histograms of 2L + 1
    classes start (``hist_off``, one more entry: the total)."""

    chains: np.ndarray
    lane_a: np.ndarray
    lane_b: np.ndarray
    first: np.ndarray
    last: np.ndarray
    length: np.ndarray
    prefix_off: np.ndarray
    hist_off: np.ndarray


def chain_positions(graph: Graph, vertex_at, pos_off, L) -> tuple[np.ndarray, float | None]:
    """Each chain position's distance from its chain's first end, int64: hops (0 .. L), or
    for a weighted graph its length times ``Graph.length_scale``; and that scale (None in
    hops). Raises ValueError for lengths whose sums are not exact."""
    first = np.repeat(pos_off[:-1], L + 1)
    if graph.lengths is None:
        return np.arange(pos_off[-1], dtype=np.int64) - first, None
    scale = graph.length_scale
    if scale is None:
        raise ValueError("chains of a weighted graph fold only when its sums of lengths are "
                         "exact (Graph.length_scale)")
    # the edge from each position to the next (none after the last): seen from the inner one
    # of the two (a chain's every edge has one), among its two edges
    j = np.arange(pos_off[-1]) - first
    step = np.flatnonzero(j < np.repeat(L, L + 1))
    u, v = vertex_at[step], vertex_at[step + 1]
    inner_first = j[step] >= 1
    x, y = np.where(inner_first, u, v), np.where(inner_first, v, u)
    ptr, idx = graph.pattern.indptr, graph.pattern.indices
    e = ptr[x] + (idx[ptr[x]] != y)
    length = np.zeros(pos_off[-1], dtype=np.int64)
    length[step + 1] = np.rint(graph.lengths[e] * scale).astype(np.int64)
    position = np.cumsum(length)
    return position - position[first], scale
