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
#ifndef FRONTIER_GROUP
#define FRONTIER_GROUP 1  // sources a block sweeps together, their rows interleaved (see above)
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

// The levels of one vertex for the G sources of a group (G consecutive ints, 4 G bytes
// aligned): one load where G is 2 or a multiple of 4.
template <int G>
__device__ __forceinline__ void group_levels(const int* p, int (&out)[G]) {
    if constexpr (G % 4 == 0) {
#pragma unroll
        for (int q = 0; q < G / 4; ++q) {
            const int4 x = reinterpret_cast<const int4*>(p)[q];
            out[4 * q] = x.x;
            out[4 * q + 1] = x.y;
            out[4 * q + 2] = x.z;
            out[4 * q + 3] = x.w;
        }
    } else if constexpr (G == 2) {
        const int2 x = *reinterpret_cast<const int2*>(p);
        out[0] = x.x;
        out[1] = x.y;
    } else {
#pragma unroll
        for (int j = 0; j < G; ++j) {
            out[j] = p[j];
        }
    }
}

}  // namespace tbc

template <typename I>
__global__ void __launch_bounds__(FRONTIER_THREADS, FRONTIER_MIN_BLOCKS)
bcf_sweep(tbc::FrontierGraph<I> g, tbc::FrontierWork<I> work, tbc::FrontierRun run) {
    constexpr int G = FRONTIER_GROUP;  // the sources a block sweeps together
    const long long n = g.n;
    const long long row = (long long)blockIdx.x * n;
    int* level = work.level + G * row;    // L_j(v) at G v + j
    double* sigma = work.sigma + G * row;  // σ̂_j(v) at G v + j
    double* t = work.t + G * row;          // t_j(v), then u_j(v), at G v + j
    I* order = work.order + G * row;       // the steps' entries: at most G n
    I* start = work.start + (long long)blockIdx.x * (n + 2);
    int* shifts = work.shifts + (long long)blockIdx.x * G * (n + 2);  // source j's at j (n + 2)
    int* queued = G == 1 ? nullptr : work.queued + row;  // the last step v was queued at, or -1
    double* bc = work.bc + row;
    const I* __restrict__ ptr = g.ptr;
    const I* __restrict__ idx = g.idx;
    __shared__ long long source_index;       // the group's first source in run.sources
    __shared__ long long group[G];           // the group's sources, -1 past the run's end
    __shared__ double group_omega[G];        // their source weights ω_j
    __shared__ double scale_of[2][G];        // backward: 2^-shift_j(L + 1) of step L at [L & 1]
    __shared__ unsigned long long count;     // the entries in order
    __shared__ unsigned long long reached_by[G];  // G > 1, endpoints: the vertices j reached
    __shared__ int may_overflow;             // bit j: a push of source j this step may have
                                             // passed the limit
    __shared__ int too_wide;                 // a scaled count fell below wide_below
    __shared__ unsigned long long max_bits[G];  // the step's largest σ̂_j, as bit patterns
    auto degree = [&](I v) { return (long long)(__ldg(ptr + v + 1) - __ldg(ptr + v)); };
    auto is_wide = [&](long long i) { return degree(order[i]) > tbc::FRONTIER_WARP_DEGREE; };
    // the sources of the group whose level at entry v is `step` (G = 1: the entries of a step
    // are its level's vertices, so always)
    auto active_at = [&](I v, int step, bool (&active)[G]) {
        if constexpr (G == 1) {
            active[0] = true;
        } else {
            int lv[G];
            tbc::group_levels<G>(level + G * (long long)v, lv);
#pragma unroll
            for (int j = 0; j < G; ++j) {
                active[j] = lv[j] == step;
            }
        }
    };
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
    const bool endpoints = run.endpoints != 0;
    // a slot's own target weights (a phased run), or the run's
    const double* tau = run.tau == nullptr ? nullptr
                                           : run.tau + run.tau_stride * (long long)blockIdx.x;
    bool took_slot = false;
    while (true) {
        if (threadIdx.x == 0) {
            source_index = phase == FRONTIER_WHOLE ? G * (long long)atomicAdd(work.next, 1ull)
                           : took_slot             ? run.nsrc
                                                   : (long long)blockIdx.x;
            for (int j = 0; j < G; ++j) {
                const long long at = source_index + j;
                group[j] = at < run.nsrc ? run.sources[at] : -1;
                group_omega[j] = at < run.nsrc ? tbc::source_weight(run.omega, group[j]) : 0.0;
            }
        }
        took_slot = true;
        __syncthreads();
        if (source_index >= run.nsrc) {
            break;  // uniform
        }
        int depth;
        long long entries;
        bool wide = false;
        if (phase == FRONTIER_BACKWARD) {
            // the forward launch's rows: its depth, and the vertices it reached
            depth = work.depth[blockIdx.x];
            entries = (long long)start[depth + 1];
        } else {
            if (threadIdx.x == 0) {
                count = 0;
                for (int j = 0; j < G; ++j) {
                    const I s = (I)group[j];
                    if (s < 0) {
                        continue;
                    }
                    level[G * (long long)s + j] = 0;
                    sigma[G * (long long)s + j] = 1.0;
                    shifts[j * (n + 2)] = 0;
                    reached_by[j] = 1;
                    if (G == 1 || queued[s] != 0) {  // distinct sources: always
                        if (G > 1) {
                            queued[s] = 0;
                        }
                        order[count++] = s;
                    }
                }
                start[0] = 0;
                start[1] = (I)count;
                too_wide = 0;
            }
            __syncthreads();

            // ---- forward: f<¬σ> = Aᵀ f ; σ += f ; S<f> = d + 1, pushed from the queue of step d
            // (each source of the group its own f, σ and S, at G v + j)
            int d = 0;
            while (true) {
                const long long lo = start[d], hi = start[d + 1];
                if (threadIdx.x == 0) {
                    may_overflow = 0;
                    for (int j = 0; j < G; ++j) {
                        max_bits[j] = 0;
                    }
                }
                open_level();
                __syncthreads();
                // the edge v -> w of a vertex v of level d from source j: w joins level d + 1
                // (and step d + 1's queue, once for the group) when unreached, and gets σ̂_j(v)
                // when it is on level d + 1 (lw: the level of w as read, stale only as -1
                // where another thread just claimed w)
                auto push_seen = [&](int j, I w, int lw, double x) {
                    if (lw == -1) {
                        lw = atomicCAS(level + G * (long long)w + j, -1, d + 1);
                        if (lw == -1) {
                            if (G == 1 || atomicMax(queued + w, d + 1) < d + 1) {
                                order[atomicAdd(&count, 1ull)] = w;
                            }
                            if (G > 1 && endpoints) {
                                atomicAdd(&reached_by[j], 1ull);
                            }
                            lw = d + 1;
                        }
                    }
                    if (lw == d + 1) {
                        atomicAdd(sigma + G * (long long)w + j, x);
                        if (x > g.small_count) {
                            // σ̂(w) <= in-degree · max x: the limit may be near
                            atomicOr(&may_overflow, 1 << j);
                        }
                    }
                };
                // an entry's sources on level d and their counts
                auto take = [&](I v, bool (&active)[G], double (&x)[G]) {
                    active_at(v, d, active);
#pragma unroll
                    for (int j = 0; j < G; ++j) {
                        x[j] = active[j] ? sigma[G * (long long)v + j] : 0.0;
                    }
                };
                tbc::block_split(
                    lo, hi, is_wide,
                    [&](long long i, int lane) {
                        const I v = order[i];
                        bool active[G];
                        double x[G];
                        take(v, active, x);
                        const I end = __ldg(ptr + v + 1);
                        if (lane == 0) {
                            count_edges(end - __ldg(ptr + v));
                        }
                        for (I e = __ldg(ptr + v) + (I)lane; e < end; e += 32) {
                            const I w = __ldg(idx + e);
                            int lw[G];
                            tbc::group_levels<G>(level + G * (long long)w, lw);
#pragma unroll
                            for (int j = 0; j < G; ++j) {
                                if (active[j]) {
                                    push_seen(j, w, lw[j], x[j]);
                                }
                            }
                        }
                    },
                    [&](long long i) {
                        const I v = order[i];
                        bool active[G];
                        double x[G];
                        take(v, active, x);
                        const I end = __ldg(ptr + v + 1);
                        count_edges(end - __ldg(ptr + v));
                        // FRONTIER_BATCH edges at a time: their heads, then their levels, each a
                        // round of independent loads, then the pushes
                        for (I e = __ldg(ptr + v); e < end; e += FRONTIER_BATCH) {
                            I w[FRONTIER_BATCH];
                            int lw[FRONTIER_BATCH][G];
#pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                w[k] = e + k < end ? __ldg(idx + e + k) : I(-1);
                            }
#pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                if (w[k] >= 0) {
                                    tbc::group_levels<G>(level + G * (long long)w[k], lw[k]);
                                }
                            }
#pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                if (w[k] >= 0) {
#pragma unroll
                                    for (int j = 0; j < G; ++j) {
                                        if (active[j]) {
                                            push_seen(j, w[k], lw[k][j], x[j]);
                                        }
                                    }
                                }
                            }
                        }
                    });
                __syncthreads();
                const long long next_end = (long long)count;
                if (next_end == hi) {
                    close_level(3LL * d, hi - lo);
                    break;  // uniform: step d + 1 is empty, d is the deepest
                }
                const int overflowing = may_overflow;
                if (overflowing) {  // uniform
                    // σ̂_j<S_j==d+1> *= 2^-shift_j with shift_j = floor(log2 max σ̂_j<S_j==d+1>),
                    // exact, for each source j whose pushes may have passed the limit
                    for (long long i = hi + threadIdx.x; i < next_end; i += blockDim.x) {
                        const I w = order[i];
                        bool on_next[G];
                        active_at(w, d + 1, on_next);
                        for (int j = 0; j < G; ++j) {
                            if ((overflowing >> j & 1) && on_next[j]) {
                                atomicMax(&max_bits[j],
                                          tbc::order_bits(sigma[G * (long long)w + j]));
                            }
                        }
                    }
                    __syncthreads();
                }
                for (int j = 0; j < G; ++j) {
                    int shift = 0;
                    const double largest = tbc::from_order_bits(max_bits[j], 0.0);
                    if ((overflowing >> j & 1) && largest > tbc::overflow_limit<double>()) {
                        shift = ilogb(largest);
                        for (long long i = hi + threadIdx.x; i < next_end; i += blockDim.x) {
                            const I w = order[i];
                            bool on_next[G];
                            active_at(w, d + 1, on_next);
                            if (on_next[j]) {
                                const double scaled = scalbn(sigma[G * (long long)w + j], -shift);
                                sigma[G * (long long)w + j] = scaled;
                                if (scaled < tbc::wide_below<double>()) {
                                    too_wide = 1;
                                }
                            }
                        }
                    }
                    if (threadIdx.x == 0) {
                        shifts[j * (n + 2) + d + 1] = shift;
                    }
                }
                if (threadIdx.x == 0) {
                    start[d + 2] = (I)next_end;
                }
                __syncthreads();
                close_level(3LL * d, hi - lo);
                ++d;
                if (too_wide) {
                    break;  // uniform: this group goes to the exponent sweep
                }
            }
            depth = d;
            entries = (long long)count;
            wide = too_wide != 0;
            if (phase == FRONTIER_FORWARD) {
                if (threadIdx.x == 0) {
                    work.depth[blockIdx.x] = depth;
                    if (wide) {  // the host declines the phased run (the rows are let go)
                        work.wide[atomicAdd(work.wide_count, 1ull)] = group[0];
                    }
                }
                continue;  // the rows stay for the backward launch
            }
        }  // forward

        if (!wide) {  // uniform
            // ---- backward: t_j<S_j==L> = 2^-shift_j(L+1) A u_j, u_j = τ/σ̂_j + t_j
            // (accumulate.cuh), pulled by each entry of step L from its children on level L + 1
            // of each source j whose level it is on; level 0 (a source) only feeds the edge sums
            const bool edges = run.edge != nullptr;
            // the deepest step has no children: t = 0, so u = τ/σ̂ and bc += ω [endpoints]
            if (depth >= 1) {
                for (long long i = start[depth] + threadIdx.x; i < start[depth + 1];
                     i += blockDim.x) {
                    const I v = order[i];
                    bool active[G];
                    active_at(v, depth, active);
#pragma unroll
                    for (int j = 0; j < G; ++j) {
                        if (active[j]) {
                            const double sv = sigma[G * (long long)v + j];
                            bc[v] += group_omega[j] * tbc::dependency_term(sv, 0.0, endpoints);
                            t[G * (long long)v + j] = tbc::parent_share(tau, v, sv, 0.0);
                        }
                    }
                }
            }
            // the scales of the first step swept (those of a step L - 1 are written while step
            // L is swept, into the other half)
            if (threadIdx.x == 0 && depth >= 1) {
                for (int j = 0; j < G; ++j) {
                    scale_of[(depth - 1) & 1][j] = scalbn(1.0, -shifts[j * (n + 2) + depth]);
                }
            }
            __syncthreads();
            for (int L = depth - 1; L >= (edges ? 0 : 1); --L) {
                const double* scale = scale_of[L & 1];
                if (threadIdx.x == 0 && L >= 1) {
                    for (int j = 0; j < G; ++j) {
                        scale_of[(L - 1) & 1][j] = scalbn(1.0, -shifts[j * (n + 2) + L]);
                    }
                }
                const long long lo = start[L], hi = start[L + 1];
                open_level();
#if FRONTIER_PROFILE
                __syncthreads();  // the count is reset before any thread adds to it
#endif
                // t_j(v) = acc_j 2^-shift_j is known: add v's term to bc and keep u_j(v) in its
                // place (level 0, a source, adds nothing and hands nothing on)
                auto settle = [&](int j, I v, double sv, double acc) {
                    const double tv = acc * scale[j];
                    if (L >= 1) {
                        bc[v] += group_omega[j] * tbc::dependency_term(sv, tv, endpoints);
                        t[G * (long long)v + j] = tbc::parent_share(tau, v, sv, tv);
                    }
                };
                // an entry's sources on level L and their counts
                auto take = [&](I v, bool (&active)[G], double (&sv)[G]) {
                    active_at(v, L, active);
#pragma unroll
                    for (int j = 0; j < G; ++j) {
                        sv[j] = active[j] ? sigma[G * (long long)v + j] : 0.0;
                    }
                };
                // the shares u_j(w) of child w (edge e = v -> w, L_j(w) = L + 1) in acc_j, and
                // the edge's sum over the group
                auto pull = [&](I e, I w, const int (&lw)[G], const bool (&active)[G],
                                const double (&sv)[G], double (&acc)[G]) {
                    double edge_sum = 0.0;
                    bool any = false;
#pragma unroll
                    for (int j = 0; j < G; ++j) {
                        if (active[j] && lw[j] == L + 1) {
                            const double u = t[G * (long long)w + j];
                            acc[j] += u;
                            edge_sum += group_omega[j] * sv[j] * scale[j] * u;
                            any = true;
                        }
                    }
                    if (edges && any) {
                        atomicAdd(run.edge + e, edge_sum);
                    }
                };
                tbc::block_split(
                    lo, hi, is_wide,
                    [&](long long i, int lane) {
                        const I v = order[i];
                        bool active[G];
                        double sv[G], acc[G];
                        take(v, active, sv);
#pragma unroll
                        for (int j = 0; j < G; ++j) {
                            acc[j] = 0.0;
                        }
                        const I end = __ldg(ptr + v + 1);
                        if (lane == 0) {
                            count_edges(end - __ldg(ptr + v));
                        }
                        for (I e = __ldg(ptr + v) + (I)lane; e < end; e += 32) {
                            const I w = __ldg(idx + e);
                            int lw[G];
                            tbc::group_levels<G>(level + G * (long long)w, lw);
                            pull(e, w, lw, active, sv, acc);
                        }
#pragma unroll
                        for (int j = 0; j < G; ++j) {
                            acc[j] = tbc::warp_allsum(acc[j]);
                            if (lane == 0 && active[j]) {
                                settle(j, v, sv[j], acc[j]);
                            }
                        }
                    },
                    [&](long long i) {
                        const I v = order[i];
                        bool active[G];
                        double sv[G], acc[G];
                        take(v, active, sv);
#pragma unroll
                        for (int j = 0; j < G; ++j) {
                            acc[j] = 0.0;
                        }
                        const I end = __ldg(ptr + v + 1);
                        count_edges(end - __ldg(ptr + v));
                        // FRONTIER_BATCH edges at a time: heads, then their levels, then the
                        // children's shares u(w), each a round of independent loads
                        for (I e = __ldg(ptr + v); e < end; e += FRONTIER_BATCH) {
                            I w[FRONTIER_BATCH];
                            int lw[FRONTIER_BATCH][G];
#pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                w[k] = e + k < end ? __ldg(idx + e + k) : I(-1);
                            }
#pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                if (w[k] >= 0) {
                                    tbc::group_levels<G>(level + G * (long long)w[k], lw[k]);
                                }
                            }
#pragma unroll
                            for (int k = 0; k < FRONTIER_BATCH; ++k) {
                                if (w[k] >= 0) {
                                    pull(e + k, w[k], lw[k], active, sv, acc);
                                }
                            }
                        }
#pragma unroll
                        for (int j = 0; j < G; ++j) {
                            if (active[j]) {
                                settle(j, v, sv[j], acc[j]);
                            }
                        }
                    });
                __syncthreads();
                close_level(backward_at + 3LL * L, hi - lo);
            }
            // endpoints: reached − 1 for each source (every other reached vertex added its
            // own term)
            if (endpoints && threadIdx.x == 0) {
                for (int j = 0; j < G; ++j) {
                    if (group[j] >= 0) {
                        const long long reached = G == 1 ? entries : (long long)reached_by[j];
                        bc[group[j]] += group_omega[j] * (double)(reached - 1);
                    }
                }
            }
        } else if (threadIdx.x == 0) {
            // the counts spread wider than per-level scaling holds: nothing of this group was
            // added; the host sweeps its sources with an exponent per vertex (engines/wide.py)
            for (int j = 0; j < G; ++j) {
                if (group[j] >= 0) {
                    work.wide[atomicAdd(work.wide_count, 1ull)] = group[j];
                }
            }
        }
        __syncthreads();
        // clear only what this group touched
        for (long long i = threadIdx.x; i < entries; i += blockDim.x) {
            const I v = order[i];
#pragma unroll
            for (int j = 0; j < G; ++j) {
                level[G * (long long)v + j] = -1;
                sigma[G * (long long)v + j] = 0.0;
            }
            if (G > 1) {
                queued[v] = -1;
            }
        }
        __syncthreads();
#if FRONTIER_PROFILE
        if (profiling && threadIdx.x == 0) {
            work.profile[2 * backward_at] = depth;
            work.profile[2 * backward_at + 1] = clock64() - source_began;
            work.profile[2 * backward_at + 2] = group[0];  // whichever the block took first
        }
        profiling = false;
#endif
    }
}
