"""Approximate BC from sampled shortest paths (turbobc/_pairs.py, spmv/kernels/pairs.cu): the
random bits, the estimator's expectation against networkx, the guarantee over many seeds,
determinism, the fallback when path counts overflow, and the device kernel against the host
reference, sample for sample."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
from gpu_helpers import make_graph
from turbobc._pairs import (PathCountOverflow, _mix, pair_bits, pair_factor, pair_of,
                            pair_sample_limit, race_keys, reference_counts)

PAIRS = dict(approx_sampler="pairs")


def _csr(G):
    return nx.to_scipy_sparse_array(G, nodelist=range(G.number_of_nodes()), format="csr",
                                    weight=None)


def _graphs():
    """(name, networkx graph) over the classes the sampler must get right."""
    two_parts = nx.disjoint_union(nx.cycle_graph(7), nx.path_graph(6))
    return [
        ("karate", nx.karate_club_graph()),
        ("grid 5x6", nx.convert_node_labels_to_integers(nx.grid_2d_graph(5, 6))),
        ("random directed", nx.gnp_random_graph(25, 0.12, seed=3, directed=True)),
        ("disconnected", two_parts),
        ("star", nx.star_graph(9)),
    ]


def _pattern(G):
    return make_graph(_csr(G), G.is_directed()).pattern


# ---- the random bits --------------------------------------------------------------------------

def test_bits_match_splitmix_on_python_ints():
    """The vectorized bits equal the same three splitmix64 rounds on Python integers."""
    seed, sample = 2**63 + 12345, 987654321
    for salt, v in [(0, 0), (1, 0), (2, 17), (3, 2**31 - 1), (4, 5)]:
        expected = _mix(_mix(_mix(seed) ^ sample) ^ (v * 8 + salt))
        assert int(pair_bits(seed, sample, salt, v)) == expected
    many = pair_bits(seed, sample, 2, np.arange(50))
    assert [int(b) for b in many] == [int(pair_bits(seed, sample, 2, v)) for v in range(50)]


def test_pairs_are_uniform_over_ordered_pairs():
    """s ≠ t, and each of the n (n − 1) ordered pairs comes up as often as the others
    (chi-square with 19 degrees of freedom: 50 is beyond its 0.9999 quantile, 45.0)."""
    n, draws = 5, 20_000
    seen = np.zeros((n, n))
    for i in range(draws):
        s, t = pair_of(7, i, n)
        assert s != t
        seen[s, t] += 1
    expected = draws / (n * (n - 1))
    off_diagonal = seen[~np.eye(n, dtype=bool)]
    assert ((off_diagonal - expected) ** 2 / expected).sum() < 50


def test_race_picks_in_proportion_to_weight():
    """Among weights 1, 2, 5 the race's winner frequencies are 1/8, 2/8, 5/8 (within 5
    standard errors over 20,000 races)."""
    weights = np.array([1.0, 2.0, 5.0])
    wins = np.zeros(3)
    for i in range(20_000):
        keys = race_keys(pair_bits(3, i, 2, np.arange(3)), weights)
        wins[np.argmax(keys)] += 1
    p = weights / weights.sum()
    assert np.all(np.abs(wins / 20_000 - p) <= 5 * np.sqrt(p * (1 - p) / 20_000))


# ---- the estimator ----------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("endpoints", [False, True])
@pytest.mark.parametrize("name, G", _graphs(), ids=[name for name, _ in _graphs()])
def test_expected_count_is_networkx_bc(name, G, endpoints):
    """c · counts / K estimates networkx's normalized BC without bias: every vertex within 5
    standard errors of the Bernoulli mean (networkx's value / c) after K = 6,000 samples;
    a wrong path law (not uniform among the shortest paths) or a wrong factor fails this."""
    n, K = G.number_of_nodes(), 6_000
    exact = nx.betweenness_centrality(G, endpoints=endpoints)
    exact = np.array([exact[v] for v in range(n)])
    c = pair_factor(n, endpoints)
    counts = reference_counts(_pattern(G), G.is_directed(), 2024, 0, K, endpoints=endpoints)
    p = exact / c
    error = np.sqrt(p * (1 - p) / K) * c
    assert np.all(np.abs(counts / K * c - exact) <= 5 * error + 1e-12)


def test_one_path_per_reachable_pair():
    """On a path graph every pair has one shortest path: a sample of (s, t) counts exactly
    the vertices between them (and both ends with endpoints)."""
    n = 9
    pattern = _pattern(nx.path_graph(n))
    for i in range(40):
        s, t = pair_of(11, i, n)
        inner = reference_counts(pattern, False, 11, i, 1)
        ends = reference_counts(pattern, False, 11, i, 1, endpoints=True)
        low, high = min(s, t), max(s, t)
        assert np.flatnonzero(inner).tolist() == list(range(low + 1, high))
        assert np.flatnonzero(ends).tolist() == list(range(low, high + 1))


def test_unreachable_pairs_count_nothing():
    """A directed path 0 -> 1 -> ... : pairs with s after t have no path and add nothing."""
    n = 6
    pattern = _pattern(nx.path_graph(n, create_using=nx.DiGraph))
    for i in range(30):
        s, t = pair_of(5, i, n)
        counts = reference_counts(pattern, True, 5, i, 1, endpoints=True)
        assert counts.sum() == (t - s + 1 if s < t else 0)


def test_ranges_add_up_and_repeat():
    """Samples are a function of (seed, number): ranges add up, runs repeat."""
    pattern = _pattern(nx.karate_club_graph())
    whole = reference_counts(pattern, False, 9, 0, 300)
    parts = reference_counts(pattern, False, 9, 0, 120) + reference_counts(pattern, False, 9,
                                                                           120, 180)
    np.testing.assert_array_equal(whole, parts)
    np.testing.assert_array_equal(whole, reference_counts(pattern, False, 9, 0, 300))
    assert not np.array_equal(whole, reference_counts(pattern, False, 10, 0, 300))


# ---- the guarantee ----------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name, G, epsilon", [
    ("karate", nx.karate_club_graph(), 0.1),
    ("random directed", nx.gnp_random_graph(30, 0.1, seed=4, directed=True), 0.1),
    ("grid", nx.convert_node_labels_to_integers(nx.grid_2d_graph(6, 6)), 0.1),
])
def test_guarantee_over_seeds(name, G, epsilon):
    """bc(epsilon=, delta=0.1) with pairs, 12 seeds: no value off by more than ε (a miss in
    more than 3 of 12 would put the miss rate above δ = 0.1 with probability < 0.03 under the
    guarantee; the bound is loose, so 0 misses is what it gives)."""
    A = _csr(G)
    n = A.shape[0]
    exact = nx.betweenness_centrality(G)
    exact = np.array([exact[v] for v in range(n)])
    misses = 0
    with turbobc.tuning(**PAIRS):
        for seed in range(12):
            result = turbobc.run_bc(A, epsilon=epsilon, delta=0.1, seed=seed,
                                    engine="graphblas", directed=G.is_directed())
            assert result.facts["sampler"] == "pairs"
            assert result.facts["samples"] <= pair_sample_limit(n, False, epsilon, 0.1)
            misses += np.max(np.abs(result.values - exact)) > epsilon
    assert misses == 0


def test_facts_and_seed_determinism():
    A = _csr(nx.karate_club_graph())
    with turbobc.tuning(**PAIRS):
        first = turbobc.run_bc(A, epsilon=0.1, seed=3, engine="graphblas")
        again = turbobc.run_bc(A, epsilon=0.1, seed=3, engine="graphblas")
    np.testing.assert_array_equal(first.values, again.values)
    facts = first.facts
    assert facts["sampler"] == "pairs" and facts["sample_range"] == 1.0
    assert facts["hoeffding_samples"] == pair_sample_limit(34, False, 0.1, 0.1)
    assert facts["checkpoints"][-1] == facts["samples"]
    assert facts["stopped_by"] in ("radius", "hoeffding", "riondato-kornaropoulos")


@pytest.mark.parametrize("G", [
    nx.path_graph(10), nx.grid_2d_graph(7, 9), nx.balanced_tree(3, 4),
    nx.disjoint_union(nx.path_graph(20), nx.star_graph(5)),
    nx.barabasi_albert_graph(300, 2, seed=1), nx.empty_graph(4),
    nx.connected_watts_strogatz_graph(200, 4, 0.05, seed=2),
], ids=["path", "grid", "tree", "disconnected", "barabasi-albert", "no edges", "small world"])
def test_vertex_diameter_bound_bounds_networkx(G):
    """The bound is at least the most vertices on a shortest path (networkx's largest
    eccentricity plus one), and at most twice that plus one."""
    from turbobc._pairs import vertex_diameter_bound

    true = 1 + max(max(nx.eccentricity(G.subgraph(c)).values())
                   for c in nx.connected_components(G))
    bound = vertex_diameter_bound(_csr(nx.convert_node_labels_to_integers(G)))
    assert true <= bound <= 2 * true + 1


@pytest.mark.parametrize("seed", range(40))
def test_vertex_diameter_bound_from_a_central_vertex(seed):
    """The double sweep's central vertex keeps the bound a bound on every random graph (one to
    several components), and makes it tight, up to the parity of the diameter d (a centre's
    eccentricity is ⌈d / 2⌉), where the graph has a centre: on a path, and on a path hung off
    the least vertex of a clique, whose own eccentricity is the path's whole length (twice
    the diameter before)."""
    from turbobc._pairs import vertex_diameter_bound

    G = nx.gnp_random_graph(80, 0.035, seed=seed)
    true = 1 + max(max(nx.eccentricity(G.subgraph(c)).values())
                   for c in nx.connected_components(G))
    assert true <= vertex_diameter_bound(_csr(G)) <= 2 * true + 1
    path = nx.path_graph(seed + 2)
    lollipop = nx.lollipop_graph(5, seed + 3)  # a clique with a path off vertex 4
    lollipop = nx.relabel_nodes(lollipop, {4: 0, 0: 4})  # the path off the least vertex
    for graph in (path, lollipop):
        d = nx.diameter(graph)
        assert vertex_diameter_bound(_csr(graph)) == 2 * -(-d // 2) + 1


def _directed_vertex_diameter(G) -> int:
    """The most vertices on a shortest path of a directed graph, by brute force."""
    return max(1 + max(lengths.values()) for _, lengths in nx.all_pairs_shortest_path_length(G))


@pytest.mark.parametrize("G", [
    nx.gnp_random_graph(200, 0.02, seed=1, directed=True),
    nx.path_graph(12, create_using=nx.DiGraph), nx.cycle_graph(10, create_using=nx.DiGraph),
    nx.DiGraph(nx.scale_free_graph(300, seed=2)), nx.gn_graph(200, seed=3),
    nx.disjoint_union(nx.cycle_graph(7, create_using=nx.DiGraph),
                      nx.gnp_random_graph(60, 0.06, seed=5, directed=True)),
    nx.DiGraph(nx.grid_2d_graph(6, 7)), nx.empty_graph(3, create_using=nx.DiGraph),
], ids=["random", "path", "cycle", "scale-free", "growing network", "disconnected",
        "grid both ways", "no edges"])
def test_directed_vertex_diameter_bound_bounds_networkx(G):
    """Directed: the bound (components of the condensation, each crossed in at most
    e_in + e_out hops) is at least the brute-force vertex diameter, exact on a path and a
    cycle, and at most the vertices of the graph."""
    from turbobc._pairs import vertex_diameter_bound

    G = nx.convert_node_labels_to_integers(G)
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    true = _directed_vertex_diameter(G)
    bound = vertex_diameter_bound(_csr(G), directed=True)
    assert true <= bound <= G.number_of_nodes()
    if G.number_of_edges() in (11, 10) and G.number_of_nodes() in (12, 10):
        assert bound == true  # the path, the cycle


def test_directed_vertex_diameter_bound_gives_up_on_long_chains():
    """A directed chain longer than MAX_DAG_LEVELS: no bound (the levels would cost a step
    each); the run then has Hoeffding's size as its only upper limit."""
    from turbobc import _pairs

    n = _pairs.MAX_DAG_LEVELS + 10
    chain = sp.csr_array((np.ones(n - 1), (np.arange(n - 1), np.arange(1, n))), shape=(n, n))
    assert _pairs.vertex_diameter_bound(chain, directed=True) is None
    short = chain[:100, :100]
    assert _pairs.vertex_diameter_bound(sp.csr_array(short), directed=True) == 100


