"""The ``turbobc`` command's one rule (docs/cli.md, ``turbobc --help``), each part of it shown
on a process run as a person runs it: the exit status, what went to stdout and to stderr, and
that no output file (nor a partial one) is left behind where the run did not finish.

exit 2: a usage error, found before the graph is read (the graph files here are malformed on
purpose where that matters: reading them would exit 1); exit 1: a data error naming the file
and the line; notes on stderr, results on stdout; a closed pipe ends quietly (exit 0); Ctrl-C
ends with one line and exit 130; no traceback unless --debug.
"""

from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from data_files import path as data_path
from turbobc.cli import EXIT_RULE

ROOT = Path(__file__).resolve().parents[1]
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}  # CuPy sees no device, on any machine


def cli(*args, env=None, cwd=None):
    """``python -m turbobc.cli ARGS``: the completed process (text, both streams caught)."""
    return subprocess.run([sys.executable, "-m", "turbobc.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd or ROOT,
                          env={**os.environ, **NO_GPU, **(env or {})})


def one_error_line(result, status: int, message: str) -> None:
    """Exit ``status``, nothing on stdout, and on stderr exactly one line: the error."""
    assert result.returncode == status, result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines() == [result.stderr.rstrip("\n")], result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def malformed_graph(folder: Path) -> Path:
    """An edge list whose line 2 is bad: a command that reads it exits 1 naming that line, so
    a usage error (exit 2) on it was found before reading."""
    path = folder / "bad.txt"
    path.write_text("1 2\n3\n")
    return path


def test_the_rule_is_in_the_help_and_in_docs_cli():
    top = cli("--help")
    assert top.returncode == 0 and EXIT_RULE in top.stdout
    page = " ".join((ROOT / "docs" / "cli.md").read_text().split())
    assert " ".join(EXIT_RULE.split()) in page


@pytest.mark.parametrize("flags, message", [
    (["--epsilon", "0"], "--epsilon must lie strictly between 0 and 1; got 0.0"),
    (["--epsilon", "1.5"], "--epsilon must lie strictly between 0 and 1; got 1.5"),
    (["--epsilon", "nan"], "--epsilon must lie strictly between 0 and 1; got nan"),
    (["--epsilon", "0.1", "--delta", "1"], "--delta must lie strictly between 0 and 1; got 1.0"),
])
@pytest.mark.parametrize("command", ["bc", pytest.param("edge-bc", marks=pytest.mark.slow)])
def test_epsilon_and_delta_outside_0_1_exit_2_before_reading(tmp_path, command, flags,
                                                             message):
    graph, out = malformed_graph(tmp_path), tmp_path / "out.csv"
    result = cli(command, graph, *flags, "-o", out)
    one_error_line(result, 2, f"turbobc {command}: error: {message}")
    assert sorted(os.listdir(tmp_path)) == ["bad.txt"]


def test_output_paths_that_cannot_be_written_exit_2_before_reading(tmp_path):
    """/proc/out.csv: /proc is a directory, writable by root's permission bits, where no file
    can be created; file.mtx/out.csv: 'file.mtx' exists but is a file."""
    graph = malformed_graph(tmp_path)
    (tmp_path / "file.mtx").write_text("%%MatrixMarket matrix coordinate pattern general\n")
    cases = [
        ("/proc/out.csv", "-o /proc/out.csv: cannot create a file in '/proc' (the system "
                          "says: "),
        (tmp_path / "file.mtx" / "out.csv",
         f"-o {tmp_path / 'file.mtx' / 'out.csv'}: {str(tmp_path / 'file.mtx')!r} is a file, "
         "not a directory"),
        (tmp_path / "file.mtx" / "deeper" / "out.csv",
         f"{str(tmp_path / 'file.mtx')!r} is a file, not a directory"),
        (tmp_path / "nowhere" / "out.csv",
         f"the directory {str(tmp_path / 'nowhere')!r} does not exist"),
    ]
    if not Path("/proc").is_dir():
        cases = cases[1:]  # not Linux: no /proc to try
    for output, message in cases:
        one_error_line(cli("bc", graph, "-o", output), 2, message)
        one_error_line(cli("bc", graph, "--edges", output), 2,
                       message.replace("-o ", "--edges "))
    # an output that would overwrite the graph file itself
    listed = tmp_path / "g.csv"
    listed.write_text("a,b\nb,c\n")
    one_error_line(cli("bc", listed, "-o", listed), 2,
                   f"-o {listed}: is the graph file; the output would overwrite it")
    assert sorted(os.listdir(tmp_path)) == ["bad.txt", "file.mtx", "g.csv"]


def test_missing_inputs_and_unknown_formats_are_usage_errors(tmp_path):
    one_error_line(cli("bc", tmp_path / "none.mtx"), 2,
                   f"turbobc bc: error: {tmp_path / 'none.mtx'}: no such graph file")
    one_error_line(cli("info", tmp_path), 2, f"{tmp_path}: is a directory, not a graph file")
    odd = tmp_path / "g.edges-v2"
    odd.write_text("1 2\n")
    one_error_line(cli("bc", odd), 2, "from its suffix '.edges-v2' (known: ")
    result = cli("bc", odd)
    assert "give --format mtx, snap, csv, tsv, metis or gr" in result.stderr
    assert "format=" not in result.stderr


def test_hints_use_the_flags_spelling(tmp_path):
    """A SNAP edge list with names: the hint says '--format csv', not format='csv'."""
    names = tmp_path / "names.txt"
    names.write_text("alice bob\nbob carol\n")
    one_error_line(cli("bc", names, "--engine", "graphblas"), 1,
                   f"{names}, line 1: SNAP vertex ids are integers; got 'alice' (read names "
                   "with --format csv or --format tsv)")
    result = cli("bc", names, "--format", "tsv", "--engine", "graphblas")
    assert result.returncode == 1 and "format=" not in result.stderr  # one column: no id pair
    spaced = tmp_path / "names.csv"
    spaced.write_text("alice,bob\nbob,carol\n")
    assert cli("bc", spaced, "--engine", "graphblas").returncode == 0


def test_gpus_beyond_the_machine_is_a_usage_error_saying_how_many(tmp_path):
    graph, out = malformed_graph(tmp_path), tmp_path / "out.csv"
    for command in ("bc", "edge-bc"):
        result = cli(command, graph, "--gpus", "2", "-o", out)
        one_error_line(result, 2, f"turbobc {command}: error: --gpus 2 asks for 2 GPUs; "
                                  "this machine has 0: ")
    one_error_line(cli("bc", graph, "--gpus", "0"), 2, "--gpus must be at least 1; got 0")
    assert sorted(os.listdir(tmp_path)) == ["bad.txt"]


def _with_gpu_count(count: int, *args) -> subprocess.CompletedProcess:
    """The command in a process whose turbobc is told that ``count`` GPUs are there (the
    local cluster's workers then run the CPU engine)."""
    code = ("import sys; import turbobc._engines as engines; "
            f"engines.gpu_count = lambda: {count}; "
            "from turbobc.cli import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, **NO_GPU})


@pytest.mark.slow
def test_dask_logging_is_quiet_unless_debug(tmp_path):
    """--gpus 1 starts a local cluster: its workers' INFO lines (about 40) are not shown; with
    --debug they are."""
    graph = tmp_path / "g.txt"
    graph.write_text("1 2\n2 3\n3 4\n")
    quiet = _with_gpu_count(1, "bc", graph, "--gpus", "1", "--top", "0")
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    assert "1 Dask worker(s), engine cpu" in quiet.stdout
    loud = _with_gpu_count(1, "bc", graph, "--gpus", "1", "--top", "0", "--debug")
    assert loud.returncode == 0, loud.stderr
    assert "distributed.worker - INFO" in loud.stderr


def test_a_closed_pipe_ends_quietly_and_the_files_are_still_written(tmp_path):
    """stdout closed before anything is written (what '| head' does to the lines it does not
    read): exit 0, nothing on stderr, every output file whole."""
    out, edges = tmp_path / "bc.csv", tmp_path / "edges.csv"
    command = [sys.executable, "-m", "turbobc.cli", "bc", str(data_path("delaunay_n10.mtx")),
               "--engine", "graphblas", "--top", "500", "-o", str(out), "--edges", str(edges)]
    for args in (command, [sys.executable, "-m", "turbobc.cli", "--help"]):
        with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT, env={**os.environ, **NO_GPU}) as process:
            process.stdout.close()
            stderr = process.stderr.read()
            status = process.wait(timeout=300)
        assert status == 0, stderr
        assert stderr == ""
    with open(out, newline="") as fh:
        assert len(list(csv.reader(fh))) == 1 + 1024
    assert len(edges.read_text().splitlines()) == 1 + 3056
    assert sorted(os.listdir(tmp_path)) == ["bc.csv", "edges.csv"]


def _grid_mtx(path: Path, side: int) -> Path:
    """A side x side grid as a Matrix Market file: deep (2 side levels), no trees to fold:
    exact BC of 100 x 100 takes a minute or more on two cores."""
    G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(side, side), first_label=1)
    lines = [f"{max(u, v)} {min(u, v)}" for u, v in G.edges()]
    path.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n"
                    f"{side * side} {side * side} {len(lines)}\n" + "\n".join(lines) + "\n")
    return path


