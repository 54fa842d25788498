"""The networkx backend: ``nx.betweenness_centrality(G, backend="turbobc")``.

Registered in pyproject.toml under the ``networkx.backends`` entry point (the object
:data:`BackendInterface`) and ``networkx.backend_info`` (``_turbobc_nx.backend_info``, a top-level module that imports
nothing, so that ``import networkx`` stays fast). networkx
converts a graph once with :meth:`BackendInterface.convert_from_nx` (cached on the graph while
it is not mutated) and calls the functions below with the converted graph; results are dicts
keyed by the original nodes, in ``list(G)`` order.

Calls turbobc cannot serve exactly are declined by :meth:`BackendInterface.can_run`, which
returns the reason as a string; networkx then falls back to its own implementation when
``nx.config.fallback_to_nx`` is set, or raises ``NotImplementedError`` naming the reason when
``backend="turbobc"`` was explicit. Declined: weights that differ between edges (BC here is
unweighted; all-equal positive weights give the same shortest paths, so they are served),
targets that are not every node (``betweenness_centrality_subset``), repeated or unknown
sources, ``k`` outside 1..n (networkx raises its own errors) and random states that are not a
``random.Random``.
"""

from __future__ import annotations

import inspect
import math
import numbers
import random
from collections.abc import Iterator
from functools import cached_property

import numpy as np

__all__ = ["BackendInterface", "TurboBCGraph"]

SHOULD_RUN_MIN_NODES = 50
"""Automatic dispatch (``nx.config.backend_priority``) leaves graphs with fewer nodes to
networkx, which is faster there (see :meth:`BackendInterface.should_run`)."""

class TurboBCGraph:
    """A networkx graph converted for turbobc: its adjacency pattern and its nodes.

    Attributes
    ----------
    pattern : scipy.sparse.csr_array
        n x n, float64 ones: ``pattern[i, j] == 1`` means an edge ``nodes[i] -> nodes[j]``
        (both directions for an undirected graph). Parallel edges of a multigraph are stored
        once: they do not change shortest-path counts in networkx's unweighted BC either.
    nodes : list
        The nodes in ``list(G)`` order: vertex i is ``nodes[i]``.
    """

    __networkx_backend__ = "turbobc"

    def __init__(self, pattern, nodes, *, directed: bool, multigraph: bool, graph=None):
        self.pattern = pattern
        self.nodes = nodes
        self._directed = bool(directed)
        self._multigraph = bool(multigraph)
        self.graph = {} if graph is None else graph

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

    def __repr__(self) -> str:
        kind = "directed" if self._directed else "undirected"
        return f"TurboBCGraph({kind}, n={len(self.nodes)}, stored edges={self.pattern.nnz})"


def _is_turbobc_graph(G) -> bool:
    return getattr(G, "__networkx_backend__", None) == "turbobc"


def _convert(G) -> TurboBCGraph:
    """Read ``G``'s adjacency directly (no dispatchable networkx call, so the conversion
    also works inside networkx's backend test mode)."""
    import scipy.sparse as sp

    if _is_turbobc_graph(G):
        return G
    nodes = list(G)
    index = {node: i for i, node in enumerate(nodes)}
    adj = G.adj
    degree = np.fromiter((len(adj[u]) for u in nodes), dtype=np.int64, count=len(nodes))
    cols = np.fromiter((index[v] for u in nodes for v in adj[u]), dtype=np.int64,
                       count=int(degree.sum()))
    indptr = np.concatenate([[0], np.cumsum(degree)])
    pattern = sp.csr_array((np.ones(cols.size), cols, indptr), shape=(len(nodes),) * 2)
    converted = TurboBCGraph(pattern, nodes, directed=G.is_directed(),
                             multigraph=G.is_multigraph(), graph=dict(G.graph))
    converted.__dict__["index"] = index  # fill the cached_property
    return converted


def _values(G: TurboBCGraph, sources=None, **options) -> dict:
    from ._api import bc

    if not G.nodes:
        return {}
    values = bc(G.pattern, sources=sources, directed=G.is_directed(), **options)
    return dict(zip(G.nodes, values.tolist()))


def betweenness_centrality(G, k=None, normalized=True, weight=None, endpoints=False,
                           seed=None, *, engine="auto", kernel="auto", progress=False):
    """``networkx.betweenness_centrality`` on turbobc (see :func:`turbobc.bc`)."""
    G = _convert(G)
    if k is not None and k == len(G):
        k = None  # networkx: "the result is the same regardless", and no draw from seed
    return _values(G, k=k, seed=seed if k is not None else None,
                   normalized=bool(normalized), endpoints=bool(endpoints), engine=engine,
                   kernel=kernel, progress=progress)


def betweenness_centrality_subset(G, sources, targets, normalized=False, weight=None, *,
                                  engine="auto", kernel="auto", progress=False):
    """``networkx.betweenness_centrality_subset`` with every node a target, on turbobc."""
    G = _convert(G)
    chosen = [G.index[s] for s in sources]
    if not chosen:
        return dict.fromkeys(G.nodes, 0.0)
    return _values(G, sources=chosen, normalized=bool(normalized), endpoints=False,
                   engine=engine, kernel=kernel, progress=progress)


