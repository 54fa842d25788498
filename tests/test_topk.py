"""turbobc.top_k (turbobc/_topk.py): the k most central vertices with a guarantee. Errors,
the pieces (the set, the open sides), the exact switch, and the guarantee itself against
exact BC over many seeds on undirected, directed, tied and disconnected graphs."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pytest

import turbobc
from data_files import load
from turbobc._topk import Separated, _state, top_set


def _csr(G):
    return nx.to_scipy_sparse_array(G, nodelist=range(G.number_of_nodes()), format="csr",
                                    weight=None)


# ---- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("k, kwargs, kind, message", [
    (0, {}, ValueError, r"k must lie in \[1, n\] = \[1, 34\]; got 0"),
    (35, {}, ValueError, r"k must lie in \[1, n\] = \[1, 34\]; got 35"),
    (2.5, {}, TypeError, r"k must be an int, the number of vertices wanted; got float 2.5"),
    (True, {}, TypeError, r"k must be an int, the number of vertices wanted; got bool True"),
    (3, dict(epsilon=None), ValueError, r"top_k needs epsilon, a number in \(0, 1\)"),
    (3, dict(epsilon=0.0), ValueError, r"epsilon must lie strictly between 0 and 1; got 0.0"),
    (3, dict(epsilon=1.5), ValueError, r"epsilon must lie strictly between 0 and 1; got 1.5"),
    (3, dict(delta=1), ValueError, r"delta must lie strictly between 0 and 1; got 1"),
    (3, dict(epsilon="0.1"), TypeError, r"epsilon must be a number in \(0, 1\); got str"),
    (3, dict(seed=1.5), TypeError, r"with epsilon, seed must be None, an int or a "
                                   r"numpy.random.Generator; got float 1.5"),
    (3, dict(engine="tpu"), ValueError, r"engine"),
])
def test_errors(k, kwargs, kind, message):
    with pytest.raises(kind, match=message):
        turbobc.top_k(_csr(nx.karate_club_graph()), k, **dict(dict(engine="cpu"), **kwargs))


# ---- the pieces -------------------------------------------------------------------------------

def test_top_set_is_the_k_largest_most_central_first_ties_by_index():
    values = np.array([0.1, 0.5, 0.3, 0.5, 0.3, 0.0, 0.3])
    assert top_set(values, 1).tolist() == [1]
    assert top_set(values, 3).tolist() == [1, 3, 2]
    assert top_set(values, 4).tolist() == [1, 3, 2, 4]
    assert top_set(values, 7).tolist() == [1, 3, 2, 4, 6, 0, 5]
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.integers(0, 5, 40).astype(float)
        k = int(rng.integers(1, 41))
        assert top_set(v, k).tolist() == np.lexsort((np.arange(40), -v))[:k].tolist()


def test_the_sides_left_open_by_the_intervals():
    """Inside: the 2 largest means. 0.9 ± 0.1 is settled above everything outside; 0.5 ± 0.1
    and 0.45 ± 0.1 overlap (both open); 0.1 ± 0.05 lies below the inside's lowest end."""
    mean = np.array([0.9, 0.5, 0.45, 0.1])
    state = _state(mean, np.array([0.1, 0.1, 0.1, 0.05]), 2)
    assert state.inside.tolist() == [True, True, False, False]
    assert state.unsettled.tolist() == [False, True, True, False]
    assert state.theta == pytest.approx(0.475)
    apart = _state(mean, np.array([0.1, 0.01, 0.01, 0.05]), 2)
    assert not apart.unsettled.any()


def test_the_goal_stops_once_separated_or_the_open_sides_are_within_epsilon():
    goal = Separated(2)
    mean = np.array([0.9, 0.5, 0.2, 0.1])
    met, bound, need, name = goal.check(mean, 10**6, 1.0, 10.0, 0.01)
    assert met and name == "separated" and bound == 0.0
    close = np.array([0.9, 0.5, 0.499, 0.1])
    met, bound, need, name = goal.check(close, 1000, 1.0, 10.0, 0.01)
    assert not met and name == "radius" and bound > 0.01 and need > 1000
    met, bound, need, name = goal.check(close, 10**7, 1.0, 10.0, 0.01)
    assert met and name == "radius" and 0 < bound <= 0.01
    assert goal.state.unsettled.tolist() == [False, True, True, False]