def _ctrl_c_as_at_a_terminal():
    """In the child before it starts: SIGINT's default action, as at a terminal. A shell runs a
    background job (``pytest ... &``) with SIGINT ignored, the child inherits that, and a
    Python started so installs no KeyboardInterrupt: the Ctrl-C would be lost."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_with_one_line_and_exit_130(tmp_path):
    graph = _grid_mtx(tmp_path / "grid.mtx", 100)
    out, edges = tmp_path / "bc.csv", tmp_path / "edges.csv"
    with subprocess.Popen([sys.executable, "-m", "turbobc.cli", "bc", str(graph), "--engine",
                           "graphblas", "-o", str(out), "--edges", str(edges)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                          env={**os.environ, **NO_GPU}, preexec_fn=_ctrl_c_as_at_a_terminal
                          ) as process:
        first = process.stdout.readline()  # the graph is read: the computing has begun
        assert first.startswith(f"{graph}: n = 10,000 vertices"), first
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130
    assert stderr == "turbobc bc: interrupted\n"
    assert stdout == ""
    assert sorted(os.listdir(tmp_path)) == ["grid.mtx"]  # no output, whole or partial


def test_no_traceback_unless_debug(tmp_path):
    graph = malformed_graph(tmp_path)
    plain = cli("bc", graph, "--engine", "graphblas")
    one_error_line(plain, 1, f"turbobc bc: error: {graph}, line 2: expected two vertex ids")
    debug = cli("bc", graph, "--engine", "graphblas", "--debug")
    assert debug.returncode == 1 and debug.stdout == ""
    assert debug.stderr.startswith("Traceback (most recent call last):")
    assert debug.stderr.splitlines()[-1] == plain.stderr.rstrip("\n")


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    """Files saved by editors that put a byte-order mark first (the graph, the --sources
    file): read as without it (it used to fail with "got '\\ufeff1'")."""
    graph, sources, out = tmp_path / "g.txt", tmp_path / "s.txt", tmp_path / "bc.csv"
    graph.write_bytes(b"\xef\xbb\xbf1 2\n2 3\n")
    sources.write_bytes(b"\xef\xbb\xbf1\n")
    result = cli("bc", graph, "--engine", "graphblas", "--sources", sources, "--raw", "-o", out)
    assert result.returncode == 0 and result.stderr == ""
    assert "n = 3 vertices, m = 2 undirected edges" in result.stdout
    assert out.read_text() == ("label,bc\n1,0.0000000000000000e+00\n2,5.0000000000000000e-01\n"
                               "3,0.0000000000000000e+00\n")  # source 1: 2 lies on 1 -> 3


def test_approximate_bc_that_sweeps_every_source_says_it_is_exact(tmp_path):
    """A graph smaller than the sample the bound needs: every source is swept, and the line
    says the values are exact instead of 'within 0 of the exact one with probability 0.9'."""
    G = nx.les_miserables_graph()
    G = nx.relabel_nodes(G, {v: i + 1 for i, v in enumerate(G)})
    graph, out = tmp_path / "les.txt", tmp_path / "bc.json"
    graph.write_text("".join(f"{u} {v}\n" for u, v in G.edges()))
    for command in ("bc", "edge-bc"):
        result = cli(command, graph, "--epsilon", "0.01", "--seed", "1", "--engine",
                     "graphblas", "--top", "0", "-o", out)
        assert result.returncode == 0 and result.stderr == ""
        assert ("approximate: exact values (the bound needs no fewer samples than sweeping "
                "every source of the 77, so every source was swept)") in result.stdout
        assert "within 0 of" not in result.stdout
    exact = nx.betweenness_centrality(nx.read_edgelist(graph, nodetype=int))
    result = cli("bc", graph, "--epsilon", "0.01", "--seed", "1", "--engine", "graphblas",
                 "--top", "0", "-o", out)
    import json

    record = json.loads(out.read_text())
    np.testing.assert_allclose(record["betweenness"], [exact[v] for v in record["vertices"]],
                               rtol=1e-12, atol=1e-15)


def _table_values(stdout: str) -> list[str]:
    """The value column of a top-N table, as printed (spaces kept)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("rank"))
    header = lines[start]
    column = header.index("  ", header.index("edge" if "edge" in header else "vertex")) + 2
    return [line[column:] for line in lines[start + 1:] if re.match(r"^\s+\d+\s", line)]


