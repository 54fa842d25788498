// Approximate BC by sampling shortest paths (turbobc/_pairs.py, docs/approximate.md,
// "Sampling pairs"; launched by spmv/_pairs.py for turbobc/engines/gpu/pairs.py; its arguments are the structs
// PairGraph, PairWork and PairRun of views.cuh).
//
// Sample i draws an ordered pair (s, t), s != t, from (seed, i) alone, finds the s-t shortest
// paths by a balanced bidirectional BFS (KADABRA's: the side whose frontier has fewer edges
// out of it grows by one level) and picks one of those paths uniformly at random; every vertex
// on it strictly between s and t (and s and t too with endpoints) gets one count. A block
// takes the next sample of first .. first + count - 1 from the counter *taken (zero at the
// launch) when it is done with one, and has its own workspace (levels, path counts and visit
// order of both sides); it leaves the workspace clean (-1 and 0) after each sample, touching
// only what the sample visited.
//
// A level is grown in two passes over the frontier's edges: a probe (reads only) for a vertex
// the other side has seen, then the discovery, which on the level that meets (the last, and
// on a small-world graph the largest) keeps only those vertices, the middle layer. The probe
// pays only while the frontier is a large share of the edges swept so far (a small-world
// graph's growth); on a deep graph (roads, meshes: hundreds of levels, each a sliver of the
// work) the discovery goes alone and notes the meeting itself, and the new vertices the other
// side has not seen are ignored on the last level (PAIR_PROBE_SHARE).
//
// Every random choice is a function of (seed, sample, what is chosen), never of the order in
// which threads run, and path counts are sums of integers, exact in float64 below 2^53 in any
// order, so the counts are the same whatever the grid, the block size or the GPU while every
// path count stays below 2^53 (status bit 1 says when one did not); turbobc/_pairs.py
// reproduces them on the host. (Pulling the counts in a fixed order instead, each new vertex
// summing over its in-edges, read the whole adjacency of the level just found: on kron20 that
// is most of the graph, 0.95 ms per sample against NetworKit's KADABRA's 1.0 on 16 threads.) The choices are exponential races: among candidates c with
// weights w_c, the one with the largest log(u_c) / w_c, u_c uniform in (0, 1), has probability
// w_c / sum(w); ties go to the smaller vertex.
//
// status |= 1: some path count passed 2^53 (no longer an exact integer; still the same bits
// everywhere); status |= 2: a count overflowed to infinity (the caller samples otherwise).

#include "views.cuh"

typedef unsigned long long u64;

// -infinity, without math.h (NVRTC as CuPy runs it has no INFINITY)
#define PAIR_NO_KEY __longlong_as_double((long long)0xfff0000000000000ull)

__device__ __forceinline__ u64 pair_mix(u64 z) {  // splitmix64's finalizer
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// 64 random bits for (seed, sample, salt, v); salt 0 and 1: s and t, 2: the middle vertex,
// 3: a step towards s, 4: a step towards t.
__device__ __forceinline__ u64 pair_bits(u64 seed, u64 sample, u64 salt, u64 v) {
    return pair_mix(pair_mix(pair_mix(seed) ^ sample) ^ (v * 8ull + salt));
}

// The race key log(u) / weight, u = (2 floor(bits / 2^12) + 1) / 2^53 in (0, 1).
__device__ __forceinline__ double race_key(u64 bits, double weight) {
    const double u = (double)(2ull * (bits >> 12) + 1ull) * 0x1.0p-53;
    return log(u) / weight;
}

// (key, vertex) a is better than b: a larger key, or the same key and a smaller vertex.
__device__ __forceinline__ bool better(double ka, long long va, double kb, long long vb) {
    return ka > kb || (ka == kb && va < vb && va >= 0) || vb < 0;
}

// The block's best (key, vertex) of every thread's; vertex -1 when no thread has one.
// Needs blockDim.x a multiple of 32, at most 1024; every thread gets the result.
__device__ void block_best(double& key, long long& vertex) {
    __shared__ double keys[32];
    __shared__ long long vertices[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int offset = 16; offset > 0; offset >>= 1) {
        const double k = __shfl_xor_sync(0xffffffffu, key, offset);
        const long long v = __shfl_xor_sync(0xffffffffu, vertex, offset);
        if (better(k, v, key, vertex)) {
            key = k;
            vertex = v;
        }
    }
    __syncthreads();  // keys[] may still be read by the last call
    if (lane == 0) {
        keys[warp] = key;
        vertices[warp] = vertex;
    }
    __syncthreads();
    key = PAIR_NO_KEY;
    vertex = -1;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
        if (better(keys[w], vertices[w], key, vertex)) {
            key = keys[w];
            vertex = vertices[w];
        }
    }
}

