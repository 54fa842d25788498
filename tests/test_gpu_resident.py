"""A GPU sweeper keeps the graph on its device across runs (turbobc/engines/gpu/resident.py).

On a device: runs on one sweeper add up to the run over the union and to networkx, a second
run of the same family builds no part of the graph (same device pointers, ``resident_reused``),
the families share what they can, a failed run leaves nothing behind, and a closed sweeper
refuses to run. On the CPU: the keys, the workspace rule, and that opening and closing
allocate nothing.
"""

from __future__ import annotations

import ast
import gc
import threading
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import spmv
import turbobc
from gpu_helpers import family_run, make_graph, networkx_raw, pool_limited
from turbobc.engines.gpu import lanes_blocks, memory as _gpu_memory
from turbobc.engines.gpu.lanes import LanesFamily
from turbobc.engines.gpu.single import SingleFamily
from turbobc.engines.gpu.engine import GpuEngine
from turbobc.engines.gpu.resident import PARTS, DeviceResident, part_key
from turbobc.engines.protocol import Problem

gpu = pytest.mark.gpu

KERNELS = ("auto",) + spmv.KERNELS
DIRECTED = pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
NEW_FACTS = {"resident_reused", "upload_seconds"}
SINGLE_FACTS = {"family", "kernel", "grid", "index_dtype", "wide_sources", "scf",
                "peak_pool_bytes", "model_bytes", "expected_bytes"} | NEW_FACTS
BATCHED_FACTS = {"family", "kernel", "order", "order_seconds", "sweep_seconds", "batch",
                 "batches", "depth", "reruns", "wide_sources", "grid", "level_dtype",
                 "index_dtype", "depth_cap", "peak_pool_bytes", "model_bytes"} | NEW_FACTS


def resident_graph(directed: bool):
    """300 vertices with hubs (degree above 32), a few isolated ones, and for the directed
    case arcs both ways on some edges only."""
    if directed:
        G = nx.DiGraph(nx.scale_free_graph(296, seed=3))
        G.remove_edges_from(nx.selfloop_edges(G))
    else:
        G = nx.barabasi_albert_graph(296, 3, seed=3)
    G.add_nodes_from(range(296, 300))
    return make_graph(nx.to_scipy_sparse_array(G, nodelist=range(300)), directed)


def pointers(resident: DeviceResident) -> dict:
    """Device pointer of every resident part (both arrays of the hub units)."""
    return {key: tuple(a.data.ptr for a in (value if isinstance(value, tuple) else (value,)))
            for key, value in resident.parts.items()}


def refuse_build(self, part, index_dtype):
    """Stands in for DeviceResident._build where no part may be built."""
    raise AssertionError(f"part {part} ({index_dtype}) was built again")


# ---- on a device ----------------------------------------------------------------------------

