// Graph statistics on the device: degrees, the scf metric (spmv/_scf.py defines it) and the
// COOC column array expanded from CSC column pointers.
#define TBC_FULL_MASK 0xffffffffu

// deg(i) = number of stored entries in row i (out-degree), counted from the CSC row indices.
template <typename I>
__global__ void out_degree(const I* __restrict__ rowidx, long long m, double* deg) {
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
// (I: the vertex type of the row indices, P: the position type of the column pointers.)
template <typename I, typename P>
__global__ void degree_product_sum(const P* __restrict__ colptr, const I* __restrict__ rowidx,
                                   I n, const double* __restrict__ deg, double* out) {
    double acc = 0.0;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (long long)gridDim.x * blockDim.x) {
        double col = 0.0;
        const P end = __ldg(colptr + j + 1);
        for (P k = __ldg(colptr + j); k < end; ++k) {
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

// Symmetry of a canonical pattern (each row's indices sorted, no duplicates): for every stored
// edge i -> j, whether j -> i is stored too, by a binary search of row j (no transpose, no
// extra memory). missing counts the edges that lack their reverse; first keeps the least such
// entry position, a witness the host checks before it believes the answer.
template <typename I>
__global__ void missing_reverse(const I* __restrict__ indptr, const I* __restrict__ indices,
                                I n, long long nnz, unsigned long long* missing,
                                unsigned long long* first) {
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < nnz;
         e += (long long)gridDim.x * blockDim.x) {
        // i = the row holding entry e: the last i with indptr[i] <= e (empty rows skipped,
        // since indptr[n] = nnz > e keeps hi a valid bound)
        I lo = 0, hi = n;
        while (hi - lo > 1) {
            const I mid = lo + (hi - lo) / 2;
            if ((long long)__ldg(indptr + mid) <= e) lo = mid; else hi = mid;
        }
        const I i = lo;
        const I j = __ldg(indices + e);
        // the first position in row j whose column is not below i
        I a = __ldg(indptr + j);
        const I end = __ldg(indptr + j + 1);
        I b = end;
        while (a < b) {
            const I mid = a + (b - a) / 2;
            if (__ldg(indices + mid) < i) a = mid + 1; else b = mid;
        }
        if (a == end || __ldg(indices + a) != i) {
            atomicAdd(missing, 1ull);
            atomicMin(first, (unsigned long long)e);
        }
    }
}
