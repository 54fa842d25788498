// What the host and every kernel must agree on, defined once: the control block of every
// persistent launch (unsigned long long[N_CTL] in device memory, zeroed by the host when
// allocated; one layout for both kernel families, single source in single.cuh and batched in
// batched.cuh), the statuses of a batch, and the two limits of per-level scaling.
// spmv/_ctl.py mirrors all of it for the host; tests/test_ctl_layout.py checks they agree.
#pragma once

namespace tbc {

enum Ctl : int {
    BAR_COUNT = 0,     // grid barrier: blocks arrived
    BAR_GEN = 1,       // grid barrier: generation
    FLAG0 = 2,         // "level d discovered a vertex", rotating over FLAG0 + d % 3 (2, 3, 4)
    OVF_LEVEL = 5,     // last level whose σ̂ passed (pull) or may have passed (push) the limit
    EDGES0 = 6,        // edges (single) or unit-edges (batched) of the vertices found at level d,
                       // rotating over EDGES0 + d % 3 (6, 7, 8)
    STATUS = 9,        // batched: 0 done, else a Status (the batch must be rerun)
    DEPTH = 10,        // batched: deepest level of the batch
    MAX_BITS = 11,     // single: bit pattern of max σ̂ over the level being rescaled
    REACHED = 12,      // single: vertices reached (other than the source), for endpoints
    WIDE_SOURCE = 13,  // single: 1 + index of a source whose counts spread too wide (0: none);
                       // the launch stops before that source's backward sweep (host resets it)
    N_CTL = 16
};

// Why a batched launch stopped before its backward sweep (ctl[STATUS]).
enum Status : int {
    OK = 0,
    LEVEL_OVERFLOW = 1,    // the depth passed the level type
    SHIFT_TABLE_FULL = 2,  // the depth passed the shift table
    WIDE_RANGE = 3         // some lane's counts spread too wide (those lanes hold WIDE_LANE)
};

// Per-level scaling of path counts (turbobc/engines/wide.py has the whole story):
// a level whose largest σ̂ passes 2^OVERFLOW_EXP is scaled back by a power of two, and a scaled
// σ̂ below 2^-WIDE_EXP means the level spreads too wide: that source goes to turbobc.engines.wide.
constexpr int OVERFLOW_EXP = 512;
constexpr int WIDE_EXP = 896;

__host__ __device__ constexpr double pow2(int k) {
    double x = 1.0;
    for (; k > 0; --k) x *= 2.0;
    for (; k < 0; ++k) x *= 0.5;
    return x;
}

}  // namespace tbc
