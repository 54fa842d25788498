"""The networkx backend: ``nx.betweenness_centrality(G, backend="turbobc")``.

Registered in pyproject.toml under the ``networkx.backends`` entry point (the object
:data:`BackendInterface`) and ``networkx.backend_info`` (``_turbobc_nx.backend_info``, a
top-level module that imports nothing, so that ``import networkx`` stays fast). networkx
converts a graph once with :meth:`BackendInterface.convert_from_nx` (cached on the graph while
it is not mutated; the edge attribute a call names, such as ``weight``, is kept as an array
aligned with the pattern) and calls the functions below with the converted graph; results are
dicts keyed by the original nodes, in ``list(G)`` order.

Each function is registered with :func:`implements` (its name must be listed in
``_turbobc_nx.FUNCTIONS``, which holds what networkx shows about it) and carries a decline
rule, attached with ``@function._can_run``: the rule takes the function's own parameters and
returns True or the reason (a string) why turbobc declines the call.
:meth:`BackendInterface.can_run` binds networkx's arguments to that rule and logs a decline with
its reason at INFO level on the ``turbobc.nx`` logger. networkx then falls back to its own
implementation when ``nx.config.fallback_to_nx`` is set, or raises ``NotImplementedError`` when
``backend="turbobc"`` was explicit.

Weighted calls are served: the kept weights are the edge lengths of :func:`turbobc.bc` and
:func:`turbobc.edge_bc` (``weight=True`` on the pattern with those values); all-equal weights
give the unweighted shortest paths and are swept as such. A multigraph's pair of nodes weighs
its lightest parallel edge, as in networkx, and multigraph edge BC is keyed by parallel edge as
networkx keys it (a pair's value shared by its lightest parallel edges). A source listed
twice in a subset call counts twice, as in networkx. Declined: weights turbobc cannot take as
lengths (zero, negative, not real numbers, or large enough for a path to overflow float64:
networkx has its own rules or errors there), weight functions, unknown sources and ``k``
outside 1..n (networkx raises its own errors).

Weights are read from the converted graph: a rule that receives a networkx graph (before
conversion) leaves them to the function, which checks the converted array and raises
``NotImplementedError`` with the reason (logged as well), so networkx falls back (or names the
reason as the cause of its error) as for any other decline, and no call walks the edges to look
at them.
"""

from __future__ import annotations

import functools
import inspect
import logging
import math
import numbers
import random
from collections import Counter
from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

import _turbobc_nx

from turbobc.nx._convert import TurboBCGraph, from_nx, is_turbobc_graph, to_nx

__all__ = ["BackendInterface", "TurboBCGraph", "implements"]

SHOULD_RUN_MIN_NODES = 50
"""Automatic dispatch (``nx.config.backend_priority``) leaves graphs with fewer nodes to
networkx, which is faster there (see :meth:`BackendInterface.should_run`)."""

LOG = logging.getLogger("turbobc.nx")
"""Declined calls are logged here at INFO level, with the reason."""

IMPLEMENTED: dict[str, Callable] = {}
"""``{name: function}``: what :func:`implements` registered; :class:`BackendInterface` and
:func:`can_run` are built from it."""


# ---------------------------------------------------------------------------- the registry

def implements(func: Callable) -> Callable:
    """Register ``func`` as the backend's implementation of the networkx function of its name.

    The name must be listed in ``_turbobc_nx.FUNCTIONS`` (what networkx shows without
    importing turbobc). ``func`` gets ``func.can_run``, its decline rule (always True until
    one is attached), and ``func._can_run``, the decorator that attaches one.

    Raises
    ------
    ValueError
        If the name is not listed in ``_turbobc_nx.FUNCTIONS``.
    """
    if func.__name__ not in _turbobc_nx.FUNCTIONS:
        raise ValueError(f"{func.__name__} is not listed in _turbobc_nx.FUNCTIONS")
    func.can_run = _always
    func._can_run = functools.partial(_attach_rule, func)
    IMPLEMENTED[func.__name__] = func
    return func


def _always(*args, **kwargs) -> bool:
    return True


def _attach_rule(func: Callable, rule: Callable) -> Callable:
    """Make ``rule`` the decline rule of ``func``; it must take exactly ``func``'s parameters."""
    if _parameters(rule) != _parameters(func):
        raise TypeError(f"the rule for {func.__name__} must take its parameters "
                        f"{inspect.signature(func)}; got {inspect.signature(rule)}")
    func.can_run = rule
    return rule


def _parameters(func: Callable) -> list:
    return [(p.name, p.kind, p.default) for p in inspect.signature(func).parameters.values()]


