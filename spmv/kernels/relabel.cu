// The frontiers family's graph in its locality order, and its blocks' sums back in the
// graph's order: two passes of one thread per vertex, so that a first call runs no kernel
// compiled at first use (launched by spmv/_relabel.py for turbobc/engines/gpu/frontiers.py).
//
//   bcr_relabel       P A Pᵀ: old row v becomes new row rank[v], whose pointer ptr[rank[v]]
//                     the host computed (the running sums of the degrees in new order); the
//                     row's columns renamed (rank[j]) and sorted (an insertion sort of the
//                     row, as short as a mesh's or a road's rows are), each entry's old
//                     position carried along in edge_of.
//   bcr_block_sums    bc(v) = Σ_b rows(b, rank[v]): every block's row of raw sums, added and
//                     returned to the graph's own ids.
#include "common.cuh"

template <typename I>
__global__ void bcr_relabel(const long long* __restrict__ indptr,
                            const I* __restrict__ indices, const long long* __restrict__ rank,
                            const long long* __restrict__ ptr, long long n, I* idx,
                            long long* edge_of) {
  const long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (v >= n) return;
  const long long first = indptr[v], base = ptr[rank[v]];
  const long long degree = indptr[v + 1] - first;
  for (long long k = 0; k < degree; ++k) {
    // insert entry k of the row into the sorted run before it
    const I column = (I)rank[indices[first + k]];
    long long at = k;
    while (at > 0 && idx[base + at - 1] > column) {
      idx[base + at] = idx[base + at - 1];
      edge_of[base + at] = edge_of[base + at - 1];
      --at;
    }
    idx[base + at] = column;
    edge_of[base + at] = first + k;
  }
}

template <typename I>
__global__ void bcr_block_sums(const double* __restrict__ rows, long long blocks, I n,
                               const long long* __restrict__ rank, double* bc) {
  const long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (v >= n) return;
  const long long at = rank[v];
  double sum = 0.0;
  for (long long b = 0; b < blocks; ++b) sum += rows[b * (long long)n + at];
  bc[v] = sum;
}
