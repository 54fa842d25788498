// scCSC: one thread per vertex (column of the CSC matrix), the σ == 0 mask inside the kernel
// (TurboBC paper, Algorithm 3). Storage: CSC only, g.a = column pointers, g.b = row indices;
// column j lists the in-neighbours of j.
#include "single.cuh"

namespace tbc {

struct ScCSC {
    static constexpr bool kCanPush = true;

    template <typename I, typename V, typename P>
    static __device__ __forceinline__ unsigned long long degree(const Sweep<I, V, P>& g, I v) {
        return (unsigned long long)(__ldg(g.a + v + 1) - __ldg(g.a + v));
    }

    // f<¬σ> = Aᵀ f ; σ += f ; S<f> = d : pull over in-neighbours, only for undiscovered j.
    template <typename I, typename V, typename P>
    static __device__ __forceinline__ bool forward(const Sweep<I, V, P>& g, int d,
                                                   unsigned long long* ctl,
                                                   unsigned long long& edges) {
        bool found = false;
        for (long long j = g.tid; j < g.n; j += g.nthreads) {
            if (load_cg(g.S + j) != I(-1)) {
                continue;  // mask ¬σ
            }
            V sum = V(0);
            const P end = __ldg(g.a + j + 1);
            for (P k = __ldg(g.a + j); k < end; ++k) {
                const I i = __ldg(g.b + k);
                if (load_cg(g.S + i) == I(d - 1)) {
                    sum += load_cg(g.sigma + i);
                }
            }
            if (sum > V(0)) {
                g.sigma[j] = sum;
                g.S[j] = I(d);
                found = true;
                edges += (unsigned long long)(end - __ldg(g.a + j));
                flag_overflow(sum, d, ctl);
            }
        }
        return found;
    }

    // The same product pushed from the frontier (undirected graphs, small frontiers): thread i
    // (at depth d−1) adds σ̂(i) into its undiscovered neighbours, with atomics.
    template <typename I, typename V, typename P>
    static __device__ __forceinline__ bool forward_push(const Sweep<I, V, P>& g, int d,
                                                        unsigned long long* ctl,
                                                        unsigned long long& edges) {
        bool found = false;
        for (long long i = g.tid; i < g.n; i += g.nthreads) {
            if (load_cg(g.S + i) != I(d - 1)) {
                continue;  // f(i) == 0
            }
            const V x = load_cg(g.sigma + i);
            const P end = __ldg(g.a + i + 1);
            for (P k = __ldg(g.a + i); k < end; ++k) {
                const unsigned long long won =
                    push_into(g.a, g.S, g.sigma, __ldg(g.b + k), x, d, ctl);
                if (won) {
                    found = true;
                    edges += won;
                }
            }
        }
        return found;
    }

    // u<S==d> = (τ + δ)./σ ; t<S==d−1> += A u
    template <typename I, typename V, typename P>
    static __device__ __forceinline__ void backward(const Sweep<I, V, P>& g, int d, V scale) {
        if (!g.directed) {
            // A == Aᵀ: pull. Thread v (at depth d−1) sums u over its neighbours at depth d.
            for (long long v = g.tid; v < g.n; v += g.nthreads) {
                if (load_cg(g.S + v) != I(d - 1)) {
                    continue;
                }
                V sum = V(0);
                const P end = __ldg(g.a + v + 1);
                for (P k = __ldg(g.a + v); k < end; ++k) {
                    const I w = __ldg(g.b + k);
                    if (load_cg(g.S + w) == I(d)) {
                        sum += parent_share(g.tau, w, load_cg(g.sigma + w),
                                            load_cg(g.t + w));
                    }
                }
                g.t[v] = sum * scale;
            }
        } else {
            // Only Aᵀ is stored: push. Thread w (at depth d) adds u(w) to its in-neighbours v
            // at depth d−1, which is t = A u read column by column.
            for (long long w = g.tid; w < g.n; w += g.nthreads) {
                if (load_cg(g.S + w) != I(d)) {
                    continue;
                }
                const V u =
                    parent_share(g.tau, w, load_cg(g.sigma + w), load_cg(g.t + w)) * scale;
                const P end = __ldg(g.a + w + 1);
                for (P k = __ldg(g.a + w); k < end; ++k) {
                    const I v = __ldg(g.b + k);
                    if (load_cg(g.S + v) == I(d - 1)) {
                        atomicAdd(g.t + v, u);
                    }
                }
            }
        }
    }
};

}  // namespace tbc

TBC_SINGLE_KERNEL(bc_sccsc, tbc::ScCSC)
