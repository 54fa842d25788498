"""Approximate BC by sampling shortest paths: the GPU's sampler (docs/approximate.md,
"Sampling pairs").

Sample i is an ordered pair (s, t), s ≠ t, drawn from (seed, i) alone, and one shortest s–t
path picked uniformly at random among all of them; ``X_i(v) = 1`` when v lies on it strictly
between s and t (also at s and t with ``endpoints``, when t is reachable). Over uniform ordered
pairs, ``E[X(v)] = Σ_{s≠t} σ_st(v)/σ_st / (n (n − 1))``, and networkx's normalized BC is
``c · E[X(v)]`` with ``c = n / (n − 2)`` (``c = 1`` with endpoints): :func:`pair_factor`. X is
a Bernoulli variable, so Bernstein's radius (turbobc/_approx.py) applies with R = 1 and the
variance μ(1 − μ) exactly, samples being independent (drawn with replacement).

A sample finds its paths by a balanced bidirectional BFS (NetworKit's KADABRA): the side whose
frontier has fewer edges out of it grows by one level, until a new level meets the other side.
Every shortest path then crosses the new level's vertices that the other side has seen (the
middle layer: a vertex w of the new level d_s(w) = a + 1 seen by the other side at its depth b
gives d(s, t) = a + 1 + b, since no vertex was seen by both before) exactly once; the middle
vertex is picked with weight σ_s(w) σ_t(w), then a parent at a time towards each root with
weight σ of the parent, which makes every shortest path equally likely (the weights
telescope to 1 / σ_st).

Every choice is an exponential race keyed by :func:`pair_bits` of (seed, sample, salt,
candidate), and path counts are sums of integers (exact in float64, in any order, below
2^53), so a sample's path depends on the seed and the sample number only:
:func:`reference_counts` reproduces the device kernel (spmv/kernels/pairs.cu) on the host,
sample for sample, while the counts stay below 2^53.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

__all__ = ["PathCountOverflow", "pair_bits", "pair_factor", "pair_of", "pair_sample_limit",
           "pair_seed", "race_keys", "reference_counts"]

_MASK = (1 << 64) - 1


class PathCountOverflow(ArithmeticError):
    """A sample's path counts overflowed float64: its path cannot be picked; the run samples
    sources instead (turbobc/_approx.py)."""


def _mix(z: int) -> int:
    """splitmix64's finalizer on a Python int (64-bit wrap-around)."""
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _mix_array(z: np.ndarray) -> np.ndarray:
    """:func:`_mix` on a uint64 array (wrapping, as the device's unsigned arithmetic)."""
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def pair_bits(seed: int, sample: int, salt: int, v) -> np.ndarray:
    """64 random bits for (seed, sample, salt, v), v an int or an int array; salt 0 and 1
    draw s and t, 2 the middle vertex, 3 a step towards s, 4 a step towards t. The same
    function as ``pair_bits`` in spmv/kernels/pairs.cu."""
    head = np.uint64(_mix(_mix(seed & _MASK) ^ (sample & _MASK)))
    v = np.asarray(v, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        return _mix_array(head ^ (v * np.uint64(8) + np.uint64(salt)))


def pair_of(seed: int, sample: int, n: int) -> tuple[int, int]:
    """The ordered pair (s, t), s ≠ t, of a sample."""
    s = int(pair_bits(seed, sample, 0, 0)) % n
    t = int(pair_bits(seed, sample, 1, 0)) % (n - 1)
    return s, t + (t >= s)


def race_keys(bits: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """log(u) / weight with u = (2 ⌊bits / 2^12⌋ + 1) / 2^53 in (0, 1): the candidate with the
    largest key wins with probability weight / Σ weights."""
    u = (np.uint64(2) * (bits >> np.uint64(12)) + np.uint64(1)).astype(np.float64) * 2.0**-53
    return np.log(u) / weights


def pair_factor(n: int, endpoints: bool) -> float:
    """c: networkx's normalized BC is c · E[X(v)] (module docstring)."""
    return 1.0 if endpoints else n / (n - 2)


def pair_seed(seed) -> int:
    """A 64-bit seed for the samples from ``seed`` (None, an int or a numpy Generator)."""
    if seed is None:
        return int(np.random.default_rng().integers(0, 2**63))
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return int(seed) & _MASK
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63))
    raise TypeError("with epsilon, seed must be None, an int or a numpy.random.Generator; "
                    f"got {type(seed).__name__} {seed!r}")


