// The backward sweep of the batched family: per-unit next depths, the accumulator that
// finishes a unit (accumulate.cuh's step for n x 32 blocks), and the two ways of computing
// t = A u level by level (pulled over out-neighbours, or edge-parallel with atomics).
#pragma once

#include "batched_common.cuh"

namespace tbcb {

// flag0 of every unit: the greatest depth ≥ 1 of its lanes (0: none), where the backward
// sweep first finishes it; and per lane, the number of vertices its source reached (for
// endpoints).
template <typename I, typename L>
__device__ void summarize_levels(const Batch<I, L>& g) {
    const L lmax = level_max<L>();
    unsigned long long count = 0;
    long long chunk = -1;
    for (long long u = g.warp; u < g.units(); u += g.nwarps) {
        const long long c = u / g.n;
        const L lv = g.level[u * 32 + g.lane];
        const bool in = lv >= L(1) && lv != lmax;
        const int deepest = __reduce_max_sync(TBC_FULL_MASK, in ? (int)lv : 0);
        if (g.lane == 0) {
            g.flag0[u] = L(deepest);
        }
        if (g.endpoints) {
            if (c != chunk) {
                if (count) {
                    atomicAdd(g.reached + chunk * 32 + g.lane, count);
                }
                chunk = c;
                count = 0;
            }
            count += in ? 1 : 0;
        }
    }
    if (g.endpoints && count) {
        atomicAdd(g.reached + chunk * 32 + g.lane, count);
    }
}

// The accumulator of vertex BC: finishes the lanes at depth d−1 of unit (v, c) once their t
// holds Σ_children u (accumulate.cuh):
//   δ = σ̂ .* t ;  bc(v) += Σ_lanes ω δ (+ω per lane with endpoints) ;  t = u = τ ./ σ̂ + t
// (ω: the weight of the lane's source) and, after the sweep, adds each source's endpoint
// term: bc(s) += ω(s) ((vertices reached) − 1).
struct VertexSums {
    template <typename I, typename L>
    static __device__ __forceinline__ void finish(const Batch<I, L>& g, long long v,
                                                  long long e, bool mine, double tv) {
        double add = 0.0;
        if (mine) {
            const double s = g.sigma[e];
            add = tbc::dependency_term(s, tv, g.endpoints);
            if (g.omega != nullptr) {  // lane e & 31 of chunk (e / 32) / n runs this source
                add *= __ldg(g.omega + g.sources[(e >> 5) / g.n * 32 + (e & 31)]);
            }
            g.t[e] = tbc::parent_share(g.tau, v, s, tv);
        }
        add = warp_allsum(add);
        if (g.lane == 0 && add != 0.0) {
            atomicAdd(g.bc + v, add);
        }
    }

