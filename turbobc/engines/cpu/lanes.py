"""64 sources per sweep on the CPU: the sources of a batch as the bits of a word, as the GPU's
lanes (docs/algorithm.md, "Many sources per sweep"), compiled with numba.

Unweighted vertex BC on shallow graphs spends its time on edges whose both ends are known to
many sources at once. Here a batch of up to 64 sources walks the graph together: ``seen[v]``
holds one bit per source that has reached v, and each BFS level d is a list of (vertex, bits)
entries, the bits saying for which sources v lies at depth d. Path counts σ(v, l) and the
backward sweep's u(v, l) are rows of 64 float64 per vertex, so an edge moves a whole row at
once (a vector add) instead of one count per source:

    forward, level d -> d + 1:   for (v, bits) of level d, every out-neighbour w:
                                    new(w) |= bits & ¬seen(w) ;  acc(w) += σ(v) · [bits]
                                 σ(w, l) = acc(w, l) where new(w) holds l       f<¬σ> = Aᵀ f
    backward, level d:           for (v, bits) of level d:
                                    t(v) = Σ_{w : bits(w at d+1) ∩ bits ≠ ∅} u(w)     t = A u
                                    δ(v, l) = σ(v, l) t(l) ; u(v, l) = (τ(v) + δ(v, l)) / σ(v, l)
                                    bc(v) += Σ_l ω(s_l) δ(v, l)

u of level d + 1 is kept in its own rows (zero outside that level's lanes), so t needs no
mask. The sources of a batch should lie near each other (turbobc/engines/cpu/engine.py
orders them breadth-first): a vertex then lies at few distinct depths from them, and its
edges are walked once per depth, not once per source.

Each batch is one call of :func:`sweep_lane_batch`, compiled through turbobc/_compiled.py.

Path counts are not scaled here: a source whose count passes 2^rescale_exp is marked and
left out of its batch's backward sweep, and the caller sweeps it alone
(turbobc/engines/cpu/sweep.py), where counts of any size are handled.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from turbobc.engines.cpu.statuses import LANES

__all__ = ["LANES", "sweep_lane_batch"]

_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@njit(cache=True)
def _lane_bit(lane):
    """The bit of lane ``lane`` (0 .. 63) as a uint64."""
    return _ONE << np.uint64(lane)


@njit(cache=True)
def _grow(vertices, bits, size):
    """The level lists with room for at least ``size`` entries (doubled)."""
    if size <= vertices.size:
        return vertices, bits
    capacity = max(size, 2 * vertices.size)
    more_vertices = np.empty(capacity, dtype=np.int64)
    more_bits = np.empty(capacity, dtype=np.uint64)
    for i in range(vertices.size):  # a loop, not a slice assignment: numba compiles a
        more_vertices[i] = vertices[i]  # slice's shape check for seconds (its message)
        more_bits[i] = bits[i]
    return more_vertices, more_bits


@njit(cache=True)
def _forward(indptr, indices, batch, rescale_exp, seen, sigma, acc, pending, touched,
             vertices, bits, level_start, row):
    """The batch's BFS levels and path counts. Returns (the level lists, their bounds, the
    number of levels, the lanes whose counts passed 2^rescale_exp, the vertices each lane
    reached)."""
    lanes = batch.size
    reached = np.zeros(lanes, dtype=np.int64)
    for lane in range(lanes):
        s = batch[lane]
        seen[s] |= _lane_bit(lane)
        sigma[s, lane] = 1.0
        vertices[lane] = s
        bits[lane] = _lane_bit(lane)
        reached[lane] = 1
    level_start[0], level_start[1] = 0, lanes
    depth, size, too_big = 0, lanes, _ZERO
    limit = math.ldexp(1.0, rescale_exp)
    while level_start[depth + 1] > level_start[depth]:
        count = 0
        # new(w) |= bits(v) & ¬seen(w) ; acc(w) += σ(v) restricted to bits(v)
        for i in range(level_start[depth], level_start[depth + 1]):
            v, here = vertices[i], bits[i]
            for lane in range(64):
                row[lane] = sigma[v, lane] if (here >> np.uint64(lane)) & _ONE else 0.0
            for e in range(indptr[v], indptr[v + 1]):
                w = indices[e]
                fresh = here & ~seen[w]
                if fresh == _ZERO:
                    continue
                if pending[w] == _ZERO:
                    touched[count] = w
                    count += 1
                pending[w] |= fresh
                for lane in range(64):
                    acc[w, lane] += row[lane]
        # level d + 1: σ(w, l) = acc(w, l) where w is new for lane l
        vertices, bits = _grow(vertices, bits, size + count)
        for k in range(count):
            w = touched[k]
            new = pending[w]
            seen[w] |= new
            for lane in range(64):
                if (new >> np.uint64(lane)) & _ONE:
                    sigma[w, lane] = acc[w, lane]
                    reached[lane] += 1
                    if acc[w, lane] > limit:
                        too_big |= _lane_bit(lane)
                acc[w, lane] = 0.0
            pending[w] = _ZERO
            vertices[size] = w
            bits[size] = new
            size += 1
        depth += 1
        if depth + 1 >= level_start.size:
            wider = np.empty(2 * level_start.size, dtype=np.int64)
            for i in range(level_start.size):  # a loop: see _grow
                wider[i] = level_start[i]
            level_start = wider
        level_start[depth + 1] = size
    return vertices, bits, level_start, depth, too_big, reached


@njit(cache=True)
def _backward(indptr, indices, batch, tau, omega, endpoints, good, vertices, bits,
              level_start, depth, sigma, u_next, u_here, level_bits, bc):
    """Brandes' dependencies of the batch's ``good`` lanes into ``bc``, from the deepest of its
    ``depth`` levels up to level 1 (level ``depth`` is empty)."""
    has_tau = tau.size > 0
    weights = np.ones(64)
    for lane in range(batch.size):
        if omega.size > 0:
            weights[lane] = omega[batch[lane]]
    t = np.zeros(64)
    for d in range(depth - 1, 0, -1):
        # the bits of level d + 1, by vertex (u_next holds its u, zero outside its lanes)
        for i in range(level_start[d + 1], level_start[d + 2]):
            level_bits[vertices[i]] = bits[i] & good
        for i in range(level_start[d], level_start[d + 1]):
            v, here = vertices[i], bits[i] & good
            if here == _ZERO:
                continue
            # t(v) = Σ u(w) over the children w (out-neighbours one level down in a lane)
            for lane in range(64):
                t[lane] = 0.0
            for e in range(indptr[v], indptr[v + 1]):
                w = indices[e]
                if level_bits[w] & here:
                    for lane in range(64):
                        t[lane] += u_next[w, lane]
            target = tau[v] if has_tau else 1.0
            for lane in range(64):
                if (here >> np.uint64(lane)) & _ONE:
                    # δ(v) = σ(v) t(v) ; u(v) = (τ(v) + δ(v)) / σ(v) ; bc(v) += ω δ(v)
                    dep = sigma[v, lane] * t[lane]
                    u_here[v, lane] = (target + dep) / sigma[v, lane]
                    bc[v] += weights[lane] * (dep + (1.0 if endpoints else 0.0))
                else:
                    u_here[v, lane] = 0.0
        for i in range(level_start[d + 1], level_start[d + 2]):
            level_bits[vertices[i]] = _ZERO
        u_next, u_here = u_here, u_next


@njit(cache=True, nogil=True)
def sweep_lane_batch(indptr, indices, batch, rescale_exp, tau, omega, endpoints, bc,
                     declined):
    """Unweighted vertex BC of the sources of ``batch`` (at most 64) as one batch of lanes,
    added into ``bc``; ``declined[lane]`` is set for a source whose counts passed
    2^rescale_exp (it added nothing: the caller sweeps it alone). The engine runs a batch
    per thread (turbobc/engines/cpu/threads.py)."""
    n = indptr.size - 1
    seen = np.zeros(n, dtype=np.uint64)
    pending = np.zeros(n, dtype=np.uint64)
    sigma = np.zeros((n, 64))
    work_a = np.zeros((n, 64))
    work_b = np.zeros((n, 64))
    touched = np.empty(n, dtype=np.int64)
    vertices = np.empty(max(n, 64), dtype=np.int64)
    bits = np.empty(max(n, 64), dtype=np.uint64)
    level_start = np.zeros(64, dtype=np.int64)
    row = np.zeros(64)
    vertices, bits, level_start, depth, too_big, reached = _forward(
        indptr, indices, batch, rescale_exp, seen, sigma, work_a, pending, touched,
        vertices, bits, level_start, row)
    good = ~too_big
    _backward(indptr, indices, batch, tau, omega, endpoints, good, vertices, bits,
              level_start, depth, sigma, work_a, work_b, pending, bc)
    for lane in range(batch.size):
        if too_big & _lane_bit(lane):
            declined[lane] = True
        elif endpoints:
            weight = omega[batch[lane]] if omega.size > 0 else 1.0
            bc[batch[lane]] += weight * (reached[lane] - 1)