@gpu
@DIRECTED
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("split", ["lanes", "single"])
def test_second_run_copies_nothing_and_the_runs_add_up(directed, kernel, split, monkeypatch):
    graph = resident_graph(directed)
    if split == "lanes":   # two runs of 150 sources
        parts = [np.arange(0, graph.n, 2), np.arange(1, graph.n, 2)]
    else:                    # two runs of one source
        parts = [np.array([0]), np.array([7])]
    union = np.sort(np.concatenate(parts))
    # kernel "auto" would let "auto" predict the frontiers cheaper: the lanes are the test's
    with turbobc.tuning(gpu_family="lanes"), \
            GpuEngine().open(Problem(graph, kernel=kernel)) as sweeper:
        first = sweeper.run(parts[0])
        first_facts = dict(sweeper.facts)
        before = pointers(sweeper.resident)
        workspace = sweeper.resident.workspace(split)
        with monkeypatch.context() as patch:
            patch.setattr(DeviceResident, "_build", refuse_build)
            second = sweeper.run(parts[1])
        second_facts = dict(sweeper.facts)
        assert pointers(sweeper.resident) == before
        assert sweeper.resident.workspace(split) is workspace is not None
    assert first_facts["family"] == second_facts["family"] == split
    assert first_facts["resident_reused"] is False and first_facts["upload_seconds"] > 0
    assert second_facts["resident_reused"] is True and second_facts["upload_seconds"] == 0
    assert set(second_facts) >= (BATCHED_FACTS if split == "lanes" else SINGLE_FACTS)
    family = LanesFamily if split == "lanes" else SingleFamily
    whole = family_run(family, graph, union, endpoints=False, kernel=kernel, progress=None)
    np.testing.assert_allclose(first.vertex + second.vertex, whole, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(first.vertex + second.vertex, networkx_raw(graph, union),
                               rtol=1e-10, atol=1e-10)


@gpu
@DIRECTED
@pytest.mark.parametrize("kernel", KERNELS)
def test_mixed_families_on_one_sweeper(directed, kernel):
    """One source, then many, then one: the sums are right whatever each family keeps."""
    graph = resident_graph(directed)
    runs = [np.array([5]), np.arange(10, 200), np.array([250])]
    reused, total = [], 0
    with turbobc.tuning(gpu_family="lanes"), \
            GpuEngine().open(Problem(graph, kernel=kernel, endpoints=True)) as sweeper:
        for sources in runs:
            total = total + sweeper.run(sources).vertex
            reused.append(sweeper.facts["resident_reused"])
            assert sweeper.facts["family"] == ("single" if sources.size == 1 else "lanes")
    union = np.concatenate(runs)
    expected = family_run(LanesFamily, graph, union, endpoints=True, kernel="sccsc", progress=None)
    np.testing.assert_allclose(total, expected, rtol=1e-12, atol=1e-10)
    with GpuEngine().open(Problem(graph, kernel=kernel)) as sweeper:
        plain = sum(sweeper.run(sources).vertex for sources in runs)
    np.testing.assert_allclose(plain, networkx_raw(graph, union), rtol=1e-10, atol=1e-10)
    if kernel == "sccsc":
        # the single family's CSC is the batched CSR of an undirected graph; a directed one
        # adds its CSR, and the last run finds its CSC again
        assert reused == [False, not directed, True]
    assert reused[0] is False


@gpu
@pytest.mark.parametrize("family", [SingleFamily, LanesFamily], ids=["single", "lanes"])
@DIRECTED
def test_int64_indices_are_kept_apart_from_int32(family, directed):
    graph = resident_graph(directed)
    sources = np.array([0, 3, 9, 120]) if family is LanesFamily else np.array([3])
    results, facts = {}, {}
    with DeviceResident(graph) as resident:
        for dtype in (np.int64, np.int64, np.int32):
            facts = {}
            results.setdefault(np.dtype(dtype).name, []).append(family_run(
                family, resident, sources, endpoints=True, kernel="vecsc", progress=None, facts=facts,
                _index_dtype=dtype))
            assert facts["index_dtype"] == np.dtype(dtype).name
        types = {dtype for _, dtype in resident.parts}
        # a batched run lets go of what it does not sweep with, the int64 parts too
        assert types == ({"int32"} if family is LanesFamily else {"int32", "int64"})
        assert facts["resident_reused"] is False  # int32: new parts beside the int64 ones
    (a, b), (c,) = results["int64"], results["int32"]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)
    expected = family_run(LanesFamily, graph, sources, endpoints=True, kernel="sccsc", progress=None)
    np.testing.assert_allclose(a, expected, rtol=1e-12, atol=1e-10)


@gpu
def test_int64_second_run_is_resident():
    graph = resident_graph(True)
    with DeviceResident(graph) as resident:
        for expect in (False, True):
            facts = {}
            family_run(LanesFamily, resident, np.arange(40), endpoints=False, kernel="vecsc",
                                  progress=None, facts=facts, _index_dtype=np.int64)
            assert facts["resident_reused"] is expect
            assert resident.parts and all(t == "int64" for _, t in resident.parts)


@gpu
def test_open_allocates_nothing_and_close_releases_everything():
    import cupy

    graph = resident_graph(False)
    pool = cupy.get_default_memory_pool()
    used = pool.used_bytes()
    sweeper = GpuEngine().open(Problem(graph))
    assert pool.used_bytes() == used and sweeper.resident.held_bytes() == 0
    with turbobc.tuning(gpu_family="lanes"):  # the lanes' format parts
        sweeper.run(np.arange(64))
    assert sweeper.resident.held_bytes() > 0 and sweeper.resident.parts
    assert pool.used_bytes() >= used + sweeper.resident.held_bytes()
    sweeper.close()
    sweeper.close()
    assert sweeper.resident.held_bytes() == 0 and not sweeper.resident.parts
    assert pool.used_bytes() == used
    with pytest.raises(RuntimeError, match="this GPU sweeper is closed"):
        sweeper.run(np.arange(3))
    with pytest.raises(RuntimeError, match=r"released by close\(\)"):
        family_run(SingleFamily, sweeper.resident, np.array([1]), endpoints=False, kernel="auto",
                             progress=None)


