"""Property tests (hypothesis): random small graphs against networkx, and invariances."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import turbobc
from oracles import assert_edge_values, networkx_bc

# engine_config only selects an engine; it holds no state hypothesis could leak between examples
SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def graphs(draw):
    n = draw(st.integers(min_value=0, max_value=14))
    directed = draw(st.booleans())
    pairs = st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, max(n - 1, 0)))
    edges = draw(st.lists(pairs, max_size=4 * n)) if n else []
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(edges)  # self loops and repeats included on purpose
    return G


@SETTINGS
@given(G=graphs(), normalized=st.booleans(), endpoints=st.booleans())
def test_random_graphs_match_networkx(engine_config, G, normalized, endpoints):
    engine, kernel = engine_config
    expected = networkx_bc(G, selection="all", normalized=normalized, endpoints=endpoints)
    got = turbobc.bc(G, normalized=normalized, endpoints=endpoints, engine=engine,
                     kernel=kernel)
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-13)


@SETTINGS
@given(G=graphs(), data=st.data())
def test_relabeling_permutes_the_result(engine_config, G, data):
    engine, kernel = engine_config
    n = len(G)
    perm = np.array(data.draw(st.permutations(range(n)))) if n else np.zeros(0, dtype=int)
    A = (nx.to_scipy_sparse_array(G, nodelist=range(n), format="csr") if n
         else sp.csr_array((0, 0)))
    P = sp.csr_array((np.ones(n), (perm, np.arange(n))), shape=(n, n))  # vertex i -> perm[i]
    directed = G.is_directed()
    original = turbobc.bc(A, directed=directed, engine=engine, kernel=kernel)
    relabeled = turbobc.bc(P @ A @ P.T, directed=directed, engine=engine, kernel=kernel)
    np.testing.assert_allclose(relabeled[perm], original, rtol=1e-12, atol=1e-14)


@SETTINGS
@given(G=graphs(), data=st.data())
def test_sources_split_adds_up(engine_config, G, data):
    engine, kernel = engine_config
    n = len(G)
    A = (nx.to_scipy_sparse_array(G, nodelist=range(n), format="csr") if n
         else sp.csr_array((0, 0)))
    chosen = data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n)) if n else set()
    rest = sorted(set(range(n)) - chosen)
    kwargs = dict(normalized=False, directed=G.is_directed(), engine=engine, kernel=kernel)
    total = turbobc.bc(A, **kwargs)
    # sources=[] is an error, so an empty side contributes nothing by construction
    parts = sum((turbobc.bc(A, sources=sorted(side), **kwargs) for side in (chosen, rest)
                 if side), np.zeros(n))
    np.testing.assert_allclose(parts, total, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(G=graphs(), normalized=st.booleans(), weighted=st.booleans(), data=st.data())
@pytest.mark.parametrize("engine", [pytest.param("graphblas", id="graphblas"),
                                    pytest.param("cpu", id="cpu"),
                                    pytest.param("gpu", id="gpu", marks=pytest.mark.gpu)])
def test_random_graphs_edge_bc_match_networkx(engine, G, normalized, weighted, data):
    """Edge BC, the trees of undirected graphs folded (most of these small sparse graphs have
    some), unweighted or with integer lengths 1..4."""
    if weighted:
        for u, v in G.edges:
            G[u][v]["weight"] = data.draw(st.integers(1, 4))
    weight = "weight" if weighted else None
    E = turbobc.edge_bc(G, normalized=normalized, weight=weight, engine=engine)
    assert_edge_values(E, G, nx.edge_betweenness_centrality(G, normalized=normalized,
                                                            weight=weight),
                       rtol=1e-11, atol=1e-13)