def _race(seed: int, sample: int, salt: int, candidates: np.ndarray,
          weights: np.ndarray) -> int:
    """The winner of the race among ``candidates`` (ties: the smaller vertex)."""
    keys = race_keys(pair_bits(seed, sample, salt, candidates), weights)
    best = keys.max()
    return int(candidates[keys == best].min())


def reference_counts(pattern, directed: bool, seed: int, first: int, count: int,
                     endpoints: bool = False) -> np.ndarray:
    """The counts of samples ``first .. first + count - 1`` on the host, as the device kernel
    makes them (uint64, one per vertex). Plain Python, for tests and small graphs; raises
    :class:`PathCountOverflow` where a path count overflows float64.

    ``pattern``: the canonical CSR pattern (turbobc._graph.Graph.pattern); ``directed``:
    whether side t follows the in-edges of a directed graph (else the pattern is symmetric).
    """
    n = pattern.shape[0]
    out_ptr, out_idx = pattern.indptr, pattern.indices
    if directed:
        transpose = pattern.T.tocsr()
        transpose.sort_indices()
        in_ptr, in_idx = transpose.indptr, transpose.indices
    else:
        in_ptr, in_idx = out_ptr, out_idx
    grow = ((out_ptr, out_idx), (in_ptr, in_idx))   # side 0 from s along out-edges
    pull = ((in_ptr, in_idx), (out_ptr, out_idx))   # counts summed over the edges in
    counts = np.zeros(n, dtype=np.uint64)
    for sample in range(first, first + count):
        s, t = pair_of(seed, sample, n)
        level = [np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)]
        sigma = [np.zeros(n), np.zeros(n)]
        frontier, depth, volume = [[s], [t]], [0, 0], [0, 0]
        for side, root in ((0, s), (1, t)):
            level[side][root], sigma[side][root] = 0, 1.0
            p = grow[side][0]
            volume[side] = int(p[root + 1] - p[root])
        middle = -1
        while True:
            side = 0 if volume[0] <= volume[1] else 1
            other, d = 1 - side, depth[side]
            gp, gq = grow[side]
            new = set()
            for u in frontier[side]:
                for w in gq[gp[u]:gp[u + 1]]:
                    if level[side][w] < 0:
                        level[side][w] = d + 1
                        new.add(int(w))
            if not new:
                break  # t is not reachable from s
            pp, pq = pull[side]
            for w in new:
                parents = pq[pp[w]:pp[w + 1]]
                parents = parents[level[side][parents] == d]
                with np.errstate(over="ignore"):  # reported just below
                    sigma[side][w] = sigma[side][parents].sum()
                if math.isinf(sigma[side][w]):
                    raise PathCountOverflow(f"sample {sample}: a shortest-path count from "
                                            f"{(s, t)[side]} overflowed float64")
            met = np.array(sorted(w for w in new if level[other][w] >= 0), dtype=np.int64)
            if met.size:
                middle = _race(seed, sample, 2, met, sigma[0][met] * sigma[1][met])
                break
            frontier[side] = sorted(new)
            depth[side] = d + 1
            volume[side] = int(sum(gp[w + 1] - gp[w] for w in new))
        if middle < 0:
            continue
        if endpoints or middle not in (s, t):
            counts[middle] += 1
        for toward in (0, 1):
            pp, pq = pull[toward]
            x = middle
            while level[toward][x] > 0:
                near = pq[pp[x]:pp[x + 1]]
                near = near[level[toward][near] == level[toward][x] - 1].astype(np.int64)
                x = _race(seed, sample, 3 + toward, near, sigma[toward][near])
                if endpoints or level[toward][x] > 0:
                    counts[x] += 1
    return counts


