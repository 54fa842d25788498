"""The GPU's lanes family (turbobc.engines.gpu.lanes): every batched kernel against the graphblas
engine and networkx, on batches whose sources sit in different components and reach very
different depths, batch sizes that do not divide n (padding lanes), the 600 x 600 grid past
float64 overflow, endpoints, k-sampling, the int32-level and shift-table fallbacks, int64
indices, progress per batch and memory. Plus CPU tests (no ``gpu`` marker) of the batch-size
chooser and the batched selector, which are pure functions.

The networkx grid of tests/test_vs_networkx.py runs the batched kernels too: with more than
one source, ``turbobc.bc(engine="gpu")`` goes through this engine.
"""

from __future__ import annotations

import functools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import spmv
from gpu_helpers import (Counter, family_run, graphblas_raw, make_graph, networkx_raw,
                         pool_limited, read_graph)
from turbobc.engines.gpu import lanes_order, memory as _gpu_memory
from turbobc.engines.gpu.lanes import LanesFamily
import turbobc
from turbobc._api import run_bc
from turbobc.engines.gpu.memory import choose_lanes, lanes_bytes
from turbobc._tuning import Tuning

MEMORY_FRACTION, MAX_BATCH = Tuning().gpu_memory_fraction, Tuning().max_batch

gpu = pytest.mark.gpu
KERNELS = ("auto",) + spmv.KERNELS


@functools.lru_cache(maxsize=None)
def grid600():
    G = nx.grid_2d_graph(600, 600)
    order = [(i, j) for i in range(600) for j in range(600)]
    graph = make_graph(nx.to_scipy_sparse_array(G, nodelist=order), directed=False)
    sources = np.array([0, 599, 300 * 600 + 300, 359999])
    return graph, sources, graphblas_raw(graph, sources)


@functools.lru_cache(maxsize=None)
def real_graph(name: str, directed: bool):
    graph = read_graph(name, directed)
    return graph, graphblas_raw(graph, np.arange(graph.n), True)


def batched_run(graph, sources, kernel, endpoints=False, **kw):
    """The batched engine's raw sums and the facts of the run."""
    facts = {}
    raw = family_run(LanesFamily, graph, np.asarray(sources, dtype=np.int64),
                                  endpoints=endpoints, kernel=kernel, progress=None,
                                  facts=facts, **kw)
    return raw, facts


def batched_raw(graph, sources, kernel, endpoints=False, **kw):
    return batched_run(graph, sources, kernel, endpoints, **kw)[0]


def mixed_depths_graph(directed: bool):
    """Components of very different depths: a 150-vertex path, a 12 x 12 grid, a random
    sparse graph with hubs, a triangle and an isolated vertex (n = 150 + 144 + 400 + 3 + 1)."""
    rng = np.random.default_rng(11)
    path = sp.diags([np.ones(149)], [1], shape=(150, 150))
    grid = nx.to_scipy_sparse_array(nx.grid_2d_graph(12, 12))
    rand = sp.random(400, 400, density=0.01, random_state=rng, format="csr")
    hub = sp.csr_array((np.ones(299), (np.zeros(299, dtype=int), np.arange(1, 300))),
                       shape=(400, 400))
    tri = sp.csr_array(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float))
    A = sp.csr_array(sp.block_diag([path, grid, rand + hub, tri, sp.csr_array((1, 1))],
                                   format="csr"))
    if directed:  # some back arcs, so that directed paths run both ways
        back = (rng.random(A.shape[0] - 1) > 0.5).astype(float)
        A = sp.csr_array(A + sp.diags([back], [-1], shape=A.shape))
    return make_graph(A, directed)


# One source per component, and more: the deepest (path ends), the middle, the grid corner,
# the hub, the triangle and the isolated vertex.
MIXED_SOURCES = [0, 149, 75, 150, 150 + 143, 294, 294 + 17, 694, 695, 697, 40, 500, 301]


@gpu
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
@pytest.mark.parametrize("batch", [None, 5, 40])
def test_mixed_depths_match_graphblas_and_networkx(kernel, directed, batch):
    graph = mixed_depths_graph(directed)
    got, facts = batched_run(graph, MIXED_SOURCES, kernel, _batch=batch)
    np.testing.assert_allclose(got, graphblas_raw(graph, MIXED_SOURCES), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, networkx_raw(graph, MIXED_SOURCES), rtol=1e-10, atol=1e-10)
    assert facts["depth"] >= 149


