"""Edge BC on the GPU engine: the EdgeSums accumulator of the batched kernels
(spmv/kernels/batched_backward.cuh) against networkx's edge_betweenness_centrality, the CPU
engine's per-edge sums and the exponent-per-vertex sweep (turbobc.engines.wide, exact for any
counts), for every batched kernel: the graph catalogue, components of very different depths,
hubs, target and source weights (τ, ω), k-sampling and chosen sources, one source, levels
rescaled past 2^512, sources whose counts spread too wide (the wide sweep's edge sums on the
device), int64 indices, int32 levels and the shift-table rerun, real graphs, the resident edge
sums, progress and memory. The vertex sums of an edge run equal the vertex-BC path's.

CPU tests (no ``gpu`` marker): which problems the GPU engine declines and why, the batch
chooser and memory model with the edge sums, and the launcher's choice of instantiation.
"""

from __future__ import annotations

import functools
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import spmv
import turbobc
from oracles import assert_edge_values
from gpu_helpers import Counter, family_run, make_graph, pool_limited, read_graph
from graph_cases import GRAPH_CASES
from turbobc._graph import Graph
from turbobc._run import run_schedule
from turbobc.engines import engine_named
from turbobc.engines.gpu import memory as _gpu_memory
from turbobc.engines.gpu.lanes import LanesFamily
from turbobc.engines.gpu.engine import GpuEngine
from turbobc.engines.gpu.resident import DeviceResident
from turbobc.engines.protocol import Problem
from turbobc.engines.wide import accumulate_wide
from turbobc.exceptions import GPUUnavailableError

gpu = pytest.mark.gpu
KERNELS = ("auto",) + spmv.KERNELS
DIRECTED = pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])


# ---- helpers ----------------------------------------------------------------------------------

def gpu_run(graph, sources, kernel="auto", **problem):
    """The GPU engine's Partial (vertex and edge sums) and facts, through the protocol."""
    return run_schedule(Problem(graph, kernel=kernel, edges=True, **problem),
                        engine_named("gpu"), [np.asarray(sources, dtype=np.int64)])


def cpu_sums(graph, sources, **problem):
    """The CPU engine's Partial with edge sums (the reference engine)."""
    total, _ = run_schedule(Problem(graph, edges=True, **problem), engine_named("graphblas"),
                            [np.asarray(sources, dtype=np.int64)])
    return total


def wide_sums(graph, sources, target_weight=None, source_weight=None):
    """Vertex and edge sums of the exponent-per-vertex sweep on NumPy: exact for any counts."""
    A = graph.pattern
    raw, edge = np.zeros(graph.n), np.zeros(graph.nnz)
    accumulate_wide(np, A.indptr, A.indices, graph.n, np.asarray(sources, dtype=np.int64), raw,
                    endpoints=False, edge_raw=edge, target_weight=target_weight,
                    source_weight=source_weight)
    return raw, edge


def batched_edges(graph, sources, kernel, endpoints=False, **kw):
    """The batched engine with edge sums: (vertex sums, edge sums, facts)."""
    facts, edge = {}, np.zeros(graph.nnz)
    raw = family_run(LanesFamily, graph, np.asarray(sources, dtype=np.int64),
                                  endpoints=endpoints, kernel=kernel, progress=None,
                                  facts=facts, edge_raw=edge, **kw)
    return raw, edge, facts


def batched_vertex(graph, sources, kernel, endpoints=False, **kw):
    """The batched engine without edge sums (the vertex-BC path)."""
    return family_run(LanesFamily, graph, np.asarray(sources, dtype=np.int64),
                                   endpoints=endpoints, kernel=kernel, progress=None, **kw)


def check_edge_bc(E, G, want):
    """E (csr, list(G) order) holds networkx's value on every edge (tests/oracles.py)."""
    assert_edge_values(E, G, want, rtol=1e-10, atol=1e-13)


def mixed_depths_graph(directed: bool) -> Graph:
    """Components of very different depths: a 150-vertex path, a 12 x 12 grid, a random
    sparse graph with a hub of degree 299, a triangle and an isolated vertex (n = 698)."""
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


# one source per component and more: path ends and middle, grid corners, the hub, the
# triangle and the isolated vertex
MIXED_SOURCES = (0, 149, 75, 150, 150 + 143, 294, 294 + 17, 694, 695, 697, 40, 500, 301)