@gpu
def test_a_failed_run_leaves_nothing_and_the_sweeper_goes_on():
    import cupy

    graph = resident_graph(True)
    pool = cupy.get_default_memory_pool()
    with GpuEngine().open(Problem(graph, kernel="vecsc")) as sweeper:
        gc.collect()  # an earlier test's unreachable arrays go now, not during the run
        pool.free_all_blocks()  # no cached block may serve the run
        baseline = pool.used_bytes()
        with pool_limited(baseline + 4 * 1024):
            with pytest.raises(MemoryError, match=r"needs about \d+ bytes of device memory"):
                sweeper.run(np.arange(100))
            assert sweeper.resident.held_bytes() == 0 and pool.used_bytes() <= baseline
        got = sweeper.run(np.arange(100)).vertex
        assert sweeper.facts["resident_reused"] is False
    np.testing.assert_allclose(got, networkx_raw(graph, np.arange(100)), rtol=1e-10,
                               atol=1e-10)


@gpu
def test_single_run_drops_what_it_held_when_the_device_is_full():
    """A single-source run that finds the device full while it holds an earlier run's arrays
    drops them and tries once more."""
    import cupy

    graph = resident_graph(True)
    pool = cupy.get_default_memory_pool()
    with DeviceResident(graph) as resident:
        family_run(SingleFamily, resident, np.array([4]), endpoints=False, kernel="sccsc",
                             progress=None, _index_dtype=np.int64)
        pool.free_all_blocks()
        facts = {}
        # no room for the int32 CSC beside the int64 one (each part takes 512 bytes or more)
        with pool_limited(pool.used_bytes() + 256):
            got = family_run(SingleFamily, resident, np.array([4]), endpoints=False,
                                       kernel="sccsc", progress=None, facts=facts,
                                       _index_dtype=np.int32)
        assert {dtype for _, dtype in resident.parts} == {"int32"}
        assert facts["resident_reused"] is False
    np.testing.assert_allclose(got, networkx_raw(graph, [4]), rtol=1e-10, atol=1e-10)


@gpu
def test_no_room_for_a_batch_beside_the_resident_format_goes_one_at_a_time():
    G = nx.gnp_random_graph(300, 0.03, seed=6)
    graph = make_graph(nx.to_scipy_sparse_array(G, nodelist=range(300)), False)
    limit = 100_000  # above the single-source model, below 32 lanes
    assert _gpu_memory.choose_lanes(graph.n, graph.nnz, graph.n, 2**60, memory_limit=limit,
                                depth_cap=graph.n + 2) == 0
    with GpuEngine().open(Problem(graph, kernel="sccsc", memory_limit=limit)) as sweeper:
        one = sweeper.run(np.array([0])).vertex
        rest = sweeper.run(np.arange(1, graph.n)).vertex
        assert sweeper.facts["family"] == "single" and sweeper.facts["resident_reused"]
        assert sweeper.facts["peak_pool_bytes"] <= limit
    np.testing.assert_allclose(one + rest, networkx_raw(graph, np.arange(graph.n)),
                               rtol=1e-10, atol=1e-10)


@gpu
def test_a_kept_workspace_serves_a_smaller_batch_and_a_larger_one_replaces_it():
    graph = resident_graph(False)
    with GpuEngine().open(Problem(graph, kernel="vecsc")) as sweeper:
        sweeper.run(np.arange(200))
        large = sweeper.resident.workspace("lanes")
        sweeper.run(np.arange(200, 240))
        assert sweeper.resident.workspace("lanes") is large
        assert sweeper.facts["batch"] < large.batch
        sweeper.run(np.arange(300))
        assert sweeper.resident.workspace("lanes").batch >= 300
        sweeper.run(np.array([9]))
        assert sweeper.resident.workspace("lanes") is None  # the vectors took its place
        assert sweeper.resident.workspace("single") is not None


@gpu
def test_one_sweeper_runs_one_call_at_a_time():
    graph = resident_graph(False)
    with DeviceResident(graph) as resident:
        with resident.run():
            with pytest.raises(RuntimeError, match="one call at a time"):
                family_run(SingleFamily, resident, np.array([1]), endpoints=False, kernel="auto",
                                     progress=None)
        family_run(SingleFamily, resident, np.array([1]), endpoints=False, kernel="auto",
                             progress=None)


@gpu
def test_sweepers_in_threads_share_nothing():
    graph = resident_graph(True)
    runs = [np.arange(0, 150), np.array([151]), np.arange(152, 300)]
    expected = networkx_raw(graph, np.arange(300))
    results = [None] * 4

    def work(i):
        with GpuEngine().open(Problem(graph, kernel=KERNELS[i % len(KERNELS)])) as sweeper:
            results[i] = sum(sweeper.run(sources).vertex for sources in runs)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got in results:
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


# ---- on the CPU -----------------------------------------------------------------------------