def can_run(name, args, kwargs):
    """True, or the reason (a str) why turbobc declines this call: the function's own rule.
    A decline is logged at INFO level on the ``turbobc.nx`` logger."""
    answer = _rule_answer(name, args, kwargs)
    if answer is not True:
        _log_decline(name, answer)
    return answer


def _rule_answer(name, args, kwargs):
    func = IMPLEMENTED.get(name)
    if func is None:
        return f"turbobc does not implement {name}"
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except TypeError as exc:
        return f"the arguments do not match {name}: {exc}"
    return func.can_run(*bound.args, **bound.kwargs)


def _log_decline(name: str, reason: str) -> None:
    LOG.info("turbobc declines %s: %s", name, reason)


def should_run(name, args, kwargs):
    """Whether automatic dispatch should use turbobc: not on graphs below 50 nodes."""
    G = args[0] if args else kwargs.get("G")
    n = len(G) if G is not None else 0
    if n < SHOULD_RUN_MIN_NODES:
        return (f"the graph has {n} nodes (< {SHOULD_RUN_MIN_NODES}): networkx is faster "
                "than converting it")
    return True


# --------------------------------------------------------------------------- the functions

class _Sweep(NamedTuple):
    """A converted graph and the edge lengths to sweep it with (None: unweighted paths)."""

    graph: TurboBCGraph
    lengths: np.ndarray | None

    @property
    def matrix(self):
        """The pattern, or the pattern holding the lengths."""
        pattern = self.graph.pattern
        if self.lengths is None:
            return pattern
        return sp.csr_array((self.lengths, pattern.indices, pattern.indptr),
                            shape=pattern.shape)

    @property
    def options(self) -> dict:
        """``weight=True`` when the matrix holds lengths."""
        return {} if self.lengths is None else {"weight": True}


def _served(name: str, G, weight) -> _Sweep:
    """``G`` converted (keeping ``weight``) with its lengths, or NotImplementedError (logged)
    if its weights decline."""
    G = from_nx(G, None if weight is None or callable(weight) else {weight: 1})
    reason = _weight_reason(G, weight)
    if reason:
        _log_decline(name, reason)
        raise NotImplementedError(reason)
    return _Sweep(G, _lengths(G, weight))


def _lengths(G: TurboBCGraph, weight) -> np.ndarray | None:
    """The kept weights as edge lengths, or None when there are none or all are equal (the
    unweighted shortest paths, swept faster)."""
    if weight is None:
        return None
    values = G.edge_values[weight]
    if not values.size or np.all(values == values[0]):
        return None
    return values


def _source_groups(index: dict, sources) -> dict:
    """The listed sources as vertex indices grouped by how often each is listed,
    ``{times: [vertex, ...]}``: networkx sweeps a repeated source once per listing, so its
    contribution counts that many times."""
    listed = Counter(index[s] for s in sources)
    groups: dict[int, list[int]] = {}
    for vertex, times in listed.items():
        groups.setdefault(times, []).append(vertex)
    return groups


def _listed_sum(compute: Callable, groups: dict) -> np.ndarray:
    """Σ times · compute(sources) over the groups of :func:`_source_groups` (sums are linear
    in the sources, and so is the scaling of given sources)."""
    return sum(times * compute(chosen) for times, chosen in groups.items())


def _values(sweep: _Sweep, groups=None, **options) -> dict:
    """Vertex BC as networkx returns it, ``{node: value}``: every vertex a source when
    ``groups`` is None, else the sources of :func:`_source_groups`."""
    from turbobc._api import bc

    G = sweep.graph
    if not G.nodes:
        return {}

    def compute(sources):
        return bc(sweep.matrix, sources=sources, directed=G.is_directed(), **sweep.options,
                  **options)

    values = compute(None) if groups is None else _listed_sum(compute, groups)
    return dict(zip(G.nodes, values.tolist()))


@implements
def betweenness_centrality(G, k=None, normalized=True, weight=None, endpoints=False,
                           seed=None, *, engine="auto", kernel="auto", progress=False):
    """``networkx.betweenness_centrality`` on turbobc (see :func:`turbobc.bc`)."""
    sweep = _served("betweenness_centrality", G, weight)
    if k is not None and k == len(sweep.graph):
        k = None  # networkx: "the result is the same regardless", and no draw from seed
    return _values(sweep, k=k, seed=seed if k is not None else None,
                   normalized=bool(normalized), endpoints=bool(endpoints), engine=engine,
                   kernel=kernel, progress=progress)


@betweenness_centrality._can_run
def _(G, k=None, normalized=True, weight=None, endpoints=False, seed=None, *,
      engine="auto", kernel="auto", progress=False):
    return _weight_rule(G, weight) or _check_k(G, k, seed) or True


