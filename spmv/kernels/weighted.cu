// Weighted BC on the device: the distances of a batch of sources by frontier Bellman-Ford
// (launched from turbobc/engines/gpu/weighted.py, one launch per round).
//
// dist holds the B x n float64 distances, slot b * n + v, as their bit patterns: for
// non-negative doubles (+inf included) the order of the bit patterns as unsigned 64-bit
// integers is the order of the values, so atomicMin on the pattern is a float64 min.
// Edge lengths are positive and finite (turbobc._validation), the source starts at +0.0.
//
// One round: every slot of the frontier (keys, the slots lowered in the last round) relaxes
// its out-edges, d(w) = min(d(w), d(v) + len(v, w)) in float64 (the sum the CPU engine's
// min-plus product and networkx's Dijkstra make), and records every head it lowered for the
// next round.
// A stale read of d(v) (lowered again by another thread during the round) only relaxes with
// a larger value: the thread that lowered it also recorded v for the next round. The rounds
// stop when a round lowers nothing and no far key waits (near-far phases, below): the fixed
// point is the least one, whatever the order.

// Append value to list[0 .. *count), one atomicAdd per warp: the threads that append at the
// same instruction take consecutive places after the one their leader reserved for all.
__device__ __forceinline__ void append(long long* list, unsigned long long* count,
                                       long long value) {
    const unsigned active = __activemask();
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(active) - 1;
    unsigned long long base = 0;
    if (lane == leader) {
        base = atomicAdd(count, (unsigned long long)__popc(active));
    }
    base = __shfl_sync(active, base, leader);
    list[base + __popc(active & ((1u << lane) - 1u))] = value;
}

// ---- work split: a thread per slot, a warp per slot of a wide vertex -------------------------
//
// A slot of a vertex of more than WARP_DEGREE out-edges is worked by a whole warp, a lane per
// edge (coalesced reads of idx and len, the neighbours' slots in one row of the batch); the
// others by their own thread. On ego-Facebook (mean degree 44, hubs of 1,000) a thread per
// slot leaves most lanes of a warp waiting for its hub's loop. Vertices of at most
// WARP_DEGREE out-edges are also those whose DAG edges a slot keeps in one mask word.
constexpr long long WARP_DEGREE = 32;

// Items 0 .. count − 1 a warp at a time (grid-stride over warps; blockDim.x a multiple of 32):
// lane l takes item first + l; the items for which wide(i) holds are then worked one after
// another by the whole warp, on_warp(i, lane) on every lane, and the others by their own lane,
// on_thread(i).
template <typename Wide, typename OnWarp, typename OnThread>
__device__ __forceinline__ void split_by_degree(long long count, Wide wide, OnWarp on_warp,
                                                OnThread on_thread) {
    const int lane = threadIdx.x & 31;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long first = (((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5) << 5;
         first < count; first += warps << 5) {
        const long long i = first + lane;
        const bool mine_wide = i < count && wide(i);
        for (unsigned pending = __ballot_sync(0xffffffffu, mine_wide); pending;
             pending &= pending - 1u) {
            on_warp(first + (__ffs(pending) - 1), lane);
        }
        if (i < count && !mine_wide) {
            on_thread(i);
        }
    }
}

// The sum of x over the 32 lanes, on every lane.
__device__ __forceinline__ double warp_sum(double x) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        x += __shfl_xor_sync(0xffffffffu, x, offset);
    }
    return x;
}

// Whether the vertex of slot key (key % n) has more than WARP_DEGREE out-edges.
template <typename I>
__device__ __forceinline__ bool wide_slot(const I* __restrict__ ptr, long long n, long long key) {
    const long long v = key % n;
    return (long long)(__ldg(ptr + v + 1) - __ldg(ptr + v)) > WARP_DEGREE;
}

