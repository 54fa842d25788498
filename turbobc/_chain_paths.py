"""The chains of an undirected graph, found and laid out: the maximal paths of degree-2 vertices
between two vertices of another degree (:func:`find_chains`), the rows of chains one
accumulate call handles (:class:`ChainRows`), and each chain position's distance from its
first end (:func:`chain_positions`). turbobc/_chains.py folds the sources inside them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    """The chains of an undirected graph: every path x_1 .. x_k of degree-2 vertices whose
    outer neighbours a and b have another degree. The vertices of a component that is a
    cycle belong to no chain (it has no end). Python steps only along the chains."""
    pattern = graph.pattern
    degree = np.diff(pattern.indptr)
    inner = np.flatnonzero(degree == 2)
    # each chain starts at an end a beside an inner vertex x: (a, x) for x of degree 2 with a
    # neighbour a of another degree
    ends = np.concatenate([pattern.indices[pattern.indptr[inner]],
                           pattern.indices[pattern.indptr[inner] + 1]])
    beside = np.concatenate([inner, inner])
    starts = degree[ends] != 2
    order = np.lexsort((beside[starts], ends[starts]))
    ptr, idx, deg = pattern.indptr, pattern.indices, degree
    seen = bytearray(graph.n)
    first, last, lengths, walked = [], [], [], []
    for a, x in zip(ends[starts][order].tolist(), beside[starts][order].tolist()):
        if seen[x]:
            continue  # the chain was walked from its other end
        prev, walk = a, []
        while deg[x] == 2 and not seen[x]:
            seen[x] = 1
            walk.append(x)
            y, z = int(idx[ptr[x]]), int(idx[ptr[x] + 1])
            prev, x = x, (z if y == prev else y)
        first.append(a)
        last.append(x)
        lengths.append(len(walk))
        walked.extend(walk)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Chains(first=np.asarray(first, dtype=np.int64),
                  last=np.asarray(last, dtype=np.int64), offsets=offsets,
                  inner=np.asarray(walked, dtype=np.int64))


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
