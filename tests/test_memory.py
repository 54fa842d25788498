"""memory_limit=: parsing, the host-memory readers, CPU batch sizing, the GPU models' limits,
and the CPU engine's memory staying flat across batches."""

from __future__ import annotations

import gc
import math
import re

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from graphblas import Matrix

import turbobc
from turbobc._tuning import Tuning
from turbobc import _memory
from turbobc.engines import graphblas as _graphblas
from turbobc.engines.graphblas import sweep as _graphblas_sweep
from turbobc.engines.gpu.memory import (LANES, check_single_limit, choose_lanes, lane_bytes,
                                        single_bytes)

GiB = 2**30


@pytest.mark.parametrize("value, expected", [
    (None, None),
    (1, 1),
    (123456789, 123456789),
    (np.int64(4096), 4096),
    ("100", 100),
    ("100B", 100),
    ("2 kb", 2000),
    ("4GB", 4 * 10**9),
    ("4gb", 4 * 10**9),
    ("3 MB", 3 * 10**6),
    ("1TB", 10**12),
    ("1KiB", 1024),
    ("512MiB", 512 * 2**20),
    ("512mib", 512 * 2**20),
    ("1.5GiB", 3 * 2**29),
    (" 2TiB ", 2 * 2**40),
    ("0.5KB", 500),
    (".25 KiB", 256),
    ("1.0001KB", 1000),  # whole bytes, rounded down
])
def test_parse_memory_limit(value, expected):
    assert _memory.parse_memory_limit(value) == expected


@pytest.mark.parametrize("value, shown", [
    (4.0, "float 4.0"), (True, "bool True"), ([4], "list [4]"), (b"4GB", "bytes b'4GB'"),
])
def test_memory_limit_of_a_wrong_type(value, shown):
    message = ("memory_limit must be None, an int number of bytes or a string such as '4GB' "
               f"or '512MiB'; got {shown}")
    with pytest.raises(TypeError, match=re.escape(message)):
        _memory.parse_memory_limit(value)


@pytest.mark.parametrize("value", ["4 parsecs", "GB", "", "-1GB", "1e9", "4 G B", "4GBs"])
def test_memory_limit_text_that_is_not_a_size(value):
    message = ("memory_limit must be a number of bytes or a number with a unit (B, KB, MB, GB, "
               f"TB, KiB, MiB, GiB, TiB), e.g. '4GB' or '512MiB'; got {value!r}")
    with pytest.raises(ValueError, match=re.escape(message)):
        _memory.parse_memory_limit(value)


@pytest.mark.parametrize("value", [0, -5, "0B", "0.4B", "0 GiB"])
def test_memory_limit_below_one_byte(value):
    with pytest.raises(ValueError, match=re.escape(f"memory_limit must be at least 1 byte; "
                                                   f"got {value!r}")):
        _memory.parse_memory_limit(value)


def test_bc_validates_memory_limit_first():
    A = sp.csr_array(([1.0] * 2, ([0, 1], [1, 0])), shape=(2, 2))
    with pytest.raises(TypeError, match="memory_limit must be None, an int number of bytes"):
        turbobc.bc(A, engine="graphblas", memory_limit=2.5e9)
    with pytest.raises(ValueError, match=re.escape("(B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), "
                                                   "e.g. '4GB' or '512MiB'; got '4G'")):
        turbobc.bc(A, engine="graphblas", memory_limit="4G")


# ---------------------------------------------------------------- readers, on fake files

MEMINFO = """MemTotal:       24576000 kB
MemFree:        20000000 kB
MemAvailable:   23000000 kB
Buffers:           10000 kB
"""


def test_meminfo_available(tmp_path):
    path = tmp_path / "meminfo"
    path.write_text(MEMINFO)
    assert _memory.meminfo_available(path) == 23000000 * 1024
    path.write_text("MemTotal: 1000 kB\nMemFree: 700 kB\n")  # kernels before 3.14
    assert _memory.meminfo_available(path) == 700 * 1024
    assert _memory.meminfo_available(tmp_path / "absent") is None


