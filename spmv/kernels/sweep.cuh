// Shared pieces of the single-source BC sweep (TurboBC paper, Algorithm 1).
//
// One persistent kernel runs the whole of Algorithm 1 for a range of sources: the forward BFS
// levels, the backward dependency levels and the bc update, separated by a software grid
// barrier. The host launches it once per chunk of sources, so a level costs one barrier
// (a few microseconds) instead of two or three kernel launches and a host round trip.
//
// Vectors (all length n, on the device):
//   S      depth at which each vertex was discovered, -1 if not (yet) reached
//   sigma  path counts σ̂ = σ / 2^E_d, scaled per level so that they never overflow
//   t      backward accumulator: δ(v) = σ̂(v) · t(v)   (t = A u of the paper, accumulated)
//   bc     the raw result, summed over sources
// The frontier f of the paper is never stored: f = σ̂<S == d−1>.
//
// The kernels differ only in how the two SpMV products are parallelized (the policies
// in sccsc.cu, sccooc.cu and vecsc.cu): each provides
//   forward(d)          f<¬σ> = Aᵀ f ; σ += f ; S<f> = d          (returns "discovered any")
//   backward(d, scale)  u<S==d> = (1 + δ)./σ ; t<S==d−1> += A u   (with u(w) = 1/σ̂(w) + t(w))
#pragma once

#include "ctl.cuh"

#define TBC_FULL_MASK 0xffffffffu

namespace tbc {

// The control block `ctl` (slots tbc::Ctl): ctl.cuh.

// Vectors written during a launch (S, σ, t) are read with ordinary loads: within a phase the
// values a thread acts on are not written by others (the benign exceptions are commented where
// they occur), and the gpu-scope fence of the grid barrier orders each phase after the last.
template <typename T>
__device__ __forceinline__ T load_cg(const T* p) { return *p; }

// Push instead of pull while the frontier's edges are fewer than the unexplored ones over this.
constexpr unsigned long long PUSH_RATIO = 10;

// Software grid barrier. Valid because the host never launches more blocks than can be resident
// at once (checked with the occupancy API, and the launch is cooperative).
__device__ __forceinline__ void grid_sync(unsigned long long* ctl) {
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned long long my_gen = *(volatile unsigned long long*)(ctl + BAR_GEN);
        unsigned long long arrived;
        // arrive: releases this block's writes of the phase (the bar.sync above ordered them)
        asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 1;"
                     : "=l"(arrived) : "l"(ctl + BAR_COUNT) : "memory");
        if (arrived == gridDim.x - 1) {
            ctl[BAR_COUNT] = 0;
            asm volatile("red.release.gpu.global.add.u64 [%0], 1;" :: "l"(ctl + BAR_GEN) : "memory");
        } else {
            unsigned long long gen;
            do {  // acquire: every block's writes of the phase are visible after this
                asm volatile("ld.acquire.gpu.global.u64 %0, [%1];"
                             : "=l"(gen) : "l"(ctl + BAR_GEN) : "memory");
            } while (gen == my_gen);
        }
    }
    __syncthreads();
}

// σ̂ above this limit rescales its level (docs/algorithm.md#per-level-power-of-two-scaling).
template <typename V> __device__ __forceinline__ V overflow_limit();
template <> __device__ __forceinline__ double overflow_limit<double>() {
    constexpr double limit = pow2(OVERFLOW_EXP);
    return limit;
}
template <> __device__ __forceinline__ float overflow_limit<float>() { return 0x1p64f; }

// A scaled σ̂ below this means its level spreads wider than per-level scaling can hold: the
// source is swept again by turbobc.engines.wide, with an exponent per vertex. Kept well above the
// smallest normal number so that 1/σ̂ (up to n times this) stays finite in the backward sweep.
template <typename V> __device__ __forceinline__ V wide_below();
template <> __device__ __forceinline__ double wide_below<double>() {
    constexpr double limit = pow2(-WIDE_EXP);
    return limit;
}
template <> __device__ __forceinline__ float wide_below<float>() { return 0x1p-40f; }

template <typename V>
__device__ __forceinline__ void flag_overflow(V value, int d, unsigned long long* ctl) {
    if (value > overflow_limit<V>()) {
        atomicMax(ctl + OVF_LEVEL, (unsigned long long)d);
    }
}

