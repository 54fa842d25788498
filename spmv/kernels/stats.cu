// Graph statistics on the device: degrees, the scf metric (spmv/_scf.py defines it) and the
// COOC column array expanded from CSC column pointers.
#define TBC_FULL_MASK 0xffffffffu

// deg(i) = number of stored entries in row i (out-degree), counted from the CSC row indices.
template <typename I>
__global__ void out_degree(const I* __restrict__ rowidx, I m, double* deg) {
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < m;
         k += (long long)gridDim.x * blockDim.x) {
        atomicAdd(deg + __ldg(rowidx + k), 1.0);
    }
}

// For a symmetric pattern the out-degree is the column length.
template <typename I>
__global__ void column_length(const I* __restrict__ colptr, I n, double* deg) {
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (long long)gridDim.x * blockDim.x) {
        deg[j] = double(__ldg(colptr + j + 1) - __ldg(colptr + j));
    }
}

// out += Σ over stored edges i -> j of deg(i)·deg(j) = Σ_j deg(j) Σ_{i in column j} deg(i).
template <typename I>
__global__ void degree_product_sum(const I* __restrict__ colptr, const I* __restrict__ rowidx,
                                   I n, const double* __restrict__ deg, double* out) {
    double acc = 0.0;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (long long)gridDim.x * blockDim.x) {
        double col = 0.0;
        const I end = __ldg(colptr + j + 1);
        for (I k = __ldg(colptr + j); k < end; ++k) {
            col += __ldg(deg + __ldg(rowidx + k));
        }
        acc += col * __ldg(deg + j);
    }
    for (int off = 16; off > 0; off >>= 1) {
        acc += __shfl_down_sync(TBC_FULL_MASK, acc, off);
    }
    if ((threadIdx.x & 31) == 0 && acc != 0.0) {
        atomicAdd(out, acc);
    }
}

// COOC from CSC: col[k] = j for every k in column j (the row array is the CSC row indices).
template <typename I>
__global__ void expand_columns(const I* __restrict__ colptr, I n, I* col) {
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (long long)gridDim.x * blockDim.x) {
        const I end = __ldg(colptr + j + 1);
        for (I k = __ldg(colptr + j); k < end; ++k) {
            col[k] = I(j);
        }
    }
}