@implements
def betweenness_centrality_subset(G, sources, targets, normalized=False, weight=None, *,
                                  engine="auto", kernel="auto", progress=False):
    """``networkx.betweenness_centrality_subset`` on turbobc: the targets are a target
    weight τ = [w ∈ targets] (:func:`turbobc.bc`'s ``targets``). As networkx, targets that
    are not nodes are ignored, a repeated target counts once and a repeated source once per
    listing."""
    sweep = _served("betweenness_centrality_subset", G, weight)
    index = sweep.graph.index
    groups = _source_groups(index, sources)
    aimed = sorted({index[t] for t in set(targets) if t in index})
    if not groups or not aimed:
        return dict.fromkeys(sweep.graph.nodes, 0.0)
    return _values(sweep, groups, targets=aimed, normalized=bool(normalized),
                   endpoints=False, engine=engine, kernel=kernel, progress=progress)


@betweenness_centrality_subset._can_run
def _(G, sources, targets, normalized=False, weight=None, *, engine="auto", kernel="auto",
      progress=False):
    return _weight_rule(G, weight) or _check_subset(G, sources, targets) or True


def _edge_values(sweep: _Sweep, weight, groups=None, **options) -> dict:
    """Edge BC of the converted graph as networkx returns it: ``{(u, v): value}`` for every
    edge of ``G.edges()``, an undirected edge keyed (earlier node, later node) in ``list(G)``
    order as ``G.edges()`` yields it, a self loop at 0.0; a multigraph's keyed
    ``{(u, v, key): value}`` (:func:`_keyed_edge_values`). Every vertex a source when
    ``groups`` is None, else the sources of :func:`_source_groups`; ``groups={}``: every
    value 0."""
    G = sweep.graph
    per_entry = np.zeros(G.pattern.nnz)
    if G.pattern.nnz and groups != {}:
        def compute(sources):
            return _entry_values(sweep, sources=sources, **options)

        per_entry = compute(None) if groups is None else _listed_sum(compute, groups)
    rows, cols = G.entry_rows, G.pattern.indices
    keep = np.ones(rows.size, dtype=bool) if G.is_directed() else rows <= cols
    if G.is_multigraph():
        return _keyed_edge_values(G, per_entry, keep, weight)
    nodes = G.nodes
    return {(nodes[i], nodes[j]): x for i, j, x in zip(rows[keep].tolist(), cols[keep].tolist(),
                                                       per_entry[keep].tolist())}


def _entry_values(sweep: _Sweep, **options) -> np.ndarray:
    """:func:`turbobc.edge_bc` of the sweep, one value per stored entry of the converted
    pattern (0.0 at self loops, which edge_bc drops)."""
    from turbobc._api import edge_bc

    G = sweep.graph
    E = edge_bc(sweep.matrix, directed=G.is_directed(), **sweep.options, **options)
    return np.asarray(E[G.entry_rows, G.pattern.indices], dtype=np.float64).ravel()


def _keyed_edge_values(G: TurboBCGraph, per_entry: np.ndarray, keep: np.ndarray,
                       weight) -> dict:
    """networkx's multigraph edge BC: ``{(u, v, key): value}`` for every edge of
    ``G.edges(keys=True)``, a pair's value shared equally by its parallel edges of the
    smallest weight (by all of them without a weight), the others 0.0."""
    parallel = G.parallel
    entry = parallel.entry
    if weight is None:
        lightest = np.ones(entry.size, dtype=bool)
    else:
        lightest = parallel.values[weight] == G.edge_values[weight][entry]
    shares = np.bincount(entry, weights=lightest, minlength=parallel.counts.size)
    flat = np.where(lightest, per_entry[entry] / np.maximum(shares[entry], 1), 0.0)
    chosen = np.flatnonzero(keep[entry])
    rows, cols = G.entry_rows[entry[chosen]], G.pattern.indices[entry[chosen]]
    nodes, keys = G.nodes, parallel.keys
    return {(nodes[i], nodes[j], keys[f]): x
            for f, i, j, x in zip(chosen.tolist(), rows.tolist(), cols.tolist(),
                                  flat[chosen].tolist())}


@implements
def edge_betweenness_centrality(G, k=None, normalized=True, weight=None, seed=None, *,
                                engine="auto", progress=False):
    """``networkx.edge_betweenness_centrality`` on turbobc (see :func:`turbobc.edge_bc`)."""
    sweep = _served("edge_betweenness_centrality", G, weight)
    if k is not None and k == len(sweep.graph):
        k = None  # networkx samples every node: the exact result
    return _edge_values(sweep, weight, k=k, seed=seed if k is not None else None,
                        normalized=bool(normalized), engine=engine, progress=progress)


