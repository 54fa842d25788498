"""Exact graph reductions before the sweeps: trees hanging off a graph are folded away.

A vertex of degree 1 lies on a shortest path only as its end, and the vertex it hangs from,
p, lies on every path from it to the rest of its component. So leaves can be removed one
after the other (a tree hanging off the graph shrinks to its root), each folded into the
vertex it hung from, and BC of the whole follows exactly from BC of the smaller *core* with
weights (docs/algorithm.md, "Folding trees"):

- every core vertex a stands for ``r(a)`` vertices: itself and the trees folded into it;
- a pair (s, t) in the trees of different core vertices a, b crosses the core along the
  shortest a-b paths, so the core's sweeps weigh a as a source by ``ω(a) = r(a)`` and b as a
  target by ``τ(b) = r(b)`` (the source and target weights of the accumulate step,
  :class:`turbobc.engines.protocol.Problem`);
- every other pair through a vertex x crosses x, a cut vertex, with all its shortest paths:
  if removing x leaves parts of sizes c_1 .. c_k toward the folded trees (its hanging
  subtrees) and the rest R of its component (N − 1 − Σ c_i), the ordered pairs in different
  parts number ``(N − 1)² − Σ c_i² − R²``. That term is exact integer arithmetic, for
  folded and core vertices alike.

Edge BC folds the same way (:meth:`FoldedTrees.expand_edges`): the edge x – p by which a
tree of c vertices hung from p is a bridge, crossed by every shortest path of the 2 c (N − c)
ordered pairs it separates, and a core edge carries, from the core's weighted sweeps, the
pairs whose trees hang from different core vertices (no other pair crosses it).

Exact for undirected graphs only: on a directed graph a vertex of total degree 1 is still a
source or a target of its own, so no reduction applies there. Exact for weighted graphs whose
path sums are exact (``Graph.length_scale``: integer lengths, for instance): the path from a
folded vertex to the vertex it hangs from is the only one, whatever its length, so the
shortest paths of a pair still cross the core along the shortest core paths; the core keeps
the lengths of its edges. With lengths such as 0.1 the float64 sums from a folded vertex and
from its core vertex can tie differently, so such graphs are swept as they are. Used for
exact BC with every vertex a source (the sweeps of a sample of sources run on the graph as it
is).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from turbobc._graph import Graph, entry_positions

__all__ = ["FoldedTrees", "fold_trees", "component_sizes", "endpoint_terms"]


@dataclass(frozen=True, eq=False)
class FoldedTrees:
    """The core left after folding every hanging tree, and what the folding already knows.

    Attributes
    ----------
    core : Graph
        The graph on the vertices that remain, numbered in their original order.
    kept : numpy.ndarray
        int64, the original vertex of each core vertex.
    weight : numpy.ndarray
        float64 per core vertex: the vertices it stands for, ``r(a) ≥ 1``. The core's sweeps
        use it as both the source weight ω and the target weight τ.
    cut_pairs : numpy.ndarray
        float64 per original vertex: the ordered pairs whose every shortest path crosses it
        through a folded tree, ``(N − 1)² − Σ c_i² − R²`` (module docstring).
    component_size : numpy.ndarray
        int64 per original vertex: N, the size of its connected component.
    folded : int
        Vertices folded away.
    seconds : float
        Time the folding took.
    hung, parent, hanging : numpy.ndarray
        int64 per folded vertex x, in folding order: x, the vertex p it was folded into, and
        c = r(x), the vertices of the tree that hung from p by the edge x – p.
    """

    core: Graph
    kept: np.ndarray
    weight: np.ndarray
    cut_pairs: np.ndarray
    component_size: np.ndarray
    folded: int
    seconds: float
    hung: np.ndarray
    parent: np.ndarray
    hanging: np.ndarray

    def expand(self, core_raw: np.ndarray, *, endpoints: bool) -> np.ndarray:
        """Raw sums of the whole graph (ordered pairs, every vertex a source) from the raw
        sums of the core's weighted sweeps (without endpoint terms).

        With ``endpoints``, :func:`endpoint_terms` are added.
        """
        raw = self.cut_pairs.copy()
        raw[self.kept] += core_raw
        if endpoints:
            raw += endpoint_terms(self.component_size)
        return raw

    def expand_edges(self, core_edge: np.ndarray, pattern: sp.csr_array) -> np.ndarray:
        """Raw edge sums of the whole graph, one per stored entry of ``pattern`` (the
        graph's), from those of the core's weighted sweeps (one per stored entry of
        ``core.pattern``).

        A core edge keeps its sum. The two entries of a folded tree's edge x – p each get
        c (N − c), the pairs from one side to the other, so that the edge, crossed both
        ways, totals the 2 c (N − c) ordered pairs its bridge separates.
        """
        alive = np.zeros(pattern.shape[0], dtype=bool)
        alive[self.kept] = True
        edge = np.zeros(pattern.nnz, dtype=np.float64)
        # the core is the pattern's kept rows and columns, in the same (row, column) order
        edge[np.repeat(alive, np.diff(pattern.indptr)) & alive[pattern.indices]] = core_edge
        c = self.hanging
        crossing = (c * (self.component_size[self.hung] - c)).astype(np.float64)
        edge[entry_positions(pattern, self.hung, self.parent)] = crossing
        edge[entry_positions(pattern, self.parent, self.hung)] = crossing
        return edge


def fold_trees(graph: Graph, *, min_folded: int = 1) -> FoldedTrees | None:
    """Fold every tree hanging off ``graph`` into the vertex it hangs from.

    Returns None for a directed graph, or when fewer than ``min_folded`` vertices would fold
    (then only the peeling ran: the core, the components and the cut pairs, most of the
    cost, are not built).
    """
    from turbobc._traverse import peel_trees

    if graph.directed:
        return None
    degree = graph.out_degree
    leaves = np.flatnonzero(degree == 1)
    if leaves.size == 0:
        return None
    began = time.perf_counter()
    pattern = graph.pattern
    n = graph.n
    # Σ of the ids of each vertex's remaining neighbours: a vertex left with one neighbour
    # finds it there (its only remaining term).
    adjacency = sp.csr_array((np.ones(pattern.nnz, dtype=np.int64), pattern.indices,
                              pattern.indptr), shape=pattern.shape)
    neighbour_sum = adjacency @ np.arange(n, dtype=np.int64)
    # peeled leaf after leaf: each vertex's size r (itself and the trees folded into it),
    # Σ c_i and Σ c_i² over the subtrees c_i folded into it (turbobc/_traverse.py)
    folded, parents, hanging, size, hanging_sum, hanging_sq = peel_trees(degree, neighbour_sum,
                                                                         leaves)
    if folded.size < min_folded:
        return None
    alive = np.ones(n, dtype=bool)
    alive[folded] = False
    component_size = component_sizes(graph)
    rest = component_size - 1 - hanging_sum
    # (N − 1)² − Σ c_i² − R², in int64 (exact) then float64
    cut_pairs = ((component_size - 1) ** 2 - hanging_sq - rest ** 2).astype(np.float64)
    kept = np.flatnonzero(alive)
    core = _core_graph(graph, kept)
    return FoldedTrees(core=core, kept=kept, weight=size[kept].astype(np.float64),
                       cut_pairs=cut_pairs, component_size=component_size,
                       folded=int(folded.size), seconds=time.perf_counter() - began,
                       hung=folded, parent=parents, hanging=hanging)


def endpoint_terms(component_size: np.ndarray) -> np.ndarray:
    """networkx's endpoint terms of an undirected graph summed over every source: each vertex
    starts N − 1 paths and ends N − 1, N the size of its component (``component_size``, per
    vertex: :func:`component_sizes`)."""
    return 2.0 * (component_size - 1)


def component_sizes(graph: Graph) -> np.ndarray:
    """int64 per vertex: the size of its connected component (edges taken both ways): a
    compiled union-find (turbobc/_traverse.py) where it is shipped ahead or SciPy cannot
    serve (past its int32 indices), SciPy's labels otherwise."""
    from turbobc._traverse import component_labels, scipy_serves

    if not scipy_serves(graph.pattern.indptr):  # (never past SciPy's int32 indices)
        label = component_labels(graph.pattern.indptr, graph.pattern.indices)
        return np.bincount(label, minlength=graph.n)[label].astype(np.int64)
    _, label = connected_components(graph.pattern, directed=False)
    return np.bincount(label)[label].astype(np.int64)


def _core_graph(graph: Graph, kept: np.ndarray) -> Graph:
    """The undirected graph induced on the vertices ``kept``, with their edges' lengths when
    ``graph`` is weighted."""
    pattern = graph.pattern
    values = pattern.data if graph.lengths is None else graph.lengths
    core = sp.csr_array((values, pattern.indices, pattern.indptr), shape=pattern.shape)
    core = sp.csr_array(core[kept][:, kept])
    core.sort_indices()
    lengths = None if graph.lengths is None else core.data.astype(np.float64)
    core_pattern = sp.csr_array((np.ones(core.nnz), core.indices, core.indptr),
                                shape=core.shape)
    return Graph(pattern=core_pattern, directed=False, lengths=lengths)