def test_rk_samples_formula():
    """(c / ε²)(⌊log₂(VD − 2)⌋ + 1 + ln(1/δ)), c = 1/2, rounded up: VD = 4, ε = 0.1,
    δ = 0.05 gives 50 (1 + 1 + 2.9957...) = 249.79 -> 250; VD = 1026, ε = 0.01, δ = 0.05:
    5000 (10 + 1 + 2.9957...) = 69978.7 -> 69979; VD at most 3: the log term is 0."""
    from turbobc._pairs import rk_samples

    assert rk_samples(4, 0.1, 0.05) == 250
    assert rk_samples(1026, 0.01, 0.05) == 69979
    assert rk_samples(3, 0.1, 0.05) == rk_samples(2, 0.1, 0.05) == 200


def _two_stars(leaves: int) -> nx.Graph:
    """Two stars whose centres are joined: vertex diameter 4, both centres of BC near 1/2."""
    G = nx.Graph([(0, 1)])
    G.add_edges_from((0, 2 + i) for i in range(leaves))
    G.add_edges_from((1, 2 + leaves + i) for i in range(leaves))
    return G


@pytest.mark.slow
@pytest.mark.parametrize("directed", [False, True])
def test_riondato_kornaropoulos_ends_the_run(directed):
    """On two joined stars (vertex diameter 4, two vertices of BC near 1/2; directed: leaves
    into the first centre, on to the second, out to its leaves) Riondato and
    Kornaropoulos's size comes before the radii and Hoeffding's size; the run stops there,
    and every value is within ε over 10 seeds (their bound's guarantee)."""
    from turbobc._pairs import rk_samples, vertex_diameter_bound

    G = _two_stars(100)
    if directed:
        G = nx.DiGraph([(v, 0) for v in G[0] if v != 1] + [(0, 1)]
                       + [(1, v) for v in G[1] if v != 0])
    A = _csr(G)
    n, epsilon = A.shape[0], 0.1
    exact = nx.betweenness_centrality(G)
    exact = np.array([exact[v] for v in range(n)])
    assert vertex_diameter_bound(A, directed) == (4 if directed else 5)
    size = rk_samples(vertex_diameter_bound(A, directed), epsilon / pair_factor(n, False), 0.05)
    assert size < pair_sample_limit(n, False, epsilon, 0.1)
    with turbobc.tuning(**PAIRS):
        for seed in range(10):
            result = turbobc.run_bc(A, epsilon=epsilon, delta=0.1, seed=seed,
                                    engine="graphblas", directed=directed)
            assert result.facts["stopped_by"] == "riondato-kornaropoulos"
            assert result.facts["samples"] == size
            assert result.facts["bound"] == epsilon
            assert np.max(np.abs(result.values - exact)) <= epsilon


