// The forward sweep of the batched family, level by level: the three ways of computing the
// masked product F<¬Σ> = F A (dense pull, frontier push, edge-parallel), the masks a pull
// needs after a push, and the per-source power-of-two rescaling of a level's counts. The
// skeleton that chooses between them per level is forward_sweep in batched.cuh.
#pragma once

#include "batched_common.cuh"

namespace tbcb {

// One term x of a pushed sum into entry e: when e was not reached before level d, it is
// discovered at depth d and x is added to its count (F<¬Σ> += x), with an atomic whose result
// is not waited for. Returns whether it was added.
template <typename I, typename L>
__device__ __forceinline__ bool push_term(const Batch<I, L>& g, long long e, int d, double x) {
    const L seen = g.level[e];
    if (seen != L(-1) && seen != L(d)) {  // ¬σ before this level
        return false;
    }
    g.level[e] = L(d);
    atomicAdd(g.sigma + e, x);
    return true;
}

// The overflow test of pushed sums, on their terms: a sum of at most (largest in-degree)
// terms above small_count could pass the limit, so level d goes to rescale_level (which
// shifts only what really passed).
template <typename I, typename L>
__device__ __forceinline__ void flag_large_term(const Batch<I, L>& g, double x, int d) {
    if (x > g.small_count) {
        atomicMax(g.ctl + OVF_LEVEL, (unsigned long long)d);
    }
}

// σ = e_s, S(s) = 0, everything else undiscovered; t = 0; padding lanes never take part.
template <typename I, typename L>
__device__ void init_batch(const Batch<I, L>& g) {
    const L lmax = level_max<L>();
    const long long total = (long long)g.n * g.B;
    for (long long e = g.tid; e < total; e += g.nthreads) {
        const long long b = (e >> 5) / g.n * 32 + (e & 31);
        g.level[e] = (b < g.nsrc) ? L(-1) : lmax;
        g.sigma[e] = 0.0;
        g.t[e] = 0.0;
    }
    for (long long u = g.tid; u < g.units(); u += g.nthreads) {
        g.flag0[u] = L(-1);
        g.flag1[u] = L(-1);
        g.masks[u] = ~0ull;              // depth 0xffffffff: stale
        g.masks[g.units() + u] = ~0ull;
    }
    for (long long b = g.tid; b < g.B; b += g.nthreads) {
        g.maxbits[b] = 0;
        g.reached[b] = 0;
        g.shifts[b] = 0;
    }
    if (g.tid == 0) {
        for (int k = FLAG0; k < N_CTL; ++k) {
            g.ctl[k] = 0;
        }
    }
    grid_sync(g.ctl);
    unsigned long long edges = 0;
    for (long long b = g.tid; b < g.nsrc; b += g.nthreads) {
        const I s = g.sources[b];
        const long long u = (b / 32) * g.n + s;
        const long long e = u * 32 + (b & 31);
        g.level[e] = L(0);
        g.sigma[e] = 1.0;
        g.flag0[u] = L(0);
        g.masks[u] = tagged(0, 1u << (b & 31));  // sources are distinct: one lane per unit
        edges += g.out_degree(s);
    }
    if (edges) {
        atomicAdd(g.ctl + EDGES0, edges);
    }
    grid_sync(g.ctl);
}

// Forward product of level d, pulled: every unit with an undiscovered lane sums the counts of
// its in-neighbours at depth d−1.   F<¬Σ> = F A  (row form; per lane f<¬σ> = Aᵀ f)
template <typename I, typename L>
__device__ bool forward_pull(const Batch<I, L>& g, int d, unsigned long long& edges) {
    bool found = false;
    for (long long u = g.warp; u < g.units(); u += g.nwarps) {
        const long long base = u / g.n * g.n;
        const I v = (I)(u - base);
        const long long e = u * 32 + g.lane;
        const bool open = g.level[e] == L(-1);  // mask ¬σ
        const unsigned open_lanes = __ballot_sync(TBC_FULL_MASK, open);
        if (!open_lanes) {
            continue;
        }
        // f(v) = Σ over in-neighbours i at depth d−1 of σ̂(i)   (σ̂ = 1 at depths 0 and 1)
        const double sum =
            d <= 2 ? masked_count(g.in_ptr, g.in_idx, v, base, g.masks_of(d - 1), d - 1,
                                  open_lanes, g.lane)
                   : masked_sum(g.in_ptr, g.in_idx, v, base, g.masks_of(d - 1), d - 1,
                                      open_lanes, g.sigma, g.lane);
        const bool hit = open && sum > 0.0;
        if (hit) {
            // σ += f ; S<f> = d
            g.sigma[e] = sum;
            g.level[e] = L(d);
            tbc::flag_overflow(sum, d, g.ctl);
        }
        const unsigned hit_lanes = __ballot_sync(TBC_FULL_MASK, hit);
        if (hit_lanes) {
            found = true;
            if (g.lane == 0) {
                g.masks_of(d)[u] = tagged(d, hit_lanes);
                mark(g, v, base, d, edges);
            }
        }
    }
    return found;
}

// The same product pushed from the frontier units (flag == d−1): each frontier lane adds its
// count into its out-neighbours not discovered before level d (push_term; the overflow test
// is on the terms, flag_large_term). A frontier unit is worked either with a lane per source
// (its neighbours in turn) or, when it has few frontier lanes and many neighbours, with a lane
// per neighbour (its frontier lanes in turn).
template <typename I, typename L>
__device__ bool forward_push(const Batch<I, L>& g, int d, unsigned long long& edges) {
    bool found = false;
    const L* cur = g.flags(d - 1);
    const long long nunits = g.units();
    const long long stride = g.nwarps * 32;
    for (long long base0 = g.warp * 32; base0 < nunits; base0 += stride * SCAN_ROUNDS) {
      unsigned todos[SCAN_ROUNDS];
#pragma unroll
      for (int r = 0; r < SCAN_ROUNDS; ++r) {
        const long long mine = base0 + r * stride + g.lane;
        todos[r] = __ballot_sync(TBC_FULL_MASK, mine < nunits && cur[mine] == L(d - 1));
      }
#pragma unroll 1
      for (int r = 0; r < SCAN_ROUNDS; ++r) {
        const long long base = base0 + r * stride;
        unsigned todo = todos[r];
        while (todo) {
            const int bit = __ffs(todo) - 1;
            todo &= todo - 1;
            const long long u = base + bit;
            const long long first = u / g.n * g.n;
            const I i = (I)(u - first);
            const long long e = u * 32 + g.lane;
            const bool front = g.level[e] == L(d - 1);  // f(i) != 0 for this lane
            const double x = front ? g.sigma[e] : 0.0;
            flag_large_term(g, x, d);
            const unsigned front_lanes = __ballot_sync(TBC_FULL_MASK, front);
            const I beg = __ldg(g.out_ptr + i), end = __ldg(g.out_ptr + i + 1);
            if (2 * __popc(front_lanes) <= end - beg) {
                // Few sources, many neighbours (a hub reached by few of them): a lane per
                // neighbour, one source at a time, so a hub's edges go 32 at once.
                for (I k0 = beg; k0 < end; k0 += 32) {
                    const bool valid = k0 + g.lane < end;
                    const I j = valid ? __ldg(g.out_idx + k0 + g.lane) : I(0);
                    const long long first_j = (first + (long long)j) * 32;
                    bool hit = false;
                    unsigned todo = front_lanes;
                    while (todo) {
                        const int l = __ffs(todo) - 1;
                        todo &= todo - 1;
                        const double xl = __shfl_sync(TBC_FULL_MASK, x, l);
                        if (valid && push_term(g, first_j + l, d, xl)) {
                            hit = true;
                        }
                    }
                    if (hit) {
                        found = true;
                        mark(g, j, first, d, edges);
                    }
                }
                continue;
            }
            // Many sources: a lane per source, the neighbours one at a time.
            for_each_neighbour(g.out_ptr, g.out_idx, i, g.lane, [&](I j) {
                const bool hit = front && push_term(g, g.entry(first, j), d, x);
                if (__any_sync(TBC_FULL_MASK, hit)) {
                    found = true;
                    if (g.lane == 0) {
                        mark(g, j, first, d, edges);
                    }
                }
            });
        }
      }
    }
    return found;
}

// Edge-parallel forward product: a warp per (stored edge i -> j, chunk), lanes over sources,
// atomics into σ̂(j) (push_term; the batched scCOOC).
template <typename I, typename L>
__device__ bool forward_edges(const Batch<I, L>& g, int d, unsigned long long& edges) {
    bool found = false;
    const L* cur = g.flags(d - 1);
    const long long items = (long long)g.m * g.nchunks;
    for (long long it = g.warp; it < items; it += g.nwarps) {
        const long long c = it / g.m, k = it - c * g.m, base = c * g.n;
        const I i = __ldg(g.erow + k);
        if (cur[base + i] != L(d - 1)) {
            continue;  // no lane of unit (i, c) is in the frontier
        }
        const I j = __ldg(g.ecol + k);
        const long long ei = g.entry(base, i), ej = g.entry(base, j);
        bool hit = false;
        if (g.level[ei] == L(d - 1)) {
            const double x = g.sigma[ei];
            flag_large_term(g, x, d);
            hit = push_term(g, ej, d, x);
        }
        if (__any_sync(TBC_FULL_MASK, hit)) {
            found = true;
            if (g.lane == 0) {
                mark(g, j, base, d, edges);
            }
        }
    }
    return found;
}

// Tagged masks of depth d for the units discovered at level d (a push leaves them unwritten),
// for a pull at level d + 1.
template <typename I, typename L>
__device__ void build_masks(const Batch<I, L>& g, int d) {
    const L* at_d = g.flags(d);
    unsigned long long* out = g.masks_of(d);
    for (long long u = g.warp; u < g.units(); u += g.nwarps) {
        if (at_d[u] != L(d)) {
            continue;
        }
        const unsigned lanes = __ballot_sync(TBC_FULL_MASK, g.level[u * 32 + g.lane] == L(d));
        if (g.lane == 0) {
            out[u] = tagged(d, lanes);
        }
    }
}

// Rescale level d per source: σ̂<S==d>(:, b) *= 2^-shift_b with shift_b the frexp exponent of
// the largest count of source b at depth d (exact: a power of two). Records shifts[d].
template <typename I, typename L>
__device__ void rescale_level(const Batch<I, L>& g, int d) {
    const L* at_d = g.flags(d);
    for (long long u = g.warp; u < g.units(); u += g.nwarps) {
        if (at_d[u] != L(d)) {
            continue;
        }
        const long long b = u / g.n * 32 + g.lane, e = u * 32 + g.lane;
        if (g.level[e] == L(d)) {
            atomicMax(g.maxbits + b, tbc::order_bits(g.sigma[e]));
        }
    }
    grid_sync(g.ctl);
    for (long long u = g.warp; u < g.units(); u += g.nwarps) {
        if (at_d[u] != L(d)) {
            continue;
        }
        const long long b = u / g.n * 32 + g.lane, e = u * 32 + g.lane;
        const int shift = shift_for(g.maxbits[b]);
        if (shift != 0 && g.level[e] == L(d)) {
            const double scaled = scalbn(g.sigma[e], -shift);
            g.sigma[e] = scaled;
            if (scaled < tbc::wide_below<double>()) {  // every writer stores the same values
                g.reached[b] = WIDE_LANE;
                g.ctl[STATUS] = WIDE_RANGE;
            }
        }
    }
    for (long long b = g.tid; b < g.B; b += g.nthreads) {
        g.shifts[(long long)d * g.B + b] = shift_for(g.maxbits[b]);
    }
    grid_sync(g.ctl);
    for (long long b = g.tid; b < g.B; b += g.nthreads) {
        g.maxbits[b] = 0;  // read again only after at least two more barriers
    }
}


}  // namespace tbcb
