// The backward sweep of the batched family: per-unit next depths, the accumulators (what a
// finished unit adds: accumulate.cuh's step for n x 32 blocks, and for edge BC the term of
// every DAG edge), and the two ways of computing t = A u level by level (pulled over
// out-neighbours, or edge-parallel with atomics). Both walk the out-neighbours in CSR order
// (out_ptr / out_idx, or the COO rows erow expanded from it), so the position of a stored
// edge there is its position in the pattern: edge sums need no permutation.
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

// σ_{d−1} / σ_d = σ̂_{d−1} / σ̂_d · 2^-shift_d for lane b: the scale of level d's counts
// (1 past the deepest level, whose shifts are not written).
__device__ __forceinline__ double level_scale(const int* shifts, long long B, int d, int depth,
                                              long long b) {
    return d <= depth ? scalbn(1.0, -shifts[(long long)d * B + b]) : 1.0;
}

// ω of the source lane b (< nsrc) runs from (accumulate.cuh's source_weight).
template <typename I, typename L>
__device__ __forceinline__ double lane_weight(const Batch<I, L>& g, long long b) {
    return tbc::source_weight(g.omega, g.sources[b]);
}

// An accumulator policy says what the backward sweep adds up besides t = A u:
//   pull(g, v, base, d, lanes, e, mine, b, depth)
//       t(v) for the lanes of unit (v, c) at depth d − 1 (the product, masked_sum over the
//       out-neighbours at depth d), before the scale 2^-shift_d; EdgeSums also adds its edge
//       terms (entry e, lane b, mine: this lane is at depth d − 1)
//   add_child(g, k, ev, ew, child, b, d, depth)
//       the edge-parallel form, for stored edge k = v -> w of one chunk (child: w is a child
//       of v for this lane): t(v) += u(w), and EdgeSums's term of edge k
//   finish(g, v, e, mine, tv)      the lanes of unit (v, c) at depth d − 1 once t = tv
//   finish_sources(g, depth)       after the sweep
//
// VertexSums, the accumulator of vertex BC: finishes the lanes at depth d−1 of unit (v, c)
// once their t holds Σ_children u (accumulate.cuh):
//   δ = σ̂ .* t ;  bc(v) += Σ_lanes ω δ (+ω per lane with endpoints) ;  t = u = τ ./ σ̂ + t
// (ω: the weight of the lane's source) and, after the sweep, adds each source's endpoint
// term: bc(s) += ω(s) ((vertices reached) − 1).
struct VertexSums {
    // t(v) = Σ over out-neighbours w at depth d of u(w)      (t<S==d−1> = A u, one row)
    template <typename I, typename L>
    static __device__ __forceinline__ double pull(const Batch<I, L>& g, I v, long long base,
                                                  int d, unsigned lanes, long long, bool,
                                                  long long, int) {
        return masked_sum(g.out_ptr, g.out_idx, v, base, g.masks_of(d), d, lanes, g.t, g.lane);
    }

    // t(v) += u(w) for the lanes where w is a child of v       (t = A u, one entry of A)
    template <typename I, typename L>
    static __device__ __forceinline__ void add_child(const Batch<I, L>& g, long long,
                                                     long long ev, long long ew, bool child,
                                                     long long, int, int) {
        if (child) {
            atomicAdd(g.t + ev, g.t[ew]);
        }
    }

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
            g.t[e] = g.tau_slot != nullptr ? tbc::parent_share_of(g.tau_slot[e], s, tv)
                                           : tbc::parent_share(g.tau, v, s, tv);
        }
        add = warp_allsum(add);
        if (g.lane == 0 && add != 0.0) {
            atomicAdd(g.bc + v, add);
        }
    }

    template <typename I, typename L>
    static __device__ void finish_sources(const Batch<I, L>& g, int) {
        if (g.endpoints) {
            for (long long b = g.tid; b < g.nsrc; b += g.nthreads) {
                const I s = g.sources[b];
                atomicAdd(g.bc + s, tbc::source_weight(g.omega, s) * (double)g.reached[b]);
            }
        }
    }
};

// The edge terms of one unit (v, c) at step d, for masked_sum: lane l's term of edge v -> w is
// a_l · u(w, l) with a = σ̂(v) 2^-shift_d ω (0 off the unit's lanes at depth d − 1), so that
// a_l u(w, l) = σ(v)/σ(w) · (τ(w) + δ(w)) ω(s_l). Summed over the lanes of the warp first,
// then one atomicAdd per stored edge and warp.
struct EdgeTerms {
    double* edge;
    double a;           // this lane's factor
    double acc = 0.0;   // lane-per-neighbour form: the sum so far of this lane's neighbour

