// veCSC: one warp per vertex (column of the CSC matrix), lanes stride over its neighbours,
// reduction by __shfl_down_sync (TurboBC paper, Algorithm 4). Storage: CSC only,
// g.a = column pointers, g.b = row indices; column j lists the in-neighbours of j.
//
// Past the paper: a column longer than HEAVY_CHUNK (a hub) is not left to one warp, which
// would serialize the whole level behind it; it is cut into units of HEAVY_CHUNK entries
// (listed by the host in g.unit_col / g.unit_start), one warp per unit, partial sums combined
// with atomics.
#include "single.cuh"

namespace tbc {

struct VeCSC {
    static constexpr bool kCanPush = true;

    template <typename I, typename V, typename P>
    static __device__ __forceinline__ unsigned long long degree(const Sweep<I, V, P>& g, I v) {
        return (unsigned long long)(__ldg(g.a + v + 1) - __ldg(g.a + v));
    }

    // Σ over column entries [k0, k1) of x(row), in lane 0 (Algorithm 4, lines 12 to 21).
    template <typename I, typename V, typename P, class X>
    static __device__ __forceinline__ V column_sum(const Sweep<I, V, P>& g, P k0, P k1, X x) {
        const int lane = threadIdx.x & 31;
        V sum = V(0);
        for (P k = k0 + lane; k < k1; k += 32) {
            sum += x(__ldg(g.b + k));
        }
        return warp_sum(sum);
    }

    // f<¬σ> = Aᵀ f ; σ += f ; S<f> = d : a warp pulls over the in-neighbours of undiscovered j.
    template <typename I, typename V, typename P>
    static __device__ __forceinline__ bool forward(const Sweep<I, V, P>& g, int d,
                                                   unsigned long long* ctl,
                                                   unsigned long long& edges) {
        const int lane = threadIdx.x & 31;
        const long long warp = g.tid >> 5, nwarps = g.nthreads >> 5;
        const auto f = [&](I i) {  // f(i) = σ̂(i) if S(i) == d − 1
            return load_cg(g.S + i) == I(d - 1) ? load_cg(g.sigma + i) : V(0);
        };
        bool found = false;
        for (long long j = warp; j < g.n; j += nwarps) {
            if (load_cg(g.S + j) != I(-1)) {
                continue;  // mask ¬σ, uniform over the warp
            }
            const P begin = __ldg(g.a + j), end = __ldg(g.a + j + 1);
            if (end - begin > HEAVY_CHUNK) {
                continue;  // a hub: its units below
            }
            const V sum = column_sum(g, begin, end, f);
            if (lane == 0 && sum > V(0)) {
                g.sigma[j] = sum;
                g.S[j] = I(d);
                found = true;
                edges += (unsigned long long)(end - begin);
                flag_overflow(sum, d, ctl);
            }
        }
        for (long long u = warp; u < g.nunits; u += nwarps) {
            const I j = __ldg(g.unit_col + u);
            const I depth = load_cg(g.S + j);
            if (depth != I(-1) && depth != I(d)) {
                continue;  // mask ¬σ (S(j) == d: another unit of j found it in this level)
            }
            const P k0 = __ldg(g.unit_start + u), end = __ldg(g.a + j + 1);
            const V sum = column_sum(g, k0, min(P(k0 + HEAVY_CHUNK), end), f);
            if (lane == 0 && sum > V(0)) {
                atomicAdd(g.sigma + j, sum);
                const unsigned long long deg = degree(g, j);
                if (sum > overflow_limit<V>() / V(deg / HEAVY_CHUNK + 1)) {  // bound on σ̂(j)
                    atomicMax(ctl + OVF_LEVEL, (unsigned long long)d);
                }
                if (load_cg(g.S + j) == I(-1) && claim(g.S + j, d) == I(-1)) {
                    found = true;
                    edges += deg;
                }
            }
        }
        return found;
    }

