// What every kernel family shares: the software grid barrier of a persistent launch, warp
// reductions, and the overflow tests of per-level count scaling (their limits: ctl.cuh).
//
// Families: single.cuh (one source per sweep: sccsc.cu, sccooc.cu, vecsc.cu) and batched.cuh
// (many sources per sweep: batched.cu). accumulate.cuh holds the one accumulate step of the
// backward sweep that both use; views.cuh the structs their entry points take.
#pragma once

#include "ctl.cuh"

#define TBC_FULL_MASK 0xffffffffu

namespace tbc {

// Vectors written during a launch (S, σ, t) are read with ordinary loads: within a phase the
// values a thread acts on are not written by others (the benign exceptions are commented where
// they occur), and the gpu-scope fence of the grid barrier orders each phase after the last.
template <typename T>
__device__ __forceinline__ T load_cg(const T* p) { return *p; }

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

// Items lo .. hi − 1 a warp at a time, warp `warp` of `warps` taking every warps-th run of 32:
// lane l takes item first + l; the items for which wide(i) holds are then worked one after
// another by the whole warp, on_warp(i, lane) on every lane, and the others by their own lane,
// on_thread(i). The layers family spreads a launch's slots over every warp of the grid
// (layers.cuh), the frontiers family a level's vertices over the warps of a block.
template <typename Wide, typename OnWarp, typename OnThread>
__device__ __forceinline__ void warp_split(long long lo, long long hi, long long warp,
                                           long long warps, Wide wide, OnWarp on_warp,
                                           OnThread on_thread) {
    const int lane = threadIdx.x & 31;
    for (long long first = lo + (warp << 5); first < hi; first += warps << 5) {
        const long long i = first + lane;
        const bool mine_wide = i < hi && wide(i);
        for (unsigned pending = __ballot_sync(TBC_FULL_MASK, mine_wide); pending;
             pending &= pending - 1u) {
            on_warp(first + (__ffs(pending) - 1), lane);
        }
        if (i < hi && !mine_wide) {
            on_thread(i);
        }
    }
}

// Sum over a warp, result in lane 0 (TurboBC paper, Algorithm 4, lines 17 to 21).
template <typename V>
__device__ __forceinline__ V warp_sum(V x) {
    for (int off = 16; off > 0; off >>= 1) {
        x += __shfl_down_sync(TBC_FULL_MASK, x, off);
    }
    return x;
}

// Sum of a double over the warp, result in every lane.
__device__ __forceinline__ double warp_allsum(double x) {
    for (int off = 16; off > 0; off >>= 1) {
        x += __shfl_xor_sync(TBC_FULL_MASK, x, off);
    }
    return x;
}

// Sums of two doubles over the warp in one butterfly (five shuffles for both): every lane of
// 0-15 gets Σ x, every lane of 16-31 gets Σ y. The first step swaps the halves' other value,
// so that each half goes on with one sum.
__device__ __forceinline__ double warp_sum2(double x, double y, int lane) {
    const bool upper = (lane & 16) != 0;
    double s = (upper ? y : x) + __shfl_xor_sync(TBC_FULL_MASK, upper ? x : y, 16);
    for (int off = 8; off > 0; off >>= 1) {
        s += __shfl_xor_sync(TBC_FULL_MASK, s, off);
    }
    return s;
}

}  // namespace tbc
