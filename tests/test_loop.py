"""The one loop and the layers around it: one place opens a sweeper whatever the schedule
(exact, folded, k sampled, approximate, edge BC), an adaptive schedule hands sets until it
stops, the registry is one table, the GPU kernels' errors keep their classes, and imports go
one way (no cycle, spmv below turbobc, the executors and engines below the loop)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import turbobc
from turbobc._api import run_bc, run_edge_bc
from turbobc._graph import Graph
from turbobc._rescale import check_finite
from turbobc._run import Schedule, run_schedule
from turbobc.engines import AUTO_ORDER, ENGINES, REGISTRY, engine_named
from turbobc.engines.graphblas import GraphblasEngine
from turbobc.engines.protocol import Partial, Problem, SlotWeightsDeclined

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def opened(monkeypatch):
    """Every ``GraphblasEngine.open`` of the test, as the module that called it."""
    callers = []
    real = GraphblasEngine.open

    def open_and_record(self, problem):
        callers.append(sys._getframe(1).f_globals["__name__"])
        return real(self, problem)

    monkeypatch.setattr(GraphblasEngine, "open", open_and_record)
    return callers


def _karate():
    G = nx.karate_club_graph()  # vertex 11 hangs off 0: a tree to fold
    return G, nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")


def _folded(run, A):
    with turbobc.tuning(fold_min_share=0.0):  # fold even karate's one hanging vertex
        result = run(A, engine="graphblas")
    assert result.facts["folded"] > 0
    return result


def _sampled(run, A):
    result = run(A, engine="graphblas", epsilon=0.1, seed=1)
    assert result.facts["samples"] < A.shape[0]  # sampled, not exact
    return result


CALLS = {
    "exact, folded": lambda A: _folded(run_bc, A),
    "exact, directed": lambda A: run_bc(A, engine="graphblas", directed=True),
    "given sources": lambda A: run_bc(A, engine="graphblas", sources=[0, 5, 9]),
    "k sampled": lambda A: run_bc(A, engine="graphblas", k=7, seed=3),
    "targets": lambda A: run_bc(A, engine="graphblas", targets=[1, 2, 3]),
    "edge, folded": lambda A: _folded(run_edge_bc, A),
    "approximate": lambda A: _sampled(run_bc, A),
    "edge, approximate": lambda A: _sampled(run_edge_bc, A),
}


@pytest.mark.parametrize("name", CALLS)
def test_one_place_opens_a_sweeper(opened, name):
    """Each call opens exactly one sweeper, through the local executor (the one place that
    calls ``Engine.open``), whatever its schedule: an approximation's checkpoints share it."""
    if "approximate" in name:  # large enough to sample: a pilot, then checkpoints
        A = nx.to_scipy_sparse_array(nx.barabasi_albert_graph(600, 2, seed=2), format="csr")
    else:
        A = _karate()[1]
    result = CALLS[name](A)
    assert opened == ["turbobc._executor"], name
    if "approximate" in name:  # several source sets, one sweeper
        assert result.facts["pilot_samples"] > 0 and len(result.facts["checkpoints"]) > 1


def test_chain_folding_opens_through_the_loop(opened, monkeypatch):
    """Folded chains open one sweeper; a plan declined midway opens a second, for the
    unfolded sweep, through the same place."""
    G = nx.cycle_graph(40)
    G.add_edges_from([(0, 20), (10, 30)])  # four ends of degree 3, chains between them
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0):
        folded = run_bc(A, engine="graphblas")
    assert folded.facts["chain_folded"] > 0
    assert opened == ["turbobc._executor"]

    from turbobc._chains import ChainFolding

    def decline(self, index, counts):
        raise SlotWeightsDeclined("declined for the test")

    monkeypatch.setattr(ChainFolding, "add_target_weights", decline)
    opened.clear()
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0):
        unfolded = run_bc(A, engine="graphblas")
    assert "chain_folded" not in unfolded.facts
    assert opened == ["turbobc._executor", "turbobc._executor"]
    np.testing.assert_allclose(unfolded.values, folded.values, rtol=1e-12, atol=1e-12)


class _Halves(Schedule):
    """An adaptive schedule: hands the even vertices, then, having seen their sums, the odd
    ones; records what each set gave back."""

    def __init__(self, n):
        self.n, self.most, self.parts = n, n, []

    def drive(self, sweep):
        part = sweep(np.arange(0, self.n, 2))
        self.parts.append(part)
        if part.sources < self.n:  # the stopping rule: every vertex swept
            self.parts.append(sweep(np.arange(1, self.n, 2)))