// One step of the walk from x towards the root of a side: among the neighbours y of x in
// (p, q) one level nearer the root, the race on weights sigma[y]. Every thread gets it.
template <typename I>
__device__ long long walk_step(const I* __restrict__ p, const I* __restrict__ q,
                               const int* level, const double* sigma, long long x, u64 seed,
                               u64 sample, u64 salt) {
    const int want = level[x] - 1;
    double key = PAIR_NO_KEY;
    long long best = -1;
    // e in long long: a step of blockDim.x (256) past an int32 list's end near 2^31 - 64 would
    // wrap (the other loops step by 32 and stay inside INT32_LIMIT's margin)
    for (long long e = (long long)p[x] + threadIdx.x; e < (long long)p[x + 1]; e += blockDim.x) {
        const long long y = (long long)q[e];
        if (level[y] == want) {
            const double k = race_key(pair_bits(seed, sample, salt, (u64)y), sigma[y]);
            if (better(k, y, key, best)) {
                key = k;
                best = y;
            }
        }
    }
    block_best(key, best);
    return best;
}

// A frontier vertex with more edges than this is grown by the whole block, not one warp
// (a hub of a small-world graph would keep one warp busy while the others wait).
#define PAIR_BIG_DEGREE 256
#define PAIR_BIG_SLOTS 256  // big vertices per level listed for the block; the rest: warps

// The probe runs while the frontier's edges times this exceed the edges swept before it.
#define PAIR_PROBE_SHARE 4

// op(u, w) for every edge u -> w of (p, q) out of the frontier order[lo .. hi): vertices of
// small degree a warp each, the big ones (up to PAIR_BIG_SLOTS of them) after, each by all
// threads. Stops early (between vertices) once *stop is set, when stop is not null. Every
// thread of the block must call it; it ends with the block synchronized.
template <typename I, typename Op>
__device__ void each_frontier_edge(const I* order, long long lo, long long hi,
                                   const I* __restrict__ p, const I* __restrict__ q,
                                   const volatile int* stop, Op op) {
    __shared__ long long big[PAIR_BIG_SLOTS];
    __shared__ int bigs;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    if (threadIdx.x == 0) {
        bigs = 0;
    }
    __syncthreads();
    for (long long f = lo + warp; f < hi; f += warps) {
        // (lane 0's view of the flag for the whole warp: the shuffle below needs all lanes)
        if (stop && __shfl_sync(0xffffffffu, (int)*stop, 0)) {
            break;
        }
        const long long u = (long long)order[f];
        const I begin = p[u], end = p[u + 1];
        if (end - begin > PAIR_BIG_DEGREE) {
            int slot = 0;
            if (lane == 0) {
                slot = atomicAdd(&bigs, 1);
            }
            slot = __shfl_sync(0xffffffffu, slot, 0);
            if (slot < PAIR_BIG_SLOTS) {
                if (lane == 0) {
                    big[slot] = u;
                }
                continue;
            }
        }
        for (I e = begin + lane; e < end; e += 32) {
            op(u, (long long)q[e]);
        }
    }
    __syncthreads();
    const int listed = bigs < PAIR_BIG_SLOTS ? bigs : PAIR_BIG_SLOTS;
    for (int b = 0; b < listed && !(stop && *stop); ++b) {
        const long long u = big[b];
        for (long long e = (long long)p[u] + threadIdx.x; e < (long long)p[u + 1];
             e += blockDim.x) {  // long long: see walk_step
            op(u, (long long)q[e]);
        }
    }
    __syncthreads();
}

