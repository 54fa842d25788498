"""Scale-out through Dask (turbobc/_dask.py) on a LocalCluster of CPU worker processes:
the same numbers as without ``client=``, the same bits for any number of workers, a worker
killed in the middle of a run, and failures reported with the worker's traceback."""

from __future__ import annotations

import dataclasses
import errno
import os
import signal
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
from graph_cases import GRAPH_CASES, adjacency, with_hanging_trees, with_lengths
from turbobc import _dask, _dask_worker
from turbobc._api import run_bc
from turbobc.engines.protocol import Partial

distributed = pytest.importorskip("distributed", reason="dask.distributed is in the test extra")

CASES = ["karate", "grid_deep_2x40", "two_components_isolated", "digraph_gnp",
         "digraph_sparse_unreachable", "barbell"]


def _cluster(workers: int):
    # CPU workers on any host: without CUDA_VISIBLE_DEVICES="" a worker on a GPU machine sees
    # the GPU, and "auto" (workers_have_gpus, built_ahead) would take it
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", silence_logs=40,
                                    env={"CUDA_VISIBLE_DEVICES": ""})


@pytest.fixture(scope="module")
def client():
    with _cluster(2) as cluster, distributed.Client(cluster) as c:
        yield c


def _matrix(name):
    G = GRAPH_CASES[name]()
    return nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr"), G.is_directed()


