// Shared pieces of the batched BC sweep (docs/algorithm.md#many-sources-per-sweep): B sources
// at once. Every per-source vector of Algorithm 1 becomes an n x B block,
// vertex-major within chunks of 32 sources: entry (v, b) sits at ((b / 32) n + v) 32 + b % 32,
// so the 32 values of a vertex in one chunk are contiguous (a warp reads them in one go) and
// each chunk's n x 32 slice is contiguous too (warps working on one chunk share the L2 cache):
//
//   level  L(v, b)   depth of v from source b; -1 not (yet) reached; LMAX: padding lane
//   sigma  σ̂(v, b)   path counts, scaled by 2^-E per (source, level) so they never overflow
//   t      t(v, b)   backward: δ(v, b) = σ̂(v, b) · t(v, b); once v's level is done it holds
//                    u(v, b) = 1 / σ̂(v, b) + t(v, b), what its parents read
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
// The whole batch (forward levels, overflow rescaling, backward levels, the bc update) is one
// persistent launch; levels are separated by the software grid barrier of sweep.cuh.
#pragma once

#include "sweep.cuh"

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

// Sum of a double over the warp, result in every lane.
__device__ __forceinline__ double warp_allsum(double x) {
    for (int off = 16; off > 0; off >>= 1) {
        x += __shfl_xor_sync(TBC_FULL_MASK, x, off);
    }
    return x;
}

// Σ over the neighbours w of v (idx[ptr[v] .. ptr[v+1])) of vals(w, lane), over the lanes in
// `want` for which w is at depth d by the tagged masks: one row of A against this chunk's
// n x 32 block, masked. The warp loads 32 neighbours and their masks at once (a lane each),
// then takes whichever is fewer of
//   - the neighbours some wanted lane needs, two at a time, each lane adding its own value
//     (a lane per source), or
//   - the wanted lanes some neighbour holds, one at a time: a lane per neighbour loads that
//     source's values (one gather) and the warp adds them up (a tree), the source's lane
//     keeps the total.
// Both add the same terms; only the rounding order differs.
template <typename I>
__device__ __forceinline__ double masked_sum(const I* __restrict__ ptr,
                                             const I* __restrict__ idx, I v, long long base,
                                             const unsigned long long* masks, int d,
                                             unsigned want, const double* vals, int lane) {
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
            }
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
        }
    }
    return sum;
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

// Forward sweep, one level per barrier. Returns the deepest non-empty level, or -1 when the
// batch must be rerun (ctl[STATUS] says why).
template <int Mode, typename I, typename L>
__device__ int forward_sweep(const Batch<I, L>& g) {
    const unsigned long long total = (unsigned long long)g.m * (unsigned long long)g.nchunks;
    int d = 0;
    bool pushed = false;  // the last level pushed: its masks are not written (uniform)
    while (true) {
        ++d;
        if (d >= (int)level_max<L>() - 1 || (long long)d >= g.dcap) {
            if (g.tid == 0) {
                g.ctl[STATUS] = (d >= (int)level_max<L>() - 1) ? LEVEL_OVERFLOW
                                                                : SHIFT_TABLE_FULL;
            }
            return -1;  // uniform: every thread sees the same d
        }
        const unsigned long long frontier = tbc::load_cg(g.ctl + EDGES0 + (d - 1) % 3);
        // F<¬Σ> = F A ; Σ += F ; S<F> = d        (F = Σ̂<S == d−1>)
        unsigned long long edges = 0;
        bool found;
        if (Mode == 2) {
            found = forward_edges(g, d, edges);
        } else if (Mode == 1 && frontier * g.push_ratio < total) {
            found = forward_push(g, d, edges);
            pushed = true;
        } else {
            if (pushed) {
                build_masks(g, d - 1);
                grid_sync(g.ctl);
                pushed = false;
            }
            found = forward_pull(g, d, edges);
        }
        const bool any_found = __any_sync(TBC_FULL_MASK, found);
        edges = tbc::warp_sum(edges);
        if (g.lane == 0 && any_found) {
            g.ctl[FLAG0 + d % 3] = 1;
            if (edges) {
                atomicAdd(g.ctl + EDGES0 + d % 3, edges);
            }
        }
        if (g.tid == 0) {
            g.ctl[FLAG0 + (d + 1) % 3] = 0;  // last read after barrier d − 2: free again
            g.ctl[EDGES0 + (d + 1) % 3] = 0;
        }
        grid_sync(g.ctl);
        if (tbc::load_cg(g.ctl + FLAG0 + d % 3) == 0) {
            break;  // F == 0
        }
        if ((int)tbc::load_cg(g.ctl + OVF_LEVEL) == d) {
            rescale_level(g, d);
        } else {
            for (long long b = g.tid; b < g.B; b += g.nthreads) {
                g.shifts[(long long)d * g.B + b] = 0;
            }
        }
    }
    if (tbc::load_cg(g.ctl + STATUS) == WIDE_RANGE) {
        return -1;  // uniform: written before rescale_level's barriers
    }
    return d - 1;
}

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