// ptr/idx: the out-edges (CSR); rptr/ridx: the in-edges (the CSR of the transpose; the same
// arrays for an undirected graph). level, sigma, order: 2 n entries per block (side 0 grows
// from s along out-edges, side 1 from t along in-edges), level -1 and sigma 0 on entry.
// PAIR_THREADS: the block size of every launch (turbobc/engines/gpu/pairs.py, PAIR_BLOCK);
// PAIR_MIN_BLOCKS: the blocks each SM must hold at once, which caps the registers per thread
// (65,536 / (PAIR_THREADS * PAIR_MIN_BLOCKS)); the samples are latency-bound, so more blocks in
// flight hide more of it: 6 (40 registers, some spilled) took 275 us a sample on road1000
// against 519 with the compiler's 118 registers (2 blocks), H100 (bench/pairs_occupancy.py).
#ifndef PAIR_THREADS
#define PAIR_THREADS 256
#endif
#ifndef PAIR_MIN_BLOCKS
#define PAIR_MIN_BLOCKS 6
#endif

template <typename I>
__global__ void __launch_bounds__(PAIR_THREADS, PAIR_MIN_BLOCKS)
bcp_sample(tbc::PairGraph<I> graph, tbc::PairWork<I> work, tbc::PairRun run) {
    const I* __restrict__ ptr = graph.ptr;
    const I* __restrict__ idx = graph.idx;
    const I* __restrict__ rptr = graph.rptr;
    const I* __restrict__ ridx = graph.ridx;
    const long long n = graph.n;
    const u64 seed = run.seed;
    const long long first = run.first, count = run.count;
    const int endpoints = run.endpoints;
    int* levels = work.levels;
    double* sigmas = work.sigmas;
    I* orders = work.orders;
    u64* counts = work.counts;
    int* status = work.status;
    u64* taken = work.taken;
    __shared__ long long lo[2], hi[2], current;
    __shared__ unsigned long long tail[2], volume[2], grown, swept;
    __shared__ int depth[2], found;
    int* level[2] = {levels + (long long)blockIdx.x * 2 * n,
                     levels + (long long)blockIdx.x * 2 * n + n};
    double* sigma[2] = {sigmas + (long long)blockIdx.x * 2 * n,
                        sigmas + (long long)blockIdx.x * 2 * n + n};
    I* order[2] = {orders + (long long)blockIdx.x * 2 * n,
                   orders + (long long)blockIdx.x * 2 * n + n};
    const I* grow_p[2] = {ptr, rptr};   // side 0 grows along out-edges, side 1 along in-edges
    const I* grow_q[2] = {idx, ridx};
    const I* pull_p[2] = {rptr, ptr};   // a vertex's parents: the edges into it
    const I* pull_q[2] = {ridx, idx};

    while (true) {
        if (threadIdx.x == 0) {
            current = first + (long long)atomicAdd(taken, 1ull);
        }
        __syncthreads();
        const long long sample = current;
        if (sample >= first + count) {
            break;
        }
        const long long s = (long long)(pair_bits(seed, (u64)sample, 0, 0) % (u64)n);
        long long t = (long long)(pair_bits(seed, (u64)sample, 1, 0) % (u64)(n - 1));
        t += (t >= s);
        if (threadIdx.x == 0) {
            const long long root[2] = {s, t};
            for (int side = 0; side < 2; ++side) {
                const long long r = root[side];
                level[side][r] = 0;
                sigma[side][r] = 1.0;
                order[side][0] = (I)r;
                lo[side] = 0;
                hi[side] = tail[side] = 1;
                depth[side] = 0;
                volume[side] = (u64)(grow_p[side][r + 1] - grow_p[side][r]);
            }
            found = 0;
            swept = 0;
        }
        __syncthreads();
        long long middle = -1;
        while (true) {
            const int side = volume[0] <= volume[1] ? 0 : 1;
            const int other = 1 - side;
            const int d = depth[side];
            int* lv = level[side];
            const I* gp = grow_p[side];
            const I* gq = grow_q[side];
            const int* lo_other = level[other];
            // probe: does level d + 1 meet the other side? (reads only; then the level is the
            // last, and only its vertices the other side has seen are needed: the middle).
            // Only while the frontier's edges are a large share of those swept so far.
            const bool probe = volume[side] * PAIR_PROBE_SHARE > swept;
            if (probe) {
                each_frontier_edge(order[side], lo[side], hi[side], gp, gq, &found,
                                   [&](long long, long long w) {
                                       if (lo_other[w] >= 0) {
                                           found = 1;
                                       }
                                   });
            }
            const int probed = found;
            // discover level d + 1 (the last: its middle only), the unvisited heads of the
            // frontier's edges, and push the path counts along the edges into it:
            // sigma(w) += sigma(u)
            double* sg = sigma[side];
            I* visited = order[side];
            unsigned long long* visits = &tail[side];
            each_frontier_edge(order[side], lo[side], hi[side], gp, gq, (const int*)nullptr,
                               [&](long long u, long long w) {
                                   if (probed && lo_other[w] < 0) {
                                       return;
                                   }
                                   if (!probe && lo_other[w] >= 0) {
                                       found = 1;  // the level meets the other side
                                   }
                                   int lw = lv[w];
                                   if (lw < 0) {
                                       lw = atomicCAS(lv + w, -1, d + 1);
                                       if (lw == -1) {
                                           visited[atomicAdd(visits, 1ull)] = (I)w;
                                           lw = d + 1;
                                       }
                                   }
                                   if (lw == d + 1) {
                                       atomicAdd(sg + w, sg[u]);
                                   }
                               });
            const long long first_new = hi[side], end_new = (long long)tail[side];
            const int last = found;  // (each_frontier_edge ended synchronized)
            if (threadIdx.x == 0) {
                grown = 0;
            }
            __syncthreads();
            // the new frontier's edge count, and counts past 2^53 (sums of integers are exact
            // below: the same in any order)
            for (long long f = first_new + threadIdx.x; f < end_new; f += blockDim.x) {
                const long long w = (long long)order[side][f];
                if (last && lo_other[w] < 0) {
                    continue;  // found without the probe: not on a shortest s-t path
                }
                if (sg[w] > 9007199254740992.0) {
                    atomicOr(status, isinf(sg[w]) ? 3 : 1);
                }
                atomicAdd(&grown, (unsigned long long)(gp[w + 1] - gp[w]));
            }
            __syncthreads();
            if (end_new == first_new) {
                break;  // the side ran out: t is not reachable from s
            }
            if (last) {
                // the middle layer: the new vertices the other side has seen; every shortest
                // path crosses it once (turbobc/_pairs.py); the race on sigma_s(w) sigma_t(w)
                double key = PAIR_NO_KEY;
                long long best = -1;
                for (long long f = first_new + threadIdx.x; f < end_new; f += blockDim.x) {
                    const long long w = (long long)order[side][f];
                    if (lo_other[w] >= 0) {  // (all of them after a probe)
                        const double k = race_key(pair_bits(seed, (u64)sample, 2, (u64)w),
                                                  sigma[0][w] * sigma[1][w]);
                        if (better(k, w, key, best)) {
                            key = k;
                            best = w;
                        }
                    }
                }
                block_best(key, best);
                middle = best;
                break;
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                swept += volume[side];
                lo[side] = first_new;
                hi[side] = end_new;
                depth[side] = d + 1;
                volume[side] = grown;
            }
            __syncthreads();
        }
        if (middle >= 0) {
            // the path: the middle vertex, then steps towards s (parents along in-edges) and
            // towards t (along out-edges), each a race on the path counts of its side
            if (threadIdx.x == 0 && (endpoints || (middle != s && middle != t))) {
                atomicAdd(counts + middle, 1ull);
            }
            for (int toward = 0; toward < 2; ++toward) {
                long long x = middle;
                while (level[toward][x] > 0) {
                    x = walk_step(pull_p[toward], pull_q[toward], level[toward], sigma[toward],
                                  x, seed, (u64)sample, 3 + toward);
                    if (threadIdx.x == 0 && (endpoints || level[toward][x] > 0)) {
                        atomicAdd(counts + x, 1ull);
                    }
                }
            }
        }
        __syncthreads();
        // leave the workspace clean: only what this sample visited
        for (int c = 0; c < 2; ++c) {
            for (long long f = threadIdx.x; f < (long long)tail[c]; f += blockDim.x) {
                const long long v = (long long)order[c][f];
                level[c][v] = -1;
                sigma[c][v] = 0.0;
            }
        }
        __syncthreads();
    }
}
