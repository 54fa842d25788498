"""The CPU's shortest-path sampler, its compiled part: the samples of turbobc/_pairs.py (a pair
(s, t) and one shortest s–t path picked uniformly, found by a balanced bidirectional BFS),
compiled with numba (turbobc/_compiled.py), a block of samples per call; the threads over the
blocks are turbobc/engines/cpu/pair_sampler.py's.

Sample i is drawn from (seed, i) alone, with the same random bits, races and path counts as
the host reference :func:`turbobc._pairs.reference_counts` and the GPU kernel
(spmv/kernels/pairs.cu), so the three give the same counts sample for sample while path counts
stay below 2^53. Each thread keeps its own levels, counts and visited lists for the two sides
(about 48 bytes per vertex, made once per sampler) and leaves them clean after every sample;
the counts of a call add up in uint64, the same whatever the threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


__all__ = ["sample_block"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_U8 = np.uint64(8)
_U12 = np.uint64(12)
_ONE = np.uint64(1)


@njit(cache=True)
def _mix(z):
    """splitmix64's finalizer (uint64, wrapping): :func:`turbobc._pairs._mix`."""
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MUL1
    z = (z ^ (z >> np.uint64(27))) * _MUL2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _bits(head, salt, v):
    """64 random bits for (the sample's ``head``, salt, vertex v): ``pair_bits``."""
    return _mix(head ^ (np.uint64(v) * _U8 + np.uint64(salt)))


@njit(cache=True)
def _key(bits, weight):
    """The race key log(u) / weight of a candidate (``race_keys``)."""
    u = float(np.uint64(2) * (bits >> _U12) + np.uint64(1)) * 2.0**-53
    return math.log(u) / weight


@njit(cache=True)
def _race(head, salt, pull_ptr, pull_idx, x, level, sigma, want):
    """The winner among the pull-side neighbours of ``x`` at level ``want``, weighted by
    ``sigma`` (ties: the smaller vertex)."""
    best, winner = -np.inf, -1
    for e in range(pull_ptr[x], pull_ptr[x + 1]):
        p = pull_idx[e]
        if level[p] != want:
            continue
        key = _key(_bits(head, salt, p), sigma[p])
        if key > best or (key == best and p < winner):
            best, winner = key, p
    return winner


@njit(cache=True)
def _one_sample(head, s, t, out_ptr, out_idx, in_ptr, in_idx, level, sigma, visited, counts,
                endpoints):
    """Sample one path from s to t and add it to ``counts``. ``level``, ``sigma`` and
    ``visited`` are (2, n) arrays (side 0 grows from s along out-edges, side 1 from t along
    in-edges), clean on entry and on return. Returns the side whose count overflowed, or -1."""
    roots = (s, t)
    size = np.zeros(2, dtype=np.int64)      # visited[side, :size] : every vertex seen
    first = np.zeros(2, dtype=np.int64)     # the frontier: visited[side, first:size]
    depth = np.zeros(2, dtype=np.int64)
    volume = np.zeros(2, dtype=np.int64)
    for side in range(2):
        root = roots[side]
        level[side, root] = 0
        sigma[side, root] = 1.0
        visited[side, 0] = root
        size[side] = 1
        grow_ptr = out_ptr if side == 0 else in_ptr
        volume[side] = grow_ptr[root + 1] - grow_ptr[root]
    middle, overflow = -1, -1
    while True:
        side = 0 if volume[0] <= volume[1] else 1
        other = 1 - side
        grow_ptr, grow_idx = (out_ptr, out_idx) if side == 0 else (in_ptr, in_idx)
        d = depth[side]
        start, end = first[side], size[side]
        lev, sig, seen = level[side], sigma[side], visited[side]  # this side's rows
        # the next level of this side, every unseen vertex one edge out of its frontier, with
        # σ(w) = Σ σ(u) over its parents u in the frontier (sums of integers: in any order)
        found = end
        for i in range(start, end):
            u = seen[i]
            su = sig[u]
            for e in range(grow_ptr[u], grow_ptr[u + 1]):
                w = grow_idx[e]
                lw = lev[w]
                if lw < 0:
                    lev[w] = d + 1
                    seen[found] = w
                    found += 1
                    sig[w] = su
                elif lw == d + 1:
                    sig[w] += su
        size[side] = found
        if found == end:
            break  # t is not reachable from s
        # does the level meet the other side?
        met_key, grow = -np.inf, 0
        there = level[other]
        for i in range(end, found):
            w = seen[i]
            if math.isinf(sig[w]):
                overflow = side
            grow += grow_ptr[w + 1] - grow_ptr[w]
            if there[w] >= 0:
                # the middle vertex: a race weighted by σ_s(w) σ_t(w)
                key = _key(_bits(head, 2, w), sigma[0, w] * sigma[1, w])
                if key > met_key or (key == met_key and w < middle):
                    met_key, middle = key, w
        if overflow >= 0:
            middle = -1
            break
        if middle >= 0:
            break
        first[side] = end
        depth[side] = d + 1
        volume[side] = grow
    if middle >= 0:
        if endpoints or (middle != s and middle != t):
            counts[middle] += _ONE
        for toward in range(2):
            pull_ptr, pull_idx = (in_ptr, in_idx) if toward == 0 else (out_ptr, out_idx)
            x = middle
            while level[toward, x] > 0:
                x = _race(head, 3 + toward, pull_ptr, pull_idx, x, level[toward],
                          sigma[toward], level[toward, x] - 1)
                if endpoints or level[toward, x] > 0:
                    counts[x] += _ONE
    for side in range(2):
        for i in range(size[side]):
            v = visited[side, i]
            level[side, v] = -1
            sigma[side, v] = 0.0
    return overflow


@njit(cache=True, nogil=True)
def sample_block(out_ptr, out_idx, in_ptr, in_idx, seed, lo, hi, endpoints, level, sigma,
                 visited, counts):
    """Add the counts of samples ``lo .. hi - 1`` to ``counts`` (uint64, one per vertex; the
    same in any order). Returns the first sample whose path count overflowed float64, as
    ``sample * 2 + side`` (-1: none); that sample adds nothing.

    ``level``, ``sigma`` and ``visited`` (2 x n each) are the thread's workspace, kept from
    call to call: every sample leaves them clean (levels -1, counts 0)."""
    n = out_ptr.size - 1
    overflowed = -1
    seed_head = _mix(seed)
    for i in range(lo, hi):
        head = _mix(seed_head ^ np.uint64(i))
        s = np.int64(_bits(head, 0, 0) % np.uint64(n))
        t = np.int64(_bits(head, 1, 0) % np.uint64(n - 1))
        if t >= s:
            t += 1
        side = _one_sample(head, s, t, out_ptr, out_idx, in_ptr, in_idx, level, sigma,
                           visited, counts, endpoints)
        if side >= 0 and overflowed < 0:
            overflowed = 2 * i + side
    return overflowed
