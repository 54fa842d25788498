"""Approximate BC with a guarantee (turbobc/_approx.py): the errors, the radius, determinism,
the exact fallback, and the guarantee itself measured over many seeds."""

from __future__ import annotations

import math
import re

import networkx as nx
import numpy as np
import pytest

import turbobc
from data_files import load, path as data_path
from turbobc._approx import (bernstein_radius, checkpoints, hoeffding_samples, sample_range,
                             scale_of)

ENGINE = dict(engine="graphblas")


def _ring_of_cliques():
    return nx.to_scipy_sparse_array(nx.ring_of_cliques(6, 5), format="csr")


# ---- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, kind, message", [
    (dict(delta=0.1), ValueError, r"delta= states the confidence of the epsilon guarantee; "
                                  r"give epsilon too"),
    (dict(epsilon=0.0), ValueError, r"epsilon must lie strictly between 0 and 1; got 0.0"),
    (dict(epsilon=1.5), ValueError, r"epsilon must lie strictly between 0 and 1; got 1.5"),
    (dict(epsilon=0.1, delta=1), ValueError, r"delta must lie strictly between 0 and 1; got 1"),
    (dict(epsilon="0.1"), TypeError, r"epsilon must be a number in \(0, 1\); got str '0.1'"),
    (dict(epsilon=True), TypeError, r"epsilon must be a number in \(0, 1\); got bool True"),
    (dict(epsilon=0.1, k=3), ValueError, r"epsilon chooses how many sources to sample from "
                                         r"the guarantee it must reach; give either epsilon"),
    (dict(epsilon=0.1, sources=[0, 1]), ValueError, r"give either epsilon \(and delta\) or "
                                                    r"k / sources, not both"),
    (dict(epsilon=0.1, targets=[0, 1]), ValueError, r"targets= \(subset BC\) is not sampled"),
    (dict(epsilon=0.1, normalized=False), ValueError, r"epsilon bounds the error of "
                                                      r"normalized values"),
    (dict(epsilon=0.1, seed=1.5), TypeError, r"with epsilon, seed must be None, an int or a "
                                             r"numpy.random.Generator; got float 1.5"),
])
def test_errors(kwargs, kind, message):
    with pytest.raises(kind, match=message):
        turbobc.bc(_ring_of_cliques(), **ENGINE, **kwargs)


# ---- the pieces -------------------------------------------------------------------------------

def test_scale_and_range_follow_networkx():
    """mean of X over all n sources = the exact normalized value: n · scale / n = scale, the
    factor of turbobc/_rescale.py for exact BC; R is n · scale times the largest term."""
    from turbobc._rescale import rescale

    for n in (5, 40):
        for endpoints in (False, True):
            assert rescale(np.ones(n), normalized=True, directed=False,
                           endpoints=endpoints)[0] == pytest.approx(scale_of(n, endpoints))
    assert sample_range(40, False) == pytest.approx(40 / 39)
    assert sample_range(40, True) == pytest.approx(1.0)


def test_checkpoints_and_hoeffding():
    assert checkpoints(1000, 128, 2.0) == [128, 256, 512, 1000]
    assert checkpoints(100, 128, 2.0) == [100]
    assert checkpoints(256, 128, 2.0) == [128, 256]
    assert checkpoints(1000, 128, 1.5) == [128, 192, 288, 432, 648, 972, 1000]
    assert checkpoints(5, 1, 1.25) == [1, 2, 3, 4, 5]  # at least one more each time
    assert hoeffding_samples(1000, 0.1, 0.1, 1.0) == math.ceil(math.log(40000) / 0.02)


def _radius_in_python_floats(mean: float, k: int, R: float, log_term: float,
                             iterations: int = 40) -> float:
    """The fixed-point iteration of bernstein_radius's docstring for one mean, in Python
    floats: the reference the compiled loop is checked against."""
    mean = min(max(mean, 0.0), R)
    a = R * log_term / (3 * k)
    scale = 2 * log_term / k
    x = a + math.sqrt(a * a + scale * R * R / 4)
    half = R / 2
    for _ in range(iterations):
        nearest = min(max(half, mean - x), mean + x)
        nearest = min(max(nearest, 0.0), R)
        x = a + math.sqrt(a * a + scale * nearest * (R - nearest))
    return x


