#include "views.cuh"

// Chain folding on the device (turbobc/_chains.py): between the forward and the backward
// launch of a batch, the terms of the sources folded into the chains' ends. For chain p with
// ends a, b (slots lane_a[p], lane_b[p]) and length L = k + 1, every target t outside the chain
// and its ends, reached from a at level d_a and from b at d_b, falls in class h = L − (d_a −
// d_b) in [0, 2L]; the chain's sources x_1 .. x_k reach it through a when 2i < h, through b when
// 2i > h, and through both when 2i = h, where their paths split σ(a, t) : σ(b, t). So
//
//   τ_a(t) += r(t) (P(m) + [tie] r(x_{h/2}) share_a),   m = #{i : 2i < h},
//   τ_b(t) += r(t) (P(k) − P(min(h/2, k)) + [tie] r(x_{h/2}) (1 − share_a)),
//
// P the prefix sums of r over the chain, share_a = σ(a,t) / (σ(a,t) + σ(b,t)) (in the same
// float64 operations as SlotCounts.chain_terms); and the class
// histogram gets mass[h] += r(t), tie[h] += r(t) share_a. A block works one chain (blockIdx.x)
// over a stretch of the vertices (blockIdx.y); the histogram's middle classes are summed in
// shared memory, the four end classes (nearly every far target) in registers.
//
// Three layouts share the body (chain_terms_block; the arguments are the structs ChainRows,
// ChainPlan, LaneLayout, SlotLayout and FrontierLayout of views.cuh, launched by
// spmv/_chains.py):
// bcc_lane_terms reads the blocks of a lanes batch (spmv/kernels/batched*.cuh): lane b of
// vertex v is entry ((b / 32) n + v) 32 + b % 32; levels are short or int (level_bytes), -1
// unreached; exponent (or null) is the cumulative shift table E[d B + b]: σ = σ̂ 2^E at level d.
// bcc_slot_terms reads a layers batch (slot b n + v; distances, +inf unreached; plain float64
// counts: spmv/kernels/layers.cuh), where
// a chain is measured in lengths: h = λ − (d_a − d_b) in the positions' integer units (times
// scale), and its class is looked up among the chain's doubled positions 2 p_0 .. 2 p_L (class
// 2j at h = 2 p_j, 2j + 1 strictly between 2 p_j and 2 p_(j+1): in hops the class is h).
// bcc_frontier_terms reads a frontiers batch (spmv/kernels/frontiers.cu, a block per slot: slot b
// of vertex v at b n + rank[v], the graph relabeled; int levels, -1 unreached; exponent (or
// null) the cumulative shift table E[b depths + d]), in hops as the lanes layout; its τ block
// is laid out as the levels.

__device__ __forceinline__ long long lane_entry(long long n, long long v, long long lane) {
    return ((lane >> 5) * n + v) * 32 + (lane & 31);
}

__device__ __forceinline__ int level_of(const void* level, int level_bytes, long long e) {
    return level_bytes == 2 ? (int)((const short*)level)[e] : ((const int*)level)[e];
}

// The terms of chain p over this block's stretch of the vertices. target(v, ea, eb, h) says
// whether v is reached, and gives its entries of a's and b's slots and its class h in [0, 2L];
// share(ea, eb, h) is σ(a,t) / (σ(a,t) + σ(b,t)) at a tie.
template <typename Target, typename Share>
__device__ __forceinline__ void chain_terms_block(long long n, long long p,
                                                  const tbc::ChainRows& rows,
                                                  const tbc::ChainPlan& plan, double* shared,
                                                  Target target, Share share_of) {
    const long long* __restrict__ length = rows.length;
    const double* __restrict__ prefix = plan.prefix;
    const double* __restrict__ r = plan.r;
    const long long* __restrict__ chain_of = plan.chain_of;
    double* tau = plan.tau;
    double* mass = plan.mass;
    double* tie_mass = plan.tie_mass;
    const long long L = length[p], k = L - 1, width = 2 * L + 1;
    double* s_mass = shared;
    double* s_tie = shared + width;
    for (long long h = threadIdx.x; h < width; h += blockDim.x) {
        s_mass[h] = 0.0;
        s_tie[h] = 0.0;
    }
    __syncthreads();
    const long long a = rows.first[p], b = rows.last[p], c = rows.chain[p];
    const long long base = rows.prefix_off[p];
    const double total = prefix[base + k];
    double end0 = 0.0, end1 = 0.0, end2 = 0.0, end3 = 0.0;  // classes 0, 1, 2L − 1, 2L
    const long long stretch = (n + gridDim.y - 1) / gridDim.y;
    const long long lo = blockIdx.y * stretch;
    const long long hi = min(n, lo + stretch);
    for (long long v = lo + threadIdx.x; v < hi; v += blockDim.x) {
        if (v == a || v == b || chain_of[v] == c) {
            continue;
        }
        long long ea, eb, h;
        if (!target(v, ea, eb, h)) {
            continue;
        }
        const double rt = r[v];
        const bool tie = (h % 2 == 0) && h >= 2 && h <= 2 * k;
        double share = 0.0, r_star = 0.0;
        const long long star = min(h / 2, k);
        if (tie) {
            share = share_of(ea, eb, h);
            r_star = prefix[base + star] - prefix[base + star - 1];
        }
        const long long m = max(0LL, min((h + 1) / 2 - 1, k));
        atomicAdd(tau + ea, rt * (prefix[base + m] + r_star * share));
        atomicAdd(tau + eb, rt * (total - prefix[base + star] + r_star * (1.0 - share)));
        if (h == 0) {
            end0 += rt;
        } else if (h == 1) {
            end1 += rt;
        } else if (h == width - 2) {
            end2 += rt;
        } else if (h == width - 1) {
            end3 += rt;
        } else {
            atomicAdd(s_mass + h, rt);
            if (tie) {
                atomicAdd(s_tie + h, rt * share);
            }
        }
    }
    atomicAdd(s_mass + 0, end0);
    atomicAdd(s_mass + 1, end1);
    atomicAdd(s_mass + width - 2, end2);
    atomicAdd(s_mass + width - 1, end3);
    __syncthreads();
    const long long out = rows.hist_off[p];
    for (long long h = threadIdx.x; h < width; h += blockDim.x) {
        if (s_mass[h] != 0.0) {
            atomicAdd(mass + out + h, s_mass[h]);
        }
        if (s_tie[h] != 0.0) {
            atomicAdd(tie_mass + out + h, s_tie[h]);
        }
    }
}

