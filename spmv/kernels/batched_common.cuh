// The batched family's data layout and warp-level building blocks (the skeleton is
// batched.cuh; the levels batched_forward.cuh and batched_backward.cuh). The batched sweep (docs/algorithm.md#many-sources-per-sweep): B sources
// at once. Every per-source vector of Algorithm 1 becomes an n x B block,
// vertex-major within chunks of 32 sources: entry (v, b) sits at ((b / 32) n + v) 32 + b % 32,
// so the 32 values of a vertex in one chunk are contiguous (a warp reads them in one go) and
// each chunk's n x 32 slice is contiguous too (warps working on one chunk share the L2 cache):
//
//   level  L(v, b)   depth of v from source b; -1 not (yet) reached; LMAX: padding lane
//   sigma  σ̂(v, b)   path counts, scaled by 2^-E per (source, level) so they never overflow
//   t      t(v, b)   backward: δ(v, b) = σ̂(v, b) · t(v, b); once v's level is done it holds
//                    u(v, b) = τ(v) / σ̂(v, b) + t(v, b), what its parents read (accumulate.cuh)
//
// A *unit* u = c n + v is vertex v in chunk c (32 consecutive sources): a warp with a lane
// per source; its entries are u·32 + lane. Units are visited in that (chunk-major) order. Two
// small per-unit arrays (flag0, flag1, of the level type) keep the sweep proportional to the
// frontier: in the forward sweep flag[d % 2](unit) == d marks "some lane of this unit was
// discovered at depth d"; in the backward sweep flag0(unit) is the next depth the unit holds
// a lane at (the deepest at first, lowered each time the unit is finished), so every step
// visits exactly the units it finishes.
//
// Lane masks (two per unit, 64-bit, buffer d % 2 for depth d): the high word is a depth, the
// low word the unit's lanes at that depth; a word of another depth means "no lane". A
// neighbour test of a whole warp is then one 8-byte load per neighbour and a ballot instead
// of 32 level reads, and a chunk's masks (8 n bytes) stay in the caches. Writers: the batch's
// start (every word stale, then the sources at depth 0), forward level d when it pulls (each
// unit's own warp), a pass over the frontier units when a pull follows a push level (pushes
// leave the masks alone), and backward step d + 1 for depth d (the unit's warp). A stale
// word never needs clearing: its depth says it is stale.
//
// Headers of the family: batched_common.cuh (this: layout, context, masked sums),
// batched_forward.cuh (the forward levels and their overflow rescaling), batched_backward.cuh
// (the backward levels and the accumulator), batched.cuh (the skeleton and its policies).
#pragma once

#include "accumulate.cuh"
#include "common.cuh"
#include "views.cuh"