def test_radius_of_many_means_is_the_radius_of_each():
    """bernstein_radius (compiled, one mean at a time) gives, bit for bit, what the iteration
    in Python floats gives for each mean, with one log term for all or one per mean."""
    rng = np.random.default_rng(5)
    for k, R in [(1, 1.0), (128, 1.0), (5000, 1.0002), (10**6, 2.0)]:
        mean = np.concatenate([rng.uniform(-0.1, 1.1 * R, 200), [0.0, R / 2, R]])
        for log_term in (17.5, rng.uniform(1, 40, mean.size)):
            radii = bernstein_radius(mean, k, R, log_term)
            each = [_radius_in_python_floats(float(m), k, R, float(L))
                    for m, L in zip(mean, np.broadcast_to(log_term, mean.shape))]
            np.testing.assert_array_equal(radii, each)


@pytest.mark.parametrize("seed", range(5))
def test_radius_covers_every_mean_it_allows(seed):
    """Brute force: for every μ on a grid of [0, R], if Bernstein's t(μ) (variance μ(R − μ))
    allows the sample mean m, i.e. |m − μ| ≤ t(μ), the radius of m covers that deviation."""
    rng = np.random.default_rng(seed)
    R = float(rng.uniform(0.5, 1.5))
    k = int(rng.integers(10, 5000))
    L = float(rng.uniform(2, 25))
    means = rng.uniform(0, R, 200)
    radius = bernstein_radius(means, k, R, L)
    mu = np.linspace(0, R, 4001)
    a = R * L / (3 * k)
    t = a + np.sqrt(a * a + 2 * L * mu * (R - mu) / k)
    for m, r in zip(means, radius):
        allowed = np.abs(m - mu) <= t
        assert np.all(np.abs(m - mu[allowed]) <= r + 1e-12)
    # and it lies between the bound at μ = m and the one at the largest variance, R²/4
    at_mean = a + np.sqrt(a * a + 2 * L * means * (R - means) / k)
    assert np.all(radius >= at_mean - 1e-12)
    assert np.all(radius <= a + math.sqrt(a * a + 2 * L * R * R / 4 / k) + 1e-12)


# ---- whole runs -------------------------------------------------------------------------------

def test_exact_when_sampling_would_cost_as_much(cpu_engine):
    """On a small graph Hoeffding's size passes n: every source is swept, networkx's values.
    (Sources are sampled here: the cpu engine would otherwise sample shortest paths, whose
    Hoeffding size is smaller, tests/test_pairs.py.)"""
    G = nx.karate_club_graph()
    A = nx.to_scipy_sparse_array(G, format="csr")
    with turbobc.tuning(approx_sampler="sources"):
        result = turbobc.run_bc(A, epsilon=0.1, delta=0.1, seed=0, engine=cpu_engine)
    assert result.facts["stopped_by"] == "exact" and result.facts["samples"] == 34
    assert result.facts["bound"] == 0.0
    want = nx.betweenness_centrality(G)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_same_seed_same_values_whatever_the_batch():
    A = _power()
    first = turbobc.run_bc(A, epsilon=0.1, seed=3, **ENGINE)
    again = turbobc.run_bc(A, epsilon=0.1, seed=3, **ENGINE)
    np.testing.assert_array_equal(first.values, again.values)
    with turbobc.tuning(cpu_batch_cap=40 * A.shape[0]):  # batches of 40 sources
        small = turbobc.run_bc(A, epsilon=0.1, seed=3, **ENGINE)
    assert small.facts["batch"] < first.facts["batch"]
    assert small.facts["samples"] == first.facts["samples"] < A.shape[0]
    # the same sources, summed in other batches: equal up to the order of float additions
    np.testing.assert_allclose(small.values, first.values, rtol=1e-12, atol=1e-15)
    other = turbobc.run_bc(A, epsilon=0.1, seed=4, **ENGINE)
    assert not np.array_equal(other.values, first.values)


def _power():
    return load("power.mtx", directed=False)


def _generated(name):
    if name == "barabasi_albert_1500":
        G = nx.barabasi_albert_graph(1500, 2, seed=1)
    elif name == "directed_gnp_1200":
        G = nx.gnp_random_graph(1200, 3 / 1200, seed=2, directed=True)
    elif name == "weighted_grid_20x30":
        G = nx.grid_2d_graph(20, 30)
        rng = np.random.default_rng(3)
        for u, v in G.edges:
            G.edges[u, v]["weight"] = int(rng.integers(1, 5))
    return G


