// The frontiers family: one source per thread block, its breadth-first frontier a queue
// (launched by spmv/_frontiers.py for turbobc/engines/gpu/frontiers.py).
//
// Work-efficient for deep graphs (meshes, roads, grids: hundreds to thousands of levels, a few
// hundred to a few thousand vertices a level): a block touches only its own frontier's edges,
// and keeps every vertex it reached in `order`, level after level (`start[d]` is where level d
// begins), so the backward sweep walks the levels in reverse without a pass over the graph.
// Many blocks run at once, each on its own source (a counter hands the sources out), with its
// own rows of the workspace (slot b n + v of block b):
//
//   level  L(v)   the level of v from the block's source; -1 not reached
//   sigma  σ̂(v)   path counts, scaled by 2^-shift per level so they never overflow
//   t      t(v)   backward: δ(v) = σ̂(v) · t(v) (accumulate.cuh); once v's level is swept
//                 it holds u(v) = τ(v)/σ̂(v) + t(v), what v hands each of its parents
//   order         the reached vertices, level after level; start[d] = the first of level d
//   shifts        the per-level power-of-two scale of σ̂
//   bc            the block's own raw sums (the host adds the rows: no atomics on bc)
//
// Per source (every step behind a block barrier):
//   forward, d = 0, 1, ...   for v in level d, w in out(v):  L(w) = d + 1 if unreached (the
//                            block's queue gets w);  σ̂(w) += σ̂(v) if L(w) == d + 1
//                            (f<¬σ> = Aᵀ f ; σ += f ; S<f> = d + 1, the frontier a queue)
//   backward, d = D − 1 .. 0 t(v) = 2^-shift_{d+1} Σ_{w in out(v), L(w) = d + 1} u(w),
//                            u(w) = τ(w)/σ̂(w) + t(w)     (t<S==d> = A u, pulled: no atomics)
//                            then at once, v ≠ s: bc(v) += ω(s) (σ̂(v) t(v) [+ 1 with
//                            endpoints]) and t(v) := u(v); edge sums: ω σ̂(v) 2^-shift u(w)
// then the block clears only the rows it touched (the vertices in `order`; t needs no clearing:
// the deepest level's u = τ/σ̂ is written first, and every other level's as it is swept).
//
// Keeping u(v) in t(v) once v's level is swept (issue 47, docs/deep-graphs.md "Sources that
// share their reads") lets a parent read one word of a child, where it read σ̂(w), t(w) and
// τ(w): with t left uncleared, road1000's sweep 454 -> 339 s and del20's 376 -> 288 s (scaled,
// one H200). A parent reads only children, a level deeper and done, so no thread reads a t(v)
// that another is writing; every sum keeps its operations and their order, so the sums are
// those of reading σ̂, t and τ to the last bit.
//
// Phases (run.phase): FRONTIER_WHOLE sweeps as above, the blocks taking sources from the
// counter. A phased run (per-slot target weights, chain folding: turbobc/engines/gpu/
// frontiers_slots.py) launches a block per slot twice: FRONTIER_FORWARD sweeps forward and keeps
// the rows (the depth in work.depth), the host writes each slot's τ row from what the forward
// sweeps of a chain's two ends found (chains.cu, bcc_frontier_terms), and FRONTIER_BACKWARD
// sweeps backward with τ + b n (run.tau_stride = n), adds to bc and clears the rows.
//
// FRONTIER_PROFILE 1 (bench/frontier_profile.py): block 0 records its first source's levels in
// work.profile while every other block sweeps as usual, so the times are those of a loaded
// device: forward level d at 3d (clock64 cycles, the level's vertices, their out-edges),
// backward level L at 3(n + 2) + 3L (the same), then the depth, the source's cycles and the
// source (its new id: block 0 takes the first source that no other block took before it).
#include "accumulate.cuh"
#include "common.cuh"
#include "views.cuh"

#define FRONTIER_THREADS 256
#ifndef FRONTIER_MIN_BLOCKS
#define FRONTIER_MIN_BLOCKS 3  // blocks a multiprocessor is compiled to hold (80 registers)
#endif
#ifndef FRONTIER_BATCH
#define FRONTIER_BATCH 6  // a thread reads this many edges' heads (and their levels) at once
#endif
#ifndef FRONTIER_WARP_SPLIT
#define FRONTIER_WARP_SPLIT 1  // vertices of more than 32 out-edges worked by a whole warp
#endif
#ifndef FRONTIER_PROFILE
#define FRONTIER_PROFILE 0  // 1: block 0 records its first source's levels (see above)
#endif
#define FRONTIER_WHOLE 0     // run.phase: every source forward and backward, from the counter
#define FRONTIER_FORWARD 1   // block b sweeps slot b forward and keeps its rows
#define FRONTIER_BACKWARD 2  // block b sweeps slot b backward from the rows kept, then clears

