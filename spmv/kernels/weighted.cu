// Weighted BC on the device: the distances of a batch of sources by frontier Bellman-Ford
// (launched from turbobc/engines/gpu/weighted.py, one launch per round).
//
// dist holds the B x n float64 distances, slot b * n + v, as their bit patterns: for
// non-negative doubles (+inf included) the order of the bit patterns as unsigned 64-bit
// integers is the order of the values, so atomicMin on the pattern is a float64 min.
// Edge lengths are positive and finite (turbobc._validation), the source starts at +0.0.
//
// One round: every slot of the frontier (keys, the slots lowered in the last round) relaxes
// its out-edges, d(w) = min(d(w), d(v) + len(v, w)) in float64 (the sum the CPU engine's
// min-plus product and networkx's Dijkstra make), and marks in next every head it lowered.
// A stale read of d(v) (lowered again by another thread during the round) only relaxes with
// a larger value: the thread that lowered it also marked v for the next round. The rounds
// stop when a round lowers nothing: the fixed point is the least one, whatever the order.

// keys[i] = b * n + v, i < count; next[slot] = 1 for every slot lowered this round.
template <typename I>
__global__ void bcw_relax(const I* __restrict__ ptr, const I* __restrict__ idx,
                          const double* __restrict__ len, long long n,
                          const long long* __restrict__ keys, long long count,
                          unsigned long long* dist, unsigned char* next) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        const long long key = __ldg(keys + i);
        const long long v = key % n;
        const long long base = key - v;  // b * n
        const double dv = __longlong_as_double(
            (long long)atomicAdd(dist + key, 0ull));  // the value now, not a cached one
        const I end = __ldg(ptr + v + 1);
        for (I e = __ldg(ptr + v); e < end; ++e) {
            const double candidate = dv + __ldg(len + e);
            const unsigned long long bits = (unsigned long long)__double_as_longlong(candidate);
            const long long slot = base + (long long)__ldg(idx + e);
            if (bits < dist[slot]) {  // a cheap test first: most relaxations lower nothing
                const unsigned long long old = atomicMin(dist + slot, bits);
                if (bits < old) {
                    next[slot] = 1;
                }
            }
        }
    }
}
