// The accumulate step of Brandes' backward sweep, written once for every kernel (single-source,
// lanes and layers) and mirrored by the CPU engines (turbobc/engines/graphblas.py, wide.py):
//
//   δ(v) = Σ_{w child of v} σ(v)/σ(w) · (τ(w) + δ(w))
//
// With scaled counts σ̂ and the accumulator t (δ = σ̂ · t), a finished vertex w hands its
// parents
//
//   u(w) = (τ(w) + δ(w)) / σ̂(w) = τ(w) / σ̂(w) + t(w)          (parent_share)
//
// and a parent sums them: t(v) = Σ_children u(w), i.e. t = A u restricted to level d − 1.
//
// τ is the per-vertex target weight, data rather than code: a null pointer means every vertex
// weighs 1 (all-pairs BC); a subset of targets passes τ = [w ∈ T], and an exact graph
// reduction the number of vertices each one stands for. ω, the source weight, multiplies
// every term a source's sweep adds (null: all ones); a reduction passes the same counts.
#pragma once

namespace tbc {

// τ(w): the weight of w as a path target.
template <typename V, typename I>
__device__ __forceinline__ V target_weight(const V* __restrict__ tau, I w) {
    return tau == nullptr ? V(1) : __ldg(tau + w);
}

// u(w) = τ(w)/σ̂(w) + t(w): what a finished vertex w adds to t of each of its parents.
template <typename V, typename I>
__device__ __forceinline__ V parent_share(const V* __restrict__ tau, I w, V sigma_w, V t_w) {
    return target_weight(tau, w) / sigma_w + t_w;
}

// u(w) with τ(w) already read: a target weight per slot (chain folding, turbobc/_chains.py,
// passes τ per (source, vertex) instead of per vertex).
template <typename V>
__device__ __forceinline__ V parent_share_of(V tau_w, V sigma_w, V t_w) {
    return tau_w / sigma_w + t_w;
}

// The term a DAG child w hands its parent v where δ is kept as it is rather than as t = δ / σ̂
// (the layers family, unscaled float64 counts): σ(v)/σ(w) · (τ(w) + δ(w)).
template <typename V>
__device__ __forceinline__ V child_term(V sigma_v, V sigma_w, V tau_w, V delta_w) {
    return sigma_v / sigma_w * (tau_w + delta_w);
}

// ω(s): the weight of source s; every term its sweep adds to bc is multiplied by it.
template <typename V, typename I>
__device__ __forceinline__ V source_weight(const V* __restrict__ omega, I s) {
    return omega == nullptr ? V(1) : __ldg(omega + s);
}

// The bc term of a vertex v other than the source once δ(v) = σ̂(v) t(v) is known: δ(v), plus
// networkx's endpoint term (v ends a path from the source) when endpoints are counted.
template <typename V>
__device__ __forceinline__ V dependency_term(V sigma_v, V t_v, bool endpoints) {
    return sigma_v * t_v + (endpoints ? V(1) : V(0));
}

}  // namespace tbc
