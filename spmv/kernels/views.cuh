// The structs every kernel entry point takes, by value: a view of the graph on the device, a
// view of the workspace of the sweep, and a view of the run (sources, output, options).
// Device pointers are 8 bytes and every count is a long long, so one layout serves every
// index and level type; spmv/_views.py mirrors each struct as a NumPy structured dtype
// (pointers as uint64) and tests/test_views_layout.py checks, through NVRTC, that the fields,
// their offsets and the sizes agree.
#pragma once

namespace tbc {

// ---- single-source family (single.cuh; sccsc.cu, sccooc.cu, vecsc.cu) ----

template <typename I>
struct SingleGraph {
    const I* a;           // CSC: column pointers; COOC: the column of each entry
    const I* b;           // the row of each entry
    const I* unit_col;    // veCSC hub units (column, first entry); empty for the others
    const I* unit_start;
    long long n;
    long long m;
    long long nunits;
    int directed;
};

template <typename I, typename V>
struct SingleWork {
    I* S;                     // depth of discovery, -1: not reached
    V* sigma;                 // σ̂
    V* t;                     // backward accumulator, δ = σ̂ t
    int* shifts;              // per-level power-of-two scale of σ̂
    unsigned long long* ctl;  // control block (ctl.cuh)
};

template <typename I, typename V>
struct SingleRun {
    const I* sources;
    long long nsrc;
    V* bc;                    // raw sums, added to
    const V* tau;             // target weights (accumulate.cuh); null: all ones
    const V* omega;           // source weights (accumulate.cuh); null: all ones
    int endpoints;
};

// ---- batched family (batched.cuh; batched.cu) ----

template <typename I>
struct BatchGraph {
    const I* in_ptr;      // CSC: column j lists the in-neighbours of j
    const I* in_idx;
    const I* out_ptr;     // CSR: row i lists the out-neighbours of i (the same arrays when
    const I* out_idx;     //      undirected)
    const I* erow;        // COO edges erow[k] -> ecol[k] (edge-parallel traversal only)
    const I* ecol;
    long long n;
    long long m;
    double small_count;   // 2^OVERFLOW_EXP / (largest in-degree): a pushed term of at most
                          // this cannot make a sum pass the limit
};

template <typename L>
struct BatchWork {
    L* level;
    double* sigma;
    double* t;
    L* flag0;
    L* flag1;
    unsigned long long* masks;
    int* shifts;
    unsigned long long* maxbits;
    unsigned long long* reached;
    unsigned long long* ctl;
    long long dcap;       // levels the shift table holds
};

template <typename I>
struct BatchRun {
    const I* sources;     // lane b < nsrc runs from sources[b]
    long long nsrc;
    long long lanes;      // B, a multiple of 32
    double* bc;           // raw sums, added to
    double* edge;         // per stored edge sums, aligned with the CSR pattern (out_idx), added
                          // to by the EdgeSums kernels; null in the VertexSums ones
    const double* tau;    // target weights (accumulate.cuh); null: all ones
    const double* omega;  // source weights (accumulate.cuh); null: all ones
    const double* tau_slot;  // target weights per slot, laid out as t (accumulate.cuh); null:
                             // tau's, the same for every lane
    unsigned long long push_ratio;
    int endpoints;
    int phase;            // PHASE_BOTH, or the forward or the backward sweep alone
};

}  // namespace tbc
