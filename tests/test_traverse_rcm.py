"""The compiled reverse Cuthill-McKee order (turbobc/_traverse.py) against SciPy's: the same
permutation on random symmetric and directed patterns, with self loops, isolated vertices,
several components and hubs past the insertion sort (the merge-sort path), and the order the
GPU's lanes and frontiers families sweep in (lanes_order.locality_order) built from it."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee as scipy_rcm

import turbobc._traverse
from turbobc._graph import Graph
from turbobc._traverse import reverse_cuthill_mckee


@pytest.fixture(autouse=True, params=["compiled", "scipy"])
def path(request, monkeypatch):
    """Every test twice: the compiled order (SciPy's own below SCIPY_BELOW_NNZ otherwise,
    here lowered to 0) and SciPy's (what a call runs on these small graphs when the compiled
    loops are not shipped ahead)."""
    if request.param == "compiled":
        monkeypatch.setattr(turbobc._traverse, "SCIPY_BELOW_NNZ", 0)
    else:
        monkeypatch.setattr(turbobc._traverse, "PREFER_SHIPPED", False)
    return request.param


def _random_pattern(rng, n: int, m: int, symmetric: bool) -> sp.csr_matrix:
    rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
    A = sp.csr_matrix((np.ones(m), (rows, cols)), shape=(n, n))
    if symmetric:
        A = A + A.T
    A = A.tocsr()
    A.sum_duplicates()
    A.data[:] = 1.0
    return A


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_equals_scipys_permutation(seed, symmetric):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        n = int(rng.integers(1, 80))
        A = _random_pattern(rng, n, int(rng.integers(0, 4 * n + 1)), symmetric)
        np.testing.assert_array_equal(reverse_cuthill_mckee(A, symmetric),
                                      scipy_rcm(A, symmetric_mode=symmetric))


@pytest.mark.parametrize("leaves", [65, 200, 3000])
def test_hubs_take_the_merge_sort_and_keep_scipys_order(leaves):
    G = nx.star_graph(leaves)
    G.add_edges_from((i, i + 1) for i in range(1, leaves, 3))
    G.add_edges_from((leaves + 1 + i, leaves + 2 + i) for i in range(5))  # another component
    A = sp.csr_matrix(nx.to_scipy_sparse_array(G, nodelist=range(G.number_of_nodes())))
    np.testing.assert_array_equal(reverse_cuthill_mckee(A, True),
                                  scipy_rcm(A, symmetric_mode=True))


def test_int64_arrays_and_csr_arrays():
    rng = np.random.default_rng(9)
    A = _random_pattern(rng, 50, 200, True)
    wide = sp.csr_array((A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)),
                        shape=A.shape)
    np.testing.assert_array_equal(reverse_cuthill_mckee(wide, True),
                                  scipy_rcm(A, symmetric_mode=True))


def test_locality_order_ranks_by_it():
    from turbobc.engines.gpu.lanes_order import locality_order

    rng = np.random.default_rng(3)
    A = _random_pattern(rng, 60, 150, True)
    graph = Graph(pattern=sp.csr_array(A), directed=False)
    rank, order, _ = locality_order(graph, "rcm")
    assert order == "rcm"
    np.testing.assert_array_equal(np.argsort(rank), scipy_rcm(A, symmetric_mode=True))


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_hub_search_gives_the_depth_and_the_last_vertex(seed, directed):
    """``Graph.hub_search`` (one search from the vertex of largest out-degree) gives networkx's
    eccentricity of that vertex along out-edges (``depth_estimate``) and a vertex at that
    depth, the last the search reached; paths, grids, random sparse patterns with several
    components, a graph without edges and one without vertices; and it travels in a pickle."""
    import pickle

    rng = np.random.default_rng(seed)
    patterns = [sp.csr_matrix(nx.to_scipy_sparse_array(nx.path_graph(30 + seed))),
                sp.csr_matrix(nx.to_scipy_sparse_array(nx.grid_2d_graph(8, 5 + seed))),
                _random_pattern(rng, 300, 330, symmetric=not directed)]
    for pattern in patterns:
        pattern.data[:] = 1.0
        graph = Graph(pattern=pattern, directed=directed)
        depth, last = graph.hub_search
        hub = int(np.argmax(graph.out_degree))
        G = nx.from_scipy_sparse_array(pattern, create_using=nx.DiGraph)
        reached = nx.single_source_shortest_path_length(G, hub)
        assert depth == graph.depth_estimate == max(reached.values())
        assert reached[last] == depth
        assert pickle.loads(pickle.dumps(graph)).__dict__["hub_search"] == (depth, last)
    assert Graph(pattern=sp.csr_matrix((5, 5)), directed=directed).hub_search == (0, 0)
    assert Graph(pattern=sp.csr_matrix((0, 0)), directed=directed).hub_search == (0, -1)
