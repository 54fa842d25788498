"""The ``turbobc`` command, run as a subprocess on the real graphs shipped with the tests and
compared with the Python API (turbobc.read_graph + turbobc.bc), networkx and the data set's
README statistics."""

from __future__ import annotations

import csv
import json
import os
import random
import re
import subprocess
import sys
import sysconfig
from importlib.metadata import entry_points
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import spmv
import turbobc
from data_files import path as data_path
from turbobc.cli import EXIT_RULE, main

ROOT = Path(__file__).resolve().parents[1]


def run(*args, check=True, env=None):
    """``python -m turbobc.cli ARGS`` from the repository root; the completed process."""
    result = subprocess.run([sys.executable, "-m", "turbobc.cli", *map(str, args)],
                            capture_output=True, text=True, cwd=ROOT,
                            env=None if env is None else {**os.environ, **env})
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
                   "--progress", ".csv", ".json", ".npy", "label,bc", "%.16e"):
        assert option in bc_help
    assert EXIT_RULE in top  # the exit-status rule, word for word (docs/cli.md quotes it)
    assert "--json" in run("info", "--help").stdout


@pytest.mark.slow
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
    assert rows[0] == ["label", "bc"]
    assert [int(r[0]) for r in rows[1:]] == labels.tolist()
    # one fixed format: 17 significant digits in scientific notation, exact round trip
    assert all(re.fullmatch(r"\d\.\d{16}e[-+]\d\d", r[1]) for r in rows[1:])
    np.testing.assert_array_equal([float(r[1]) for r in rows[1:]], expected)
    table = top_table(out)
    order = np.argsort(-expected, kind="stable")[:5]
    assert [r[0] for r in table] == [1, 2, 3, 4, 5]
    assert [r[1] for r in table] == [str(labels[i]) for i in order]  # original ids
    # six significant digits of the largest value, the same decimals for the others
    np.testing.assert_allclose([r[2] for r in table], expected[order], rtol=0,
                               atol=5e-6 * expected.max())
    kind = "directed" if directed else "undirected"
    assert f"n = {A.shape[0]:,} vertices" in out and f"{kind} edges" in out
    assert "exact, normalized" in out and "engine graphblas" in out


@pytest.mark.slow
def test_bc_sampled_raw_endpoints_json(tmp_path):
    """-k/--seed, --raw and --endpoints on a SNAP file with CRLF lines and self loops, against
    networkx reading the same file."""
    out_json = tmp_path / "bc.json"
    path = data_path("as20000102.txt")
    run("bc", path, "-k", "40", "--seed", "7", "--raw", "--endpoints", "--engine",
        "graphblas", "--top", "0", "-o", out_json)
    record = json.loads(out_json.read_text())
    _, labels = turbobc.read_graph(path)
    G = nx.read_edgelist(path, nodetype=int)
    expected = nx.betweenness_centrality(G, k=40, seed=7, normalized=False, endpoints=True)
    assert record["vertices"] == labels.tolist()
    np.testing.assert_allclose(record["betweenness"], [expected[v] for v in labels.tolist()],
                               rtol=1e-12)
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


def test_bc_targets_file_is_the_subset_bc(tmp_path, capsys):
    """--targets TFILE (ids as in the file) gives networkx's betweenness_centrality_subset."""
    path = data_path("power.mtx")
    A, labels = turbobc.read_graph(path)
    G = nx.from_scipy_sparse_array(A)
    sources_file, targets_file = tmp_path / "s.txt", tmp_path / "t.txt"
    sources_file.write_text(" ".join(str(labels[i]) for i in (0, 5, 99)) + "\n")
    targets_file.write_text("# ends\n" + "\n".join(str(labels[i]) for i in (7, 4000, 12)))
    out_npy = tmp_path / "bc.npy"
    out = run("bc", path, "--sources", sources_file, "--targets", targets_file, "--raw",
              "--engine", "graphblas", "-o", out_npy).stdout
    want = nx.betweenness_centrality_subset(G, [0, 5, 99], [7, 4000, 12], normalized=False)
    np.testing.assert_allclose(np.load(out_npy), [want[v] for v in G], rtol=1e-12,
                               atol=1e-14)
    assert "3 given sources, 3 given targets" in out
    assert main(["bc", str(path), "--targets", str(targets_file), "-k", "5"]) == 2
    assert "--targets computes networkx's betweenness_centrality_subset" in \
        capsys.readouterr().err
    assert main(["bc", str(path), "--targets", str(tmp_path / "missing.txt")]) == 2


