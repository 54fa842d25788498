"""The engine protocol, the one loop, the tuning knobs and thread safety (issue 18)."""

from __future__ import annotations

import ast
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import turbobc
from oracles import networkx_bc
from turbobc._api import run_bc
from turbobc._graph import Graph
from turbobc.engines.protocol import Partial, Problem
from turbobc._run import run_schedule
from turbobc.engines import engine_named, resolve_engine
from turbobc._tuning import Tuning, current
from turbobc._validation import validate
from turbobc.exceptions import GPUUnavailableError

ROOT = Path(__file__).resolve().parents[1]


def _graphs():
    cases = [nx.karate_club_graph(), nx.grid_2d_graph(7, 9),
             nx.gnp_random_graph(70, 0.06, seed=4, directed=True),
             nx.barabasi_albert_graph(90, 2, seed=5), nx.path_graph(40)]
    return [(G, nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")) for G in cases]


def test_partials_add_and_refuse_mixed_kinds():
    a = Partial(vertex=np.array([1.0, 2.0]), sources=1)
    b = Partial(vertex=np.array([0.5, 0.0]), sources=2)
    total = a + b
    np.testing.assert_array_equal(total.vertex, [1.5, 2.0])
    assert total.sources == 3 and total.edge is None
    with pytest.raises(ValueError, match="cannot add a Partial"):
        a + Partial(vertex=np.zeros(2), sources=1, edge=np.zeros(3))


def test_split_schedule_adds_up_to_the_whole():
    """Partials of disjoint source sets add to the partial of their union (the reduce of a
    sampling schedule or a Dask map), through the one loop."""
    G, A = _graphs()[3]
    graph = Graph(pattern=A, directed=False)
    problem = Problem(graph, endpoints=True)
    engine = engine_named("graphblas")
    whole, facts = run_schedule(problem, engine, [np.arange(graph.n)])
    parts, _ = run_schedule(problem, engine, [np.arange(0, graph.n, 2), np.arange(1, graph.n, 2)])
    assert whole.sources == parts.sources == graph.n
    np.testing.assert_allclose(parts.vertex, whole.vertex, rtol=1e-12, atol=1e-12)
    assert facts["engine"] == "graphblas" and facts["batches"] >= 1


def test_one_sweeper_serves_many_runs():
    G, A = _graphs()[0]
    graph = Graph(pattern=A, directed=False)
    with engine_named("graphblas").open(Problem(graph)) as sweeper:
        first = sweeper.run(np.array([0, 1, 2]))
        again = sweeper.run(np.array([0, 1, 2]))
        rest = sweeper.run(np.arange(3, graph.n))
    np.testing.assert_array_equal(first.vertex, again.vertex)
    expected = networkx_bc(G, selection="all", normalized=False, endpoints=False) * 2
    np.testing.assert_allclose((first + rest).vertex, expected, rtol=1e-12, atol=1e-12)


def test_can_serve_gives_reasons():
    graph = Graph(pattern=_graphs()[0][1], directed=False)
    reason = engine_named("graphblas").can_serve(Problem(graph, kernel="vecsc"))
    assert "GPU kernel" in reason
    assert engine_named("graphblas").can_serve(Problem(graph)) is None
    with pytest.raises(ValueError, match="^engine must be 'gpu', 'cpu' or 'graphblas'; got "):
        engine_named("tpu")


def test_run_bc_returns_bc_and_the_facts():
    G, A = _graphs()[1]
    values, facts = run_bc(A, engine="graphblas")
    np.testing.assert_array_equal(values, turbobc.bc(A, engine="graphblas"))
    assert facts["engine"] == "graphblas" and facts["wide_sources"] == 0


def test_tuning_is_scoped_and_checked():
    assert current() == Tuning()
    with turbobc.tuning(push_ratio=3, order="rcm") as knobs:
        assert knobs.push_ratio == 3 and current().order == "rcm"
        with turbobc.tuning(push_ratio=5):
            assert current().push_ratio == 5 and current().order == "rcm"
        assert current().push_ratio == 3
    assert current() == Tuning()
    with pytest.raises(TypeError, match=r"unknown tuning knob\(s\) \['push'\]"):
        with turbobc.tuning(push=3):
            pass


def test_tuning_is_per_thread():
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def tuned():
        with turbobc.tuning(max_batch=64):
            inside.set()
            release.wait(10)
            seen["tuned"] = current().max_batch

    worker = threading.Thread(target=tuned)
    worker.start()
    inside.wait(10)
    seen["other"] = current().max_batch  # while the worker holds its setting
    release.set()
    worker.join()
    assert seen == {"tuned": 64, "other": Tuning().max_batch}


@pytest.mark.parametrize("engine", ["graphblas", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_threads_on_different_graphs_equal_sequential_calls(engine):
    """bc() from several threads at once on different graphs returns what sequential calls
    return (no shared results or knobs)."""
    cases = _graphs()
    sequential = [turbobc.bc(A, engine=engine) for _, A in cases]
    with ThreadPoolExecutor(max_workers=len(cases)) as pool:
        for _ in range(3):
            parallel = list(pool.map(lambda case: turbobc.bc(case[1], engine=engine), cases))
            for got, want in zip(parallel, sequential):
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_no_module_state_for_results_or_knobs():
    """No `global` statement and no module-level `last_*` result holder in turbobc/ or spmv/
    (that the bench sets no module attribute: test_bench_sets_no_module_attribute)."""
    for path in list((ROOT / "turbobc").glob("*.py")) + list((ROOT / "spmv").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            assert not isinstance(node, ast.Global), f"{path.name}: global statement"
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    name = getattr(target, "id", "")
                    assert not name.startswith("last_"), f"{path.name}: {name}"


_IMPORTS = re.compile(r"^[ \t(\"']*(?:import[ \t]+((?:turbobc|spmv)[\w.]*(?:[ \t]+as[ \t]+\w+)?)"
                      r"|from[ \t]+(?:turbobc|spmv)[\w.]*[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+))",
                      re.MULTILINE)
_PATCHING = re.compile(r"\bsetattr\(|\bmonkeypatch\b|\bmock\b|\.__dict__\[")


def _module_attribute_writes(text: str) -> list[str]:
    """The lines of ``text`` (Python, or code inside strings and shell scripts) that assign
    an attribute of a turbobc or spmv module, or its alias, or that monkeypatch."""
    text = text.replace("\\n", "\n").replace(";", "\n")  # code in a "...\\n..." string
    names = {"turbobc", "spmv"}
    for plain, imported in _IMPORTS.findall(text):
        for item in (plain or imported.strip("() \n")).split(","):
            words = item.split()
            if words:
                names.add(words[-1])  # `a.b as c` -> c; `a.b` -> a.b; `name` -> name
    written = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    assign = re.compile(rf"(?<![\w.])(?:{written})(?:\.\w+)+\s*"
                        rf"(?:[-+*/%|&^@]|//|\*\*|<<|>>)?=(?!=)")
    return [line.strip() for line in text.splitlines()
            if assign.search(line) or _PATCHING.search(line)]


def test_bench_attribute_check_sees_what_the_old_bench_did():
    old_child = ("import turbobc\nimport turbobc.engines.graphblas as g\n"
                 "g.BYTES_PER_SLOT = 1\ng.COLLECT_ABOVE_SLOTS = float('inf')\n"
                 "import turbobc._run as run_loop\n"
                 "run_loop.source_progress = lambda total, enabled, engine: Recorder()\n"
                 "from turbobc.engines.gpu import (batched as _b,\n  single)\n"
                 "_b.MAX_BATCH += 1\nsingle.X = 2\nturbobc._tuning.DEFAULT = 3\n"
                 "setattr(g, 'Y', 1)\nmonkeypatch.setattr(spmv, 'KERNELS', ())\n")
    assert _module_attribute_writes(old_child) == [
        "g.BYTES_PER_SLOT = 1", "g.COLLECT_ABOVE_SLOTS = float('inf')",
        "run_loop.source_progress = lambda total, enabled, engine: Recorder()",
        "_b.MAX_BATCH += 1", "single.X = 2", "turbobc._tuning.DEFAULT = 3",
        "setattr(g, 'Y', 1)", "monkeypatch.setattr(spmv, 'KERNELS', ())"]
    # as bench/cpu_memory.py held it: code in string literals, lines joined by \\n
    in_strings = ('_OLD = ("import turbobc\\nimport turbobc.engines.graphblas as g\\n"\n'
                  '        "g.BYTES_PER_SLOT = 1  # memory never lowers it\\n")\n')
    assert _module_attribute_writes(in_strings) == ['"g.BYTES_PER_SLOT = 1  # memory never '
                                                    'lowers it']
    harmless = ("import turbobc\nknobs = turbobc.tuning(order='rcm')\nrecord.x = 1\n"
                "if turbobc.bc(A) == 1: pass\nturbobc.bc(A, progress=Recorder())\n")
    assert _module_attribute_writes(harmless) == []


def test_bench_sets_no_module_attribute():
    """bench/ changes the library only through its public means (``turbobc.tuning``,
    ``bc``'s arguments): no file, and no code inside a string of one (the children of
    bench/cpu_memory.py), assigns an attribute of a turbobc or spmv module or monkeypatches."""
    paths = sorted((ROOT / "bench").glob("*.py")) + sorted((ROOT / "bench").glob("*.sh"))
    assert paths
    found = {path.name: _module_attribute_writes(path.read_text()) for path in paths}
    assert {name: lines for name, lines in found.items() if lines} == {}


# ------------------------------------------------- which engine serves: can_serve, asked once


@pytest.fixture
def gpu_serves(monkeypatch):
    """Set what the GPU engine's can_serve answers (None: it serves), whatever this machine
    has: the choice of engine must follow it, not a device query of its own."""
    from turbobc.engines.gpu.engine import GpuEngine

    def set_answer(reason):
        monkeypatch.setattr(GpuEngine, "can_serve", lambda self, problem: reason)

    return set_answer


def test_resolve_engine_follows_can_serve(gpu_serves):
    graph = Graph(pattern=_graphs()[0][1], directed=False)
    plain, named = Problem(graph), Problem(graph, kernel="vecsc")
    gpu_serves(None)
    assert resolve_engine("auto", plain).name == "gpu"
    assert resolve_engine("auto", named).name == "gpu"
    assert resolve_engine("gpu", named).name == "gpu"
    assert resolve_engine("graphblas", plain).name == "graphblas"
    assert resolve_engine("cpu", plain).name == "cpu"
    gpu_serves("no usable GPU: a test says so")
    assert resolve_engine("auto", plain).name == "cpu"
    with pytest.raises(GPUUnavailableError, match=r"^kernel='vecsc' needs a usable GPU, and "
                       r"the GPU engine cannot run here \(no usable GPU: a test says so\)"):
        resolve_engine("auto", named)
    with pytest.raises(GPUUnavailableError, match=r"^engine='gpu' needs a usable GPU"):
        resolve_engine("gpu", plain)
    with pytest.raises(ValueError, match="^engine='graphblas' cannot run this: kernel='vecsc' "
                                         "names a GPU kernel"):
        resolve_engine("graphblas", named)


def test_validation_takes_the_engine_can_serve_chooses(gpu_serves):
    """engine="auto" is whatever the engines' can_serve say, not a device check of validation's
    own: a GPU engine that serves is chosen even on this machine, one that refuses is not."""
    A = _graphs()[0][1]
    args = dict(sources=None, k=None, seed=None, normalized=True, endpoints=False,
                directed=None, kernel="auto", progress=False)
    gpu_serves(None)
    assert validate(A, engine="auto", **args).engine == "gpu"
    gpu_serves("the graph is too large for it (a test)")
    assert validate(A, engine="auto", **args).engine == "cpu"
    values, facts = run_bc(A, engine="auto")
    assert facts["engine"] == "cpu"


@pytest.mark.parametrize("engine, kernel, error", [("gpu", "auto", GPUUnavailableError),
                                                   ("auto", "sccsc", GPUUnavailableError),
                                                   ("graphblas", "vecsc", ValueError)])
def test_refusals_come_before_any_engine_opens(gpu_serves, monkeypatch, engine, kernel, error):
    from turbobc.engines.gpu.engine import GpuEngine
    from turbobc.engines.graphblas import GraphblasEngine

    def must_not_open(self, problem):
        raise AssertionError("an engine was opened")

    for cls in (GpuEngine, GraphblasEngine):
        monkeypatch.setattr(cls, "open", must_not_open)
    gpu_serves("no usable GPU: a test says so")
    with pytest.raises(error):
        turbobc.bc(_graphs()[0][1], engine=engine, kernel=kernel)


# ------------------------------------------------ progress=: a bar or recorder of the caller's


class Recorder:
    """What bench/cpu_memory.py passes as progress: notes every update."""

    def __init__(self):
        self.updates = []

    def update(self, n):
        self.updates.append(n)


@pytest.mark.parametrize("engine", ["graphblas", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_progress_object_is_advanced_by_every_source(engine):
    G, A = _graphs()[3]
    n = A.shape[0]
    recorder = Recorder()
    values = turbobc.bc(A, engine=engine, progress=recorder)
    assert sum(recorder.updates) == n and all(k > 0 for k in recorder.updates)
    # the same values as without the recorder (to the last bits: the GPU's atomics add in
    # any order)
    np.testing.assert_allclose(values, turbobc.bc(A, engine=engine), rtol=1e-13, atol=1e-16)


def test_progress_object_sees_the_engine_batches():
    """An object that is not a shown tqdm bar gets the CPU engine's own batches (no pacing):
    what bench/cpu_memory.py records the resident set after."""
    G, A = _graphs()[3]
    n = A.shape[0]
    recorder = Recorder()
    # batches of 20 sources, one at a time: "auto" would sweep several at once from 8
    # GraphBLAS threads up, splitting each batch among them (batches of 5 on 16 cores)
    with turbobc.tuning(cpu_batch_cap=20 * n, fold_chains=False, cpu_concurrent_batches=1):
        turbobc.bc(A, engine="graphblas", progress=recorder)
    assert recorder.updates == [20] * (n // 20) + ([n % 20] if n % 20 else [])


def test_a_tqdm_bar_of_the_caller_is_advanced_and_left_open():
    import io

    from tqdm.auto import tqdm

    G, A = _graphs()[1]
    n = A.shape[0]
    out = io.StringIO()
    bar = tqdm(total=n, file=out, delay=0, desc="mine")
    turbobc.bc(A, engine="graphblas", progress=bar)
    assert bar.n == n and not bar.disable  # tqdm disables a bar when it closes
    bar.close()
    assert "mine" in out.getvalue()


# ---- the CPU engine's concurrent batches (Tuning.cpu_concurrent_batches) -----------------------

CONCURRENT_CASES = {
    "gnp_undirected": lambda: nx.gnp_random_graph(80, 0.06, seed=11),
    "gnp_directed": lambda: nx.gnp_random_graph(70, 0.07, seed=12, directed=True),
    "disconnected": lambda: nx.disjoint_union(nx.path_graph(25), nx.cycle_graph(30)),
    "deep_grid": lambda: nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, 40)),
    "trees_on_a_cycle": lambda: nx.Graph(  # folded into the cycle before the sweeps
        list(nx.cycle_graph(12).edges())
        + [(0, 12), (12, 13), (13, 14), (13, 15), (3, 16), (16, 17), (5, 18)]),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CONCURRENT_CASES))
@pytest.mark.parametrize("workers", [2, 3])
def test_concurrent_batches_equal_networkx(name, workers):
    """Batches swept at once in threads (each its own GraphBLAS context and sums, added in
    batch order) give networkx's vertex, subset, edge and weighted BC."""
    from oracles import assert_edge_values
    from graph_cases import with_lengths
    from turbobc._tuning import tuning

    G = CONCURRENT_CASES[name]()
    nodes = list(G)
    # (chain folding off: its batches run in turn)
    with tuning(cpu_concurrent_batches=workers, fold_chains=False):
        got = run_bc(G, engine="graphblas", endpoints=True)
        assert got.facts["concurrent_batches"] == workers and got.facts["batches"] >= workers
        np.testing.assert_allclose(
            got.values, networkx_bc(G, selection="all", normalized=True, endpoints=True),
            rtol=1e-12, atol=1e-15)
        sources, targets = nodes[::3], nodes[1::2]
        want = nx.betweenness_centrality_subset(G, sources, targets, normalized=True)
        np.testing.assert_allclose(
            turbobc.bc(G, engine="graphblas", sources=sources, targets=targets),
            [want[v] for v in nodes], rtol=1e-12, atol=1e-15)
        assert_edge_values(turbobc.edge_bc(G, engine="graphblas"), G,
                           nx.edge_betweenness_centrality(G), rtol=1e-12, atol=1e-15)
        L = with_lengths(G, "int3", seed=3)
        np.testing.assert_allclose(
            turbobc.bc(L, engine="graphblas", weight="weight"),
            networkx_bc(L, selection="all", normalized=True, endpoints=False,
                        weight="weight"), rtol=1e-12, atol=1e-15)
        assert_edge_values(turbobc.edge_bc(L, engine="graphblas", weight="weight"), L,
                           nx.edge_betweenness_centrality(L, weight="weight"),
                           rtol=1e-12, atol=1e-15)


def test_concurrent_batches_auto_and_errors(monkeypatch):
    """"auto" sweeps a quarter of GraphBLAS's threads' worth of batches at once from 8
    threads up, one batch at a time below; never more than half the sources; 0 is refused."""
    from turbobc.engines.graphblas import memory as engine
    from turbobc._tuning import tuning

    for threads, want in [(1, 1), (2, 1), (7, 1), (8, 2), (16, 4), (64, 16)]:
        monkeypatch.setattr(engine, "graphblas_threads", lambda t=threads: t)
        assert engine.concurrent_batches(1000, 100) == want
    assert engine.concurrent_batches(5, 10) == 2  # 16 threads, but 5 sources: 2 at once
    assert engine.concurrent_batches(1000, 3) == 3  # the budget holds 3 sources: 3 batches of 1
    with tuning(cpu_concurrent_batches=3):
        assert engine.concurrent_batches(1000, 10) == 3
    for bad in (0, -2, "many", 2.5, True):
        with tuning(cpu_concurrent_batches=bad):
            with pytest.raises(ValueError, match="cpu_concurrent_batches"):
                engine.concurrent_batches(1000, 10)


def test_a_failing_concurrent_batch_stops_the_run(monkeypatch):
    """The first batch's error reaches the caller without the batches behind it being swept
    (at most the window in flight runs), and its sums are not added."""
    from turbobc.engines.graphblas import sweep as engine
    from turbobc._tuning import tuning

    real, calls = engine.accumulate_batch, []

    def flaky(walks, problem, batch, raw, edge_sums=None):
        calls.append(int(batch[0]))
        if batch[0] == 0:
            raise RuntimeError("batch 0 fails")
        return real(walks, problem, batch, raw, edge_sums)

    monkeypatch.setattr(engine, "accumulate_batch", flaky)
    G = nx.cycle_graph(200)  # nothing folds: every vertex a source
    with tuning(cpu_concurrent_batches=2, cpu_batch_cap=200 * 2):  # batches of 1 source
        with pytest.raises(RuntimeError, match="batch 0 fails"):
            turbobc.bc(G, engine="graphblas")
    assert 1 <= len(calls) <= 4  # batch 0 and the window behind it, not the 200
