"""The CPU engine's one accumulate step: Brandes' backward sweep of one source over the
shortest-path DAG a walk found (turbobc/engines/cpu/walks.py), with the target weights τ, the
source weight ω and the edge sums as parameters, compiled with numba.

The step is the GPU's (spmv/kernels/accumulate.cuh) and the graphblas engine's
(turbobc/engines/graphblas/sweep.py): for every reached vertex v, children first,

    u(w) = (τ(w) + δ(w)) / σ(w)             each child w's share per path
    δ(v) = σ(v) · Σ_{w : d(v) + len(v, w) = d(w)} u(w)       t = A u ; δ = σ .* t
    bc(v) += ω(s) · δ(v)                     (v ≠ s)

pulled over v's out-edges, so the DAG needs no list of parents (the walk's distances decide
which out-edges are DAG edges). Each DAG edge v -> w also carries its term σ(v) · u(w) into
the edge sums when they are asked for (edge BC). networkx's edge subset BC
(``split_non_targets``) hands a non-target's δ to its parents in equal shares instead:
u(w) = τ(w) (1 + δ(w)) / σ(w) and a share q(w) = (1 − τ(w)) δ(w) / |P(w)| added to each
parent's δ, as the graphblas engine does.

Counts come as σ̂ · 2^E (walks.py): σ(v) / σ(w) = σ̂(v) / σ̂(w) · 2^(E(v) − E(w)), the power of
two taken only for a source whose counts were rescaled.
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["accumulate_source"]


@njit(cache=True)
def _pulled_hops(indptr, indices, v, dv, dist, path_share):
    """t(v) = Σ u(w) over the out-neighbours w one hop further (branch-free: a child test that
    goes either way costs more as a jump than as a select)."""
    below = dv + 1.0
    total = 0.0
    for e in range(indptr[v], indptr[v + 1]):
        w = indices[e]
        total += path_share[w] if dist[w] == below else 0.0
    return total


@njit(cache=True)
def _pulled_lengths(indptr, indices, lengths, v, dv, dist, path_share):
    """t(v) = Σ u(w) over the out-edges v -> w with d(v) + len == d(w), branch-free."""
    total = 0.0
    for e in range(indptr[v], indptr[v + 1]):
        w = indices[e]
        total += path_share[w] if dv + lengths[e] == dist[w] else 0.0
    return total


@njit(cache=True)
def accumulate_source(indptr, indices, lengths, source, count, order, dist, sigma, expo,
                      scaled, parents, tau, slot_tau, weight, split, path_share, equal_share, bc,
                      edge_sums, endpoints):
    """Add one source's dependencies (times ``weight``, ω(s)) into ``bc``, and with
    ``edge_sums`` (an empty array: not asked for) its edge terms.

    Parameters
    ----------
    indptr, indices, lengths
        The graph's CSR pattern and its edge lengths (empty: every edge one hop).
    source, count, order, dist, sigma, expo, scaled, parents
        What the walk found (:func:`~turbobc.engines.cpu.walks.walk_hops`).
    tau, slot_tau
        τ: one weight per vertex (empty: all ones); ``slot_tau``, this source's own row of
        per-slot target weights, replaces it when not empty.
    weight : float
        ω(s): every term of this source counts that many times.
    split : bool
        networkx's edge subset BC (τ in {0, 1}): non-targets' δ in equal shares.
    path_share, equal_share
        Work arrays of n for u and q, zero on entry and on return where this source
        reached.
    endpoints : bool
        networkx's endpoint terms: +ω for every reached vertex but s, and ω (reached − 1)
        for s.
    """
    unit = lengths.size == 0
    has_tau = tau.size > 0
    has_slot_tau = slot_tau.size > 0
    edges = edge_sums.size > 0
    plain = not (scaled or split or edges)
    for i in range(count - 1, -1, -1):
        v = order[i]
        dv = dist[v]
        sv = sigma[v]
        # t(v) = Σ u(w) over the DAG children (and Σ q(w), the split's equal shares)
        if plain and unit:
            pulled, shares = _pulled_hops(indptr, indices, v, dv, dist, path_share), 0.0
        elif plain:
            pulled, shares = _pulled_lengths(indptr, indices, lengths, v, dv, dist,
                                             path_share), 0.0
        else:
            pulled, shares = _pulled_each(indptr, indices, lengths, v, dv, sv, expo, dist,
                                          scaled, split, path_share, equal_share, weight,
                                          edge_sums)
        # δ(v) = σ(v) t(v) (+ the equal shares of its non-target children)
        dep = sv * pulled + shares
        target = slot_tau[v] if has_slot_tau else (tau[v] if has_tau else 1.0)
        if split:
            # u(v) = τ(v) (1 + δ(v)) / σ(v) ; q(v) = (1 − τ(v)) δ(v) / |P(v)|
            path_share[v] = target * (1.0 + dep) / sv
            if v != source:
                equal_share[v] = (1.0 - target) * dep / parents[v]
        else:
            # u(v) = (τ(v) + δ(v)) / σ(v)
            path_share[v] = (target + dep) / sv
        if v != source:
            bc[v] += weight * dep
            if endpoints:
                bc[v] += weight
    if endpoints:
        bc[source] += weight * (count - 1)
    for i in range(count):
        v = order[i]
        path_share[v] = 0.0
        if split:
            equal_share[v] = 0.0


@njit(cache=True)
def _pulled_each(indptr, indices, lengths, v, dv, sv, expo, dist, scaled, split, path_share,
                 equal_share, weight, edge_sums):
    """t(v) and Σ q(w) over v's DAG children, one edge at a time: with counts rescaled
    (σ(v) / σ(w) = σ̂(v) / σ̂(w) · 2^(E(v) − E(w))), the split's equal shares, and each DAG
    edge's term σ(v) u(w) (+ q(w)) times ω added to ``edge_sums`` when it is not empty."""
    unit = lengths.size == 0
    edges = edge_sums.size > 0
    pulled, shares = 0.0, 0.0
    for e in range(indptr[v], indptr[v + 1]):
        w = indices[e]
        if dv + (1.0 if unit else lengths[e]) != dist[w]:
            continue
        u = path_share[w]  # u(w), set when w was finished
        if scaled:
            u = math.ldexp(u, expo[v] - expo[w])
        pulled += u
        if split:
            shares += equal_share[w]
        if edges:
            term = sv * u
            if split:
                term += equal_share[w]
            edge_sums[e] += weight * term
    return pulled, shares