// Finish lanes at depth d−1 of unit (v, c) once their t holds Σ_children u:
//   δ = σ̂ .* t ; bc += δ (+1 with endpoints) ; u = 1 ./ σ̂ + t for the parents.
template <typename I, typename L>
__device__ __forceinline__ void finish_unit(const Batch<I, L>& g, long long v, long long e,
                                            bool mine, double tv) {
    double add = 0.0;
    if (mine) {
        const double s = g.sigma[e];
        add = s * tv + (g.endpoints ? 1.0 : 0.0);
        g.t[e] = 1.0 / s + tv;
    }
    add = warp_allsum(add);
    if (g.lane == 0 && add != 0.0) {
        atomicAdd(g.bc + v, add);
    }
}

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
//   u<S==d> = (1 + δ) ./ σ ;  T<S==d−1> = U Aᵀ ;  δ<S==d−1> += t .* σ
template <bool Skip, typename I, typename L>
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
                finish_unit(g, v, e, mine, sum * level_scale(g.shifts, g.B, d, depth, b));
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
template <typename I, typename L>
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
            finish_unit(g, v, e, mine, tv * level_scale(g.shifts, g.B, d, depth, b));
            lower_next_depth(g, u, lv, d);
        }
        grid_sync(g.ctl);
    }
}

// The whole of Algorithm 1 for one batch. Mode 0: pull (batched scCSC), 1: push/pull with
// frontier units (batched veCSC), 2: edge-parallel (batched scCOOC).
template <int Mode, typename I, typename L>
__device__ void run_batch(Batch<I, L>& g) {
    init_batch(g);
    const int depth = forward_sweep<Mode>(g);
    if (depth < 0) {
        return;
    }
    if (g.tid == 0) {
        g.ctl[DEPTH] = (unsigned long long)depth;
    }
    summarize_levels(g);
    grid_sync(g.ctl);
    if (Mode == 2) {
        backward_edges(g, depth);
    } else {
        backward_pull<Mode == 1>(g, depth);
    }
    // endpoints: bc[s] += (vertices reached from s) − 1
    if (g.endpoints) {
        for (long long b = g.tid; b < g.nsrc; b += g.nthreads) {
            atomicAdd(g.bc + g.sources[b], (double)g.reached[b]);
        }
    }
}

}  // namespace tbcb

#define TBCB_KERNEL(NAME, MODE, LEVEL)                                                          \
    template <typename I>                                                                       \
    __global__ void __launch_bounds__(256, 6)                                                   \
    NAME(const I* __restrict__ in_ptr, const I* __restrict__ in_idx,                            \
         const I* __restrict__ out_ptr, const I* __restrict__ out_idx,                          \
         const I* __restrict__ erow, const I* __restrict__ ecol, I n, I m, long long B,         \
         const I* __restrict__ sources, long long nsrc, LEVEL* level, double* sigma, double* t, \
         LEVEL* flag0, LEVEL* flag1, unsigned long long* masks, int* shifts, long long dcap,    \
         unsigned long long* maxbits, unsigned long long* reached, double* bc,                  \
         unsigned long long* ctl,                                                               \
         unsigned long long push_ratio, double small_count, int endpoints) {                   \
        const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;                 \
        const long long nthreads = (long long)gridDim.x * blockDim.x;                           \
        tbcb::Batch<I, LEVEL> g{in_ptr, in_idx, out_ptr, out_idx, erow, ecol, n, m, B, B / 32,  \
                                sources, nsrc, level, sigma, t, flag0, flag1, masks, shifts,   \
                                dcap, maxbits, reached, bc, ctl, push_ratio, small_count,      \
                                endpoints != 0,                                                 \
                                tid, nthreads,                                                  \
                                tid >> 5, nthreads >> 5, (int)(threadIdx.x & 31)};              \
        tbcb::run_batch<MODE>(g);                                                               \
    }
