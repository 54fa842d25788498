"""The CPU engine's traversal core: threads over sources, each with its own state, as
NetworKit does; compiled with numba.

:func:`sweep_chunks` runs a walk (turbobc/engines/cpu/walks.py: BFS for hops, Dijkstra for
lengths) and the one accumulate step (turbobc/engines/cpu/accumulate.py) for every source of
a list, the list cut into chunks of consecutive sources. The chunks run in parallel
(``numba.prange``); each allocates its own work arrays (distances, counts, the order of the
walk, u, and with networkx's edge subset rule q and |P|: 40 to 56 bytes per vertex, 24 more
for Dijkstra's heap) and adds into its own
row of the partial sums, which the caller adds in chunk order: the result depends on the chunk
size, never on the number of threads or on which thread finished first.

:func:`walk_slots` and :func:`accumulate_slots` are the same two steps split for per-slot
target weights (``Problem.slot_weights``, chain folding): every slot's walk is kept (a row of
n per slot) until the plan has added what it adds to the slots' τ, then the accumulate step
runs with each slot's own row of τ (its edge sums too, for edge BC). :func:`distances_of` gives the exponent-per-vertex sweep
(turbobc/engines/wide.py) the distances of a weighted batch.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from turbobc.engines.cpu.accumulate import accumulate_source
from turbobc.engines.cpu.walks import OK, clear_walk, walk_hops, walk_lengths

__all__ = ["sweep_chunks", "walk_slots", "accumulate_slots", "distances_of"]

NEVER_WIDE = 4096
"""A ``wide_exp`` past float64's range: a walk that only wants distances never stops early."""


@njit(cache=True)
def _walk(indptr, indices, lengths, source, rescale_exp, wide_exp, dist, sigma, expo, parents,
          order, heap, keys, where):
    """The walk of ``source``: Dijkstra when there are lengths, else BFS."""
    if lengths.size > 0:
        return walk_lengths(indptr, indices, lengths, source, rescale_exp, wide_exp, dist,
                            sigma, expo, parents, order, heap, keys, where)
    return walk_hops(indptr, indices, source, rescale_exp, wide_exp, dist, sigma, expo,
                     parents, order)


@njit(cache=True)
def _heap_arrays(n, weighted):
    """Dijkstra's heap, its keys and each vertex's place in it (-1: in none); empty for
    BFS."""
    size = n if weighted else 0
    return (np.empty(size, dtype=np.int64), np.empty(size, dtype=np.float64),
            np.full(size, -1, dtype=np.int64))


@njit(cache=True, parallel=True)
def sweep_chunks(indptr, indices, lengths, sources, chunk, rescale_exp, wide_exp, tau, omega,
                 split, endpoints, bc_parts, edge_parts, status, bad_edge):
    """Sweep ``sources`` in chunks of ``chunk``: chunk c adds into ``bc_parts[c]`` (and
    ``edge_parts[c]``, whose rows are empty when edge sums are not asked for).

    Every source's walk status goes to ``status`` (walks.OK, WIDE or VANISHED) and the edge
    whose length vanished to ``bad_edge``; a source that is not OK adds nothing. ``tau`` and
    ``omega`` are τ and ω (empty: all ones)."""
    n = indptr.size - 1
    weighted = lengths.size > 0
    no_slot_tau = np.empty(0, dtype=np.float64)
    for c in prange(bc_parts.shape[0]):
        dist = np.full(n, np.inf)
        sigma = np.zeros(n)
        expo = np.zeros(n, dtype=np.int64)
        parents = np.zeros(n if split else 0, dtype=np.int64)  # |P|: the split's shares
        order = np.empty(n, dtype=np.int64)
        path_share = np.zeros(n)
        equal_share = np.zeros(n if split else 0)
        heap, keys, where = _heap_arrays(n, weighted)
        for i in range(c * chunk, min((c + 1) * chunk, sources.size)):
            s = sources[i]
            count, state, scaled, bad = _walk(indptr, indices, lengths, s, rescale_exp,
                                              wide_exp, dist, sigma, expo, parents, order,
                                              heap, keys, where)
            status[i] = state
            bad_edge[i] = bad
            if state == OK:
                weight = omega[s] if omega.size > 0 else 1.0
                accumulate_source(indptr, indices, lengths, s, count, order, dist, sigma, expo,
                                  scaled, parents, tau, no_slot_tau, weight, split, path_share,
                                  equal_share, bc_parts[c], edge_parts[c], endpoints)
            clear_walk(order, count, dist, sigma, expo, parents)


@njit(cache=True, parallel=True)
def walk_slots(indptr, indices, lengths, slots, rescale_exp, wide_exp, dist, sigma, expo,
               order, counts, status, scaled, bad_edge):
    """The walk of every slot of a batch, kept: row b of ``dist``, ``sigma``, ``expo``
    and ``order`` (B x n, inf / 0 on entry) for slot b, with its reached count, status,
    whether its counts were rescaled and the edge whose length vanished."""
    n = indptr.size - 1
    weighted = lengths.size > 0
    no_parents = np.empty(0, dtype=np.int64)
    for b in prange(slots.size):
        heap, keys, where = _heap_arrays(n, weighted)
        counts[b], status[b], scaled[b], bad_edge[b] = _walk(
            indptr, indices, lengths, slots[b], rescale_exp, wide_exp, dist[b], sigma[b],
            expo[b], no_parents, order[b], heap, keys, where)


@njit(cache=True, parallel=True)
def accumulate_slots(indptr, indices, lengths, slots, counts, order, dist, sigma, expo, scaled,
                     slot_tau, chunk, bc_parts, edge_parts):
    """The accumulate step of every slot kept by :func:`walk_slots`, slot b with its own row
    of target weights ``slot_tau[b]`` (ω folded in), in chunks of ``chunk`` slots: chunk c
    adds into ``bc_parts[c]``, and into ``edge_parts[c]`` (rows empty: no edge sums) each DAG
    edge's term σ(v)/σ(w) · (τ_b(w) + δ_b(w)) with the slot's own τ."""
    n = indptr.size - 1
    no_tau = np.empty(0, dtype=np.float64)
    no_parents = np.empty(0, dtype=np.int64)
    for c in prange(bc_parts.shape[0]):
        path_share = np.zeros(n)
        for b in range(c * chunk, min((c + 1) * chunk, slots.size)):
            accumulate_source(indptr, indices, lengths, slots[b], counts[b], order[b], dist[b],
                              sigma[b], expo[b], scaled[b], no_parents, no_tau, slot_tau[b],
                              1.0, False, path_share, no_tau, bc_parts[c], edge_parts[c], False)


@njit(cache=True, parallel=True)
def distances_of(indptr, indices, lengths, sources, rescale_exp):
    """B x n float64: the shortest distances from each of ``sources`` (inf where not reached),
    the sums Dijkstra makes."""
    n = indptr.size - 1
    out = np.empty((sources.size, n))  # filled inside the prange (see sample_counts)
    for b in prange(sources.size):
        out[b, :] = np.inf
        sigma = np.zeros(n)
        expo = np.zeros(n, dtype=np.int64)
        order = np.empty(n, dtype=np.int64)
        heap, keys, where = _heap_arrays(n, True)
        walk_lengths(indptr, indices, lengths, sources[b], rescale_exp, NEVER_WIDE, out[b],
                     sigma, expo, np.empty(0, dtype=np.int64), order, heap, keys, where)
    return out