namespace tbcb {

using tbc::grid_sync;

// The control block and the statuses of a batch: tbc::Ctl and tbc::Status in ctl.cuh.
using tbc::Ctl;
using tbc::Status;
using tbc::FLAG0;
using tbc::OVF_LEVEL;
using tbc::EDGES0;
using tbc::STATUS;
using tbc::DEPTH;
using tbc::N_CTL;
using tbc::LEVEL_OVERFLOW;
using tbc::SHIFT_TABLE_FULL;
using tbc::WIDE_RANGE;

using tbc::warp_allsum;

// `reached` of a lane whose level spread wider than per-level scaling holds (tbc::wide_below):
// set in the forward sweep, before `reached` counts anything; the batch then stops before its
// backward sweep and the host sweeps those sources with an exponent per vertex.
constexpr unsigned long long WIDE_LANE = 1ull << 63;

// Push while the frontier's unit-edges times push_ratio (a launch argument, default
// spmv._batched.PUSH_RATIO) are fewer than all unit-edges (m · chunks). Unexplored edges are no
// measure here: a unit stays open until its last lane is reached, so on deep graphs a pull would
// scan nearly every unit at every level.

// Scans over every unit (frontier marks, next depths) test SCAN_ROUNDS x 32 units per warp
// before working through the hits, so their loads overlap instead of forming one latency chain
// per 32 units (deep graphs run thousands of levels, each a scan of n · chunks units).
#ifndef TBCB_SCAN_ROUNDS
#define TBCB_SCAN_ROUNDS 4
#endif
constexpr int SCAN_ROUNDS = TBCB_SCAN_ROUNDS;

template <typename L> __device__ __forceinline__ L level_max();
template <> __device__ __forceinline__ short level_max<short>() { return 32767; }
template <> __device__ __forceinline__ int level_max<int>() { return 2147483647; }

// Power-of-two shift that brings a level whose largest count is `largest` back to [0.5, 1)
// (frexp's exponent), or 0 when the level is within range.
__device__ __forceinline__ int shift_for(unsigned long long largest_bits) {
    const double largest = __longlong_as_double((long long)largest_bits);
    return largest > tbc::overflow_limit<double>() ? ilogb(largest) + 1 : 0;
}

template <typename I, typename L>
struct Batch {
    const I* __restrict__ in_ptr;   // CSC: column j lists the in-neighbours of j (pull forward)
    const I* __restrict__ in_idx;
    const I* __restrict__ out_ptr;  // CSR: row i lists the out-neighbours of i (push forward,
    const I* __restrict__ out_idx;  //      pull backward); the same arrays when undirected
    const I* __restrict__ erow;     // COO edges erow[k] -> ecol[k] (edge-parallel kernel only)
    const I* __restrict__ ecol;
    I n;
    I m;
    long long B;        // lanes of the batch, a multiple of 32
    long long nchunks;  // B / 32
    const I* __restrict__ sources;  // lane b < nsrc runs from sources[b]
    long long nsrc;
    L* level;
    double* sigma;
    double* t;
    L* flag0;
    L* flag1;
    unsigned long long* masks;  // 2 x units tagged lane masks, buffer d % 2 for depth d
    int* shifts;        // shifts[d * B + b]: σ(v, b) = σ̂(v, b) · 2^(Σ_{d' ≤ d} shifts)
    long long dcap;     // levels the shift table holds
    unsigned long long* maxbits;  // per lane: bits of the largest σ̂ of the level being rescaled
    unsigned long long* reached;  // per lane: vertices reached other than the source (or
                                  // WIDE_LANE, set by rescale_level)
    double* bc;
    double* edge;       // per stored edge sums (CSR positions); null: vertex sums only
    const double* __restrict__ tau;    // target weights (accumulate.cuh); null: all ones
    const double* __restrict__ omega;  // source weights (accumulate.cuh); null: all ones
    const double* __restrict__ tau_slot;  // per-slot target weights, laid out as t; null: tau
    int phase;          // PHASE_BOTH, PHASE_FORWARD or PHASE_BACKWARD (batched.cuh)
    unsigned long long* ctl;
    unsigned long long push_ratio;
    double small_count;  // 2^512 / (largest in-degree): a push of at most this cannot overflow
    bool endpoints;
    long long tid;
    long long nthreads;
    long long warp;
    long long nwarps;
    int lane;

