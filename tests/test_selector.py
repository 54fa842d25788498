"""The kernel selector is a pure function of graph statistics (no device needed)."""

from __future__ import annotations

import networkx as nx
import pytest
import scipy.sparse as sp

import spmv
from spmv import _select
from spmv._scf import GraphStats


def stats(n=1000, mean=4.0, scf=1.0, max_degree=8, directed=False):
    return GraphStats(n=n, nnz=int(mean * n), scf=scf, max_degree=max_degree, directed=directed)


def test_returns_a_registered_kernel_for_many_inputs():
    for mean in (0.0, 1.0, 3.0, 10.0, 40.0, 700.0):
        for scf in (1.0, 1.5, 3.0, 10.0, 1e4):
            assert spmv.select(stats(mean=mean, scf=scf)) in spmv.KERNELS


def test_sparse_regular_graphs_get_a_thread_per_vertex():
    assert spmv.select(stats(mean=4.0, scf=1.0)) == "sccsc"


def test_dense_graphs_get_a_warp_per_vertex():
    assert spmv.select(stats(mean=_select.VECSC_MIN_MEAN_DEGREE, scf=1.0)) == "vecsc"


def test_scale_free_graphs_get_a_warp_per_vertex():
    assert spmv.select(stats(mean=3.0, scf=_select.VECSC_MIN_SCF)) == "vecsc"


def test_pure_and_deterministic():
    s = stats(mean=12.0, scf=2.0)
    assert spmv.select(s) == spmv.select(s) == spmv.select(stats(mean=12.0, scf=2.0))


@pytest.mark.parametrize(("G", "expected"), [
    (nx.grid_2d_graph(30, 30), "sccsc"),
    (nx.complete_graph(60), "vecsc"),
])
def test_on_real_statistics(G, expected):
    A = sp.csr_array(nx.to_scipy_sparse_array(G))
    assert spmv.select(spmv.stats_host(A, directed=False)) == expected


def test_thresholds_name_their_record():
    assert _select.THRESHOLDS_SOURCE