// The lanes family's layout (hops): h = L − (d_a − d_b).
template <typename I>
__global__ void bcc_lane_terms(tbc::LaneLayout lay, tbc::ChainRows rows, tbc::ChainPlan plan) {
    const void* __restrict__ level = lay.level;
    const int level_bytes = lay.level_bytes;
    const double* __restrict__ sigma = lay.sigma;
    const int* __restrict__ exponent = lay.exponent;
    const long long B = lay.lanes, n = lay.n;
    extern __shared__ double shared[];
    const long long p = blockIdx.x;
    const long long la = rows.lane_a[p], lb = rows.lane_b[p], L = rows.length[p];
    auto target = [&](long long v, long long& ea, long long& eb, long long& h) {
        ea = lane_entry(n, v, la);
        const int da = level_of(level, level_bytes, ea);
        if (da < 0) {
            return false;
        }
        eb = lane_entry(n, v, lb);
        h = L - (long long)(da - level_of(level, level_bytes, eb));
        return true;
    };
    auto share = [&](long long ea, long long eb, long long) {
        // σ(a,t) / (σ(a,t) + σ(b,t)), both in the scale of a's level
        double sb = sigma[eb];
        if (exponent != nullptr) {
            const long long da = level_of(level, level_bytes, ea);
            const long long db = level_of(level, level_bytes, eb);
            sb = scalbn(sb, exponent[db * B + lb] - exponent[da * B + la]);
        }
        return sigma[ea] / (sigma[ea] + sb);
    };
    chain_terms_block(n, p, rows, plan, shared, target, share);
}

// A layers batch's layout (lengths): per chain its length λ (span, in the positions' units),
// where its doubled positions start in class_at (class_first) and the value before them
// (class_base: class_at[class_first + j] = class_base + 2 p_j).
template <typename I>
__global__ void bcc_slot_terms(tbc::SlotLayout lay, tbc::ChainRows rows, tbc::ChainPlan plan) {
    const double* __restrict__ dist = lay.dist;
    const double* __restrict__ sigma = lay.sigma;
    const long long n = lay.n;
    const double scale = lay.scale;
    const long long* __restrict__ class_at = plan.class_at;
    extern __shared__ double shared[];
    const long long p = blockIdx.x;
    const long long la = rows.lane_a[p] * n, lb = rows.lane_b[p] * n;
    const long long L = rows.length[p], top = rows.class_base[p] + rows.span[p];
    const long long low = rows.class_first[p];
    auto target = [&](long long v, long long& ea, long long& eb, long long& h) {
        ea = la + v;
        const double da = dist[ea];
        if (isinf(da)) {
            return false;
        }
        eb = lb + v;
        // h = λ − (d_a − d_b), exact in integer units; its class: the last doubled position
        // at or below it (a binary search over the chain's L + 1)
        const long long query = top - llrint((da - dist[eb]) * scale);
        long long below = low, above = low + L;  // class_at[below] <= query, always
        while (below < above) {
            const long long mid = (below + above + 1) / 2;
            if (class_at[mid] <= query) {
                below = mid;
            } else {
                above = mid - 1;
            }
        }
        h = 2 * (below - low) + (class_at[below] != query ? 1 : 0);
        return true;
    };
    auto share = [&](long long ea, long long eb, long long) {
        return sigma[ea] / (sigma[ea] + sigma[eb]);
    };
    chain_terms_block(n, p, rows, plan, shared, target, share);
}

// A frontiers batch's layout (hops, relabeled rows): h = L − (d_a − d_b).
template <typename I>
__global__ void bcc_frontier_terms(tbc::FrontierLayout lay, tbc::ChainRows rows,
                                   tbc::ChainPlan plan) {
    const int* __restrict__ level = lay.level;
    const double* __restrict__ sigma = lay.sigma;
    const int* __restrict__ exponent = lay.exponent;
    const long long* __restrict__ rank = lay.rank;
    const long long n = lay.n, depths = lay.depths;
    extern __shared__ double shared[];
    const long long p = blockIdx.x;
    const long long la = rows.lane_a[p], lb = rows.lane_b[p], L = rows.length[p];
    auto target = [&](long long v, long long& ea, long long& eb, long long& h) {
        const long long row = rank[v];
        ea = la * n + row;
        const int da = level[ea];
        if (da < 0) {
            return false;
        }
        eb = lb * n + row;
        h = L - (long long)(da - level[eb]);
        return true;
    };
    auto share = [&](long long ea, long long eb, long long) {
        // σ(a,t) / (σ(a,t) + σ(b,t)), both in the scale of a's level
        double sb = sigma[eb];
        if (exponent != nullptr) {
            sb = scalbn(sb, exponent[lb * depths + level[eb]] - exponent[la * depths + level[ea]]);
        }
        return sigma[ea] / (sigma[ea] + sb);
    };
    chain_terms_block(n, p, rows, plan, shared, target, share);
}