@pytest.mark.parametrize("command, flags", [
    pytest.param("bc", ["--raw"], marks=pytest.mark.slow), ("bc", []),
    pytest.param("edge-bc", [], marks=pytest.mark.slow)])
def test_top_table_values_line_up(command, flags):
    """Six significant digits of the largest value, the same decimals for every row: the
    decimal points in one column (they were 8 significant digits, ragged)."""
    result = cli(command, data_path("delaunay_n10.mtx"), "--engine", "graphblas", "--top",
                 "12", *flags)
    assert result.returncode == 0 and result.stderr == ""
    values = _table_values(result.stdout)
    assert len(values) == 12
    assert len({len(v) for v in values}) == 1  # right-aligned to one width
    points = {v.index(".") if "." in v else len(v) for v in values}  # raw: whole numbers
    assert len(points) == 1  # the decimal points in one column
    numbers = [float(v) for v in values]
    assert numbers == sorted(numbers, reverse=True)
    digits = len(values[0].strip().replace(".", "").lstrip("0"))
    assert digits == 6, values[0]


@pytest.mark.parametrize("name, text, line, message", [
    ("lie.mtx", "%%MatrixMarket matrix coordinate pattern general\n5 5 3000000000\n1 2\n",
     "4 (end of file)", "the size line (line 2) declares 3000000000 entries; only 1 follow"),
    ("huge.mtx", "%%MatrixMarket matrix coordinate pattern general\n% hostile\n"
     "1000000000000 1000000000000 1\n1 2\n", "3",
     "the header declares n = 1,000,000,000,000 vertices, which take at least"),
    ("huge.gr", "c hostile\np sp 1000000000000 1\na 1 2 1\n", "2",
     "the header declares n = 1,000,000,000,000 vertices, which take at least"),
])
def test_files_that_lie_about_their_size_are_data_errors(tmp_path, name, text, line, message):
    """A header's counts are claims: never allocated beyond what the file (entries) or the
    memory (vertices) can hold, never an abort (exit 134) or NumPy's 'Unable to allocate'."""
    path, out = tmp_path / name, tmp_path / "bc.csv"
    path.write_text(text)
    for command in ("info", "bc"):
        args = [command, path] + (["-o", out, "--engine", "graphblas"] if command == "bc"
                                  else [])
        result = cli(*args)
        one_error_line(result, 1, f"turbobc {command}: error: {path}, line {line}: {message}")
        assert "Unable to allocate" not in result.stderr
    assert sorted(os.listdir(tmp_path)) == [name]


