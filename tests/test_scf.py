"""The scf metric on the host, against values worked out by hand."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import spmv
from spmv._scf import scf_from_sum


def pattern(G):
    return sp.csr_array(nx.to_scipy_sparse_array(G))


@pytest.mark.parametrize("G", [nx.cycle_graph(10), nx.complete_graph(7),
                               nx.circulant_graph(30, [1, 2, 5]), nx.hypercube_graph(4)],
                         ids=["cycle", "complete", "circulant", "hypercube"])
def test_regular_graphs_have_scf_one(G):
    assert spmv.scf_host(pattern(G)) == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("n", [3, 10, 101])
def test_star(n):
    # edges (c, leaf) and (leaf, c), each with degree product (n - 1)·1; m = 2(n - 1)
    m = 2 * (n - 1)
    expected = (m * (n - 1) / m) / (m / n) ** 2
    assert spmv.scf_host(pattern(nx.star_graph(n - 1))) == pytest.approx(expected, rel=1e-14)
    assert expected == pytest.approx(n * n / (4 * (n - 1)))


def test_directed_uses_out_degree():
    # 0 -> 1, 0 -> 2, 1 -> 2: out-degrees 2, 1, 0; products 2·1, 2·0, 1·0
    A = sp.csr_array(np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], dtype=float))
    assert spmv.scf_host(A) == pytest.approx((2 / 3) / (1.0 ** 2))


def test_matches_a_direct_loop_on_a_random_graph():
    G = nx.gnm_random_graph(200, 900, seed=3)
    A = pattern(G)
    deg = dict(G.degree())
    total = sum(deg[u] * deg[v] for u, v in G.edges()) * 2  # both stored directions
    assert spmv.scf_host(A) == pytest.approx(scf_from_sum(total, 200, 1800), rel=1e-14)


def test_no_edges():
    assert spmv.scf_host(sp.csr_array((4, 4))) == 1.0
    stats = spmv.stats_host(sp.csr_array((4, 4)), directed=False)
    assert stats.max_degree == 0 and stats.mean_degree == 0.0


def test_scale_free_is_far_above_regular():
    ba = spmv.scf_host(pattern(nx.barabasi_albert_graph(2000, 3, seed=1)))
    grid = spmv.scf_host(pattern(nx.grid_2d_graph(40, 40)))
    assert ba > 2.0 > grid > 0.9