SEEDS = 20
DELTA = 0.1


def _allowed_misses(runs: int, delta: float, level: float = 0.01) -> int:
    """The guarantee: a run misses (some value off by more than ε) with probability at most δ,
    so over independent runs the misses are at most Binomial(runs, δ). A correct bound gives
    more than the returned count with probability below ``level`` (20 runs, δ = 0.1: 6)."""
    from scipy.stats import binom

    m = 0
    while binom.sf(m, runs, delta) >= level:
        m += 1
    return m


@pytest.mark.slow
@pytest.mark.parametrize("name, epsilon", [("power", 0.15), ("barabasi_albert_1500", 0.1),
                                           ("directed_gnp_1200", 0.1),
                                           ("weighted_grid_20x30", 0.1)])
def test_guarantee_holds_over_many_seeds(name, epsilon, cpu_engine, sampling_only):
    """Each run samples fewer than n sources; the misses stay within the binomial
    allowance (the bounds are conservative: these runs miss none)."""
    delta = DELTA
    if name == "power":
        A, weight = _power(), None
    else:
        G = _generated(name)
        A = G  # networkx input: its direction and, for the grid, its weights
        weight = "weight" if name.startswith("weighted") else None
    exact = turbobc.bc(A, weight=weight, engine=cpu_engine)
    n = exact.size
    misses, errors = 0, []
    for seed in range(SEEDS):
        result = turbobc.run_bc(A, epsilon=epsilon, delta=delta, seed=seed, weight=weight,
                                engine=cpu_engine)
        assert result.facts["samples"] < n  # sampled, not exact: the test means something
        error = float(np.max(np.abs(result.values - exact)))
        errors.append(error)
        misses += error > epsilon
    assert misses <= _allowed_misses(SEEDS, delta)
    assert max(errors) > 0  # an estimate, not the exact values


# ---- edge BC ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    (dict(epsilon=0.1, k=3), r"give either epsilon \(and delta\) or k / sources, not both"),
    (dict(epsilon=0.1, targets=[0, 1]), r"targets= \(subset BC\) is not sampled"),
    (dict(epsilon=0.1, normalized=False), r"epsilon bounds the error of normalized values"),
    (dict(epsilon=2.0), r"epsilon must lie strictly between 0 and 1; got 2.0"),
    (dict(delta=0.1), r"delta= states the confidence of the epsilon guarantee"),
])
def test_edge_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        turbobc.edge_bc(_ring_of_cliques(), **ENGINE, **kwargs)


@pytest.mark.parametrize("directed", [False, True])
def test_edge_exact_when_sampling_would_cost_as_much(directed):
    """Hoeffding's size over the edges is above n on a small graph: every source is swept and
    the result is networkx's exact edge BC, at (i, j) and, undirected, (j, i)."""
    G = (nx.gnp_random_graph(60, 0.08, seed=4, directed=True) if directed
         else nx.karate_club_graph())
    result = turbobc.run_edge_bc(G, epsilon=0.1, seed=0, **ENGINE)
    assert result.facts["stopped_by"] == "exact" and result.facts["bound"] == 0.0
    assert result.facts["samples"] == G.number_of_nodes()
    want = nx.edge_betweenness_centrality(G)
    E = result.values
    assert E.nnz == (1 if directed else 2) * G.number_of_edges()
    for (u, v), value in want.items():
        assert E[u, v] == pytest.approx(value, rel=1e-12, abs=1e-15)
        if not directed:
            assert E[v, u] == E[u, v]


def test_edge_sample_range_and_scale():
    """An edge's term from one source is at most n − 1 targets, and networkx scales edge sums
    by 1 / (n (n − 1)): X lies in [0, 1], the range and scale of vertex BC with endpoints."""
    from turbobc._rescale import rescale

    for n in (5, 40):
        assert sample_range(n, True) == pytest.approx(1.0)
        assert rescale(np.ones(3), normalized=True, directed=False, endpoints=True,
                       n=n)[0] == pytest.approx(scale_of(n, True))
    # the largest term: the edge of a leaf, from the leaf, carries all n − 1 targets
    star = nx.star_graph(9)
    one = turbobc.edge_bc(star, sources=[1], normalized=False, **ENGINE)
    assert 2 * one[1, 0] == star.number_of_nodes() - 1  # unnormalized undirected: halved


