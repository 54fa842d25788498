"""The documentation runs: README code blocks, docstring examples and the demo command."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import pytest

import turbobc._api
import turbobc.datasets

ROOT = Path(__file__).resolve().parents[1]


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_python_examples_run(capsys):
    blocks = _python_blocks((ROOT / "README.md").read_text())
    assert blocks, "the README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "[0.         0.66666667 0.66666667 0.        ]" in out
    assert "[0. 2. 2. 0.]" in out


def test_readme_starts_with_exactly_two_commands():
    text = (ROOT / "README.md").read_text()
    bash_blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    assert len(bash_blocks) == 2
    assert all(len(block.strip().splitlines()) == 1 for block in bash_blocks)
    ci = (ROOT / ".ci" / "run").read_text()
    assert bash_blocks[1].strip() in ci, ".ci/run must run the README's test command"


@pytest.mark.parametrize("module", [turbobc._api, turbobc.datasets])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_demo_command_prints_engine_time_and_top_vertices():
    out = subprocess.run([sys.executable, "-m", "turbobc.demo", "--engine", "graphblas",
                          "--top", "3"], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout
    assert "engine: graphblas" in out
    assert re.search(r"in \d+\.\d+ s", out)
    ranks = re.findall(r"^\s+(\d)\s+(\d+)\s+([\d.]+)$", out, flags=re.M)
    # SNAP ego-Facebook's most central vertex is 107 (the hub joining the ego networks)
    assert [r[0] for r in ranks] == ["1", "2", "3"] and ranks[0][1] == "107"


def test_cpu_benchmark_smoke(tmp_path):
    from bench.cpu_exact import run

    record = run("karate", repeats=1, results=tmp_path)
    assert record["max_abs_difference"] < 1e-12
    assert len(list(tmp_path.glob("cpu_exact-karate-*.json"))) == 1
