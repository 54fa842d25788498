"""Scale-out through Dask (turbobc/_dask.py) on a LocalCluster of CPU worker processes:
the same numbers as without ``client=``, the same bits for any number of workers, a worker
killed in the middle of a run, and failures reported with the worker's traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
from graph_cases import GRAPH_CASES
from turbobc import _dask
from turbobc._api import run_bc
from turbobc.engines.protocol import Partial

distributed = pytest.importorskip("distributed", reason="dask.distributed is in the test extra")

CASES = ["karate", "grid_deep_2x40", "two_components_isolated", "digraph_gnp",
         "digraph_sparse_unreachable", "barbell"]


def _cluster(workers: int):
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", silence_logs=40)


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
    part, retries, _ = _dask._run_with_memory_retries(state, _problem(1000), "t", "auto",
                                                      np.arange(3))
    assert retries == 2 and state.budgets == [1000, 500, 250]
    np.testing.assert_array_equal(part.vertex, [3.0, 3.0, 3.0])
    with pytest.raises(MemoryError):
        _dask._run_with_memory_retries(_FakeState(failures=3), _problem(1000), "t", "auto",
                                       np.arange(3))


def test_chunks_depend_on_the_number_of_sources_alone():
    sources = np.arange(10_000, dtype=np.int64)
    size = _dask.chunk_size(len(sources))
    chunks = _dask.chunk_sources(sources, size)
    assert len(chunks) == _dask.CHUNKS
    np.testing.assert_array_equal(np.concatenate(chunks), sources)
    assert max(map(len, chunks)) - min(map(len, chunks)) <= 1
    # a GPU plans batches of thousands: a chunk is never smaller than the batch
    assert len(_dask.chunk_sources(sources, _dask.chunk_size(len(sources), 4096))) == 3
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
    assert all(after[w][0] - before[w][0] <= 1 for w in after)
    assert sum(after[w][0] - before[w][0] for w in after) == result.facts["workers_used"]
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
    that two GPUs are there, the workers find none and run the cpu engine)."""
    import turbobc._engines
    from turbobc.cli import main

    path = _edge_list(tmp_path)
    monkeypatch.setattr(turbobc._engines, "gpu_count", lambda: 2)
    assert main(["bc", str(path), "--gpus", "2", "-o", str(tmp_path / "c.csv")]) == 0
    assert "Dask worker(s), engine cpu" in capsys.readouterr().out
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
