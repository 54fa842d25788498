// The structs every kernel entry point takes, by value: a view of the graph on the device, a
// view of the workspace of the sweep, and a view of the run (sources, output, options).
// Device pointers are 8 bytes and every count is a long long, so one layout serves every
// index and level type; spmv/_views.py mirrors each struct as a NumPy structured dtype
// (pointers as uint64) and tests/test_views_layout.py checks, through NVRTC, that the fields,
// their offsets and the sizes agree.
#pragma once

namespace tbc {

// ---- single-source family (single.cuh; sccsc.cu, sccooc.cu, vecsc.cu) ----

// I: the vertex type (indices, S, sources); P: the position type (entries' offsets: column
// pointers, a unit's first entry). P = I but for int32 vertices past 2^31 stored edges
// (int64 pointers, 4-byte indices); COOC, which keeps no pointers, has P = I.
template <typename I, typename P>
struct SingleGraph {
    const P* a;           // CSC: column pointers; COOC: the column of each entry
    const I* b;           // the row of each entry
    const I* unit_col;    // veCSC hub units (column, first entry); empty for the others
    const P* unit_start;
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

// ---- layers family (layers.cuh; distances.cu, layers.cu, block_sweep.cu) ----

template <typename I>
struct LayerGraph {
    const I* ptr;         // CSR: row v lists the out-neighbours of v
    const I* idx;
    const double* len;    // the length of each stored edge (all 1.0 for unweighted BC)
    long long n;
};

struct RelaxState {
    unsigned long long* dist;          // B x n distances, float64 bit patterns
    unsigned char* marks;              // a marks round: marks[slot] = 1 for each slot lowered
    int* stamp;                        // a queue round: the round that queued the slot
    long long* queue;                  // a queue round: the slots lowered, in no order
    unsigned long long* queue_count;
    int* far_stamp;                    // the near-far phase that listed the slot
    long long* far;                    // the far slots of the phase
    unsigned long long* far_count;
};

struct RelaxRound {
    const long long* keys;  // the slots lowered in the last round
    long long count;
    double below;           // the phase's threshold: a key at or above it waits
    int queued;             // the round queues (else marks) what it lowers
    int round;
    int phase;
};

struct DagSlots {
    const double* dist;       // B x n final distances
    double* sigma;            // path counts, plain float64
    double* delta;            // dependencies
    int* remaining;           // DAG parents of each slot not yet done
    unsigned* dag;            // each slot's DAG edges as masks over its vertex's out-edges
    const long long* mask_at; // where each vertex's mask words start within a source's
    long long words;          // mask words of one source
    long long total;          // B n
};

struct LayerStep {
    const long long* layer;     // the slots of this layer
    long long size;
    long long* next;            // forward, queued: the next layer's slots
    unsigned long long* count;
    unsigned char* marks;       // forward, marked: marks[slot] = 1 for the next layer
    int queued;
};

struct DagSums {
    const double* tau;          // target weights per vertex, or per slot (tau_per_slot)
    const double* lane_weight;  // ω of each lane's source
    unsigned char* skip;        // lanes whose counts left float64's range: nothing added
    double* edge;               // per stored edge sums (has_edge), CSR order
    int tau_per_slot;
    int has_edge;
};

// ---- chain folding (chains.cu) ----

struct ChainRows {
    const long long* chain;        // the chain of each row
    const long long* lane_a;       // the slots of its ends' sources
    const long long* lane_b;
    const long long* first;        // its ends a, b
    const long long* last;
    const long long* length;       // L, its edges
    const long long* prefix_off;   // where its prefix sums of r start
    const long long* hist_off;     // where its class histogram starts
    const long long* span;         // lengths only: λ in the positions' units (else null)
    const long long* class_base;   // lengths only: class_at[class_first + j] = base + 2 p_j
    const long long* class_first;
};

struct ChainPlan {
    const double* prefix;          // prefix sums of r over every chain
    const long long* chain_of;     // the chain of each vertex, -1: none
    const double* r;               // what each vertex stands for
    const long long* class_at;     // lengths only: every chain's doubled positions (else null)
    double* tau;                   // the τ block the terms are added into
    double* mass;                  // the class histograms
    double* tie_mass;
};

struct LaneLayout {             // a lanes batch: lane b of v at ((b / 32) n + v) 32 + b % 32
    const void* level;          // short or int levels, -1 unreached
    const double* sigma;        // σ̂
    const int* exponent;        // cumulative shift table E[d B + b], or null: σ = σ̂
    long long lanes;            // B
    long long n;
    int level_bytes;
};

struct SlotLayout {             // a layers batch: slot b n + v
    const double* dist;         // distances, +inf unreached
    const double* sigma;        // plain float64 counts
    long long n;
    double scale;               // the positions' integer unit
};

struct FrontierLayout {         // a frontiers batch: slot b of vertex v at b n + rank[v]
    const int* level;           // levels, -1 unreached
    const double* sigma;        // σ̂
    const int* exponent;        // cumulative shift table E[b depths + d], or null: σ = σ̂
    const long long* rank;      // the vertex's id in the relabeled graph
    long long depths;           // entries of each slot's row of the shift table
    long long n;
};

// ---- frontiers family (frontiers.cu): a source per block ----

template <typename I>
struct FrontierGraph {
    const I* ptr;          // CSR: row v lists the out-neighbours of v
    const I* idx;
    long long n;
    double small_count;    // 2^OVERFLOW_EXP / (largest in-degree): a pushed count of at most
                           // this cannot make a sum pass the limit
};

template <typename I>
struct FrontierWork {      // rows of B blocks: n entries each (start and shifts: n + 2)
    int* level;            // -1 between sources
    double* sigma;         // 0 between sources
    double* t;             // 0 between sources
    I* order;
    I* start;
    int* shifts;
    double* bc;            // each block's raw sums
    unsigned long long* next;        // the next source to take, from 0
    long long* wide;                 // sources whose counts spread too wide
    unsigned long long* wide_count;
    long long* profile;              // FRONTIER_PROFILE builds: block 0's first source, per
                                     // level (frontiers.cu); null otherwise
    int* depth;                      // per block, the forward launch of a phased run: the
                                     // depth of its source; null in a whole run
};

struct FrontierRun {
    const long long* sources;
    long long nsrc;
    const double* tau;     // target weights (accumulate.cuh); null: all ones
    long long tau_stride;  // 0: one τ for every source; n: a row per slot (τ + b n, block b)
    const double* omega;   // source weights (accumulate.cuh); null: all ones
    double* edge;          // per stored edge sums (CSR order), added to; null: vertex sums only
    int endpoints;
    int phase;             // FRONTIER_WHOLE, FRONTIER_FORWARD or FRONTIER_BACKWARD (frontiers.cu)
};

// ---- pair sampling (pairs.cu) ----

template <typename I>
struct PairGraph {
    const I* ptr;    // CSR: out-edges
    const I* idx;
    const I* rptr;   // CSC: in-edges (the same arrays when undirected)
    const I* ridx;
    long long n;
};

template <typename I>
struct PairWork {
    int* levels;                 // per block: 2 n levels (side 0, side 1)
    double* sigmas;              // per block: 2 n counts
    I* orders;                   // per block: 2 n vertices in the order reached
    unsigned long long* counts;  // per vertex: the samples through it
    int* status;                 // bit 0: a count passed float64's exact range
    unsigned long long* taken;   // samples handed out
};

struct PairRun {
    unsigned long long seed;
    long long first;             // the first sample's number
    long long count;             // samples of this launch
    int endpoints;
};

}  // namespace tbc
