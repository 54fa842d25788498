"""The engine protocol, the one loop, the tuning knobs and thread safety (issue 18)."""

from __future__ import annotations

import ast
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
from turbobc._run import engine_named, run_schedule
from turbobc._tuning import Tuning, current

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
    with pytest.raises(ValueError, match="engine must be 'gpu' or 'graphblas'"):
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
    """No `global` statement and no module-level `last_*` result holder in turbobc/ or spmv/;
    the bench sets no attribute of a turbobc or spmv module."""
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
    for path in (ROOT / "bench").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                        owner = target.value.id
                        assert not (owner.startswith("_") or owner in ("sb", "spmv", "turbobc")),\
                            f"{path.name}: sets {owner}.{target.attr}"