@pytest.mark.slow
def test_edge_bc_command_matches_networkx(tmp_path, capsys):
    """edge-bc on an edge list with its own ids: the printed top edge and every value of -o
    (CSV, JSON) equal networkx's edge BC of nx.read_edgelist; -k/--seed sample as networkx."""
    G = nx.relabel_nodes(nx.les_miserables_graph(), {v: i * 7 + 3 for i, v in
                                                     enumerate(nx.les_miserables_graph())})
    path = tmp_path / "les.txt"
    path.write_text("".join(f"{u}\t{v}\n" for u, v in G.edges()))
    H = nx.read_edgelist(path, nodetype=int)
    out_csv, out_json = tmp_path / "e.csv", tmp_path / "e.json"
    out = run("edge-bc", path, "--top", "1", "-o", out_csv).stdout
    want = nx.edge_betweenness_centrality(H)
    best = max(want, key=want.get)
    assert f"{min(best)} -- {max(best)}" in out.replace("  ", " ").replace("  ", " ")
    with open(out_csv, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["src", "dst", "bc"] and len(rows) == 1 + H.number_of_edges()
    for a, b, x in rows[1:]:
        key = (int(a), int(b)) if (int(a), int(b)) in want else (int(b), int(a))
        assert float(x) == pytest.approx(want[key], rel=1e-12, abs=1e-15)
    run("edge-bc", path, "-k", "9", "--seed", "4", "--raw", "--top", "0", "-o", out_json)
    record = json.loads(out_json.read_text())
    sampled = nx.edge_betweenness_centrality(H, k=9, seed=4, normalized=False)
    for (a, b), x in zip(record["edges"], record["betweenness"]):
        key = (a, b) if (a, b) in sampled else (b, a)
        assert x == pytest.approx(sampled[key], rel=1e-12, abs=1e-15)
    targets = tmp_path / "t.txt"
    targets.write_text(" ".join(str(v) for v in list(H)[:5]))
    run("edge-bc", path, "--targets", targets, "--top", "0", "-o", out_json)
    record = json.loads(out_json.read_text())
    subset = nx.edge_betweenness_centrality_subset(H, list(H), list(H)[:5], normalized=True)
    for (a, b), x in zip(record["edges"], record["betweenness"]):
        key = (a, b) if (a, b) in subset else (b, a)
        assert x == pytest.approx(subset[key], rel=1e-12, abs=1e-15)
    assert main(["edge-bc", str(path), "--targets", str(targets), "-k", "3"]) == 2
    assert main(["edge-bc", str(path), "-o", str(tmp_path / "e.npy")]) == 2
    assert "-o must end in .csv or .json" in capsys.readouterr().err
    assert main(["edge-bc", str(path), "--seed", "1"]) == 2


@pytest.mark.slow
def test_bc_progress_bar_on_stderr():
    """Exact BC of wiki-Vote (7,115 vertices on the graphblas engine, several seconds; power's
    4,941 took under two seconds on a quiet 2-core machine, too few for two stamps): the bar,
    on stderr, is redrawn every second with the time elapsed while the batch runs, and ends
    with every source counted and the rate; a run of a fraction of a second prints no bar."""
    result = run("bc", data_path("wiki-Vote.txt.gz"), "--progress", "--engine", "graphblas",
                 "--top", "1")
    assert "turbobc[graphblas]" in result.stderr and "7115/7115" in result.stderr
    elapsed = set(re.findall(r"/7115 \[(\d\d:\d\d)", result.stderr))
    assert len(elapsed) >= 2, result.stderr
    assert "src/s" in result.stderr and "turbobc[graphblas]" not in result.stdout
    quick = run("bc", data_path("delaunay_n10.mtx"), "-k", "20", "--seed", "1", "--progress",
                "--engine", "graphblas", "--top", "1")
    assert "turbobc[graphblas]" not in quick.stderr


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


@pytest.mark.slow
def test_info_text():
    # ca-GrQc lists every edge both ways under a "# Directed graph" header: read as the header
    # says, the README's 14,484 undirected edges are 28,968 arcs
    out = run("info", data_path("ca-GrQc.txt.gz")).stdout
    assert "edges (m):      28,968 arcs" in out
    assert "directed:       yes (as the file's header says; --undirected to override)" in out
    out = run("info", data_path("ca-GrQc.txt.gz"), "--undirected").stdout
    assert "vertices (n):   5,242" in out
    assert "edges (m):      14,484 undirected edges (each counted once; 28,968 stored" in out
    assert "directed:       no\n" in out
    assert "self loops:     12 (ignored)" in out  # README provenance table: 12 self-loops
    assert "max 81" in out and "kernel (auto):" in out
    assert "model 4m + 48n bytes, float64, with m = 28,968 stored entries" in out


def test_errors_exit_1_with_the_reason(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n3\n")
    result = run("bc", bad, check=False)
    assert result.returncode == 1
    assert f"turbobc bc: error: {bad}, line 2: expected two vertex ids" in result.stderr
    missing = run("info", tmp_path / "none.mtx", check=False)  # a usage error: exit 2
    assert missing.returncode == 2 and "none.mtx: no such graph file" in missing.stderr


def test_usage_errors_exit_2():
    result = run("bc", data_path("power.mtx"), "-k", "3", "--sources", "x", check=False)
    assert result.returncode == 2 and "not allowed with argument" in result.stderr
    result = run("bc", data_path("power.mtx"), "--directed", "--undirected", check=False)
    assert result.returncode == 2 and "not allowed with argument" in result.stderr
    assert run(check=False).returncode == 2


def test_main_in_process(tmp_path, capsys):
    """main() returns the status instead of exiting (and --top -1 is refused)."""
    assert main(["bc", str(data_path("power.mtx")), "--top", "-1"]) == 2
    assert "--top must be 0 or more; got -1" in capsys.readouterr().err
    assert main(["info", str(data_path("road-minnesota.mtx"))]) == 0
    assert "vertices (n):   2,642" in capsys.readouterr().out


# --------------------------------------------------------------------------- rough edges

API_SYNTAX = re.compile(r"\b(k|seed|sources|engine|kernel|directed|normalized|format|weighted|"
                        r"memory_limit)=")


def _fails(status, message, *args):
    """Run the command, expect ``status`` and ``message`` on stderr, no API syntax, and
    nothing computed (no result line on stdout)."""
    result = run(*args, check=False)
    assert result.returncode == status, result.stderr
    assert message in result.stderr, result.stderr
    assert not API_SYNTAX.search(result.stderr), result.stderr
    assert "betweenness centrality (" not in result.stdout
    return result


@pytest.mark.slow
def test_k_samples_the_vertices_networkx_samples_from_the_same_file(tmp_path):
    """-k N --seed S picks what nx.betweenness_centrality(nx.read_edgelist(FILE), k=N,
    seed=S) picks: networkx samples list(G), the order in which the file first names the
    vertices, not the sorted ids. ca-GrQc's first line is '3466 937'."""
    out = tmp_path / "bc.json"
    path = data_path("ca-GrQc.txt.gz")
    run("bc", path, "--undirected", "-k", "25", "--seed", "11", "--engine", "graphblas",
        "--top", "0", "-o", out)
    record = json.loads(out.read_text())
    values = dict(zip(record["vertices"], record["betweenness"]))
    G = nx.read_edgelist(path, nodetype=int)
    expected = nx.betweenness_centrality(G, k=25, seed=11)
    assert values.keys() == expected.keys()
    np.testing.assert_allclose([values[v] for v in G], [expected[v] for v in G], rtol=1e-12,
                               atol=1e-15)
    # the sorted-id order would have sampled other vertices: the test tells the two apart
    picked = set(random.Random(11).sample(list(G), 25))
    assert picked != set(random.Random(11).sample(sorted(G), 25))


@pytest.mark.slow
def test_k_on_a_directed_snap_file_matches_networkx_digraph(tmp_path):
    out = tmp_path / "bc.json"
    path = data_path("p2p-Gnutella08.txt")  # header: "# Directed graph"
    run("bc", path, "-k", "30", "--seed", "4", "--engine", "graphblas", "--top", "0", "-o", out)
    record = json.loads(out.read_text())
    assert record["directed"] is True
    G = nx.read_edgelist(path, nodetype=int, create_using=nx.DiGraph)
    expected = nx.betweenness_centrality(G, k=30, seed=4)
    values = dict(zip(record["vertices"], record["betweenness"]))
    np.testing.assert_allclose([values[v] for v in G], [expected[v] for v in G], rtol=1e-12,
                               atol=1e-15)
    assert sum(1 for v in G if expected[v] > 0) > 100  # not a comparison of zeros


def test_seed_without_k_is_an_error():
    _fails(2, "--seed 3 needs -k K", "bc", data_path("power.mtx"), "--seed", "3")


def test_output_path_is_checked_before_reading_or_computing(tmp_path, monkeypatch, capsys):
    graph = data_path("power.mtx")
    result = _fails(2, "-o nodir/x.csv: the directory 'nodir' does not exist", "bc", graph,
                    "-o", "nodir/x.csv")
    assert result.stdout == ""  # not even the graph was read
    _fails(2, "-o must end in .csv, .json or .npy; got", "bc", graph, "-o", tmp_path / "x.txt")
    (tmp_path / "taken.csv").mkdir()
    _fails(2, "is a directory", "bc", graph, "-o", tmp_path / "taken.csv")
    monkeypatch.setattr(os, "access", lambda path, mode: mode == os.R_OK)  # a read-only folder
    assert main(["bc", str(graph), "-o", str(tmp_path / "x.csv")]) == 2
    captured = capsys.readouterr()
    assert "cannot write there (permission denied)" in captured.err and captured.out == ""


@pytest.mark.slow
@pytest.mark.parametrize("name, text", [("empty.txt", ""), ("comments.txt", "# nodes: 0\n"),
                                        ("empty.mtx", ""), ("zero.mtx", "%%MatrixMarket "
                                         "matrix coordinate pattern general\n0 0 0\n"),
                                        ("empty.graph", "")])
def test_empty_graph_file_is_a_data_error(tmp_path, name, text):
    """Found by reading the file: exit 1 (it was 2 before the one rule of docs/cli.md)."""
    path = tmp_path / name
    path.write_text(text)
    for command in ("bc", "info"):
        result = _fails(1, str(path), command, path)
        assert "empty" in result.stderr.replace(name, "")


@pytest.mark.slow
def test_errors_speak_in_flags_not_in_api_syntax(tmp_path):
    graph = data_path("power.mtx")  # 4,941 vertices, ids 1..4941
    result = _fails(2, "-k must be between 1 and the number of vertices; got 0", "bc", graph,
                    "-k", "0")
    assert result.stdout == ""  # found before the graph is read
    _fails(2, "-k must be between 1 and the number of vertices, 4,941; got 4942", "bc", graph,
           "-k", "4942")
    _fails(2, "--kernel vecsc is a GPU kernel; it needs --engine gpu or auto, not --engine "
              "graphblas", "bc", graph, "--kernel", "vecsc", "--engine", "graphblas")
    _fails(2, "--sources nowhere.txt: no such file", "bc", graph, "--sources", "nowhere.txt")
    sources = tmp_path / "s.txt"
    for text, status, message in [
            ("1\n999999\n", 1, f"{sources}, line 2: vertex '999999' is not in the graph"),
            ("7 8\n7\n", 1, f"{sources}, line 2: vertex '7' is listed twice (first on line 1)"),
            ("1 x\n", 1, f"{sources}, line 1: vertex ids of this graph are integers; got 'x'"),
            ("# none\n", 1, f"{sources}: no source vertex listed")]:
        sources.write_text(text)
        _fails(status, message, "bc", graph, "--sources", sources)
    from turbobc._engines import gpu_status

    if not gpu_status()[0]:
        for flags, asked in ((["--engine", "gpu"], "--engine gpu"),
                             (["--kernel", "sccsc"], "--kernel sccsc")):
            result = _fails(2, f"{asked} needs a usable CUDA device, and none was found",
                            "bc", graph, *flags)
            assert "--engine cpu" in result.stderr and result.stdout == ""
    else:  # a GPU machine: the same flags run
        assert run("bc", graph, "--kernel", "sccsc", "-k", "3", "--seed", "1").returncode == 0


@pytest.mark.parametrize("command", ["bc", "edge-bc"])
def test_no_gpu_says_so_plainly_on_stderr_and_uses_the_cpu_engine(command):
    """The note is a note: on stderr, the same for both commands, never mixed into the
    results on stdout."""
    result = run(command, data_path("delaunay_n10.mtx"), "--top", "1",
                 env={"CUDA_VISIBLE_DEVICES": ""})  # CuPy sees no device on any machine
    lines = result.stderr.splitlines()
    assert lines[0] == "No usable CUDA device was found, so the CPU engine (numba) is used."
    assert lines[1].startswith("  detail: ") and len(lines) == 2
    assert "No usable CUDA device" not in result.stdout
    assert "betweenness centrality (exact, normalized)" in result.stdout
    for engine in ("cpu", "graphblas"):
        chosen = run(command, data_path("delaunay_n10.mtx"), "--top", "1", "--engine", engine,
                     env={"CUDA_VISIBLE_DEVICES": ""})
        assert chosen.stderr == ""  # asked for the CPU: nothing to say
        assert "betweenness centrality (exact, normalized)" in chosen.stdout


@pytest.mark.slow
def test_csv_format_on_a_path_by_hand(tmp_path):
    # path 10 - 20 - 30: normalized BC 0, 1, 0 (20 lies on the one path between the others)
    graph, out = tmp_path / "p.txt", tmp_path / "bc.csv"
    graph.write_text("10 20\n20 30\n")
    run("bc", graph, "-o", out, "--engine", "graphblas")
    assert out.read_bytes() == (b"label,bc\n10,0.0000000000000000e+00\n"
                                b"20,1.0000000000000000e+00\n30,0.0000000000000000e+00\n")


def test_csv_format_is_documented_in_help_and_docs():
    page = (ROOT / "docs" / "cli.md").read_text()
    bc_help = " ".join(run("bc", "--help").stdout.split())
    for text in (" ".join(page.split()), bc_help):
        assert "label,bc" in text and "%.16e" in text and "17 significant digits" in text


@pytest.mark.slow
def test_header_direction_is_said_and_can_be_overridden():
    path = data_path("p2p-Gnutella08.txt")
    out = run("bc", path, "-k", "2", "--seed", "1", "--engine", "graphblas").stdout
    assert ("n = 6,301 vertices, m = 20,777 directed edges (as the file's header says; "
            "--undirected to override)") in out
    out = run("bc", path, "--undirected", "-k", "2", "--seed", "1", "--engine",
              "graphblas").stdout
    assert "undirected edges\n" in out and "header" not in out


@pytest.mark.slow
def test_python_dash_m_turbobc_is_the_command(tmp_path):
    import subprocess
    import sys

    missing = tmp_path / "missing.mtx"
    result = subprocess.run([sys.executable, "-m", "turbobc", "info", str(missing)],
                            capture_output=True, text=True)
    assert result.returncode == 2  # a file that is not there: a usage error
    assert "turbobc info: error:" in result.stderr and "missing.mtx" in result.stderr
    help_text = subprocess.run([sys.executable, "-m", "turbobc", "--help"], capture_output=True,
                               text=True, check=True).stdout
    assert "betweenness centrality of every vertex" in help_text


@pytest.mark.slow
def test_memory_limit_flag(tmp_path):
    """--memory-limit reaches turbobc.bc: the same values under a limit that forces small
    batches; a size that cannot hold one source exits 1 naming the flag; a bad size exits 2."""
    graph = data_path("delaunay_n10.mtx")
    free = tmp_path / "free.npy"
    limited = tmp_path / "limited.npy"
    run("bc", graph, "--engine", "graphblas", "--top", "0", "-o", free)
    run("bc", graph, "--engine", "graphblas", "--top", "0", "--memory-limit", "2MiB",
        "-o", limited)
    np.testing.assert_allclose(np.load(limited), np.load(free), rtol=1e-12, atol=1e-15)
    tiny = run("bc", graph, "--engine", "graphblas", "--memory-limit", "3KB", check=False)
    assert tiny.returncode == 1
    assert "but --memory-limit is 3000 bytes" in tiny.stderr
    bad = run("bc", graph, "--memory-limit", "lots", check=False)
    assert bad.returncode == 2
    assert "--memory-limit lots: the size must be a number of bytes" in bad.stderr


# --------------------------------------------------------------------------- --edges, --weight

def _les_miserables_file(tmp_path, *, weights=False):
    """les_miserables as a TSV edge list with integer ids (i * 7 + 3), optionally with its
    co-occurrence counts as a third column; the graph networkx reads back from it."""
    G = nx.les_miserables_graph()
    G = nx.relabel_nodes(G, {v: i * 7 + 3 for i, v in enumerate(G)})
    path = tmp_path / "les.tsv"
    path.write_text("".join(f"{u}\t{v}" + (f"\t{w}" if weights else "") + "\n"
                            for u, v, w in G.edges(data="weight")))
    if weights:
        return path, nx.read_weighted_edgelist(path, delimiter="\t", nodetype=int)
    return path, nx.read_edgelist(path, delimiter="\t", nodetype=int)


def _edges_csv(path) -> dict:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["src", "dst", "bc"]
    assert all(re.fullmatch(r"\d\.\d{16}e[-+]\d\d", r[2]) for r in rows[1:])
    return {(int(a), int(b)): float(x) for a, b, x in rows[1:]}


def _assert_edge_values(ours: dict, want: dict):
    assert len(ours) == len(want)  # an undirected edge once
    for (a, b), x in ours.items():
        key = (a, b) if (a, b) in want else (b, a)
        assert x == pytest.approx(want[key], rel=1e-12, abs=1e-15), key


@pytest.mark.slow
def test_bc_edges_writes_edge_bc_as_edge_bc_does(tmp_path):
    """bc --edges E.csv: vertex BC as before and networkx's edge BC in E.csv (src,dst,bc with
    the file's ids, sorted, an undirected edge once), byte for byte what edge-bc -o writes."""
    path, H = _les_miserables_file(tmp_path)
    edges, vertices, alone = tmp_path / "e.csv", tmp_path / "v.npy", tmp_path / "alone.csv"
    out = run("bc", path, "--engine", "cpu", "--top", "0", "-o", vertices,
              "--edges", edges).stdout
    _assert_edge_values(_edges_csv(edges), nx.edge_betweenness_centrality(H))
    _, labels = turbobc.read_graph(path)
    want = nx.betweenness_centrality(H)
    np.testing.assert_allclose(np.load(vertices), [want[v] for v in labels.tolist()],
                               rtol=1e-12, atol=1e-15)
    assert "edge betweenness centrality (exact, normalized) in " in out
    assert f"wrote {H.number_of_edges():,} edge values to {edges}" in out
    run("edge-bc", path, "--top", "0", "-o", alone)
    assert alone.read_bytes() == edges.read_bytes()
    pairs = list(_edges_csv(edges))
    index = {v: i for i, v in enumerate(labels.tolist())}
    assert pairs == sorted(pairs, key=lambda e: (index[e[0]], index[e[1]]))


@pytest.mark.slow
def test_bc_edges_with_k_samples_the_same_sources_for_both(tmp_path):
    """-k without --seed: a seed is drawn once, so vertex and edge BC sample the same
    sources; the JSON says which, and networkx with that seed gives both."""
    path, H = _les_miserables_file(tmp_path)
    record_path, edges = tmp_path / "v.json", tmp_path / "e.csv"
    run("bc", path, "-k", "7", "--raw", "--engine", "graphblas", "--top", "0",
        "-o", record_path, "--edges", edges)
    record = json.loads(record_path.read_text())
    seed = record["seed"]
    assert isinstance(seed, int)
    want = nx.betweenness_centrality(H, k=7, seed=seed, normalized=False)
    np.testing.assert_allclose(record["betweenness"], [want[v] for v in record["vertices"]],
                               rtol=1e-12, atol=1e-15)
    _assert_edge_values(_edges_csv(edges),
                        nx.edge_betweenness_centrality(H, k=7, seed=seed, normalized=False))


def test_bc_edges_with_targets_is_the_edge_subset_bc(tmp_path):
    path, H = _les_miserables_file(tmp_path)
    targets, edges = tmp_path / "t.txt", tmp_path / "e.csv"
    targets.write_text(" ".join(str(v) for v in list(H)[3:9]))
    run("bc", path, "--targets", targets, "--engine", "graphblas", "--top", "0",
        "--edges", edges)
    _assert_edge_values(_edges_csv(edges), nx.edge_betweenness_centrality_subset(
        H, list(H), list(H)[3:9], normalized=True))


@pytest.mark.slow
def test_edges_path_is_checked_before_reading(tmp_path):
    graph = data_path("power.mtx")
    for flags, message in [
            (["--edges", tmp_path / "e.json"], "--edges must end in .csv; got"),
            (["--edges", "nodir/e.csv"], "--edges nodir/e.csv: the directory 'nodir' does "
                                         "not exist"),
            (["--edges", tmp_path / "same.csv", "-o", tmp_path / "same.csv"],
             f"--edges {tmp_path / 'same.csv'} and -o {tmp_path / 'same.csv'} name the same "
             "file")]:
        result = _fails(2, message, "bc", graph, *flags)
        assert result.stdout == ""  # not even the graph was read


@pytest.mark.slow
def test_weight_on_a_file_without_values_says_so_in_flags(tmp_path):
    """--weight reads lengths; a file without them (a pattern Matrix Market file, an edge list
    of two columns), or with a value that is not a length, fails naming the file, the line
    and the flag, before any computing."""
    path, _ = _les_miserables_file(tmp_path)
    for command in ("bc", "edge-bc"):
        result = _fails(1, f"{path}, line 1: --weight reads the third column as the edge "
                           "length; edge (3, 10) has none", command, path, "--weight")
        assert "weighted=True" not in result.stderr
    result = _fails(1, "a 'pattern' Matrix Market file holds no edge values; --weight needs "
                       "a 'real' or 'integer' file (read it without --weight: every edge has "
                       "length 1)", "bc", data_path("power.mtx"), "--weight")
    assert f"{data_path('power.mtx')}, line 1:" in result.stderr
    bad = tmp_path / "bad.gr"
    bad.write_text("c roads\np sp 3 2\na 1 2 5\na 2 3 -1\n")
    _fails(1, f"{bad}, line 4: the length of edge (2, 3) is -1; edge lengths must be positive "
              "finite numbers", "bc", bad, "--weight")


@pytest.mark.slow
def test_dimacs_file_reads_as_arcs_and_says_so(tmp_path):
    path = tmp_path / "roads.gr"
    path.write_text("c a square of one-way streets\np sp 4 4\na 1 2 3\na 2 3 3\na 3 4 3\n"
                    "a 4 1 3\n")
    out = run("info", path).stdout
    assert "edges (m):      4 arcs" in out
    assert ("directed:       yes (DIMACS arcs; --undirected to read each arc as an "
            "undirected edge)") in out
    values = tmp_path / "bc.npy"
    run("bc", path, "--engine", "graphblas", "--raw", "-o", values)
    want = nx.betweenness_centrality(nx.DiGraph([(1, 2), (2, 3), (3, 4), (4, 1)]),
                                     normalized=False)
    np.testing.assert_allclose(np.load(values), [want[v] for v in (1, 2, 3, 4)])


@pytest.mark.slow
def test_help_documents_weight_edges_and_dimacs():
    top = " ".join(run("--help").stdout.split())
    assert "DIMACS 9 shortest-path files (.gr, road networks)" in top and "--weight" in top
    for command in ("bc", "edge-bc"):
        text = " ".join(run(command, "--help").stdout.split())
        assert "--weight" in text and "edge lengths" in text and "src,dst,bc" in text
        assert "{mtx,snap,csv,tsv,metis,gr}" in text
    assert "--edges EDGES.csv" in run("bc", "--help").stdout


@pytest.mark.slow
def test_weight_gives_networkx_weighted_bc_vertices_and_edges(tmp_path):
    """--weight reads the third column as lengths: bc (with --edges) and edge-bc give
    networkx's weight='weight' values of the same file, exact and sampled."""
    path, H = _les_miserables_file(tmp_path, weights=True)
    vertices, edges, record_path = tmp_path / "v.npy", tmp_path / "e.csv", tmp_path / "e.json"
    out = run("bc", path, "--weight", "--raw", "--top", "3", "-o", vertices,
              "--edges", edges).stdout
    _, labels = turbobc.read_graph(path)
    want = nx.betweenness_centrality(H, weight="weight", normalized=False)
    np.testing.assert_allclose(np.load(vertices), [want[v] for v in labels.tolist()],
                               rtol=1e-12, atol=1e-15)
    unweighted = nx.betweenness_centrality(H, normalized=False)
    assert max(abs(want[v] - unweighted[v]) for v in H) > 1  # the lengths matter
    _assert_edge_values(_edges_csv(edges), nx.edge_betweenness_centrality(
        H, weight="weight", normalized=False))
    assert "edge lengths from the file" in out
    assert "betweenness centrality (exact, raw, weighted) on engine cpu" in out
    assert "edge betweenness centrality (exact, raw, weighted) in" in out
    run("edge-bc", path, "--weight", "-k", "20", "--seed", "3", "--top", "0", "-o",
        record_path)
    record = json.loads(record_path.read_text())
    assert record["weighted"] is True and record["seed"] == 3
    sampled = nx.edge_betweenness_centrality(H, k=20, seed=3, weight="weight")
    _assert_edge_values({tuple(e): x for e, x in zip(record["edges"], record["betweenness"])},
                        sampled)
