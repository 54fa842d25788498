// The layers family, first phase: the distances of a batch of sources (layers.cuh: slots, the
// bit patterns), by frontier Bellman-Ford (bcl_relax, one launch per round, driven by
// turbobc/engines/gpu/layers_distances.py), or one source per block in shared memory
// (bcl_block_distances). For unweighted BC every length is 1.0 and the rounds are the
// breadth-first levels.
//
// One round: every slot of the frontier (keys, the slots lowered in the last round) relaxes
// its out-edges, d(w) = min(d(w), d(v) + len(v, w)) in float64 (the sum the CPU engine's
// min-plus product and networkx's Dijkstra make), and records every head it lowered for the
// next round. A stale read of d(v) (lowered again by another thread during the round) only
// relaxes with a larger value: the thread that lowered it also recorded v for the next round.
// The rounds stop when a round lowers nothing and no far key waits (near-far phases, below):
// the fixed point is the least one, d(w) = min_v fl(d(v) + len(v, w)), whatever the order.
#include "layers.cuh"

namespace tbc {

// d(w) = min(d(w), dv + len(e)) for the edge e = v -> w (base: the first slot of v's row),
// the lowered slot recorded for the next round: with queued == 0 marked (marks[slot] = 1, a
// mark the host lists by a scan of all B x n marks: rounds whose frontier covers much of the
// batch), otherwise appended to the queue by the first thread to stamp it with this round's
// number (rounds with a small frontier: the scan would cost more than the frontier).
template <typename I>
__device__ __forceinline__ void relax_edge(const LayerGraph<I>& g, const RelaxState& s,
                                           const RelaxRound& r, long long base, I e,
                                           double dv) {
    const double candidate = dv + __ldg(g.len + e);
    const unsigned long long bits = (unsigned long long)__double_as_longlong(candidate);
    const long long slot = base + (long long)__ldg(g.idx + e);
    if (bits < s.dist[slot]) {  // a cheap test first: most relaxations lower nothing
        const unsigned long long old = atomicMin(s.dist + slot, bits);
        if (bits < old) {
            if (!r.queued) {
                s.marks[slot] = 1;
            } else if (atomicExch(s.stamp + slot, r.round) != r.round) {
                warp_append(s.queue, s.queue_count, slot);
            }
        }
    }
}

}  // namespace tbc

// One round over the keys. Near-far phases: a key whose distance is not below r.below is not
// relaxed now but listed in s.far (once per phase, by s.far_stamp) for the host to start the
// next phase with.
template <typename I>
__global__ void bcl_relax(tbc::LayerGraph<I> g, tbc::RelaxState s, tbc::RelaxRound r) {
    // dv, read from L2 (where the atomics of this round land: a value lowered since the round
    // began relaxes less in vain; any value read is correct, see above), or −1 for a far key:
    // listed once per phase for a later one instead of relaxed
    auto near_distance = [&](long long key) -> double {
        const double dv = __longlong_as_double((long long)__ldcg(s.dist + key));
        if (dv >= r.below) {
            if (atomicExch(s.far_stamp + key, r.phase) != r.phase) {
                tbc::warp_append(s.far, s.far_count, key);
            }
            return -1.0;
        }
        return dv;
    };
    tbc::split_by_degree(
        r.count, [&](long long i) { return tbc::wide_slot(g.ptr, g.n, __ldg(r.keys + i)); },
        [&](long long i, int lane) {
            const long long key = __ldg(r.keys + i);
            const long long v = key % g.n;
            double dv = 0.0;
            if (lane == 0) {
                dv = near_distance(key);
            }
            dv = __shfl_sync(TBC_FULL_MASK, dv, 0);
            if (dv < 0.0) {
                return;
            }
            const I end = __ldg(g.ptr + v + 1);
            for (I e = __ldg(g.ptr + v) + (I)lane; e < end; e += 32) {
                tbc::relax_edge(g, s, r, key - v, e, dv);
            }
        },
        [&](long long i) {
            const long long key = __ldg(r.keys + i);
            const long long v = key % g.n;
            const double dv = near_distance(key);
            if (dv < 0.0) {
                return;
            }
            const I end = __ldg(g.ptr + v + 1);
            for (I e = __ldg(g.ptr + v); e < end; ++e) {
                tbc::relax_edge(g, s, r, key - v, e, dv);
            }
        });
}

