"""The forward walks of the CPU engine, one source at a time: a BFS for hop counts and a
Dijkstra for lengths, both compiled with numba.

Each walk finds, from one source s, every reached vertex's distance d, its path count σ and
the order in which the vertices were finished (non-decreasing distance: Brandes' stack S).
Both write the same arrays, so one accumulate step (turbobc/engines/cpu/accumulate.py) serves
both. In linear-algebra terms the BFS is the paper's forward sweep,

    f = e_s, σ = e_s ; while f ≠ 0:  f<¬σ> = Aᵀ f ,  σ += f

one vertex at a time (a FIFO queue holds the frontier), and the Dijkstra is the same sum over
the shortest-path DAG, d(w) = min_v d(v) + len(v, w), σ(w) = Σ_{v : d(v) + len(v, w) = d(w)} σ(v),
with a binary heap in place of the queue. A hop is an edge of length 1.0, so the DAG test
``d(v) + len(v, w) == d(w)`` is the same float64 comparison in both walks, the one networkx's
Dijkstra makes: two paths are equally short when their float64 sums are equal.

Path counts. σ is kept as σ̂ · 2^E: a float64 σ̂ and an exponent E per vertex, with E the
same for every vertex finished between two rescalings. When a vertex is finished with
σ̂ > 2^rescale_exp, its σ̂ and the pending sums of every vertex still waiting (all in the
current scale) are multiplied by 2^-k, k the exponent of that σ̂, and E grows by k from then
on: exact (a power of two), and never needed where counts stay below 2^rescale_exp, which
covers every graph whose counts fit in float64. A vertex finished with σ̂ < 2^-wide_exp
would lose its small counts to underflow: the walk stops with :data:`WIDE` and the source goes
to the exponent-per-vertex sweep (turbobc/engines/wide.py). The limits are
turbobc/_scaling.py's, passed in as arguments so that tests can lower them.

Lengths that vanish. A DAG edge whose length vanishes in the sum (d(v) + len == d(v)) would
join two vertices at the same distance, where networkx's counts depend on the order it pops
ties: the walk stops with :data:`VANISHED` and names the edge.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["OK", "WIDE", "VANISHED", "walk_hops", "walk_lengths", "clear_walk"]

from turbobc.engines.cpu.statuses import OK, VANISHED, WIDE  # noqa: E402  (constants)


@njit(cache=True)
def _rescale_pending(sigma, pending, first, last, factor):
    """σ̂ of the vertices ``pending[first:last]`` (finished but not expanded, or still
    waiting) times ``factor``."""
    for i in range(first, last):
        sigma[pending[i]] *= factor


@njit(cache=True)
def _finish(w, sigma, expo, exponent, high, low):
    """The exponent step of a vertex ``w`` being finished: returns (the shift k to apply to
    every pending count, 0 for none; the new current exponent; whether σ̂(w) spreads too
    wide, below ``low``). σ̂(w) above ``high`` is scaled back, by the caller with the pending
    ones."""
    shift = 0
    value = sigma[w]
    if value > high:
        shift = math.frexp(value)[1]
        value = math.ldexp(value, -shift)
    expo[w] = exponent + shift
    return shift, exponent + shift, value < low


@njit(cache=True)
def walk_hops(indptr, indices, source, rescale_exp, wide_exp, dist, sigma, expo, parents,
              order):
    """BFS from ``source``: distances in hops (float64, inf where not reached), σ̂, E and,
    when ``parents`` is not empty, the DAG parents' number |P| of every reached vertex, and
    ``order`` (finishing order).

    The arrays must hold inf / 0 on entry except where a previous walk left them
    (:func:`clear_walk` resets those). Returns (reached count, status, whether any count was
    rescaled, -1)."""
    high, low = math.ldexp(1.0, rescale_exp), math.ldexp(1.0, -wide_exp)
    count_parents = parents.size > 0
    dist[source] = 0.0
    sigma[source] = 1.0
    order[0] = source
    head, tail = 0, 1
    exponent = 0
    while head < tail:
        v = order[head]
        # finishing v: its count is complete (every parent lies one level up, done before it)
        shift, exponent, too_wide = _finish(v, sigma, expo, exponent, high, low)
        if shift:
            _rescale_pending(sigma, order, head, tail, math.ldexp(1.0, -shift))
        if too_wide:
            return tail, WIDE, True, -1
        head += 1
        # f<¬σ> = Aᵀ f, one vertex of f at a time: σ(w) += σ(v) for every w one hop further
        below = dist[v] + 1.0
        sv = sigma[v]
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            if dist[w] == np.inf:
                dist[w] = below
                order[tail] = w
                tail += 1
            if dist[w] == below:
                sigma[w] += sv
                if count_parents:
                    parents[w] += 1
    return tail, OK, exponent != 0, -1


HEAP_ARITY = 4
"""Children per node of Dijkstra's heap: fewer levels than a binary heap, and the children of
a node share a cache line (ego-Facebook, lengths 1..100, one thread, ms per source: binary
with the keys read through the distances 2.3, binary with the keys in the heap 1.4, 4-ary
1.2 to 1.3, 8-ary 0.8 to 1.4, 16-ary 1.1; road-minnesota 0.28 / 0.20 / 0.19 / 0.25 and power
0.73 / 0.55 / 0.53 / 0.64 for 2 / 4 / 8 / 16 children: one-off runs, not a record)."""


@njit(cache=True)
def _sift_up(heap, keys, where, i, v, key):
    """Put vertex ``v`` with ``key`` at heap entry i or above (an addressable min-heap of
    :data:`HEAP_ARITY` children per node; ``keys[i]`` is entry i's key, ``where[v]`` is v's
    entry)."""
    while i > 0:
        up = (i - 1) // HEAP_ARITY
        if keys[up] <= key:
            break
        u = heap[up]
        heap[i] = u
        keys[i] = keys[up]
        where[u] = i
        i = up
    heap[i] = v
    keys[i] = key
    where[v] = i


@njit(cache=True)
def _pop(heap, keys, where, size):
    """Remove and return the vertex of least key (heap of ``size`` entries)."""
    top = heap[0]
    size -= 1
    if size > 0:
        v, key = heap[size], keys[size]
        i = 0
        while True:
            first = HEAP_ARITY * i + 1
            if first >= size:
                break
            best, best_key = first, keys[first]
            for c in range(first + 1, min(first + HEAP_ARITY, size)):
                if keys[c] < best_key:
                    best, best_key = c, keys[c]
            if best_key >= key:
                break
            heap[i] = heap[best]
            keys[i] = best_key
            where[heap[i]] = i
            i = best
        heap[i] = v
        keys[i] = key
        where[v] = i
    where[top] = -1
    return top


@njit(cache=True)
def walk_lengths(indptr, indices, lengths, source, rescale_exp, wide_exp, dist, sigma, expo,
                 parents, order, heap, keys, where):
    """Dijkstra from ``source`` over the edge ``lengths``: as :func:`walk_hops`, with the
    distances the float64 sums of lengths. ``heap``, ``keys`` and ``where`` (-1 where a vertex
    is in no heap) are the heap's arrays. Returns (reached count, status, whether any count
    was rescaled, the edge whose length vanished or -1)."""
    high, low = math.ldexp(1.0, rescale_exp), math.ldexp(1.0, -wide_exp)
    count_parents = parents.size > 0
    dist[source] = 0.0
    sigma[source] = 1.0
    heap[0], keys[0], where[source] = source, 0.0, 0
    size, done = 1, 0
    exponent = 0
    while size > 0:
        v = _pop(heap, keys, where, size)
        size -= 1
        order[done] = v
        done += 1
        # finishing v: every DAG parent lies nearer the source, finished before it
        shift, exponent, too_wide = _finish(v, sigma, expo, exponent, high, low)
        if shift:
            sigma[v] *= math.ldexp(1.0, -shift)
            _rescale_pending(sigma, heap, 0, size, math.ldexp(1.0, -shift))
        if too_wide:
            return _give_up(heap, where, size, order, done, WIDE, exponent, -1)
        dv = dist[v]
        sv = sigma[v]
        # d(w) = min_v d(v) + len(v, w); σ(w) = Σ σ(v) over the v that attain it
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            reach = dv + lengths[e]
            dw = dist[w]
            if reach > dw:
                continue
            if reach == dv:
                # the length vanished in the sum: a DAG edge inside one distance
                return _give_up(heap, where, size, order, done, VANISHED, exponent, e)
            if reach < dw:
                if dw == np.inf:
                    i = size
                    size += 1
                else:
                    i = where[w]
                dist[w] = reach
                sigma[w] = 0.0
                if count_parents:
                    parents[w] = 0
                _sift_up(heap, keys, where, i, w, reach)
            sigma[w] += sv
            if count_parents:
                parents[w] += 1
    return done, OK, exponent != 0, -1


@njit(cache=True)
def _give_up(heap, where, size, order, done, status, exponent, edge):
    """End a walk early: the vertices still waiting join ``order`` (so that
    :func:`clear_walk` resets them) and leave the heap."""
    for i in range(size):
        order[done + i] = heap[i]
        where[heap[i]] = -1
    return done + size, status, exponent != 0, edge


@njit(cache=True)
def clear_walk(order, count, dist, sigma, expo, parents):
    """Reset what a walk wrote for its ``count`` reached vertices (listed in ``order``)."""
    count_parents = parents.size > 0
    for i in range(count):
        v = order[i]
        dist[v] = np.inf
        sigma[v] = 0.0
        expo[v] = 0
        if count_parents:
            parents[v] = 0