def test_auto_samples_sources_on_graphblas_and_pairs_on_the_cpu_engine():
    G = nx.karate_club_graph()
    exact = np.array([v for v in nx.betweenness_centrality(G).values()])
    result = turbobc.run_bc(_csr(G), epsilon=0.2, seed=0, engine="graphblas")
    assert result.facts["sampler"] != "pairs"
    result = turbobc.run_bc(_csr(G), epsilon=0.2, seed=0, engine="cpu")
    assert result.facts["sampler"] == "pairs"
    assert np.max(np.abs(result.values - exact)) <= 0.2


def test_pairs_refuse_weights_and_bad_knob():
    A = _csr(nx.karate_club_graph())
    with turbobc.tuning(**PAIRS), pytest.raises(ValueError, match="takes neither weight"):
        turbobc.bc(A, epsilon=0.1, weight=True, engine="graphblas")
    with turbobc.tuning(approx_sampler="paths"), pytest.raises(ValueError,
                                                              match="approx_sampler must be"):
        turbobc.bc(A, epsilon=0.1, engine="graphblas")


def _diamond_chain(diamonds: int) -> sp.csr_array:
    """Diamonds in a row (vertex 3d to 3d + 3 through 3d + 1 or 3d + 2): the path counts
    double at each."""
    G = nx.Graph()
    for d in range(diamonds):
        a, b, c, e = 3 * d, 3 * d + 1, 3 * d + 2, 3 * d + 3
        G.add_edges_from([(a, b), (a, c), (b, e), (c, e)])
    return _csr(G)