    // The same product pushed from the frontier (undirected graphs, small frontiers): warp i
    // (at depth d−1) adds σ̂(i) into its undiscovered neighbours, lanes striding, with atomics.
    template <typename I, typename V, typename P>
    static __device__ __forceinline__ bool forward_push(const Sweep<I, V, P>& g, int d,
                                                        unsigned long long* ctl,
                                                        unsigned long long& edges) {
        const int lane = threadIdx.x & 31;
        const long long warp = g.tid >> 5, nwarps = g.nthreads >> 5;
        bool found = false;
        const auto push_range = [&](I i, P k0, P k1) {
            const V x = load_cg(g.sigma + i);
            for (P k = k0 + lane; k < k1; k += 32) {
                const unsigned long long won =
                    push_into(g.a, g.S, g.sigma, __ldg(g.b + k), x, d, ctl);
                if (won) {
                    found = true;
                    edges += won;
                }
            }
        };
        for (long long i = warp; i < g.n; i += nwarps) {
            if (load_cg(g.S + i) != I(d - 1)) {
                continue;  // f(i) == 0, uniform over the warp
            }
            const P begin = __ldg(g.a + i), end = __ldg(g.a + i + 1);
            if (end - begin <= HEAVY_CHUNK) {
                push_range(I(i), begin, end);
            }
        }
        for (long long u = warp; u < g.nunits; u += nwarps) {
            const I i = __ldg(g.unit_col + u);
            if (load_cg(g.S + i) == I(d - 1)) {
                const P k0 = __ldg(g.unit_start + u);
                push_range(i, k0, min(P(k0 + HEAVY_CHUNK), __ldg(g.a + i + 1)));
            }
        }
        return found;
    }

    // u<S==d> = (τ + δ)./σ ; t<S==d−1> += A u
    template <typename I, typename V, typename P>
    static __device__ __forceinline__ void backward(const Sweep<I, V, P>& g, int d, V scale) {
        const int lane = threadIdx.x & 31;
        const long long warp = g.tid >> 5, nwarps = g.nthreads >> 5;
        if (!g.directed) {
            // A == Aᵀ: pull. Warp v (at depth d−1) sums u over its neighbours at depth d.
            const auto u = [&](I w) {  // u(w) = (τ(w) + δ(w)) / σ̂(w) at depth d
                return load_cg(g.S + w) == I(d)
                           ? parent_share(g.tau, w, load_cg(g.sigma + w), load_cg(g.t + w)) : V(0);
            };
            for (long long v = warp; v < g.n; v += nwarps) {
                if (load_cg(g.S + v) != I(d - 1)) {
                    continue;
                }
                const P begin = __ldg(g.a + v), end = __ldg(g.a + v + 1);
                if (end - begin > HEAVY_CHUNK) {
                    continue;
                }
                const V sum = column_sum(g, begin, end, u);
                if (lane == 0) {
                    g.t[v] = sum * scale;
                }
            }
            for (long long k = warp; k < g.nunits; k += nwarps) {
                const I v = __ldg(g.unit_col + k);
                if (load_cg(g.S + v) != I(d - 1)) {
                    continue;
                }
                const P k0 = __ldg(g.unit_start + k);
                const V sum = column_sum(g, k0, min(P(k0 + HEAVY_CHUNK), __ldg(g.a + v + 1)), u);
                if (lane == 0 && sum != V(0)) {
                    atomicAdd(g.t + v, sum * scale);
                }
            }
        } else {
            // Only Aᵀ is stored: push. Warp w (at depth d) adds u(w) to its in-neighbours.
            const auto push_range = [&](I w, P k0, P k1) {
                const V uw =
                    parent_share(g.tau, w, load_cg(g.sigma + w), load_cg(g.t + w)) * scale;
                for (P k = k0 + lane; k < k1; k += 32) {
                    const I v = __ldg(g.b + k);
                    if (load_cg(g.S + v) == I(d - 1)) {
                        atomicAdd(g.t + v, uw);
                    }
                }
            };
            for (long long w = warp; w < g.n; w += nwarps) {
                if (load_cg(g.S + w) != I(d)) {
                    continue;
                }
                const P begin = __ldg(g.a + w), end = __ldg(g.a + w + 1);
                if (end - begin <= HEAVY_CHUNK) {
                    push_range(I(w), begin, end);
                }
            }
            for (long long k = warp; k < g.nunits; k += nwarps) {
                const I w = __ldg(g.unit_col + k);
                if (load_cg(g.S + w) == I(d)) {
                    const P k0 = __ldg(g.unit_start + k);
                    push_range(w, k0, min(P(k0 + HEAVY_CHUNK), __ldg(g.a + w + 1)));
                }
            }
        }
    }
};

}  // namespace tbc

TBC_SINGLE_KERNEL(bc_vecsc, tbc::VeCSC)
