// The batched family's skeleton (docs/algorithm.md#many-sources-per-sweep): B sources per
// persistent launch as n x B vertex-major blocks (layout: batched_common.cuh). run_batch is
// Algorithm 1 once, for every kernel of the family; what differs is a policy:
//
//   Traversal    how each forward level's product F<¬Σ> = F A is computed, and how each
//                backward level's t = A u (DensePull: batched scCSC; FrontierPushPull:
//                batched veCSC; EdgeParallel: batched scCOOC)
//   Accumulator  what the backward sweep adds up (VertexSums: δ into bc, plus endpoint
//                terms; EdgeSums: that and the term of every DAG edge, edge BC)
//
// The shortest-path DAG is the hop-level one: w is a child of v when level(w) = level(v) + 1,
// tested through the tagged lane masks (batched_common.cuh). TBCB_KERNEL defines an entry
// point, which takes the views of views.cuh.
#pragma once

#include "batched_backward.cuh"
#include "batched_forward.cuh"

namespace tbcb {

// ---- Traversal policies: one forward level (returns "discovered any"; `pushed` says whether
// the last level was pushed, leaving its masks unwritten) and the whole backward sweep.

// Batched scCSC: every level is the dense masked pull over every unit, and the backward pull
// visits every unit at every level.
struct DensePull {
    template <typename I, typename L>
    static __device__ bool forward(const Batch<I, L>& g, int d, unsigned long long,
                                   bool&, unsigned long long& edges) {
        return forward_pull(g, d, edges);
    }
    template <class Acc, typename I, typename L>
    static __device__ void backward(const Batch<I, L>& g, int depth) {
        backward_pull<false, Acc>(g, depth);
    }
};

// Batched veCSC: push from the frontier units while their unit-edges times push_ratio are
// fewer than all unit-edges (m · chunks), else pull (after writing the masks a push left
// unwritten); the backward pull visits only the units holding the level.
struct FrontierPushPull {
    template <typename I, typename L>
    static __device__ bool forward(const Batch<I, L>& g, int d, unsigned long long frontier,
                                   bool& pushed, unsigned long long& edges) {
        const unsigned long long total = (unsigned long long)g.m * (unsigned long long)g.nchunks;
        if (frontier * g.push_ratio < total) {
            pushed = true;
            return forward_push(g, d, edges);
        }
        if (pushed) {
            build_masks(g, d - 1);
            grid_sync(g.ctl);
            pushed = false;
        }
        return forward_pull(g, d, edges);
    }
    template <class Acc, typename I, typename L>
    static __device__ void backward(const Batch<I, L>& g, int depth) {
        backward_pull<true, Acc>(g, depth);
    }
};

// Batched scCOOC: a warp per (stored edge, chunk) in both sweeps, atomics into the target.
struct EdgeParallel {
    template <typename I, typename L>
    static __device__ bool forward(const Batch<I, L>& g, int d, unsigned long long, bool&,
                                   unsigned long long& edges) {
        return forward_edges(g, d, edges);
    }
    template <class Acc, typename I, typename L>
    static __device__ void backward(const Batch<I, L>& g, int depth) {
        backward_edges<Acc>(g, depth);
    }
};

// Forward sweep, one level per barrier. Returns the deepest non-empty level, or -1 when the
// batch must be rerun (ctl[STATUS] says why).
template <class Traversal, typename I, typename L>
__device__ int forward_sweep(const Batch<I, L>& g) {
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
        const bool found = Traversal::forward(g, d, frontier, pushed, edges);
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

// What one launch runs (BatchRun::phase): both sweeps, or one of them. Between a forward and a
// backward launch of the same batch the host may write per-slot target weights (tau_slot) from
// the levels and counts the forward sweep left (turbobc/_chains.py); everything the backward
// sweep reads is in device memory, the depth in ctl[DEPTH].
enum Phase : int { PHASE_BOTH = 0, PHASE_FORWARD = 1, PHASE_BACKWARD = 2 };

// The whole of Algorithm 1 for one batch.
template <class Traversal, class Accumulator, typename I, typename L>
__device__ void run_batch(Batch<I, L>& g) {
    int depth;
    if (g.phase != PHASE_BACKWARD) {
        init_batch(g);
        depth = forward_sweep<Traversal>(g);
        if (depth < 0) {
            return;
        }
        if (g.tid == 0) {
            g.ctl[DEPTH] = (unsigned long long)depth;
        }
        summarize_levels(g);
        grid_sync(g.ctl);
        if (g.phase == PHASE_FORWARD) {
            return;
        }
    } else {
        depth = (int)tbc::load_cg(g.ctl + DEPTH);
    }
    // d = depth + 1 .. 2:  u<S==d> = (τ + δ) ./ σ ;  T<S==d−1> = U Aᵀ ;  δ<S==d−1> = t .* σ
    Traversal::template backward<Accumulator>(g, depth);
    // endpoints: bc[s] += (vertices reached from s) − 1 ; EdgeSums: E(s, w) for w at depth 1
    Accumulator::finish_sources(g, depth);
}

}  // namespace tbcb

// The entry point of a batched kernel: the views of views.cuh, then run_batch with the
// traversal policy TRAVERSAL, the accumulator policy ACCUMULATOR and the level type LEVEL
// (short or int).
#define TBCB_KERNEL(NAME, TRAVERSAL, ACCUMULATOR, LEVEL)                                        \
    template <typename I>                                                                       \
    __global__ void __launch_bounds__(256, 6)                                                   \
    NAME(const tbc::BatchGraph<I> graph, const tbc::BatchWork<LEVEL> work,                      \
         const tbc::BatchRun<I> run) {                                                          \
        const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;                 \
        const long long nthreads = (long long)gridDim.x * blockDim.x;                           \
        tbcb::Batch<I, LEVEL> g{graph.in_ptr, graph.in_idx, graph.out_ptr, graph.out_idx,       \
                                graph.erow, graph.ecol, (I)graph.n, (I)graph.m, run.lanes,      \
                                run.lanes / 32, run.sources, run.nsrc, work.level, work.sigma,  \
                                work.t, work.flag0, work.flag1, work.masks, work.shifts,        \
                                work.dcap, work.maxbits, work.reached, run.bc, run.edge,        \
                                run.tau, run.omega, run.tau_slot, run.phase,                    \
                                work.ctl, run.push_ratio, graph.small_count,                    \
                                run.endpoints != 0, tid, nthreads, tid >> 5, nthreads >> 5,     \
                                (int)(threadIdx.x & 31)};                                       \
        tbcb::run_batch<tbcb::TRAVERSAL, tbcb::ACCUMULATOR>(g);                                 \
    }
