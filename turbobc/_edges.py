"""Edge BC's values as the user gets them: the graph's distinct edges and the n x n matrix.

An engine sums one value per stored entry of the pattern (``Partial.edge``, aligned with
``pattern.indices``). An undirected graph stores each edge twice, i -> j and j -> i, and a
path crosses it one way or the other, so its betweenness is the sum of both entries
(:class:`DistinctEdges`); :func:`edge_matrix` writes the values back with the graph's pattern,
an undirected edge's value at (i, j) and (j, i).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from turbobc._graph import Graph, reverse_edge_positions

__all__ = ["DistinctEdges", "distinct_edges", "edge_matrix"]


class DistinctEdges(NamedTuple):
    """The graph's distinct edges, each undirected edge once as i -> j with i < j."""

    positions: np.ndarray  # in the pattern's entries
    reverse: np.ndarray | None  # undirected: the positions of j -> i; directed: None

    def raw_of(self, partial) -> np.ndarray:
        """Their raw sums from a sweep's sums (``partial.edge``, one per stored entry)."""
        return self.sums(partial.edge)

    def sums(self, edge: np.ndarray) -> np.ndarray:
        """Their raw sums from one sum per stored entry: an undirected edge is crossed both
        ways, so {i, j} gets the sums of i -> j and j -> i."""
        if self.reverse is None:
            return edge
        return edge[self.positions] + edge[self.reverse]


def distinct_edges(graph: Graph) -> DistinctEdges:
    """The distinct edges of ``graph``: every stored entry of a directed graph, the entries
    i -> j with i < j of an undirected one."""
    pattern = graph.pattern
    if graph.directed:
        return DistinctEdges(np.arange(pattern.nnz, dtype=np.int64), None)
    rows = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(pattern.indptr))
    positions = np.flatnonzero(rows < pattern.indices)
    return DistinctEdges(positions, reverse_edge_positions(pattern)[positions])


def edge_matrix(graph: Graph, values: np.ndarray, edges: DistinctEdges | None = None):
    """The n x n csr_array with the graph's pattern holding ``values``: one per stored edge,
    or one per distinct edge of ``edges``, an undirected edge's value then stored at (i, j)
    and (j, i)."""
    import scipy.sparse as sp

    pattern = graph.pattern
    if edges is not None and edges.reverse is not None:
        full = np.zeros(pattern.nnz, dtype=np.float64)
        full[edges.positions] = values
        full[edges.reverse] = values
        values = full
    return sp.csr_array((values, pattern.indices.copy(), pattern.indptr.copy()),
                        shape=pattern.shape)
