"""The graph of turbobc's networkx backend: a networkx graph read once into a CSR pattern, with
the edge attributes networkx asks for as arrays aligned with the pattern.

networkx converts a graph with :func:`from_nx` (through the backend's ``convert_from_nx``) and
caches the result on the graph while it is not mutated, so this module is the only place that
walks a networkx graph's edges in Python; every later check (such as "are all weights equal")
is a NumPy operation on :attr:`TurboBCGraph.edge_values`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

__all__ = ["ParallelEdges", "TurboBCGraph", "from_nx", "is_turbobc_graph", "to_nx"]


@dataclass(frozen=True)
class ParallelEdges:
    """A multigraph's parallel edges, flattened entry by entry in the pattern's order.

    Attributes
    ----------
    keys : list
        The key of every parallel edge: those of the pattern's first stored entry, then the
        second's, and so on (``G.adj[u][v]`` order).
    counts : numpy.ndarray
        int64, one per stored entry: how many parallel edges it stands for.
    values : dict
        ``{attribute: float64 array}`` aligned with ``keys``, for each kept edge attribute.
    """

    keys: list
    counts: np.ndarray
    values: dict = field(default_factory=dict)

    @cached_property
    def entry(self) -> np.ndarray:
        """The stored entry (position in the pattern) of every parallel edge."""
        return np.repeat(np.arange(self.counts.size), self.counts)


class TurboBCGraph:
    """A networkx graph converted for turbobc: its adjacency pattern, nodes and edge values.

    Attributes
    ----------
    pattern : scipy.sparse.csr_array
        n x n, float64 ones: ``pattern[i, j] == 1`` means an edge ``nodes[i] -> nodes[j]``
        (both directions for an undirected graph). Parallel edges of a multigraph are stored
        once: they do not change shortest-path counts in networkx's unweighted BC either.
    nodes : list
        The nodes in ``list(G)`` order: vertex i is ``nodes[i]``.
    edge_values : dict
        ``{attribute: float64 array}``, one value per stored entry in ``pattern.indices``
        order, for each edge attribute kept at conversion. A multigraph's entry holds the
        smallest value over its parallel edges (the one networkx's shortest paths use); a
        value that is not a real number is NaN.
    parallel : ParallelEdges or None
        A multigraph's parallel edges (their keys and kept values), by which networkx keys
        edge BC; None for other graphs.
    """

    __networkx_backend__ = "turbobc"

    def __init__(self, pattern, nodes, *, directed: bool, multigraph: bool, graph=None,
                 edge_values=None, parallel: ParallelEdges | None = None):
        self.pattern = pattern
        self.nodes = nodes
        self._directed = bool(directed)
        self._multigraph = bool(multigraph)
        self.graph = {} if graph is None else graph
        self.edge_values = {} if edge_values is None else edge_values
        self.parallel = parallel

    def is_directed(self) -> bool:
        return self._directed

    def is_multigraph(self) -> bool:
        return self._multigraph

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    def __contains__(self, node) -> bool:
        try:
            return node in self.index
        except TypeError:
            return False

    @cached_property
    def index(self) -> dict:
        """``{node: vertex index}``."""
        return {node: i for i, node in enumerate(self.nodes)}

    @cached_property
    def entry_rows(self) -> np.ndarray:
        """The row (vertex index) of every stored entry, in ``pattern.indices`` order."""
        return np.repeat(np.arange(len(self.nodes)), np.diff(self.pattern.indptr))

    def __repr__(self) -> str:
        kind = "directed" if self._directed else "undirected"
        kept = f", edge attributes={sorted(map(str, self.edge_values))}" \
            if self.edge_values else ""
        return f"TurboBCGraph({kind}, n={len(self.nodes)}, stored edges={self.pattern.nnz}{kept})"


def is_turbobc_graph(G) -> bool:
    """Whether ``G`` is a :class:`TurboBCGraph` (or quacks as one for networkx)."""
    return getattr(G, "__networkx_backend__", None) == "turbobc"


def from_nx(G, edge_attrs=None) -> TurboBCGraph:
    """Read ``G``'s adjacency and the named edge attributes in one pass over its edges.

    Reads ``G``'s adjacency dicts directly (no dispatchable networkx call), so the conversion
    also works inside networkx's backend test mode.

    Parameters
    ----------
    G : networkx.Graph or TurboBCGraph
        A :class:`TurboBCGraph` is returned as it is.
    edge_attrs : dict, optional
        ``{attribute: default}`` as networkx passes it (e.g. ``{"weight": 1}``); an edge
        without the attribute takes the default.

    Returns
    -------
    TurboBCGraph
    """
    import scipy.sparse as sp

    if is_turbobc_graph(G):
        return G
    nodes = list(G)
    index = {node: i for i, node in enumerate(nodes)}
    # the raw adjacency dicts (G.adj wraps every neighbour's dict in a view, which costs
    # more than the conversion itself on multigraphs)
    adj = getattr(G, "_adj", None) or G.adj
    degree = np.fromiter((len(adj[u]) for u in nodes), dtype=np.int64, count=len(nodes))
    cols = np.fromiter((index[v] for u in nodes for v in adj[u]), dtype=np.int64,
                       count=int(degree.sum()))
    indptr = np.concatenate([[0], np.cumsum(degree)])
    pattern = sp.csr_array((np.ones(cols.size), cols, indptr), shape=(len(nodes),) * 2)
    parallel = None
    if G.is_multigraph():
        parallel = _parallel_edges(adj, nodes, edge_attrs or {})
        values = {attr: _smallest(flat, parallel.counts)
                  for attr, flat in parallel.values.items()}
    else:
        values = {attr: _graph_values(adj, nodes, attr, default)
                  for attr, default in (edge_attrs or {}).items()}
    converted = TurboBCGraph(pattern, nodes, directed=G.is_directed(),
                             multigraph=G.is_multigraph(), graph=dict(G.graph),
                             edge_values=values, parallel=parallel)
    converted.__dict__["index"] = index  # fill the cached_property
    return converted


def _graph_values(adj, nodes, attr, default) -> np.ndarray:
    """One value per neighbour, in adjacency order (the pattern's order)."""
    return _reals([data.get(attr, default) for u in nodes for data in adj[u].values()])


def _parallel_edges(adj, nodes, edge_attrs: dict) -> ParallelEdges:
    """A multigraph's parallel edges, entry by entry: their keys and kept values."""
    groups = [keyed for u in nodes for keyed in adj[u].values()]  # one per stored entry
    counts = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
    keys = [key for keyed in groups for key in keyed]
    values = {attr: _reals([data.get(attr, default) for keyed in groups
                            for data in keyed.values()])
              for attr, default in edge_attrs.items()}
    return ParallelEdges(keys=keys, counts=counts, values=values)


def _smallest(flat: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The smallest value over each entry's parallel edges (NaN if any is NaN)."""
    if not counts.size:
        return flat
    return np.minimum.reduceat(flat, np.cumsum(counts) - counts)


def _reals(raw: list) -> np.ndarray:
    """``raw`` as float64; values that are not real numbers become NaN."""
    try:
        array = np.array(raw)
    except (ValueError, TypeError, OverflowError):
        array = None  # e.g. sequences of different lengths
    if array is not None and array.ndim == 1 and array.dtype.kind in "biuf":
        return array.astype(np.float64)
    return np.fromiter(map(_real, raw), dtype=np.float64, count=len(raw))


def _real(value) -> float:
    if not isinstance(value, numbers.Real):
        return math.nan  # strings, None, complex, Decimal: networkx cannot add them either
    try:
        return float(value)
    except OverflowError:  # an int beyond float range
        return math.inf if value > 0 else -math.inf


def to_nx(obj: TurboBCGraph):
    """``obj`` as a networkx graph: its nodes, its edges (parallel edges once), the kept
    edge attributes and the graph attributes."""
    import networkx as nx

    directed, multi = obj.is_directed(), obj.is_multigraph()
    kind = ((nx.MultiDiGraph if multi else nx.DiGraph) if directed
            else (nx.MultiGraph if multi else nx.Graph))
    H = nx.from_scipy_sparse_array(obj.pattern, create_using=kind, parallel_edges=multi)
    for *_, data in H.edges(data=True):
        data.clear()  # the pattern's ones are not attributes of the original graph
    rows = np.repeat(np.arange(len(obj.nodes)), np.diff(obj.pattern.indptr)).tolist()
    cols = obj.pattern.indices.tolist()
    for attr, values in obj.edge_values.items():
        for u, v, value in zip(rows, cols, values.tolist()):
            H.edges[(u, v, 0) if multi else (u, v)][attr] = value
    H = nx.relabel_nodes(H, dict(enumerate(obj.nodes)), copy=True)
    H.graph.update(obj.graph)
    return H