OPTIONS = [dict(), dict(endpoints=True), dict(normalized=False), dict(k=9, seed=4),
           dict(sources=[0, 3, 5, 7, 11]), dict(targets=[1, 2, 8, 12])]


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_vertex_bc_on_the_cluster_equals_the_local_run(client, name, cpu_engine):
    A, directed = _matrix(name)
    for options in OPTIONS:
        local = turbobc.bc(A, directed=directed, engine=cpu_engine, **options)
        with turbobc.tuning(dask_chunk_sources=7):  # several chunks even on tiny graphs
            spread = run_bc(A, directed=directed, engine=cpu_engine, client=client,
                            **options)
        np.testing.assert_allclose(spread.values, local, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name} {options}")
        assert spread.facts["engine"] == "dask"
        assert spread.facts["worker_engines"] == [cpu_engine]


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_edge_bc_on_the_cluster_equals_the_local_run(client, name):
    A, directed = _matrix(name)
    for options in (dict(), dict(normalized=False), dict(k=6, seed=1),
                    dict(sources=[0, 2, 4], targets=[1, 5, 9])):
        local = turbobc.edge_bc(A, directed=directed, engine="graphblas", **options)
        with turbobc.tuning(dask_chunk_sources=5):
            spread = turbobc.edge_bc(A, directed=directed, client=client, **options)
        np.testing.assert_array_equal(spread.indices, local.indices)
        np.testing.assert_allclose(spread.data, local.data, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_engine_auto_resolves_on_each_worker(client):
    """No GPU on these workers: "auto" runs the cpu engine there."""
    A, _ = _matrix("karate")
    result = run_bc(A, client=client)
    assert result.facts["worker_engines"] == ["cpu"]
    np.testing.assert_allclose(result.values, turbobc.bc(A, engine="graphblas"), rtol=1e-12)


@pytest.mark.slow
def test_same_bits_whatever_the_number_of_workers(client):
    G = nx.gnm_random_graph(300, 900, seed=5)
    A = nx.to_scipy_sparse_array(G, format="csr")
    with turbobc.tuning(dask_chunk_sources=16):
        two = run_bc(A, client=client)
        with _cluster(1) as cluster, distributed.Client(cluster) as one_client:
            one = run_bc(A, client=one_client)
    assert two.facts["chunks"] == one.facts["chunks"] == 19
    assert one.facts["workers_used"] == 1
    np.testing.assert_array_equal(two.values, one.values)


class _KillAfter:
    """A progress recorder that kills a busy worker once ``after`` sources are done."""

    def __init__(self, client, after: int):
        self.client, self.after, self.done, self.killed = client, after, 0, None

    def update(self, n):
        self.done += n
        if self.killed is None and self.done >= self.after:
            busy = [addr for addr, keys in self.client.processing().items() if keys]
            if busy:
                self.killed = (busy[0], self.done)
                pid = self.client.run(os.getpid, workers=[busy[0]])[busy[0]]
                os.kill(pid, signal.SIGKILL)  # its nanny starts a fresh worker


@pytest.mark.slow
def test_a_worker_killed_in_the_middle_loses_nothing():
    G = nx.grid_2d_graph(30, 30)
    A = nx.to_scipy_sparse_array(G, format="csr")
    local = turbobc.bc(A, engine="graphblas")
    with _cluster(2) as cluster, distributed.Client(cluster) as c:
        killer = _KillAfter(c, after=60)
        with turbobc.tuning(dask_chunk_sources=20):  # 45 chunks
            result = run_bc(A, client=c, engine="graphblas", progress=killer)
    assert killer.killed is not None, "no worker was busy to kill"
    address, done_then = killer.killed
    assert done_then < A.shape[0], "the kill came after the last chunk"
    assert killer.done == A.shape[0]  # every source counted once
    np.testing.assert_allclose(result.values, local, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_a_failing_chunk_raises_its_own_error_naming_chunk_and_worker(client):
    """memory_limit=1 byte: no source fits, the chunk raises MemoryError on the worker; it is
    retried with less memory, then reported (not a hang)."""
    A, _ = _matrix("karate")
    with pytest.raises(MemoryError, match="the CPU engine needs about") as caught:
        turbobc.bc(A, engine="graphblas", memory_limit=1, client=client)
    notes = " ".join(getattr(caught.value, "__notes__", []))
    assert "on Dask worker tcp://" in notes
    assert "in chunk 0 of 1 (34 sources)" in notes


@pytest.mark.slow
def test_engine_gpu_on_workers_without_one_names_the_worker(client):
    """The client's machine does not decide: each worker resolves the engine and says why
    it cannot."""
    A, _ = _matrix("karate")
    with pytest.raises(turbobc.exceptions.GPUUnavailableError, match="needs a usable GPU") \
            as caught:
        turbobc.bc(A, engine="gpu", client=client)
    assert "on Dask worker tcp://" in " ".join(getattr(caught.value, "__notes__", []))


class _FakeSweeper:
    def __init__(self, problem, fail):
        self.problem, self.fail, self.facts = problem, fail, {"engine": "fake"}

    def run(self, sources):
        if self.fail:
            raise MemoryError("out of device memory")
        return Partial(vertex=np.full(3, float(len(sources))), sources=len(sources))

    def close(self):
        pass


class _FakeState:
    """Opens a sweeper that fails ``failures`` times, recording the budgets it was given."""

    def __init__(self, failures):
        self.failures, self.budgets, self.sweeper = failures, [], None

    def open(self, problem, token, engine):
        self.budgets.append(problem.memory_limit)
        self.sweeper = _FakeSweeper(problem, fail=len(self.budgets) <= self.failures)
        return self.sweeper

    def close(self):
        self.sweeper = None


def _problem(memory_limit):
    A = sp.csr_array(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float))
    graph = turbobc._graph.Graph(pattern=A, directed=False)
    return turbobc.engines.protocol.Problem(graph, memory_limit=memory_limit)


def test_out_of_memory_runs_again_with_half_the_budget():
    state = _FakeState(failures=2)
    part, retries, _ = _dask_worker._run_with_memory_retries(state, _problem(1000), "t", "auto",
                                                      np.arange(3))
    assert retries == 2 and state.budgets == [1000, 500, 250]
    np.testing.assert_array_equal(part.vertex, [3.0, 3.0, 3.0])
    with pytest.raises(MemoryError):
        _dask_worker._run_with_memory_retries(_FakeState(failures=3), _problem(1000), "t", "auto",
                                       np.arange(3))


def test_chunks_hold_whole_batches_or_one_share_a_worker():
    sources = np.arange(10_000, dtype=np.int64)
    size = _dask.chunk_size(len(sources))
    chunks = _dask.chunk_sources(sources, size)
    assert len(chunks) == _dask.CHUNKS
    np.testing.assert_array_equal(np.concatenate(chunks), sources)
    assert max(map(len, chunks)) - min(map(len, chunks)) <= 1
    # a GPU plans batches of thousands: a chunk holds whole batches
    assert len(_dask.chunk_sources(sources, _dask.chunk_size(len(sources), 4096))) == 3
    assert _dask.chunk_size(10**6, 4096) == 16384      # 10^6 / 64, up to whole batches
    # no more batches than workers: one chunk a worker
    assert _dask.chunk_size(len(sources), 4096, workers=4) == 2500
    assert _dask.chunk_size(len(sources), 16384, workers=1) == 10_000
    assert _dask.chunk_size(len(sources), 2048, workers=4) == 2048  # 5 batches: one a chunk
    assert _dask.chunk_size(65536, 396) == 3 * 396     # the frontiers' blocks: whole waves
    tapered = _dask.chunk_sources(np.arange(65536), 3 * 396, 396, 396)
    sizes = [len(c) for c in tapered]
    # whole waves but the one that took the rest (592 = 396 + 196), before the last waves
    assert [s for s in sizes if s % 396] == [592] and sizes[-1] == 396
    assert sizes == sorted(sizes, reverse=True)
    np.testing.assert_array_equal(np.concatenate(tapered), np.arange(65536))
    assert _dask.chunk_size(10) == _dask.CHUNK_MIN_SOURCES
    with turbobc.tuning(dask_chunk_sources=100):
        assert _dask.chunk_size(len(sources), 4096) == 100


def test_client_must_be_a_dask_client():
    A, _ = _matrix("karate")
    with pytest.raises(TypeError, match="client must be a dask.distributed.Client"):
        turbobc.bc(A, client=object())


def test_importing_turbobc_does_not_import_dask():
    code = "import sys, turbobc; print(any(m.split('.')[0] in ('dask', 'distributed') " \
           "for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def _sweepers_opened(dask_worker):
    """(sweepers opened on this worker so far, whether none is open now)."""
    state = getattr(dask_worker, "_turbobc_state", None)
    return (0, True) if state is None else (state.opened, state.sweeper is None)


@pytest.mark.slow
def test_each_worker_opens_one_sweeper_per_call_and_closes_it(client):
    """The problem is scattered once (broadcast) and each worker keeps one sweeper for all
    the chunks it runs of a call; after the call every sweeper is closed."""
    A, _ = _matrix("grid_deep_2x40")
    before = client.run(_sweepers_opened)
    with turbobc.tuning(dask_chunk_sources=10):
        result = run_bc(A, client=client, engine="graphblas")
    after = client.run(_sweepers_opened)
    assert result.facts["chunks"] == 8
    # every worker opens its sweeper at once, whether or not a chunk comes to it
    assert all(after[w][0] - before[w][0] == 1 for w in after)
    assert result.facts["workers_used"] <= result.facts["workers"] == len(after)
    assert all(closed for _, closed in after.values())


def _edge_list(tmp_path, weighted=False):
    G = nx.gnm_random_graph(60, 150, seed=8)
    rng = np.random.default_rng(8)
    path = tmp_path / "g.txt"
    lines = [f"{u} {v} {int(rng.integers(1, 4))}" if weighted else f"{u} {v}"
             for u, v in G.edges()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _read_csv(path):
    rows = path.read_text().splitlines()[1:]
    return np.array([float(line.rsplit(",", 1)[1]) for line in rows])


@pytest.mark.slow
def test_cli_scheduler_runs_on_the_cluster(client, tmp_path, capsys):
    from turbobc.cli import main

    path = _edge_list(tmp_path, weighted=True)
    address = client.scheduler.address
    for extra in ([], ["--weight"]):
        assert main(["bc", str(path), "-o", str(tmp_path / "here.csv")] + extra) == 0
        assert main(["bc", str(path), "--scheduler", address, "-o",
                     str(tmp_path / "there.csv")] + extra) == 0
        assert "Dask worker(s), engine cpu" in capsys.readouterr().out
        np.testing.assert_allclose(_read_csv(tmp_path / "there.csv"),
                                   _read_csv(tmp_path / "here.csv"), rtol=1e-12, atol=1e-15)
    assert main(["edge-bc", str(path), "-o", str(tmp_path / "e_here.csv")]) == 0
    assert main(["edge-bc", str(path), "--scheduler", address, "-o",
                 str(tmp_path / "e_there.csv")]) == 0
    np.testing.assert_allclose(_read_csv(tmp_path / "e_there.csv"),
                               _read_csv(tmp_path / "e_here.csv"), rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_cli_gpus_starts_a_local_cluster(tmp_path, capsys, monkeypatch):
    """--gpus N starts N worker processes (one device each where there are GPUs; here, told
    that two GPUs are there: without a GPU the workers find none and run the cpu engine, on
    a one-GPU host the second worker does)."""
    import re

    import dask

    import turbobc._engines
    from turbobc.cli import main

    path = _edge_list(tmp_path)
    has_gpu = turbobc._engines.gpu_status()[0]
    monkeypatch.setattr(turbobc._engines, "gpu_count", lambda: 2)
    # Dask's NVML monitor off: it asks for device "1" whatever the host has (see
    # test_local_gpu_cluster_gives_each_worker_its_share_of_the_host)
    with dask.config.set({"distributed.diagnostics.nvml": False}):
        assert main(["bc", str(path), "--gpus", "2", "-o", str(tmp_path / "c.csv")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Dask worker\(s\), engine (cpu\+)?gpu" if has_gpu
                     else r"Dask worker\(s\), engine cpu\b", out), out
    assert main(["bc", str(path), "-o", str(tmp_path / "l.csv")]) == 0
    np.testing.assert_allclose(_read_csv(tmp_path / "c.csv"), _read_csv(tmp_path / "l.csv"),
                               rtol=1e-12, atol=1e-15)
    assert main(["bc", str(path), "--gpus", "0"]) == 2


@pytest.mark.slow
def test_weighted_bc_on_the_cluster_equals_the_local_run(client):
    from graph_cases import with_lengths

    G = with_lengths(nx.gnm_random_graph(120, 400, seed=3), "int3", 3, attribute="length")
    local = turbobc.bc(G, weight="length", engine="graphblas")
    with turbobc.tuning(dask_chunk_sources=16):
        spread = turbobc.bc(G, weight="length", client=client)
        edges = turbobc.edge_bc(G, weight="length", client=client)
    np.testing.assert_allclose(spread, local, rtol=1e-12, atol=1e-15)
    expected = nx.betweenness_centrality(G, weight="length")
    np.testing.assert_allclose(spread, [expected[v] for v in G], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(edges.data, turbobc.edge_bc(G, weight="length").data,
                               rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_epsilon_on_a_cluster_samples_the_same_sources(client):
    """bc(epsilon=...) with client=: each checkpoint's new sources run on the workers; the
    same seed gives the same samples and values as without a cluster."""
    A, directed = _matrix("barabasi_albert")
    here = run_bc(A, epsilon=0.3, seed=2, engine="graphblas")
    there = run_bc(A, epsilon=0.3, seed=2, engine="graphblas", client=client)
    assert there.facts["samples"] == here.facts["samples"]
    np.testing.assert_allclose(there.values, here.values, rtol=1e-12, atol=1e-15)


def test_an_approximation_is_one_session_on_the_cluster(client):
    """bc(epsilon=...) hands the cluster the pilot's sources and each checkpoint's new ones
    as source sets of one session (turbobc/_run.py): each worker opens one sweeper for the
    whole call, closed after it, and the facts are the cluster's and the sampling's."""
    A = nx.to_scipy_sparse_array(nx.barabasi_albert_graph(600, 2, seed=2), format="csr")
    before = client.run(_sweepers_opened)
    there = run_bc(A, epsilon=0.1, seed=1, engine="graphblas", client=client)
    after = client.run(_sweepers_opened)
    assert there.facts["pilot_samples"] > 0 and len(there.facts["checkpoints"]) > 1
    assert all(after[w][0] - before[w][0] <= 1 for w in after)
    assert all(closed for _, closed in after.values())
    assert there.facts["engine"] == "dask" and there.facts["worker_engines"] == ["graphblas"]
    here = run_bc(A, epsilon=0.1, seed=1, engine="graphblas")
    assert there.facts["samples"] == here.facts["samples"]
    np.testing.assert_allclose(there.values, here.values, rtol=1e-12, atol=1e-15)


# ---- every reduction of the local path, under Dask ----------------------------------------

def _road_like(seed: int = 3) -> nx.Graph:
    """A grid with a fifth of its streets closed, half of the rest subdivided by degree-2
    vertices (chains of 1 to 4 inner vertices), and dead ends (trees) hanging off it."""
    from test_chains import _subdivided

    rng = np.random.default_rng(seed)
    G = nx.grid_2d_graph(7, 7)
    G.remove_edges_from([e for e in list(G.edges) if rng.random() < 0.2])
    G = G.subgraph(max(nx.connected_components(G), key=len)).copy()
    return with_hanging_trees(_subdivided(G, 0.5, 4, seed), 25, seed)


def _cycle_with_trees() -> nx.Graph:
    """A cycle of 30 with two chords (four ends of degree 3, chains between them) and trees
    hanging off it."""
    G = nx.cycle_graph(30)
    G.add_edges_from([(0, 15), (7, 22)])
    return with_hanging_trees(G, 20, seed=4)


def _subdivided_grid() -> nx.Graph:
    from test_chains import GRAPHS

    return GRAPHS["subdivided_grid"]()


FOLDING = {"cycle_with_trees": _cycle_with_trees, "subdivided_grid": _subdivided_grid,
           "road_like": _road_like}

FOLDED_FACTS = ("folded", "core_vertices", "chain_folded", "chains")


def _same_folding(spread: dict, local: dict) -> None:
    """The Dask run reports what the local run folded, and ran on the cluster."""
    assert spread["engine"] == "dask"
    assert {k: spread.get(k) for k in FOLDED_FACTS} == {k: local.get(k) for k in FOLDED_FACTS}


def _force_chains(**more):
    """Chain folding on, however few chains (Tuning.chain_min_share), on any engine."""
    return turbobc.tuning(fold_chains=True, chain_min_share=0.0, **more)


def test_folded_chains_travel_in_each_chunk(cpu_engine):
    """The chains of a plan are carried once over runs of disjoint parts of its sources,
    and each run's partial holds its chains' credit: the parts add up to the whole run (what
    each Dask chunk returns, without a cluster)."""
    from turbobc._chains import ChainFolding, find_chains
    from turbobc._graph import Graph
    from turbobc._run import run_schedule

    A = adjacency(_road_like())
    graph = Graph(pattern=sp.csr_array(A, dtype=np.float64), directed=False)
    plan = ChainFolding(graph, np.ones(graph.n), find_chains(graph))
    problem = turbobc.engines.protocol.Problem(graph, slot_weights=plan)
    whole, _ = run_schedule(problem, cpu_engine, [plan.sources])
    parts, _ = run_schedule(problem, cpu_engine, np.array_split(plan.sources[::-1], 5))
    assert plan.folded > 0
    np.testing.assert_allclose(parts.vertex, whole.vertex, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="no source inside a folded chain"):
        plan.batches(64, sources=plan.chains.inner[:3])
    # a Dask run's order: the same sources, cut into fewer chain-separating runs
    ordered = plan.chunked_sources(4)
    np.testing.assert_array_equal(np.sort(ordered), plan.sources)
    assert plan._separated(ordered, 4) <= plan._separated(plan.sources, 4)


def test_a_cpu_chunk_keeps_every_thread_busy():
    """The cpu engine plans at least one 64-lane batch per thread: a Dask chunk of fewer
    sources would leave threads idle."""
    import numba

    from turbobc.engines.cpu import CpuEngine

    A = adjacency(nx.barabasi_albert_graph(2000, 3, seed=1))
    graph = turbobc._graph.Graph(pattern=sp.csr_array(A, dtype=np.float64), directed=False)
    with CpuEngine().open(turbobc.engines.protocol.Problem(graph)) as sweeper:
        assert sweeper.planned_batch(2000) == 64 * min(numba.get_num_threads(), 2000 // 64)


def test_trees_and_chains_fold_on_the_cluster(client):
    """The default suite's check: a cycle with chains and trees on two workers, folded as
    the local run folds it, equal to it and to networkx."""
    G = _cycle_with_trees()
    A = adjacency(G)
    with _force_chains(dask_chunk_sources=1):  # a chunk per end of a chain
        local = run_bc(A, engine="cpu")
        spread = run_bc(A, engine="cpu", client=client)
    _same_folding(spread.facts, local.facts)
    assert spread.facts["chain_folded"] > 0 and spread.facts["chunks"] > 1
    np.testing.assert_allclose(spread.values, local.values, rtol=1e-12, atol=1e-15)
    want = nx.betweenness_centrality(G)
    np.testing.assert_allclose(spread.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)
    # the seconds of the chains' target weights and credits are the workers', summed
    assert spread.facts["chain_seconds"]["target_weights"] > 0
    assert spread.facts["problem_bytes"] > 0 and spread.facts["start_seconds"]["scatter"] >= 0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FOLDING))
def test_folded_vertex_bc_on_the_cluster_equals_the_local_run(client, name, cpu_engine):
    G = FOLDING[name]()
    A = adjacency(G)
    for options in (dict(), dict(endpoints=True), dict(normalized=False)):
        with _force_chains(dask_chunk_sources=9):
            local = run_bc(A, engine=cpu_engine, **options)
            spread = run_bc(A, engine=cpu_engine, client=client, **options)
        _same_folding(spread.facts, local.facts)
        assert local.facts["chain_folded"] > 0
        np.testing.assert_allclose(spread.values, local.values, rtol=1e-12, atol=1e-15,
                                   err_msg=f"{name} {options}")
        want = nx.betweenness_centrality(G, **options)
        np.testing.assert_allclose(spread.values, [want[v] for v in G], rtol=1e-12,
                                   atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FOLDING))
def test_folded_edge_bc_on_the_cluster_equals_the_local_run(client, name, cpu_engine):
    """Edge BC folds what the local path folds: its trees, and its chains (the chains'
    edges credited in each chunk's partial)."""
    G = FOLDING[name]()
    A = adjacency(G)
    with _force_chains(dask_chunk_sources=9):
        local = turbobc._api.run_edge_bc(A, engine=cpu_engine)
        spread = turbobc._api.run_edge_bc(A, engine=cpu_engine, client=client)
    _same_folding(spread.facts, local.facts)
    assert local.facts["folded"] > 0 or name == "subdivided_grid"  # no trees there
    assert local.facts["chain_folded"] > 0
    np.testing.assert_array_equal(spread.values.indices, local.values.indices)
    np.testing.assert_allclose(spread.values.data, local.values.data, rtol=1e-12, atol=1e-15)
    want = nx.edge_betweenness_centrality(G)
    index = {v: i for i, v in enumerate(G)}
    got = spread.values.toarray()
    np.testing.assert_allclose([got[index[u], index[v]] for u, v in want],
                               list(want.values()), rtol=1e-12, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FOLDING))
def test_folded_weighted_bc_on_the_cluster_equals_the_local_run(client, name, cpu_engine):
    """Integer lengths (exact sums): trees and chains fold on the cluster as here, for
    vertex and edge BC."""
    G = with_lengths(FOLDING[name](), "int3", seed=2)
    A = adjacency(G)
    with _force_chains(dask_chunk_sources=9):
        local = run_bc(A, weight=True, engine=cpu_engine)
        spread = run_bc(A, weight=True, engine=cpu_engine, client=client)
        local_edges = turbobc._api.run_edge_bc(A, weight=True, engine=cpu_engine)
        edges = turbobc._api.run_edge_bc(A, weight=True, engine=cpu_engine, client=client)
    _same_folding(spread.facts, local.facts)
    _same_folding(edges.facts, local_edges.facts)
    assert local.facts["chain_folded"] > 0
    np.testing.assert_allclose(spread.values, local.values, rtol=1e-12, atol=1e-15)
    want = nx.betweenness_centrality(G, weight="weight")
    np.testing.assert_allclose(spread.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(edges.values.data, local_edges.values.data, rtol=1e-12,
                               atol=1e-15)


def _road_minnesota(lengths: bool = False):
    """road-minnesota (2,642 vertices: 141 in trees, 1,462 inside chains), with integer
    lengths 1..3 (exact sums) when asked."""
    from data_files import load

    # turbobc's reader: scipy.io.mmread warns (DeprecationWarning, an error here) on newer
    # SciPy without spmatrix=False, which older SciPy does not take
    A = sp.csr_array(load("road-minnesota.mtx", directed=False), dtype=np.float64)
    if lengths:
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        A.data = ((rows + A.indices) % 3 + 1).astype(np.float64)  # the same both ways
    return A


KILLED = {"vertex": lambda A, **kw: run_bc(A, **kw),
          "weighted": lambda A, **kw: run_bc(A, weight=True, **kw),
          "edge": lambda A, **kw: turbobc._api.run_edge_bc(A, **kw)}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KILLED))
def test_a_worker_killed_while_folded_sources_are_swept_loses_nothing(cpu_engine, kind):
    """The chains' credit travels in each chunk's partial: a chunk run again on another
    worker adds it once, and nothing a dead worker kept is missed (vertex, weighted and
    edge BC, each folded as the local run folds it: trees and chains)."""
    A = _road_minnesota(lengths=kind == "weighted")
    call = KILLED[kind]
    with _force_chains():
        local = call(A, engine=cpu_engine)
    with _cluster(2) as cluster, distributed.Client(cluster) as c:
        killer = _KillAfter(c, after=300)  # of the 1,039 sources swept
        with _force_chains(dask_chunk_sources=20):
            result = call(A, client=c, engine=cpu_engine, progress=killer)
    assert killer.killed is not None, "no worker was busy to kill"
    assert killer.killed[1] < A.shape[0], "the kill came after the last chunk"
    assert killer.done == A.shape[0]  # every source counted once, folded ones included
    _same_folding(result.facts, local.facts)
    assert result.facts["folded"] > 0
    assert result.facts["chain_folded"] > 0
    if kind == "edge":
        np.testing.assert_allclose(result.values.data, local.values.data, rtol=1e-12,
                                   atol=1e-15)
    else:
        np.testing.assert_allclose(result.values, local.values, rtol=1e-12, atol=1e-15)


def test_a_plan_the_workers_decline_is_swept_unfolded(client):
    """A batch too small for a source and the other ends of its chains (the caller's
    Tuning.cpu_batch_cap, in force on the workers): the workers decline the chain plan
    (SlotWeightsDeclined) and the core is swept unfolded on the cluster, as here."""
    G = _cycle_with_trees()
    A = adjacency(G)
    with _force_chains(cpu_batch_cap=1):  # one slot a batch
        local = run_bc(A, engine="cpu")
        spread = run_bc(A, engine="cpu", client=client)
    assert "chain_folded" not in local.facts and "chain_folded" not in spread.facts
    _same_folding(spread.facts, local.facts)
    want = nx.betweenness_centrality(G)
    np.testing.assert_allclose(spread.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)


def test_auto_folds_chains_as_the_workers_engine_would():
    """fold_chains="auto" folds on the GPU engine: named, or "auto" on workers that all have
    a GPU (asked of the cluster); CPU workers running "auto" do not fold, as "auto" on this
    machine does not."""
    from turbobc import _fold

    class Call:
        def __init__(self, engine, client=None):
            self.engine, self.client = engine, client

    assert _fold._sweeps_on_gpus(Call("gpu", client=object()))
    assert not _fold._sweeps_on_gpus(Call("cpu", client=object()))
    assert not _fold._sweeps_on_gpus(Call("auto"))


def test_cpu_workers_have_no_gpu(client):
    assert not _dask.workers_have_gpus(client)


def test_a_worker_declines_chains_its_engine_does_not_serve():
    """A worker resolves the engine on the problem without its chain plan, as the call is
    resolved here; when that engine cannot serve the plan the worker declines it
    (SlotWeightsDeclined: the caller sweeps the core unfolded)."""
    from turbobc._chains import ChainFolding, find_chains
    from turbobc.engines.protocol import SlotWeightsDeclined

    graph = turbobc._graph.Graph(pattern=sp.csr_array(adjacency(_cycle_with_trees()),
                                                      dtype=np.float64), directed=False)
    plan = ChainFolding(graph, np.ones(graph.n), find_chains(graph))
    served = turbobc.engines.protocol.Problem(graph, slot_weights=plan)
    assert _dask_worker._engine_for("cpu", served).name == "cpu"
    with pytest.raises(SlotWeightsDeclined, match="does not serve the folded chains"):
        _dask_worker._engine_for("graphblas", dataclasses.replace(served, endpoints=True))


def test_the_last_chunks_taper():
    """Chunks of the automatic size, and at the end ever smaller ones down to the smallest:
    the boundaries depend on the sources and the batch alone."""
    smallest = _dask.CHUNK_MIN_SOURCES
    for total in (10_000, 100_003, 5_000):
        sources = np.arange(total, dtype=np.int64)
        size = _dask.chunk_size(total)
        chunks = _dask.chunk_sources(sources, size, smallest=smallest)
        sizes = [len(c) for c in chunks]
        np.testing.assert_array_equal(np.concatenate(chunks), sources)
        assert max(sizes[:-1]) <= size and min(sizes) >= smallest
        assert sizes[:-1] == sorted(sizes[:-1], reverse=True) and sizes[-1] < 2 * smallest
        # from the 16th last chunk on, each is at most 1/16 of what is left: up to 16
        # workers finish within about one small chunk of each other
        left = np.cumsum(sizes[::-1])[::-1]
        assert all(s <= max(smallest, -(-int(rest) // _dask.TAPER))
                   for s, rest in zip(sizes[-_dask.TAPER:-1], left[-_dask.TAPER:-1]))
        assert len(chunks) < 3 * _dask.CHUNKS
    # a GPU's batch as large as the chunk: no taper
    assert len(_dask.chunk_sources(np.arange(10_000), 4096, smallest=4096)) == 3


def test_a_graph_travels_compactly():
    """A graph pickles as its index arrays in the smallest type, without the pattern's ones,
    and comes back with its own index types (a worker's engines see what the caller's
    would)."""
    import pickle

    A = sp.random(500, 500, density=0.02, format="csr", random_state=1)
    A = sp.csr_array((np.ones(A.nnz), A.indices.astype(np.int64), A.indptr.astype(np.int64)),
                     shape=A.shape)
    graph = turbobc._graph.Graph(pattern=A, directed=True)
    assert graph.depth_estimate >= 0 and graph.out_degree.size == 500
    copy = pickle.loads(pickle.dumps(graph, protocol=5))
    assert copy.pattern.indices.dtype == np.int64 and copy.pattern.indptr.dtype == np.int64
    assert (copy.pattern != A).nnz == 0 and copy.directed and copy.lengths is None
    assert copy.__dict__.get("depth_estimate") == graph.depth_estimate
    assert "out_degree" not in copy.__dict__
    assert len(pickle.dumps(graph, protocol=5)) < 0.3 * (A.data.nbytes + A.indices.nbytes)
    problem = turbobc.engines.protocol.Problem(graph)
    assert _dask.problem_bytes(problem) == 4 * (501 + A.nnz)


def test_the_callers_knobs_hold_on_the_workers(client):
    """turbobc.tuning on the client is in force while the workers sweep."""
    A, _ = _matrix("karate")
    with turbobc.tuning(cpu_batch_cap=4 * 34, fold_trees=False):
        small = run_bc(A, engine="graphblas", client=client)
    plain = run_bc(A, engine="graphblas", client=client)
    assert small.facts["batch"] <= 4 < plain.facts["batch"]
    np.testing.assert_allclose(small.values, plain.values, rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_warm_up_loads_every_workers_code(client):
    warmed = _dask.warm_up(client, "cpu")
    assert set(warmed) == set(client.nthreads())
    assert all(w["sweeps"]["engines"] == ["cpu"] for w in warmed.values())
    assert all(w["cpu_functions"]["functions"] >= 1 for w in warmed.values())


def test_local_gpu_cluster_gives_each_worker_its_share_of_the_host(monkeypatch):
    """Without dask_cuda, each GPU worker may hold 1/gpus of the host's memory (Dask's own
    default for one thread, the host's memory by core, made the nanny restart a worker
    receiving kron24's graph), one thread, its own device."""
    import builtins

    import dask
    from distributed import Client
    from distributed.system import MEMORY_LIMIT

    real_import = builtins.__import__

    def no_dask_cuda(name, *args, **kwargs):  # the fallback, whether or not it is installed
        if name == "dask_cuda":
            raise ImportError("dask_cuda is hidden for this test")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask_cuda)
    monkeypatch.setattr("turbobc._engines.gpu_count", lambda: 2)  # a host of two, so far
    # as the cluster's check of the GPUs asked for knows
    # Dask's NVML monitor off in the workers: it counts the host's GPUs whatever a worker's
    # CUDA_VISIBLE_DEVICES, and on a host of fewer than two GPUs worker gpu1's handle for
    # device "1" raised while the worker started ("Nanny failed to start")
    with dask.config.set({"distributed.diagnostics.nvml": False}), \
            _dask.local_gpu_cluster(2) as cluster, Client(cluster) as client:
        client.wait_for_workers(2)
        seen = client.run(lambda dask_worker: (dask_worker.memory_manager.memory_limit,
                                               dask_worker.state.nthreads,
                                               os.environ.get("CUDA_VISIBLE_DEVICES")))
    assert sorted(device for _, _, device in seen.values()) == ["0", "1"]
    assert all(limit == MEMORY_LIMIT // 2 and threads == 1 for limit, threads, _ in seen.values())


def test_local_gpu_cluster_refuses_more_gpus_than_the_host_has(monkeypatch):
    """One worker a GPU: asking a one-GPU host for two is an error that says so, before any
    worker starts (the second worker's missing device had failed as "Nanny failed to
    start")."""
    monkeypatch.setattr("turbobc._engines.gpu_count", lambda: 1)
    with pytest.raises(ValueError, match=r"^gpus=2, but CuPy sees 1 GPU\(s\) on this "
                                         r"machine: one worker a GPU, so at most gpus=1$"):
        _dask.local_gpu_cluster(2)
    with pytest.raises(ValueError, match="gpus must be at least 1; got 0"):
        _dask.local_gpu_cluster(0)


@pytest.mark.parametrize("weighted", [False, True])
def test_a_large_graph_goes_through_shared_memory(client, monkeypatch, weighted, cpu_engine):
    """From SHARED_FROM stored edges (lowered here to every graph) a call's graph reaches the
    workers of the client's host through a folder in shared memory, written once and mapped
    by each: the same values as the local run, the facts say so, and the folder is gone
    once the call ends."""
    from turbobc import _dask_shared

    monkeypatch.setattr(_dask_shared, "SHARED_FROM", 0)
    # the folders this call makes (not a listing of SHARED_ROOT before and after: tests in
    # other processes, under pytest -n, make and remove theirs there meanwhile)
    made, real_share = [], _dask_shared.share

    def recording_share(client, graph):
        folder = real_share(client, graph)
        made.extend([folder] if folder else [])
        return folder

    monkeypatch.setattr(_dask_shared, "share", recording_share)
    G = GRAPH_CASES["barbell"]()
    A = adjacency(with_lengths(G, "int100", seed=3) if weighted else G)
    local = run_bc(A, weight=weighted, engine=cpu_engine)
    with turbobc.tuning(dask_chunk_sources=5):
        spread = run_bc(A, weight=weighted, engine=cpu_engine, client=client)
    assert spread.facts["graph_via"] == "shared memory"
    np.testing.assert_allclose(spread.values, local.values, rtol=1e-12, atol=1e-15)
    assert made and all(os.path.dirname(folder) == _dask_shared.SHARED_ROOT for folder in made)
    assert not any(os.path.exists(folder) for folder in made)  # gone once the call ended
    # below the threshold the arrays travel by TCP, as before
    monkeypatch.setattr(_dask_shared, "SHARED_FROM", A.nnz + 1)
    again = run_bc(A, weight=weighted, engine=cpu_engine, client=client)
    assert again.facts["graph_via"] == "tcp"
    np.testing.assert_allclose(again.values, local.values, rtol=1e-12, atol=1e-15)


def test_shared_arrays_are_written_in_parts_and_cast(tmp_path, monkeypatch):
    """_dask_shared._write: an array cast to the compact type, its parts copied on threads,
    reads back equal as an .npy file (and an empty one too)."""
    from turbobc import _dask_shared

    monkeypatch.setattr(_dask_shared, "WRITE_THREADS", 4)
    values = np.random.default_rng(5).integers(0, 2**31 - 1, 2**22 + 3, dtype=np.int64)
    _dask_shared._write(str(tmp_path / "indices.npy"), values, np.int32)
    back = np.load(tmp_path / "indices.npy", mmap_mode="r")
    assert back.dtype == np.int32 and np.array_equal(back, values)
    _dask_shared._write(str(tmp_path / "empty.npy"), np.zeros(0), np.float64)
    assert np.load(tmp_path / "empty.npy").shape == (0,)


def test_a_shared_graph_unpickles_mapped_and_read_only(tmp_path, monkeypatch):
    """A graph marked with a shared folder pickles as the folder's name and comes back with
    the same pattern and lengths, mapped read-only, its ones a view; a worker that cannot see
    the folder keeps the TCP path (share returns None)."""
    import pickle

    from turbobc import _dask_shared
    from turbobc._graph import Graph

    A = sp.random(300, 300, density=0.03, format="csr", random_state=2)
    A = sp.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=A.shape)
    lengths = np.arange(1.0, A.nnz + 1.0)
    graph = Graph(pattern=A, directed=True, lengths=lengths)

    class SeeingClient:  # every "worker" sees the folder: this process
        def run(self, function, *args):
            return {"w": function(*args)}

    monkeypatch.setattr(_dask_shared, "SHARED_FROM", 0)
    monkeypatch.setattr(_dask_shared, "SHARED_ROOT", str(tmp_path))
    folder = _dask_shared.share(SeeingClient(), graph)
    assert folder is not None and os.path.dirname(folder) == str(tmp_path)
    graph.__dict__["_shared_folder"] = folder
    data = pickle.dumps(graph)
    assert len(data) < 1000  # the folder's name, not the arrays
    back = pickle.loads(data)
    assert (back.pattern != A).nnz == 0 and back.pattern.indices.dtype == A.indices.dtype
    np.testing.assert_array_equal(back.lengths, lengths)
    assert not back.pattern.indices.flags.writeable and not back.pattern.data.flags.writeable
    assert back.pattern.data.strides == (0,)
    _dask_shared.release(folder)
    assert not os.path.exists(folder)

    class BlindClient:  # a worker on another host does not see it
        def run(self, function, *args):
            return {"w": True, "elsewhere": False}

    assert _dask_shared.share(BlindClient(), graph) is None
    assert os.listdir(tmp_path) == []

    def full(fd, offset, length):  # a tmpfs without room: no SIGBUS later, OSError now
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_dask_shared.os, "posix_fallocate", full)
    assert _dask_shared.share(SeeingClient(), graph) is None
    assert os.listdir(tmp_path) == []


def test_the_facts_name_each_chunks_relabeling_where_a_family_relabels():
    """``chunk_order_seconds``: each chunk's ``order_seconds`` (the frontiers family
    relabels the graph in a worker's first chunk), absent where no chunk reported one."""
    client = type("Client", (), {"nthreads": lambda self: {"a": 1, "b": 1}})()

    def result(worker, **facts):
        return _dask_worker.ChunkResult(partial=None, seconds=0.5, worker=worker,
                                        engine="gpu", memory_retries=0, facts=facts)

    chunks = [np.arange(3)] * 3
    relabeled = [result("a", order_seconds=0.3), result("b", order_seconds=0.2),
                 result("a", order_seconds=0.0)]
    facts = _dask._facts(relabeled, chunks, {}, 0, client, _problem(None))
    assert facts["chunk_order_seconds"] == [0.3, 0.2, 0.0]
    plain = [result("a"), result("b"), result("a")]
    assert "chunk_order_seconds" not in _dask._facts(plain, chunks, {}, 0, client,
                                                      _problem(None))


def _deep_problem():
    """A 30 x 30 grid: deep enough for the GPU's frontiers family under ``"auto"``."""
    A = sp.csr_array(nx.to_scipy_sparse_array(nx.grid_2d_graph(30, 30)))
    A.data[:] = 1.0
    return turbobc.engines.protocol.Problem(turbobc._graph.Graph(pattern=A, directed=False))


def test_the_client_builds_the_frontiers_order_once_for_every_gpu_worker(monkeypatch):
    """built_ahead computes the frontiers family's locality order where the workers' GPU
    engine would choose that family, keeps it on the graph, and the graph carries it (and
    the depth answers) to the workers when pickled; nothing is built for CPU workers, one
    source, or a family that needs no order."""
    import pickle

    from turbobc.engines.gpu import lanes_order

    problem = _deep_problem()
    assert _dask.built_ahead(problem, "cpu", None, 900) == 0.0
    assert _dask.built_ahead(problem, "gpu", None, 1) == 0.0
    assert "_locality" not in problem.graph.__dict__
    assert _dask.built_ahead(problem, "gpu", None, 900) > 0.0
    kept = problem.graph.__dict__["_locality"]["rcm"]
    travelled = pickle.loads(pickle.dumps(problem.graph))
    monkeypatch.setattr(lanes_order, "_locality_order", _not_again)
    rank, order, _ = lanes_order.locality_order(travelled, "rcm")
    np.testing.assert_array_equal(rank, kept[0])
    # the depth the family's choice predicted from travels too
    assert order == "rcm" and "depth_estimate" in travelled.__dict__
    with turbobc.tuning(gpu_family="lanes"):  # a family that orders no graph ahead
        assert _dask.built_ahead(_deep_problem(), "gpu", None, 900) == 0.0


def _not_again(*args):
    raise AssertionError("the locality order was computed again")


def test_a_gpu_call_builds_ahead_only_where_the_workers_have_gpus(client):
    """engine="auto" asks the workers first: CPU workers get nothing built ahead."""
    problem = _deep_problem()
    assert _dask.built_ahead(problem, "auto", client, 900) == 0.0
    assert "_locality" not in problem.graph.__dict__