def pair_sample_limit(n: int, endpoints: bool, epsilon: float, delta: float) -> int:
    """Hoeffding's sample size for pairs: ``⌈c² ln(4n/δ) / (2ε²)⌉`` (X in [0, 1], every value
    within ε / c of its mean with probability 1 − δ/2)."""
    c = pair_factor(n, endpoints)
    return math.ceil(c * c * math.log(4 * n / delta) / (2 * epsilon * epsilon))


RK_CONSTANT = 0.5
"""c of Riondato and Kornaropoulos's sample size (the universal constant of the
ε-approximation bound, about 1/2: Löffler and Phillips)."""


def vertex_diameter_bound(pattern, directed: bool = False) -> int | None:
    """An upper bound on the vertex diameter (the most vertices on a shortest path).

    Undirected: ``2D + 1``, D the largest breadth-first depth of a search started at one
    vertex of every connected component at once (a component whose start r has eccentricity
    e has no shortest path longer than 2e hops, through r).

    Directed: a shortest path visits the strongly connected components in the order of their
    condensation (a DAG), never coming back to one, and its stretch inside a component C is a
    shortest path of C, of at most ``e_in(r) + e_out(r)`` hops (in and out through a start r
    of C; both eccentricities from one search of C's own edges, forward and backward). So the
    bound is the largest sum of ``min(|C|, e_in + e_out + 1)`` along a path of the DAG, found
    a DAG level at a time; None when the DAG has more than ``MAX_DAG_LEVELS`` levels (a
    directed chain: the levels would cost a step each, and a bound near n would not beat
    Hoeffding's size anyway). ``pattern``: the CSR pattern (symmetric when undirected).
    An undirected graph's depths come from one compiled pass (turbobc/_traverse.py
    ``component_depths``: a search from the least vertex of each component) at any size; past
    SciPy's int32 indices (2^31 - 1 stored edges) a directed one's strong components are not
    computed: None.
    """
    from scipy.sparse.csgraph import connected_components

    from turbobc._traverse import component_depths, past_csgraph

    n = pattern.shape[0]
    if n == 0:
        return 1
    if not directed:  # from the least vertex of each component, one compiled pass
        depth = component_depths(pattern.indptr, pattern.indices)
        return 2 * _centred_eccentricity(pattern, depth) + 1
    if past_csgraph(pattern):
        return None
    _, label = connected_components(pattern, directed=directed, connection="strong")
    starts = np.unique(label, return_index=True)[1]
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(pattern.indptr))
    cols = pattern.indices.astype(np.int64)
    inside = label[rows] == label[cols]
    within = sp.csr_array((np.ones(int(inside.sum())), (rows[inside], cols[inside])),
                          shape=(n, n))
    # per component: e_out(r) + e_in(r), the most hops of a shortest path inside it
    hops = np.zeros(starts.size, dtype=np.int64)
    for edges in (within, sp.csr_array(within.T)):
        reach = np.zeros(starts.size, dtype=np.int64)
        np.maximum.at(reach, label, _depths(edges, starts))
        hops += reach
    size = np.bincount(label, minlength=starts.size)
    weight = np.minimum(size, hops + 1)
    return _longest_dag_path(label[rows[~inside]], label[cols[~inside]], weight)


