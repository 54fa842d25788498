// scCOOC: one thread per stored edge of the COOC matrix (entries sorted by column), atomics
// into the output (TurboBC paper, Algorithm 2). Storage: COOC only, g.a = column of each
// entry, g.b = row of each entry; entry k is the edge b[k] -> a[k].
#include "single.cuh"

namespace tbc {

struct ScCOOC {
    static constexpr bool kCanPush = false;  // a thread per edge scans every edge anyway

    template <typename I, typename V, typename P>
    static __device__ __forceinline__ unsigned long long degree(const Sweep<I, V, P>&, I) {
        return 0;
    }

    // f<¬σ> = Aᵀ f ; σ += f ; S<f> = d : edge i -> j adds σ̂(i) to σ̂(j) when i is in the
    // frontier and j was undiscovered before this level. Each thread takes UNROLL edges at a
    // time (strided by the grid, so every load stays coalesced) and issues their index and
    // depth loads together before acting on any of them.
    template <typename I, typename V, typename P>
    static __device__ __forceinline__ bool forward(const Sweep<I, V, P>& g, int d,
                                                   unsigned long long* ctl,
                                                   unsigned long long&) {
        bool found = false;
        for (long long base = g.tid; base < g.m; base += UNROLL * g.nthreads) {
            I j[UNROLL], i[UNROLL], dj[UNROLL], di[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const long long k = base + u * g.nthreads;
                j[u] = k < g.m ? __ldg(g.a + k) : I(0);
                i[u] = k < g.m ? __ldg(g.b + k) : I(0);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const long long k = base + u * g.nthreads;
                dj[u] = k < g.m ? load_cg(g.S + j[u]) : I(-2);
                di[u] = load_cg(g.S + i[u]);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                // mask ¬σ (S(j) == d: found earlier in this same level), and f(i) != 0
                if ((dj[u] == I(-1) || dj[u] == I(d)) && di[u] == I(d - 1)) {
                    const V x = load_cg(g.sigma + i[u]);
                    const V total = atomicAdd(g.sigma + j[u], x) + x;
                    g.S[j[u]] = I(d);
                    found = true;
                    flag_overflow(total, d, ctl);  // σ̂ only grows: the last addition sees it
                }
            }
        }
        return found;
    }

    template <typename I, typename V, typename P>
    static __device__ __forceinline__ bool forward_push(const Sweep<I, V, P>& g, int d,
                                                        unsigned long long* ctl,
                                                        unsigned long long& edges) {
        return forward(g, d, ctl, edges);  // never chosen: kCanPush is false
    }

    // u<S==d> = (τ + δ)./σ ; t<S==d−1> += A u : edge v -> w adds u(w) to t(v).
    template <typename I, typename V, typename P>
    static __device__ __forceinline__ void backward(const Sweep<I, V, P>& g, int d, V scale) {
        for (long long base = g.tid; base < g.m; base += UNROLL * g.nthreads) {
            I w[UNROLL], v[UNROLL], dw[UNROLL], dv[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const long long k = base + u * g.nthreads;
                w[u] = k < g.m ? __ldg(g.a + k) : I(0);
                v[u] = k < g.m ? __ldg(g.b + k) : I(0);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const long long k = base + u * g.nthreads;
                dw[u] = k < g.m ? load_cg(g.S + w[u]) : I(-2);
                dv[u] = load_cg(g.S + v[u]);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                if (dw[u] == I(d) && dv[u] == I(d - 1)) {
                    const V uw = parent_share(g.tau, w[u], load_cg(g.sigma + w[u]),
                                                load_cg(g.t + w[u])) * scale;
                    atomicAdd(g.t + v[u], uw);
                }
            }
        }
    }

    static constexpr int UNROLL = 4;
};

}  // namespace tbc

TBC_SINGLE_KERNEL(bc_sccooc, tbc::ScCOOC)
