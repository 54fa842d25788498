"""Weighted BC on the GPU engine (issue 13): Bellman–Ford distances on the device
(spmv/kernels/distances.cu, layers.cu, block_sweep.cu) and the DAG sweep of turbobc.engines.wide on CuPy
(turbobc/engines/gpu/layers.py), against networkx's weighted betweenness (Dijkstra) and the
CPU engine: the exact tables with tied lengths, the graph catalogue with integer lengths 1..3
(many ties), 1..100 and random floats, generated random graphs (directed and undirected,
disconnected), every kernel name, one source, k + seed, chosen sources, endpoints, targets (τ),
source weights (ω, tree folding), edge BC, a grid whose path counts pass float64's range,
int64 indices, small batches and the resident parts.

CPU tests (no ``gpu`` marker): the float64 bit-pattern order the atomic min relies on, the
relaxation rounds emulated in NumPy against networkx's Dijkstra, the batch chooser and the
memory model, and which problems the GPU engine serves.
"""

from __future__ import annotations

import dataclasses

import networkx as nx

import numpy as np
import pytest

import spmv
import turbobc
from graph_cases import GRAPH_CASES, with_lengths
from gpu_helpers import family_run
from oracles import as_array, networkx_bc
from test_edge_bc import _check as _edge_check
from test_weighted import (EXACT, GENERATED, KINDS, _diamond_chain_beside_path, _exact_raw,
                           _generated, _grid_with_lengths, _lengths_matrix, _with_trees)
from turbobc._api import run_bc
from turbobc._graph import Graph
from turbobc._run import run_schedule
from turbobc.engines import engine_named
from turbobc._validation import _weighted_graph
from spmv import _layers
from turbobc.engines.gpu import layers as _gpu_layers
from turbobc.engines.gpu import layers_distances as _gpu_distances
from turbobc.engines.gpu import layers_sweep as _gpu_sweep
from turbobc.engines.gpu import memory as _gpu_memory
from turbobc.engines.gpu.layers import LayersFamily
from turbobc.engines.gpu.engine import GpuEngine
from turbobc.engines.gpu.resident import DeviceResident
from turbobc.engines.protocol import Problem

gpu = pytest.mark.gpu
GPU = {"engine": "gpu"}
CPU = {"engine": "graphblas"}
KERNELS = ("auto",) + spmv.KERNELS
CASES = sorted(GRAPH_CASES)
RTOL, ATOL = 1e-12, 1e-12


@pytest.fixture(params=[("wide", "auto", "auto"), ("kernels", "auto", "auto"),
                        ("kernels", "auto", False), ("kernels", False, False)],
                ids=["wide", "kernels", "kernels-layers", "kernels-rounds"])
def path(request):
    """Both DAG sweeps of the weighted GPU path: engines/wide.py on CuPy, and the kernels of
    spmv/kernels/layers.cu (turbobc.engines.gpu.layers.PATHS); the distances of these
    small graphs a source per block in shared memory, and (``kernels-rounds``) by rounds over
    the batch; the kernels' DAG sweep a source per block (``kernels``), or a layer per launch
    (``kernels-layers``, ``kernels-rounds``)."""
    path, per_block, block_sweep = request.param
    assert path in _gpu_layers.PATHS
    with turbobc.tuning(gpu_weighted_path=path, gpu_block_distances=per_block,
                        gpu_block_sweep=block_sweep):
        yield path


def _graph_of(G) -> Graph:
    return _weighted_graph(nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr"),
                           G.is_directed())


def _dijkstra(G, s) -> np.ndarray:
    dist = np.full(len(G), np.inf)
    index = {v: i for i, v in enumerate(G)}
    for v, d in nx.single_source_dijkstra_path_length(G, list(G)[s], weight="weight").items():
        dist[index[v]] = d
    return dist


# ---- on the CPU -------------------------------------------------------------------------------

def test_bit_patterns_order_like_non_negative_doubles():
    """atomicMin on the uint64 pattern is a float64 min for +0.0 .. +inf (distances.cu)."""
    rng = np.random.default_rng(0)
    values = np.concatenate([[0.0, np.inf, 5e-324, 1.0, 0.1 + 0.2, 0.3, 1.7e308],
                             rng.uniform(0, 1e6, 1000), rng.integers(0, 300, 100)])
    bits = values.astype(np.float64).view(np.uint64)
    np.testing.assert_array_equal(np.argsort(values, kind="stable"),
                                  np.argsort(bits, kind="stable"))


def _emulated_rounds(graph: Graph, sources) -> np.ndarray:
    """The rounds of bcl_relax in NumPy (one relaxation per marked slot, min on the bit
    pattern, marks of the lowered heads), B x n."""
    A = graph.pattern
    n = graph.n
    dist = np.full((len(sources), n), np.inf).view(np.uint64)
    marks = np.zeros((len(sources), n), dtype=bool)
    for b, s in enumerate(sources):
        dist[b, s] = 0
        marks[b, s] = True
    while marks.any():
        keys = np.flatnonzero(marks)
        marks[:] = False
        for key in keys:
            b, v = divmod(int(key), n)
            dv = dist[b, v:v + 1].view(np.float64)[0]
            for e in range(A.indptr[v], A.indptr[v + 1]):
                w = A.indices[e]
                bits = np.array([dv + graph.lengths[e]]).view(np.uint64)[0]
                if bits < dist[b, w]:
                    dist[b, w] = bits
                    marks[b, w] = True
    return dist.view(np.float64)


def _emulated_block(graph: Graph, source: int, width: float, rng) -> np.ndarray:
    """bcl_block_distances' scheme for one source in Python: flag words taken in a random
    order each round (as warps would), a flag set during a round picked up in the same round
    when its word comes later, near-far phases of ``width``. Distances as float64."""
    A, n = graph.pattern, graph.n
    dist = np.full(n, np.inf)
    words = (n + 31) // 32
    flags = np.zeros(words, dtype=np.int64)
    dist[source] = 0.0
    flags[source >> 5] |= 1 << (source & 31)
    below = width
    while True:
        lowered, least_far = False, np.inf
        for w in rng.permutation(words):
            bits, flags[w] = int(flags[w]), 0
            for j in range(32):
                if not bits >> j & 1:
                    continue
                v = 32 * int(w) + j
                if dist[v] >= below:  # far: flagged again
                    flags[w] |= 1 << j
                    least_far = min(least_far, dist[v])
                    continue
                for e in rng.permutation(np.arange(A.indptr[v], A.indptr[v + 1])):
                    x = int(A.indices[e])
                    candidate = dist[v] + graph.lengths[e]
                    if candidate < dist[x]:
                        dist[x] = candidate
                        flags[x >> 5] |= 1 << (x & 31)
                        lowered = True
        if lowered:
            continue
        if least_far == np.inf:
            return dist
        below = max(least_far + width, np.nextafter(least_far, np.inf))


