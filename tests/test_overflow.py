"""Path counts past float64's range (1.8e308) against an exact big-integer Brandes."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
import turbobc._graphblas as graphblas_engine
from oracles import exact_single_source_dependencies, networkx_bc


def grid(rows: int, cols: int) -> sp.csr_array:
    """The rows x cols grid graph, vertex (i, j) = i * cols + j."""
    return sp.csr_array(nx.to_scipy_sparse_array(nx.grid_2d_graph(rows, cols),
                                                 nodelist=[(i, j) for i in range(rows)
                                                           for j in range(cols)]))


@pytest.fixture(scope="module")
def grid600():
    A = grid(600, 600)
    sources = [0, 300]  # a corner and the middle of an edge: different scalings per row
    exact, largest = [], []
    for s in sources:
        delta, max_sigma = exact_single_source_dependencies(A.indptr, A.indices, s)
        exact.append(delta)
        largest.append(max_sigma)
    assert largest[0] > 10**358  # from the corner: C(1198, 599) ≈ 9.9e358, past float64
    assert largest[1] < 10**308  # from the edge's middle: within range, never rescaled
    return A, sources, sum(exact)


def test_600x600_grid_past_float64_range(grid600, engine_config):
    engine, kernel = engine_config
    A, sources, exact = grid600
    got = turbobc.bc(A, sources=sources, normalized=False, engine=engine, kernel=kernel)
    assert np.isfinite(got).all()
    # undirected: the raw ordered-pair sums are halved
    np.testing.assert_allclose(got, exact / 2, rtol=1e-9, atol=1e-9)


def test_plain_float64_would_overflow_here(grid600):
    """The reference is not vacuous: without rescaling the counts become inf and the
    dependencies NaN, as in the paper's code."""
    A, _, _ = grid600
    sigma = np.zeros(A.shape[0])
    sigma[0] = 1.0
    frontier, seen = sigma.copy(), sigma > 0
    with np.errstate(over="ignore", invalid="ignore"):
        while frontier.any():
            frontier = A.T @ frontier
            frontier[seen] = 0
            seen |= frontier != 0
            sigma += frontier
    assert np.isinf(sigma).any()


def test_forced_rescaling_is_exact(monkeypatch):
    """Scaling every level by powers of two (threshold lowered to 2**2) changes nothing:
    the whole batched grid equals networkx."""
    monkeypatch.setattr(graphblas_engine, "RESCALE_ABOVE_EXP", 2)
    G = nx.grid_2d_graph(9, 11)
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    for endpoints in (False, True):
        expected = networkx_bc(G, selection="all", normalized=True, endpoints=endpoints)
        got = turbobc.bc(A, endpoints=endpoints, engine="graphblas")
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
