// The layers family, second phase: the sweep of the shortest-path DAG of a batch with plain
// float64 counts, a launch per hop layer (driven by turbobc/engines/gpu/layers_sweep.py).
//
// Slots as in layers.cuh; the distances are final (distances.cu). The hop layers (Kahn's order)
// are lists of slots, layer after layer, built by bcl_forward; counts are not scaled: a lane
// whose counts reach +inf is swept again by turbobc/engines/wide.py.
//
// Each slot's DAG edges are bit masks over its vertex's out-edges, written by bcl_indegree:
// vertex v has words(v) = mask_at[v + 1] − mask_at[v] 32-bit words (one for at most
// WARP_DEGREE out-edges, else one per 32), bit j of word k standing for edge ptr[v] + 32 k + j,
// and slot (b, v) has them at dag[b · words + mask_at[v]] (words: the words of one source).
// The forward and backward layers then read the masks instead of the distances of every
// neighbour.
#include "layers.cuh"

namespace tbc {

// The first mask word of slot (b, v) = slot.
__device__ __forceinline__ long long mask_word(const DagSlots& s, long long n, long long slot) {
    const long long v = slot % n;
    return (slot - v) / n * s.words + __ldg(s.mask_at + v);
}

// Calls visit(e, ws) for every DAG edge e = v -> w of slot `slot` (ws = the slot of w), in CSR
// order, from its one mask word (v has at most WARP_DEGREE out-edges).
template <typename I, typename Visit>
__device__ __forceinline__ void for_dag_children(const LayerGraph<I>& g, const DagSlots& s,
                                                 long long slot, Visit visit) {
    const long long v = slot % g.n, base = slot - v;
    const I begin = __ldg(g.ptr + v);
    for (unsigned bits = __ldg(s.dag + mask_word(s, g.n, slot)); bits; bits &= bits - 1u) {
        const I e = begin + (I)(__ffs(bits) - 1);
        visit(e, base + (long long)__ldg(g.idx + e));
    }
}

// The same for a slot of a vertex of more out-edges, on every lane of a warp: lane l visits the
// DAG edges among edges l, l + 32, ... of v, reading one mask word per 32 edges.
template <typename I, typename Visit>
__device__ __forceinline__ void for_dag_children_on_warp(const LayerGraph<I>& g,
                                                         const DagSlots& s, long long slot,
                                                         int lane, Visit visit) {
    const long long v = slot % g.n, base = slot - v;
    const unsigned* mask = s.dag + mask_word(s, g.n, slot);
    const I begin = __ldg(g.ptr + v), end = __ldg(g.ptr + v + 1);
    for (I first = begin; first < end; first += 32) {
        const unsigned word = __ldg(mask + (first - begin) / 32);
        if (word >> lane & 1u) {
            const I e = first + (I)lane;
            visit(e, base + (long long)__ldg(g.idx + e));
        }
    }
}

}  // namespace tbc

// remaining[w] = |P(w)|, the DAG parents of every slot (unreached slots: none), and every slot's
// DAG masks (all zero for an unreached slot).
template <typename I>
__global__ void bcl_indegree(tbc::LayerGraph<I> g, tbc::DagSlots s) {
    const long long n = g.n;
    tbc::split_by_degree(
        s.total, [&](long long slot) { return tbc::wide_slot(g.ptr, n, slot); },
        [&](long long slot, int lane) {
            const long long v = slot % n;
            const long long base = slot - v;
            const double dv = __ldg(s.dist + slot);
            unsigned* mask = s.dag + tbc::mask_word(s, n, slot);
            const I begin = __ldg(g.ptr + v), end = __ldg(g.ptr + v + 1);
            for (I first = begin; first < end; first += 32) {
                const I e = first + (I)lane;
                long long ws = 0;
                bool tight = false;
                if (e < end && !isinf(dv)) {
                    ws = base + (long long)__ldg(g.idx + e);
                    tight = tbc::dag_edge(dv, __ldg(g.len + e), __ldg(s.dist + ws));
                }
                if (tight) {
                    atomicAdd(s.remaining + ws, 1);
                }
                const unsigned word = __ballot_sync(TBC_FULL_MASK, tight);
                if (lane == 0) {
                    mask[(first - begin) / 32] = word;
                }
            }
        },
        [&](long long slot) {
            const double dv = __ldg(s.dist + slot);
            unsigned bits = 0u;
            if (!isinf(dv)) {
                const long long v = slot % n;
                const long long base = slot - v;
                const I begin = __ldg(g.ptr + v), end = __ldg(g.ptr + v + 1);
                for (I e = begin; e < end; ++e) {
                    const long long ws = base + (long long)__ldg(g.idx + e);
                    if (tbc::dag_edge(dv, __ldg(g.len + e), __ldg(s.dist + ws))) {
                        atomicAdd(s.remaining + ws, 1);
                        bits |= 1u << (unsigned)(e - begin);
                    }
                }
            }
            s.dag[tbc::mask_word(s, n, slot)] = bits;
        });
}