@functools.lru_cache(maxsize=None)
def mixed_reference(directed: bool, sources: tuple, endpoints: bool = False):
    graph = mixed_depths_graph(directed)
    return graph, cpu_sums(graph, sources, endpoints=endpoints)


def hubs_graph(seed: int, directed: bool) -> Graph:
    """4000 random vertices plus a hub of degree 3000 and ten of degree 40 to 200."""
    rng = np.random.default_rng(seed)
    n = 4000
    rows = [rng.integers(0, n, 6 * n), np.zeros(3000, dtype=np.int64)]
    cols = [rng.integers(0, n, 6 * n), rng.choice(np.arange(1, n), 3000, replace=False)]
    for h in range(1, 11):
        deg = int(rng.integers(40, 200))
        rows.append(np.full(deg, h))
        cols.append(rng.integers(0, n, deg))
    r, c = np.concatenate(rows), np.concatenate(cols)
    if directed:  # some arcs into the hubs as well
        r, c = np.concatenate([r, c[:2000]]), np.concatenate([c, r[:2000]])
    return make_graph(sp.csr_array((np.ones(r.size), (r, c)), shape=(n, n)), directed)


@functools.lru_cache(maxsize=None)
def hubs_reference(directed: bool):
    graph = hubs_graph(1, directed)
    sources = np.array([0, 1, 5, 17, 999, 3999] + list(range(2000, 2090)))
    return graph, sources, cpu_sums(graph, sources)


def grid_graph(rows: int, cols: int, directed: bool = False) -> Graph:
    """The rows x cols grid, vertex (i, j) = i * cols + j; directed: arcs right and down."""
    idx = np.arange(rows * cols).reshape(rows, cols)
    tail = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    head = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    A = sp.csr_array((np.ones(tail.size), (tail, head)), shape=(rows * cols, rows * cols))
    return make_graph(A, directed)


def diamond_chain_beside_path(k: int, directed: bool) -> Graph:
    """From vertex 0 a chain of k diamonds (σ = 2^k at its end) beside a plain path of 2k
    edges (σ = 1), joined by one last vertex: depth 2k spans counts 2^k and 1."""
    arcs, joint, nxt = [], 0, 1
    for _ in range(k):
        left, right, after = nxt, nxt + 1, nxt + 2
        arcs += [(joint, left), (joint, right), (left, after), (right, after)]
        joint, nxt = after, nxt + 3
    end = 0
    for _ in range(2 * k):
        arcs.append((end, nxt))
        end, nxt = nxt, nxt + 1
    arcs += [(joint, nxt), (end, nxt)]
    tail, head = np.array(arcs).T
    n = nxt + 1
    return make_graph(sp.csr_array((np.ones(tail.size), (tail, head)), shape=(n, n)), directed)


def assert_sums(got_vertex, got_edge, want_vertex, want_edge, rtol=1e-10, atol=1e-10, msg=""):
    np.testing.assert_allclose(got_edge, want_edge, rtol=rtol, atol=atol, err_msg=f"edge {msg}")
    np.testing.assert_allclose(got_vertex, want_vertex, rtol=rtol, atol=atol,
                               err_msg=f"vertex {msg}")


# ---- on a device: the public API against networkx -----------------------------------------------

@gpu
@pytest.mark.parametrize("name", sorted(GRAPH_CASES))
def test_edge_bc_equals_networkx_on_the_catalogue(name):
    G = GRAPH_CASES[name]()
    for normalized in (True, False):
        E = turbobc.edge_bc(G, normalized=normalized, engine="gpu")
        check_edge_bc(E, G, nx.edge_betweenness_centrality(G, normalized=normalized))


@gpu
@pytest.mark.parametrize("name", ["karate", "grid_6x7", "gnp_medium", "digraph_gnp",
                                  "two_components_isolated", "scale_free_directed", "dag"])
