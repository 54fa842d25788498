"""bc(A, sources=S, targets=T) equals networkx.betweenness_centrality_subset(G, S, T) on every
engine and kernel: a target weight τ = [w ∈ T] in the accumulate step, and networkx's subset
normalization."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import turbobc
from graph_cases import GRAPH_CASES

CASES = ["karate", "les_miserables", "grid_6x7", "grid_deep_2x40", "barbell", "random_tree",
         "gnp_sparse_isolated", "two_components_isolated", "self_loops", "edgeless",
         "digraph_gnp", "digraph_sparse_unreachable", "dag", "scale_free_directed",
         "directed_self_loops"]


def _choose(G, seed):
    rng = np.random.default_rng(seed)
    nodes = list(G)
    sources = [nodes[i] for i in rng.choice(len(nodes), size=max(1, len(nodes) // 3),
                                            replace=False)]
    targets = [nodes[i] for i in rng.choice(len(nodes), size=max(1, len(nodes) // 4),
                                            replace=False)]
    return sources, targets


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("normalized", [False, True])
def test_subset_equals_networkx(engine_config, name, normalized):
    engine, kernel = engine_config
    G = GRAPH_CASES[name]()
    sources, targets = _choose(G, len(name))
    for S in (sources, list(G)[:1], None):
        got = turbobc.bc(G, sources=S, targets=targets, normalized=normalized, engine=engine,
                         kernel=kernel)
        want = nx.betweenness_centrality_subset(G, list(G) if S is None else S, targets,
                                                normalized=normalized)
        np.testing.assert_allclose(got, [want[v] for v in G], rtol=1e-12, atol=1e-14,
                                   err_msg=f"{name}, sources={S}")


def test_every_vertex_a_target_is_plain_bc(cpu_engine):
    G = GRAPH_CASES["les_miserables"]()
    np.testing.assert_allclose(turbobc.bc(G, targets=list(G), engine=cpu_engine),
                               turbobc.bc(G, engine=cpu_engine), rtol=1e-13, atol=1e-15)


def test_matrix_input_takes_vertex_indices(cpu_engine):
    G = GRAPH_CASES["digraph_gnp"]()
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    got = turbobc.bc(A, sources=[0, 3, 7], targets=[1, 2, 30], engine=cpu_engine)
    want = nx.betweenness_centrality_subset(G, [0, 3, 7], [1, 2, 30], normalized=True)
    np.testing.assert_allclose(got, [want[v] for v in G], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kwargs, error, words", [
    ({"targets": [0], "k": 3}, ValueError, "samples no sources"),
    ({"targets": [0], "endpoints": True}, ValueError, "no endpoint terms"),
    ({"targets": []}, ValueError, "targets is empty"),
    ({"targets": [0, 0]}, ValueError, "targets must be distinct"),
    ({"targets": [99]}, ValueError, "targets must be vertex indices in [0, 34)"),
    ({"targets": [1.5]}, TypeError, "targets must hold integer vertex indices"),
    ({"targets": "ab"}, TypeError, "targets must be a sequence"),
])
def test_bad_targets_are_refused(kwargs, error, words):
    A = nx.to_scipy_sparse_array(nx.karate_club_graph(), format="csr")
    with pytest.raises(error, match=None) as info:
        turbobc.bc(A, engine="graphblas", **kwargs)
    assert words in str(info.value)


def test_node_labels_of_a_networkx_graph(cpu_engine):
    G = nx.relabel_nodes(nx.path_graph(6), {i: f"v{i}" for i in range(6)})
    got = turbobc.bc(G, sources=["v0"], targets=["v5"], normalized=False, engine=cpu_engine)
    np.testing.assert_allclose(got, [0, 0.5, 0.5, 0.5, 0.5, 0])  # undirected: halved
    with pytest.raises(ValueError, match="targets must be nodes of the graph; 'x' is not"):
        turbobc.bc(G, targets=["x"], engine=cpu_engine)