    __device__ __forceinline__ long long units() const { return (long long)n * nchunks; }
    // Entry of vertex w for this lane, in the chunk whose first unit is `base` (= c n).
    __device__ __forceinline__ long long entry(long long base, I w) const {
        return (base + (long long)w) * 32 + lane;
    }
    __device__ __forceinline__ L* flags(int d) const { return (d & 1) ? flag1 : flag0; }
    __device__ __forceinline__ unsigned long long* masks_of(int d) const {
        return masks + (d & 1) * units();
    }
    __device__ __forceinline__ unsigned long long out_degree(I v) const {
        return (unsigned long long)(__ldg(out_ptr + v + 1) - __ldg(out_ptr + v));
    }
};

// f(w) for every w in idx[ptr[v] .. ptr[v+1]): the warp loads 32 indices at once (one per
// lane, coalesced) and broadcasts them, so each lane reads its own source's value of w.
template <typename I, typename F>
__device__ __forceinline__ void for_each_neighbour(const I* __restrict__ ptr,
                                                   const I* __restrict__ idx, I v, int lane,
                                                   F&& f) {
    const I beg = __ldg(ptr + v), end = __ldg(ptr + v + 1);
    for (I k0 = beg; k0 < end; k0 += 32) {
        const I mine = (k0 + lane < end) ? __ldg(idx + k0 + lane) : I(0);
        const int count = (end - k0 < I(32)) ? (int)(end - k0) : 32;
#pragma unroll 8
        for (int q = 0; q < count; ++q) {
            f(__shfl_sync(TBC_FULL_MASK, mine, q));
        }
    }
}

// Tagged lane mask: depth d in the high word, lanes in the low word.
__device__ __forceinline__ unsigned long long tagged(int d, unsigned lanes) {
    return ((unsigned long long)(unsigned)d << 32) | lanes;
}

// The lanes of a tagged mask if it is of depth d, else none.
__device__ __forceinline__ unsigned lanes_at(unsigned long long word, int d) {
    return (unsigned)(word >> 32) == (unsigned)d ? (unsigned)word : 0u;
}

// Lane l gets bit l of every lane's word, as a word (bit q: lane q's bit l): the 32 x 32 bit
// matrix held a row per lane, transposed by five block swaps of shuffles.
__device__ __forceinline__ unsigned transpose_bits(unsigned x, int lane) {
    const unsigned masks[5] = {0x0000FFFFu, 0x00FF00FFu, 0x0F0F0F0Fu, 0x33333333u, 0x55555555u};
#pragma unroll
    for (int k = 0, s = 16; k < 5; ++k, s >>= 1) {
        const unsigned y = __shfl_xor_sync(TBC_FULL_MASK, x, s);
        x = (lane & s) ? ((x & ~masks[k]) | ((y >> s) & masks[k]))
                       : ((x & masks[k]) | ((y & masks[k]) << s));
    }
    return x;
}

// The masked_sum of counts that are all 1 (depth 0 and 1: a source, and vertices with the
// source as their only parent): the number of neighbours of v at depth d, per wanted lane.
// No count is loaded: the 32 neighbours' masks are transposed so that each lane counts its
// own bit with one popc.
template <typename I>
__device__ __forceinline__ double masked_count(const I* __restrict__ ptr,
                                               const I* __restrict__ idx, I v, long long base,
                                               const unsigned long long* masks, int d,
                                               unsigned want, int lane) {
    unsigned long long count = 0;
    const I beg = __ldg(ptr + v), end = __ldg(ptr + v + 1);
    for (I k0 = beg; k0 < end; k0 += 32) {
        const bool valid = k0 + lane < end;
        const I mine = valid ? __ldg(idx + k0 + lane) : I(0);
        const unsigned bits = valid ? lanes_at(masks[base + mine], d) & want : 0u;
        if (__any_sync(TBC_FULL_MASK, bits != 0u)) {
            count += __popc(transpose_bits(bits, lane));
        }
    }
    return (double)count;
}


// What masked_sum does with its terms besides adding them up per lane: nothing (the forward
// sweep and vertex BC), or the edge BC sums of batched_backward.cuh (EdgeTerms), which add
// each neighbour's terms over the lanes into that stored edge. The two hooks follow the two
// forms of masked_sum: `add` and `flush` the lane-per-neighbour form, `add_pair` the
// lane-per-source form.
struct NoTerms {
    __device__ __forceinline__ void add(double, int) {}
    __device__ __forceinline__ void flush(long long) {}
    __device__ __forceinline__ void add_pair(double, double, long long, long long, int) {}
};

// Σ over the neighbours w of v (idx[ptr[v] .. ptr[v+1])) of vals(w, lane), over the lanes in
// `want` for which w is at depth d by the tagged masks: one row of A against this chunk's
// n x 32 block, masked. The warp loads 32 neighbours and their masks at once (a lane each),
// then takes whichever is fewer of
//   - the neighbours some wanted lane needs, two at a time, each lane adding its own value
//     (a lane per source), or
//   - the wanted lanes some neighbour holds, one at a time: a lane per neighbour loads that
//     source's values (one gather) and the warp adds them up (a tree), the source's lane
//     keeps the total.
// Both add the same terms; only the rounding order differs. `terms` sees every term
// (NoTerms: nothing more is done).
template <typename I, class Terms>
__device__ __forceinline__ double masked_sum(const I* __restrict__ ptr,
                                             const I* __restrict__ idx, I v, long long base,
                                             const unsigned long long* masks, int d,
                                             unsigned want, const double* vals, int lane,
                                             Terms& terms) {
    double sum = 0.0;
    const I beg = __ldg(ptr + v), end = __ldg(ptr + v + 1);
    for (I k0 = beg; k0 < end; k0 += 32) {
        const bool valid = k0 + lane < end;
        const I mine = valid ? __ldg(idx + k0 + lane) : I(0);
        const unsigned bits = valid ? lanes_at(masks[base + mine], d) & want : 0u;
        unsigned hits = __ballot_sync(TBC_FULL_MASK, bits != 0u);   // neighbours needed
        unsigned sources = __reduce_or_sync(TBC_FULL_MASK, bits);    // lanes that need one
        if (2 * __popc(sources) <= __popc(hits)) {
            while (sources) {
                const int l = __ffs(sources) - 1;
                sources &= sources - 1;
                const double x = ((bits >> l) & 1u) ? vals[(base + (long long)mine) * 32 + l]
                                                    : 0.0;
                const double total = warp_allsum(x);
                if (lane == l) {
                    sum += total;
                }
                terms.add(x, l);  // source l's term of this lane's neighbour
            }
            terms.flush((long long)k0 + lane);  // this lane's neighbour is entry k0 + lane
            continue;
        }
        while (hits) {
            const int q0 = __ffs(hits) - 1;
            hits &= hits - 1;
            const int q1 = hits ? __ffs(hits) - 1 : q0;
            hits &= hits - 1;
            const I w0 = __shfl_sync(TBC_FULL_MASK, mine, q0);
            const I w1 = __shfl_sync(TBC_FULL_MASK, mine, q1);
            const unsigned b0 = __shfl_sync(TBC_FULL_MASK, bits, q0);
            const unsigned b1 = (q1 != q0) ? __shfl_sync(TBC_FULL_MASK, bits, q1) : 0u;
            const double x0 =
                ((b0 >> lane) & 1u) ? vals[(base + (long long)w0) * 32 + lane] : 0.0;
            const double x1 =
                ((b1 >> lane) & 1u) ? vals[(base + (long long)w1) * 32 + lane] : 0.0;
            sum += x0;  // adding 0.0 to a non-negative sum changes nothing
            sum += x1;
            terms.add_pair(x0, x1, (long long)k0 + q0, (long long)k0 + q1, lane);
        }
    }
    return sum;
}

// masked_sum and nothing more.
template <typename I>
__device__ __forceinline__ double masked_sum(const I* __restrict__ ptr,
                                             const I* __restrict__ idx, I v, long long base,
                                             const unsigned long long* masks, int d,
                                             unsigned want, const double* vals, int lane) {
    NoTerms none;
    return masked_sum(ptr, idx, v, base, masks, d, want, vals, lane, none);
}

// Mark unit (v, c) as holding level d (racy writers all store the same value); count its
// unit-edges once per warp that saw it unmarked (duplicates only bias the push heuristic).
template <typename I, typename L>
__device__ __forceinline__ void mark(const Batch<I, L>& g, I v, long long base, int d,
                                     unsigned long long& edges) {
    L* next = g.flags(d) + base + v;
    const unsigned long long degree = g.out_degree(v);  // loaded alongside the flag
    if (*next != L(d)) {
        *next = L(d);
        edges += degree;
    }
}


}  // namespace tbcb