class _Recorder:
    def __init__(self):
        self.done = 0

    def update(self, n=1):
        self.done += n


def test_an_adaptive_schedule_hands_sets_until_it_stops():
    """The loop hands each set's Partial back to the schedule, sums them all, and counts
    every source on the caller's progress object."""
    G, A = _karate()
    problem = Problem(Graph(pattern=A, directed=False))
    schedule, recorder = _Halves(A.shape[0]), _Recorder()
    total, facts = run_schedule(problem, "graphblas", schedule, progress=recorder)
    whole, _ = run_schedule(problem, engine_named("graphblas"), [np.arange(A.shape[0])])
    assert [part.sources for part in schedule.parts] == [17, 17]
    assert total.sources == recorder.done == A.shape[0]
    np.testing.assert_allclose(total.vertex, whole.vertex, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose((schedule.parts[0] + schedule.parts[1]).vertex, total.vertex,
                               rtol=0, atol=0)
    assert facts["engine"] == "graphblas"


def test_a_schedule_must_say_how_it_drives():
    with pytest.raises(NotImplementedError):
        Schedule().drive(lambda sources: Partial.zeros(1))


def test_the_loop_refuses_what_the_engine_cannot_serve():
    _, A = _karate()
    problem = Problem(Graph(pattern=A, directed=False), kernel="vecsc")
    with pytest.raises(ValueError, match="^the graphblas engine cannot run this: kernel="
                                         "'vecsc' names a GPU kernel"):
        run_schedule(problem, "graphblas", [np.arange(3)])


def test_the_registry_is_one_table():
    """Every accepted engine name is "auto" or a line of the registry, "auto" tries
    registered engines, and each builds the engine of its name."""
    assert ENGINES == ("auto", *REGISTRY)
    assert set(AUTO_ORDER) <= set(REGISTRY)
    for name in REGISTRY:
        assert engine_named(name).name == name


def test_kernel_errors_keep_their_classes():
    """The kernel layer's errors live in spmv (which imports nothing from turbobc) and are
    the same classes under turbobc.exceptions."""
    import spmv.errors
    from turbobc import exceptions

    assert exceptions.KernelCompileError is spmv.errors.KernelCompileError
    assert exceptions.TurboBCError is spmv.errors.TurboBCError
    assert issubclass(exceptions.KernelCompileError, exceptions.TurboBCError)
    assert issubclass(exceptions.KernelCompileError, RuntimeError)
    assert issubclass(exceptions.GPUUnavailableError, exceptions.TurboBCError)
    assert isinstance(exceptions.KernelCompileError("x.cu failed"), exceptions.TurboBCError)


def test_a_non_finite_sum_is_refused():
    check_finite(np.array([0.0, 2.5]), "graphblas")
    with pytest.raises(OverflowError, match=r"^the gpu engine produced 2 non-finite "
                                            r"betweenness sums \(first at vertex 1\)"):
        check_finite(np.array([0.0, np.inf, np.nan]), "gpu")


# ---------------------------------------------------------------- imports go one way


def _imports() -> dict[str, set[str]]:
    """Module -> the library modules it imports, at any level (function-level too)."""
    paths = {}
    for package in ("turbobc", "spmv"):
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            paths[name] = path
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                wanted = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                stem = node.module or ""
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    stem = ".".join(base + ([node.module] if node.module else []))
                wanted = [stem] + [f"{stem}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in wanted:
                while target and target not in paths:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.add(target)
        graph[name] = found
    return graph


def _reaches(graph, start) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        for target in graph[stack.pop()]:
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def test_no_import_cycle():
    """No module of turbobc or spmv reaches itself through imports, function-level ones
    and a package's own __init__ included."""
    graph = _imports()
    assert [name for name in sorted(graph) if name in _reaches(graph, name)] == []


def test_layers_point_down():
    """spmv imports nothing from turbobc; the executors and the engines import nothing of
    the loop or of what sits above it (folding, approximation, validation, the API)."""
    graph = _imports()
    assert {name: sorted(t for t in targets if t.startswith("turbobc"))
            for name, targets in graph.items()
            if name.startswith("spmv") and any(t.startswith("turbobc") for t in targets)} == {}
    above = {"turbobc._run", "turbobc._fold", "turbobc._approx", "turbobc._validation",
             "turbobc._api", "turbobc"}
    below = ["turbobc._executor", "turbobc._dask", "turbobc._dask_worker"] + [name for name in graph
                                                     if name.startswith("turbobc.engines")]
    assert {name: sorted(_reaches(graph, name) & above) for name in below
            if _reaches(graph, name) & above} == {}