def _far_sample(n: int, seed: int, apart: int) -> int:
    """The first sample whose s and t lie at least ``apart`` vertex numbers apart."""
    return next(i for i in range(10**6) if abs(np.subtract(*pair_of(seed, i, n))) >= apart)


def test_overflowing_counts_raise():
    """2,200 diamonds: a pair at the two ends meets in the middle, past 1,024 doublings on
    each side: float64 overflows and the reference says so."""
    A = _diamond_chain(2200)
    sample = _far_sample(A.shape[0], 0, 3 * 2150)
    with pytest.raises(PathCountOverflow, match="overflowed float64"):
        reference_counts(_pattern(nx.from_scipy_sparse_array(A)), False, 0, sample, 1)


def test_overflow_falls_back_to_sources(monkeypatch):
    """A run whose pair samples overflow samples sources instead, and says why."""
    import turbobc._pairs

    def overflowing(*args, **kwargs):
        raise PathCountOverflow("sample 0: a shortest-path count from 0 overflowed float64")

    monkeypatch.setattr(turbobc._pairs, "reference_counts", overflowing)
    A = _csr(nx.karate_club_graph())
    with turbobc.tuning(**PAIRS):
        result = turbobc.run_bc(A, epsilon=0.2, seed=1, engine="graphblas")
    assert "overflowed" in result.facts["pairs_declined"]
    assert result.facts["sampler"] == "sources"
    exact = nx.betweenness_centrality(nx.karate_club_graph())
    assert np.max(np.abs(result.values - np.array([exact[v] for v in range(34)]))) <= 0.2


