"""The documentation runs: README code blocks, docstring examples and the demo command."""

from __future__ import annotations

import ast
import doctest
import os
import re
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the copy pip vendors
    from pip._vendor import tomli as tomllib

import turbobc._api
import turbobc.datasets
import turbobc._topk

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


@pytest.mark.slow
def test_usage_page_examples_run(capsys):
    """docs/usage.md's examples (the manual the README points to) run and print what their
    comments say."""
    blocks = _python_blocks((ROOT / "docs" / "usage.md").read_text())
    assert len(blocks) >= 3
    for block in blocks:
        exec(compile(block, "docs/usage.md", "exec"), {})
    out = capsys.readouterr().out
    assert "{13: 0.0, 42: 1.0, 7000: 0.0}" in out and "['A', 'B', 'C'] 3.5" in out
    assert "[0.  0.5 0. ]" in out


@pytest.mark.slow
def test_approximate_page_example_runs(capsys):
    """docs/approximate.md's examples run: the first (the CPU engine) with its bound, the
    second (top_k) with its guarantee against the exact values."""
    import numpy as np

    import turbobc

    blocks = _python_blocks((ROOT / "docs" / "approximate.md").read_text())
    assert len(blocks) == 2
    exec(compile(blocks[0], "docs/approximate.md", "exec"), {})
    sampler, samples, pilot, bound, stopped = capsys.readouterr().out.split()
    assert sampler == "sources" and int(samples) > 0 and int(pilot) > 0
    assert float(bound) <= 0.05 and stopped in ("radius", "hoeffding")
    scope = {}
    exec(compile(blocks[1], "docs/approximate.md", "exec"), scope)
    top, exact = scope["top"], turbobc.bc(scope["A"], engine="cpu")
    assert len(top.vertices) == 10 and capsys.readouterr().out.strip()
    threshold = np.sort(exact)[-10]  # the 10th largest exact value
    chosen = np.zeros(exact.size, dtype=bool)
    chosen[np.asarray(top.vertices)] = True
    assert not np.any(~chosen & (exact > threshold + 2 * 0.01))  # none far above left out
    assert not np.any(chosen & (exact < threshold - 2 * 0.01))   # none far below taken in


def test_every_readme_code_block_is_run_or_is_a_shell_transcript():
    """Only ```python blocks are executed above: a ```py or ```pycon block would be skipped."""
    fences = re.findall(r"^```(\S*)$", (ROOT / "README.md").read_text(), flags=re.M)
    assert len(fences) % 2 == 0 and not any(fences[1::2])  # each block opens and closes
    languages = fences[0::2]
    assert set(languages) <= {"python", "bash", "console"}
    assert languages.count("python") == len(_python_blocks((ROOT / "README.md").read_text()))


_INSTALL_EXTRA = re.compile(r'pip install[^`\n]*?"\.\[([\w,-]+)\]"')


def _blocks_with_their_install_extra(text: str) -> list[tuple[str, str]]:
    """Each ```python block and the extra named by the last ``pip install ".[EXTRA]"`` that
    precedes it outside the two ```bash commands (the install line for the examples)."""
    prose = re.sub(r"```bash\n.*?```", "", text, flags=re.S)
    pairs = []
    for found in re.finditer(r"```python\n(.*?)```", prose, flags=re.S):
        extras = _INSTALL_EXTRA.findall(prose, 0, found.start())
        assert extras, "a python example comes before any install line that names its extra"
        pairs.append((found.group(1), extras[-1]))
    return pairs


def _top_level_imports(code: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _requirement_names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def test_readme_examples_import_only_what_their_install_line_installs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = _requirement_names(project["dependencies"]) | {canonicalize_name(project["name"])}
    extras = project["optional-dependencies"]
    distributions = packages_distributions()
    pairs = _blocks_with_their_install_extra((ROOT / "README.md").read_text())
    assert [extra for _, extra in pairs][0] == "networkx"
    for code, extra in pairs:
        assert extra in extras, f"the README installs the extra {extra!r}; pyproject lacks it"
        installed = base | _requirement_names(extras[extra])
        for module in sorted(_top_level_imports(code) - set(sys.stdlib_module_names)):
            names = {canonicalize_name(d) for d in distributions.get(module, [module])}
            assert names & installed, (f"a README example imports {module!r}, which neither "
                                       f"the dependencies nor the extra {extra!r} install")


def test_the_install_check_catches_a_missing_package():
    """The check above fails on an example that imports what its extra does not bring."""
    text = 'Install: `pip install ".[networkx]"`\n```python\nimport networkit\n```\n'
    ((code, extra),) = _blocks_with_their_install_extra(text)
    assert extra == "networkx" and _top_level_imports(code) == {"networkit"}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "networkit" not in _requirement_names(project["optional-dependencies"][extra])


def test_readme_starts_with_exactly_two_commands():
    text = (ROOT / "README.md").read_text()
    bash_blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    assert len(bash_blocks) == 2
    assert all(len(block.strip().splitlines()) == 1 for block in bash_blocks)
    ci = (ROOT / ".ci" / "run").read_text()
    assert bash_blocks[1].strip() in ci, ".ci/run must run the README's test command"


def test_the_first_check_leaves_out_the_slow_tests_and_ci_runs_them():
    """The README's test command deselects the tests marked slow (pyproject's addopts); .ci/run
    runs them after that command in the same fresh copy, and the README says how to run them."""
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"]
    assert options["addopts"][-2:] == ["-m", "not slow"]
    assert any(marker.startswith("slow: ") for marker in options["markers"])
    ci = (ROOT / ".ci" / "run").read_text()
    first = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)[1]
    assert ci.index(first.strip()) < ci.index(".venv-test/bin/python -m pytest -m slow")
    readme = (ROOT / "README.md").read_text()
    assert "-m slow" in readme and '-m "slow or not slow"' in readme
    # the notebooks' tests are slow and need their extra, which the first check leaves out
    notebooks = 'pip install -q ".[notebooks]"'
    assert notebooks in readme and ci.index(notebooks) < ci.index(" -m slow")


@pytest.mark.parametrize("module", [
    pytest.param(turbobc._api, marks=pytest.mark.slow),  # approximate BC of ego-Facebook, twice
    turbobc.datasets, turbobc._topk])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_demo_command_prints_engine_time_and_top_vertices():
    """The README's demo with no usable device (CUDA_VISIBLE_DEVICES="" hides any GPU from
    CuPy): it says so in plain words, then runs on the CPU engine."""
    out = subprocess.run([sys.executable, "-m", "turbobc.demo", "--top", "3"],
                         capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "CUDA_VISIBLE_DEVICES": ""}).stdout
    assert "engine: cpu" in out
    lines = out.splitlines()
    note = lines.index("No usable CUDA device was found, so the CPU engine (numba) is used.")
    assert lines[note + 1].startswith("  detail: ")  # the technical reason, after the sentence
    assert re.search(r"in \d+\.\d+ s", out)
    ranks = re.findall(r"^\s+(\d)\s+(\d+)\s+([\d.]+)$", out, flags=re.M)
    # SNAP ego-Facebook's most central vertex is 107 (the hub joining the ego networks)
    assert [r[0] for r in ranks] == ["1", "2", "3"] and ranks[0][1] == "107"


def test_cpu_benchmark_smoke(tmp_path):
    from bench.cpu_exact import run

    record = run("karate", repeats=1, results=tmp_path)
    assert record["max_abs_difference"] < 1e-12
    assert len(list(tmp_path.glob("cpu_exact-karate-*.json"))) == 1
