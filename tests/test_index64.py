"""The 64-bit index paths (docs/architecture.md, "64-bit indices") on small graphs, forced
with ``Tuning.index_bits=64``: every engine of the grid (the cpu engine's compiled walks and
lanes on int64 arrays, the graphblas conversion, every GPU family with the ``long long``
kernels) gives the 32-bit run's numbers and networkx's; so do validation, the folding of
trees and chains, the readers, the networkx backend and Dask. One device test builds a graph
just past 2^31 stored edges and checks a few sources against the cpu engine."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
from conftest import KERNEL_FREE_CONFIGS
from graph_cases import GRAPH_CASES, adjacency, with_hanging_trees, with_lengths
from gpu_helpers import band_arrays

# with the slow tests (.ci/run runs them): the cpu engine's compiled code for int64 indices is a
# second compile of every function (about 40 s on 2 cores the first time), which the first
# check would pay in every process
pytestmark = pytest.mark.slow
from oracles import as_array
from turbobc._api import run_bc, run_edge_bc
from turbobc._graph import INT32_LIMIT, Graph, index_dtype_for, single_index_types
from turbobc._validation import validate

CASES = ["karate", "grid_deep_2x40", "two_components_isolated", "digraph_gnp",
         "digraph_sparse_unreachable", "barbell"]


def _case(name):
    """A case's graph and its adjacency in int32 arrays (networkx's conversion gives int64:
    narrowed, so that the 32-bit run below is one)."""
    G = GRAPH_CASES[name]()
    return G, _narrow(adjacency(G))


def _narrow(A):
    return sp.csr_array((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)),
                        shape=A.shape)


def test_index_dtype_for_reads_the_knob():
    assert index_dtype_for(10, 20) == np.int32
    assert index_dtype_for(10, INT32_LIMIT) == np.int64
    with turbobc.tuning(index_bits=64):
        assert index_dtype_for(10, 20) == np.int64
        assert index_dtype_for(10, 20, bits="auto") == np.int32
    assert index_dtype_for(10, 20, bits=64) == np.int64


@pytest.mark.parametrize("bits", [32, "64", True, 128, "offsets"])
def test_index_bits_refuses_other_values(bits):
    A = adjacency(nx.path_graph(4))
    with turbobc.tuning(index_bits=bits), pytest.raises(ValueError, match=(
            rf"index_bits must be 'auto', 64 \(int64 indices on any graph\) or 'offsets64' "
            rf"\(int64 row pointers beside int32 indices .*; got {bits!r}")):
        turbobc.bc(A, engine="cpu")


def test_single_index_types_split_only_the_pointers():
    """(vertex, position) of the single-source GPU family: int32 indices while n allows,
    int64 pointers past the limit of stored edges or under "offsets64"; every other path's
    one type is int64 under "offsets64", as past the limit."""
    i32, i64 = np.dtype(np.int32), np.dtype(np.int64)
    assert single_index_types(10, 20) == (i32, i32)
    assert single_index_types(10, INT32_LIMIT) == (i32, i64)
    assert single_index_types(INT32_LIMIT, INT32_LIMIT) == (i64, i64)
    assert single_index_types(10, 20, bits=64) == (i64, i64)
    assert single_index_types(10, 20, bits="offsets64") == (i32, i64)
    with turbobc.tuning(index_bits="offsets64"):
        assert single_index_types(10, 20) == (i32, i64)
        assert index_dtype_for(10, 20) == i64


def test_single_memory_model_of_the_split():
    """4 bytes a stored edge with int64 pointers: the model is 4m + 52n, the itemized
    bytes b (n + 1) ... as single.py's docstring says, and the message names both types."""
    from turbobc.engines.gpu.memory import index_words, single_bytes, single_model

    n, m = 1000, 50_000
    assert single_model(n, m, np.int32, np.int64) == 4 * m + 52 * n
    assert single_model(n, m, np.int32) == 4 * m + 48 * n
    split = single_bytes(n, m, "vecsc", np.int32, 1, np.int64)
    assert split - single_bytes(n, m, "vecsc", np.int32, 1) == 4 * (n + 1)
    assert split < single_bytes(n, m, "vecsc", np.int64, 1)
    assert split <= single_model(n, m, np.int32, np.int64)
    assert index_words(np.int32, np.int64) == ("int32 indices with int64 pointers, 4 bytes "
                                               "per stored edge")


