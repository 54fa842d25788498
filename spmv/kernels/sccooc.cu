// scCOOC: one thread per stored edge of the COOC matrix (entries sorted by column), atomics
// into the output (TurboBC paper, Algorithm 2). Storage: COOC only, g.a = column of each
// entry, g.b = row of each entry; entry k is the edge b[k] -> a[k].
#include "sweep.cuh"

namespace tbc {

struct ScCOOC {
    static constexpr bool kCanPush = false;  // a thread per edge scans every edge anyway

    template <typename I, typename V>
    static __device__ __forceinline__ unsigned long long degree(const Sweep<I, V>&, I) {
        return 0;
    }

    // f<¬σ> = Aᵀ f ; σ += f ; S<f> = d : edge i -> j adds σ̂(i) to σ̂(j) when i is in the
    // frontier and j was undiscovered before this level.
    template <typename I, typename V>
    static __device__ __forceinline__ bool forward(const Sweep<I, V>& g, int d,
                                                   unsigned long long* ctl,
                                                   unsigned long long&) {
        bool found = false;
        for (long long k = g.tid; k < g.m; k += g.nthreads) {
            const I j = __ldg(g.a + k);
            const I depth_j = load_cg(g.S + j);
            if (depth_j != I(-1) && depth_j != I(d)) {
                continue;  // mask ¬σ (S(j) == d: found earlier in this same level)
            }
            const I i = __ldg(g.b + k);
            if (load_cg(g.S + i) != I(d - 1)) {
                continue;  // f(i) == 0
            }
            const V x = load_cg(g.sigma + i);
            const V total = atomicAdd(g.sigma + j, x) + x;
            g.S[j] = I(d);
            found = true;
            flag_overflow(total, d, ctl);  // σ̂ only grows: the last addition sees the final value
        }
        return found;
    }

    template <typename I, typename V>
    static __device__ __forceinline__ bool forward_push(const Sweep<I, V>& g, int d,
                                                        unsigned long long* ctl,
                                                        unsigned long long& edges) {
        return forward(g, d, ctl, edges);  // never chosen: kCanPush is false
    }

    // u<S==d> = (1 + δ)./σ ; t<S==d−1> += A u : edge v -> w adds u(w) to t(v).
    template <typename I, typename V>
    static __device__ __forceinline__ void backward(const Sweep<I, V>& g, int d, V scale) {
        for (long long k = g.tid; k < g.m; k += g.nthreads) {
            const I w = __ldg(g.a + k);
            if (load_cg(g.S + w) != I(d)) {
                continue;
            }
            const I v = __ldg(g.b + k);
            if (load_cg(g.S + v) != I(d - 1)) {
                continue;
            }
            const V u = (V(1) / load_cg(g.sigma + w) + load_cg(g.t + w)) * scale;
            atomicAdd(g.t + v, u);
        }
    }
};

}  // namespace tbc

template <typename I, typename V>
__global__ void __launch_bounds__(512)
bc_sccooc(const I* __restrict__ col, const I* __restrict__ row, I n, I m,
          const I* __restrict__ sources, long long nsrc, I* S, V* sigma, V* t, V* bc,
          int* shifts, unsigned long long* ctl, int directed, int endpoints,
          const I* __restrict__ unit_col, const I* __restrict__ unit_start, long long nunits) {
    const tbc::Sweep<I, V> g{col, row, n, m, S, sigma, t, directed != 0,
                             (long long)blockIdx.x * blockDim.x + threadIdx.x,
                             (long long)gridDim.x * blockDim.x, unit_col, unit_start, nunits};
    tbc::run_sweep<tbc::ScCOOC>(g, sources, nsrc, bc, shifts, ctl, endpoints != 0);
}