# ---- the device kernel ------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("endpoints", [False, True])
@pytest.mark.parametrize("name, G", _graphs() + [
    ("ladder", nx.ladder_graph(40)),
    ("random undirected", nx.gnp_random_graph(200, 0.03, seed=8)),
    ("random directed 200", nx.gnp_random_graph(200, 0.03, seed=9, directed=True)),
], ids=lambda x: x if isinstance(x, str) else "")
def test_device_counts_equal_the_reference(name, G, endpoints):
    """The kernel's counts of 3,000 samples equal the host reference's, bit for bit, with
    the default grid and with 3 blocks (samples split differently over the blocks)."""
    import turbobc.engines.gpu.pairs as pairs

    graph = make_graph(_csr(G), G.is_directed())
    expected = reference_counts(graph.pattern, graph.directed, 77, 0, 3000,
                                endpoints=endpoints)
    sampler = pairs.PairSampler(graph, endpoints=endpoints)
    np.testing.assert_array_equal(sampler(77, 0, 1000), reference_counts(
        graph.pattern, graph.directed, 77, 0, 1000, endpoints=endpoints))
    np.testing.assert_array_equal(sampler(77, 1000, 2000), expected)
    small = pairs.PairSampler(graph, endpoints=endpoints, blocks_per_sm=1)
    small.blocks = 3
    np.testing.assert_array_equal(small(77, 0, 3000), expected)


@pytest.mark.gpu
def test_device_run_meets_the_guarantee():
    """On the GPU, "auto" samples pairs for ego-Facebook at ε = 0.02; every value within ε of
    the exact one, and the same values again for the same seed."""
    A = turbobc.load_ego_facebook()
    exact = turbobc.bc(A, engine="gpu")
    result = turbobc.run_bc(A, epsilon=0.02, seed=4, engine="gpu")
    assert result.facts["sampler"] == "pairs"
    assert np.max(np.abs(result.values - exact)) <= 0.02
    again = turbobc.run_bc(A, epsilon=0.02, seed=4, engine="gpu")
    np.testing.assert_array_equal(result.values, again.values)


@pytest.mark.gpu
def test_device_overflow_raises():
    """The far pair of test_overflowing_counts_raise overflows on the device too."""
    import turbobc.engines.gpu.pairs as pairs

    A = _diamond_chain(2200)
    sample = _far_sample(A.shape[0], 0, 3 * 2150)
    sampler = pairs.PairSampler(make_graph(A, False))
    with pytest.raises(PathCountOverflow, match="overflowed float64"):
        sampler(0, sample, 1)


@pytest.mark.parametrize("engine", ["graphblas", "cpu"])
def test_a_small_riondato_kornaropoulos_size_is_drawn_at_once_without_a_pilot(engine):
    """When Riondato and Kornaropoulos's size is at most PILOT_SHARE first checkpoints, the
    run draws it at once with no pilot (one checkpoint, that size); at a tighter ε on the same
    graph, where the size is larger, the pilot runs. Every value within ε either way."""
    from turbobc._approx import FIRST_CHECKPOINT, PILOT_SHARE
    from turbobc._pairs import rk_samples, vertex_diameter_bound

    G = _two_stars(100)
    A = _csr(G)
    n = A.shape[0]
    exact = nx.betweenness_centrality(G)
    exact = np.array([exact[v] for v in range(n)])
    sizes = {eps: rk_samples(vertex_diameter_bound(A, False), eps / pair_factor(n, False), 0.05)
             for eps in (0.1, 0.03)}
    assert sizes[0.1] <= PILOT_SHARE * FIRST_CHECKPOINT < sizes[0.03]
    with turbobc.tuning(**PAIRS):
        quick = turbobc.run_bc(A, epsilon=0.1, delta=0.1, seed=3, engine=engine)
        piloted = turbobc.run_bc(A, epsilon=0.03, delta=0.1, seed=3, engine=engine)
    assert quick.facts["pilot_samples"] == 0 and quick.facts["checkpoints"] == [sizes[0.1]]
    assert quick.facts["stopped_by"] == "riondato-kornaropoulos"
    # (the cpu engine's pilot at 0.03 finds every source cheaper on this small graph: exact)
    assert piloted.facts["pilot_samples"] > 0 or "pairs_declined" in piloted.facts
    assert quick.facts["sampler"] == "pairs"
    for result, eps in ((quick, 0.1), (piloted, 0.03)):
        assert np.max(np.abs(result.values - exact)) <= eps