@pytest.mark.slow
@pytest.mark.parametrize("name, epsilon", [("power", 0.1), ("barabasi_albert_1500", 0.1),
                                           ("directed_gnp_1200", 0.1),
                                           ("weighted_grid_20x30", 0.15)])
def test_edge_guarantee_holds_over_many_seeds(name, epsilon, cpu_engine, sampling_only):
    """As for vertices: edge BC sampled (fewer than n sources) within ε of networkx's exact
    edge BC in all but a binomial allowance of the runs."""
    if name == "power":
        A, weight = _power(), None
        G = nx.from_scipy_sparse_array(A)
    else:
        G = A = _generated(name)
        weight = "weight" if name.startswith("weighted") else None
    want = nx.edge_betweenness_centrality(G, weight=weight)
    index = {v: i for i, v in enumerate(G)}  # the result's rows follow list(G)
    rows, cols = (np.array([index[v] for v in side]) for side in zip(*want))
    exact = np.array(list(want.values()))
    misses, errors = 0, []
    for seed in range(SEEDS):
        result = turbobc.run_edge_bc(A, epsilon=epsilon, seed=seed, weight=weight,
                                     engine=cpu_engine)
        assert result.facts["samples"] < G.number_of_nodes()
        assert result.values.nnz == (1 if G.is_directed() else 2) * exact.size
        error = float(np.max(np.abs(result.values[rows, cols] - exact)))
        errors.append(error)
        misses += error > epsilon
    assert misses <= _allowed_misses(SEEDS, DELTA)
    assert max(errors) > 0


@pytest.mark.slow
def test_edge_same_seed_same_values_whatever_the_batch():
    A = _power()
    first = turbobc.run_edge_bc(A, epsilon=0.1, seed=3, **ENGINE)
    with turbobc.tuning(cpu_batch_cap=40 * A.shape[0]):
        small = turbobc.run_edge_bc(A, epsilon=0.1, seed=3, **ENGINE)
    assert small.facts["batch"] < first.facts["batch"]
    assert small.facts["samples"] == first.facts["samples"] < A.shape[0]
    np.testing.assert_allclose(small.values.toarray(), first.values.toarray(), rtol=1e-12,
                               atol=1e-15)


@pytest.mark.slow
def test_edge_progress_counts_the_samples(cpu_engine):
    done = []

    class Recorder:
        def update(self, k):
            done.append(k)

    result = turbobc.run_edge_bc(_power(), epsilon=0.1, seed=0, progress=Recorder(),
                                 engine=cpu_engine)
    assert sum(done) == result.facts["samples"] + result.facts["pilot_samples"]


@pytest.mark.slow
def test_cli_edge_bc_prints_the_samples_and_the_bound(capsys, tmp_path):
    from turbobc.cli import main

    out_csv = tmp_path / "edges.csv"
    assert main(["edge-bc", str(data_path("power.mtx")), "--epsilon", "0.1", "--seed", "1",
                 "--engine", "graphblas", "--top", "3", "-o", str(out_csv)]) in (None, 0)
    out = capsys.readouterr().out
    line = re.search(r"approximate: ([\d,]+) sampled sources of 4,941 \(after a pilot of "
                     r"([\d,]+)\), every value within ([\d.e-]+) of the exact one with "
                     r"probability 0.9 \(stopped by (\w+)\)", out)
    assert line is not None, out
    assert "edge betweenness centrality (epsilon 0.1, normalized)" in out
    rows = out_csv.read_text().splitlines()
    assert rows[0] == "src,dst,bc" and len(rows) == 1 + 6594  # each undirected edge once
    # the same seed through the API: the same values
    want = turbobc.edge_bc(load("power.mtx", directed=False), epsilon=0.1, seed=1, **ENGINE)
    assert max(float(r.split(",")[2]) for r in rows[1:]) == pytest.approx(want.max(),
                                                                          rel=1e-12)