def test_undirected_csr_parts_are_kept_under_the_csc_keys():
    assert part_key("csr_ptr", np.int32, False) == ("csc_ptr", "int32")
    assert part_key("csr_idx", np.int64, False) == ("csc_idx", "int64")
    assert part_key("csr_row", np.int32, False) == ("csc_col", "int32")
    for part in PARTS:
        assert part_key(part, np.int64, True) == (part, "int64")
        assert part_key(part, np.int32, False)[0] in PARTS
    assert part_key("units", np.int32, False) != part_key("units", np.int64, False)
    with pytest.raises(ValueError, match="part must be one of 'csc_ptr', .*; got 'csr'"):
        part_key("csr", np.int32, True)


def test_undirected_csc_arrays_are_the_csr_arrays():
    """What the aliasing of part_key relies on (turbobc/_graph.py)."""
    graph = resident_graph(False)
    np.testing.assert_array_equal(graph.csc.indptr, graph.pattern.indptr)
    np.testing.assert_array_equal(graph.csc.indices, graph.pattern.indices)
    directed = resident_graph(True)
    assert not np.array_equal(directed.csc.indices, directed.pattern.indices)


def test_a_workspace_holds_smaller_batches_narrower_levels_shallower_tables():
    shape = (256, np.dtype(np.int16), 2048)
    assert lanes_blocks.holds(shape, 256, np.int16, 2048)
    assert lanes_blocks.holds(shape, 32, np.int16, 16)
    assert not lanes_blocks.holds(shape, 288, np.int16, 2048)
    assert not lanes_blocks.holds(shape, 256, np.int32, 2048)
    assert not lanes_blocks.holds(shape, 256, np.int16, 8192)
    assert lanes_blocks.holds((64, np.dtype(np.int32), 8192), 64, np.int16, 2048)


def test_opening_allocates_nothing_and_a_closed_sweeper_refuses_to_run():
    sweeper = GpuEngine().open(Problem(resident_graph(True)))
    resident = sweeper.resident
    assert resident.parts == {} and resident.held_bytes() == 0
    assert resident.workspace("single") is None and resident.workspace("lanes") is None
    assert resident.bc is None and resident.ctl is None and not resident.closed
    with sweeper:
        pass
    sweeper.close()  # a second close does nothing
    assert resident.closed and resident.held_bytes() == 0
    with pytest.raises(RuntimeError, match=r"this GPU sweeper is closed; open another with "
                                           r"GpuEngine\(\).open\(problem\)"):
        sweeper.run(np.array([0, 1]))
    with pytest.raises(RuntimeError, match=r"released by close\(\); open a new sweeper"):
        with resident.run():
            pass


def test_gpu_modules_keep_no_module_level_mutable_state():
    """No `global`, and no module-level list, dict or set in turbobc/engines/gpu/ (what a
    sweeper keeps lives in its DeviceResident)."""
    folder = Path(__file__).resolve().parents[1] / "turbobc" / "engines" / "gpu"
    paths = sorted(folder.glob("*.py"))
    assert {p.name for p in paths} >= {"engine.py", "resident.py", "single.py", "lanes.py",
                                       "layers.py", "memory.py"}
    for path in paths:
        tree = ast.parse(path.read_text())
        assert not any(isinstance(node, ast.Global) for node in ast.walk(tree)), path.name
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                mutable = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
                assert not isinstance(node.value, mutable) or _is_all(node), \
                    f"{path.name}:{node.lineno} module-level mutable value"


def _is_all(node) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [getattr(t, "id", "") for t in targets] == ["__all__"]


@gpu
def test_accumulate_weights_are_copied_once_counted_and_released():
    """τ and ω reach the device once per sweeper (one copy when they are the same array, as
    tree folding passes them), count in held_bytes, and go with close()."""
    import cupy

    graph = resident_graph(False)
    weights = np.arange(1, graph.n + 1, dtype=np.float64)
    pool = cupy.get_default_memory_pool()
    used = pool.used_bytes()
    sweeper = GpuEngine().open(Problem(graph, target_weight=weights, source_weight=weights))
    first = sweeper.run(np.arange(40))
    tau, omega = sweeper.resident.accumulate_weights(weights, weights)
    assert tau is omega and DeviceResident.weight_bytes((tau, omega)) == 8 * graph.n
    held = sweeper.resident.held_bytes()
    second = sweeper.run(np.arange(40))
    assert sweeper.resident.accumulate_weights(weights, weights)[0] is tau  # not copied again
    assert sweeper.resident.held_bytes() == held
    np.testing.assert_allclose(second.vertex, first.vertex, rtol=1e-13, atol=1e-15)
    sweeper.close()
    del tau, omega
    assert pool.used_bytes() == used
