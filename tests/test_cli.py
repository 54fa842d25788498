"""The ``turbobc`` command, run as a subprocess on the real graphs shipped with the tests and
compared with the Python API (turbobc.read_graph + turbobc.bc), networkx and the data set's
README statistics."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import sysconfig
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest

import spmv
import turbobc
from data_files import path as data_path
from turbobc.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(*args, check=True):
    """``python -m turbobc.cli ARGS`` from the repository root; the completed process."""
    result = subprocess.run([sys.executable, "-m", "turbobc.cli", *map(str, args)],
                            capture_output=True, text=True, cwd=ROOT)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def top_table(out: str):
    """(rank, vertex, value) rows of the printed table."""
    return [(int(r), v, float(x)) for r, v, x in
            re.findall(r"^\s+(\d+)\s+(\S+)\s+([-+\d.eE]+)$", out, flags=re.M)]


def test_console_script_is_registered_and_runs():
    (script,) = entry_points(group="console_scripts", name="turbobc")
    assert script.value == "turbobc.cli:main" and script.load() is main
    exe = Path(sysconfig.get_path("scripts")) / "turbobc"
    out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout
    assert "turbobc bc ca-GrQc.txt.gz --top 5" in out


def test_help_explains_commands_and_options():
    top = run("--help").stdout
    for phrase in ("Betweenness centrality", "Matrix Market", "SNAP", "METIS", "bc", "info",
                   "examples:"):
        assert phrase in top
    bc_help = run("bc", "--help").stdout
    for option in ("--directed", "--undirected", "-k K", "--seed S", "--sources SFILE",
                   "--raw", "--endpoints", "--engine", "--kernel", "--top N", "-o OUT",
                   "--progress", ".csv", ".json", ".npy"):
        assert option in bc_help
    assert "--json" in run("info", "--help").stdout


@pytest.mark.parametrize("name, directed", [("email-Eu-core.txt.gz", True),
                                            ("delaunay_n10.mtx", False)])
def test_bc_csv_equals_python_api(tmp_path, name, directed):
    out_csv = tmp_path / "bc.csv"
    flags = ["--directed"] if directed and ".mtx" not in name else []
    out = run("bc", data_path(name), *flags, "--engine", "graphblas", "--top", "5",
              "-o", out_csv).stdout
    A, labels = turbobc.read_graph(data_path(name), directed=True if flags else None)
    expected = turbobc.bc(A, directed=directed, engine="graphblas")
    with open(out_csv, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["vertex", "betweenness"]
    assert [int(r[0]) for r in rows[1:]] == labels.tolist()
    np.testing.assert_array_equal([float(r[1]) for r in rows[1:]], expected)  # repr round-trips
    table = top_table(out)
    order = np.argsort(-expected, kind="stable")[:5]
    assert [r[0] for r in table] == [1, 2, 3, 4, 5]
    assert [r[1] for r in table] == [str(labels[i]) for i in order]  # original ids
    np.testing.assert_allclose([r[2] for r in table], expected[order], rtol=1e-7)
    kind = "directed" if directed else "undirected"
    assert f"n = {A.shape[0]:,} vertices" in out and f"{kind} edges" in out
    assert "exact, normalized" in out and "engine graphblas" in out


def test_bc_sampled_raw_endpoints_json(tmp_path):
    """-k/--seed, --raw and --endpoints on a SNAP file with CRLF lines and self loops."""
    out_json = tmp_path / "bc.json"
    run("bc", data_path("as20000102.txt"), "-k", "40", "--seed", "7", "--raw", "--endpoints",
        "--engine", "graphblas", "--top", "0", "-o", out_json)
    record = json.loads(out_json.read_text())
    A, labels = turbobc.read_graph(data_path("as20000102.txt"))
    expected = turbobc.bc(A, k=40, seed=7, normalized=False, endpoints=True,
                          engine="graphblas")
    assert record["vertices"] == labels.tolist()
    np.testing.assert_array_equal(record["betweenness"], expected)
    assert (record["n"], record["m"], record["directed"]) == (6474, 12572, False)  # README
    assert (record["normalized"], record["endpoints"], record["k"], record["seed"]) == (
        False, True, 40, 7)


def test_bc_sources_file_with_original_ids_and_npy(tmp_path):
    """Sources given by their SNAP ids (ca-GrQc ids start at 13) select the same vertices."""
    A, labels = turbobc.read_graph(data_path("ca-GrQc.txt.gz"))
    picked = [int(labels[i]) for i in (0, 17, 4000)]
    sources = tmp_path / "sources.txt"
    sources.write_text(f"# three authors\n{picked[0]} {picked[1]}\n{picked[2]}\n")
    out_npy = tmp_path / "bc.npy"
    out = run("bc", data_path("ca-GrQc.txt.gz"), "--sources", sources, "--engine", "graphblas",
              "-o", out_npy).stdout
    expected = turbobc.bc(A, sources=[0, 17, 4000], engine="graphblas")
    np.testing.assert_array_equal(np.load(out_npy), expected)
    assert "3 given sources" in out


def test_bc_progress_bar_on_stderr():
    result = run("bc", data_path("delaunay_n10.mtx"), "-k", "20", "--seed", "1", "--progress",
                 "--engine", "graphblas", "--top", "1")
    assert "turbobc[graphblas]" in result.stderr and "20/20" in result.stderr


@pytest.mark.parametrize("name, kind", [("wiki-Vote.txt.gz", "D"), ("power.mtx", "U")])
def test_info_json_matches_readme_and_spmv(name, kind):
    flags = ["--directed"] if kind == "D" else []
    record = json.loads(run("info", data_path(name), *flags, "--json").stdout)
    readme = {"wiki-Vote.txt.gz": (7115, 103689, 0, 893), "power.mtx": (4941, 6594, 1, 19)}
    n, m, min_degree, max_degree = readme[name]  # copied from the data set's README (tests/data)
    assert (record["n"], record["m"], record["directed"]) == (n, m, kind == "D")
    assert record["degree"]["max"] == max_degree
    assert record["degree"]["mean"] == pytest.approx(m / n * (1 if kind == "D" else 2))
    if kind == "U":
        assert record["degree"]["min"] == min_degree  # power grid: connected (1 WCC)
    A, _ = turbobc.read_graph(data_path(name), directed=kind == "D" or None)
    stats = spmv.stats_host(A, kind == "D")
    assert record["scf"] == pytest.approx(stats.scf, rel=1e-12)
    assert record["kernel"] == spmv.select(stats)
    assert record["stored_entries"] == A.nnz
    assert record["device_memory_bytes"] == 4 * A.nnz + 48 * n


def test_info_text():
    out = run("info", data_path("ca-GrQc.txt.gz")).stdout
    assert "vertices (n):   5,242" in out
    assert "edges (m):      14,484 undirected edges (each counted once; 28,968 stored" in out
    assert "self loops:     12 (ignored)" in out  # README provenance table: 12 self-loops
    assert "max 81" in out and "kernel (auto):" in out
    assert "model 4m + 48n bytes, float64, with m = 28,968 stored entries" in out


def test_errors_exit_1_with_the_reason(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n3\n")
    result = run("bc", bad, check=False)
    assert result.returncode == 1
    assert f"turbobc bc: error: {bad}, line 2: expected two vertex ids" in result.stderr
    missing = run("info", tmp_path / "none.mtx", check=False)
    assert missing.returncode == 1 and "no such graph file" in missing.stderr
    wrong_out = run("bc", data_path("power.mtx"), "-o", tmp_path / "x.txt", check=False)
    assert wrong_out.returncode == 1
    assert "-o must end in .csv, .json or .npy" in wrong_out.stderr
    unknown = tmp_path / "s.txt"
    unknown.write_text("1\n999999\n")
    result = run("bc", data_path("power.mtx"), "--sources", unknown, check=False)
    assert result.returncode == 1
    assert f"{unknown}, line 2: vertex '999999' is not in the graph" in result.stderr


def test_usage_errors_exit_2():
    result = run("bc", data_path("power.mtx"), "-k", "3", "--sources", "x", check=False)
    assert result.returncode == 2 and "not allowed with argument" in result.stderr
    assert run(check=False).returncode == 2


def test_main_in_process(tmp_path, capsys):
    """main() returns the status instead of exiting (and --top -1 is refused)."""
    assert main(["bc", str(data_path("power.mtx")), "--top", "-1"]) == 1
    assert "--top must be 0 or more; got -1" in capsys.readouterr().err
    assert main(["info", str(data_path("road-minnesota.mtx"))]) == 0
    assert "vertices (n):   2,642" in capsys.readouterr().out


def test_python_dash_m_turbobc_is_the_command(tmp_path):
    import subprocess
    import sys

    missing = tmp_path / "missing.mtx"
    result = subprocess.run([sys.executable, "-m", "turbobc", "info", str(missing)],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "turbobc info: error:" in result.stderr and "missing.mtx" in result.stderr
    help_text = subprocess.run([sys.executable, "-m", "turbobc", "--help"], capture_output=True,
                               text=True, check=True).stdout
    assert "betweenness centrality of every vertex" in help_text