def _cgroup_v2(tmp_path, rel="user.slice/job", limit="max", current="0", stat=""):
    root = tmp_path / "sys"
    (root / rel).mkdir(parents=True)
    (root / rel / "memory.max").write_text(limit + "\n")
    (root / rel / "memory.current").write_text(current + "\n")
    (root / rel / "memory.stat").write_text(stat)
    proc = tmp_path / "cgroup"
    proc.write_text(f"0::/{rel}\n")
    return root, proc


def test_cgroup_v2_limit_minus_usage_plus_inactive_file(tmp_path):
    root, proc = _cgroup_v2(tmp_path, limit=str(4 * GiB), current=str(3 * GiB),
                            stat=f"anon 100\ninactive_file {GiB // 2}\nactive_file 7\n")
    assert _memory.cgroup_available(root, proc) == 4 * GiB - 3 * GiB + GiB // 2


def test_cgroup_v2_without_limit(tmp_path):
    root, proc = _cgroup_v2(tmp_path, limit="max", current=str(GiB))
    assert _memory.cgroup_available(root, proc) is None


def test_cgroup_v2_parent_limit_counts(tmp_path):
    root, proc = _cgroup_v2(tmp_path, rel="outer/inner", limit="max", current=str(GiB))
    (root / "outer" / "memory.max").write_text(str(2 * GiB))
    (root / "outer" / "memory.current").write_text(str(GiB // 4))
    assert _memory.cgroup_available(root, proc) == 2 * GiB - GiB // 4


def test_cgroup_v2_namespaced_root(tmp_path):
    """Inside a container /proc/self/cgroup says 0::/ and the limit sits at the mount root."""
    root = tmp_path / "sys"
    root.mkdir()
    (root / "memory.max").write_text(str(3 * GiB))
    (root / "memory.current").write_text(str(GiB))
    proc = tmp_path / "cgroup"
    proc.write_text("0::/\n")
    assert _memory.cgroup_available(root, proc) == 2 * GiB


def test_cgroup_v1(tmp_path):
    root = tmp_path / "sys"
    job = root / "memory" / "docker" / "abc"
    job.mkdir(parents=True)
    (job / "memory.limit_in_bytes").write_text(str(8 * GiB))
    (job / "memory.usage_in_bytes").write_text(str(5 * GiB))
    (job / "memory.stat").write_text(f"cache 9\ntotal_inactive_file {GiB}\n")
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712")  # no limit
    proc = tmp_path / "cgroup"
    proc.write_text("12:pids:/docker/abc\n4:memory:/docker/abc\n1:cpu,cpuacct:/docker/abc\n")
    assert _memory.cgroup_available(root, proc) == 8 * GiB - 5 * GiB + GiB


def test_cgroup_v1_unlimited(tmp_path):
    root = tmp_path / "sys"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (root / "memory" / "memory.usage_in_bytes").write_text("1000\n")
    proc = tmp_path / "cgroup"
    proc.write_text("4:memory:/\n")
    assert _memory.cgroup_available(root, proc) is None


def test_available_memory_is_the_lower_one(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(MEMINFO)  # 23,000,000 kB, about 21.9 GiB
    root, proc = _cgroup_v2(tmp_path, limit=str(2 * GiB), current=str(GiB))
    kwargs = dict(meminfo=meminfo, cgroup_root=root, proc_cgroup=proc)
    assert _memory.available_memory(**kwargs) == GiB
    (root / "user.slice/job" / "memory.max").write_text("max")
    assert _memory.available_memory(**kwargs) == 23000000 * 1024


def test_available_memory_without_proc_files(tmp_path):
    got = _memory.available_memory(meminfo=tmp_path / "none", cgroup_root=tmp_path / "none",
                                   proc_cgroup=tmp_path / "none")
    assert got > 0


def test_format_bytes():
    assert _memory.format_bytes(512) == "512 bytes"
    assert _memory.format_bytes(3 * 2**29) == "1610612736 bytes (1.5 GiB)"


# ---------------------------------------------------------------- the CPU engine

def test_batch_size_follows_the_limit():
    n, m, sources = 10_000, 50_000, 10_000
    fixed = _graphblas.fixed_bytes(n, m, False)
    per_source = _graphblas.BYTES_PER_SLOT * n
    assert fixed == 8 * (n + 1) + 8 * m + 8 * n
    assert _graphblas.fixed_bytes(n, m, True) == 2 * (8 * (n + 1) + 8 * m) + 8 * n
    sizes = [_graphblas.batch_size_for(n, sources, m=m, memory_limit=fixed + b * per_source)
             for b in (1, 2, 7, 100)]
    assert sizes == [1, 2, 7, 100]
    # one byte short of a second source
    assert _graphblas.batch_size_for(n, sources, m=m,
                                     memory_limit=fixed + 2 * per_source - 1) == 1
    # a huge limit: the speed cap
    cap = Tuning().cpu_batch_cap // n
    assert _graphblas.batch_size_for(n, sources, m=m, memory_limit=2**50) == cap
    # never more than the sources
    assert _graphblas.batch_size_for(n, 3, m=m, memory_limit=2**50) == 3
    assert _graphblas.batch_size_for(n, 0, m=m, memory_limit=1) == 0


def test_automatic_batch_size_plans_for_a_fraction_of_available_memory():
    n, m = 10_000, 50_000
    fixed = _graphblas.fixed_bytes(n, m, False)
    per_source = _graphblas.BYTES_PER_SLOT * n
    available = int((fixed + 40 * per_source) / Tuning().cpu_memory_fraction)
    assert _graphblas.batch_size_for(n, 10_000, m=m, available=available) == 40
    assert _graphblas.batch_size_for(n, 10_000, m=m, available=2**50) == (
        Tuning().cpu_batch_cap // n)
    # the fraction does not fit one source but the whole does: one source at a time
    assert _graphblas.batch_size_for(n, 10_000, m=m, available=fixed + per_source) == 1


def test_one_source_that_cannot_fit_the_limit():
    n, m = 10_000, 50_000
    need = _graphblas.fixed_bytes(n, m, False) + _graphblas.BYTES_PER_SLOT * n
    graph_bytes = _memory.format_bytes(8 * 10001 + 8 * 50000 + 80000)
    message = (f"the CPU engine needs about {_memory.format_bytes(need)} for one source "
               f"(n=10000, 50000 stored edges: {graph_bytes}"
               f" for the graph and {_graphblas.BYTES_PER_SLOT} bytes per vertex and source), "
               f"but memory_limit is {_memory.format_bytes(need - 1)}; raise memory_limit")
    with pytest.raises(MemoryError, match=re.escape(message)):
        _graphblas.batch_size_for(n, 5, m=m, memory_limit=need - 1)
    assert _graphblas.batch_size_for(n, 5, m=m, memory_limit=need) == 1


def test_one_source_that_cannot_fit_the_available_memory():
    with pytest.raises(MemoryError, match=re.escape(
            "but only 1000 bytes of memory is available (MemAvailable, or the room under the "
            "cgroup limit); free memory, or pass a larger memory_limit to try anyway")):
        _graphblas.batch_size_for(100, 5, m=300, available=1000)


def test_bc_names_the_estimate_when_one_source_cannot_fit():
    G = nx.karate_club_graph()
    need = _graphblas.fixed_bytes(34, 156, False) + _graphblas.BYTES_PER_SLOT * 34
    with turbobc.tuning(fold_trees=False), pytest.raises(MemoryError, match=re.escape(
            f"the CPU engine needs about {need} bytes (7.07 KiB) for one source (n=34, 156 "
            "stored edges") + ".*" + re.escape("but memory_limit is 5000 bytes (4.88 KiB)")):
        turbobc.bc(G, engine="graphblas", memory_limit="5000B")
    # karate has one leaf: folded, the run is of the core (n=33, 154 stored edges), and the
    # message says so
    need = _graphblas.fixed_bytes(33, 154, False) + _graphblas.BYTES_PER_SLOT * 33
    with turbobc.tuning(fold_min_share=0.0), pytest.raises(MemoryError, match=re.escape(
            f"needs about {need} bytes (6.88 KiB) for one source (n=33, 154 stored edges")
            + ".*" + re.escape("(that is the core left after folding the 1 vertices of the "
                               "trees hanging off this graph of n=34)")):
        turbobc.bc(G, engine="graphblas", memory_limit="5000B")


@pytest.mark.parametrize("directed", [False, True])
def test_a_small_limit_gives_small_batches_and_networkx_values(directed, monkeypatch):
    G = (nx.gnp_random_graph(90, 0.06, seed=3, directed=directed))
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    m = int(A.nnz)
    limit = (_graphblas.fixed_bytes(90, m, directed) + 7 * _graphblas.BYTES_PER_SLOT * 90
             + _graphblas.BYTES_PER_SLOT * 90 // 2)
    sizes = []
    inner = _graphblas_sweep.accumulate_batch

    def recording(A, AT, batch, *rest):
        sizes.append(len(batch))
        return inner(A, AT, batch, *rest)

    monkeypatch.setattr(_graphblas_sweep, "accumulate_batch", recording)
    # one batch at a time: "auto" sweeps several at once from 8 GraphBLAS threads up, each
    # with its share of the budget (batches of 1 on 16 cores): sizes that depend on the host
    with turbobc.tuning(fold_trees=False, cpu_concurrent_batches=1):
        # the whole graph: 90 sources in batches of 7
        got = turbobc.bc(A, engine="graphblas", memory_limit=limit, directed=directed)
    assert sizes == [7] * 12 + [6]
    expected = nx.betweenness_centrality(G)
    np.testing.assert_allclose(got, [expected[v] for v in G], rtol=1e-12, atol=1e-15)
    sizes.clear()
    text_limit = f"{limit / 1000:.3f}KB"  # the same bytes, as a string
    with turbobc.tuning(cpu_concurrent_batches=1):
        got = turbobc.bc(A, engine="graphblas", memory_limit=text_limit, k=20, seed=4,
                         directed=directed, endpoints=True)
    assert sizes == [7, 7, 6]
    expected = nx.betweenness_centrality(G, k=20, seed=4, endpoints=True)
    np.testing.assert_allclose(got, [expected[v] for v in G], rtol=1e-12, atol=1e-15)


def _live_matrices() -> int:
    """The python-graphblas matrices alive; a dead weak proxy among the collector's objects
    (another test's, in the same process) raises on isinstance, and is no matrix."""
    count = 0
    for o in gc.get_objects():
        try:
            count += isinstance(o, Matrix)
        except ReferenceError:
            pass
    return count


@pytest.mark.slow
def test_matrices_of_finished_batches_are_freed():
    """python-graphblas matrices sit in reference cycles (Matrix.ss refers back), so only the
    cyclic collector frees them; the engine collects after each batch. With automatic
    collection off, the matrices of 12 batches stay alive without it and do not with it."""
    G = nx.gnp_random_graph(120, 0.05, seed=5)
    A = nx.to_scipy_sparse_array(G, format="csr")
    limit = _graphblas.fixed_bytes(120, A.nnz, False) + 10 * _graphblas.BYTES_PER_SLOT * 120
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        before = _live_matrices()
        with turbobc.tuning(cpu_collect_above_slots=math.inf):
            turbobc.bc(A, engine="graphblas", memory_limit=limit)
        left_without = _live_matrices() - before
        gc.collect()
        before = _live_matrices()
        with turbobc.tuning(cpu_collect_above_slots=1):
            got = turbobc.bc(A, engine="graphblas", memory_limit=limit)
        left_with = _live_matrices() - before
    finally:
        if was_enabled:
            gc.enable()
    assert left_without > 12 * 5  # levels, visited and temporaries of every batch
    assert left_with <= 3  # the adjacency matrix, freed at the next collection
    expected = nx.betweenness_centrality(G)
    np.testing.assert_allclose(got, [expected[v] for v in G], rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- the GPU engines (pure parts)

def test_gpu_choose_batch_honours_the_limit():
    n, m, sources = 100_000, 1_000_000, 100_000
    free = 80 * GiB
    unlimited = choose_lanes(n, m, sources, free)
    assert choose_lanes(n, m, sources, free, memory_limit=None) == unlimited
    limited = choose_lanes(n, m, sources, free, memory_limit=GiB)
    assert limited == choose_lanes(n, m, sources, GiB) and 0 < limited < unlimited
    assert limited % LANES == 0 and limited * lane_bytes(n, 2, 2048) <= GiB
    # a limit above the free memory changes nothing
    assert choose_lanes(n, m, sources, free, memory_limit=100 * GiB) == unlimited
    # not even 32 lanes: 0 (the engine then goes one source at a time)
    assert choose_lanes(n, m, sources, free, memory_limit=32 * lane_bytes(n, 2, 2048)) == 0


def test_gpu_single_source_refuses_a_model_above_the_limit():
    n, m = 1000, 8000
    need = single_bytes(n, m, "sccsc", np.int32, 1)
    check_single_limit(n, m, "auto", np.int32, 1, None)
    check_single_limit(n, m, "auto", np.int32, 1, need)
    message = (f"the GPU engine needs about {_memory.format_bytes(need)} of device memory for "
               "one source of this graph (n=1000, 8000 stored edges, int32 indices, 4 bytes per "
               "stored edge, kernel='auto'), but "
               f"memory_limit is {_memory.format_bytes(need - 1)}; raise memory_limit")
    with pytest.raises(MemoryError, match=re.escape(message)):
        check_single_limit(n, m, "auto", np.int32, 1, need - 1)
    coo = single_bytes(n, m, "sccooc", np.int32, 1)
    with pytest.raises(MemoryError, match=re.escape(f"{_memory.format_bytes(coo)} of device")):
        check_single_limit(n, m, "sccooc", np.int32, 1, coo - 1)


# ---------------------------------------------------------------- the GPU engines on a device

def _gpu_graph():
    G = nx.gnp_random_graph(300, 0.03, seed=6)
    return G, nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")


@pytest.mark.gpu
def test_gpu_batches_follow_the_limit():
    from turbobc._api import run_bc

    G, A = _gpu_graph()
    n, m = A.shape[0], int(A.nnz)
    expected = nx.betweenness_centrality(G)
    limit = 2**20
    with turbobc.tuning(gpu_family="lanes"):  # "auto" predicts the frontiers cheaper here
        free, unlimited = run_bc(A, engine="gpu")
        got, run = run_bc(A, engine="gpu", memory_limit="1MiB")
    assert run["batch"] == choose_lanes(n, m, n, 2**60, memory_limit=limit, kernel=run["kernel"],
                                        depth_cap=run["depth_cap"])
    assert run["batch"] < unlimited["batch"] and run["batches"] > 1
    assert run["peak_pool_bytes"] <= limit
    np.testing.assert_allclose(got, [expected[v] for v in G], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(free, got, rtol=1e-12, atol=1e-15)


@pytest.mark.gpu
def test_gpu_goes_one_source_at_a_time_under_a_small_limit():
    from turbobc._api import run_bc

    G, A = _gpu_graph()
    n, m = A.shape[0], int(A.nnz)
    limit = 100_000  # below 32 lanes (about 0.4 MB here), above the single-source model
    assert single_bytes(n, m, "sccsc", np.int32, n) < limit
    assert choose_lanes(n, m, n, 2**60, memory_limit=limit, depth_cap=n + 2) == 0
    with turbobc.tuning(gpu_family="lanes"):
        got, facts = run_bc(A, engine="gpu", memory_limit=limit)
    assert facts["family"] == "single" and facts["peak_pool_bytes"] <= limit
    expected = nx.betweenness_centrality(G)
    np.testing.assert_allclose(got, [expected[v] for v in G], rtol=1e-12, atol=1e-15)


@pytest.mark.gpu
@pytest.mark.parametrize("sources", [None, [3]])
def test_gpu_refuses_a_graph_above_the_limit(sources):
    G, A = _gpu_graph()
    with pytest.raises(MemoryError, match=re.escape("of device memory for one source of this "
                                                    "graph (n=300, ") + ".*"
                       + re.escape("but memory_limit is 1000 bytes; raise memory_limit")):
        turbobc.bc(A, engine="gpu", memory_limit=1000, sources=sources)