@pytest.mark.gpu
def test_gpu_edge_samples_the_same_sources():
    A = _power()
    cpu = turbobc.run_edge_bc(A, epsilon=0.1, seed=5, **ENGINE)
    gpu = turbobc.run_edge_bc(A, epsilon=0.1, seed=5, engine="gpu")
    assert gpu.facts["engine"] == "gpu"
    assert gpu.facts["samples"] == cpu.facts["samples"] < A.shape[0]
    np.testing.assert_allclose(gpu.values.toarray(), cpu.values.toarray(), rtol=1e-11,
                               atol=1e-15)


@pytest.mark.slow
def test_progress_counts_the_samples(cpu_engine):
    class Recorder:
        def __init__(self):
            self.done = 0

        def update(self, k):
            self.done += k

    bar = Recorder()
    # ε = 0.04: a run with a pilot on both engines (at 0.1 the cpu engine's sampled paths
    # draw Riondato and Kornaropoulos's few hundred at once, with no pilot)
    result = turbobc.run_bc(_power(), epsilon=0.04, seed=0, progress=bar, engine=cpu_engine)
    assert result.facts["pilot_samples"] > 0
    assert bar.done == result.facts["samples"] + result.facts["pilot_samples"]


@pytest.mark.slow
def test_cli_prints_the_samples_and_the_bound(capsys):
    from turbobc.cli import main

    main(["bc", str(data_path("power.mtx")), "--epsilon", "0.1", "--seed", "1", "--engine",
          "graphblas", "--top", "0"])
    out = capsys.readouterr().out
    line = re.search(r"approximate: ([\d,]+) sampled sources of 4,941 \(after a pilot of "
                     r"([\d,]+)\), every value within ([\d.e-]+) of the exact one with "
                     r"probability 0.9 \(stopped by (\w+)\)", out)
    assert line is not None, out
    if line[4] == "hoeffding":
        assert float(line[3]) == 0.1
    else:
        assert line[4] == "radius" and float(line[3]) <= 0.1
    assert "(epsilon 0.1, normalized)" in out


def test_cli_delta_without_epsilon():
    from turbobc.cli import main

    assert main(["bc", str(data_path("power.mtx")), "--delta", "0.1"]) == 2


@pytest.mark.gpu
def test_gpu_samples_the_same_sources():
    """The GPU engine with the same seed: the same samples, the same values up to the order
    of float additions (the sources are a property of the seed, not of the engine)."""
    A = _power()
    cpu = turbobc.run_bc(A, epsilon=0.1, seed=5, **ENGINE)
    with turbobc.tuning(approx_sampler="sources"):
        gpu = turbobc.run_bc(A, epsilon=0.1, seed=5, engine="gpu")
    assert gpu.facts["samples"] == cpu.facts["samples"] < A.shape[0]
    np.testing.assert_allclose(gpu.values, cpu.values, rtol=1e-11, atol=1e-15)


def test_largest_radius_is_the_largest_of_all():
    """largest_radius, from the one mean nearest R/2, equals the largest radius over all."""
    from turbobc._approx import largest_radius

    rng = np.random.default_rng(6)
    for R in (1.0, 1.02):
        for k in (128, 5000):
            for mean in (rng.uniform(0, R, 500), rng.uniform(0, 0.05, 500),
                         np.array([0.0, R, 1.3 * R]), rng.uniform(0.9 * R, 1.1 * R, 40)):
                every = bernstein_radius(mean, k, R, 12.0).max()
                assert largest_radius(mean, k, R, 12.0) == pytest.approx(every, rel=1e-12)


def test_largest_radius_with_one_log_term_per_vertex():
    """With an L per vertex, largest_radius equals the largest radius over all vertices, and
    radius_above bounds every radius from above."""
    from turbobc._approx import largest_radius, radius_above

    rng = np.random.default_rng(7)
    for R in (1.0, 1.02):
        for k in (128, 5000, 10**6):
            for mean in (rng.uniform(0, R, 500), rng.uniform(0, 0.05, 500),
                         np.array([0.0, R, 1.3 * R]), rng.exponential(0.01, 2000)):
                L = rng.uniform(2.0, 25.0, mean.size)
                every = bernstein_radius(mean, k, R, L)
                assert np.all(radius_above(mean, k, R, L) >= every * (1 - 1e-12))
                assert largest_radius(mean, k, R, L) == pytest.approx(every.max(), rel=1e-12)


