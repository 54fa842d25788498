"""Never slower than exact (turbobc/_exact_rule.py): the one rule by which an approximate run
finishes by the exact sweep, its costs in the engine's waves, and its three moments (before
sampling, after a pilot step, after a checkpoint) on both samplers; the GPU's runs through
the same rule (marked gpu)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import turbobc
from data_files import load
from turbobc._exact_rule import EXACT_SHARE, EXACT_WAVES, ExactCheaper, ExactRule
from turbobc._stopping import until_within


# ---- the costs --------------------------------------------------------------------------------

def test_a_draw_costs_its_waves_however_few_sources_the_last_holds():
    rule = ExactRule(4039, wave=lambda k: 128)
    assert rule.waves(0) == 0 and rule.waves(1) == 1 and rule.waves(128) == 1
    assert rule.waves(129) == 2 and rule.waves(4039) == 32
    # draws to 200, 300, 450 from 100: 100, 100 and 150 sources, 1 + 1 + 2 waves
    assert rule.cost(100, [200, 300, 450]) == 4.0
    assert rule.cost(300, [200, 300]) == 0.0  # nothing left to draw
    assert rule.exact_cost(0) == 32 and rule.exact_cost(4000) == 1  # the sources left


def test_sampled_paths_cost_kappa_of_a_source_of_a_full_wave():
    rule = ExactRule(1000, pair_cost=0.2, wave=lambda k: 100)
    assert rule.cost(0, [500, 2000]) == pytest.approx(0.2 * 2000 / 100)
    assert rule.exact_cost(700) == 10  # the exact sweep of paths starts from scratch
    assert rule.share == 1.0 and ExactRule(1000).share == EXACT_SHARE
    alone = ExactRule(1000, pair_cost=0.2)  # no wave said: a wave is one source
    assert alone.cost(0, [2000]) == pytest.approx(400.0) and alone.exact_cost(0) == 1000


def test_before_sampling_a_few_waves_and_an_upper_limit_past_their_cost():
    """Exact before sampling where n is at most EXACT_WAVES waves and the upper limit's
    samples cost at least the exact sweep; never where the executor does not say its wave."""
    few = ExactRule(4039, wave=lambda k: 1024, engine="cpu")
    reason = few.before(60_023)
    assert reason.startswith("before sampling: the 4,039 sources are 4 of the cpu engine's "
                             f"waves (at most EXACT_WAVES = {EXACT_WAVES})")
    assert few.before(2_000) is None  # the sample would stop short of the n sources
    assert ExactRule(4039, wave=lambda k: 128).before(60_023) is None  # 32 waves
    assert ExactRule(4039).before(60_023) is None  # Dask, graphblas: no wave said
    paths = ExactRule(4039, pair_cost=0.2, wave=lambda k: 4064, engine="gpu")
    assert paths.before(60_023).startswith("before sampling")  # 0.2 · 60,023 ≥ 4,064
    assert paths.before(2_400) is None  # ε = 0.05's paths cost less than a wave


def test_the_exact_sweep_counts_the_sources_left_once_trees_and_chains_fold():
    """road-luxembourg-osm on the GPU: 114,599 vertices, of which bc() sweeps 9,343 once its
    trees and chains fold; 279,925 sampled paths (ε = 0.005) had been weighed against all
    114,599 sources and drawn (4.7 s against the exact run's 1.45 s on an H200). The folding
    is worked out once, and only where it may decide: draws cheaper than the sweep of its
    floor (the sources no folding removes) never ask it."""

    class Folding:
        asked = 0

        def __init__(self, floor):
            self.floor = floor

        def swept_sources(self):
            Folding.asked += 1
            return 9_343

    rule = ExactRule(114_599, pair_cost=0.2, wave=lambda k: 16_384, engine="gpu",
                     folding=Folding(2_000))
    assert rule.before(279_925) == (
        "before sampling: the 9,343 sources left of 114,599 once trees and chains fold are 1 "
        "of the gpu engine's waves (at most EXACT_WAVES = 4), and the run may draw 279,925 "
        "sampled paths, 3.4 waves of 16,384 sources")
    assert rule.during(0, 140_000, [1_024, 140_000], stage="pilot").endswith(
        "the exact sweep of the 9,343 sources left of 114,599 once trees and chains fold "
        "costs 1.0 waves of 16,384 sources")
    assert Folding.asked == 1  # worked out once
    # 20,000 paths cost 0.24 waves, less than the one wave of the floor's sweep: not asked
    cheap = ExactRule(114_599, pair_cost=0.2, wave=lambda k: 16_384, folding=Folding(2_000))
    assert cheap.during(0, 20_000, [1_024, 20_000], stage="pilot") is None
    assert Folding.asked == 1
    # 200,000 paths cost 2.4 waves, more than the floor's sweep: asked, and exact wins
    assert cheap.during(0, 200_000, [1_024, 200_000], stage="pilot") is not None
    assert Folding.asked == 2


def test_the_floor_counts_what_no_folding_removes():
    """ExactPlan.floor = n − 2 d, d the vertices of at most two neighbours, at most the
    sources bc() sweeps on trees, chains and meshes; n where nothing folds."""
    from turbobc._fold import ExactPlan
    from turbobc._validation import validate

    rng = np.random.default_rng(2)
    tree = nx.random_labeled_tree(300, seed=3) if hasattr(nx, "random_labeled_tree") \
        else nx.random_tree(300, seed=3)
    looped = nx.cycle_graph(40)
    for v in range(40, 400):
        looped.add_edge(v, int(rng.integers(0, v)))
    for G, directed in ((tree, False), (looped, False), (nx.grid_2d_graph(12, 12), False),
                        (nx.path_graph(50), False), (looped, True)):
        A = nx.to_scipy_sparse_array(G, format="csr")
        call = validate(A, sources=None, k=None, seed=None, normalized=True, endpoints=False,
                        directed=directed, engine="cpu", kernel="auto", progress=False)
        plan = ExactPlan(call)
        with turbobc.tuning(fold_chains=True, chain_min_vertices=0):
            swept = plan.swept_sources()
        assert 1 <= plan.floor <= swept <= A.shape[0]
        if directed:
            assert plan.floor == swept == A.shape[0]


def test_a_sampler_weighs_the_folded_sweep_and_sweeps_it_folded():
    """A 60-vertex cycle with trees of 3,000 vertices hanging off it: bc() sweeps the 60 core
    sources only. The cpu engine's sampled paths at ε = 0.01 cost many times the folded
    sweep (one wave, on any number of threads): exact before sampling, folded, and the values
    networkx's."""
    rng = np.random.default_rng(5)
    G = nx.cycle_graph(60)
    for v in range(60, 3060):  # each new vertex hangs off an earlier one
        G.add_edge(v, int(rng.integers(0, v)))
    A = nx.to_scipy_sparse_array(G, nodelist=range(3060), format="csr")
    result = turbobc.run_bc(A, epsilon=0.01, delta=0.1, seed=0, engine="cpu")
    assert result.facts["stopped_by"] == "exact" and result.facts["pilot_samples"] == 0
    assert "once trees and chains fold" in result.facts["exact_because"]
    assert result.facts["folded"] == 3000
    expected = nx.betweenness_centrality(G)
    np.testing.assert_allclose(result.values, [expected[v] for v in range(3060)], rtol=1e-12,
                               atol=1e-15)


def test_while_sampling_the_draws_still_needed_against_the_exact_sweep():
    rule = ExactRule(4039, wave=lambda k: 128, engine="cpu")
    points = [1000, 1200, 1440, 4039]
    # 36,000 predicted, capped at the limit (n): 3,039 sources left in 3 draws: 24 waves,
    # against 24 waves of the exact sweep of the 3,039 left
    reason = rule.during(1000, 36_000, points, stage="radius")
    assert reason.startswith("at 1,000 samples the largest radius predicts 4,039 sources")
    assert rule.during(1000, 1100, points, stage="radius") is None  # one more wave
    assert rule.during(0, 3000, points, stage="pilot").startswith("the pilot predicts 3,000")
    assert rule.during(4039, 5000, points, stage="radius") is None  # nothing left
    paths = ExactRule(4941, pair_cost=0.2, wave=lambda k: 128)
    assert paths.during(0, 42_446, [6000, 60_000], stage="pilot").endswith(
        "the exact sweep of the 4,941 sources left costs 39.0 waves of 128 sources")
    assert paths.during(0, 12_000, [12_000, 60_000], stage="pilot") is None


def test_exact_cheaper_carries_the_reason_and_the_pilot():
    error = ExactCheaper("why", 256)
    assert str(error) == "why" and error.reason == "why" and error.pilot_samples == 256


# ---- the loop ---------------------------------------------------------------------------------

def _uniform_draw(n: int, seed: int):
    """draw(done, k) of values X in {0, 1} with mean 0.5 at every vertex: the radii shrink as
    slowly as they can."""
    rng = np.random.default_rng(seed)
    total = np.zeros(n)

    def draw(done, k):
        total[:] += rng.integers(0, 2, size=(k - done, n)).sum(axis=0)
        return total / k

    return draw


def test_a_checkpoint_that_predicts_more_than_the_rest_of_the_sources_sweeps_them():
    """Sources: after a checkpoint whose radii predict more draws than the sources left
    cost, the run draws up to n (the rest of the permutation: exact) and says why."""
    n, limit = 3000, 3000
    rule = ExactRule(n, wave=lambda k: 64)
    values, facts = until_within(0.05, 0.1, n, 1.0, limit, _uniform_draw(n, 1), exact_at=n,
                                 rule=rule, first=128)
    assert facts["stopped_by"] == "exact" and facts["samples"] == n and facts["bound"] == 0.0
    assert facts["exact_because"].startswith("at ") and facts["checkpoints"][-1] == n
    assert len(facts["checkpoints"]) >= 2


def test_sampled_paths_that_cost_more_raise_exact_cheaper_after_a_checkpoint():
    n = 3000
    rule = ExactRule(n, pair_cost=1.0, wave=lambda k: 64)
    with pytest.raises(ExactCheaper, match=r"^at [0-9,]+ samples the largest radius predicts"):
        until_within(0.05, 0.1, n, 1.0, 10**6, _uniform_draw(n, 2), rule=rule, first=128)


def test_without_a_rule_the_loop_samples_on_to_its_upper_limit():
    """The same draws without a rule: every checkpoint is drawn, up to n, where the result is
    exact because the upper limit reached it."""
    n = 3000
    values, facts = until_within(0.05, 0.1, n, 1.0, 3000, _uniform_draw(n, 3), exact_at=n,
                                 first=128)
    assert len(facts["checkpoints"]) > 4 and facts["stopped_by"] == "exact"
    assert facts["exact_because"] == "the upper limit reaches the 3,000 sources: every one swept"


# ---- whole runs -------------------------------------------------------------------------------

def test_sampled_paths_go_exact_before_sampling_on_a_few_waves(monkeypatch):
    """The cpu engine's pairs through the same rule before sampling: with every n a few
    waves, ego-Facebook-like sizes at ε = 0.01 sweep every source at once (folded as bc()
    folds), no pilot, and say why; at ε = 0.2 the paths stay."""
    monkeypatch.setattr("turbobc._exact_rule.EXACT_WAVES", 10**6)
    A = load("ca-GrQc.txt.gz", directed=False)
    exact = turbobc.run_bc(A, epsilon=0.01, delta=0.1, seed=1, engine="cpu")
    assert exact.facts["stopped_by"] == "exact" and exact.facts["pilot_samples"] == 0
    assert exact.facts["exact_because"].startswith("before sampling")
    assert exact.facts["pairs_declined"] == exact.facts["exact_because"]
    np.testing.assert_allclose(exact.values, turbobc.bc(A, engine="cpu"), rtol=1e-12,
                               atol=1e-15)
    loose = turbobc.run_bc(A, epsilon=0.2, delta=0.1, seed=1, engine="cpu")
    assert loose.facts["sampler"] == "pairs" and "exact_because" not in loose.facts


def test_planned_batch_of_asks_the_engine_once():
    from turbobc._run import planned_batch_of
    from turbobc._validation import validate

    A = nx.to_scipy_sparse_array(nx.karate_club_graph(), format="csr")
    for engine, expect_none in (("cpu", False), ("graphblas", True)):
        call = validate(A, sources=None, k=None, seed=None, normalized=True, endpoints=False,
                        directed=None, engine=engine, kernel="auto", progress=False,
                        memory_limit=None, weight=None, client=None)
        plan = planned_batch_of(call.problem, call.engine)
        assert (plan is None) == expect_none
        if plan is not None:
            assert plan(1) == plan(34) >= 1
    assert planned_batch_of(call.problem, "cpu", client=object()) is None


# ---- the GPU through the same rule ------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("sampler", ["auto", "sources"])
def test_gpu_ego_facebook_goes_exact_before_sampling(sampler):
    """ego-Facebook at ε = 0.01 on the GPU (exact 0.013 s, 30,009 sampled paths 0.16 s on an
    H200): its 4,039 sources are one wave, and the upper limit passes their cost, so the run
    sweeps them before sampling, whichever sampler it would use."""
    A = turbobc.load_ego_facebook()
    with turbobc.tuning(approx_sampler=sampler):
        result = turbobc.run_bc(A, epsilon=0.01, delta=0.1, seed=0, engine="gpu")
    assert result.facts["stopped_by"] == "exact" and result.facts["pilot_samples"] == 0
    assert result.facts["exact_because"].startswith("before sampling: the 4,039 sources are")
    np.testing.assert_allclose(result.values, turbobc.bc(A, engine="gpu"), rtol=1e-10,
                               atol=1e-13)


@pytest.mark.gpu
def test_gpu_deep_graph_keeps_its_sampled_paths():
    """A 300 x 300 grid (90,000 sources of a deep graph, many waves) at ε = 0.05: the paths
    cost far less than the exact sweep, so the rule lets them run."""
    G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(300, 300))
    A = nx.to_scipy_sparse_array(G, format="csr")
    result = turbobc.run_bc(A, epsilon=0.05, delta=0.1, seed=0, engine="gpu")
    assert result.facts["sampler"] == "pairs" and "exact_because" not in result.facts
    assert result.facts["samples"] < 90_000
