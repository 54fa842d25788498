"""The kernel selector is a pure function of graph statistics (no device needed)."""

from __future__ import annotations

import networkx as nx
import pytest
import scipy.sparse as sp

import spmv
from spmv import _select
from spmv._scf import GraphStats

BIG = 10**7  # vertices: far past the point where 2m indices fit the slack of the model


def stats(n=BIG, mean=4.0, scf=1.0, max_degree=8, directed=False):
    return GraphStats(n=n, nnz=int(mean * n), scf=scf, max_degree=max_degree, directed=directed)


def test_returns_a_registered_kernel_for_many_inputs():
    for n in (1, 100, 10**5, BIG):
        for mean in (0.0, 1.0, 3.0, 10.0, 40.0, 700.0):
            for scf in (1.0, 1.5, 3.0, 10.0, 1e4):
                assert spmv.select(stats(n=n, mean=mean, scf=scf)) in spmv.KERNELS


def test_cooc_where_its_indices_fit_the_memory_model():
    # 8m + 40n <= 4m + 48n + slack  <=>  4m <= 8n + slack
    n = 10**6
    m_edge = (8 * n + _select.MODEL_SLACK_BYTES) // 4
    assert _select.cooc_fits(GraphStats(n=n, nnz=m_edge, scf=1.0, max_degree=4, directed=False))
    assert not _select.cooc_fits(GraphStats(n=n, nnz=m_edge + 1, scf=1.0, max_degree=4,
                                            directed=False))
    assert spmv.select(GraphStats(n=n, nnz=m_edge, scf=50.0, max_degree=4,
                                  directed=False)) == "sccooc"


def test_small_graphs_fit_the_slack():
    assert spmv.select(stats(n=4000, mean=44.0, scf=6.4)) == "sccooc"


def test_large_sparse_regular_graphs_get_a_thread_per_vertex():
    assert spmv.select(stats(mean=4.0, scf=1.0)) == "sccsc"


def test_large_dense_graphs_get_a_warp_per_vertex():
    assert spmv.select(stats(mean=_select.VECSC_MIN_MEAN_DEGREE, scf=1.0)) == "vecsc"


def test_large_scale_free_graphs_get_a_warp_per_vertex():
    assert spmv.select(stats(mean=3.0, scf=_select.VECSC_MIN_SCF)) == "vecsc"


def test_pure_and_deterministic():
    s = stats(mean=12.0, scf=2.0)
    assert spmv.select(s) == spmv.select(s) == spmv.select(stats(mean=12.0, scf=2.0))


@pytest.mark.parametrize(("G", "expected"), [
    (nx.grid_2d_graph(30, 30), "sccooc"),
    (nx.complete_graph(60), "sccooc"),
])
def test_on_real_statistics_of_small_graphs(G, expected):
    A = sp.csr_array(nx.to_scipy_sparse_array(G))
    assert spmv.select(spmv.stats_host(A, directed=False)) == expected


def test_thresholds_name_their_record():
    from pathlib import Path

    record = Path(__file__).resolve().parents[1] / _select.THRESHOLDS_SOURCE
    assert record.is_file(), record