    // source l's term u of this lane's neighbour
    __device__ __forceinline__ void add(double u, int l) {
        acc += __shfl_sync(TBC_FULL_MASK, a, l) * u;
    }
    // this lane's neighbour (stored edge k) is done
    __device__ __forceinline__ void flush(long long k) {
        if (acc != 0.0) {
            atomicAdd(edge + k, acc);
        }
        acc = 0.0;
    }
    // lane-per-source form: this lane's u of neighbours k0 and k1 (k1 == k0: only one)
    __device__ __forceinline__ void add_pair(double u0, double u1, long long k0, long long k1,
                                             int lane) {
        const double total = tbc::warp_sum2(a * u0, a * u1, lane);  // k0 in 0-15, k1 in 16-31
        if (total != 0.0 && (lane == 0 || (lane == 16 && k1 != k0))) {
            atomicAdd(edge + (lane == 0 ? k0 : k1), total);
        }
    }
};

// The accumulator of edge BC: VertexSums, plus every edge v -> w of the shortest-path DAG
//   E<A>(v, w) += Σ_lanes ω σ̂(v) 2^-shift_d u(w)       (E<A> += Σ̂_{d−1}ᵀ U, ω-weighted)
// on each backward step d, and, after the sweep, the source's own edges (depth 1, which the
// vertex sweep never visits): E(s, w) += ω(s) 2^-shift_1 u(w) (σ̂(s) = 1).
struct EdgeSums : VertexSums {
    template <typename I, typename L>
    static __device__ __forceinline__ double pull(const Batch<I, L>& g, I v, long long base,
                                                  int d, unsigned lanes, long long e,
                                                  bool mine, long long b, int depth) {
        const double a =
            mine ? g.sigma[e] * level_scale(g.shifts, g.B, d, depth, b) * lane_weight(g, b)
                 : 0.0;
        EdgeTerms terms{g.edge, a};
        return masked_sum(g.out_ptr, g.out_idx, v, base, g.masks_of(d), d, lanes, g.t, g.lane,
                          terms);
    }

    template <typename I, typename L>
    static __device__ __forceinline__ void add_child(const Batch<I, L>& g, long long k,
                                                     long long ev, long long ew, bool child,
                                                     long long b, int d, int depth) {
        if (!__any_sync(TBC_FULL_MASK, child)) {
            return;
        }
        double term = 0.0;
        if (child) {
            const double u = g.t[ew];
            atomicAdd(g.t + ev, u);
            term = g.sigma[ev] * level_scale(g.shifts, g.B, d, depth, b) * lane_weight(g, b) * u;
        }
        term = tbc::warp_sum(term);
        if (g.lane == 0 && term != 0.0) {
            atomicAdd(g.edge + k, term);
        }
    }

    template <typename I, typename L>
    static __device__ void finish_sources(const Batch<I, L>& g, int depth) {
        VertexSums::finish_sources(g, depth);
        if (depth < 1) {
            return;
        }
        // A warp per source, a lane per out-edge: each (source, edge) term comes from one lane
        // of the batch, so it needs no sum over lanes.
        for (long long b = g.warp; b < g.nsrc; b += g.nwarps) {
            const I s = g.sources[b];
            const long long base = b / 32 * g.n;
            const double a = tbc::source_weight(g.omega, s)
                             * level_scale(g.shifts, g.B, 1, depth, b);
            const I end = __ldg(g.out_ptr + s + 1);
            for (I k = __ldg(g.out_ptr + s) + g.lane; k < end; k += 32) {
                const long long ew = (base + (long long)__ldg(g.out_idx + k)) * 32 + (b & 31);
                if (g.level[ew] == L(1)) {
                    atomicAdd(g.edge + k, a * g.t[ew]);  // t(w) holds u(w) since step 2
                }
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
                // t(v) = Σ over out-neighbours w at depth d of u(w), times 2^-shift_d
                const double sum =
                    d <= depth ? Acc::pull(g, v, base, d, mine_lanes, e, mine, b, depth) : 0.0;
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
// u(w) into t(v) with atomics (Acc::add_child), then the units at depth d − 1 are finished.
template <class Acc, typename I, typename L>
__device__ void backward_edges(const Batch<I, L>& g, int depth) {
    const long long items = (long long)g.m * g.nchunks;
    for (int d = depth + 1; d >= 2; --d) {
        if (d <= depth) {
            for (long long it = g.warp; it < items; it += g.nwarps) {
                const long long c = it / g.m, k = it - c * g.m, base = c * g.n;
                const I v = __ldg(g.erow + k);
                if (g.flag0[base + v] != L(d - 1)) {
                    continue;  // uniform: the warp's item
                }
                const I w = __ldg(g.ecol + k);
                const long long ev = g.entry(base, v), ew = g.entry(base, w);
                const bool child = g.level[ev] == L(d - 1) && g.level[ew] == L(d);
                // t = A u   (and, EdgeSums, E(v, w) += Σ_lanes ω σ̂(v) 2^-shift_d u(w))
                Acc::add_child(g, k, ev, ew, child, c * 32 + g.lane, d, depth);
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