    template <typename I, typename L>
    static __device__ void finish_sources(const Batch<I, L>& g) {
        if (g.endpoints) {
            for (long long b = g.tid; b < g.nsrc; b += g.nthreads) {
                const I s = g.sources[b];
                atomicAdd(g.bc + s, tbc::source_weight(g.omega, s) * (double)g.reached[b]);
            }
        }
    }
};

// After finishing the lanes of a unit at depth d − 1 (lv: this lane's depth): the next depth
// below d − 1 at which it holds a lane, 0 when none, into flag0.
template <typename I, typename L>
__device__ __forceinline__ void lower_next_depth(const Batch<I, L>& g, long long u, L lv,
                                                 int d) {
    const bool below = lv >= L(1) && (int)lv < d - 1;  // padding lanes hold LMAX: never below
    const int next = __reduce_max_sync(TBC_FULL_MASK, below ? (int)lv : 0);
    if (g.lane == 0) {
        g.flag0[u] = L(next);
    }
}

__device__ __forceinline__ double level_scale(const int* shifts, long long B, int d, int depth,
                                              long long b) {
    return d <= depth ? scalbn(1.0, -shifts[(long long)d * B + b]) : 1.0;
}

// Backward sweep pulled over out-neighbours, d from depth + 1 down to 2 (level 1 only feeds
// the source). Skip = true visits only the units whose next depth (flag0) is d − 1.
//   u<S==d> = (τ + δ) ./ σ ;  T<S==d−1> = U Aᵀ ;  δ<S==d−1> = t .* σ   (Acc finishes units)
template <bool Skip, class Acc, typename I, typename L>
__device__ void backward_pull(const Batch<I, L>& g, int depth) {
    const long long nunits = g.units();
    for (int d = depth + 1; d >= 2; --d) {
        // Warp w owns units w, w + nwarps, w + 2 nwarps, ... (round robin balances hubs); it
        // tests 32 of them at once (one per lane) and works through the ones whose next depth
        // is d − 1, all lanes on each.
        for (long long round0 = 0; round0 * g.nwarps + g.warp < nunits;
             round0 += 32 * SCAN_ROUNDS) {
          unsigned todos[SCAN_ROUNDS];
#pragma unroll
          for (int r = 0; r < SCAN_ROUNDS; ++r) {
            const long long mine_u = (round0 + 32 * r + g.lane) * g.nwarps + g.warp;
            const bool wanted = mine_u < nunits && (!Skip || g.flag0[mine_u] == L(d - 1));
            todos[r] = __ballot_sync(TBC_FULL_MASK, wanted);
          }
#pragma unroll 1
          for (int r = 0; r < SCAN_ROUNDS; ++r) {
            const long long round = round0 + 32 * r;
            unsigned todo = todos[r];
            while (todo) {
                const long long u = (round + __ffs(todo) - 1) * g.nwarps + g.warp;
                todo &= todo - 1;
                const long long base = u / g.n * g.n, b = u / g.n * 32 + g.lane;
                const I v = (I)(u - base);
                const long long e = u * 32 + g.lane;
                const L lv = g.level[e];
                const bool mine = lv == L(d - 1);
                const unsigned mine_lanes = __ballot_sync(TBC_FULL_MASK, mine);
                if (!mine_lanes) {
                    continue;
                }
                // t(v) = Σ over out-neighbours w at depth d of u(w)
                const double sum =
                    d <= depth ? masked_sum(g.out_ptr, g.out_idx, v, base, g.masks_of(d), d,
                                            mine_lanes, g.t, g.lane)
                               : 0.0;
                Acc::finish(g, v, e, mine, sum * level_scale(g.shifts, g.B, d, depth, b));
                if (g.lane == 0) {
                    g.masks_of(d - 1)[u] = tagged(d - 1, mine_lanes);  // for step d − 1
                }
                if (Skip) {
                    lower_next_depth(g, u, lv, d);
                }
            }
          }
        }
        grid_sync(g.ctl);
    }
}

// Backward sweep edge-parallel (the batched scCOOC): a warp per (edge v -> w, chunk) adds
// u(w) into t(v) with atomics, then the units at depth d − 1 are finished.
template <class Acc, typename I, typename L>
__device__ void backward_edges(const Batch<I, L>& g, int depth) {
    const long long items = (long long)g.m * g.nchunks;
    for (int d = depth + 1; d >= 2; --d) {
        if (d <= depth) {
            for (long long it = g.warp; it < items; it += g.nwarps) {
                const long long c = it / g.m, k = it - c * g.m, base = c * g.n;
                const I v = __ldg(g.erow + k);
                if (g.flag0[base + v] != L(d - 1)) {
                    continue;
                }
                const I w = __ldg(g.ecol + k);
                const long long ev = g.entry(base, v), ew = g.entry(base, w);
                if (g.level[ev] == L(d - 1) && g.level[ew] == L(d)) {
                    atomicAdd(g.t + ev, g.t[ew]);  // t = A u
                }
            }
            grid_sync(g.ctl);
        }
        for (long long u = g.warp; u < g.units(); u += g.nwarps) {
            if (g.flag0[u] != L(d - 1)) {
                continue;
            }
            const long long v = u % g.n, b = u / g.n * 32 + g.lane, e = u * 32 + g.lane;
            const L lv = g.level[e];
            const bool mine = lv == L(d - 1);
            const double tv = mine ? g.t[e] : 0.0;
            Acc::finish(g, v, e, mine, tv * level_scale(g.shifts, g.B, d, depth, b));
            lower_next_depth(g, u, lv, d);
        }
        grid_sync(g.ctl);
    }
}


}  // namespace tbcb