// keys[i] = b * n + v, i < count: the slots lowered in the last round. A slot this round lowers
// is recorded for the next round in one of two ways (the host picks one per round,
// turbobc/engines/gpu/weighted.py, distances): with queued == 0, next[slot] = 1, a mark the host
// finds by a scan of all B x n marks (rounds whose frontier covers much of the batch); with
// queued != 0, the first thread to stamp it with this round's number appends it to queue
// (rounds with a small frontier: the scan would cost more than the frontier).
// Near-far phases: a key whose distance is not below `below` is not relaxed now but listed in
// far (once per phase, by far_stamp) for the host to start the next phase with.
// d(w) = min(d(w), dv + len(e)) for the edge e = v -> w (ws its slot), the lowered slot recorded
// for the next round (see bcw_relax).
template <typename I>
__device__ __forceinline__ void relax_edge(const I* __restrict__ idx,
                                           const double* __restrict__ len, long long base,
                                           I e, double dv, unsigned long long* dist,
                                           unsigned char* next, int queued, int* stamp,
                                           int round, long long* queue,
                                           unsigned long long* queue_count) {
    const double candidate = dv + __ldg(len + e);
    const unsigned long long bits = (unsigned long long)__double_as_longlong(candidate);
    const long long slot = base + (long long)__ldg(idx + e);
    if (bits < dist[slot]) {  // a cheap test first: most relaxations lower nothing
        const unsigned long long old = atomicMin(dist + slot, bits);
        if (bits < old) {
            if (!queued) {
                next[slot] = 1;
            } else if (atomicExch(stamp + slot, round) != round) {
                append(queue, queue_count, slot);
            }
        }
    }
}

