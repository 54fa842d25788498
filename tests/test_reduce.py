"""Folding the trees hanging off an undirected graph (turbobc._reduce) is exact: bc() equals
networkx with and without the folding, on graphs with many pendant trees, forests,
disconnected graphs and isolated vertices, on every engine."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
from graph_cases import adjacency, shuffled, with_hanging_trees

from oracles import assert_edge_values
from turbobc._api import run_bc, run_edge_bc
from turbobc._graph import Graph
from turbobc._reduce import fold_trees


GRAPHS = {
    "ws_with_trees": lambda: shuffled(with_hanging_trees(
        nx.connected_watts_strogatz_graph(60, 4, 0.2, seed=2), 80, seed=1), 3),
    "grid_with_trees": lambda: with_hanging_trees(nx.grid_2d_graph(6, 7), 50, seed=4),
    "ba_with_trees": lambda: shuffled(with_hanging_trees(nx.barabasi_albert_graph(50, 2, seed=5),
                                                   60, seed=6), 7),
    "forest": lambda: nx.disjoint_union_all([nx.random_labeled_tree(k, seed=k)
                                             for k in (1, 2, 3, 17, 40)]),
    "path": lambda: nx.path_graph(30),
    "star": lambda: nx.star_graph(12),
    "lollipop": lambda: nx.lollipop_graph(6, 9),
    "barbell": lambda: nx.barbell_graph(5, 4),
    "mixed_components": lambda: shuffled(nx.disjoint_union_all([
        with_hanging_trees(nx.cycle_graph(9), 15, seed=8), nx.empty_graph(3),
        nx.random_labeled_tree(12, seed=9), nx.complete_graph(5), nx.path_graph(2)]), 10),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("endpoints", [False, True])
def test_folded_bc_equals_networkx(engine_config, name, normalized, endpoints):
    engine, kernel = engine_config
    G = GRAPHS[name]()
    result = run_bc(adjacency(G), normalized=normalized, endpoints=endpoints, engine=engine,
                    kernel=kernel)
    want = nx.betweenness_centrality(G, normalized=normalized, endpoints=endpoints)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)
    leaves = sum(1 for v in G if G.degree(v) == 1)
    assert result.facts["folded"] >= leaves  # it did fold (at least every leaf)


EDGE_ENGINES = [pytest.param("graphblas", id="graphblas"), pytest.param("cpu", id="cpu"),
                pytest.param("gpu", id="gpu", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("engine", EDGE_ENGINES)
@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("normalized", [True, False])
def test_folded_edge_bc_equals_networkx(engine, name, normalized):
    """Edge BC of the folded graph: the bridges of the trees in closed form, the core's edges
    from its weighted sweeps."""
    G = GRAPHS[name]()
    result = run_edge_bc(adjacency(G), normalized=normalized, engine=engine)
    assert_edge_values(result.values, G, nx.edge_betweenness_centrality(
        G, normalized=normalized), rtol=1e-12, atol=1e-12)
    leaves = sum(1 for v in G if G.degree(v) == 1)
    assert result.facts["folded"] >= leaves


@pytest.mark.parametrize("engine", EDGE_ENGINES)
@pytest.mark.parametrize("lengths", ["int", "float"])
def test_folded_weighted_edge_bc_equals_networkx(engine, lengths):
    """With integer lengths the trees fold (exact sums); with lengths such as 0.1 they do
    not, and both equal networkx."""
    G = with_hanging_trees(nx.connected_watts_strogatz_graph(40, 4, 0.3, seed=3), 50, seed=2)
    rng = np.random.default_rng(5)
    for u, v in G.edges:
        G[u][v]["weight"] = (int(rng.integers(1, 6)) if lengths == "int"
                             else float(rng.choice([0.1, 0.2, 0.3])))
    result = run_edge_bc(G, weight="weight", engine=engine)
    assert_edge_values(result.values, G, nx.edge_betweenness_centrality(G, weight="weight"),
                       rtol=1e-12, atol=1e-12)
    assert (result.facts["folded"] > 0) == (lengths == "int")


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_folding_off_gives_the_same(name, cpu_engine):
    G = GRAPHS[name]()
    folded = run_bc(adjacency(G), engine=cpu_engine)
    with turbobc.tuning(fold_trees=False):
        plain = run_bc(adjacency(G), engine=cpu_engine)
    assert plain.facts["folded"] == 0
    np.testing.assert_allclose(folded.values, plain.values, rtol=1e-12, atol=1e-14)


def test_what_is_folded():
    """A triangle with a path of 3 hanging off corner 0 and 4 leaves on corner 1: the core is
    the triangle, where 0 stands for 4 vertices, 1 for 5 and 2 for itself."""
    G = nx.cycle_graph(3)
    G.add_edges_from([(0, 3), (3, 4), (4, 5)])          # path 0-3-4-5
    G.add_edges_from([(1, 6), (1, 7), (1, 8), (1, 9)])  # four leaves on 1
    A = sp.csr_array(adjacency(G))
    folded = fold_trees(Graph(pattern=A, directed=False))
    assert folded.folded == 7
    assert folded.kept.tolist() == [0, 1, 2]
    assert folded.weight.tolist() == [4.0, 5.0, 1.0]  # r(0): 0,3,4,5; r(1): 1,6,7,8,9
    # vertex 3 cuts {4, 5} from the other 7: 2·2·7 ordered pairs, and nothing else
    assert folded.cut_pairs[3] == 2 * 2 * 7
    # vertex 1: four parts of one leaf and the rest of 5 -> 9² − 4·1² − 5² = 52
    assert folded.cut_pairs[1] == 9 ** 2 - 4 - 25
    assert folded.cut_pairs[6] == 0  # a leaf is never between others


def test_nothing_to_fold():
    cycle = Graph(pattern=sp.csr_array(adjacency(nx.cycle_graph(8))), directed=False)
    assert fold_trees(cycle) is None
    path = nx.path_graph(6, create_using=nx.DiGraph)
    directed = Graph(pattern=sp.csr_array(adjacency(path)), directed=True)
    assert fold_trees(directed) is None  # not exact on directed graphs: never folded


def test_samples_and_given_sources_are_not_folded(cpu_engine):
    G = GRAPHS["ws_with_trees"]()
    A = adjacency(G)
    sampled = run_bc(A, k=20, seed=1, engine=cpu_engine)
    assert sampled.facts["folded"] == 0
    want = nx.betweenness_centrality(G, k=20, seed=1)
    np.testing.assert_allclose(sampled.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)
    chosen = run_bc(A, sources=[0, 5, 9], engine=cpu_engine)
    assert chosen.facts["folded"] == 0


def test_a_few_leaves_are_not_worth_folding(cpu_engine):
    """Below Tuning.fold_min_share of the vertices the graph is swept as it is (the weighted
    core sweeps cost more than the little they save); the values are the same either way."""
    G = nx.karate_club_graph()  # one leaf in 34 vertices
    A = adjacency(G)
    plain = run_bc(A, engine=cpu_engine)
    assert plain.facts["folded"] == 0
    with turbobc.tuning(fold_min_share=0.0):
        folded = run_bc(A, engine=cpu_engine)
    assert folded.facts["folded"] == 1 and folded.facts["core_vertices"] == 33
    want = nx.betweenness_centrality(G)
    for result in (plain, folded):
        np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)
