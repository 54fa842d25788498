"""Brandes' sweep with a binary exponent on every path count: exact for any range of counts.

The engines keep path counts as float64 scaled by one power of two per (source, BFS level)
(:func:`turbobc.engines.graphblas.sweep._keep_in_range`, ``rescale_level`` in
spmv/kernels/batched.cuh, the rescale step of spmv/kernels/single.cuh; the cpu engine's walks
per run of finished vertices, turbobc/engines/cpu/walks.py). That is exact while the counts of one level lie
within a factor :data:`WIDE_RANGE` of the level's largest; a level spanning more (a 1100 x 1100
grid from a corner: 1 on the border and about 2^1095 on the diagonal of the same level; a chain
of k diamonds beside a plain path: 2^k and 1) would lose its small counts to underflow. The
engines detect such a source while they sweep (a scaled count below ``1 / WIDE_RANGE``), drop it
from their fast path before anything of it is added, and hand it here.

Here every count is a pair ``σ(v) = M(v) · 2^E(v)`` with a float64 mantissa M in [0.5, 1) and
an int64 exponent E per (source, vertex), so no count ever over- or underflows. A batch of B
sources is swept level by level over lists of (source, vertex) entries, keyed ``b · n + v``;
the same code runs on NumPy (the CPU engine) and CuPy (the GPU engine)::

    forward, d = 1, 2, ...   for every child w of the frontier, undiscovered:
                             E'(w) = max_{parents p} E(p)
                             σ(w)  = 2^E'(w) · Σ_p M(p) 2^(E(p) − E'(w))     then normalized
    backward, d = D .. 2     δ(v) = Σ_{children w} (M(v) / M(w)) · 2^(E(v) − E(w)) · (1 + δ(w))
    bc(v) += Σ_sources δ(v)  (and networkx's endpoint terms)

Every term of the forward sum is at most 1, and every backward ratio σ(v)/σ(w) is at most 1
(a parent never has more paths than its child), so nothing overflows; terms below 2^-1074 of
their sum are the only ones lost, as in any float64 sum. The result is Brandes' δ to float64
rounding of every ratio σ(v)/σ(w).

Weighted BC passes the DAG test instead of BFS levels: the edge lengths and a function that
gives a batch's distances (the CPU engine's min-plus sweep, ``ShortestPathDag.distances`` in
turbobc/engines/graphblas/dag.py). An edge v -> w is then a DAG edge when d(v) + len == d(w), the
levels are the DAG's hop layers (a vertex joins once all its DAG parents are done, Kahn's
order), and its children lie on any deeper level; the sums and terms above are the same, with
each vertex's count, δ and parent count kept in dense per-(source, vertex) arrays
(:func:`_forward_dag`, :func:`_sweep_dag`): about 32 bytes per slot more.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from turbobc._scaling import WIDE_EXP

__all__ = ["WIDE_RANGE", "WIDE_BATCH_ENTRIES", "accumulate_wide"]

WIDE_RANGE = 2.0**WIDE_EXP
"""Widest spread of one level's counts the per-level scaling handles (2^896; the kernels' limit
too: spmv/kernels/ctl.cuh, mirrored in spmv/_ctl.py). Below 2^-896 a scaled count would still
be a normal float64, but 1/σ̂ in the backward sweep (up to n · 2^896) must stay finite too."""

WIDE_BATCH_ENTRIES = 2**24
"""Most (source, vertex) slots of one wide batch: 4 bytes each in the dense depth array, plus
about 48 bytes per reached pair (key, mantissa, exponent and δ in the level lists, and the
edge expansion of one level). The CPU engine passes its own, memory-sized batch when smaller."""


def accumulate_wide(xp, indptr, indices, n: int, sources, raw, *, endpoints: bool,
                    progress=None, batch_entries: int = WIDE_BATCH_ENTRIES,
                    target_weight=None, source_weight=None, edge_raw=None,
                    split_non_targets=False, lengths=None, distances=None) -> None:
    """Add the raw Brandes dependencies of ``sources`` into ``raw``, exact for any counts.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``: where the arrays live and the work runs.
    indptr, indices : array
        The CSR pattern on ``xp`` (row v lists the out-neighbours of v), int32 or int64.
    n : int
        Number of vertices.
    sources : array-like of int
        Distinct source vertices.
    raw : array
        float64, length n, on ``xp``: ``raw[v] += Σ_s δ_s(v)`` (+ the endpoint terms).
    endpoints : bool
        networkx's endpoint terms: +1 for every vertex reached from s other than s, and
        (reached − 1) for s.
    progress : tqdm, optional
        Advanced by the number of sources of each finished batch.
    batch_entries : int
        Most (source, vertex) slots per batch.
    target_weight : array, optional
        float64, length n, on ``xp``: τ, the per-vertex target weight of the accumulate step
        (spmv/kernels/accumulate.cuh); None: all ones.
    source_weight : array, optional
        float64, length n, on ``xp``: ω, the weight of each source (every term of its sweep
        counts ω(s) times); None: all ones.
    edge_raw : array, optional
        float64, one per stored edge (aligned with ``indices``), on ``xp``: each edge's share of
        the dependencies is added (edge BC); None: not computed.
    split_non_targets : bool
        networkx's edge subset BC: a non-target's δ goes to its parents in equal shares
        (:class:`turbobc.engines.protocol.Problem`).
    lengths : array, optional
        Weighted BC: float64 edge lengths aligned with ``indices``, on ``xp``. With
        ``distances``, the DAG test d(v) + len == d(w) replaces BFS levels.
    distances : callable, optional
        ``distances(batch)``: the B x n float64 distances from the sources of a batch
        (NumPy array, inf where not reached), exactly those the DAG test compares.
    """
    sources = np.asarray(sources, dtype=np.int64)
    step = max(1, min(sources.size, batch_entries // max(n, 1)))
    indptr = indptr.astype(xp.int64)
    degree = xp.diff(indptr)
    for start in range(0, sources.size, step):
        batch = xp.asarray(sources[start:start + step])
        graph = (xp, indptr, indices, degree, n)
        if distances is None:
            _sweep(graph, batch, raw, endpoints, target_weight, source_weight, edge_raw,
                   split_non_targets)
        else:
            dag = _Dag(lengths, xp.asarray(distances(sources[start:start + step])).ravel())
            _sweep_dag(graph, dag, batch, raw, endpoints, target_weight, source_weight,
                       edge_raw, split_non_targets)
        if progress is not None:
            progress.update(int(batch.size))


def _sweep(graph, batch, raw, endpoints, tau=None, omega=None, edge_raw=None,
           split=False) -> None:
    """Forward and backward sweep of one batch over BFS levels; adds into ``raw``."""
    xp, indptr, indices, degree, n = graph
    levels, depth_of = _forward(xp, indptr, indices, degree, n, batch)
    keys_all, delta_all = [], []
    delta = xp.zeros(levels[-1][0].size, dtype=xp.float64)  # δ = 0 on the deepest level
    lane_weight = None if omega is None else omega[batch]
    last = 1 if edge_raw is not None else 2  # level 1 only feeds the source (and its edges)
    for d in range(len(levels) - 1, last - 1, -1):
        delta = _backward_level(xp, indptr, indices, degree, n, levels[d - 1], levels[d],
                                delta, depth_of, d, tau, edge_raw, lane_weight, split)
        if d == 1:
            break
        keys_all.append(levels[d - 1][0])
        delta_all.append(delta)
    _add_sums(xp, n, batch, raw, levels, keys_all, delta_all, endpoints, omega)


def _add_sums(xp, n, batch, raw, levels, keys_all, delta_all, endpoints, omega) -> None:
    """bc += Σ_sources ω δ over the (source, vertex) entries ``keys_all`` (δ in
    ``delta_all``), and networkx's endpoint terms from the levels' keys."""
    if keys_all:
        keys = xp.concatenate(keys_all)
        # bc += Σ_sources ω δ : one scatter-add over every (source, vertex) entry of depth ≥ 1
        delta = xp.concatenate(delta_all)
        if omega is not None:
            delta = delta * omega[batch[keys // n]]
        raw += xp.bincount(keys % n, weights=delta, minlength=n)
    if endpoints:
        reached = xp.concatenate([keys for keys, _, _ in levels[1:]]) if len(levels) > 1 \
            else xp.zeros(0, dtype=xp.int64)
        # +1 (ω(s) with source weights) for every vertex reached from s (v ≠ s); s gets the
        # number it reached
        lane_weight = None if omega is None else omega[batch[reached // n]]
        raw += xp.bincount(reached % n, weights=lane_weight, minlength=n).astype(xp.float64)
        per_source = xp.bincount(reached // n, minlength=batch.size).astype(xp.float64)
        raw[batch] += per_source if omega is None else per_source * omega[batch]


def _forward(xp, indptr, indices, degree, n, batch):
    """Multi-source BFS with (mantissa, exponent) path counts.

    Returns ``levels[d] = (keys, M, E)`` with the sorted keys ``b · n + v`` of depth d, and
    the dense depth of every (source, vertex) slot (-1: not reached).
    """
    B = batch.size
    depth_of = xp.full(B * n, -1, dtype=xp.int32)
    keys = xp.arange(B, dtype=xp.int64) * n + batch
    # σ = e_s = 0.5 · 2^1, S(s) = 0
    levels = [(keys, xp.full(B, 0.5), xp.ones(B, dtype=xp.int64))]
    depth_of[keys] = 0
    d = 0
    while True:
        d += 1
        parent_keys, M, E = levels[-1]
        pos, child, _ = _expand(xp, indptr, indices, degree, n, parent_keys)
        # f<¬σ> = Aᵀ f : only children not reached at an earlier depth
        fresh = depth_of[child] < 0
        pos, child = pos[fresh], child[fresh]
        if child.size == 0:
            break
        new_keys, slot = xp.unique(child, return_inverse=True)
        slot = slot.reshape(-1)
        mantissa, exponent = _sum_counts(xp, slot, M[pos], E[pos], new_keys.size)
        levels.append((new_keys, mantissa, exponent))
        depth_of[new_keys] = d
    return levels, depth_of


def _sum_counts(xp, slot, M, E, size):
    """σ(i) = Σ_{slot == i} M 2^E as (mantissa in [0.5, 1), exponent): E'(i) = max E of its
    terms, and each term M 2^(E − E'(i)) ≤ 1."""
    top = _segment_max(xp, slot, E, size)
    total = xp.bincount(slot, weights=xp.ldexp(M, E - top[slot]), minlength=size)
    mantissa, shift = xp.frexp(total)
    return mantissa, top + shift.astype(xp.int64)


def _backward_level(xp, indptr, indices, degree, n, parents, children, child_delta,
                    depth_of, d, tau=None, edge_raw=None, lane_weight=None, split=False):
    """δ of depth d − 1 from the children at depth d (pulled over out-neighbours)."""
    parent_keys, Mp, Ep = parents
    child_keys, Mc, Ec = children
    pos, child, edge = _expand(xp, indptr, indices, degree, n, parent_keys)
    below = depth_of[child] == d
    pos, child, edge = pos[below], child[below], edge[below]
    at = xp.searchsorted(child_keys, child)
    parent_count = None
    if split:  # the children's parents: all on this level
        parent_count = xp.bincount(at, minlength=child_keys.size)[at]
    return _dependencies(xp, n, parents, pos, child, edge, Mc[at], Ec[at], child_delta[at],
                         parent_count, tau, edge_raw, lane_weight)


def _dependencies(xp, n, parents, pos, child, edge, Mc, Ec, child_delta, parent_count,
                  tau, edge_raw, lane_weight):
    """δ of the parent entries from their DAG edges (entry ``pos`` -> key ``child`` over stored
    edge ``edge``; the child's mantissa, exponent and δ per edge), adding each edge's share to
    ``edge_raw``. ``parent_count`` (per edge: the child's number of DAG parents) is networkx's
    edge subset BC: a non-target's δ in equal shares to its parents."""
    parent_keys, Mp, Ep = parents
    # δ(v) = Σ_w σ(v)/σ(w) · (τ(w) + δ(w)),  σ(v)/σ(w) = (M(v)/M(w)) 2^(E(v) − E(w)) ≤ 1
    ratio = xp.ldexp(Mp[pos] / Mc, Ep[pos] - Ec)
    weight = 1.0 if tau is None else tau[child % n]  # τ(w): accumulate.cuh's step
    term = ratio * (weight + child_delta)  # edge v -> w's share
    if parent_count is not None:
        term = xp.where(weight > 0, ratio * (1.0 + child_delta), child_delta / parent_count)
    if edge_raw is not None:
        lane = parent_keys[pos] // n
        shares = term if lane_weight is None else term * lane_weight[lane]
        edge_raw += xp.bincount(edge, weights=shares, minlength=edge_raw.size)
    return xp.bincount(pos, weights=term, minlength=parent_keys.size)


class _Dag(NamedTuple):
    """The DAG test of a weighted batch: the edge lengths and the flat distances
    ``dist[b · n + v]`` (inf: not reached)."""

    lengths: object
    dist: object


def _dag_edges_of(graph, dag: _Dag, keys):
    """The DAG edges out of the entries ``keys``: (position in ``keys``, child key, stored
    edge), those with d(v) + len(e) == d(w)."""
    xp, indptr, indices, degree, n = graph
    pos, child, edge = _expand(xp, indptr, indices, degree, n, keys)
    # d(v) + len(e) == d(w) in float64, the comparison networkx's Dijkstra makes
    tight = dag.dist[keys[pos]] + dag.lengths[edge] == dag.dist[child]
    return pos[tight], child[tight], edge[tight]


DEGREE_CHUNK = 2**20
"""Entries whose DAG edges are counted at once for the in-degrees (bounds the expansion)."""


def _in_degrees(graph, dag: _Dag, size: int):
    """|P(w)| of every (source, vertex) slot: its DAG parents."""
    xp = graph[0]
    reached = xp.flatnonzero(xp.isfinite(dag.dist))
    indegree = xp.zeros(size, dtype=xp.int64)
    for start in range(0, reached.size, DEGREE_CHUNK):
        _, child, _ = _dag_edges_of(graph, dag, reached[start:start + DEGREE_CHUNK])
        indegree += xp.bincount(child, minlength=size)
    return indegree


def _sweep_dag(graph, dag: _Dag, batch, raw, endpoints, tau=None, omega=None, edge_raw=None,
               split=False) -> None:
    """Forward and backward sweep of one weighted batch over its shortest-path DAG."""
    xp, n = graph[0], graph[4]
    levels, count_M, count_E, indegree = _forward_dag(graph, dag, batch)
    delta = xp.zeros(batch.size * n, dtype=xp.float64)  # δ = 0 until a level is finished
    lane_weight = None if omega is None else omega[batch]
    keys_all, delta_all = [], []
    last = 0 if edge_raw is not None else 1  # the sources' level only feeds their edges
    for d in range(len(levels) - 2, last - 1, -1):
        parents = levels[d]
        # children on any deeper level, all finished: δ(v) = Σ_w σ(v)/σ(w) · (τ(w) + δ(w))
        pos, child, edge = _dag_edges_of(graph, dag, parents[0])
        parent_count = indegree[child] if split else None
        parent_delta = _dependencies(xp, n, parents, pos, child, edge, count_M[child],
                                     count_E[child], delta[child], parent_count, tau,
                                     edge_raw, lane_weight)
        if d == 0:
            break
        delta[parents[0]] = parent_delta
        keys_all.append(parents[0])
        delta_all.append(parent_delta)
    _add_sums(xp, n, batch, raw, levels, keys_all, delta_all, endpoints, omega)


def _forward_dag(graph, dag: _Dag, batch):
    """Path counts over the DAG's hop layers (Kahn's order) with (mantissa, exponent) counts.

    Returns ``levels[d] = (keys, M, E)`` (sorted keys of the vertices whose DAG parents were
    all done by level d − 1), the dense counts M, E of every slot and the in-degrees.
    """
    xp, n = graph[0], graph[4]
    size = batch.size * n
    indegree = _in_degrees(graph, dag, size)
    remaining = indegree.copy()
    # σ as M 2^E per slot; every count is at least 1 (E ≥ 1), so 0 · 2^0 is "nothing yet"
    count_M = xp.zeros(size, dtype=xp.float64)
    count_E = xp.zeros(size, dtype=xp.int64)
    keys = xp.arange(batch.size, dtype=xp.int64) * n + batch
    count_M[keys], count_E[keys] = 0.5, 1  # σ = e_s = 0.5 · 2^1
    levels = [(keys, count_M[keys], count_E[keys])]
    while True:
        parent_keys = levels[-1][0]
        pos, child, _ = _dag_edges_of(graph, dag, parent_keys)
        if child.size == 0:
            break
        touched, slot = xp.unique(child, return_inverse=True)
        slot = slot.reshape(-1)
        # σ(w) += Σ_p σ(p) over the level's parents p, the pending sum as one more term
        terms = xp.concatenate([slot, xp.arange(touched.size)])
        source = parent_keys[pos]
        count_M[touched], count_E[touched] = _sum_counts(
            xp, terms, xp.concatenate([count_M[source], count_M[touched]]),
            xp.concatenate([count_E[source], count_E[touched]]), touched.size)
        # R -= the parents just done ; the next level: the children with none left
        remaining[touched] -= xp.bincount(slot, minlength=touched.size)
        ready = touched[remaining[touched] == 0]
        if ready.size == 0:
            break
        levels.append((ready, count_M[ready], count_E[ready]))
    return levels, count_M, count_E, indegree


def _expand(xp, indptr, indices, degree, n, keys):
    """Every out-edge of every entry: (position of the entry in ``keys``, key of the head,
    index of the edge in ``indices``)."""
    vertex = keys % n
    counts = degree[vertex]
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if ends.size else 0
    pos = xp.searchsorted(ends, xp.arange(total, dtype=xp.int64), side="right")
    offset = xp.arange(total, dtype=xp.int64) - (ends - counts)[pos]
    edge = indptr[vertex][pos] + offset
    heads = indices[edge].astype(xp.int64)
    return pos, keys[pos] - vertex[pos] + heads, edge


def _segment_max(xp, slot, values, size):
    """out[i] = max of values[slot == i] (every slot occurs)."""
    out = xp.full(size, np.iinfo(np.int64).min, dtype=xp.int64)
    xp.maximum.at(out, slot, values)
    return out