def test_the_table_in_docs_cli_is_what_the_command_prints():
    """docs/cli.md's example table, run again (the time aside, which depends on the machine)."""
    page = (ROOT / "docs" / "cli.md").read_text()
    example = page[page.index("$ turbobc bc delaunay_n10.mtx"):]
    example = example[:example.index("```")].splitlines()
    result = cli("bc", "delaunay_n10.mtx", "--engine", "graphblas", "--top", "3",
                 cwd=data_path("delaunay_n10.mtx").parent)
    assert result.returncode == 0 and result.stderr == ""
    printed = result.stdout.splitlines()
    assert len(printed) == len(example) - 1
    for ours, documented in zip(printed, example[1:]):
        assert re.sub(r"in \d+\.\d\d s", "", ours) == re.sub(r"in \d+\.\d\d s", "", documented)


def test_an_unreadable_graph_file_is_a_usage_error(tmp_path, monkeypatch, capsys):
    """Root reads every file, so the check is shown with os.access telling 'no' to reading."""
    from turbobc.cli import main

    graph = malformed_graph(tmp_path)
    monkeypatch.setattr(os, "access", lambda path, mode: mode != os.R_OK)
    assert main(["info", str(graph)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"turbobc info: error: {graph}: cannot read the graph file "
                            "(permission denied)\n")


def test_a_bug_is_one_line_naming_itself(tmp_path, monkeypatch, capsys):
    """An exception no rule expects (a bug): one line, exit 1, the way to see more."""
    import turbobc.cli._commands
    from turbobc.cli import main

    def broken(args):
        raise RuntimeError("the index went astray")

    monkeypatch.setattr(turbobc.cli._commands, "info", broken)
    assert main(["info", str(malformed_graph(tmp_path))]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("turbobc info: error: internal error (RuntimeError: the index went "
                            "astray); run again with --debug for the traceback, and report "
                            "it\n")