__device__ __forceinline__ unsigned long long order_bits(double x) {
    return (unsigned long long)__double_as_longlong(x);
}
__device__ __forceinline__ unsigned long long order_bits(float x) {
    return (unsigned long long)__float_as_uint(x);
}
__device__ __forceinline__ double from_order_bits(unsigned long long b, double) {
    return __longlong_as_double((long long)b);
}
__device__ __forceinline__ float from_order_bits(unsigned long long b, float) {
    return __uint_as_float((unsigned int)b);
}

// Claim an undiscovered vertex for level d: returns the depth it had (-1: this thread won).
__device__ __forceinline__ int claim(int* S, int d) { return atomicCAS(S, -1, d); }
__device__ __forceinline__ long long claim(long long* S, int d) {
    return (long long)atomicCAS((unsigned long long*)S, ~0ull, (unsigned long long)d);
}

// Push one frontier value x into vertex j along an edge of an undirected graph:
// σ̂(j) += x if j was undiscovered before level d. Returns the degree of j when this call
// discovered it (claimed S(j) = d), else 0.
template <typename I, typename V>
__device__ __forceinline__ unsigned long long push_into(const I* __restrict__ colptr, I* S,
                                                        V* sigma, I j, V x, int d,
                                                        unsigned long long* ctl) {
    I depth = load_cg(S + j);  // stale only as -1 where another thread just wrote d
    const I begin = __ldg(colptr + j), end = __ldg(colptr + j + 1);  // in flight with S(j)
    unsigned long long won = 0;
    if (depth == I(-1)) {
        depth = claim(S + j, d);
        if (depth == I(-1)) {
            won = (unsigned long long)(end - begin);
            depth = I(d);
        }
    }
    if (depth == I(d)) {
        atomicAdd(sigma + j, x);  // result unused: a fire-and-forget reduction
        // σ̂(j) <= deg(j) · max x: flag the level when that bound passes the limit
        if (x > overflow_limit<V>() / V(end - begin)) {
            atomicMax(ctl + OVF_LEVEL, (unsigned long long)d);
        }
    }
    return won;
}

// Sum over a warp, result in lane 0 (Algorithm 4, lines 17 to 21).
template <typename V>
__device__ __forceinline__ V warp_sum(V x) {
    for (int off = 16; off > 0; off >>= 1) {
        x += __shfl_down_sync(TBC_FULL_MASK, x, off);
    }
    return x;
}

// Arguments every policy sees. `a` and `b` are the storage format: CSC (a = column pointers,
// b = row indices) or COOC (a = column of each entry, b = row of each entry).
template <typename I, typename V>
struct Sweep {
    const I* __restrict__ a;
    const I* __restrict__ b;
    I n;
    I m;
    I* S;
    V* sigma;
    V* t;
    bool directed;
    long long tid;
    long long nthreads;
    // veCSC only: columns longer than HEAVY_CHUNK split into units of HEAVY_CHUNK entries,
    // unit u covers column unit_col[u] from entry unit_start[u] (empty for the other kernels).
    const I* __restrict__ unit_col;
    const I* __restrict__ unit_start;
    long long nunits;
};

constexpr int HEAVY_CHUNK = 1024;

