"""Brandes' sweep with a binary exponent on every path count: exact for any range of counts.

The engines keep path counts as float64 scaled by one power of two per (source, BFS level)
(:func:`turbobc.engines.graphblas._keep_in_range`, ``rescale_level`` in spmv/kernels/batched.cuh,
the rescale step of spmv/kernels/single.cuh). That is exact while the counts of one level lie
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
"""

from __future__ import annotations

import numpy as np

from spmv._ctl import WIDE_EXP

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
                    split_non_targets=False) -> None:
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
    """
    sources = np.asarray(sources, dtype=np.int64)
    step = max(1, min(sources.size, batch_entries // max(n, 1)))
    indptr = indptr.astype(xp.int64)
    degree = xp.diff(indptr)
    for start in range(0, sources.size, step):
        batch = xp.asarray(sources[start:start + step])
        _sweep(xp, indptr, indices, degree, n, batch, raw, endpoints, target_weight,
               source_weight, edge_raw, split_non_targets)
        if progress is not None:
            progress.update(int(batch.size))


def _sweep(xp, indptr, indices, degree, n, batch, raw, endpoints, tau=None,
           omega=None, edge_raw=None, split=False) -> None:
    """Forward and backward sweep of one batch; adds into ``raw``."""
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
        # E'(w) = max over parents; each term M(p) 2^(E(p) − E'(w)) ≤ 1
        top = _segment_max(xp, slot, E[pos], new_keys.size)
        total = xp.bincount(slot, weights=xp.ldexp(M[pos], E[pos] - top[slot]),
                            minlength=new_keys.size)
        mantissa, shift = xp.frexp(total)
        levels.append((new_keys, mantissa, top + shift.astype(xp.int64)))
        depth_of[new_keys] = d
    return levels, depth_of


def _backward_level(xp, indptr, indices, degree, n, parents, children, child_delta,
                    depth_of, d, tau=None, edge_raw=None, lane_weight=None, split=False):
    """δ of depth d − 1 from the children at depth d (pulled over out-neighbours)."""
    parent_keys, Mp, Ep = parents
    child_keys, Mc, Ec = children
    pos, child, edge = _expand(xp, indptr, indices, degree, n, parent_keys)
    below = depth_of[child] == d
    pos, child, edge = pos[below], child[below], edge[below]
    at = xp.searchsorted(child_keys, child)
    # δ(v) = Σ_w σ(v)/σ(w) · (τ(w) + δ(w)),  σ(v)/σ(w) = (M(v)/M(w)) 2^(E(v) − E(w)) ≤ 1
    ratio = xp.ldexp(Mp[pos] / Mc[at], Ep[pos] - Ec[at])
    weight = 1.0 if tau is None else tau[child % n]  # τ(w): accumulate.cuh's step
    term = ratio * (weight + child_delta[at])  # edge v -> w's share
    if split:  # networkx's edge subset BC: a non-target's δ in equal shares to its parents
        parents = xp.bincount(at, minlength=child_keys.size)
        term = xp.where(weight > 0, ratio * (1.0 + child_delta[at]),
                        child_delta[at] / parents[at])
    if edge_raw is not None:
        lane = parent_keys[pos] // n
        shares = term if lane_weight is None else term * lane_weight[lane]
        edge_raw += xp.bincount(edge, weights=shares, minlength=edge_raw.size)
    return xp.bincount(pos, weights=term, minlength=parent_keys.size)


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