_SIGNATURES = {f.__name__: inspect.signature(f)
               for f in (betweenness_centrality, betweenness_centrality_subset)}


def can_run(name, args, kwargs):
    """True, or the reason (a str) why turbobc declines this call."""
    try:
        bound = _SIGNATURES[name].bind(*args, **kwargs)
    except KeyError:
        return f"turbobc does not implement {name}"
    except TypeError as exc:
        return f"the arguments do not match {name}: {exc}"
    bound.apply_defaults()
    a = bound.arguments
    G = a["G"]
    reason = _check_weight(G, a["weight"])
    if reason:
        return reason
    if name == "betweenness_centrality":
        reason = _check_k(G, a["k"], a["seed"])
    else:
        reason = _check_subset(G, a["sources"], a["targets"])
    return reason or True


def should_run(name, args, kwargs):
    """Whether automatic dispatch should use turbobc: not on graphs below 50 nodes."""
    G = args[0] if args else kwargs.get("G")
    n = len(G) if G is not None else 0
    if n < SHOULD_RUN_MIN_NODES:
        return (f"the graph has {n} nodes (< {SHOULD_RUN_MIN_NODES}): networkx is faster "
                "than converting it")
    return True


def _check_weight(G, weight):
    if weight is None:
        return None
    if not isinstance(weight, str):
        return "a weight function is not supported (turbobc BC is unweighted)"
    if _is_turbobc_graph(G):
        return "weights are not kept in a turbobc graph (turbobc BC is unweighted)"
    value = None
    edges = G.edges(data=weight, default=1, keys=True) if G.is_multigraph() else \
        G.edges(data=weight, default=1)
    for *_, w in edges:
        if value is None:
            value = w
        elif w != value:
            return (f"edge weights {weight!r} differ ({value!r} and {w!r}); turbobc BC is "
                    "unweighted and serves only all-equal weights")
    if value is None:
        return None  # no edges: every weighting is the same
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not 0 < value < math.inf or not math.isfinite(float(value) * max(len(G), 1))):
        return (f"edge weights {weight!r} are all {value!r}; only a positive finite common "
                "weight gives the unweighted shortest paths")
    return None


def _check_k(G, k, seed):
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= len(G):
        return f"k must be an integer in 1..n = {len(G)} for turbobc; got {k!r}"
    if k != len(G) and not isinstance(seed, random.Random):
        return (f"seed of type {type(seed).__name__} cannot reproduce networkx's sampling "
                "in turbobc")
    return None


def _check_subset(G, sources, targets):
    if isinstance(sources, Iterator) or isinstance(targets, Iterator):
        return "sources and targets must be collections, not one-shot iterators"
    index = G.index if _is_turbobc_graph(G) else None
    try:
        seen = set()
        for s in sources:
            if not (s in index if index is not None else s in G):
                return f"source {s!r} is not a node of the graph"
            if s in seen:
                return f"source {s!r} is repeated (networkx counts it twice)"
            seen.add(s)
        target_set = set(targets)
    except TypeError as exc:
        return f"sources and targets must hold hashable nodes: {exc}"
    missing = sum(1 for v in G if v not in target_set)
    if missing:
        return (f"{missing} node(s) are not targets; turbobc computes all-targets subset BC "
                "only")
    return None


def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                    preserve_node_attrs=False, preserve_graph_attrs=False, name=None,
                    graph_name=None):
    """The networkx graph ``G`` as a :class:`TurboBCGraph` (structure and node labels)."""
    return _convert(G)


def convert_to_nx(obj, *, name=None):
    """Results are already networkx-shaped (dicts); a :class:`TurboBCGraph` is rebuilt."""
    if not _is_turbobc_graph(obj):
        return obj
    import networkx as nx

    H = nx.from_scipy_sparse_array(
        obj.pattern, create_using=(nx.MultiDiGraph if obj.is_multigraph() else nx.DiGraph)
        if obj.is_directed() else (nx.MultiGraph if obj.is_multigraph() else nx.Graph),
        parallel_edges=obj.is_multigraph())
    for *_, data in H.edges(data=True):
        data.clear()  # the pattern's ones are not attributes of the original graph
    H = nx.relabel_nodes(H, dict(enumerate(obj.nodes)), copy=True)
    H.graph.update(obj.graph)
    return H


class BackendInterface:
    """The object the ``networkx.backends`` entry point names."""

    betweenness_centrality = staticmethod(betweenness_centrality)
    betweenness_centrality_subset = staticmethod(betweenness_centrality_subset)
    convert_from_nx = staticmethod(convert_from_nx)
    convert_to_nx = staticmethod(convert_to_nx)
    can_run = staticmethod(can_run)
    should_run = staticmethod(should_run)