def test_the_targets_follow_the_distance_to_the_pilots_boundary():
    wanted = Separated(2).targets(0.01)(np.array([0.9, 0.5, 0.3, 0.1]))
    assert wanted(np.array([0.9, 0.4, 0.41, 0.0])) == pytest.approx([0.25, 0.01, 0.01, 0.2])
    everyone = Separated(4).targets(0.01)(np.array([0.9, 0.5, 0.3, 0.1]))
    assert np.isinf(everyone(np.array([0.2]))).all()


# ---- whole runs -------------------------------------------------------------------------------

def test_result_fields_and_the_exact_switch_on_a_small_graph():
    """karate's 34 sources are fewer than any sample: exact, the top 3 of networkx's values,
    most central first, intervals of zero width, no ties."""
    G = nx.karate_club_graph()
    want = nx.betweenness_centrality(G)
    result = turbobc.top_k(_csr(G), 3, epsilon=0.05, seed=0, engine="cpu")
    assert isinstance(result, turbobc.TopK)
    assert result.vertices.dtype == np.int64 and result.vertices.tolist() == [0, 33, 32]
    np.testing.assert_allclose(result.values, [want[0], want[33], want[32]], rtol=1e-12)
    facts = result.facts
    assert facts["stopped_by"] == "exact" and facts["k"] == 3 and facts["ties"].size == 0
    assert "exact_because" in facts
    np.testing.assert_allclose(facts["lower"], result.values)
    np.testing.assert_allclose(facts["upper"], result.values)


def test_exact_ties_across_the_boundary_are_reported():
    """A star of 4 leaves with a path of 3 from its centre: the two path vertices next to the
    centre... every leaf has BC 0; k = 3 takes the centre, the path's inner vertex and one of
    the zeros, which the other zeros tie."""
    G = nx.star_graph(4)
    G.add_edges_from([(0, 5), (5, 6)])
    result = turbobc.top_k(_csr(G), 3, epsilon=0.05, seed=0, engine="cpu")
    exact = turbobc.bc(_csr(G), engine="cpu")
    assert result.facts["stopped_by"] == "exact"
    assert result.vertices.tolist()[:2] == [0, 5]
    zeros = np.flatnonzero(exact == 0).tolist()
    assert sorted(result.facts["ties"].tolist()) == zeros


def test_unnormalized_values_are_networkx_scale():
    G = nx.karate_club_graph()
    want = nx.betweenness_centrality(G, normalized=False)
    result = turbobc.top_k(_csr(G), 2, epsilon=0.05, normalized=False, engine="cpu")
    np.testing.assert_allclose(result.values, [want[0], want[33]], rtol=1e-12)
    np.testing.assert_allclose(result.facts["upper"], result.values, rtol=1e-12)


def test_every_vertex_and_tiny_graphs():
    A = _csr(nx.path_graph(2))
    result = turbobc.top_k(A, 2, engine="cpu")
    assert result.vertices.tolist() == [0, 1] and result.values.tolist() == [0.0, 0.0]
    G = nx.barabasi_albert_graph(300, 2, seed=1)
    every = turbobc.top_k(_csr(G), 300, epsilon=0.1, seed=0, engine="cpu")
    assert sorted(every.vertices.tolist()) == list(range(300))
    assert every.facts["ties"].size == 0