@gpu
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("endpoints", [False, True])
def test_all_sources_batch_not_dividing_n(kernel, endpoints):
    graph = mixed_depths_graph(False)
    sources = np.arange(graph.n)
    expected = graphblas_raw(graph, sources, endpoints)
    for batch in (None, 33, 100):
        got = batched_raw(graph, sources, kernel, endpoints=endpoints, _batch=batch)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-9, err_msg=f"{batch}")
    assert graph.n % 33 and graph.n % 100


@gpu
@pytest.mark.parametrize("kernel", spmv.KERNELS)
def test_directed_endpoints_all_sources(kernel):
    rng = np.random.default_rng(2)
    blocks = [sp.random(n, n, density=d, random_state=rng, format="csr")
              for n, d in ((300, 0.01), (50, 0.1), (7, 0.3), (1, 0.0))]
    graph = make_graph(sp.block_diag(blocks, format="csr"), directed=True)
    sources = np.arange(graph.n)
    got = batched_raw(graph, sources, kernel, endpoints=True, _batch=64)
    np.testing.assert_allclose(got, graphblas_raw(graph, sources, True), rtol=1e-10, atol=1e-10)


@gpu
@pytest.mark.parametrize("kernel", spmv.KERNELS)
def test_grid_600_past_overflow(kernel):
    # σ from a corner of a 600 x 600 grid reaches C(1198, 599) ≈ 1e359 > float64 max: each
    # (source, level) is rescaled on its own; the centre source never overflows.
    graph, sources, expected = grid600()
    got = batched_raw(graph, sources, kernel)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


@gpu
def test_shift_table_and_int32_levels_are_exact_fallbacks():
    G = nx.grid_2d_graph(200, 200)
    graph = make_graph(nx.to_scipy_sparse_array(G), directed=False)
    sources = np.array([0, 199, 39999, 20100, 7])
    expected = graphblas_raw(graph, sources, True)
    got, facts = batched_run(graph, sources, "vecsc", endpoints=True, _depth_cap=16)
    assert facts["reruns"] >= 2  # 16 -> 64 -> 256 -> 1024 levels
    assert facts["depth_cap"] > facts["depth"]
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-9)
    got32, facts = batched_run(graph, sources, "vecsc", endpoints=True, _level_dtype=np.int32)
    assert facts["level_dtype"] == "int32"
    np.testing.assert_allclose(got32, expected, rtol=1e-10, atol=1e-9)


@gpu
def test_path_deeper_than_int16_levels():
    # A path of 33000 vertices from both ends: depth 32999 passes the int16 level type, the
    # batch is rerun with int32 levels. Exact values: δ_0(v) + δ_{n-1}(v) = (n−1−v) + v.
    n = 33000
    graph = make_graph(sp.diags([np.ones(n - 1)], [1], shape=(n, n)), directed=False)
    got, facts = batched_run(graph, [0, n - 1], "vecsc")
    assert facts["level_dtype"] == "int32"
    expected = np.full(n, n - 1.0)
    expected[[0, n - 1]] = 0.0
    np.testing.assert_array_equal(got, expected)


@gpu
@pytest.mark.parametrize("kernel", spmv.KERNELS)
def test_int64_indices_equal_int32(kernel):
    graph = mixed_depths_graph(True)
    sources = np.arange(0, graph.n, 3)
    got64, facts = batched_run(graph, sources, kernel, endpoints=True, _index_dtype=np.int64)
    assert facts["index_dtype"] == "int64"
    got32 = batched_raw(graph, sources, kernel, endpoints=True)
    np.testing.assert_allclose(got64, got32, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got32, graphblas_raw(graph, sources, True), rtol=1e-10,
                               atol=1e-10)