// One hop layer forward: every slot of the layer (all of its DAG parents done, so its σ is
// final) pushes σ to its DAG children; a child whose last parent this was joins the next layer,
// as bcl_relax records a lowered slot: with step.queued appended to step.next, otherwise marked
// (step.marks[slot] = 1) for the host to list in slot order (marks.cu). A wide layer marks: its
// appends, one atomic per group of lanes on a single counter, took 26 of the 66 ms of
// ego-Facebook's weighted BC.
template <typename I>
__global__ void bcl_forward(tbc::LayerGraph<I> g, tbc::DagSlots s, tbc::LayerStep step) {
    auto push = [&](double sv) {
        return [=](I, long long ws) {
            atomicAdd(s.sigma + ws, sv);  // read in a later launch: no fence needed
            if (atomicSub(s.remaining + ws, 1) == 1) {
                if (step.queued) {
                    tbc::warp_append(step.next, step.count, ws);
                } else {
                    step.marks[ws] = 1;
                }
            }
        };
    };
    tbc::split_by_degree(
        step.size, [&](long long i) { return tbc::wide_slot(g.ptr, g.n, __ldg(step.layer + i)); },
        [&](long long i, int lane) {
            const long long slot = __ldg(step.layer + i);
            tbc::for_dag_children_on_warp(g, s, slot, lane, push(s.sigma[slot]));
        },
        [&](long long i) {
            const long long slot = __ldg(step.layer + i);
            tbc::for_dag_children(g, s, slot, push(s.sigma[slot]));
        });
}

// One hop layer backward (its DAG children lie on deeper layers, all done): the accumulate step
// of accumulate.cuh, δ(v) = Σ_{DAG children w} σ(v)/σ(w) · (τ(w) + δ(w)) (child_term), pulled
// into delta (τ per vertex, or with tau_per_slot per slot: tau[b n + w], the chain folding's
// weights); ω(s) of the lane multiplies what the edge sums (has_edge) get. The host adds
// ω-weighted δ into bc once the layers are done (one product over the batch instead of an
// atomic per slot on n addresses). Lanes with skip[b] (counts out of float64 range) add nothing.
template <typename I>
__global__ void bcl_backward(tbc::LayerGraph<I> g, tbc::DagSlots s, tbc::LayerStep step,
                             tbc::DagSums sums) {
    const long long n = g.n;
    // the terms of slot's DAG edges, added into acc (and, ω-weighted, into the edge sums)
    // (σ is read-only here, through the read-only cache)
    auto add_term = [&](long long slot, long long base, double omega, double& acc) {
        const double sv = __ldg(s.sigma + slot);
        return [=, &acc](I e, long long ws) {
            const double tau_w = __ldg(sums.tau + (sums.tau_per_slot ? ws : ws - base));
            const double term = tbc::child_term(sv, __ldg(s.sigma + ws), tau_w, s.delta[ws]);
            acc += term;
            if (sums.has_edge) {
                atomicAdd(sums.edge + e, omega * term);
            }
        };
    };
    tbc::split_by_degree(
        step.size, [&](long long i) { return tbc::wide_slot(g.ptr, n, __ldg(step.layer + i)); },
        [&](long long i, int lane) {
            const long long slot = __ldg(step.layer + i);
            const long long b = slot / n;
            if (__ldg(sums.skip + b)) {
                return;
            }
            const long long base = b * n;
            double acc = 0.0;
            tbc::for_dag_children_on_warp(g, s, slot, lane,
                                          add_term(slot, base, __ldg(sums.lane_weight + b), acc));
            acc = tbc::warp_allsum(acc);
            if (lane == 0) {
                s.delta[slot] = acc;
            }
        },
        [&](long long i) {
            const long long slot = __ldg(step.layer + i);
            const long long b = slot / n;
            if (__ldg(sums.skip + b)) {
                return;
            }
            double acc = 0.0;
            tbc::for_dag_children(g, s, slot,
                                  add_term(slot, b * n, __ldg(sums.lane_weight + b), acc));
            s.delta[slot] = acc;
        });
}