// The whole of Algorithm 1 for sources[0 .. nsrc), accumulated into bc.
template <class Policy, typename I, typename V>
__device__ void run_sweep(const Sweep<I, V>& g, const I* __restrict__ sources, long long nsrc,
                          V* bc, int* shifts, unsigned long long* ctl, bool endpoints) {
    const long long tid = g.tid, nthreads = g.nthreads;
    const unsigned lane = threadIdx.x & 31u;
    for (long long si = 0; si < nsrc; ++si) {
        const I s = sources[si];

        // σ = e_s, S = -1 except S(s) = 0, t = 0
        for (long long v = tid; v < g.n; v += nthreads) {
            g.S[v] = (v == s) ? I(0) : I(-1);
            g.sigma[v] = (v == s) ? V(1) : V(0);
            g.t[v] = V(0);
        }
        if (tid == 0) {
            ctl[FLAG0 + 1] = 0;
            ctl[EDGES0 + 1] = 0;
            ctl[OVF_LEVEL] = 0;
            ctl[MAX_BITS] = 0;
            ctl[REACHED] = 0;
        }
        grid_sync(ctl);

        // Forward sweep: one level per barrier. Undirected graphs push from the frontier while
        // it is small (direction optimization), pull otherwise; directed graphs always pull.
        unsigned long long frontier_edges = Policy::degree(g, s);
        unsigned long long explored = frontier_edges;
        int d = 0;
        while (true) {
            ++d;
            const bool push = Policy::kCanPush && !g.directed &&
                              frontier_edges * PUSH_RATIO < (unsigned long long)g.m - explored;
            // f<¬σ> = Aᵀ f ; σ += f ; S<f> = d        (f = σ̂<S == d−1>)
            unsigned long long edges = 0;
            const bool found = push ? Policy::forward_push(g, d, ctl, edges)
                                    : Policy::forward(g, d, ctl, edges);
            const bool any_found = __any_sync(TBC_FULL_MASK, found);
            edges = warp_sum(edges);
            if (lane == 0 && any_found) {
                ctl[FLAG0 + d % 3] = 1;
                if (edges) {
                    atomicAdd(ctl + EDGES0 + d % 3, edges);
                }
            }
            if (tid == 0) {
                ctl[FLAG0 + (d + 1) % 3] = 0;  // read last after barrier d - 2: free again
                ctl[EDGES0 + (d + 1) % 3] = 0;
            }
            grid_sync(ctl);
            if (load_cg(ctl + FLAG0 + d % 3) == 0) {
                break;  // f == 0
            }
            frontier_edges = load_cg(ctl + EDGES0 + d % 3);
            explored += frontier_edges;
            int shift = 0;
            if ((int)load_cg(ctl + OVF_LEVEL) == d) {
                // σ̂<S==d> *= 2^-shift_d with shift_d = floor(log2 max σ̂<S==d>), exact.
                for (long long v = tid; v < g.n; v += nthreads) {
                    if (load_cg(g.S + v) == I(d)) {
                        atomicMax(ctl + MAX_BITS, order_bits(load_cg(g.sigma + v)));
                    }
                }
                grid_sync(ctl);
                const V level_max = from_order_bits(load_cg(ctl + MAX_BITS), V(0));
                if (level_max > overflow_limit<V>()) {  // pushes flag conservatively
                    shift = ilogb(level_max);
                    for (long long v = tid; v < g.n; v += nthreads) {
                        if (load_cg(g.S + v) == I(d)) {
                            const V scaled = scalbn(load_cg(g.sigma + v), -shift);
                            g.sigma[v] = scaled;
                            if (scaled < wide_below<V>()) {  // all writers store the same
                                ctl[WIDE_SOURCE] = (unsigned long long)(si + 1);
                            }
                        }
                    }
                }
                grid_sync(ctl);
                if (tid == 0) {
                    ctl[MAX_BITS] = 0;  // every thread read it before the barrier above
                }
            }
            if (tid == 0) {
                shifts[d] = shift;
            }
        }
        const int depth = d - 1;  // deepest non-empty level
        if (load_cg(ctl + WIDE_SOURCE) != 0) {
            return;  // uniform: written before a barrier; nothing of this source was added
        }

        // Backward sweep, d from the deepest level down to 2 (level 1 only feeds the source).
        for (d = depth; d >= 2; --d) {
            // u<S==d> = (1 + δ)./σ ; t = A u ; δ<S==d−1> += t .* σ   (δ = σ̂ .* t, scaled by 2^-shift_d)
            const V scale = scalbn(V(1), -load_cg(shifts + d));
            Policy::backward(g, d, scale);
            grid_sync(ctl);
        }

        // bc += δ (v ≠ s); endpoints: +1 for every reached v ≠ s, reached − 1 for s
        unsigned long long reached = 0;
        for (long long v = tid; v < g.n; v += nthreads) {
            const I depth_v = load_cg(g.S + v);
            if (depth_v > I(0)) {
                V delta = load_cg(g.sigma + v) * load_cg(g.t + v);
                if (endpoints) {
                    delta += V(1);
                    ++reached;
                }
                bc[v] += delta;
            }
        }
        if (endpoints) {
            for (int off = 16; off > 0; off >>= 1) {
                reached += __shfl_down_sync(TBC_FULL_MASK, reached, off);
            }
            if (lane == 0 && reached) {
                atomicAdd(ctl + REACHED, reached);
            }
        }
        grid_sync(ctl);
        if (endpoints && tid == 0) {
            bc[s] += V(load_cg(ctl + REACHED));
        }
    }
}

}  // namespace tbc