@edge_betweenness_centrality._can_run
def _(G, k=None, normalized=True, weight=None, seed=None, *, engine="auto", progress=False):
    return _weight_rule(G, weight) or _check_k(G, k, seed) or True


@implements
def edge_betweenness_centrality_subset(G, sources, targets, normalized=False, weight=None,
                                       *, engine="auto", progress=False):
    """``networkx.edge_betweenness_centrality_subset`` on turbobc: targets as a target weight,
    a non-target's dependency split evenly among its parents as networkx does (unknown
    targets ignored, a repeated one counted once, a repeated source once per listing)."""
    sweep = _served("edge_betweenness_centrality_subset", G, weight)
    index = sweep.graph.index
    aimed = sorted({index[t] for t in set(targets) if t in index})
    if not aimed:
        return _edge_values(sweep, weight, {})
    return _edge_values(sweep, weight, _source_groups(index, sources), targets=aimed,
                        normalized=bool(normalized), engine=engine, progress=progress)


@edge_betweenness_centrality_subset._can_run
def _(G, sources, targets, normalized=False, weight=None, *, engine="auto", progress=False):
    return _weight_rule(G, weight) or _check_subset(G, sources, targets) or True


# ------------------------------------------------------------------------- the rules' parts

def _weight_rule(G, weight):
    """The weight part of a rule: a networkx graph's weights are checked after conversion."""
    if weight is None or is_turbobc_graph(G) or callable(weight):
        return _weight_reason(G, weight)
    return None  # decided by _served on the converted array, not by walking G's edges


def _weight_reason(G, weight):
    """Why turbobc cannot take ``weight`` as edge lengths and match networkx (None if it
    can): decided on the converted graph's weight array."""
    if weight is None:
        return None
    if callable(weight):
        return ("a weight function is not supported (turbobc reads weights from an edge "
                "attribute: pass its name)")
    values = G.edge_values.get(weight)
    if values is None:
        return (f"edge attribute {weight!r} was not kept when the graph was converted "
                f"(convert with edge_attrs={{{weight!r}: 1}})")
    if values.size == 0:
        return None  # no edges: every weighting is the same
    if np.isnan(values).any():
        return f"edge weights {weight!r} are not all real numbers"
    lightest, heaviest = float(values.min()), float(values.max())
    if not lightest > 0:
        return (f"edge weights {weight!r} include {lightest!r}; turbobc's edge lengths must "
                "be positive (networkx has its own rules for zero and negative weights)")
    if not math.isfinite(heaviest * max(len(G) - 1, 1)):
        return (f"edge weights {weight!r} reach {heaviest!r}; a path of them could pass the "
                "float64 range")
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
    index = G.index if is_turbobc_graph(G) else None
    try:
        for s in sources:
            if not (s in index if index is not None else s in G):
                return f"source {s!r} is not a node of the graph"
        set(targets)
    except TypeError as exc:
        return f"sources and targets must hold hashable nodes: {exc}"
    return None


# ------------------------------------------------------------------------------ conversion

def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                    preserve_node_attrs=False, preserve_graph_attrs=False, name=None,
                    graph_name=None):
    """The networkx graph ``G`` as a :class:`TurboBCGraph`.

    Keeps the structure, the node labels, the graph attributes and the edge attributes named
    in ``edge_attrs`` (``{attribute: default}``, as networkx passes them), each as a float64
    array aligned with the pattern. Node attributes and ``preserve_edge_attrs=True`` (all
    attributes, which networkx asks for only with a weight function, declined before
    conversion) are not kept.
    """
    return from_nx(G, edge_attrs)


def convert_to_nx(obj, *, name=None):
    """Results are already networkx-shaped (dicts); a :class:`TurboBCGraph` is rebuilt with
    its kept edge attributes."""
    return to_nx(obj) if is_turbobc_graph(obj) else obj


class BackendInterface:
    """The object the ``networkx.backends`` entry point names; the functions registered with
    :func:`implements` are its static methods."""

    convert_from_nx = staticmethod(convert_from_nx)
    convert_to_nx = staticmethod(convert_to_nx)
    can_run = staticmethod(can_run)
    should_run = staticmethod(should_run)


def _register_functions() -> None:
    missing = sorted(_turbobc_nx.FUNCTIONS.keys() - IMPLEMENTED.keys())
    if missing:
        raise RuntimeError(f"listed in _turbobc_nx.FUNCTIONS but not implemented: {missing}")
    for name, func in IMPLEMENTED.items():
        setattr(BackendInterface, name, staticmethod(func))


_register_functions()