// ---- the distances of one source per block, in shared memory ----------------------------------
//
// For a graph whose n distances fit a block's shared memory (8 n bytes and a bit per vertex),
// each block finds one source's distances alone: Bellman-Ford without a launch or a pass over
// the batch per round. A vertex lowered is flagged (a bit per vertex); each warp takes 32 flags
// at a time, clears them and relaxes the out-edges of every vertex they held, a lane per edge;
// rounds (a barrier each) run until one lowers nothing. A vertex lowered after its flag was
// cleared is flagged again and relaxed in the same or the next round, so, as in bcl_relax,
// every lowered vertex is relaxed at its final distance and the fixed point is the least one.
// Near-far phases as in bcl_relax (width > 0; +inf: one phase): a flagged vertex at or above
// `below` is flagged again instead of relaxed, and when a round relaxes nothing below it, below
// moves to the least such distance plus the width; fewer vertices are relaxed before their
// distance is final. out gets the B x n distances (bit patterns), slot b * n + v.
template <typename I>
__global__ void bcl_block_distances(tbc::LayerGraph<I> g, const long long* __restrict__ sources,
                                    double width, unsigned long long* out) {
    extern __shared__ unsigned long long block_shared[];
    const long long n = g.n;
    unsigned long long* dist = block_shared;                    // n words
    unsigned int* flags = (unsigned int*)(block_shared + n);    // ceil(n / 32) words
    __shared__ int lowered;                  // a round lowered a distance
    __shared__ unsigned long long least_far;  // the least distance flagged at or above below
    __shared__ double below;
    const unsigned long long unreached = 0x7ff0000000000000ull;  // +inf
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const long long words = (n + 31) >> 5;
    const long long source = sources[blockIdx.x];
    for (long long v = threadIdx.x; v < n; v += blockDim.x) {
        dist[v] = unreached;
    }
    for (long long w = threadIdx.x; w < words; w += blockDim.x) {
        flags[w] = 0u;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        dist[source] = 0ull;  // +0.0
        flags[source >> 5] = 1u << (source & 31);
        below = width;
    }
    bool more = true;
    while (more) {
        __syncthreads();  // every thread has read the shared words of the round before
        if (threadIdx.x == 0) {
            lowered = 0;
            least_far = unreached;
        }
        __syncthreads();
        const double threshold = below;
        for (long long w = warp; w < words; w += warps) {
            // lane 0 takes the word's flags (an exchange only when one is set) and, after a
            // fence, reads the distance each announced; the warp gets both by shuffles
            unsigned bits = 0u;
            if (lane == 0) {
                bits = ((volatile unsigned int*)flags)[w];
                if (bits) {
                    bits = atomicExch(flags + w, 0u);
                    __threadfence_block();
                }
            }
            bits = __shfl_sync(TBC_FULL_MASK, bits, 0);
            for (; bits; bits &= bits - 1u) {
                const long long v = (w << 5) + (__ffs(bits) - 1);
                unsigned long long dv_bits = 0ull;
                if (lane == 0) {
                    dv_bits = ((volatile unsigned long long*)dist)[v];
                }
                dv_bits = __shfl_sync(TBC_FULL_MASK, dv_bits, 0);
                const double dv = __longlong_as_double((long long)dv_bits);
                if (dv >= threshold) {  // far: flagged again for a later phase
                    if (lane == 0) {
                        atomicOr(flags + w, 1u << (v & 31));
                        atomicMin(&least_far, dv_bits);
                    }
                    continue;
                }
                const I end = __ldg(g.ptr + v + 1);
                for (I e = __ldg(g.ptr + v) + (I)lane; e < end; e += 32) {
                    const unsigned long long bits_w =
                        (unsigned long long)__double_as_longlong(dv + __ldg(g.len + e));
                    const long long x = (long long)__ldg(g.idx + e);
                    if (bits_w < dist[x] && bits_w < atomicMin(dist + x, bits_w)) {
                        __threadfence_block();  // the new distance before its flag
                        atomicOr(flags + (x >> 5), 1u << (x & 31));
                        lowered = 1;
                    }
                }
            }
        }
        __syncthreads();
        // a round that lowered nothing below the threshold: the next phase starts at the
        // least far distance (above it even where adding the width rounds to nothing)
        more = lowered || least_far != unreached;
        if (!lowered && least_far != unreached) {
            __syncthreads();  // every thread has read `below` and `least_far`
            if (threadIdx.x == 0) {
                const double least = __longlong_as_double((long long)least_far);
                below = fmax(least + width,
                             nextafter(least, __longlong_as_double((long long)unreached)));
            }
        }
    }
    unsigned long long* row = out + (long long)blockIdx.x * n;
    for (long long v = threadIdx.x; v < n; v += blockDim.x) {
        row[v] = dist[v];
    }
}