SPLIT_CASES = ["karate", "grid_deep_2x40", "two_components_isolated", "digraph_gnp",
               "digraph_sparse_unreachable", "star_hub"]


def _split_case(name):
    if name == "star_hub":  # a hub of 3,000 neighbours: veCSC cuts its column into units
        G = nx.star_graph(3000)
        G.add_edges_from((i, i + 1) for i in range(1, 3000, 7))
        return G, _narrow(adjacency(G))
    return _case(name)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["auto", "sccsc", "vecsc", "sccooc"])
@pytest.mark.parametrize("name", SPLIT_CASES)
def test_single_source_with_int64_pointers_equals_int32(name, kernel):
    """One source a run (the single family), under "offsets64": int32 indices with int64
    column pointers (scCOOC, which keeps no pointers, runs in int64), the 32-bit run's sums."""
    G, A = _split_case(name)
    for source in (0, G.number_of_nodes() // 2, G.number_of_nodes() - 1):
        options = dict(sources=[source], normalized=False, directed=G.is_directed(),
                       engine="gpu", kernel=kernel)
        narrow = run_bc(A, **options)
        with turbobc.tuning(index_bits="offsets64"):
            split = run_bc(A, **options)
        assert narrow.facts["family"] == split.facts["family"] == "single", split.facts
        assert (narrow.facts["index_dtype"], narrow.facts["position_dtype"]) == ("int32",
                                                                                 "int32")
        expected = ("int64", "int64") if split.facts["kernel"] == "sccooc" else ("int32",
                                                                                 "int64")
        assert (split.facts["index_dtype"], split.facts["position_dtype"]) == expected
        np.testing.assert_allclose(split.values, narrow.values, rtol=1e-12, atol=1e-15)


@pytest.mark.gpu
def test_lanes_falling_back_to_one_source_take_the_split():
    """Where not even 32 lanes fit (Tuning.max_batch below 32 is refused, so a memory_limit
    is what forces it), the lanes family's sources run one at a time in the single family's
    types: int32 indices with int64 pointers under "offsets64"; "auto" first took the
    frontiers (predicted cheaper), whose rows did not fit either."""
    from turbobc.engines.gpu.memory import single_bytes

    G, A = _split_case("karate")
    n, m = A.shape[0], A.nnz
    # (+ τ and ω, 16 bytes a vertex: karate's leaf is folded, so the run has source weights)
    limit = single_bytes(n, m, "sccsc", np.int32, n, np.int64) + 16 * n + 4096
    narrow = run_bc(A, engine="gpu", normalized=False)
    with turbobc.tuning(index_bits="offsets64"):
        split = run_bc(A, engine="gpu", normalized=False, memory_limit=limit)
    assert split.facts["family"] == "single", split.facts
    # "auto" predicted the frontiers cheaper; not one block's rows fit the limit: the lanes
    assert "not one block's rows fit" in split.facts["family_reason"], split.facts
    # (kernel "auto" may take scCOOC on so small a graph: it keeps no pointers, int64 both)
    expected = ("int64", "int64") if split.facts["kernel"] == "sccooc" else ("int32", "int64")
    assert (split.facts["index_dtype"], split.facts["position_dtype"]) == expected
    np.testing.assert_allclose(split.values, narrow.values, rtol=1e-12, atol=1e-15)
    with turbobc.tuning(index_bits="offsets64"):
        csc = run_bc(A, engine="gpu", normalized=False, memory_limit=limit, kernel="vecsc")
    assert (csc.facts["family"], csc.facts["kernel"]) == ("single", "vecsc"), csc.facts
    assert (csc.facts["index_dtype"], csc.facts["position_dtype"]) == ("int32", "int64")
    np.testing.assert_allclose(csc.values, narrow.values, rtol=1e-12, atol=1e-15)


def test_validation_widens_the_pattern_and_keeps_its_entries():
    _, A = _case("karate")
    options = dict(sources=None, k=None, seed=None, normalized=True, endpoints=False,
                   directed=None, engine="cpu", kernel="auto", progress=False)
    narrow = validate(A, **options).graph.pattern
    with turbobc.tuning(index_bits=64):
        wide = validate(A, **options).graph
    assert narrow.indices.dtype == np.int32 and narrow.indptr.dtype == np.int32
    assert wide.pattern.indices.dtype == np.int64 and wide.pattern.indptr.dtype == np.int64
    assert wide.csc.indices.dtype == np.int64
    np.testing.assert_array_equal(wide.pattern.indices, narrow.indices)
    np.testing.assert_array_equal(wide.pattern.indptr, narrow.indptr)


@pytest.mark.parametrize("name", CASES)
def test_vertex_bc_in_int64_equals_int32_and_networkx(name, engine_config):
    engine, kernel = engine_config
    G, A = _case(name)
    narrow = run_bc(A, directed=G.is_directed(), engine=engine, kernel=kernel)
    with turbobc.tuning(index_bits=64):
        wide = run_bc(A, directed=G.is_directed(), engine=engine, kernel=kernel)
    assert wide.facts["index_dtype"] == "int64", wide.facts
    assert narrow.facts["index_dtype"] == "int32", narrow.facts
    np.testing.assert_allclose(wide.values, narrow.values, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(wide.values, as_array(nx.betweenness_centrality(G), G),
                               rtol=1e-9, atol=1e-12)


VARIANTS = {
    "endpoints": dict(endpoints=True),
    "sampled": dict(k=9, seed=4),
    "targets": dict(targets=[1, 2, 8, 12], sources=[0, 3, 5, 7, 11]),
    "unnormalized": dict(normalized=False),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variants_in_int64_equal_int32(variant, engine_config):
    engine, kernel = engine_config
    _, A = _case("barabasi_albert")
    options = VARIANTS[variant]
    narrow = turbobc.bc(A, engine=engine, kernel=kernel, **options)
    with turbobc.tuning(index_bits=64):
        wide = turbobc.bc(A, engine=engine, kernel=kernel, **options)
    np.testing.assert_allclose(wide, narrow, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["karate", "digraph_gnp"])
@pytest.mark.parametrize("engine_config", KERNEL_FREE_CONFIGS, indirect=True)
def test_edge_bc_in_int64_equals_int32_and_networkx(name, engine_config):
    engine, _ = engine_config  # (edge BC takes no kernel name)
    G, A = _case(name)
    narrow = run_edge_bc(A, directed=G.is_directed(), engine=engine)
    with turbobc.tuning(index_bits=64):
        wide = run_edge_bc(A, directed=G.is_directed(), engine=engine)
    assert wide.facts["index_dtype"] == "int64", wide.facts
    np.testing.assert_allclose(wide.values.toarray(), narrow.values.toarray(), rtol=1e-12,
                               atol=1e-15)
    theirs = nx.edge_betweenness_centrality(G)
    nodes = list(G)
    for (u, v), value in theirs.items():
        np.testing.assert_allclose(wide.values[nodes.index(u), nodes.index(v)], value,
                                   rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["karate", "digraph_gnp"])
@pytest.mark.parametrize("engine_config", KERNEL_FREE_CONFIGS, indirect=True)
def test_weighted_bc_in_int64_equals_int32_and_networkx(name, engine_config):
    engine, _ = engine_config  # (weighted BC takes no kernel name)
    G = with_lengths(GRAPH_CASES[name](), "int100", seed=3)
    narrow = turbobc.bc(G, weight="weight", engine=engine)
    with turbobc.tuning(index_bits=64):
        wide = run_bc(G, weight="weight", engine=engine)
    assert wide.facts["index_dtype"] == "int64", wide.facts
    np.testing.assert_allclose(wide.values, narrow, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(wide.values,
                               as_array(nx.betweenness_centrality(G, weight="weight"), G),
                               rtol=1e-9, atol=1e-12)


def test_folding_of_trees_and_chains_in_int64(cpu_engine):
    """Exact BC through the folded core (trees hanging off, chains of degree-2 vertices):
    int64 arrays from validation to the core and its sweeps, networkx's numbers."""
    from turbobc._reduce import fold_trees

    core = nx.cycle_graph(30)
    core.add_edges_from([(0, 15), (5, 22), (7, 8)])
    G = with_hanging_trees(core, 25, seed=2)
    A = _narrow(adjacency(G))
    expected = as_array(nx.betweenness_centrality(G), G)
    knobs = dict(fold_chains=True, chain_min_share=0.0, fold_min_share=0.0)
    with turbobc.tuning(**knobs):
        narrow = run_bc(A, engine=cpu_engine)
    with turbobc.tuning(index_bits=64, **knobs):
        wide = run_bc(A, engine=cpu_engine)
        graph = validate(A, sources=None, k=None, seed=None, normalized=True, endpoints=False,
                         directed=None, engine=cpu_engine, kernel="auto",
                         progress=False).graph
        folded = fold_trees(graph)
    assert wide.facts["folded"] > 0 and wide.facts.get("chain_folded", 0) > 0, wide.facts
    assert wide.facts["index_dtype"] == "int64"
    assert folded.core.pattern.indices.dtype == np.int64
    assert folded.core.pattern.indptr.dtype == np.int64
    np.testing.assert_allclose(wide.values, narrow.values, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(wide.values, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["power.mtx", "ca-GrQc.txt.gz", "delaunay_n10.mtx"])
def test_readers_give_int64_arrays_under_the_knob(name):
    from data_files import path

    narrow, labels = turbobc.read_graph(path(name))
    with turbobc.tuning(index_bits=64):
        wide, wide_labels = turbobc.read_graph(path(name))
    assert narrow.indices.dtype == np.int32
    assert wide.indices.dtype == np.int64 and wide.indptr.dtype == np.int64
    assert wide.has_canonical_format
    np.testing.assert_array_equal(wide_labels, labels)
    assert (wide != narrow).nnz == 0


def test_networkx_backend_in_int64():
    G = GRAPH_CASES["les_miserables"]()
    with turbobc.tuning(index_bits=64):
        ours = nx.betweenness_centrality(G, backend="turbobc")
    theirs = nx.betweenness_centrality(G)
    for node, value in theirs.items():
        assert ours[node] == pytest.approx(value, rel=1e-9, abs=1e-12)


@pytest.mark.slow
def test_dask_workers_run_under_the_callers_index_bits():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is in the test "
                                                            "extra")
    G, A = _case("barbell")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        with turbobc.tuning(index_bits=64, dask_chunk_sources=5):
            wide = run_bc(A, engine="cpu", client=client, sources=list(range(12)))
        with turbobc.tuning(dask_chunk_sources=5):
            narrow = run_bc(A, engine="cpu", client=client, sources=list(range(12)))
    assert wide.facts["index_dtype"] == "int64" and narrow.facts["index_dtype"] == "int32"
    np.testing.assert_allclose(wide.values, narrow.values, rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- past 2^31 stored edges

def test_band_arrays_are_the_band_matrix():
    n, width = 70, 9
    indptr, indices = band_arrays(n, width, chunk_rows=8)
    A = sp.csr_array((np.ones(indices.size), indices, indptr), shape=(n, n))
    offsets = [k for k in range(-width, width + 1) if k]
    B = sp.diags_array([np.ones(n - abs(k)) for k in offsets], offsets=offsets, format="csr")
    assert (A != B).nnz == 0 and A.nnz == 2 * (width * n - width * (width + 1) // 2)
    assert indices.dtype == np.int64 and indptr.dtype == np.int64


BAND_N, BAND_WIDTH = 2**17 + 2**13, 2**13
"""Just past 2^31 stored edges: 2 (w n - w (w + 1) / 2) = 2,214,584,320."""


@pytest.mark.gpu
@pytest.mark.slow
def test_past_two_to_the_31_stored_edges_on_the_device():
    """A band graph of 2,214,584,320 stored edges (int64 indices by size, not by the knob):
    the GPU engine's raw sums of three sources (the lanes family, int64) and of one source
    (the single family: int32 indices, int64 pointers) equal the cpu engine's on a sample of
    vertices. Skips, saying why, where the device or the host has too little memory."""
    import cupy

    from turbobc._memory import available_memory, format_bytes
    from turbobc.engines.gpu.memory import lanes_bytes

    nnz = 2 * (BAND_WIDTH * BAND_N - BAND_WIDTH * (BAND_WIDTH + 1) // 2)
    assert nnz > 2**31 and index_dtype_for(BAND_N, nnz, bits="auto") == np.int64
    device_need = lanes_bytes(BAND_N, nnz, kernel="vecsc", index_bytes=8, level_bytes=2,
                              batch=32, depth_cap=2048, directed=False)
    free = cupy.cuda.runtime.memGetInfo()[0]
    if device_need > 0.9 * free:
        pytest.skip(f"the device has {format_bytes(free)} free; a batch of 32 sources on "
                    f"{nnz:,} stored edges in int64 needs about {format_bytes(device_need)}")
    host_need = 3 * 8 * nnz  # the int64 indices, the pattern's float64 ones, the upload
    if host_need > available_memory():
        pytest.skip(f"the host has {format_bytes(available_memory())} available; the graph "
                    f"needs about {format_bytes(host_need)}")
    indptr, indices = band_arrays(BAND_N, BAND_WIDTH, xp=cupy)
    indptr, indices = indptr.get(), indices.get()
    cupy.get_default_memory_pool().free_all_blocks()
    ones = np.broadcast_to(np.float64(1.0), indices.shape)  # the user's values: no copy
    A = sp.csr_array((ones, indices, indptr), shape=(BAND_N, BAND_N))
    sources = [0, BAND_N // 2 + 17, BAND_N - 5]
    gpu = run_bc(A, sources=sources, normalized=False, engine="gpu")
    assert gpu.facts["index_dtype"] == "int64", gpu.facts
    cpu = run_bc(A, sources=sources, normalized=False, engine="cpu")
    assert cpu.facts["index_dtype"] == "int64", cpu.facts
    sample = np.random.default_rng(0).choice(BAND_N, 512, replace=False)
    np.testing.assert_allclose(gpu.values[sample], cpu.values[sample], rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(gpu.values.sum(), cpu.values.sum(), rtol=1e-9)
    assert cpu.values.sum() > 0
    # one source: the single family, int32 indices beside int64 pointers (n is small)
    one = run_bc(A, sources=sources[1:2], normalized=False, engine="gpu")
    assert one.facts["family"] == "single", one.facts
    assert (one.facts["index_dtype"], one.facts["position_dtype"]) == ("int32", "int64")
    cpu_one = run_bc(A, sources=sources[1:2], normalized=False, engine="cpu")
    np.testing.assert_allclose(one.values[sample], cpu_one.values[sample], rtol=1e-9,
                               atol=1e-6)
    np.testing.assert_allclose(one.values.sum(), cpu_one.values.sum(), rtol=1e-9)


# ---------------------------------------------------------------- past SciPy's csgraph

@pytest.mark.parametrize("path", ["scipy", "compiled"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_traversals_equal_scipys(seed, path, monkeypatch):
    """Each search against networkx, by SciPy (below SCIPY_BELOW_NNZ) and by the compiled
    loops (the limit lowered to 0)."""
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    import turbobc._traverse
    from turbobc._traverse import bfs_depths, bfs_order_levels, component_depths, component_labels

    if path == "compiled":
        monkeypatch.setattr(turbobc._traverse, "SCIPY_BELOW_NNZ", 0)
    else:  # SciPy's, whether or not the loops are shipped ahead
        monkeypatch.setattr(turbobc._traverse, "PREFER_SHIPPED", False)

    G = nx.gnp_random_graph(300, 0.006, seed=seed, directed=seed == 2)
    A = adjacency(G)
    _, theirs = connected_components(A, directed=False)
    ours = component_labels(A.indptr, A.indices)
    same = theirs[:, None] == theirs[None, :]
    np.testing.assert_array_equal(ours[:, None] == ours[None, :], same)
    assert all(ours[v] == np.flatnonzero(ours == ours[v]).min() for v in range(A.shape[0]))
    order, level = bfs_order_levels(A.indptr, A.indices, 5)
    scipy_order = breadth_first_order(A, 5, directed=True, return_predecessors=False)
    assert set(order.tolist()) == set(scipy_order.tolist()) and order[0] == 5
    lengths = nx.single_source_shortest_path_length(G, list(G)[5])
    expected = np.full(A.shape[0], -1)
    for node, hops in lengths.items():
        expected[list(G).index(node)] = hops
    np.testing.assert_array_equal(level, expected)
    # from several roots at once: the depth from the nearest (-1 where none reaches)
    roots = np.array([5, 40, 41, 5])
    nearest = np.full(A.shape[0], -1)
    for root in roots:
        lengths = nx.single_source_shortest_path_length(G, list(G)[root])
        for node, hops in lengths.items():
            v = list(G).index(node)
            nearest[v] = hops if nearest[v] < 0 else min(nearest[v], hops)
    np.testing.assert_array_equal(bfs_depths(A.indptr, A.indices, roots), nearest)
    if seed == 2:
        return  # component depths are of a symmetric pattern
    # from the least vertex of each component
    depth = np.full(A.shape[0], -1)
    for component in nx.connected_components(G):
        least = min(list(G).index(node) for node in component)
        for node, hops in nx.single_source_shortest_path_length(G, list(G)[least]).items():
            depth[list(G).index(node)] = hops
    np.testing.assert_array_equal(component_depths(A.indptr, A.indices), depth)


def test_callers_past_scipys_csgraph(monkeypatch, cpu_engine):
    """Past 2^31 - 1 stored edges SciPy's csgraph refuses the graph: the folding, the depth
    estimate, the diameter bound of the pair sampler and the lanes' locality order take the
    compiled loops (here on a small graph, the limit lowered to 0)."""
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    import turbobc._traverse
    from turbobc._pairs import vertex_diameter_bound
    from turbobc._reduce import component_sizes
    from turbobc.engines.gpu.lanes_order import locality_order

    G = with_hanging_trees(nx.disjoint_union(nx.cycle_graph(12), nx.petersen_graph()), 15,
                           seed=5)
    A = _narrow(adjacency(G))
    graph = validate(A, sources=None, k=None, seed=None, normalized=True, endpoints=False,
                     directed=None, engine=cpu_engine, kernel="auto", progress=False).graph
    sizes, depth = component_sizes(graph), graph.depth_estimate
    bound = vertex_diameter_bound(graph.pattern)
    expected = as_array(nx.betweenness_centrality(G, endpoints=True), G)
    monkeypatch.setattr(turbobc._traverse, "CSGRAPH_LIMIT", 0)
    fresh = Graph(pattern=graph.pattern, directed=False)  # depth_estimate is cached
    np.testing.assert_array_equal(component_sizes(fresh), sizes)
    assert fresh.depth_estimate == depth
    assert vertex_diameter_bound(fresh.pattern) == bound
    assert vertex_diameter_bound(fresh.pattern, directed=True) is None
    # the reverse Cuthill-McKee order is compiled at every size: SciPy's permutation still
    rank, order, _ = locality_order(fresh, "rcm")
    assert order == "rcm"
    np.testing.assert_array_equal(np.argsort(rank),
                                  reverse_cuthill_mckee(sp.csr_matrix(graph.pattern),
                                                        symmetric_mode=True))
    got = turbobc.bc(A, engine=cpu_engine, endpoints=True)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
