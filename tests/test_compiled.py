"""The CPU's compiled functions (turbobc/_compiled.py): shipped ahead in an extension built by
numba.pycc (turbobc/_aot.py) or compiled by numba at first use, the same numbers either way;
every reason to fall back said once; what a call compiled in its facts and, from the demo and
the command, in one line on stderr; ``turbobc warm-up``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import turbobc
from turbobc import _compiled

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh(monkeypatch):
    """A fresh registry: nothing found or said yet in this process."""
    monkeypatch.setattr(_compiled, "_core", [])
    monkeypatch.setattr(_compiled, "_found", {})


def test_every_entry_point_has_a_signature_per_index_type():
    for name, (module, attribute, _) in _compiled.ENTRY_POINTS.items():
        signatures = _compiled.signatures(name)
        assert set(signatures) in ({"int32", "int64"}, {"any"}), name
        for index, signature in signatures.items():
            assert "{" not in signature
            if index != "any":
                assert f"{index}[::1]" in signature and "int64[::1]" in signature
        assert _compiled.symbol(name, "int32") == f"{name}__i4"
    assert _compiled.symbol("bernstein_radii", "any") == "bernstein_radii"


def test_the_stamp_covers_every_compiled_source():
    """Every module an entry point lives in, and what its functions call, is stamped."""
    modules = {module for module, _, _ in _compiled.ENTRY_POINTS.values()}
    stamped = {("turbobc/" + f).replace("/", ".").removesuffix(".py")
               for f in _compiled.SOURCE_FILES}
    assert modules <= stamped
    assert {"turbobc.engines.cpu.walks", "turbobc.engines.cpu.accumulate"} <= stamped
    assert len(_compiled.stamp()) == 64


def test_without_the_extension_numba_compiles_and_says_so(monkeypatch, capsys, fresh):
    monkeypatch.setattr(_compiled, "_shipped_files", lambda: None)
    function = _compiled.entry("degrees_counting_loops", np.int32)
    assert hasattr(function, "dispatcher")  # numba's, compiled at first use
    assert _compiled.entry("degrees_counting_loops", np.int32) is function
    indptr, indices = np.array([0, 2, 3], dtype=np.int64), np.array([0, 1, 1], np.int32)
    np.testing.assert_array_equal(function(indptr, indices, np.int64(2)), [3, 2])
    err = capsys.readouterr().err
    assert err.count("were not compiled ahead with this install") == 1


def test_a_stale_extension_is_not_used(monkeypatch, capsys, fresh):
    monkeypatch.setattr(_compiled, "_shipped_files",
                        lambda: ({"stamp": "older", "cpu_flags": []}, Path("/nowhere")))
    assert _compiled.shipped_core() is None
    assert "were built from other sources" in capsys.readouterr().err


def test_an_extension_for_a_richer_cpu_is_not_used(monkeypatch, capsys, fresh):
    monkeypatch.setattr(_compiled, "_shipped_files", lambda: (
        {"stamp": _compiled.stamp(), "cpu_flags": ["a_feature_no_cpu_has"]}, Path("/x")))
    assert _compiled.shipped_core() is None
    assert "a CPU with features this one lacks (a_feature_no_cpu_has)" in \
        capsys.readouterr().err


def test_turbobc_aot_0_skips_the_extension(monkeypatch, capsys, fresh):
    monkeypatch.setenv("TURBOBC_AOT", "0")
    assert _compiled.shipped_core() is None
    assert capsys.readouterr().err == ""


def test_the_first_use_line():
    assert _compiled.first_use_line({"compiled": []}) is None
    line = _compiled.first_use_line({"compiled": ["bfs", "sweep_chunk", "a", "b"],
                                     "compile_seconds": 7.25})
    assert line == ("turbobc: compiled 4 function(s) at first use in 7.2 s (bfs, sweep_chunk, "
                    "a and 1 more); later calls, in this process and others, reuse them "
                    "(`turbobc warm-up` compiles everything ahead)")


def test_every_run_reports_what_it_compiled():
    A = nx.to_scipy_sparse_array(nx.karate_club_graph(), format="csr")
    for run in (turbobc.run_bc, turbobc.run_edge_bc):
        facts = run(A, engine="cpu").facts
        assert facts["compile_seconds"] >= 0 and isinstance(facts["compiled"], list)
    assert turbobc.run_bc(A, engine="cpu").facts["compiled"] == []  # nothing new


def test_warm_up_command_readies_the_cpu(capsys):
    from turbobc.cli import main

    assert main(["warm-up", "--engine", "cpu", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cpu_functions"]["functions"] >= len(_compiled.ENTRY_POINTS)
    assert report["sweeps"]["engines"] == ["cpu"] and report["seconds"] > 0
    assert main(["warm-up", "--engine", "cpu"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CPU functions: ") and "warm-up done in" in out


def _cases():
    """Graphs and calls that reach every entry point of the CPU engine."""
    grid = nx.grid_2d_graph(7, 6)
    weighted = nx.gnp_random_graph(40, 0.12, seed=3)
    for u, v in weighted.edges:
        weighted[u][v]["weight"] = float((u * 7 + v) % 5 + 1)
    digraph = nx.gnp_random_graph(45, 0.08, seed=4, directed=True)
    return [("lanes", nx.karate_club_graph(), {}),
            ("walks", grid, {}),  # deeper than the lanes take
            ("dijkstra", weighted, {"weight": True}),
            ("directed", digraph, {}),
            ("endpoints", nx.les_miserables_graph(), {"endpoints": True})]


@pytest.mark.slow
def test_the_extension_compiled_ahead_gives_numbas_numbers(tmp_path, monkeypatch):
    """numba.pycc's extension (built here, as setup.py builds it) against numba's JIT: the
    same values on every kind of call, networkx's to 1e-12, with the searches of
    turbobc/_traverse.py compiled too (SciPy's limit lowered to 0)."""
    import turbobc._traverse as traverse

    built = subprocess.run(
        [sys.executable, "-c", "import sys; from turbobc._aot import main; main(sys.argv[1:])",
         "--into", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
        env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba")))
    assert built.returncode == 0, built.stderr[-2000:]
    shipped = json.loads((tmp_path / "_aot_core.json").read_text())
    assert shipped["stamp"] == _compiled.stamp()
    library = next(tmp_path.glob("_aot_core.*.so"))
    monkeypatch.setattr(traverse, "SCIPY_BELOW_NNZ", 0)
    results = {}
    for source in ("jit", "ahead"):
        monkeypatch.setattr(_compiled, "_found", {})
        monkeypatch.setattr(_compiled, "_core", [None, None] if source == "jit" else
                            [_compiled._load_extension(library), None])
        for name, G, kwargs in _cases():
            A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
            results[source, name] = turbobc.bc(A, engine="cpu", directed=G.is_directed(),
                                               **kwargs)
            if source == "ahead":  # served by the extension, not numba
                assert all(not hasattr(f, "dispatcher") for f in _compiled._found.values())
        sampled = turbobc.run_bc(nx.to_scipy_sparse_array(nx.karate_club_graph()),
                                 engine="cpu", epsilon=0.1, seed=2)
        results[source, "approximate"] = sampled.values
    for name, G, kwargs in _cases():
        np.testing.assert_allclose(results["ahead", name], results["jit", name], rtol=1e-14,
                                   atol=1e-15)
        want = nx.betweenness_centrality(G, weight="weight" if kwargs.get("weight") else None,
                                         endpoints=kwargs.get("endpoints", False))
        np.testing.assert_allclose(results["ahead", name], [want[v] for v in G], rtol=1e-12,
                                   atol=1e-15)
    np.testing.assert_array_equal(results["ahead", "approximate"],
                                  results["jit", "approximate"])
