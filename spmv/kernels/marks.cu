// The slots a round of the layers family marked (distances.cu, layers.cu), listed in slot order
// by two launches and a prefix sum on the host (spmv/_layers.py, list_marks).
#include "common.cuh"

// ---- the marked slots of a round, in slot order ------------------------------------------------
//
// A marks round (bcl_relax) or a marked forward layer (bcl_forward) leaves marks[slot] = 1 (a byte, 0 or 1) for every slot it lowered. Two launches
// list them in slot order and clear them, reading the marks as 16-byte words: bcl_count_marks
// counts each block's marks (a 1 byte is one set bit, so a word's count is the popcount of its
// four 32-bit parts); the host turns the counts into each block's first place (an exclusive
// prefix sum); bcl_list_marks writes the slots of every word at its place within the block (a
// prefix sum over the block's threads) and zeroes the word. Padding past B x n stays zero.
// (The index type I is unused: every kernel of the family is instantiated per index type.)

#define MARK_THREADS 256

// The exclusive prefix sum of x over the block's threads (blockDim.x == MARK_THREADS); *total
// gets the block's sum.
__device__ __forceinline__ unsigned int block_exclusive_sum(unsigned int x, unsigned int* total) {
    __shared__ unsigned int warp_sums[MARK_THREADS / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned int inclusive = x;
    for (int offset = 1; offset < 32; offset <<= 1) {
        const unsigned int up = __shfl_up_sync(TBC_FULL_MASK, inclusive, offset);
        if (lane >= offset) inclusive += up;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        unsigned int sum = lane < MARK_THREADS / 32 ? warp_sums[lane] : 0u;
        for (int offset = 1; offset < 32; offset <<= 1) {
            const unsigned int up = __shfl_up_sync(TBC_FULL_MASK, sum, offset);
            if (lane >= offset) sum += up;
        }
        if (lane < MARK_THREADS / 32) warp_sums[lane] = sum;  // inclusive over the warps
    }
    __syncthreads();
    const unsigned int before = warp == 0 ? 0u : warp_sums[warp - 1];
    *total = warp_sums[MARK_THREADS / 32 - 1];
    return before + inclusive - x;
}

__device__ __forceinline__ unsigned int marks_in(const uint4 word) {
    return __popc(word.x) + __popc(word.y) + __popc(word.z) + __popc(word.w);
}

// counts[block] = the marks of the block's MARK_THREADS words.
template <typename I>
__global__ void bcl_count_marks(const uint4* __restrict__ marks, long long words,
                                unsigned int* counts) {
    const long long w = (long long)blockIdx.x * MARK_THREADS + threadIdx.x;
    const unsigned int mine = w < words ? marks_in(marks[w]) : 0u;
    unsigned int total;
    block_exclusive_sum(mine, &total);
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// keys[first[block] + ...] = the marked slots of the block's words, in order; the words zeroed.
template <typename I>
__global__ void bcl_list_marks(uint4* marks, long long words,
                               const long long* __restrict__ first, long long* keys) {
    const long long w = (long long)blockIdx.x * MARK_THREADS + threadIdx.x;
    const uint4 word = w < words ? marks[w] : make_uint4(0u, 0u, 0u, 0u);
    const unsigned int mine = marks_in(word);
    unsigned int total;
    long long at = first[blockIdx.x] + block_exclusive_sum(mine, &total);
    if (mine == 0u) return;
    const unsigned int parts[4] = {word.x, word.y, word.z, word.w};
    for (int part = 0; part < 4; ++part) {
        for (unsigned int bits = parts[part]; bits; bits &= bits - 1u) {
            // the set bit of byte j is bit 8 j: the slot is 16 w + 4 part + j
            keys[at++] = 16 * w + 4 * part + (__ffs(bits) - 1) / 8;
        }
    }
    marks[w] = make_uint4(0u, 0u, 0u, 0u);
}
