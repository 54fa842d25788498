"""The CPU engine's traversal core: one piece of the work per call, compiled with numba and
run by Python threads side by side (turbobc/engines/cpu/threads.py), each piece with its own
state, as NetworKit does.

:func:`sweep_chunk` runs the walk (turbobc/engines/cpu/walks.py: BFS for hops, Dijkstra for
lengths) and the one accumulate step (turbobc/engines/cpu/accumulate.py) for every source of a
chunk of consecutive sources, one after another. Each chunk allocates its
own work arrays (distances, counts, the order of the walk, u, and with networkx's edge subset
rule q and |P|: 40 to 56 bytes per vertex, 24 more for Dijkstra's heap) and adds into its own
row of the partial sums, which the caller adds in chunk order: the result depends on the chunk
size, never on the number of threads or on which thread finished first. The two are one body
(:func:`_sweep`) with the walk as an argument, so each compiles only its own walk.

:func:`walk_slot` and :func:`accumulate_slots` are the same two steps split for per-slot
target weights (``Problem.slot_weights``, chain folding): every slot's walk is kept (a row of
n per slot) until the plan has added what it adds to the slots' τ, then the accumulate step
runs with each slot's own row of τ (its edge sums too, for edge BC). :func:`distances_row`
gives the exponent-per-vertex sweep (turbobc/engines/wide.py) the distances of a weighted
source.

Every function here releases the GIL (``nogil``) and is reached through
turbobc/_compiled.py, which serves it compiled ahead or compiles it at first use.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from turbobc.engines.cpu.accumulate import accumulate_source
from turbobc.engines.cpu.walks import OK, clear_walk, walk_hops, walk_lengths

__all__ = ["sweep_chunk", "walk_slot", "accumulate_slots", "distances_row"]

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
    where = np.empty(size, dtype=np.int64)
    for i in range(size):
        where[i] = -1
    return np.empty(size, dtype=np.int64), np.empty(size, dtype=np.float64), where


@njit(cache=True, nogil=True)
def sweep_chunk(indptr, indices, lengths, sources, rescale_exp, wide_exp, tau, omega, split,
                endpoints, bc, edge, status, bad_edge):
    """Sweep ``sources`` one after another (Dijkstra over ``lengths``, or BFS where it is
    empty), adding into ``bc`` (and ``edge``, empty when edge sums are not asked for).

    Every source's walk status goes to ``status`` (walks.OK, WIDE or VANISHED) and the edge
    whose length vanished to ``bad_edge``; a source that is not OK adds nothing. ``tau`` and
    ``omega`` are τ and ω (empty: all ones)."""
    n = indptr.size - 1
    no_slot_tau = np.empty(0, dtype=np.float64)
    dist = np.empty(n)
    for v in range(n):
        dist[v] = np.inf
    sigma = np.zeros(n)
    expo = np.zeros(n, dtype=np.int64)
    parents = np.zeros(n if split else 0, dtype=np.int64)  # |P|: the split's shares
    order = np.empty(n, dtype=np.int64)
    path_share = np.zeros(n)
    equal_share = np.zeros(n if split else 0)
    heap, keys, where = _heap_arrays(n, lengths.size > 0)
    for i in range(sources.size):
        s = sources[i]
        count, state, scaled, bad = _walk(indptr, indices, lengths, s, rescale_exp, wide_exp,
                                          dist, sigma, expo, parents, order, heap, keys, where)
        status[i] = state
        bad_edge[i] = bad
        if state == OK:
            weight = omega[s] if omega.size > 0 else 1.0
            accumulate_source(indptr, indices, lengths, s, count, order, dist, sigma, expo,
                              scaled, parents, tau, no_slot_tau, weight, split, path_share,
                              equal_share, bc, edge, endpoints)
        clear_walk(order, count, dist, sigma, expo, parents)


@njit(cache=True, nogil=True)
def walk_slot(indptr, indices, lengths, slots, b, rescale_exp, wide_exp, dist, sigma, expo,
              order, counts, status, scaled, bad_edge):
    """The walk of slot ``b`` (vertex ``slots[b]``), kept: row b of ``dist``, ``sigma``,
    ``expo`` and ``order`` (B x n, inf / 0 on entry), with its reached count, status, whether
    its counts were rescaled and the edge whose length vanished."""
    n = indptr.size - 1
    heap, keys, where = _heap_arrays(n, lengths.size > 0)
    counts[b], status[b], scaled[b], bad_edge[b] = _walk(
        indptr, indices, lengths, slots[b], rescale_exp, wide_exp, dist[b], sigma[b],
        expo[b], np.empty(0, dtype=np.int64), order[b], heap, keys, where)


@njit(cache=True, nogil=True)
def accumulate_slots(indptr, indices, lengths, slots, counts, order, dist, sigma, expo, scaled,
                     slot_tau, first, last, bc, edge):
    """The accumulate step of slots ``first .. last - 1`` kept by :func:`walk_slot`, slot b
    with its own row of target weights ``slot_tau[b]`` (ω folded in), into ``bc`` (and into
    ``edge``, empty: no edge sums, each DAG edge's term σ(v)/σ(w) · (τ_b(w) + δ_b(w)) with the
    slot's own τ)."""
    n = indptr.size - 1
    no_tau = np.empty(0, dtype=np.float64)
    no_parents = np.empty(0, dtype=np.int64)
    path_share = np.zeros(n)
    for b in range(first, last):
        accumulate_source(indptr, indices, lengths, slots[b], counts[b], order[b], dist[b],
                          sigma[b], expo[b], scaled[b], no_parents, no_tau, slot_tau[b], 1.0,
                          False, path_share, no_tau, bc, edge, False)


@njit(cache=True, nogil=True)
def distances_row(indptr, indices, lengths, source, rescale_exp, out):
    """The shortest distances from ``source`` into ``out`` (inf where not reached), the sums
    Dijkstra makes."""
    n = indptr.size - 1
    for v in range(n):
        out[v] = np.inf
    sigma = np.zeros(n)
    expo = np.zeros(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    heap, keys, where = _heap_arrays(n, True)
    walk_lengths(indptr, indices, lengths, source, rescale_exp, NEVER_WIDE, out, sigma, expo,
                 np.empty(0, dtype=np.int64), order, heap, keys, where)