def test_allocated_budgets_sum_within_the_budget():
    """Σ exp(−L(v)) stays within the budget; the even share caps every L; vertices of large
    pilot mean get smaller L (more of the budget) than those of small mean."""
    from turbobc._approx import EVEN_SHARE, allocate_log_terms

    rng = np.random.default_rng(8)
    for n, budget, epsilon, pilot_k in ((1000, 0.1 / 40, 0.01, 500),
                                        (200_000, 0.01 / 80, 0.001, 60_000),
                                        (50, 0.2 / 4, 0.1, 128)):
        pilot = np.minimum(rng.pareto(1.5, n) * 1e-3, 1.0)
        pilot[: n // 10] = 0.0
        L = allocate_log_terms(pilot, pilot_k, epsilon, 1.0, budget)
        assert L.shape == (n,) and np.all(np.isfinite(L))
        assert np.exp(-L).sum() <= budget * (1 + 1e-9)
        assert L.max() <= math.log(n / (EVEN_SHARE * budget)) + 1e-12
        order = np.argsort(pilot)
        assert np.all(np.diff(L[order]) <= 1e-9)  # larger pilot mean, smaller (or equal) L


@pytest.mark.slow
def test_budgets_from_the_means_shrink_the_largest_radius():
    """Budgets allocated from the true means (a perfect pilot) give a smaller largest radius
    than the even split at the same sample count, on graphs with a few vertices of large BC."""
    from turbobc._approx import allocate_log_terms, largest_radius

    for G in (nx.barabasi_albert_graph(400, 2, seed=4), nx.karate_club_graph(),
              nx.connected_watts_strogatz_graph(500, 6, 0.05, seed=5)):
        n = G.number_of_nodes()
        mean = np.array(list(nx.betweenness_centrality(G).values())) * (n - 2) / n
        budget = 0.1 / (4 * 20)
        for k, epsilon in ((10_000, 0.02), (200_000, 0.005)):
            L = allocate_log_terms(mean, 10**6, epsilon, 1.0, budget)
            even = math.log(n / budget)
            assert largest_radius(mean, k, 1.0, L) < largest_radius(mean, k, 1.0, even)


def test_a_pilot_that_predicts_most_sources_goes_exact_at_once(cpu_engine, monkeypatch):
    """When the pilot predicts samples that cost more than EXACT_SHARE of the exact sweep, the
    run sweeps every source right after the pilot's first step, as bc() does: exact,
    networkx's values, the facts saying why; a larger graph at a looser ε keeps its
    checkpoints. Where no radius can be within ε before n samples (radius_floor), there is no
    pilot at all. (n is not "a few waves" here, whatever the machine's threads: EXACT_WAVES 0.)"""
    from turbobc._approx import FIRST_CHECKPOINT, radius_floor

    monkeypatch.setattr("turbobc._exact_rule.EXACT_WAVES", 0)
    G = nx.connected_watts_strogatz_graph(600, 4, 0.1, seed=2)
    A = nx.to_scipy_sparse_array(G, format="csr")
    want = nx.betweenness_centrality(G)
    larger = nx.to_scipy_sparse_array(nx.connected_watts_strogatz_graph(3000, 4, 0.1, seed=2),
                                      format="csr")
    # two threads: the waves the rule weighs are the same on every machine (on 16 the exact
    # sweep of the larger graph is 3 waves of 1,024 sources, and cheaper than its samples)
    with turbobc.tuning(approx_sampler="sources", cpu_threads=2):
        tight = turbobc.run_bc(A, epsilon=0.02, delta=0.1, seed=0, engine=cpu_engine)
        tighter = turbobc.run_bc(A, epsilon=0.01, delta=0.1, seed=0, engine=cpu_engine)
        loose = turbobc.run_bc(larger, epsilon=0.1, delta=0.1, seed=0, engine=cpu_engine)
    assert radius_floor(600, 0.1 / 4, 0.02, 1.0) < 600 < radius_floor(600, 0.1 / 4, 0.01, 1.0)
    assert tight.facts["checkpoints"] == [600] and tight.facts["stopped_by"] == "exact"
    assert tight.facts["pilot_samples"] == FIRST_CHECKPOINT and tight.facts["bound"] == 0.0
    assert tight.facts["exact_because"].startswith("the pilot predicts")
    np.testing.assert_allclose(tight.values, [want[v] for v in G], rtol=1e-12, atol=1e-15)
    assert tighter.facts["checkpoints"] == [600] and tighter.facts["pilot_samples"] == 0
    assert tighter.facts["exact_because"].startswith("the upper limit reaches")
    np.testing.assert_allclose(tighter.values, tight.values, rtol=1e-12, atol=1e-15)
    assert loose.facts["stopped_by"] == "radius" and len(loose.facts["checkpoints"]) > 1
    assert loose.facts["samples"] < 3000 and "exact_because" not in loose.facts


def test_no_radius_is_within_epsilon_before_the_floor():
    """radius_floor: with Σ exp(−L(v)) within the budget, the largest radius of any means is
    above ε one sample before the floor (even L, every mean; or L allocated by a pilot), and
    the even L's radius of a mean of 0 is within ε at four times it (there the radius is
    2a + 2LR/k = 8RL / (3k))."""
    from turbobc._approx import allocate_log_terms, largest_radius, radius_floor

    rng = np.random.default_rng(3)
    for n, budget, epsilon, R in [(600, 0.0025, 0.01, 1.0), (5242, 0.1 / 44, 0.02, 1.0),
                                  (10**6, 1e-4, 0.05, 0.9)]:
        floor = radius_floor(n, budget, epsilon, R)
        even = math.log(n / budget)
        for mean in (np.zeros(n), rng.uniform(0, R, n), np.full(n, R / 2)):
            assert largest_radius(mean, floor - 1, R, even) > epsilon
            L = allocate_log_terms(rng.uniform(0, R / 2, n), 10**4, epsilon, R, budget)
            assert largest_radius(mean, floor - 1, R, L) > epsilon
        assert largest_radius(np.zeros(n), 4 * floor, R, even) <= epsilon


def test_checkpoints_aimed_at_the_pilots_prediction():
    """aimed_checkpoints keeps the checkpoints an aimed step below the prediction, takes
    AIM_STEPS steps of AIM_GROWTH from it, then CHECKPOINT_GROWTH to the same limit, and
    keeps the old ones when the new would check more than `most` radii."""
    from turbobc._approx import AIM_GROWTH, AIM_STEPS, aimed_checkpoints

    points = checkpoints(100_000, 1000)
    aimed = aimed_checkpoints(points, 7217.2, len(points) - 1 + AIM_STEPS)
    assert aimed[:5] == [k for k in points if k < 7218] and aimed[-1] == 100_000
    fine = aimed[5:5 + AIM_STEPS + 1]
    assert fine[0] == 7218 and all(b == math.ceil(a * AIM_GROWTH) for a, b in
                                   zip(fine, fine[1:]))
    assert aimed[5 + AIM_STEPS + 1] == math.ceil(fine[-1] * 1.5)
    assert len(aimed) <= len(points) + AIM_STEPS
    assert aimed_checkpoints(points, 7217.2, 2) == points  # too many radii: as they were
    # a checkpoint within one aimed step below the prediction is dropped (its draw would
    # wait for the slowest thread for a few samples)
    assert aimed_checkpoints(points, 99_999.5, len(points) + 3) == [
        k for k in points[:-1] if k * AIM_GROWTH < 100_000] + [100_000]
    assert 86_520 in points


def test_exact_in_few_waves_counts_the_engines_waves():
    """n sources are "a few waves" when at most EXACT_WAVES of the sweeper's planned batch;
    an executor that does not say its batch (Dask) never is."""
    from turbobc._approx import EXACT_WAVES, exact_in_few_waves

    assert exact_in_few_waves(4039, lambda k: 1024)  # 16 threads of 64 lanes
    assert not exact_in_few_waves(4039, lambda k: 128)  # 2 threads
    assert exact_in_few_waves(EXACT_WAVES * 100, lambda k: 100)
    assert not exact_in_few_waves(EXACT_WAVES * 100 + 1, lambda k: 100)
    assert not exact_in_few_waves(10, None)


def test_a_few_waves_go_exact_without_a_pilot(monkeypatch):
    """Where Hoeffding's size reaches n and the n sources are a few of the engine's waves,
    the run sweeps them at once, no pilot: exact, networkx's values, one checkpoint; the
    graphblas engine (no planned batch) keeps its pilot on the same call."""
    monkeypatch.setattr("turbobc._exact_rule.EXACT_WAVES", 10**6)  # every n is a few waves
    G = nx.connected_watts_strogatz_graph(600, 4, 0.1, seed=2)
    A = nx.to_scipy_sparse_array(G, format="csr")
    want = nx.betweenness_centrality(G)
    with turbobc.tuning(approx_sampler="sources"):
        # (ε = 0.02: at 0.01 no radius could be within ε before n, and no engine pilots)
        quick = turbobc.run_bc(A, epsilon=0.02, delta=0.1, seed=0, engine="cpu")
        piloted = turbobc.run_bc(A, epsilon=0.02, delta=0.1, seed=0, engine="graphblas")
    assert quick.facts["checkpoints"] == [600] and quick.facts["stopped_by"] == "exact"
    assert quick.facts["pilot_samples"] == 0 and quick.facts["samples"] == 600
    np.testing.assert_allclose(quick.values, [want[v] for v in G], rtol=1e-12, atol=1e-15)
    assert piloted.facts["pilot_samples"] > 0 and piloted.facts["stopped_by"] == "exact"


def test_pairs_that_would_cost_more_than_every_source_give_way_to_the_exact_sweep():
    """On the cpu engine, when the pairs' pilot predicts more sampled paths than n sources'
    sweeps cost (Tuning.cpu_pair_switch_in_sources), the run sweeps every source, folded as
    bc() folds them: exact, and the facts say why (power at ε = 0.01: about 40,000 paths
    predicted against 4,941 sources); with the knob at 0 the same call samples paths, and a
    small world's (ca-GrQc: about 12,000 predicted against 5,242) keeps them."""
    A = load("power.mtx", directed=False)
    exact = turbobc.run_bc(A, epsilon=0.01, delta=0.1, seed=1, engine="cpu")
    assert exact.facts["stopped_by"] == "exact" and exact.facts["sampler"] == "sources"
    assert exact.facts["pairs_declined"].startswith("the pilot predicts")
    want = turbobc.run_bc(A, engine="cpu").values  # (the grid checks it against networkx)
    np.testing.assert_allclose(exact.values, want, rtol=1e-12, atol=1e-15)
    with turbobc.tuning(cpu_pair_switch_in_sources=0.0):
        sampled = turbobc.run_bc(A, epsilon=0.05, delta=0.1, seed=1, engine="cpu")
    assert sampled.facts["sampler"] == "pairs" and "pairs_declined" not in sampled.facts
    small_world = turbobc.run_bc(load("ca-GrQc.txt.gz", directed=False), epsilon=0.01,
                                 delta=0.1, seed=1, engine="cpu")
    assert small_world.facts["sampler"] == "pairs"


@pytest.mark.slow
def test_pilot_takes_no_more_samples_than_the_even_split():
    """A whole run with the pilot (pairs sampled on the host, a Barabási–Albert graph): it
    stops by the radius, with no more samples than the even split takes on the same draws
    (the pilot's own samples apart)."""
    from turbobc._approx import until_within
    from turbobc._pairs import reference_counts

    G = nx.barabasi_albert_graph(300, 2, seed=4)
    A = nx.to_scipy_sparse_array(G, format="csr")
    A.sort_indices()
    n, seed = A.shape[0], 11
    epsilon, delta, limit = 0.05, 0.1, 4096

    def run(pilot):
        total = np.zeros(n, dtype=np.uint64)
        before = [np.zeros(n, dtype=np.uint64)]

        def sample(first, count):
            total[:] += reference_counts(A, False, seed, first, count)
            return total

        def pilot_mean(done, k):
            before[0] = sample(limit + done, k - done).copy()
            return before[0] / k

        def draw(done, k):
            return (sample(done, k - done) - before[0]).astype(np.float64) / k

        return until_within(epsilon, delta, n, 1.0, limit, draw,
                            pilot=pilot_mean if pilot else None)[1]

    even, piloted = run(False), run(True)
    assert even["pilot_samples"] == 0 and piloted["pilot_samples"] > 0
    assert piloted["stopped_by"] == "radius"
    assert piloted["samples"] <= even["samples"]