@gpu
@pytest.mark.parametrize("kernel", KERNELS)
def test_k_sampling_matches_networkx(kernel):
    G = nx.connected_watts_strogatz_graph(500, 6, 0.05, seed=3)
    A = nx.to_scipy_sparse_array(G, nodelist=list(G))
    for k, seed in ((100, 7), (499, 8)):
        expected = nx.betweenness_centrality(G, k=k, seed=seed)
        with turbobc.tuning(gpu_family="lanes"):  # "auto" predicts, by kernel "auto" too
            got, facts = run_bc(A, k=k, seed=seed, engine="gpu", kernel=kernel)
        np.testing.assert_allclose(got, [expected[v] for v in G], rtol=1e-10, atol=1e-13)
        assert facts["family"] == "lanes" and facts["batches"] >= 1


REAL = [("delaunay_n12.mtx", False), ("road-minnesota.mtx", False),
        ("facebook_combined.txt.gz", False), ("p2p-Gnutella08.txt", True)]


@gpu
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize(("name", "directed"), REAL, ids=[r[0] for r in REAL])
def test_real_graphs_exact_match_graphblas(name, directed, kernel):
    graph, expected = real_graph(name, directed)
    got = batched_raw(graph, np.arange(graph.n), kernel, endpoints=True)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-8)


@gpu
def test_api_routes_one_source_to_single_engine_and_more_to_batched():
    graph = mixed_depths_graph(False)
    assert run_bc(graph.pattern, sources=[3], engine="gpu").facts["family"] == "single"
    with turbobc.tuning(gpu_family="lanes"):
        facts = run_bc(graph.pattern, sources=[3, 4], engine="gpu").facts
    assert facts["family"] == "lanes" and facts["batches"] == 1


