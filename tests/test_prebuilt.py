"""The GPU kernels compiled ahead (spmv/_prebuilt.py, spmv/prebuilt/): current with their
sources (a kernel edited without ``python -m spmv.prebuild`` fails here, in CI), complete,
found by device, and every reason to fall back to NVRTC said once on stderr; on a GPU, a run
loads them and compiles nothing."""

from __future__ import annotations

import json
import lzma

import numpy as np
import pytest

from spmv import _module, _prebuilt


def test_every_shipped_binary_matches_its_source():
    """Each kernel file's stamp (its text, every header, the options, the name expressions)
    equals the one its shipped binaries were built from: run ``python -m spmv.prebuild``
    after editing a kernel."""
    shipped = _prebuilt.manifest()
    assert shipped is not None, "spmv/prebuilt/manifest.json is missing"
    stale = [f for f in _module.SOURCES
             if shipped["files"].get(f, {}).get("stamp") != _prebuilt.stamp(f)]
    assert not stale, (f"spmv/prebuilt is out of date for {stale}: run python -m "
                       "spmv.prebuild")


def test_every_instantiation_and_architecture_is_shipped():
    shipped = _prebuilt.manifest()
    assert set(shipped["files"]) == set(_module.SOURCES)
    assert shipped["archs"] == list(_prebuilt.ARCHS) and shipped["ptx_arch"] == 120
    for filename, entry in shipped["files"].items():
        assert set(entry["lowered"]) == set(_module.name_expressions(filename)), filename
        assert {int(a) for a in entry["cubins"]} == set(_prebuilt.ARCHS)
        for name in [*entry["cubins"].values(), entry["ptx"]]:
            assert (_prebuilt.PREBUILT_DIR / name).is_file(), name


def test_a_shipped_binary_holds_its_mangled_names():
    """The PTX of a file, unpacked, names every instantiation's mangled symbol."""
    entry = _prebuilt.manifest()["files"]["relabel.cu"]
    ptx = lzma.decompress((_prebuilt.PREBUILT_DIR / entry["ptx"]).read_bytes()).decode()
    for mangled in entry["lowered"].values():
        assert f".entry {mangled}" in ptx


def test_the_manifest_says_how_it_was_built():
    shipped = json.loads((_prebuilt.PREBUILT_DIR / "manifest.json").read_text())
    assert shipped["nvrtc"].split(".")[0] == "13"
    assert _prebuilt.compile_options("sm_90")[0] == "-arch=sm_90"
    assert "-ftz=true" in _prebuilt.compile_options("sm_90")  # as CuPy's own NVRTC path


@pytest.mark.parametrize("capability, expected", [
    (90, "sm_90"), (80, "sm_80"), (87, "sm_86"), (89, "sm_89"), (100, "sm_100"),
    (103, "sm_100"), (110, "sm_110"), (120, "sm_120"), (121, "sm_120"),
    (130, "compute_120"), (75, None), (70, None)])
def test_a_device_finds_the_binary_of_its_architecture(capability, expected):
    """The cubin of the device's major architecture with the largest minor one not above its
    own; else the PTX, for a device at least its architecture; else none (NVRTC)."""
    entry = _prebuilt.manifest()["files"]["sccsc.cu"]
    found = _prebuilt.binary_for(entry, capability)
    assert (found is None) if expected is None else (f".{expected}." in found)


@pytest.fixture
def fresh_reasons(monkeypatch):
    """No reason said yet in this process (each is said once)."""
    monkeypatch.setattr(_prebuilt, "_said", set())


def test_a_stale_binary_falls_back_and_says_so(monkeypatch, capsys, fresh_reasons):
    monkeypatch.setattr(_prebuilt, "stamp", lambda filename: "edited")
    assert _prebuilt.load_module("sccsc.cu", 90, True) is None
    assert _prebuilt.load_module("sccsc.cu", 90, True) is None
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["turbobc: the shipped kernels of spmv/kernels/sccsc.cu do not match its "
                   "source; compiling it through NVRTC (python -m spmv.prebuild regenerates "
                   "them)"]


def test_an_uncovered_device_falls_back_and_says_so(capsys, fresh_reasons):
    assert _prebuilt.load_module("sccsc.cu", 75, True) is None
    assert capsys.readouterr().err.strip() == (
        "turbobc: no shipped kernels cover compute capability 7.5; compiling them through "
        "NVRTC at first use (CuPy caches them)")


def test_a_missing_manifest_falls_back_and_says_so(monkeypatch, capsys, fresh_reasons):
    monkeypatch.setattr(_prebuilt, "manifest", lambda: None)
    assert _prebuilt.load_module("sccsc.cu", 90, True) is None
    assert "no kernels were shipped with this install" in capsys.readouterr().err


def test_turbobc_prebuilt_0_compiles_through_nvrtc(monkeypatch, capsys, fresh_reasons):
    monkeypatch.setenv("TURBOBC_PREBUILT", "0")
    assert _prebuilt.load_module("sccsc.cu", 90, True) is None
    assert capsys.readouterr().err == ""


@pytest.mark.gpu
def test_a_run_loads_the_shipped_kernels_and_compiles_none():
    """Every family's kernels come from spmv/prebuilt on this device: a run compiles nothing
    through NVRTC, and the facts say so."""
    import networkx as nx

    import turbobc

    G = nx.grid_2d_graph(9, 7)
    A = nx.to_scipy_sparse_array(G, format="csr")
    before = len(_module._compiled)
    for kwargs in ({}, {"sources": [0]}, {"weight": True}):
        result = turbobc.run_bc(A, engine="gpu", **kwargs)
        assert result.facts["compiled"] == []
    with turbobc.tuning(gpu_family="frontiers"):
        assert turbobc.run_bc(A, engine="gpu").facts["compiled"] == []
    assert len(_module._compiled) == before
    want = nx.betweenness_centrality(G)
    np.testing.assert_allclose(turbobc.bc(A, engine="gpu"), [want[v] for v in G], rtol=1e-12)