def test_sampled_and_chosen_sources_equal_networkx(name):
    G = GRAPH_CASES[name]()
    for k in (1, 5, len(G) // 2):
        E = turbobc.edge_bc(G, k=k, seed=7, engine="gpu")
        check_edge_bc(E, G, nx.edge_betweenness_centrality(G, k=k, seed=7))
    nodes = list(G)
    for sources in (nodes[::4], nodes[3:4]):  # many, and one (the batched family too)
        for normalized in (True, False):
            E = turbobc.edge_bc(G, sources=sources, normalized=normalized, engine="gpu")
            check_edge_bc(E, G, nx.edge_betweenness_centrality_subset(
                G, sources, nodes, normalized=normalized))


@gpu
def test_one_source_runs_on_the_batched_family():
    graph = mixed_depths_graph(False)
    total, facts = gpu_run(graph, [150 + 143])
    assert facts["family"] == "lanes" and facts["edge_sums"] and facts["batches"] == 1
    want = cpu_sums(graph, [150 + 143])
    assert_sums(total.vertex, total.edge, want.vertex, want.edge)
    assert total.edge.any()


@gpu
def test_targets_run_on_the_cpu_engine():
    """networkx's edge subset BC (non-targets split in equal shares) is declined by the GPU
    engine: engine="gpu" says why, "auto" gets it from the CPU engine."""
    G = GRAPH_CASES["les_miserables"]()
    nodes = list(G)
    sources, targets = nodes[::3], nodes[1::4]
    with pytest.raises(GPUUnavailableError, match="edge subset BC"):
        turbobc.edge_bc(G, sources=sources, targets=targets, engine="gpu")
    E = turbobc.edge_bc(G, sources=sources, targets=targets, engine="auto")
    check_edge_bc(E, G, nx.edge_betweenness_centrality_subset(G, sources, targets,
                                                              normalized=True))


# ---- on a device: every kernel against the CPU engine -------------------------------------------

@gpu
@pytest.mark.parametrize("kernel", KERNELS)
@DIRECTED
@pytest.mark.parametrize("batch", [None, 5, 40])
def test_mixed_depths_every_kernel(kernel, directed, batch):
    graph, want = mixed_reference(directed, MIXED_SOURCES)
    raw, edge, facts = batched_edges(graph, MIXED_SOURCES, kernel, _batch=batch)
    assert facts["depth"] >= 149 and facts["edge_sums"]
    assert_sums(raw, edge, want.vertex, want.edge, msg=f"{kernel} batch {batch}")
    # the vertex sums of an edge run are the vertex-BC path's
    np.testing.assert_allclose(raw, batched_vertex(graph, MIXED_SOURCES, kernel, _batch=batch),
                               rtol=1e-12, atol=1e-12)


@gpu
@pytest.mark.parametrize("kernel", KERNELS)
@DIRECTED
def test_all_sources_with_endpoints_every_kernel(kernel, directed):
    """Every source, batches that do not divide n (padding lanes); endpoints change the vertex
    sums only."""
    sources = tuple(range(698))
    graph, want = mixed_reference(directed, sources, True)
    _, plain = mixed_reference(directed, sources, False)
    for batch in (None, 100):
        raw, edge, _ = batched_edges(graph, sources, kernel, endpoints=True, _batch=batch)
        assert_sums(raw, edge, want.vertex, want.edge, atol=1e-9, msg=f"{kernel} {batch}")
    np.testing.assert_allclose(want.edge, plain.edge, rtol=1e-12, atol=1e-12)
    assert graph.n % 100


@gpu
@pytest.mark.parametrize("kernel", KERNELS)
@DIRECTED
def test_hubs_every_kernel(kernel, directed):
    """Degrees above 32 and 1024: both forms of the backward masked sum (a lane per
    neighbour, a lane per source) add edge terms."""
    graph, sources, want = hubs_reference(directed)
    assert graph.out_degree.max() > 1024
    with turbobc.tuning(gpu_family="lanes"):  # "auto" predicts the frontiers cheaper here
        total, facts = gpu_run(graph, sources, kernel)
    assert_sums(total.vertex, total.edge, want.vertex, want.edge, msg=kernel)
    assert facts["family"] == "lanes"


@gpu
@pytest.mark.parametrize("kernel", KERNELS)
@DIRECTED
def test_target_and_source_weights(kernel, directed):
    """τ (some zeros) and ω (counts) reach the edge terms as the CPU engine adds them; one
    array for both, as tree folding passes them."""
    graph = mixed_depths_graph(directed)
    rng = np.random.default_rng(5)
    tau = rng.random(graph.n) * (rng.random(graph.n) > 0.2)
    omega = rng.integers(1, 6, graph.n).astype(np.float64)
    sources = np.arange(0, graph.n, 2)
    for weights in (dict(target_weight=tau), dict(source_weight=omega),
                    dict(target_weight=tau, source_weight=omega),
                    dict(target_weight=omega, source_weight=omega)):
        total, _ = gpu_run(graph, sources, kernel, **weights)
        want = cpu_sums(graph, sources, **weights)
        assert_sums(total.vertex, total.edge, want.vertex, want.edge, rtol=1e-10, atol=1e-9,
                    msg=f"{kernel} {sorted(weights)}")


@gpu
@pytest.mark.parametrize("kernel", spmv.KERNELS)
def test_grid_rescaled_past_2_512(kernel):
    """A 300 x 300 grid from its corners: counts up to C(598, 299) ≈ 2^593, so levels are
    rescaled per source; the edge terms carry the scale exactly."""
    assert math.comb(598, 299) > 2**512  # the case is not vacuous
    graph = grid_graph(300, 300)
    sources = [0, 299, 150 * 300 + 150, 300 * 300 - 1]
    raw, edge, facts = batched_edges(graph, sources, kernel)
    assert np.isfinite(edge).all() and facts["wide_sources"] == 0
    want_vertex, want_edge = wide_sums(graph, sources)
    assert_sums(raw, edge, want_vertex, want_edge, rtol=1e-9, atol=1e-9, msg=kernel)


@gpu
@pytest.mark.parametrize("kernel", spmv.KERNELS)
@DIRECTED
def test_wide_sources_take_their_edge_sums_along(kernel, directed):
    """A chain of 1100 diamonds beside a path: one level spans 2^1100 and 1, so source 0 goes
    to the exponent-per-vertex sweep on the device, which adds its edge sums there; the
    others rerun in the batch."""
    k = 1100
    graph = diamond_chain_beside_path(k, directed)
    sources = [0, 3 * (k // 2), 3 * k + k, graph.n - 1]
    raw, edge, facts = batched_edges(graph, sources, kernel)
    assert facts["wide_sources"] >= 1
    want_vertex, want_edge = wide_sums(graph, sources)
    assert_sums(raw, edge, want_vertex, want_edge, rtol=1e-12, atol=1e-12, msg=kernel)


@gpu
@pytest.mark.parametrize("kernel", spmv.KERNELS)
def test_int64_indices_int32_levels_and_the_shift_table_rerun(kernel):
    graph = mixed_depths_graph(True)
    sources = np.arange(0, graph.n, 3)
    raw, edge, _ = batched_edges(graph, sources, kernel)
    raw64, edge64, facts = batched_edges(graph, sources, kernel, _index_dtype=np.int64)
    assert facts["index_dtype"] == "int64"
    assert_sums(raw64, edge64, raw, edge, rtol=1e-12, atol=1e-12)
    raw32, edge32, facts = batched_edges(graph, sources, kernel, _level_dtype=np.int32)
    assert facts["level_dtype"] == "int32"  # the _edge kernels of int levels
    assert_sums(raw32, edge32, raw, edge, rtol=1e-12, atol=1e-12)
    # a shift table of 16 levels: the batch stops before its backward sweep, adds nothing and
    # reruns with a deeper one (the path is 149 levels deep)
    rawcap, edgecap, facts = batched_edges(graph, sources, kernel, _depth_cap=16)
    assert facts["reruns"] >= 2 and facts["depth_cap"] > facts["depth"]
    assert_sums(rawcap, edgecap, raw, edge, rtol=1e-12, atol=1e-12)
    want = cpu_sums(graph, sources)
    assert_sums(raw, edge, want.vertex, want.edge)


@gpu
def test_path_deeper_than_int16_levels_exact():
    """A path of 33000 vertices from both ends (int32 levels): from 0, edge i -> i+1 carries
    the n − 1 − i vertices past i; from n − 1, edge i+1 -> i carries the i + 1 before it."""
    n = 33000
    graph = make_graph(sp.diags([np.ones(n - 1)], [1], shape=(n, n)), directed=False)
    raw, edge, facts = batched_edges(graph, [0, n - 1], "vecsc")
    assert facts["level_dtype"] == "int32"
    A = graph.pattern
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    expected = np.where(A.indices == rows + 1, n - 1 - rows, rows).astype(np.float64)
    np.testing.assert_array_equal(edge, expected)


REAL = [("delaunay_n12.mtx", False), ("road-minnesota.mtx", False),
        ("facebook_combined.txt.gz", False), ("p2p-Gnutella08.txt", True)]


@gpu
@pytest.mark.parametrize(("name", "directed"), REAL, ids=[r[0] for r in REAL])
def test_real_graphs_every_kernel(name, directed):
    graph = read_graph(name, directed)
    sources = np.arange(0, graph.n, 8)
    want = cpu_sums(graph, sources)
    for kernel in KERNELS:
        total, _ = gpu_run(graph, sources, kernel)
        assert_sums(total.vertex, total.edge, want.vertex, want.edge, rtol=1e-10, atol=1e-8,
                    msg=kernel)


# ---- on a device: resident sums, progress, memory -----------------------------------------------

@gpu
def test_resident_edge_sums_are_reused_zeroed_and_dropped():
    """A second edge run on one resident builds no part of the graph and starts its edge sums
    at zero; the edge sums count in held_bytes; a run without them lets them go."""
    graph = mixed_depths_graph(True)
    sources = np.arange(0, graph.n, 4)
    with DeviceResident(graph) as resident:
        first, facts = np.zeros(graph.nnz), {}
        family_run(LanesFamily, resident, sources, endpoints=False, kernel="vecsc",
                                   progress=None, edge_raw=first, facts=facts)
        assert resident.edge is not None and resident.edge_bytes() >= 8 * graph.nnz
        assert resident.held_bytes() >= resident.edge_bytes()
        assert facts["model_bytes"] >= 8 * graph.nnz
        second, facts = np.zeros(graph.nnz), {}
        family_run(LanesFamily, resident, sources, endpoints=False, kernel="vecsc",
                                   progress=None, edge_raw=second, facts=facts)
        assert facts["resident_reused"]
        np.testing.assert_allclose(second, first, rtol=1e-12, atol=1e-12)
        family_run(LanesFamily, resident, sources, endpoints=False, kernel="vecsc",
                                   progress=None)
        assert resident.edge is None and resident.edge_bytes() == 0
    want = cpu_sums(graph, sources)
    np.testing.assert_allclose(first, want.edge, rtol=1e-10, atol=1e-10)


@gpu
def test_sweeper_runs_add_up():
    """Two runs of one GPU sweeper give the edge sums of the union."""
    graph = mixed_depths_graph(False)
    with GpuEngine().open(Problem(graph, edges=True)) as sweeper:
        part = sweeper.run(np.arange(0, 300)) + sweeper.run(np.arange(300, graph.n))
        assert sweeper.facts["resident_reused"]
    whole = cpu_sums(graph, np.arange(graph.n))
    assert part.sources == graph.n
    assert_sums(part.vertex, part.edge, whole.vertex, whole.edge, atol=1e-9)


@gpu
def test_progress_counts_every_source():
    graph = mixed_depths_graph(False)
    bar = Counter()
    sources = np.arange(0, graph.n, 2)
    family_run(LanesFamily, graph, sources, endpoints=False, kernel="auto", progress=bar,
                            _batch=64, edge_raw=np.zeros(graph.nnz))
    assert bar.n == sources.size


@gpu
def test_peak_memory_within_model():
    graph = mixed_depths_graph(True)
    for kernel in spmv.KERNELS:
        _, _, run = batched_edges(graph, np.arange(graph.n), kernel)
        assert run["peak_pool_bytes"] <= run["model_bytes"] + 2 * 2**20, run


@gpu
def test_no_room_for_32_lanes_beside_the_edge_sums_is_a_memory_error():
    """Vertex sums go one source at a time when 32 lanes do not fit; the single-source family
    sums no edges, so an edge run says how much it needs instead, and leaves nothing."""
    import cupy

    graph = mixed_depths_graph(False)
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    baseline = pool.used_bytes()
    per_lane = _gpu_memory.lane_bytes(graph.n, 2, _gpu_memory.DEPTH_CAP)
    with pool_limited(baseline + 8 * per_lane):
        with pytest.raises(MemoryError, match=r"batch of 32 sources and the edge sums"):
            batched_edges(graph, np.arange(50), "sccsc")
        assert pool.used_bytes() == baseline


# ---- CPU: what the GPU engine declines, the memory model, the launcher --------------------------

def _small_graph(directed=False) -> Graph:
    return make_graph(nx.to_scipy_sparse_array(nx.karate_club_graph()), directed)


def test_can_serve_takes_edge_bc_and_weights_and_declines_edge_subset():
    import dataclasses

    graph = _small_graph()
    reason = GpuEngine().can_serve(Problem(graph, edges=True))
    assert reason is None or reason.startswith("no usable GPU")
    split = GpuEngine().can_serve(Problem(graph, edges=True, target_weight=np.ones(graph.n),
                                          split_non_targets=True))
    assert "edge subset BC" in split and "CPU engine" in split

    # weighted BC (vertex and edge) is served since issue 13 (turbobc/engines/gpu/layers.py)
    weighted = dataclasses.replace(graph, lengths=np.ones(graph.nnz))
    for edges in (False, True):
        assert GpuEngine().can_serve(Problem(weighted, edges=edges)) == reason


@pytest.mark.parametrize("n, m", [(4039, 176468), (262144, 21_000_000), (10, 0),
                                  (1_000_000, 200_000_000)])
@pytest.mark.parametrize("free", [2**30, 80 * 2**30])
def test_choose_batch_counts_the_edge_sums(n, m, free):
    fraction = 0.9
    kw = dict(index_bytes=4, level_bytes=2, depth_cap=_gpu_memory.DEPTH_CAP, directed=False)
    assert (_gpu_memory.lanes_bytes(n, m, kernel="vecsc", batch=64, edges=True, **kw)
            - _gpu_memory.lanes_bytes(n, m, kernel="vecsc", batch=64, **kw)) == 8 * m
    with_edges = _gpu_memory.choose_lanes(n, m, 10**6, free, edges=True,
                                           memory_fraction=fraction, max_batch=2**20)
    without = _gpu_memory.choose_lanes(n, m, 10**6, free, memory_fraction=fraction,
                                        max_batch=2**20)
    assert with_edges <= without
    if with_edges:
        assert _gpu_memory.lanes_bytes(n, m, kernel="vecsc", batch=with_edges, edges=True,
                                         **kw) <= fraction * free
    if without and m * 8 >= fraction * free:
        assert with_edges == 0  # the edge sums alone do not fit


class _FakeDeviceArray:
    """What the launcher hands over: a device address, a dtype and a size."""

    def __init__(self, ptr, dtype=np.int32, size=1):
        self.__cuda_array_interface__ = {}
        self.data = type("Pointer", (), {"ptr": ptr})()
        self.dtype, self.size = np.dtype(dtype), size


@pytest.mark.parametrize("kernel", spmv.KERNELS)
@pytest.mark.parametrize("level", [np.int16, np.int32])
def test_sweep_batch_launches_the_accumulator_asked_for(monkeypatch, kernel, level):
    from spmv import _batched, _module

    launched = []

    def fake_kernel(filename, name):
        assert name in _module.name_expressions(filename), name
        return lambda grid, block, args: launched.append((name, args))

    monkeypatch.setattr(_batched, "get_kernel", fake_kernel)
    monkeypatch.setattr(_batched, "resident_blocks", lambda fn, block, cap: 132 * 6)
    arrays = {key: _FakeDeviceArray(0x1000 * (i + 1)) for i, key in enumerate(
        ("in_ptr", "in_idx", "out_ptr", "out_idx", "erow", "ecol", "sigma", "t", "flag0",
         "flag1", "masks", "shifts", "maxbits", "reached", "bc", "ctl"))}
    sources = _FakeDeviceArray(0xA000, size=40)
    level_array = _FakeDeviceArray(0xB000, dtype=level)
    width = 16 if level == np.int16 else 32
    for edge in (None, _FakeDeviceArray(0xE000, dtype=np.float64)):
        _batched.sweep_batch(kernel, n=100, m=500, stride=64, sources=sources,
                             level=level_array, dcap=2048, endpoints=False, max_in_degree=9,
                             push_ratio=4, edge=edge, **arrays)
        name, (graph_view, work_view, run_view) = launched[-1]
        suffix = "" if edge is None else "_edge"
        assert name == f"bcb_{kernel}{width}{suffix}<int>"
        assert int(run_view["edge"]) == (0 if edge is None else 0xE000)
        assert int(run_view["bc"]) == arrays["bc"].data.ptr and int(run_view["nsrc"]) == 40