def test_a_sampled_run_separates_and_is_the_exact_top_set():
    """A Barabási–Albert graph's most central vertex stands apart (0.225 against 0.152):
    top-1 at ε = 0.02 stops when separated, long before every value is within ε, with the
    exact most central vertex inside its interval."""
    A = _csr(nx.barabasi_albert_graph(3000, 2, seed=1))
    exact = turbobc.bc(A, engine="cpu")
    result = turbobc.top_k(A, 1, epsilon=0.02, seed=0, engine="cpu")
    full = turbobc.run_bc(A, epsilon=0.02, seed=0, engine="cpu")
    assert result.facts["stopped_by"] == "separated" and result.facts["ties"].size == 0
    assert result.facts["bound"] == 0.0
    assert result.facts["samples"] < full.facts["samples"] / 2
    assert result.vertices.tolist() == [int(np.argmax(exact))]
    assert result.facts["lower"][0] <= exact.max() <= result.facts["upper"][0]


# ---- the guarantee over many seeds ------------------------------------------------------------

def _allowed_misses(runs: int, delta: float, level: float = 0.01) -> int:
    from scipy.stats import binom

    m = 0
    while binom.sf(m, runs, delta) >= level:
        m += 1
    return m


def _miss(vertices: np.ndarray, exact: np.ndarray, k: int, epsilon: float,
          separated: bool) -> bool:
    """Whether a result breaks the guarantee: a vertex above θ + 2ε left out, or one below
    θ − 2ε taken in (θ the k-th largest exact value); a separated result must be an exact
    top-k set (ties apart)."""
    theta = np.sort(exact)[-k]
    inside = np.zeros(exact.size, dtype=bool)
    inside[vertices] = True
    if (exact[~inside] > theta + 2 * epsilon).any() or (exact[inside] < theta - 2 * epsilon).any():
        return True
    return separated and exact[inside].min() < exact[~inside].max() if k < exact.size else False


def _two_parts():
    G = nx.disjoint_union(nx.barabasi_albert_graph(700, 2, seed=5),
                          nx.connected_watts_strogatz_graph(600, 4, 0.1, seed=6))
    return G


@pytest.mark.parametrize("name, k, epsilon", [
    ("barabasi_albert_1500", 10, 0.02), ("directed_gnp_1200", 10, 0.02),
    pytest.param("ring_of_cliques", 5, 0.02, marks=pytest.mark.slow),
    pytest.param("two_components", 10, 0.02, marks=pytest.mark.slow),
    pytest.param("power", 10, 0.02, marks=pytest.mark.slow)])
def test_guarantee_holds_over_many_seeds(name, k, epsilon):
    """Each run samples (the exact rule would sweep these graphs' few thousand sources where
    the paths' κ is the cpu engine's: κ = 0 here); the misses stay within the binomial
    allowance of δ. (About 12 s a graph on 2 busy cores; three of them are left to -m slow.)"""
    G = {"barabasi_albert_1500": lambda: nx.barabasi_albert_graph(1500, 2, seed=1),
         "directed_gnp_1200": lambda: nx.gnp_random_graph(1200, 3 / 1200, seed=2,
                                                          directed=True),
         "ring_of_cliques": lambda: nx.ring_of_cliques(60, 20),
         "two_components": _two_parts,
         "power": None}[name]
    A = load("power.mtx", directed=False) if G is None else _csr(G())
    exact = turbobc.bc(A, engine="cpu")
    seeds, delta, misses, kinds = 20, 0.1, 0, set()
    for seed in range(seeds):
        # every source sampled or paths: the exact rule would sweep the small graphs
        with turbobc.tuning(cpu_pair_switch_in_sources=0.0):
            result = turbobc.top_k(A, k, epsilon=epsilon, delta=delta, seed=seed, engine="cpu")
        assert result.facts["stopped_by"] != "exact"
        kinds.add(result.facts["stopped_by"])
        misses += _miss(result.vertices, exact, k, epsilon,
                        result.facts["stopped_by"] == "separated")
    assert misses <= _allowed_misses(seeds, delta)
    if name == "ring_of_cliques":  # 60 equal values: the ties are reported
        assert kinds <= {"radius", "hoeffding", "riondato-kornaropoulos"}


