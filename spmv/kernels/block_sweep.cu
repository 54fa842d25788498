// The layers family on a graph small enough for shared memory: the whole sweep of one source's
// shortest-path DAG per block (launched by turbobc/engines/gpu/layers_sweep.py).
//
#include "layers.cuh"

// For a graph whose distances, counts, layers and order fit a block's shared memory (24 bytes per
// vertex: two blocks share a multiprocessor up to n = 4,700), each block sweeps one source's
// shortest-path DAG alone from its final
// distances (row b of dist_all): the in-degrees, the forward hop layers in Kahn's order (a vertex
// is appended to the order when its last DAG parent is done) and the backward layers, deepest
// first, each behind a block barrier: no launch, host wait or pass over the batch per layer. A
// warp works a vertex of a layer, a lane per out-edge, and appends the children a pass of 32
// edges readies with one atomic. The DAG test (exact float64 equality), the
// counts, the accumulate step δ(v) = Σ_{DAG children w} σ(v)/σ(w) · (τ(w) + δ(w)) (τ per vertex, or
// per slot with tau_per_slot), ω and the edge sums are those of bcl_indegree, bcl_forward and
// bcl_backward. δ is kept in row b of delta_all itself (in L2; a barrier makes each layer's
// writes seen by the next), 0 at the source in the end; a count that reaches +inf sets skip[b]
// and leaves the row 0 (engines/wide.py sweeps that source again).
template <typename I>
__global__ void bcl_block_sweep(tbc::LayerGraph<I> g, const long long* __restrict__ sources,
                                const double* __restrict__ dist_all, double* delta_all,
                                tbc::DagSums sums) {
    const I* __restrict__ ptr = g.ptr;
    const I* __restrict__ idx = g.idx;
    const double* __restrict__ len = g.len;
    const long long n = g.n;
    extern __shared__ double sweep_shared[];
    double* dist = sweep_shared;     // n
    double* sigma = dist + n;        // n
    int* state = (int*)(sigma + n);  // n: the DAG parents not yet done, then the vertex's layer
    int* order = state + n;          // n: the reached vertices, layer after layer
    __shared__ int count, first_of_layer, layer_of_last, out_of_range;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const long long b = blockIdx.x;
    const long long source = sources[b];
    const double* row = dist_all + b * n;
    double* delta = delta_all + b * n;  // δ, in global memory
    for (long long v = threadIdx.x; v < n; v += blockDim.x) {
        dist[v] = row[v];
        sigma[v] = 0.0;
        delta[v] = 0.0;
        state[v] = 0;
    }
    if (threadIdx.x == 0) {
        count = 1;
        order[0] = (int)source;
        out_of_range = 0;
    }
    __syncthreads();
    // state[w] = |P(w)|: the DAG edges v -> w, dist[v] + len(v, w) == dist[w]
    for (long long v = warp; v < n; v += warps) {
        const double dv = dist[v];
        if (isinf(dv)) {
            continue;
        }
        const I end = __ldg(ptr + v + 1);
        for (I e = __ldg(ptr + v) + (I)lane; e < end; e += 32) {
            const long long w = (long long)__ldg(idx + e);
            if (tbc::dag_edge(dv, __ldg(len + e), dist[w])) {
                atomicAdd(state + w, 1);
            }
        }
    }
    if (threadIdx.x == 0) {
        sigma[source] = 1.0;  // its layer, state 0, is 0
    }
    __syncthreads();
    // forward: σ(w) += σ(v) over the DAG edges out of each layer; a child whose last parent
    // this was joins the next layer (its state becomes its layer: no parent touches it again)
    int lo = 0, hi = 1, layer = 0;
    while (lo < hi) {
        for (int i = lo + warp; i < hi; i += warps) {
            const long long v = order[i];
            const double dv = dist[v], sv = sigma[v];
            const I begin = __ldg(ptr + v), end = __ldg(ptr + v + 1);
            for (I first = begin; first < end; first += 32) {
                const I e = first + (I)lane;
                long long w = 0;
                bool ready = false;
                if (e < end) {
                    w = (long long)__ldg(idx + e);
                    if (tbc::dag_edge(dv, __ldg(len + e), dist[w])) {
                        atomicAdd(sigma + w, sv);
                        ready = atomicSub(state + w, 1) == 1;
                    }
                }
                // the children this pass of 32 edges readied, appended with one atomic on the
                // shared count
                const unsigned appending = __ballot_sync(TBC_FULL_MASK, ready);
                if (appending) {
                    const int leader = __ffs(appending) - 1;
                    int at = 0;
                    if (lane == leader) {
                        at = atomicAdd(&count, __popc(appending));
                    }
                    at = __shfl_sync(TBC_FULL_MASK, at, leader);
                    if (ready) {
                        state[w] = layer + 1;
                        order[at + __popc(appending & ((1u << lane) - 1u))] = (int)w;
                    }
                }
            }
        }
        __syncthreads();
        lo = hi;
        hi = count;
        ++layer;
        __syncthreads();  // every thread has read count before the next layer appends
    }
    for (int i = threadIdx.x; i < hi; i += blockDim.x) {
        if (isinf(sigma[order[i]])) {
            out_of_range = 1;
        }
    }
    __syncthreads();
    if (out_of_range) {  // the row (all 0) waits for the exponent sweep
        if (threadIdx.x == 0) {
            sums.skip[b] = 1;
        }
        return;
    }
    // backward, deepest layer first: δ(v) pulled from v's DAG children (on deeper layers, done);
    // the source's layer only feeds its edges
    const double omega = sums.lane_weight[b];
    const double* tau_row = sums.tau + (sums.tau_per_slot ? b * n : 0);
    const int last = sums.has_edge ? 0 : 1;
    while (hi > 0) {
        if (threadIdx.x == 0) {
            // the layer of order[hi − 1] and its first place (the layers are contiguous)
            const int d = state[order[hi - 1]];
            int a = 0, z = hi - 1;
            while (a < z) {
                const int mid = (a + z) / 2;
                if (state[order[mid]] < d) {
                    a = mid + 1;
                } else {
                    z = mid;
                }
            }
            first_of_layer = a;
            layer_of_last = d;
        }
        __syncthreads();
        const int from = first_of_layer;
        if (layer_of_last < last) {
            break;
        }
        for (int i = from + warp; i < hi; i += warps) {
            const long long v = order[i];
            const double dv = dist[v], sv = sigma[v];
            double acc = 0.0;
            const I end = __ldg(ptr + v + 1);
            for (I e = __ldg(ptr + v) + (I)lane; e < end; e += 32) {
                const long long w = (long long)__ldg(idx + e);
                if (tbc::dag_edge(dv, __ldg(len + e), dist[w])) {
                    const double term = tbc::child_term(sv, sigma[w], __ldg(tau_row + w), delta[w]);
                    acc += term;
                    if (sums.has_edge) {
                        atomicAdd(sums.edge + e, omega * term);
                    }
                }
            }
            acc = tbc::warp_allsum(acc);
            if (lane == 0) {
                delta[v] = acc;
            }
        }
        __syncthreads();  // this layer's δ before the next one's reads (and first_of_layer)
        hi = from;
    }
    if (threadIdx.x == 0) {
        delta[source] = 0.0;  // (its layer fed only the edge sums)
    }
}