@pytest.mark.parametrize("width", [np.inf, 0.5, 3.0])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["karate", "digraph_gnp", "two_components_isolated",
                                  "grid_deep_2x40", "self_loops", "barabasi_albert"])
def test_block_scheme_reaches_dijkstras_distances(name, kind, width):
    """The per-block scheme (flags taken a word at a time in any order, far vertices flagged
    again, the threshold moved past the least far distance) ends, and at Dijkstra's
    distances bit for bit, from every source."""
    G = with_lengths(GRAPH_CASES[name](), kind, seed=7)
    graph = _graph_of(G)
    rng = np.random.default_rng(len(name))
    for s in range(0, graph.n, 5):
        got = _emulated_block(graph, s, width, rng)
        np.testing.assert_array_equal(got, _dijkstra(G, s))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["karate", "digraph_gnp", "two_components_isolated",
                                  "grid_6x7", "self_loops"])
def test_relaxation_rounds_reach_dijkstras_distances(name, kind):
    G = with_lengths(GRAPH_CASES[name](), kind, seed=5)
    graph = _graph_of(G)
    sources = list(range(0, graph.n, 3))
    got = _emulated_rounds(graph, sources)
    for b, s in enumerate(sources):
        np.testing.assert_array_equal(got[b], _dijkstra(G, s))


def test_mark_threads_match_the_kernels():
    """list_marks launches blocks of MARK_THREADS, the block size marks.cu's prefix sum is
    written for."""
    import re

    import spmv._module as _module

    define = re.search(r"#define MARK_THREADS (\d+)", _module.source_text("marks.cu"))
    assert int(define.group(1)) == _layers.MARK_THREADS


def test_choose_batch_and_memory_model():
    n, m = 1000, 8000
    per = _gpu_memory.BYTES_PER_SLOT * n + _gpu_memory.BYTES_PER_EDGE_SLOT * m
    fixed = _gpu_memory.layers_format_bytes(n, m, 4) + 8 * n
    free = int((fixed + 10 * per) / 0.8) + 1
    assert _gpu_memory.choose_layers_batch(n, m, 100, free) == 10
    assert _gpu_memory.choose_layers_batch(n, m, 25, free) == 9  # 3 even batches
    assert _gpu_memory.choose_layers_batch(n, m, 0, free) == 0
    assert _gpu_memory.choose_layers_batch(n, m, 100, 0) == 1  # never below one source
    assert _gpu_memory.choose_layers_batch(n, m, 100, free, memory_limit=fixed) == 1
    assert _gpu_memory.choose_layers_batch(n, m, 100, free, edges=True) == 9
    assert _gpu_memory.choose_layers_batch(10**7, 10, 100, 2**60) == 1  # WIDE_BATCH_ENTRIES // n
    with turbobc.tuning(layers_max_batch=4):  # the layers family's own cap
        assert _gpu_memory.choose_layers_batch(n, m, 100, free) == 4
        assert _gpu_memory.choose_layers_batch(n, m, 100, 2**60, hops=True) == 4
        assert _gpu_memory.choose_layers_batch(n, m, 10, 2**60, hops=True) == 4  # 3 batches, even
    with turbobc.tuning(max_batch=4):  # the lanes family's cap leaves the layers' alone
        assert _gpu_memory.choose_layers_batch(n, m, 100, free) == 10
    assert (_gpu_memory.layers_bytes(n, m, batch=10, index_bytes=4, edges=True)
            == fixed + 8 * m + 10 * per)


def test_gpu_engine_serves_weighted_vertex_and_edge_bc():
    graph = _graph_of(with_lengths(nx.karate_club_graph(), "int3", seed=1))
    reason = GpuEngine().can_serve(Problem(dataclasses.replace(graph, lengths=None)))
    for edges in (False, True):
        assert GpuEngine().can_serve(Problem(graph, edges=edges)) == reason
    split = GpuEngine().can_serve(Problem(graph, edges=True, target_weight=np.ones(graph.n),
                                          split_non_targets=True))
    assert "edge subset BC" in split


def test_lengths_part_is_not_renamed_for_undirected_graphs():
    from turbobc.engines.gpu.resident import PARTS, part_key

    assert "lengths" in PARTS
    assert part_key("lengths", np.int32, False) == ("lengths", "int32")


# ---- on the device ----------------------------------------------------------------------------

@gpu
@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_tables(name, path):
    n, triples, expected = EXACT[name]
    A = _lengths_matrix(n, triples)
    got = turbobc.bc(A, weight=True, normalized=False, **GPU)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(triples)
    _edge_check(turbobc.edge_bc(A, weight=True, normalized=False, **GPU), G,
                nx.edge_betweenness_centrality(G, weight="weight", normalized=False))


@gpu
@pytest.mark.parametrize("knob", ["gpu_near_far_width", "gpu_block_near_far_width"])
@pytest.mark.parametrize("width", [0, -1.0, float("nan")])
def test_near_far_width_must_be_positive(width, knob):
    """A width of zero would never move a phase's threshold past its least waiting key."""
    from turbobc._tuning import tuning

    G = with_lengths(nx.cycle_graph(6), "int3", seed=1)
    with tuning(**{knob: width}), pytest.raises(ValueError, match=f"{knob} must be positive"):
        turbobc.bc(G, weight="weight", **GPU)


@gpu
@pytest.mark.parametrize("index", ["int32", "int64"])
@pytest.mark.parametrize("share", [0.0, 1e-5, 0.003, 0.2, 0.97])
@pytest.mark.parametrize("words", [1, 255, 256, 257, 5000])
def test_list_marks_in_slot_order_and_cleared(words, share, index):
    """bcl_count_marks / bcl_list_marks give flatnonzero of the marks, and zero them."""
    import cupy

    rng = np.random.default_rng(words + int(share * 1e6))
    host = (rng.random(16 * words) < share).astype(np.uint8)
    marks = cupy.asarray(host)
    got = _layers.list_marks(marks, "int" if index == "int32" else "long long").get()
    np.testing.assert_array_equal(got, np.flatnonzero(host))
    assert got.dtype == np.int64 and not bool(marks.any())


@gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["karate", "digraph_gnp", "two_components_isolated",
                                  "grid_6x7", "self_loops", "edgeless", "scale_free_directed"])
@pytest.mark.parametrize("index", ["int32", "int64"])
@pytest.mark.parametrize("rounds_by", ["auto", "marks", "queue", "blocks"])
@pytest.mark.parametrize("near_far", [None, 0.3, 2.0])
def test_device_distances_equal_dijkstra(name, kind, index, rounds_by, near_far, monkeypatch):
    """bcl_relax's fixed point is networkx's Dijkstra distances, bit for bit, whether its rounds
    mark what they lower, queue it, or mix both (QUEUE_BELOW_SHARE), in one phase or in
    near-far phases of a narrow or a wide threshold step (Tuning.gpu_near_far_width); and so
    is bcl_block_distances' (a source per block, ``blocks``: no rounds on the host)."""
    import cupy

    from turbobc._tuning import tuning

    if rounds_by in ("marks", "queue"):
        monkeypatch.setattr(_gpu_distances, "QUEUE_BELOW_SHARE",
                            0 if rounds_by == "marks" else 10**12)
    G = with_lengths(GRAPH_CASES[name](), kind, seed=6)
    graph = _graph_of(G)
    A = graph.pattern
    sources = np.arange(0, graph.n, 2)
    rounds: list = []
    with tuning(gpu_near_far_width=near_far, gpu_block_near_far_width=near_far,
                gpu_block_distances=rounds_by == "blocks"):
        got = _gpu_distances.distances(cupy.asarray(A.indptr.astype(index)),
                                      cupy.asarray(A.indices.astype(index)),
                                      cupy.asarray(graph.lengths), graph.n, sources,
                                      rounds).get()
    assert got.shape == (sources.size, graph.n)
    assert rounds[0] == 0 if rounds_by == "blocks" else rounds[0] >= 1
    for b, s in enumerate(sources):
        np.testing.assert_array_equal(got[b], _dijkstra(G, int(s)))


@gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", CASES)
def test_vertex_bc_equals_networkx(name, kind, path):
    G = with_lengths(GRAPH_CASES[name](), kind, seed=len(name))
    for endpoints in (False, True):
        want = networkx_bc(G, selection="all", normalized=True, endpoints=endpoints,
                           weight="weight")
        got = run_bc(G, weight="weight", endpoints=endpoints, **GPU)
        np.testing.assert_allclose(got.values, want, rtol=RTOL, atol=ATOL)
    want = networkx_bc(G, selection="all", normalized=False, endpoints=False, weight="weight")
    np.testing.assert_allclose(turbobc.bc(G, weight="weight", normalized=False, **GPU), want,
                               rtol=RTOL, atol=ATOL)


@gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", CASES)
def test_edge_bc_equals_networkx(name, kind, path):
    G = with_lengths(GRAPH_CASES[name](), kind, seed=len(name) + 1)
    E = turbobc.edge_bc(G, weight="weight", normalized=False, **GPU)
    _edge_check(E, G, nx.edge_betweenness_centrality(G, weight="weight", normalized=False))


@gpu
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_generated_graphs(directed, path):
    """The CPU test's 2,400 random graphs of each kind (1..12 vertices, lengths 1..3, 1..100
    and floats) swept as their disjoint union, each graph's share checked against networkx,
    vertex and edge sums."""
    seeds = [s for s in range(2 * GENERATED) if s % 2 == int(directed)]
    graphs = [_generated(s) for s in seeds]
    union = nx.disjoint_union_all(graphs)
    got = turbobc.bc(union, weight="weight", normalized=False, endpoints=True, **GPU)
    edges = turbobc.edge_bc(union, weight="weight", normalized=False, **GPU)
    mismatches, offset = [], 0
    for seed, G in zip(seeds, graphs):
        n = len(G)
        want = networkx_bc(G, selection="all", normalized=False, endpoints=True,
                           weight="weight")
        if not np.allclose(got[offset:offset + n], want, rtol=RTOL, atol=ATOL):
            mismatches.append(("vertex", seed))
        mine = edges[offset:offset + n][:, offset:offset + n]
        for (u, v), x in nx.edge_betweenness_centrality(G, weight="weight",
                                                        normalized=False).items():
            if u != v and not np.isclose(mine[u, v], x, rtol=RTOL, atol=ATOL):
                mismatches.append(("edge", seed))
                break
        offset += n
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:5]}"


@gpu
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", ["les_miserables", "digraph_dense"])
def test_every_kernel_name_runs_the_weighted_path(name, kernel, path):
    G = with_lengths(GRAPH_CASES[name](), "int3", seed=2)
    want = networkx_bc(G, selection="all", normalized=True, endpoints=False, weight="weight")
    got = run_bc(G, weight="weight", kernel=kernel, **GPU)
    assert got.facts["engine"] == "gpu" and got.facts["family"] == "layers"
    np.testing.assert_allclose(got.values, want, rtol=RTOL, atol=ATOL)


SELECTION_CASES = ["karate", "grid_deep_2x40", "gnp_medium", "two_components_isolated",
                   "digraph_gnp", "dag", "digraph_sparse_unreachable"]


@gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", SELECTION_CASES)
def test_one_source_k_and_chosen_sources_equal_networkx(name, kind, path):
    G = with_lengths(GRAPH_CASES[name](), kind, seed=3)
    nodes = list(G)
    for endpoints in (False, True):
        for k in (2, len(G) // 2):
            want = networkx_bc(G, selection="k", k=k, seed=11, normalized=True,
                               endpoints=endpoints, weight="weight")
            got = turbobc.bc(G, k=k, seed=11, endpoints=endpoints, weight="weight", **GPU)
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
        for sources in (nodes[::3], nodes[1:2]):
            want = networkx_bc(G, selection="sources", sources=sources, normalized=False,
                               endpoints=endpoints, weight="weight")
            got = turbobc.bc(G, sources=sources, normalized=False, endpoints=endpoints,
                             weight="weight", **GPU)
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    E = turbobc.edge_bc(G, k=5, seed=2, weight="weight", **GPU)
    _edge_check(E, G, nx.edge_betweenness_centrality(G, k=5, seed=2, weight="weight"))
    E = turbobc.edge_bc(G, sources=nodes[:1], weight="weight", normalized=False, **GPU)
    _edge_check(E, G, nx.edge_betweenness_centrality_subset(G, nodes[:1], nodes,
                                                            weight="weight", normalized=False))


@gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", SELECTION_CASES)
def test_targets_equal_networkx_subset(name, kind, path):
    """Vertex BC with targets: τ of the accumulate step (a non-target adds no 1 of its own)."""
    G = with_lengths(GRAPH_CASES[name](), kind, seed=4)
    rng = np.random.default_rng(len(name))
    nodes = list(G)
    for count in (1, max(1, len(nodes) // 4), len(nodes)):
        sources = [nodes[i] for i in rng.permutation(len(nodes))[:max(1, len(nodes) // 3)]]
        targets = [nodes[i] for i in rng.permutation(len(nodes))[:count]]
        for normalized in (False, True):
            want = as_array(nx.betweenness_centrality_subset(
                G, sources, targets, normalized=normalized, weight="weight"), G)
            got = turbobc.bc(G, sources=sources, targets=targets, normalized=normalized,
                             weight="weight", **GPU)
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@gpu
@pytest.mark.parametrize("kind", KINDS)
def test_tree_folding_on_the_gpu(kind, path):
    """Exact BC of an undirected graph with pendant trees folds them: the core runs with τ and
    ω (the folded trees' counts) and its lengths; equal to networkx and to the unfolded run."""
    G = _with_trees(7, kind)
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    for endpoints in (False, True):
        want = networkx_bc(G, selection="all", normalized=True, endpoints=endpoints,
                           weight="weight")
        folded = run_bc(A, weight=True, endpoints=endpoints, **GPU)
        assert (folded.facts["folded"] >= 40) == (kind != "float")  # exact sums only
        assert folded.facts["engine"] == "gpu"
        with turbobc.tuning(fold_trees=False):
            plain = run_bc(A, weight=True, endpoints=endpoints, **GPU)
        np.testing.assert_allclose(folded.values, want, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(plain.values, want, rtol=RTOL, atol=ATOL)


@gpu
@pytest.mark.parametrize("name", ["les_miserables", "digraph_gnp", "two_components_isolated"])
def test_target_and_source_weights_equal_the_cpu_engine(name, path):
    """τ and ω passed to the protocol directly: the raw vertex and edge sums of both engines."""
    G = with_lengths(GRAPH_CASES[name](), "int3", seed=8)
    graph = _graph_of(G)
    rng = np.random.default_rng(1)
    tau = rng.integers(0, 3, graph.n).astype(np.float64)
    omega = rng.uniform(0.5, 2.0, graph.n)
    sources = np.arange(graph.n, dtype=np.int64)
    for endpoints in (False, True):
        problem = dict(edges=True, endpoints=endpoints, target_weight=tau, source_weight=omega)
        want, _ = run_schedule(Problem(graph, **problem), engine_named("graphblas"), [sources])
        got, _ = run_schedule(Problem(graph, **problem), engine_named("gpu"), [sources])
        np.testing.assert_allclose(got.vertex, want.vertex, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(got.edge, want.edge, rtol=RTOL, atol=ATOL)


@gpu
@pytest.mark.parametrize("across, down", [(1, 1), (1, 3)])
def test_deep_grid_past_float64_range(across, down, path):
    """A 540 x 540 grid from a corner: C(1078, 539) ≈ 2^1073 shortest paths to the far corner;
    equal to the CPU engine and the exact big-integer Brandes."""
    A = _grid_with_lengths(540, 540, across, down)
    sources = [0]
    raw, largest = _exact_raw(A, sources)
    assert largest > 10**308
    got = run_bc(A, weight=True, sources=sources, normalized=False, **GPU)
    assert got.facts["family"] == "layers"
    assert got.facts["kernel"] == f"bellman-ford+{path}"
    # the layer kernels' plain counts reach +inf: the source goes to the wide sweep
    assert got.facts["wide_sources"] == (1 if path == "kernels" else 0)
    np.testing.assert_allclose(got.values, raw / 2, rtol=1e-9, atol=1e-9)
    cpu = run_bc(A, weight=True, sources=sources, normalized=False, **CPU)
    np.testing.assert_allclose(got.values, cpu.values, rtol=1e-12, atol=1e-9)


@gpu
def test_diamond_chain_beside_path(path):
    """σ = 2^1100 next to σ = 1 in one hop layer: exact."""
    k = 1100
    A = _diamond_chain_beside_path(k)
    n = A.shape[0]
    sources = [0, 3 * (k // 2), 3 * k + k, n - 1]
    raw, largest = _exact_raw(A, sources)
    got = run_bc(A, weight=True, sources=sources, normalized=False, **GPU)
    np.testing.assert_allclose(got.values, raw / 2, rtol=1e-9, atol=1e-9)
    assert largest >= 2**k


@gpu
@pytest.mark.parametrize("index", [np.int32, np.int64])
@pytest.mark.parametrize("batch", [1, 3, None])
def test_batches_and_index_types_equal_the_cpu_engine(index, batch, path):
    G = with_lengths(GRAPH_CASES["barabasi_albert"](), "int100", seed=5)
    graph = _graph_of(G)
    sources = np.arange(graph.n, dtype=np.int64)
    want, _ = run_schedule(Problem(graph, edges=True, endpoints=True),
                           engine_named("graphblas"), [sources])
    facts, edge = {}, np.zeros(graph.nnz)
    with DeviceResident(graph) as resident:
        raw = family_run(LayersFamily, resident, sources, endpoints=True, facts=facts,
                         edge_raw=edge, batch=batch, index_dtype=index, path=path)
    np.testing.assert_allclose(raw, want.vertex, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(edge, want.edge, rtol=RTOL, atol=ATOL)
    assert facts["index_dtype"] == np.dtype(index).name
    assert facts["kernel"] == f"bellman-ford+{path}" and facts["wide_sources"] == 0
    if batch is not None:
        assert facts["batch"] == batch and facts["batches"] == -(-graph.n // batch)


@gpu
def test_sweeper_keeps_the_lengths_resident(path):
    G = with_lengths(GRAPH_CASES["karate"](), "float", seed=5)
    graph = _graph_of(G)
    sweeper = GpuEngine().open(Problem(graph))
    try:
        first = sweeper.run(np.arange(graph.n))
        assert sweeper.facts["family"] == "layers"
        assert not sweeper.facts["resident_reused"]
        assert any(key[0] == "lengths" for key in sweeper.resident.parts)
        again = sweeper.run(np.arange(graph.n))
        assert sweeper.facts["resident_reused"]
        one = sweeper.run(np.array([3]))
    finally:
        sweeper.close()
    np.testing.assert_allclose(first.vertex, again.vertex, rtol=1e-14, atol=0)
    want = networkx_bc(G, selection="all", normalized=False, endpoints=False, weight="weight")
    np.testing.assert_allclose(first.vertex / 2, want, rtol=RTOL, atol=ATOL)
    single = networkx_bc(G, selection="sources", sources=[3], normalized=False,
                         endpoints=False, weight="weight")
    np.testing.assert_allclose(one.vertex / 2, single, rtol=RTOL, atol=ATOL)


@gpu
def test_auto_takes_the_gpu_for_weighted_bc():
    G = with_lengths(GRAPH_CASES["digraph_gnp"](), "int100", seed=1)
    got = run_bc(G, weight="weight")
    assert got.facts["engine"] == "gpu" and got.facts["family"] == "layers"
    np.testing.assert_allclose(got.values, networkx_bc(G, selection="all", normalized=True,
                                                       endpoints=False, weight="weight"),
                               rtol=RTOL, atol=ATOL)


# ---- the layer-kernel path's host code on NumPy (CPU) -----------------------------------------

class _Host(np.ndarray):
    """A NumPy array with CuPy's ``get()``."""

    def get(self):
        return np.asarray(self)


def _host(x):
    return np.asarray(x).view(_Host)


def _hosted(result):
    """A NumPy result as CuPy would hand it: arrays with ``get()``, tuples of them."""
    if isinstance(result, tuple):
        return tuple(_hosted(part) for part in result)
    return _host(result)


class _NumpyAsCupy:
    """The few CuPy functions _sweep_kernels calls, on NumPy (arrays with ``get()``)."""

    float64, int32, int64, uint8, uint32, uint64 = (np.float64, np.int32, np.int64,
                                                    np.uint8, np.uint32, np.uint64)
    add = np.add  # add.at: the per-slot target weights
    asnumpy = staticmethod(np.asarray)

    def __getattr__(self, name):
        fn = getattr(np, name)
        if not callable(fn):
            return fn
        return lambda *a, **k: _hosted(fn(*a, **k))


def _mask_of(dag, mask_at, words, n, slot):
    """The first mask word of a slot (layers.cu, mask_word)."""
    b, v = divmod(int(slot), int(n))
    return b * int(words) + int(mask_at[v])


def _dag_children(ptr, idx, dag, first, v, base):
    """layers.cu's for_dag_children(_on_warp): the DAG edges (e, ws) of a slot whose masks
    start at dag[first], in CSR order (bit j of word k: edge ptr[v] + 32 k + j)."""
    begin, end = int(ptr[v]), int(ptr[v + 1])
    return [(e, base + idx[e]) for e in range(begin, end)
            if int(dag[first + (e - begin) // 32]) >> ((e - begin) % 32) & 1]


def _emulated_indegree(graph, itype, slots):
    """layers.cu's bcl_indegree in Python (the launcher's arguments)."""
    ptr, idx, length, n = graph.ptr, graph.idx, graph.lengths, graph.n
    dist, remaining, dag = slots.dist, slots.remaining, slots.dag
    mask_at, words = slots.mask_at, slots.words
    for slot in range(int(slots.total)):
        v, base = slot % n, slot - slot % n
        first = _mask_of(dag, mask_at, words, n, slot)
        dag[first:first + int(mask_at[v + 1] - mask_at[v])] = 0
        if np.isinf(dist[slot]):
            continue
        for e in range(ptr[v], ptr[v + 1]):
            if dist[slot] + length[e] == dist[base + idx[e]]:
                remaining[base + idx[e]] += 1
                k, j = divmod(int(e - ptr[v]), 32)
                dag[first + k] |= np.uint32(1 << j)


def _emulated_forward(graph, itype, slots, *, layer, size, queued, next, count, marks):
    """layers.cu's bcl_forward in Python."""
    ptr, idx, n = graph.ptr, graph.idx, graph.n
    sigma, remaining = slots.sigma, slots.remaining
    for slot in layer[:size]:
        v, base = slot % n, slot - slot % n
        first = _mask_of(slots.dag, slots.mask_at, slots.words, n, slot)
        for _, ws in _dag_children(ptr, idx, slots.dag, first, v, base):
            sigma[ws] += sigma[slot]
            remaining[ws] -= 1
            if remaining[ws] == 0 and queued:
                next[int(count[0])] = ws
                count[0] += 1
            elif remaining[ws] == 0:
                marks[ws] = 1


def _emulated_backward(graph, itype, slots, sums, *, layer, size):
    """layers.cu's bcl_backward in Python."""
    ptr, idx, n = graph.ptr, graph.idx, graph.n
    sigma, delta = slots.sigma, slots.delta
    tau = np.ravel(sums.tau)
    for slot in layer[:size]:
        lane, v = divmod(int(slot), int(n))
        if sums.skip[lane]:
            continue
        base, acc = slot - v, 0.0
        first = _mask_of(slots.dag, slots.mask_at, slots.words, n, slot)
        for e, ws in _dag_children(ptr, idx, slots.dag, first, v, base):
            term = sigma[slot] / sigma[ws] * (tau[ws if sums.tau_per_slot else idx[e]]
                                              + delta[ws])
            acc += term
            if sums.edge is not None:
                sums.edge[e] += sums.lane_weight[lane] * term
        delta[slot] = acc


def _emulated_marks(name):
    """marks.cu's two kernels in Python (the kernels' own arguments: spmv._layers.list_marks
    is the host code under test)."""
    def count_marks(grid, block, args):
        marks, words, counts = args
        for b in range(grid[0]):
            counts[b] = np.count_nonzero(marks[16 * block[0] * b:16 * block[0] * (b + 1)])

    def list_marks(grid, block, args):
        marks, words, first, keys = args
        for b in range(grid[0]):
            low = 16 * block[0] * b
            found = low + np.flatnonzero(marks[low:low + 16 * block[0]])
            keys[int(first[b]):int(first[b]) + found.size] = found
            marks[found] = 0

    return {"bcl_count_marks": count_marks, "bcl_list_marks": list_marks}[name.split("<")[0]]


def _emulated_chain_terms(layout, counts, rows, uploaded, tau, n, classes=None):
    """chains.cu's bcc_slot_terms in Python (spmv._chains.chain_terms' arguments)."""
    assert layout == "slots"
    dist, sigma, scale = np.ravel(counts["dist"]), np.ravel(counts["sigma"]), counts["scale"]
    prefix, chain_of, r = uploaded["prefix"], uploaded["chain_of"], uploaded["r"]
    class_at = uploaded["class_at"]
    span, base, class_first = classes
    tau = tau.reshape(-1)  # a view
    size = int(rows.hist_off[-1])
    mass, tie_mass = np.zeros(size), np.zeros(size)
    for p in range(rows.chains.size):
        L = int(rows.length[p])
        k, width, at = L - 1, 2 * L + 1, int(rows.prefix_off[p])
        positions = class_at[class_first[p]:class_first[p] + L + 1]
        for v in range(int(n)):
            if v in (rows.first[p], rows.last[p]) or chain_of[v] == rows.chains[p]:
                continue
            ea, eb = rows.lane_a[p] * n + v, rows.lane_b[p] * n + v
            if np.isinf(dist[ea]):
                continue
            query = base[p] + span[p] - int(np.rint((dist[ea] - dist[eb]) * scale))
            j = int(np.searchsorted(positions, query, side="right")) - 1
            h = 2 * j + int(positions[j] != query)
            tie = h % 2 == 0 and 2 <= h <= 2 * k
            star = min(h // 2, k)
            share = sigma[ea] / (sigma[ea] + sigma[eb]) if tie else 0.0
            r_star = prefix[at + star] - prefix[at + star - 1] if tie else 0.0
            m = max(0, min((h + 1) // 2 - 1, k))
            tau[ea] += r[v] * (prefix[at + m] + r_star * share)
            tau[eb] += r[v] * (prefix[at + k] - prefix[at + star] + r_star * (1.0 - share))
            assert 0 <= h < width
            mass[rows.hist_off[p] + h] += r[v]
            tie_mass[rows.hist_off[p] + h] += r[v] * share
    return _host(mass), _host(tie_mass)


def _emulated_block_sweep(kernel, graph, sources, dist_all, delta_all, sums, shared):
    """block_sweep.cu's bcl_block_sweep in Python."""
    ptr, idx, length, n = graph.ptr, graph.idx, graph.lengths, int(graph.n)
    tau, lane_weight, skip, edge = sums.tau, sums.lane_weight, sums.skip, sums.edge
    has_edge = edge is not None
    for b in range(int(sources.size)):
        source, dist = int(sources[b]), dist_all[b * n:(b + 1) * n]
        tau_row = np.ravel(tau)[b * n:(b + 1) * n] if sums.tau_per_slot else tau

        def children(v):
            return [(e, int(idx[e])) for e in range(ptr[v], ptr[v + 1])
                    if dist[v] + length[e] == dist[idx[e]]]

        parents = np.zeros(n, dtype=np.int64)
        for v in np.flatnonzero(np.isfinite(dist)):
            for _, w in children(v):
                parents[w] += 1
        sigma, layer_of, layers = np.zeros(n), np.zeros(n, dtype=np.int64), []
        sigma[source], current = 1.0, [source]
        while current:  # Kahn's layers
            layers.append(current)
            upcoming = []
            for v in current:
                for _, w in children(v):
                    sigma[w] += sigma[v]
                    parents[w] -= 1
                    if parents[w] == 0:
                        layer_of[w] = len(layers)
                        upcoming.append(w)
            current = upcoming
        if np.isinf(sigma[np.concatenate(layers)]).any():
            delta_all[b * n:(b + 1) * n] = 0.0
            skip[b] = 1
            continue
        delta = np.zeros(n)
        for d in range(len(layers) - 1, -1 if has_edge else 0, -1):
            for v in layers[d]:
                acc = 0.0
                for e, w in children(v):
                    term = sigma[v] / sigma[w] * (tau_row[w] + delta[w])
                    acc += term
                    if has_edge:
                        edge[e] += lane_weight[b] * term
                delta[v] = acc
        delta[source] = 0.0
        delta_all[b * n:(b + 1) * n] = delta


def _emulate_layer_kernels(monkeypatch):
    """Run the layers family's host code with NumPy for CuPy and Python for its kernels:
    the launchers of spmv._layers and spmv._chains replaced by the emulations above (marks.cu's
    kernels by their own, under spmv._layers.list_marks); every block fits."""
    import sys

    import spmv._chains as chains
    import spmv._module as module

    monkeypatch.setitem(sys.modules, "cupy", _NumpyAsCupy())
    monkeypatch.setattr(module, "get_kernel", lambda file, expr: _emulated_marks(expr))
    monkeypatch.setattr(_layers, "per_block_kernel", lambda name, itype, shared: name)
    monkeypatch.setattr(_layers, "indegree", _emulated_indegree)
    monkeypatch.setattr(_layers, "forward", _emulated_forward)
    monkeypatch.setattr(_layers, "backward", _emulated_backward)
    monkeypatch.setattr(_layers, "block_sweep", _emulated_block_sweep)
    monkeypatch.setattr(chains, "chain_terms", _emulated_chain_terms)


def test_dag_mask_layout():
    """A word per vertex of at most 32 out-edges (none too), one per 32 past that."""
    degrees = np.array([0, 1, 32, 33, 64, 65, 100])
    at, words = _gpu_sweep.dag_mask_layout(np.concatenate([[0], np.cumsum(degrees)]))
    assert np.diff(at).tolist() == [1, 1, 1, 2, 2, 3, 4] and words == 14
    assert words <= degrees.size + degrees.sum() / 32


@pytest.mark.parametrize("queue_share", [0, _gpu_distances.QUEUE_BELOW_SHARE, "block"],
                         ids=["queued", "marked", "block"])
@pytest.mark.parametrize("endpoints", [False, True])
@pytest.mark.parametrize("name", ["karate", "digraph_gnp", "two_components_isolated",
                                  "grid_6x7", "les_miserables"])
def test_layer_kernel_host_code_equals_the_cpu_engine(monkeypatch, name, endpoints,
                                                      queue_share):
    """sweep_dag (offsets of the layers, the skip of out-of-range lanes, the endpoint
    terms, ω per lane, edge sums) with NumPy for CuPy and Python for the kernels, against the
    CPU engine's raw vertex and edge sums with τ and ω; each forward layer's next layer
    queued by the kernel (share 0), or marked and listed (the default share, on these small
    graphs); or (``block``) the whole sweep a source per block (bcl_block_sweep's scheme)."""
    if queue_share != "block":
        monkeypatch.setattr(_gpu_distances, "QUEUE_BELOW_SHARE", queue_share)

    G = with_lengths(GRAPH_CASES[name](), "int3", seed=12)
    graph = _graph_of(G)
    rng = np.random.default_rng(2)
    tau = rng.integers(0, 3, graph.n).astype(np.float64)
    omega = rng.uniform(0.5, 2.0, graph.n)
    sources = np.arange(graph.n, dtype=np.int64)
    want, _ = run_schedule(Problem(graph, edges=True, endpoints=endpoints, target_weight=tau,
                                   source_weight=omega), engine_named("graphblas"), [sources])
    _emulate_layer_kernels(monkeypatch)
    A = graph.pattern

    def batch_distances(chunk):
        return _host(_emulated_rounds(graph, chunk))

    bc, edge = _host(np.zeros(graph.n)), _host(np.zeros(graph.nnz))
    with turbobc.tuning(gpu_block_sweep=queue_share == "block"):
        wide = _gpu_sweep.sweep_dag(_host(A.indptr), _host(A.indices), _host(graph.lengths),
                                    graph.n, sources, bc, edge, endpoints,
                                    (_host(tau), _host(omega)), 7, batch_distances, None)
    assert wide.size == 0
    np.testing.assert_allclose(bc, want.vertex, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(edge, want.edge, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("capacity", [10, 64])
@pytest.mark.parametrize("kind", ["int3", "int100", "quarters"])
def test_layer_kernel_host_code_folds_chains(monkeypatch, kind, capacity):
    """sweep_dag with a chain-folding plan (per-slot τ from the distances and
    bcc_slot_terms's class lookup, helper slots, the plan's credits) with NumPy for CuPy and
    Python for the kernels (and quarters: positions in units of 1/4): the folded sweep's
    raw sums plus the credits equal networkx on a subdivided graph with integer lengths,
    in small batches (most chains' other end a helper) and in one."""
    from test_chains import EXACT_LENGTHS, GRAPHS

    from turbobc._chains import ChainFolding, find_chains

    G = EXACT_LENGTHS[kind](GRAPHS["subdivided_gnm"](), 5)
    graph = _graph_of(G)
    plan = ChainFolding(graph, np.ones(graph.n), find_chains(graph))
    want = nx.betweenness_centrality(G, weight="weight", normalized=False)
    _emulate_layer_kernels(monkeypatch)
    A = graph.pattern
    bc = _host(np.zeros(graph.n))
    batches = plan.batches(capacity)
    wide = _gpu_sweep.sweep_dag(
        _host(A.indptr), _host(A.indices), _host(graph.lengths), graph.n, plan.sources, bc,
        None, False, (None, None), capacity,
        lambda chunk: _host(_emulated_rounds(graph, chunk)), None, plan=plan, batches=batches)
    assert wide.size == 0 and plan.folded > 0 and (len(batches) > 1) == (capacity < 64)
    np.testing.assert_allclose((bc + plan.credit) / 2, [want[v] for v in G], rtol=1e-12,
                               atol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("block", [False, True], ids=["layers", "block"])
def test_layer_kernel_host_code_sends_overflowing_lanes_to_the_wide_sweep(monkeypatch, block):
    """σ = 2^1030 overflows plain float64 counts: the lane adds nothing and its source is
    returned for the wide sweep; the other lane of the batch is still summed (a layer per
    launch, or a source per block)."""
    A = _diamond_chain_beside_path(1030)
    graph = _weighted_graph(A, False)
    sources = np.array([0, 1545], dtype=np.int64)  # 1545: the joint in the middle (2^515)
    want, _ = run_schedule(Problem(graph, edges=True, endpoints=True),
                           engine_named("graphblas"), [sources[1:]])
    _emulate_layer_kernels(monkeypatch)
    bc, edge = _host(np.zeros(graph.n)), _host(np.zeros(graph.nnz))
    with np.errstate(over="ignore"), turbobc.tuning(gpu_block_sweep=block):
        # σ = +inf in the emulated forward kernel
        wide = _gpu_sweep.sweep_dag(
            _host(graph.pattern.indptr), _host(graph.pattern.indices), _host(graph.lengths),
            graph.n, sources, bc, edge, True, (None, None), 2,
            lambda chunk: _host(_emulated_rounds(graph, chunk)), None)
    assert wide.tolist() == [0]
    np.testing.assert_allclose(bc, want.vertex, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(edge, want.edge, rtol=1e-12, atol=1e-12)


def test_hops_batch_plans_the_layer_kernels_only():
    """An unweighted run of the layers family plans BYTES_PER_HOP_SLOT per slot and no
    per-edge expansion (its wide lanes run in batches of the full model)."""
    n, m = 1000, 8000
    per = _gpu_memory.BYTES_PER_HOP_SLOT * n + 4 * (m // 32)  # hop_source_bytes
    assert _gpu_memory.hop_source_bytes(n, m) == per
    fixed = _gpu_memory.layers_format_bytes(n, m, 4) + 8 * n
    free = int((fixed + 10 * per) / 0.8) + 1
    assert _gpu_memory.choose_layers_batch(n, m, 100, free, hops=True) == 10
    assert _gpu_memory.choose_layers_batch(n, m, 100, free) < 10  # the full model holds fewer
    assert (_gpu_memory.layers_bytes(n, m, batch=10, index_bytes=4, hops=True)
            == fixed + 10 * per)
    assert _gpu_memory.choose_layers_batch(10**7, 10, 100, 2**60, hops=True) == 100  # no wide cap


def test_gpu_family_knob():
    """The one choice of a family (engine.choose_family) follows Tuning.gpu_family for
    unweighted runs of many sources, and says why."""
    from turbobc.engines.gpu.engine import choose_family

    graph = _graph_of(nx.path_graph(5))
    problem = Problem(dataclasses.replace(graph, lengths=None))
    # "auto": the family predicted cheaper (a path of 5: one launch of the frontiers)
    assert choose_family(problem, 10)[0].name == "frontiers"
    assert choose_family(problem, 1)[0].name == "single"
    with turbobc.tuning(gpu_family="layers"):
        family, reason = choose_family(problem, 10)
        assert family.name == "layers" and family.hops and "gpu_family" in reason
        assert choose_family(problem, 1)[0].name == "single"
    with turbobc.tuning(gpu_family="lanes"):
        assert choose_family(problem, 10)[0].name == "lanes"
    assert choose_family(Problem(graph), 1)[0].name == "layers"  # weighted: always layers
    with turbobc.tuning(gpu_family="warp"), pytest.raises(
            ValueError, match=r"Tuning.gpu_family must be one of "
                              r"\('auto', 'lanes', 'layers', 'frontiers'\); "
                              r"got 'warp'"):
        choose_family(problem, 10)


@gpu
def test_layers_family_runs_on_hops_and_says_so():
    """The layers family on an unweighted deep graph: the CPU reference's values (networkx's,
    by the grid of tests/test_vs_networkx.py), family "layers" and the reason in the facts."""
    A = nx.to_scipy_sparse_array(nx.grid_2d_graph(6, 40), format="csr")
    sources = list(range(0, 240, 2))
    with turbobc.tuning(gpu_family="layers"):
        result = run_bc(A, engine="gpu", sources=sources, normalized=False)
    assert result.facts["family"] == "layers" and result.facts["kernel"] == "bfs+kernels"
    assert "gpu_family" in result.facts["family_reason"]
    want = turbobc.bc(A, engine="graphblas", sources=sources, normalized=False)
    np.testing.assert_allclose(result.values, want, rtol=1e-12, atol=1e-12)


# Vertices of more than 32 out-edges: their slots are worked by a warp, a lane per edge
# (layers.cuh, split_by_degree), the others by a thread, in the same launch.
HUBS = {
    "wheel_80": lambda: nx.wheel_graph(81),
    "barabasi_albert_hubs": lambda: nx.barabasi_albert_graph(400, 5, seed=3),
    "directed_hubs": lambda: _directed_hubs(),
    "hubs_and_paths": lambda: nx.disjoint_union_all([nx.star_graph(70), nx.path_graph(12),
                                                      nx.complete_graph(40)]),
}


def _directed_hubs() -> nx.DiGraph:
    """A sparse random digraph with a hub of 60 out-edges and 50 in-edges, and one of 45
    out-edges into a chain."""
    G = nx.gnp_random_graph(150, 0.03, seed=7, directed=True)
    rng = np.random.default_rng(8)
    G.add_edges_from((0, int(v)) for v in rng.choice(np.arange(1, 150), 60, replace=False))
    G.add_edges_from((int(v), 0) for v in rng.choice(np.arange(1, 150), 50, replace=False))
    G.add_edges_from((1, v) for v in range(150, 195))
    G.add_edges_from((v, v + 1) for v in range(150, 194))
    return G


@gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(HUBS))
def test_hub_slots_worked_by_warps(name, kind, path):
    G = with_lengths(HUBS[name](), kind, seed=len(name) + 3)
    assert max(d for _, d in (G.out_degree() if G.is_directed() else G.degree())) > 32
    for endpoints in (False, True):
        want = networkx_bc(G, selection="all", normalized=False, endpoints=endpoints,
                           weight="weight")
        got = turbobc.bc(G, weight="weight", normalized=False, endpoints=endpoints, **GPU)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    E = turbobc.edge_bc(G, weight="weight", normalized=False, **GPU)
    _edge_check(E, G, nx.edge_betweenness_centrality(G, weight="weight", normalized=False))


@gpu
@pytest.mark.parametrize("name", sorted(HUBS))
def test_hub_slots_in_the_layers_family_on_hops(name):
    """The same kernels with every length 1 (Tuning.gpu_family="layers"), vertex and edge BC."""
    G = HUBS[name]()
    with turbobc.tuning(gpu_family="layers"):
        got = run_bc(G, normalized=False, **GPU)
        E = turbobc.edge_bc(G, normalized=False, **GPU)
    assert got.facts["family"] == "layers"
    want = networkx_bc(G, selection="all", normalized=False, endpoints=False)
    np.testing.assert_allclose(got.values, want, rtol=RTOL, atol=ATOL)
    _edge_check(E, G, nx.edge_betweenness_centrality(G, normalized=False))


@gpu
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("n", [3000, 6049, 9000])
@pytest.mark.parametrize("block_width", [None, 0.5, 4.0])
def test_block_distances_equal_the_rounds(block_width, n, directed, kind):
    """A source per block in shared memory and the rounds over the batch reach the same fixed
    point, bit for bit, on graphs with hubs (lengths with many ties, or floats), and the block
    kernel's run says so (0 rounds), in one phase or in near-far phases of a narrow or a wide
    width. n = 6049: 49,152 bytes of dynamic shared memory, the default limit, plus the
    kernel's static bytes (opted in); n = 9000: past 64 KiB (True forces the blocks)."""
    import cupy

    rng = np.random.default_rng(5)
    G = nx.gnm_random_graph(n, 8 * n, seed=4, directed=directed)
    G.add_edges_from((0, int(v)) for v in rng.choice(np.arange(1, n), 400, replace=False))
    graph = _graph_of(with_lengths(G, kind, seed=6))
    resident = DeviceResident(graph)
    ptr, idx = resident.fetch("csr_ptr", np.int32), resident.fetch("csr_idx", np.int32)
    lengths = resident.fetch("lengths", np.int32)
    sources = np.array([0, 1, 17, n - 1] + list(range(100, 160)), dtype=np.int64)
    got = {}
    for per_block in (True, False):
        rounds = []
        with turbobc.tuning(gpu_block_distances=per_block,
                            gpu_block_near_far_width=block_width):
            got[per_block] = _gpu_distances.distances(ptr, idx, lengths, graph.n, sources,
                                                     rounds).get()
        assert (rounds == [0]) == per_block
    np.testing.assert_array_equal(got[True].view(np.uint64), got[False].view(np.uint64))
    np.testing.assert_array_equal(got[True][2], _dijkstra(with_lengths(G, kind, seed=6), 17))
    resident.close()
    cupy.get_default_memory_pool().free_all_blocks()


def test_block_distances_knob_is_checked():
    with turbobc.tuning(gpu_block_distances="sometimes"), pytest.raises(
            ValueError, match="Tuning.gpu_block_distances must be True, False or 'auto'"):
        _gpu_distances._block_distances(10, "int")

