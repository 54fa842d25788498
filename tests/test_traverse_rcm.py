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


def _no_search(*args):
    raise AssertionError("searched again for an answer already kept")


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_deeper_than_agrees_with_the_depth_estimate(seed, directed, monkeypatch):
    """``Graph.deeper_than`` (a compiled search stopped at the level asked) answers as the
    whole search's ``depth_estimate`` does, at every level around it: paths, grids, random
    sparse patterns with several components, and the empty graph."""
    monkeypatch.setattr("turbobc._graph.CAPPED_SEARCH_FROM", 1)  # the compiled search
    rng = np.random.default_rng(seed)
    patterns = [sp.csr_matrix(nx.to_scipy_sparse_array(nx.path_graph(30 + seed))),
                sp.csr_matrix(nx.to_scipy_sparse_array(nx.grid_2d_graph(8, 5 + seed))),
                _random_pattern(rng, 300, 330, symmetric=not directed),
                sp.csr_matrix((5, 5))]
    for pattern in patterns:
        pattern.data[:] = 1.0
        depth = Graph(pattern=pattern, directed=directed).depth_estimate
        for least in sorted({0, 1, max(depth - 1, 0), depth, depth + 1, 20}):
            fresh = Graph(pattern=pattern, directed=directed)  # no cached estimate
            assert fresh.deeper_than(least) == (depth >= least), (depth, least)
            assert "depth_estimate" not in fresh.__dict__ or pattern.nnz == 0
            with monkeypatch.context() as patched:  # asked again: the kept answer
                patched.setattr("turbobc._traverse.depth_reached", _no_search)
                assert fresh.deeper_than(least) == (depth >= least), (depth, least)