def _centred_eccentricity(pattern, depth: np.ndarray) -> int:
    """The largest eccentricity among one vertex of each component of an undirected pattern,
    given ``depth``, every vertex's depth from the least vertex of its component: for the
    component that sets it, the smaller of that start's and the eccentricity of a vertex
    near its centre (double sweep: u the deepest vertex, w the farthest from u, m halfway
    along a shortest u-w path). Any vertex's eccentricity e bounds the component's shortest
    paths by 2e hops, so 2e + 1 stays a vertex-diameter bound, and a central vertex's is
    near the diameter's half (ego-Facebook: 9 vertices against 13 from its least vertex)."""
    from turbobc._traverse import bfs_order_levels

    deepest = int(depth.max())
    if deepest <= 1:
        return max(deepest, 0)
    indptr, indices = pattern.indptr, pattern.indices
    u = int(np.argmax(depth))
    from_u = bfs_order_levels(indptr, indices, u)[1]
    w = int(np.argmax(from_u))
    from_w = bfs_order_levels(indptr, indices, w)[1]
    d = int(from_u[w])
    middle = np.flatnonzero((from_u == d // 2) & (from_u + from_w == d))
    centre = int(bfs_order_levels(indptr, indices, int(middle[0]))[1].max())
    others = depth[from_u < 0]  # the components the searches from u did not reach
    return max(min(deepest, centre), int(others.max()) if others.size else 0)


MAX_DAG_LEVELS = 16_384
"""The most levels of the condensation DAG :func:`vertex_diameter_bound` walks."""


def _depths(pattern, starts: np.ndarray) -> np.ndarray:
    """Breadth-first depth of every vertex from the nearest of ``starts`` (searched at once,
    compiled: turbobc/_traverse.py); 0 where unreached."""
    from turbobc._traverse import bfs_depths

    return np.maximum(bfs_depths(pattern.indptr, pattern.indices, starts), 0)


def _heads(indptr, indices, frontier: np.ndarray) -> np.ndarray:
    """The heads of every edge out of ``frontier``: its ranges of indices, gathered at once."""
    counts = indptr[frontier + 1] - indptr[frontier]
    total = int(counts.sum())
    offsets = np.repeat(indptr[frontier] - np.cumsum(counts) + counts, counts)
    return indices[offsets + np.arange(total)]


def _longest_dag_path(tails: np.ndarray, heads: np.ndarray, weight: np.ndarray) -> int | None:
    """The largest sum of ``weight`` along a path of the DAG with edges ``tails -> heads``
    (Kahn's order a level at a time: a node's best sum is final once its in-edges are done);
    None past :data:`MAX_DAG_LEVELS` levels."""
    nodes = weight.size
    dag = sp.csr_array((np.ones(tails.size), (tails, heads)), shape=(nodes, nodes))
    out_degree = np.diff(dag.indptr)
    waiting = np.bincount(dag.indices, minlength=nodes)
    best = weight.astype(np.int64)
    frontier = np.flatnonzero(waiting == 0)
    for _ in range(MAX_DAG_LEVELS):
        counts = out_degree[frontier]
        if counts.sum() == 0:
            return int(best.max())
        ends = _heads(dag.indptr, dag.indices, frontier)
        np.maximum.at(best, ends, np.repeat(best[frontier], counts) + weight[ends])
        waiting -= np.bincount(ends, minlength=nodes)
        frontier = np.unique(ends[waiting[ends] == 0])
    return None


def rk_samples(vertex_diameter: int, epsilon: float, delta: float) -> int:
    """Riondato and Kornaropoulos's sample size for sampled shortest paths:
    ``⌈(c / ε²)(⌊log₂(VD − 2)⌋ + 1 + ln(1/δ))⌉``: with that many samples every vertex's
    share of sampled paths through it is within ε of its expectation, with probability
    1 − δ, whatever the graph (a bound on the VC dimension of the paths' vertex sets)."""
    log_vd = math.floor(math.log2(vertex_diameter - 2)) if vertex_diameter > 3 else 0
    return math.ceil(RK_CONSTANT / (epsilon * epsilon)
                     * (log_vd + 1 + math.log(1 / delta)))
