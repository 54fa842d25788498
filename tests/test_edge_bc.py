"""turbobc.edge_bc equals networkx.edge_betweenness_centrality (and its subset variant with
every node a target) on the graph catalogue, directed and undirected, exact and sampled."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
from oracles import assert_edge_values
from graph_cases import GRAPH_CASES
from turbobc._graph import Graph
from turbobc._run import run_schedule
from turbobc.engines import engine_named
from turbobc.engines.protocol import Problem
from turbobc.engines.wide import accumulate_wide

CASES = sorted(GRAPH_CASES)


def _check(E, G, want):
    """E (csr, list(G) order) holds networkx's value on every edge (tests/oracles.py)."""
    assert_edge_values(E, G, want, rtol=1e-12, atol=1e-14)


def _cleaned(G):
    """G's pattern as turbobc sweeps it (no self loops, values 1) and its Graph."""
    A = sp.csr_array(nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr"))
    A.setdiag(0)
    A.eliminate_zeros()
    A.data[:] = 1.0
    return A, Graph(pattern=A, directed=G.is_directed())


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("normalized", [True, False])
def test_exact_edge_bc_equals_networkx(name, normalized, cpu_engine):
    G = GRAPH_CASES[name]()
    E = turbobc.edge_bc(G, normalized=normalized, engine=cpu_engine)
    assert isinstance(E, sp.csr_array) and E.shape == (len(G), len(G))
    _check(E, G, nx.edge_betweenness_centrality(G, normalized=normalized))


@pytest.mark.parametrize("name", ["karate", "grid_6x7", "gnp_medium", "digraph_gnp",
                                  "two_components_isolated", "scale_free_directed"])
@pytest.mark.parametrize("normalized", [True, False])
def test_sampled_edge_bc_equals_networkx(name, normalized, cpu_engine):
    G = GRAPH_CASES[name]()
    for k in (1, 5, len(G) // 2):
        E = turbobc.edge_bc(G, k=k, seed=7, normalized=normalized, engine=cpu_engine)
        _check(E, G, nx.edge_betweenness_centrality(G, k=k, seed=7, normalized=normalized))


@pytest.mark.parametrize("name", ["les_miserables", "grid_deep_2x40", "dag", "digraph_dense"])
def test_chosen_sources_equal_the_subset_variant(name, cpu_engine):
    G = GRAPH_CASES[name]()
    sources = list(G)[::4]
    for normalized in (True, False):
        E = turbobc.edge_bc(G, sources=sources, normalized=normalized, engine=cpu_engine)
        _check(E, G, nx.edge_betweenness_centrality_subset(G, sources, list(G),
                                                           normalized=normalized))


def test_matrix_input_keeps_its_cleaned_pattern(cpu_engine):
    A = sp.csr_array(np.array([[1, 2, 0, 0], [2, 0, 3, 0], [0, 3, 0, 0], [0, 0, 0, 0.0]]))
    E = turbobc.edge_bc(A, normalized=False, engine=cpu_engine)
    # a path 0 - 1 - 2 (the loop at 0 dropped) and an isolated 3: each edge carries the pair
    # of its ends and the pair (0, 2)
    assert E.toarray().tolist() == [[0, 2, 0, 0], [2, 0, 2, 0], [0, 2, 0, 0], [0, 0, 0, 0]]
    assert E.nnz == 4
    assert (E != E.T).nnz == 0


@pytest.mark.parametrize("name", ["karate", "grid_6x7", "digraph_gnp", "dag",
                                  "two_components_isolated"])
def test_wide_sweep_gives_the_same_edge_sums(name):
    """The exponent-per-vertex sweep (turbobc.engines.wide) adds the same per-edge terms."""
    G = GRAPH_CASES[name]()
    A, graph = _cleaned(G)
    sources = np.arange(graph.n)
    want, _ = run_schedule(Problem(graph, edges=True), engine_named("graphblas"), [sources])
    raw, edges = np.zeros(graph.n), np.zeros(graph.nnz)
    accumulate_wide(np, A.indptr, A.indices, graph.n, sources, raw, endpoints=False,
                    edge_raw=edges)
    np.testing.assert_allclose(edges, want.edge, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(raw, want.vertex, rtol=1e-12, atol=1e-12)
    assert edges.any() or graph.nnz == 0


def test_engine_auto_serves_edge_bc_and_edge_subsets_on_any_machine():
    """"auto" asks each engine about the whole problem: edge BC goes to the GPU engine
    where there is one, edge subset BC (targets) to the CPU engine, which alone serves it."""
    G = nx.karate_club_graph()
    A = nx.to_scipy_sparse_array(G, format="csr")
    _check(turbobc.edge_bc(A, engine="auto"), G, nx.edge_betweenness_centrality(G))
    targets = [0, 5, 33]
    _check(turbobc.edge_bc(A, targets=targets, engine="auto"), G,
           nx.edge_betweenness_centrality_subset(G, list(G), targets, normalized=True))


@pytest.mark.parametrize("name", ["karate", "les_miserables", "grid_6x7", "grid_deep_2x40",
                                  "two_components_isolated", "random_tree", "digraph_gnp",
                                  "dag", "scale_free_directed", "directed_self_loops"])
@pytest.mark.parametrize("normalized", [True, False])
def test_targets_follow_networkx_edge_subset(name, normalized, cpu_engine):
    """networkx's edge subset BC hands a non-target's dependency to its parents in equal
    shares; turbobc does the same (Problem.split_non_targets)."""
    G = GRAPH_CASES[name]()
    rng = np.random.default_rng(len(name))
    nodes = list(G)
    for size in (1, max(1, len(nodes) // 4), len(nodes)):
        sources = [nodes[i] for i in rng.choice(len(nodes), size=max(1, len(nodes) // 3),
                                                replace=False)]
        targets = [nodes[i] for i in rng.choice(len(nodes), size=size, replace=False)]
        E = turbobc.edge_bc(G, sources=sources, targets=targets, normalized=normalized,
                            engine=cpu_engine)
        _check(E, G, nx.edge_betweenness_centrality_subset(G, sources, targets,
                                                           normalized=normalized))
    E = turbobc.edge_bc(G, targets=nodes[:2], engine=cpu_engine)  # sources: every vertex
    _check(E, G, nx.edge_betweenness_centrality_subset(G, nodes, nodes[:2], normalized=True))


@pytest.mark.parametrize("name", ["les_miserables", "grid_6x7", "digraph_gnp", "dag"])
def test_wide_sweep_splits_non_targets_the_same(name):
    G = GRAPH_CASES[name]()
    A, graph = _cleaned(G)
    tau = (np.random.default_rng(3).random(graph.n) < 0.3).astype(np.float64)
    sources = np.arange(graph.n)
    problem = Problem(graph, edges=True, target_weight=tau, split_non_targets=True)
    want, _ = run_schedule(problem, engine_named("graphblas"), [sources])
    raw, edges = np.zeros(graph.n), np.zeros(graph.nnz)
    accumulate_wide(np, A.indptr, A.indices, graph.n, sources, raw, endpoints=False,
                    target_weight=tau, edge_raw=edges, split_non_targets=True)
    np.testing.assert_allclose(edges, want.edge, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(raw, want.vertex, rtol=1e-12, atol=1e-12)
    assert edges.any()