# ---- the command line -------------------------------------------------------------------------

def _write_edges(tmp_path, G):
    graph = tmp_path / "g.txt"
    graph.write_text("".join(f"{u} {v}\n" for u, v in G.edges()))
    return graph


def test_cli_top_with_epsilon_uses_top_k(tmp_path, capsys):
    """`bc --epsilon --top K` prints top_k's K vertices and its guarantee; a sampled run
    (Barabási–Albert, 3,000 vertices, ε = 0.02) lists the exact most central vertex first."""
    from turbobc.cli import main

    G = nx.barabasi_albert_graph(3000, 2, seed=1)
    graph = _write_edges(tmp_path, G)
    assert main(["bc", str(graph), "--epsilon", "0.02", "--seed", "0", "--top", "1",
                 "--engine", "cpu"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"top 1 with a guarantee: [\d,]+ sampled shortest paths of pairs \(after "
                     r"a pilot of [\d,]+\); with probability 0.9 every vertex more than 0.04 "
                     r"above the 1st largest value is listed and none more than 0.04 below it "
                     r"\(stopped by separated\)", out), out
    assert "top 1 by betweenness centrality (epsilon 0.02, normalized) on engine cpu" in out
    best = int(np.argmax(turbobc.bc(_csr(G), engine="cpu")))  # the file's ids are G's
    assert re.search(rf"\n   1 +{best} +0\.\d+\n?$", out), out


def test_cli_top_k_exact_and_capped_at_n(tmp_path, capsys):
    from turbobc.cli import main

    graph = _write_edges(tmp_path, nx.karate_club_graph())  # 34 vertices, ids 0..33
    assert main(["bc", str(graph), "--epsilon", "0.05", "--top", "50", "--engine",
                 "cpu"]) == 0
    out = capsys.readouterr().out
    assert "top 34: exact values (every source swept: " in out
    assert len([line for line in out.splitlines() if re.match(r" +\d+ +\d+ +0\.", line)]) == 34


def test_cli_epsilon_with_output_keeps_every_value(tmp_path, capsys):
    """With -o every value is needed: bc(epsilon=) runs, and its line is printed."""
    from turbobc.cli import main

    graph = _write_edges(tmp_path, nx.karate_club_graph())
    assert main(["bc", str(graph), "--epsilon", "0.05", "--top", "3", "-o",
                 str(tmp_path / "bc.csv"), "--engine", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "approximate: exact values" in out and "top 3" not in out


def test_ordinal():
    from turbobc.cli._commands import _ordinal

    assert [_ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]


# ---- the GPU ----------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_top_k_of_ego_facebook_is_exact_before_sampling():
    """On the GPU ego-Facebook's 4,039 sources are one wave: top_k at ε = 0.01 sweeps them
    (the exact rule before sampling) and returns the top 10 of the exact values."""
    A = turbobc.load_ego_facebook()
    result = turbobc.top_k(A, 10, epsilon=0.01, seed=0, engine="gpu")
    exact = turbobc.bc(A, engine="cpu")
    assert result.facts["stopped_by"] == "exact" and result.facts["pilot_samples"] == 0
    assert result.facts["exact_because"].startswith("before sampling")
    assert result.vertices.tolist() == top_set(exact, 10).tolist()


@pytest.mark.gpu
def test_gpu_top_k_samples_paths_on_a_deep_grid_and_keeps_the_guarantee():
    """A 200 x 200 grid on the GPU: top-10 at ε = 0.02 samples shortest paths (far fewer
    than the 40,000 sources) and keeps the guarantee against the exact values."""
    G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(200, 200))
    A = _csr(G)
    result = turbobc.top_k(A, 10, epsilon=0.02, seed=0, engine="gpu")
    exact = turbobc.bc(A, engine="gpu")
    assert result.facts["sampler"] == "pairs" and result.facts["stopped_by"] != "exact"
    assert not _miss(result.vertices, exact, 10, 0.02,
                     result.facts["stopped_by"] == "separated")
