// What the layers family's kernels share (distances.cu, marks.cu, layers.cu, block_sweep.cu;
// launched by spmv/_layers.py): slots, the work split by degree, the appends, and the one test
// of a shortest-path DAG edge.
//
// A batch of B sources keeps one slot per (source, vertex): slot b * n + v. dist holds the
// B x n float64 distances, as their bit patterns where they are being lowered: for non-negative
// doubles (+inf included) the order of the bit patterns as unsigned 64-bit integers is the
// order of the values, so atomicMin on the pattern is a float64 min. Edge lengths are positive
// and finite (turbobc._validation; all 1.0 for unweighted BC), a source starts at +0.0.
#pragma once

#include "accumulate.cuh"
#include "common.cuh"
#include "views.cuh"

namespace tbc {

// An edge v -> w of length len lies on a shortest path from the source when
// d(v) + len(v, w) == d(w), in exact float64 equality: the test of the CPU engine, of
// engines/wide.py and of networkx's Dijkstra (ties only where the float64 sums agree).
__device__ __forceinline__ bool dag_edge(double dv, double len, double dw) {
    return dv + len == dw;
}

// Append value to list[0 .. *count), one atomicAdd per warp: the threads that append at the
// same instruction take consecutive places after the one their leader reserved for all.
__device__ __forceinline__ void warp_append(long long* list, unsigned long long* count,
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

// Items 0 .. count − 1 over every warp of the grid (common.cuh, warp_split; blockDim.x a
// multiple of 32).
template <typename Wide, typename OnWarp, typename OnThread>
__device__ __forceinline__ void split_by_degree(long long count, Wide wide, OnWarp on_warp,
                                                OnThread on_thread) {
    warp_split(0, count, ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5,
               ((long long)gridDim.x * blockDim.x) >> 5, wide, on_warp, on_thread);
}

// Whether the vertex of slot key (key % n) has more than WARP_DEGREE out-edges.
template <typename I>
__device__ __forceinline__ bool wide_slot(const I* __restrict__ ptr, long long n, long long key) {
    const long long v = key % n;
    return (long long)(__ldg(ptr + v + 1) - __ldg(ptr + v)) > WARP_DEGREE;
}

}  // namespace tbc