@gpu
def test_progress_updates_per_batch():
    graph = mixed_depths_graph(False)
    updates = []

    class Bar(Counter):
        def update(self, k=1):
            updates.append(k)
            super().update(k)

    bar = Bar()
    sources = np.arange(0, graph.n, 2)
    family_run(LanesFamily, graph, sources, endpoints=False, kernel="auto", progress=bar,
                            _batch=64)
    assert bar.n == sources.size
    assert updates == [64] * (sources.size // 64) + [sources.size % 64]


@gpu
def test_out_of_memory_is_clean():
    import cupy

    graph = mixed_depths_graph(False)
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()  # no cached block may serve the run
    baseline = pool.used_bytes()
    with pool_limited(baseline + 4 * 1024):
        with pytest.raises(MemoryError, match=r"needs about \d+ bytes of device memory"):
            batched_raw(graph, np.arange(100), "vecsc")
        assert pool.used_bytes() == baseline
    np.testing.assert_allclose(batched_raw(graph, [3, 5], "vecsc"),
                               graphblas_raw(graph, [3, 5]), rtol=1e-10, atol=1e-10)


@gpu
def test_too_little_memory_for_a_batch_runs_one_source_at_a_time():
    import cupy

    graph = mixed_depths_graph(False)
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    # room for the format and the single-source vectors, not for 32 lanes
    per_lane = _gpu_memory.lane_bytes(graph.n, 2, _gpu_memory.DEPTH_CAP)
    with pool_limited(pool.used_bytes() + 8 * per_lane):
        got = batched_raw(graph, np.arange(50), "sccsc")
    np.testing.assert_allclose(got, graphblas_raw(graph, np.arange(50)), rtol=1e-10,
                               atol=1e-10)


@gpu
def test_peak_memory_within_model():
    graph = mixed_depths_graph(True)
    for kernel in spmv.KERNELS:
        _, run = batched_run(graph, np.arange(graph.n), kernel)
        assert run["peak_pool_bytes"] <= run["model_bytes"] + 2 * 2**20, run


# ---- CPU: pure functions -------------------------------------------------------------------

@pytest.mark.parametrize("n, m", [(4039, 176468), (262144, 21_000_000), (10, 0),
                                  (5_000_000, 60_000_000)])
@pytest.mark.parametrize("free", [2**20, 2**30, 80 * 2**30])
@pytest.mark.parametrize("num_sources", [1, 31, 33, 1000, 10**6])
def test_choose_batch_fits_and_is_even(n, m, free, num_sources):
    B = choose_lanes(n, m, num_sources, free)
    if B == 0:
        # not even 32 lanes fit
        assert lanes_bytes(n, m, kernel="vecsc", index_bytes=4, level_bytes=2, batch=32,
                            depth_cap=_gpu_memory.DEPTH_CAP, directed=False) > MEMORY_FRACTION * free
        return
    assert B % 32 == 0 and 32 <= B <= MAX_BATCH
    assert B <= -(-num_sources // 32) * 32
    assert lanes_bytes(n, m, kernel="vecsc", index_bytes=4, level_bytes=2, batch=B,
                        depth_cap=_gpu_memory.DEPTH_CAP, directed=False) <= MEMORY_FRACTION * free
    batches = -(-num_sources // B)
    assert (B - 32) * batches < num_sources  # the smallest batch for this many batches: even
    bigger = B + 32
    if bigger <= MAX_BATCH and lanes_bytes(n, m, kernel="vecsc", index_bytes=4, level_bytes=2,
                                            batch=bigger, depth_cap=_gpu_memory.DEPTH_CAP,
                                            directed=False) + 1024 <= MEMORY_FRACTION * free:
        assert -(-num_sources // bigger) == batches  # no fewer batches were possible


def test_choose_batch_grows_with_memory_and_shrinks_with_wider_types():
    args = (1_000_000, 20_000_000, 10**6)
    sizes = [choose_lanes(*args, free) for free in (2**30, 8 * 2**30, 40 * 2**30)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    narrow = choose_lanes(*args, 40 * 2**30)
    wide = choose_lanes(*args, 40 * 2**30, level_bytes=4, index_bytes=8, directed=True)
    assert wide < narrow
    assert choose_lanes(*args, 40 * 2**30, depth_cap=2**20) < narrow
    assert choose_lanes(10, 10, 0, 2**30) == 0


def test_choose_batch_counts_every_array():
    # 18 bytes per (vertex, lane) in int16 levels plus the flags, the two 8-byte lane masks per
    # 32 lanes, the shift table and per-lane words
    n, dcap = 64_000, 2048
    assert _gpu_memory.lane_bytes(n, 2, dcap) == (n * 18 + 2 * 2 * n // 32 + 2 * 8 * n // 32
                                                  + 4 * dcap + 24)
    assert _gpu_memory.lanes_format_bytes(n, 10**6, 4, True, "vecsc") == 2 * 4 * (n + 1 + 10**6)
    assert _gpu_memory.lanes_format_bytes(n, 10**6, 4, True, "sccooc") == 4 * (n + 1 + 2 * 10**6)


def test_select_batched_is_a_registered_kernel():
    from spmv._batched import select_batched

    for n, nnz, k in ((10, 20, 2), (10**6, 10**8, 10**6), (0, 0, 0)):
        assert select_batched(n, nnz, k) in spmv.KERNELS
        assert select_batched(n, nnz, k, depth=3) in spmv.KERNELS
    with pytest.raises(ValueError, match="sizes must be non-negative; got n=-1"):
        select_batched(-1, 0, 1)


def test_select_batched_by_graph_statistics():
    # thresholds of spmv._batched (measured: bench/results/exact_gpu_variants-20261122T025208Z)
    from spmv._batched import select_batched

    assert select_batched(4039, 176468, 4039, depth=8) == "sccsc"          # ego-Facebook
    assert select_batched(4039, 176468, 4039) == "vecsc"                   # depth unknown
    assert select_batched(12287, 3695512, 12287, depth=2) == "vecsc"       # myc14: n·B 1.5e8
    assert select_batched(262144, 21004704, 262144, depth=4) == "vecsc"    # kron18
    assert select_batched(2000, 6000, 2000, depth=40) == "vecsc"           # small but deep
    assert select_batched(114599, 239332, 114599, depth=700) == "vecsc"    # road
    # one batch of at most 2^24 entries: n x lanes (lanes rounded up to 32, at most 16384)
    assert select_batched(2**14, 10**5, 2**10, depth=3) == "sccsc"
    assert select_batched(2**14, 10**5, 2**10 + 1, depth=3) == "vecsc"
    assert select_batched(1024, 10**5, 10**6, depth=3) == "sccsc"          # 1024 x 16384


def test_auto_order_by_depth_and_degree():
    # meshes (deep, mean degree >= 4) get ball groups; roads (mean degree ~2) and shallow
    # graphs keep RCM (bench/gpu_notes.md, "Source order")
    tri = nx.triangular_lattice_graph(40, 40)  # deep, mean degree ~6
    mesh = make_graph(nx.to_scipy_sparse_array(tri), directed=False)
    _, order, depth = lanes_order.locality_order(mesh)
    assert order == "cluster" and depth >= 16
    road = make_graph(nx.to_scipy_sparse_array(nx.path_graph(300)), directed=False)
    _, order, _ = lanes_order.locality_order(road)
    assert order == "rcm"
    hubs = make_graph(nx.to_scipy_sparse_array(nx.barabasi_albert_graph(500, 4, seed=1)),
                      directed=False)
    _, order, depth = lanes_order.locality_order(hubs)
    assert order == "rcm" and depth < 16
    wheel = make_graph(nx.to_scipy_sparse_array(nx.wheel_graph(60)), directed=False)
    _, order, depth = lanes_order.locality_order(wheel)  # the hub reaches all in one step
    assert order == "bfs" and depth == 1


def test_sweep_order_skips_the_locality_pass_for_few_sources():
    graph = make_graph(nx.to_scipy_sparse_array(nx.path_graph(400)), directed=False)
    few = np.array([300, 7, 150, 42])  # under 1/8 of the vertices: vertex order, no search
    ordered, order, depth = lanes_order.sweep_order(graph, few)
    assert order == "vertex" and depth is None
    np.testing.assert_array_equal(ordered, np.sort(few))
    many = np.arange(0, 400, 2)[::-1]  # half of them: the locality order of locality_order
    ordered, order, depth = lanes_order.sweep_order(graph, many)
    assert order == "rcm" and depth == 398  # eccentricity of vertex 1, the first of degree 2
    rank, _, _ = lanes_order.locality_order(graph)
    np.testing.assert_array_equal(np.sort(ordered), np.sort(many))
    assert np.all(np.diff(rank[ordered]) > 0)


@pytest.mark.parametrize("order", ["auto", "rcm", "bfs", "cluster", "vertex"])
@pytest.mark.parametrize("directed", [False, True])
def test_every_order_is_a_permutation(order, directed):
    graph = mixed_depths_graph(directed)
    rank, _, _ = lanes_order.locality_order(graph, order)
    assert sorted(rank.tolist()) == list(range(graph.n))


def test_balls_are_compact_on_a_grid():
    # groups of 32 consecutive sources on a 60 x 60 grid: ball groups span few hops,
    # breadth-first order spans a whole wavefront
    from scipy.sparse.csgraph import shortest_path

    graph = make_graph(nx.to_scipy_sparse_array(nx.grid_2d_graph(60, 60)), directed=False)
    spans = {}
    for order in ("cluster", "bfs"):
        seq = np.argsort(lanes_order.locality_order(graph, order)[0])
        groups = [seq[k:k + 32] for k in range(0, 3584, 32)]
        spans[order] = np.median([shortest_path(graph.pattern, unweighted=True,
                                                indices=g)[:, g].max() for g in groups])
    assert spans["cluster"] <= 10 and spans["bfs"] >= 40


def test_every_kernel_has_batched_instantiations():
    from spmv import _module

    names = set(_module.SOURCES["batched.cu"])
    for kernel in spmv.KERNELS:
        assert {f"bcb_{kernel}16", f"bcb_{kernel}32"} <= names


def test_locality_order_is_a_permutation_with_near_neighbours():
    graph = make_graph(nx.to_scipy_sparse_array(nx.path_graph(100)), directed=False)
    rng = np.random.default_rng(0)
    perm = rng.permutation(100)
    shuffled = make_graph(graph.pattern[perm][:, perm], directed=False)
    rank, _, _ = lanes_order.locality_order(shuffled)
    assert sorted(rank) == list(range(100))
    # along the path, consecutive vertices get ranks one apart
    pos = np.argsort(perm)  # vertex i of the path is vertex pos[i] of the shuffled graph
    assert np.all(np.abs(np.diff(rank[pos])) == 1)


@gpu
def test_repeated_sources_are_refused():
    # each source of a chunk owns one lane bit of the depth-0 masks
    graph = make_graph(nx.to_scipy_sparse_array(nx.path_graph(10)), directed=False)
    with pytest.raises(ValueError, match="sources must be distinct"):
        family_run(LanesFamily, graph, np.array([3, 5, 3]), endpoints=False, kernel="auto",
                                progress=None)