namespace tbc {

// Items lo .. hi − 1 of a block over its warps (common.cuh, warp_split), or with
// FRONTIER_WARP_SPLIT 0 a thread each whatever their degree.
template <typename Wide, typename OnWarp, typename OnThread>
__device__ __forceinline__ void block_split(long long lo, long long hi, Wide wide,
                                            OnWarp on_warp, OnThread on_thread) {
#if FRONTIER_WARP_SPLIT
    warp_split(lo, hi, threadIdx.x >> 5, blockDim.x >> 5, wide, on_warp, on_thread);
#else
    for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        on_thread(i);
    }
#endif
}

constexpr long long FRONTIER_WARP_DEGREE = 32;  // a vertex of more out-edges: a whole warp

}  // namespace tbc

template <typename I>
__global__ void __launch_bounds__(FRONTIER_THREADS, FRONTIER_MIN_BLOCKS)
bcf_sweep(tbc::FrontierGraph<I> g, tbc::FrontierWork<I> work, tbc::FrontierRun run) {
    const long long n = g.n;
    const long long row = (long long)blockIdx.x * n;
    int* level = work.level + row;
    double* sigma = work.sigma + row;
    double* t = work.t + row;
    I* order = work.order + row;
    I* start = work.start + (long long)blockIdx.x * (n + 2);
    int* shifts = work.shifts + (long long)blockIdx.x * (n + 2);
    double* bc = work.bc + row;
    const I* __restrict__ ptr = g.ptr;
    const I* __restrict__ idx = g.idx;
    __shared__ long long source_index;
    __shared__ unsigned long long count;     // the vertices in order
    __shared__ int may_overflow;             // a push this level may have passed the limit
    __shared__ int too_wide;                 // a scaled count fell below wide_below
    __shared__ unsigned long long max_bits;  // the level's largest σ̂, as its bit pattern
    auto degree = [&](I v) { return (long long)(__ldg(ptr + v + 1) - __ldg(ptr + v)); };
    auto is_wide = [&](long long i) { return degree(order[i]) > tbc::FRONTIER_WARP_DEGREE; };
    const long long backward_at = 3 * (n + 2);  // profile builds: the backward levels' place
#if FRONTIER_PROFILE
    __shared__ unsigned long long level_edges;
    bool profiling = work.profile != nullptr && blockIdx.x == 0;  // its first source only
    long long level_began = 0, source_began = clock64();
    // thread 0 opens a level (before the barrier that starts it), every thread counts the
    // out-edges of the vertices it takes, thread 0 closes it (after the barrier that ends it)
    auto open_level = [&]() {
        if (profiling && threadIdx.x == 0) {
            level_edges = 0;
            level_began = clock64();
        }
    };
    auto count_edges = [&](long long edges) {
        if (profiling) {
            atomicAdd(&level_edges, (unsigned long long)edges);
        }
    };
    auto close_level = [&](long long at, long long vertices) {
        if (profiling && threadIdx.x == 0) {
            work.profile[at] = clock64() - level_began;
            work.profile[at + 1] = vertices;
            work.profile[at + 2] = (long long)level_edges;
        }
    };
#else
    auto open_level = [&]() {};
    auto count_edges = [&](long long) {};
    auto close_level = [&](long long, long long) {};
#endif

    const int phase = run.phase;
    // a slot's own target weights (a phased run), or the run's
    const double* tau = run.tau == nullptr ? nullptr
                                           : run.tau + run.tau_stride * (long long)blockIdx.x;
    bool took_slot = false;
    while (true) {
        if (threadIdx.x == 0) {
            source_index = phase == FRONTIER_WHOLE ? (long long)atomicAdd(work.next, 1ull)
                           : took_slot             ? run.nsrc
                                                   : (long long)blockIdx.x;
        }
        took_slot = true;
        __syncthreads();
        if (source_index >= run.nsrc) {
            break;  // uniform
        }
        const I s = (I)run.sources[source_index];
        int depth;
        long long reached;
        bool wide = false;
        if (phase == FRONTIER_BACKWARD) {
            // the forward launch's rows: its depth, and the vertices it reached
            depth = work.depth[blockIdx.x];
            reached = (long long)start[depth + 1];
        } else {
            if (threadIdx.x == 0) {
                level[s] = 0;
                sigma[s] = 1.0;
                order[0] = s;
                start[0] = 0;
                start[1] = 1;
                shifts[0] = 0;
                count = 1;
                too_wide = 0;
            }
            __syncthreads();

            // ---- forward: f<¬σ> = Aᵀ f ; σ += f ; S<f> = d + 1, pushed from the queue of level d
            int d = 0;
            while (true) {
                const long long lo = start[d], hi = start[d + 1];
                if (threadIdx.x == 0) {
                    may_overflow = 0;
                    max_bits = 0;
                }
                open_level();
                __syncthreads();
                // the edge v -> w of a vertex v of level d: w joins level d + 1 (the queue) when
                // unreached, and gets σ̂(v) when it is on level d + 1
                // (lw: the level of w as read, stale only as -1 where another thread just
                // claimed w)
                auto push_seen = [&](I w, int lw, double x) {
                    if (lw == -1) {
                        lw = atomicCAS(level + w, -1, d + 1);
                        if (lw == -1) {
                            order[atomicAdd(&count, 1ull)] = w;
                            lw = d + 1;
                        }
                    }
                    if (lw == d + 1) {
                        atomicAdd(sigma + w, x);
                        if (x > g.small_count) {
                            may_overflow = 1;  // σ̂(w) <= in-degree · max x: the limit may be near
                        }
                    }
                };
                auto push = [&](I w, double x) { push_seen(w, level[w], x); };
                tbc::block_split(
                    lo, hi, is_wide,
                    [&](long long i, int lane) {
                        const I v = order[i];
                        const double x = sigma[v];
                        const I end = __ldg(ptr + v + 1);
                        if (lane == 0) {
                            count_edges(end - __ldg(ptr + v));
                        }
                        for (I e = __ldg(ptr + v) + (I)lane; e < end; e += 32) {
                            push(__ldg(idx + e), x);
                        }
                    },
                    [&](long long i) {
                        const I v = order[i];
                        const double x = sigma[v];
                        const I end = __ldg(ptr + v + 1);
                        count_edges(end - __ldg(ptr + v));
                        // FRONTIER_BATCH edges at a time: their heads, then their levels, each a
                        // round of independent loads, then the pushes
                        for (I e = __ldg(ptr + v); e < end; e += FRONTIER_BATCH) {
                            I w[FRONTIER_BATCH];
                            int lw[FRONTIER_BATCH];
    #pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                w[k] = e + k < end ? __ldg(idx + e + k) : I(-1);
                            }
    #pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                lw[k] = w[k] >= 0 ? level[w[k]] : -2;
                            }
    #pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                if (w[k] >= 0) {
                                    push_seen(w[k], lw[k], x);
                                }
                            }
                        }
                    });
                __syncthreads();
                const long long next_end = (long long)count;
                if (next_end == hi) {
                    close_level(3LL * d, hi - lo);
                    break;  // uniform: level d + 1 is empty, d is the deepest
                }
                int shift = 0;
                if (may_overflow) {  // uniform
                    // σ̂<S==d+1> *= 2^-shift with shift = floor(log2 max σ̂<S==d+1>), exact
                    for (long long i = hi + threadIdx.x; i < next_end; i += blockDim.x) {
                        atomicMax(&max_bits, tbc::order_bits(sigma[order[i]]));
                    }
                    __syncthreads();
                    const double largest = tbc::from_order_bits(max_bits, 0.0);
                    if (largest > tbc::overflow_limit<double>()) {
                        shift = ilogb(largest);
                        for (long long i = hi + threadIdx.x; i < next_end; i += blockDim.x) {
                            const I w = order[i];
                            const double scaled = scalbn(sigma[w], -shift);
                            sigma[w] = scaled;
                            if (scaled < tbc::wide_below<double>()) {
                                too_wide = 1;
                            }
                        }
                    }
                }
                if (threadIdx.x == 0) {
                    start[d + 2] = (I)next_end;
                    shifts[d + 1] = shift;
                }
                __syncthreads();
                close_level(3LL * d, hi - lo);
                ++d;
                if (too_wide) {
                    break;  // uniform: this source goes to the exponent sweep
                }
            }
            depth = d;
            reached = (long long)count;
            wide = too_wide != 0;
            if (phase == FRONTIER_FORWARD) {
                if (threadIdx.x == 0) {
                    work.depth[blockIdx.x] = depth;
                    if (wide) {  // the host declines the phased run (the rows are let go)
                        work.wide[atomicAdd(work.wide_count, 1ull)] = (long long)s;
                    }
                }
                continue;  // the rows stay for the backward launch
            }
        }  // forward

        if (!wide) {  // uniform
            // ---- backward: t<S==L> = 2^-shift_{L+1} A u, u = τ/σ̂ + t (accumulate.cuh), pulled
            // by each vertex of level L from its children on level L + 1; level 0 (the source)
            // only feeds the edge sums
            const double omega = tbc::source_weight(run.omega, (long long)s);
            const bool edges = run.edge != nullptr;
            const bool endpoints = run.endpoints != 0;
            // the deepest level has no children: t = 0, so u = τ/σ̂ and bc += ω [endpoints]
            if (depth >= 1) {
                for (long long i = start[depth] + threadIdx.x; i < start[depth + 1];
                     i += blockDim.x) {
                    const I v = order[i];
                    const double sv = sigma[v];
                    bc[v] += omega * tbc::dependency_term(sv, 0.0, endpoints);
                    t[v] = tbc::parent_share(tau, v, sv, 0.0);
                }
                __syncthreads();
            }
            for (int L = depth - 1; L >= (edges ? 0 : 1); --L) {
                const double scale = scalbn(1.0, -shifts[L + 1]);
                const long long lo = start[L], hi = start[L + 1];
                open_level();
#if FRONTIER_PROFILE
                __syncthreads();  // the count is reset before any thread adds to it
#endif
                // v's t(v) = acc 2^-shift is known: add v's term to bc and keep u(v) in its
                // place (level 0, the source, adds nothing and hands nothing on)
                auto settle = [&](I v, double sv, double acc) {
                    const double tv = acc * scale;
                    if (L >= 1) {
                        bc[v] += omega * tbc::dependency_term(sv, tv, endpoints);
                        t[v] = tbc::parent_share(tau, v, sv, tv);
                    }
                };
                // the share u(w) of child w (edge e = v -> w, L(w) = L + 1) in t(v), and the
                // edge's sum
                auto pull = [&](I v, I e, double sv, double& acc) {
                    const I w = __ldg(idx + e);
                    if (level[w] == L + 1) {
                        const double u = t[w];
                        acc += u;
                        if (edges) {
                            atomicAdd(run.edge + e, omega * sv * scale * u);
                        }
                    }
                };
                tbc::block_split(
                    lo, hi, is_wide,
                    [&](long long i, int lane) {
                        const I v = order[i];
                        const double sv = sigma[v];
                        double acc = 0.0;
                        const I end = __ldg(ptr + v + 1);
                        if (lane == 0) {
                            count_edges(end - __ldg(ptr + v));
                        }
                        for (I e = __ldg(ptr + v) + (I)lane; e < end; e += 32) {
                            pull(v, e, sv, acc);
                        }
                        acc = tbc::warp_allsum(acc);
                        if (lane == 0) {
                            settle(v, sv, acc);
                        }
                    },
                    [&](long long i) {
                        const I v = order[i];
                        const double sv = sigma[v];
                        double acc = 0.0;
                        const I end = __ldg(ptr + v + 1);
                        count_edges(end - __ldg(ptr + v));
                        // FRONTIER_BATCH edges at a time: heads, then their levels, then the
                        // children's shares u(w), each a round of independent loads
                        for (I e = __ldg(ptr + v); e < end; e += FRONTIER_BATCH) {
                            I w[FRONTIER_BATCH];
                            bool child[FRONTIER_BATCH];
#pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                w[k] = e + k < end ? __ldg(idx + e + k) : I(-1);
                            }
#pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                child[k] = w[k] >= 0 && level[w[k]] == L + 1;
                            }
#pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                if (child[k]) {
                                    const double u = t[w[k]];
                                    acc += u;
                                    if (edges) {
                                        atomicAdd(run.edge + e + k, omega * sv * scale * u);
                                    }
                                }
                            }
                        }
                        settle(v, sv, acc);
                    });
                __syncthreads();
                close_level(backward_at + 3LL * L, hi - lo);
            }
            // endpoints: reached − 1 for s (every other reached vertex added its own term)
            if (endpoints && threadIdx.x == 0) {
                bc[s] += omega * (double)(reached - 1);
            }
        } else if (threadIdx.x == 0) {
            // the counts spread wider than per-level scaling holds: nothing of this source
            // was added; the host sweeps it with an exponent per vertex (engines/wide.py)
            work.wide[atomicAdd(work.wide_count, 1ull)] = (long long)s;
        }
        __syncthreads();
        // clear only what this source touched
        for (long long i = threadIdx.x; i < reached; i += blockDim.x) {
            const I v = order[i];
            level[v] = -1;
            sigma[v] = 0.0;
        }
        __syncthreads();
#if FRONTIER_PROFILE
        if (profiling && threadIdx.x == 0) {
            work.profile[2 * backward_at] = depth;
            work.profile[2 * backward_at + 1] = clock64() - source_began;
            work.profile[2 * backward_at + 2] = s;  // whichever source the block took first
        }
        profiling = false;
#endif
    }
}