template <typename I>
__global__ void bcw_relax(const I* __restrict__ ptr, const I* __restrict__ idx,
                          const double* __restrict__ len, long long n,
                          const long long* __restrict__ keys, long long count,
                          unsigned long long* dist, unsigned char* next, int queued,
                          int* stamp, int round, long long* queue,
                          unsigned long long* queue_count, double below, int* far_stamp,
                          int phase, long long* far, unsigned long long* far_count) {
    // dv, read from L2 (where the atomics of this round land: a value lowered since the round
    // began relaxes less in vain; any value read is correct, see above), or −1 for a far key:
    // listed once per phase for a later one instead of relaxed
    auto near_distance = [&](long long key) -> double {
        const double dv = __longlong_as_double((long long)__ldcg(dist + key));
        if (dv >= below) {
            if (atomicExch(far_stamp + key, phase) != phase) {
                append(far, far_count, key);
            }
            return -1.0;
        }
        return dv;
    };
    split_by_degree(
        count, [&](long long i) { return wide_slot(ptr, n, __ldg(keys + i)); },
        [&](long long i, int lane) {
            const long long key = __ldg(keys + i);
            const long long v = key % n;
            double dv = 0.0;
            if (lane == 0) {
                dv = near_distance(key);
            }
            dv = __shfl_sync(0xffffffffu, dv, 0);
            if (dv < 0.0) {
                return;
            }
            const I end = __ldg(ptr + v + 1);
            for (I e = __ldg(ptr + v) + (I)lane; e < end; e += 32) {
                relax_edge(idx, len, key - v, e, dv, dist, next, queued, stamp, round, queue,
                           queue_count);
            }
        },
        [&](long long i) {
            const long long key = __ldg(keys + i);
            const long long v = key % n;
            const double dv = near_distance(key);
            if (dv < 0.0) {
                return;
            }
            const I end = __ldg(ptr + v + 1);
            for (I e = __ldg(ptr + v); e < end; ++e) {
                relax_edge(idx, len, key - v, e, dv, dist, next, queued, stamp, round, queue,
                           queue_count);
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
// cleared is flagged again and relaxed in the same or the next round, so, as in bcw_relax,
// every lowered vertex is relaxed at its final distance and the fixed point is the least one.
// Near-far phases as in bcw_relax (width > 0; +inf: one phase): a flagged vertex at or above
// `below` is flagged again instead of relaxed, and when a round relaxes nothing below it, below
// moves to the least such distance plus the width; fewer vertices are relaxed before their
// distance is final. out gets the B x n distances (bit patterns), slot b * n + v.
template <typename I>
__global__ void bcw_block_distances(const I* __restrict__ ptr, const I* __restrict__ idx,
                                    const double* __restrict__ len, long long n,
                                    const long long* __restrict__ sources, double width,
                                    unsigned long long* out) {
    extern __shared__ unsigned long long block_shared[];
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
            bits = __shfl_sync(0xffffffffu, bits, 0);
            for (; bits; bits &= bits - 1u) {
                const long long v = (w << 5) + (__ffs(bits) - 1);
                unsigned long long dv_bits = 0ull;
                if (lane == 0) {
                    dv_bits = ((volatile unsigned long long*)dist)[v];
                }
                dv_bits = __shfl_sync(0xffffffffu, dv_bits, 0);
                const double dv = __longlong_as_double((long long)dv_bits);
                if (dv >= threshold) {  // far: flagged again for a later phase
                    if (lane == 0) {
                        atomicOr(flags + w, 1u << (v & 31));
                        atomicMin(&least_far, dv_bits);
                    }
                    continue;
                }
                const I end = __ldg(ptr + v + 1);
                for (I e = __ldg(ptr + v) + (I)lane; e < end; e += 32) {
                    const unsigned long long bits_w =
                        (unsigned long long)__double_as_longlong(dv + __ldg(len + e));
                    const long long x = (long long)__ldg(idx + e);
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

// ---- the marked slots of a round, in slot order ------------------------------------------------
//
// A marks round leaves next[slot] = 1 (a byte, 0 or 1) for every slot it lowered. Two launches
// list them in slot order and clear them, reading the marks as 16-byte words: bcw_count_marks
// counts each block's marks (a 1 byte is one set bit, so a word's count is the popcount of its
// four 32-bit parts); the host turns the counts into each block's first place (an exclusive
// prefix sum); bcw_list_marks writes the slots of every word at its place within the block (a
// prefix sum over the block's threads) and zeroes the word. Padding past B x n stays zero.
// (The index type I is unused: every kernel of this file is instantiated per index type.)

#define MARK_THREADS 256

// The exclusive prefix sum of x over the block's threads (blockDim.x == MARK_THREADS); *total
// gets the block's sum.
__device__ __forceinline__ unsigned int block_exclusive_sum(unsigned int x, unsigned int* total) {
    __shared__ unsigned int warp_sums[MARK_THREADS / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned int inclusive = x;
    for (int offset = 1; offset < 32; offset <<= 1) {
        const unsigned int up = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= offset) inclusive += up;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        unsigned int sum = lane < MARK_THREADS / 32 ? warp_sums[lane] : 0u;
        for (int offset = 1; offset < 32; offset <<= 1) {
            const unsigned int up = __shfl_up_sync(0xffffffffu, sum, offset);
            if (lane >= offset) sum += up;
        }
        if (lane < MARK_THREADS / 32) warp_sums[lane] = sum;  // inclusive over the warps
    }
    __syncthreads();
    const unsigned int before = warp == 0 ? 0u : warp_sums[warp - 1];
    *total = warp_sums[MARK_THREADS / 32 - 1];
    return before + inclusive - x;
}

__device__ __forceinline__ unsigned int marks_in(const uint4 word) {
    return __popc(word.x) + __popc(word.y) + __popc(word.z) + __popc(word.w);
}

// counts[block] = the marks of the block's MARK_THREADS words.
template <typename I>
__global__ void bcw_count_marks(const uint4* __restrict__ marks, long long words,
                                unsigned int* counts) {
    const long long w = (long long)blockIdx.x * MARK_THREADS + threadIdx.x;
    const unsigned int mine = w < words ? marks_in(marks[w]) : 0u;
    unsigned int total;
    block_exclusive_sum(mine, &total);
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// keys[first[block] + ...] = the marked slots of the block's words, in order; the words zeroed.
template <typename I>
__global__ void bcw_list_marks(uint4* marks, long long words,
                               const long long* __restrict__ first, long long* keys) {
    const long long w = (long long)blockIdx.x * MARK_THREADS + threadIdx.x;
    const uint4 word = w < words ? marks[w] : make_uint4(0u, 0u, 0u, 0u);
    const unsigned int mine = marks_in(word);
    unsigned int total;
    long long at = first[blockIdx.x] + block_exclusive_sum(mine, &total);
    if (mine == 0u) return;
    const unsigned int parts[4] = {word.x, word.y, word.z, word.w};
    for (int part = 0; part < 4; ++part) {
        for (unsigned int bits = parts[part]; bits; bits &= bits - 1u) {
            // the set bit of byte j is bit 8 j: the slot is 16 w + 4 part + j
            keys[at++] = 16 * w + 4 * part + (__ffs(bits) - 1) / 8;
        }
    }
    marks[w] = make_uint4(0u, 0u, 0u, 0u);
}

// ---- the sweep of the shortest-path DAG with plain float64 counts ------------------------------
//
// Slots b * n + v as above; dist is final (the rounds above). An edge v -> w is a DAG edge of
// lane b when dist[b n + v] + len(v, w) == dist[b n + w] (exact float64 equality, the test of the
// CPU engine and of engines/wide.py). The hop layers (Kahn's order) are lists of slots in
// `order`, layer after layer, built by bcw_forward; counts are not scaled: a lane whose counts
// reach +inf is swept again by engines/wide.py (turbobc/engines/gpu/weighted.py checks σ).

// Each slot's DAG edges as bit masks over its vertex's out-edges, written by bcw_indegree: vertex
// v has words(v) = mask_at[v + 1] − mask_at[v] 32-bit words (one for at most 32 out-edges, else
// one per 32), bit j of word k standing for edge ptr[v] + 32 k + j, and slot (b, v) has them at
// dag[b · words + mask_at[v]] (words: the words of one source). The forward and backward layers
// then read the masks instead of the distances of every neighbour.

// The first mask word of slot (b, v) = slot.
__device__ __forceinline__ long long mask_word(long long slot, long long n,
                                               const long long* __restrict__ mask_at,
                                               long long words) {
    const long long v = slot % n;
    return (slot - v) / n * words + __ldg(mask_at + v);
}

// Calls visit(e, ws) for every DAG edge e = v -> w of slot `slot` (ws = the slot of w), in CSR
// order, from its one mask word (v has at most WARP_DEGREE out-edges).
template <typename I, typename Visit>
__device__ __forceinline__ void for_dag_children(const I* __restrict__ ptr,
                                                 const I* __restrict__ idx,
                                                 const unsigned* __restrict__ mask, long long v,
                                                 long long base, Visit visit) {
    const I begin = __ldg(ptr + v);
    for (unsigned bits = __ldg(mask); bits; bits &= bits - 1u) {
        const I e = begin + (I)(__ffs(bits) - 1);
        visit(e, base + (long long)__ldg(idx + e));
    }
}

// The same for a slot of a vertex of more out-edges, on every lane of a warp: lane l visits the
// DAG edges among edges l, l + 32, ... of v, reading one mask word per 32 edges.
template <typename I, typename Visit>
__device__ __forceinline__ void for_dag_children_on_warp(const I* __restrict__ ptr,
                                                         const I* __restrict__ idx,
                                                         const unsigned* __restrict__ mask,
                                                         long long v, long long base, int lane,
                                                         Visit visit) {
    const I begin = __ldg(ptr + v), end = __ldg(ptr + v + 1);
    for (I first = begin; first < end; first += 32) {
        const unsigned word = __ldg(mask + (first - begin) / 32);
        if (word >> lane & 1u) {
            const I e = first + (I)lane;
            visit(e, base + (long long)__ldg(idx + e));
        }
    }
}

// remaining[w] = |P(w)|, the DAG parents of every slot (unreached slots: none), and every slot's
// DAG masks (all zero for an unreached slot).
template <typename I>
__global__ void bcw_indegree(const I* __restrict__ ptr, const I* __restrict__ idx,
                             const double* __restrict__ len, long long n, long long total,
                             const double* __restrict__ dist, int* remaining, unsigned* dag,
                             const long long* __restrict__ mask_at, long long words) {
    split_by_degree(
        total, [&](long long slot) { return wide_slot(ptr, n, slot); },
        [&](long long slot, int lane) {
            const long long v = slot % n;
            const long long base = slot - v;
            const double dv = __ldg(dist + slot);
            unsigned* mask = dag + mask_word(slot, n, mask_at, words);
            const I begin = __ldg(ptr + v), end = __ldg(ptr + v + 1);
            for (I first = begin; first < end; first += 32) {
                const I e = first + (I)lane;
                long long ws = 0;
                bool tight = false;
                if (e < end && !isinf(dv)) {
                    ws = base + (long long)__ldg(idx + e);
                    tight = dv + __ldg(len + e) == __ldg(dist + ws);
                }
                if (tight) {
                    atomicAdd(remaining + ws, 1);
                }
                const unsigned word = __ballot_sync(0xffffffffu, tight);
                if (lane == 0) {
                    mask[(first - begin) / 32] = word;
                }
            }
        },
        [&](long long slot) {
            const double dv = __ldg(dist + slot);
            unsigned bits = 0u;
            if (!isinf(dv)) {
                const long long v = slot % n;
                const long long base = slot - v;
                const I begin = __ldg(ptr + v), end = __ldg(ptr + v + 1);
                for (I e = begin; e < end; ++e) {
                    const long long ws = base + (long long)__ldg(idx + e);
                    if (dv + __ldg(len + e) == __ldg(dist + ws)) {
                        atomicAdd(remaining + ws, 1);
                        bits |= 1u << (unsigned)(e - begin);
                    }
                }
            }
            dag[mask_word(slot, n, mask_at, words)] = bits;
        });
}

// One hop layer forward: every slot of the layer (all of its DAG parents done, so its σ is
// final) pushes σ to its DAG children; a child whose last parent this was joins the next layer,
// as bcw_relax records a lowered slot: with queued != 0 appended to next (count), otherwise
// marked (marks[slot] = 1) for the host to list in slot order (bcw_count_marks,
// bcw_list_marks). A wide layer marks: its appends, one atomic per group of lanes on a single
// counter, took 26 of the 66 ms of ego-Facebook's weighted BC.
template <typename I>
__global__ void bcw_forward(const I* __restrict__ ptr, const I* __restrict__ idx, long long n,
                            const long long* __restrict__ layer, long long size,
                            const unsigned* __restrict__ dag,
                            const long long* __restrict__ mask_at, long long words,
                            double* sigma, int* remaining, int queued, long long* next,
                            unsigned long long* count, unsigned char* marks) {
    auto push = [&](double sv) {
        return [=](I, long long ws) {
            atomicAdd(sigma + ws, sv);  // read in a later launch: no fence needed
            if (atomicSub(remaining + ws, 1) == 1) {
                if (queued) {
                    append(next, count, ws);
                } else {
                    marks[ws] = 1;
                }
            }
        };
    };
    split_by_degree(
        size, [&](long long i) { return wide_slot(ptr, n, __ldg(layer + i)); },
        [&](long long i, int lane) {
            const long long slot = __ldg(layer + i);
            const long long v = slot % n;
            for_dag_children_on_warp(ptr, idx, dag + mask_word(slot, n, mask_at, words), v,
                                     slot - v, lane, push(sigma[slot]));
        },
        [&](long long i) {
            const long long slot = __ldg(layer + i);
            const long long v = slot % n;
            for_dag_children(ptr, idx, dag + mask_word(slot, n, mask_at, words), v, slot - v,
                             push(sigma[slot]));
        });
}

// One hop layer backward (its DAG children lie on deeper layers, all done): the accumulate step
// of accumulate.cuh, δ(v) = Σ_{DAG children w} σ(v)/σ(w) · (τ(w) + δ(w)), pulled into delta
// (τ per vertex, or with tau_per_slot per slot: tau[b n + w], the chain folding's weights);
// ω(s) of the lane multiplies what the edge sums (has_edge) get. The host adds ω-weighted δ
// into bc once the layers are done (one product over the batch instead of an atomic per slot
// on n addresses). Lanes with skip[b] (counts out of float64 range) add nothing.
template <typename I>
__global__ void bcw_backward(const I* __restrict__ ptr, const I* __restrict__ idx, long long n,
                             const long long* __restrict__ layer, long long size,
                             const unsigned* __restrict__ dag,
                             const long long* __restrict__ mask_at, long long words,
                             const double* __restrict__ sigma, double* delta,
                             const double* __restrict__ tau, int tau_per_slot,
                             const double* __restrict__ lane_weight,
                             const unsigned char* __restrict__ skip, double* edge,
                             int has_edge) {
    // the terms σ(v)/σ(w) · (τ(w) + δ(w)) of slot's DAG edges, added into acc (and, ω-weighted,
    // into the edge sums)
    auto add_term = [&](long long slot, long long base, double omega, double& acc) {
        const double sv = sigma[slot];
        return [=, &acc](I e, long long ws) {
            const double term =
                sv / sigma[ws] * (__ldg(tau + (tau_per_slot ? ws : ws - base)) + delta[ws]);
            acc += term;
            if (has_edge) {
                atomicAdd(edge + e, omega * term);
            }
        };
    };
    split_by_degree(
        size, [&](long long i) { return wide_slot(ptr, n, __ldg(layer + i)); },
        [&](long long i, int lane) {
            const long long slot = __ldg(layer + i);
            const long long b = slot / n;
            if (__ldg(skip + b)) {
                return;
            }
            const long long v = slot - b * n;
            double acc = 0.0;
            for_dag_children_on_warp(ptr, idx, dag + mask_word(slot, n, mask_at, words), v,
                                     slot - v, lane,
                                     add_term(slot, slot - v, __ldg(lane_weight + b), acc));
            acc = warp_sum(acc);
            if (lane == 0) {
                delta[slot] = acc;
            }
        },
        [&](long long i) {
            const long long slot = __ldg(layer + i);
            const long long b = slot / n;
            if (__ldg(skip + b)) {
                return;
            }
            const long long v = slot - b * n;
            double acc = 0.0;
            for_dag_children(ptr, idx, dag + mask_word(slot, n, mask_at, words), v, slot - v,
                             add_term(slot, slot - v, __ldg(lane_weight + b), acc));
            delta[slot] = acc;
        });
}

// ---- the DAG sweep of one source per block, in shared memory -----------------------------------
//
// For a graph whose distances, counts, layers and order fit a block's shared memory (24 bytes per
// vertex: two blocks share a multiprocessor up to n = 4,700), each block sweeps one source's
// shortest-path DAG alone from its final
// distances (row b of dist_all): the in-degrees, the forward hop layers in Kahn's order (a vertex
// is appended to the order when its last DAG parent is done) and the backward layers, deepest
// first, each behind a block barrier: no launch, host wait or pass over the batch per layer. A
// warp works a vertex of a layer, a lane per out-edge, and appends the children a pass of 32
// edges readies with one atomic. The DAG test (exact float64 equality), the
// counts, the accumulate step δ(v) = Σ_{DAG children w} σ(v)/σ(w) · (τ(w) + δ(w)) (τ per vertex, or
// per slot with tau_per_slot), ω and the edge sums are those of bcw_indegree, bcw_forward and
// bcw_backward. δ is kept in row b of delta_all itself (in L2; a barrier makes each layer's
// writes seen by the next), 0 at the source in the end; a count that reaches +inf sets skip[b]
// and leaves the row 0 (engines/wide.py sweeps that source again).
template <typename I>
__global__ void bcw_block_sweep(const I* __restrict__ ptr, const I* __restrict__ idx,
                                const double* __restrict__ len, long long n,
                                const long long* __restrict__ sources,
                                const double* __restrict__ dist_all,
                                const double* __restrict__ tau, int tau_per_slot,
                                const double* __restrict__ lane_weight, double* delta_all,
                                unsigned char* skip, double* edge, int has_edge) {
    extern __shared__ double sweep_shared[];
    double* dist = sweep_shared;     // n
    double* sigma = dist + n;        // n
    int* state = (int*)(sigma + n);  // n: the DAG parents not yet done, then the vertex's layer
    int* order = state + n;          // n: the reached vertices, layer after layer
    __shared__ int count, first_of_layer, layer_of_last, out_of_range;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const long long b = blockIdx.x;
    const long long source = sources[b];
    const double* row = dist_all + b * n;
    double* delta = delta_all + b * n;  // δ, in global memory
    for (long long v = threadIdx.x; v < n; v += blockDim.x) {
        dist[v] = row[v];
        sigma[v] = 0.0;
        delta[v] = 0.0;
        state[v] = 0;
    }
    if (threadIdx.x == 0) {
        count = 1;
        order[0] = (int)source;
        out_of_range = 0;
    }
    __syncthreads();
    // state[w] = |P(w)|: the DAG edges v -> w, dist[v] + len(v, w) == dist[w]
    for (long long v = warp; v < n; v += warps) {
        const double dv = dist[v];
        if (isinf(dv)) {
            continue;
        }
        const I end = __ldg(ptr + v + 1);
        for (I e = __ldg(ptr + v) + (I)lane; e < end; e += 32) {
            const long long w = (long long)__ldg(idx + e);
            if (dv + __ldg(len + e) == dist[w]) {
                atomicAdd(state + w, 1);
            }
        }
    }
    if (threadIdx.x == 0) {
        sigma[source] = 1.0;  // its layer, state 0, is 0
    }
    __syncthreads();
    // forward: σ(w) += σ(v) over the DAG edges out of each layer; a child whose last parent
    // this was joins the next layer (its state becomes its layer: no parent touches it again)
    int lo = 0, hi = 1, layer = 0;
    while (lo < hi) {
        for (int i = lo + warp; i < hi; i += warps) {
            const long long v = order[i];
            const double dv = dist[v], sv = sigma[v];
            const I begin = __ldg(ptr + v), end = __ldg(ptr + v + 1);
            for (I first = begin; first < end; first += 32) {
                const I e = first + (I)lane;
                long long w = 0;
                bool ready = false;
                if (e < end) {
                    w = (long long)__ldg(idx + e);
                    if (dv + __ldg(len + e) == dist[w]) {
                        atomicAdd(sigma + w, sv);
                        ready = atomicSub(state + w, 1) == 1;
                    }
                }
                // the children this pass of 32 edges readied, appended with one atomic on the
                // shared count
                const unsigned appending = __ballot_sync(0xffffffffu, ready);
                if (appending) {
                    const int leader = __ffs(appending) - 1;
                    int at = 0;
                    if (lane == leader) {
                        at = atomicAdd(&count, __popc(appending));
                    }
                    at = __shfl_sync(0xffffffffu, at, leader);
                    if (ready) {
                        state[w] = layer + 1;
                        order[at + __popc(appending & ((1u << lane) - 1u))] = (int)w;
                    }
                }
            }
        }
        __syncthreads();
        lo = hi;
        hi = count;
        ++layer;
        __syncthreads();  // every thread has read count before the next layer appends
    }
    for (int i = threadIdx.x; i < hi; i += blockDim.x) {
        if (isinf(sigma[order[i]])) {
            out_of_range = 1;
        }
    }
    __syncthreads();
    if (out_of_range) {  // the row (all 0) waits for the exponent sweep
        if (threadIdx.x == 0) {
            skip[b] = 1;
        }
        return;
    }
    // backward, deepest layer first: δ(v) pulled from v's DAG children (on deeper layers, done);
    // the source's layer only feeds its edges
    const double omega = lane_weight[b];
    const double* tau_row = tau + (tau_per_slot ? b * n : 0);
    const int last = has_edge ? 0 : 1;
    while (hi > 0) {
        if (threadIdx.x == 0) {
            // the layer of order[hi − 1] and its first place (the layers are contiguous)
            const int d = state[order[hi - 1]];
            int a = 0, z = hi - 1;
            while (a < z) {
                const int mid = (a + z) / 2;
                if (state[order[mid]] < d) {
                    a = mid + 1;
                } else {
                    z = mid;
                }
            }
            first_of_layer = a;
            layer_of_last = d;
        }
        __syncthreads();
        const int from = first_of_layer;
        if (layer_of_last < last) {
            break;
        }
        for (int i = from + warp; i < hi; i += warps) {
            const long long v = order[i];
            const double dv = dist[v], sv = sigma[v];
            double acc = 0.0;
            const I end = __ldg(ptr + v + 1);
            for (I e = __ldg(ptr + v) + (I)lane; e < end; e += 32) {
                const long long w = (long long)__ldg(idx + e);
                if (dv + __ldg(len + e) == dist[w]) {
                    const double term = sv / sigma[w] * (__ldg(tau_row + w) + delta[w]);
                    acc += term;
                    if (has_edge) {
                        atomicAdd(edge + e, omega * term);
                    }
                }
            }
            acc = warp_sum(acc);
            if (lane == 0) {
                delta[v] = acc;
            }
        }
        __syncthreads();  // this layer's δ before the next one's reads (and first_of_layer)
        hi = from;
    }
    if (threadIdx.x == 0) {
        delta[source] = 0.0;  // (its layer fed only the edge sums)
    }
}
