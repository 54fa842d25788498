// Array steps of the GPU engine's host-driven loops (the layers family's distances and DAG
// sweeps, the chains' per-slot weights), as shipped kernels: each replaces a CuPy array
// expression that CuPy compiles at first use (a tenth of a second each, seconds for its CUB
// reductions), so that a first call runs no kernel compiled then (launched by
// spmv/_arrays.py). One thread per element (per row for tba_rows_inf, a block each);
// ``I`` counts the elements.
//
//   tba_fill_f64          out[i] = value
//   tba_put_f64           out[keys[i]] = value
//   tba_gather_f64        out[i] = src[at[i]]
//   tba_rows_inf          out[r] = 1 if a value of row r is ±inf, else 0
//   tba_add_rows_f64      dst[rows[p] n + v] += values[p n + v]   (rows may repeat: atomics)
//   tba_add_entries_f64   dst[at[i]] += values[i]                  (at may repeat: atomics)
//   tba_outer_f64         out[r n + v] = a[r] b[v]
//   tba_weighted_rows     bc[v] += Σ_r w[r] m[r n + v]            (bc += wᵀ M)
//   tba_far_select        the far keys still at or above `below`: appended to keys (count),
//                         their distances in at (+inf for the others), for the next phase
#include "common.cuh"

template <typename I>
__global__ void tba_fill_f64(double* out, double value, I count) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < count) out[i] = value;
}

template <typename I>
__global__ void tba_put_f64(double* out, const long long* __restrict__ keys, double value,
                            I count) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < count) out[keys[i]] = value;
}

template <typename I>
__global__ void tba_gather_f64(const double* __restrict__ src, const long long* __restrict__ at,
                               I count, double* out) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < count) out[i] = src[at[i]];
}

template <typename I>
__global__ void tba_rows_inf(const double* __restrict__ values, I rows, I n,
                             unsigned char* out) {
  __shared__ int found;
  const long long r = blockIdx.x;
  if (r >= rows) return;
  if (threadIdx.x == 0) found = 0;
  __syncthreads();
  const double* row = values + r * (long long)n;
  for (long long v = threadIdx.x; v < n && !found; v += blockDim.x)
    if (isinf(row[v])) found = 1;
  __syncthreads();
  if (threadIdx.x == 0) out[r] = found ? 1 : 0;
}

template <typename I>
__global__ void tba_add_rows_f64(double* dst, I n, const long long* __restrict__ rows,
                                 I count, const double* __restrict__ values) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= count * (long long)n) return;
  const long long p = i / n, v = i - p * n;
  atomicAdd(dst + rows[p] * (long long)n + v, values[i]);
}

template <typename I>
__global__ void tba_add_entries_f64(double* dst, const long long* __restrict__ at,
                                    const double* __restrict__ values, I count) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < count) atomicAdd(dst + at[i], values[i]);
}

template <typename I>
__global__ void tba_outer_f64(const double* __restrict__ a, I rows,
                              const double* __restrict__ b, I n, double* out) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= rows * (long long)n) return;
  const long long r = i / n;
  out[i] = a[r] * b[i - r * n];
}

template <typename I>
__global__ void tba_weighted_rows(double* bc, const double* __restrict__ w,
                                  const double* __restrict__ m, I rows, I n) {
  const long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (v >= n) return;
  double sum = 0.0;
  for (long long r = 0; r < rows; ++r) sum += w[r] * m[r * (long long)n + v];
  bc[v] += sum;
}

template <typename I>
__global__ void tba_far_select(const double* __restrict__ dist, const long long* __restrict__ far,
                               I waiting, double below, long long* keys,
                               unsigned long long* count, double* at) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= waiting) return;
  const double d = dist[far[i]];
  if (d >= below) {
    keys[atomicAdd(count, 1ULL)] = far[i];
    at[i] = d;
  } else {
    at[i] = __longlong_as_double(0x7ff0000000000000LL);  // +inf: not in the next phase
  }
}
