"""The GPU's single-source family (turbobc.engines.gpu.single) on what is GPU-specific: the warp paths (degrees
above 32 and 1024), directed graphs through the CSC push, disconnected graphs, int64 indices,
real graphs, the scf computed on the device, and a clean out-of-memory.

The networkx grid of tests/test_vs_networkx.py runs every kernel too (conftest.ENGINE_CONFIGS).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spmv
from gpu_helpers import (Counter, family_run, graphblas_raw, make_graph, networkx_raw,
                         pool_limited, read_graph)
from turbobc.engines.gpu.single import SingleFamily

pytestmark = pytest.mark.gpu

KERNELS = ("auto",) + spmv.KERNELS


def gpu_raw(graph, sources, kernel, endpoints=False, **kw):
    return family_run(SingleFamily, graph, np.asarray(sources, dtype=np.int64),
                      endpoints=endpoints, kernel=kernel, progress=None, **kw)


def hubs_graph(seed: int, directed: bool):
    """Random sparse graph plus a hub of degree 3000 and ten of degree 40 to 200."""
    rng = np.random.default_rng(seed)
    n = 4000
    rows = [rng.integers(0, n, 6 * n)]
    cols = [rng.integers(0, n, 6 * n)]
    rows.append(np.zeros(3000, dtype=np.int64))
    cols.append(rng.choice(np.arange(1, n), 3000, replace=False))
    for h in range(1, 11):
        deg = int(rng.integers(40, 200))
        rows.append(np.full(deg, h))
        cols.append(rng.integers(0, n, deg))
    r, c = np.concatenate(rows), np.concatenate(cols)
    if directed:  # some arcs into the hubs as well
        r, c = np.concatenate([r, c[:2000]]), np.concatenate([c, r[:2000]])
    A = sp.csr_array((np.ones(r.size), (r, c)), shape=(n, n))
    return make_graph(A, directed)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_hubs_match_graphblas_and_networkx(kernel, directed):
    graph = hubs_graph(1, directed)
    assert graph.out_degree.max() > 1024
    sources = np.array([0, 1, 5, 17, 999, 3999])
    got = gpu_raw(graph, sources, kernel)
    np.testing.assert_allclose(got, graphblas_raw(graph, sources), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, networkx_raw(graph, sources), rtol=1e-10, atol=1e-10)
    assert np.count_nonzero(got) > graph.n // 2


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("endpoints", [False, True])
def test_disconnected_directed_all_sources(kernel, endpoints):
    rng = np.random.default_rng(2)
    blocks = [sp.random(n, n, density=d, random_state=rng, format="csr")
              for n, d in ((300, 0.01), (50, 0.1), (7, 0.3), (1, 0.0))]
    graph = make_graph(sp.block_diag(blocks, format="csr"), directed=True)
    sources = np.arange(graph.n)
    got = gpu_raw(graph, sources, kernel, endpoints=endpoints)
    np.testing.assert_allclose(got, graphblas_raw(graph, sources, endpoints), rtol=1e-10,
                               atol=1e-10)
    if not endpoints:
        np.testing.assert_allclose(got, networkx_raw(graph, sources), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kernel", spmv.KERNELS)
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_int64_indices_equal_int32(kernel, directed):
    graph = hubs_graph(3, directed)
    sources = np.array([0, 2, 77, 3001])
    facts = {}
    got64 = gpu_raw(graph, sources, kernel, endpoints=True, _index_dtype=np.int64, facts=facts)
    assert facts["index_dtype"] == "int64"
    got32 = gpu_raw(graph, sources, kernel, endpoints=True, _index_dtype=np.int32)
    np.testing.assert_allclose(got64, got32, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got64, graphblas_raw(graph, sources, True), rtol=1e-10,
                               atol=1e-10)


@pytest.mark.parametrize("kernel", spmv.KERNELS)
def test_deep_grid_int64_past_overflow(kernel):
    # 600 x 600 grid from a corner: σ(far corner) = C(1198, 599) ≈ 1e359 > float64 max.
    import networkx as nx

    G = nx.grid_2d_graph(600, 600)
    order = [(i, j) for i in range(600) for j in range(600)]
    graph = make_graph(nx.to_scipy_sparse_array(G, nodelist=order), directed=False)
    sources = np.array([0, 599])
    got = gpu_raw(graph, sources, kernel, _index_dtype=np.int64)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, graphblas_raw(graph, sources), rtol=1e-9, atol=1e-9)


REAL = [("delaunay_n12.mtx", False, None), ("road-minnesota.mtx", False, None),
        ("facebook_combined.txt.gz", False, 40), ("p2p-Gnutella08.txt", True, None),
        ("wiki-Vote.txt.gz", True, 60)]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize(("name", "directed", "step"), REAL, ids=[r[0] for r in REAL])
def test_real_graphs_match_graphblas(name, directed, step, kernel):
    graph = read_graph(name, directed)
    sources = np.arange(0, graph.n, step) if step else np.arange(graph.n)
    got = gpu_raw(graph, sources, kernel, endpoints=True)
    np.testing.assert_allclose(got, graphblas_raw(graph, sources, True), rtol=1e-10, atol=1e-9)
    if step:  # networkx on the sampled sources (all sources would take too long here)
        got = gpu_raw(graph, sources, kernel)
        np.testing.assert_allclose(got, networkx_raw(graph, sources), rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_scf_on_device_equals_host(directed):
    import cupy

    graph = hubs_graph(4, directed)
    csc = graph.csc
    host = spmv.stats_host(graph.pattern, directed)
    dev = spmv.stats_device(cupy.asarray(csc.indptr.astype(np.int32)),
                            cupy.asarray(csc.indices.astype(np.int32)), graph.n, graph.nnz,
                            directed)
    assert dev.scf == pytest.approx(host.scf, rel=1e-12)
    assert dev.max_degree == host.max_degree
    assert spmv.select(dev) == spmv.select(host)


def test_auto_uses_the_selector():
    graph = hubs_graph(5, False)
    facts = {}
    gpu_raw(graph, [0], "auto", facts=facts)
    assert facts["kernel"] == spmv.select(spmv.stats_host(graph.pattern, False))
    assert facts["scf"] == pytest.approx(spmv.scf_host(graph.pattern), rel=1e-12)


def test_progress_counts_every_source_and_empty_cases():
    def accumulate(graph, sources, **kw):
        return family_run(SingleFamily, graph, sources, **kw)

    graph = hubs_graph(6, False)
    bar = Counter()
    sources = np.arange(0, graph.n, 7)
    accumulate(graph, sources, endpoints=False, kernel="sccsc", progress=bar)
    assert bar.n == sources.size
    assert not accumulate(graph, np.array([], dtype=np.int64), endpoints=True, kernel="vecsc",
                          progress=None).any()
    empty = make_graph(sp.csr_array((5, 5)), directed=True)
    got = accumulate(empty, np.arange(5), endpoints=True, kernel="sccooc", progress=None)
    np.testing.assert_array_equal(got, np.zeros(5))


def test_unknown_kernel_is_a_value_error():
    with pytest.raises(ValueError, match="kernel must be one of 'auto', 'sccsc'"):
        gpu_raw(hubs_graph(7, False), [0], "csr-magic")


@pytest.mark.parametrize("kernel", KERNELS)
def test_out_of_memory_is_a_clean_memory_error(kernel):
    import cupy

    graph = hubs_graph(8, False)
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()  # the limit counts cached blocks too
    baseline = pool.used_bytes()
    with pool_limited(pool.total_bytes() + 64 * 1024):
        with pytest.raises(MemoryError, match=r"needs about \d+ bytes of device memory.*free"):
            gpu_raw(graph, np.arange(10), kernel)
        assert pool.used_bytes() == baseline
    # and the engine still works afterwards
    np.testing.assert_allclose(gpu_raw(graph, [3], kernel), graphblas_raw(graph, [3]),
                               rtol=1e-10, atol=1e-10)


def test_peak_memory_within_model():
    graph = hubs_graph(9, False)
    for kernel in ("auto", "sccsc", "vecsc"):
        run = {}
        gpu_raw(graph, [0], kernel, facts=run)
        assert run["peak_pool_bytes"] <= run["model_bytes"] + 2 * 2**20, run


def test_planned_batch_is_what_a_run_takes():
    """The batch a Dask run sizes its chunks by (GpuSweeper.planned_batch) is the batch the
    sweeper then runs with veCSC, within a multiple of 32 lanes."""
    from turbobc.engines.gpu.engine import GpuEngine
    from turbobc.engines.protocol import Problem

    graph = make_graph(sp.random(3000, 3000, density=0.003, random_state=4), directed=False)
    with GpuEngine().open(Problem(graph, kernel="vecsc")) as sweeper:
        planned = sweeper.planned_batch(2000)
        sweeper.run(np.arange(2000))
        assert 32 <= planned <= 2016
        assert abs(sweeper.facts["batch"] - planned) <= 32
