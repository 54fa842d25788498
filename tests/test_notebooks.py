"""The notebooks execute headless on a CPU-only machine (they read the JSON records), as
notebooks/execute.py runs them, without errors or warnings; their saved outputs hold no path
of the machine that ran them, and every figure, saved or fresh, is readable: at most 1,600 px
wide (at most three panels a row; notebook 03 lays its maps out so). Every test that reads a
notebook is marked slow: it needs the notebooks extra (``pip install ".[notebooks]"``), which
.ci/run installs before the slow tests and the README's first check leaves out."""

from __future__ import annotations

import base64
import importlib.util
import struct
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MAX_FIGURE_WIDTH = 1600
"""Pixels: about three panels of 5 inches at the inline backend's 100 dots an inch."""


def _execute_module():
    spec = importlib.util.spec_from_file_location("notebooks_execute",
                                                  ROOT / "notebooks" / "execute.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _outputs(book) -> list[dict]:
    return [o for cell in book.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]


def _png_sizes(book) -> list[tuple[int, int]]:
    """(width, height) of every PNG figure in the outputs, from its header (IHDR)."""
    sizes = []
    for output in _outputs(book):
        png = output.get("data", {}).get("image/png")
        if png:
            header = base64.b64decode(png)[:24]
            assert header[:8] == b"\x89PNG\r\n\x1a\n"
            sizes.append(struct.unpack(">II", header[16:24]))
    return sizes


def _text(book) -> str:
    """Every text the outputs show: streams, plain-text results, error messages."""
    parts = []
    for output in _outputs(book):
        parts.append("".join(output.get("text", "")))
        parts.append("".join(output.get("data", {}).get("text/plain", "")))
        parts.extend(output.get("traceback", []))
    return "\n".join(parts)


def _check(book, name: str) -> None:
    outputs = _outputs(book)
    assert outputs, f"{name} has no outputs"
    assert not [o for o in outputs if o.get("output_type") == "error"], name
    # nothing on stderr: no warning (the TqdmWarning of tqdm.auto in a kernel without
    # ipywidgets was one), no log line
    assert not [o for o in outputs if o.get("name") == "stderr"], name
    sizes = _png_sizes(book)
    assert sizes, f"{name} shows no figure"
    for width, height in sizes:
        assert width <= MAX_FIGURE_WIDTH, (name, width, height)


def test_there_are_three_notebooks():
    assert [p.name for p in NOTEBOOKS] == ["01_vs_graphblas.ipynb",
                                           "02_memory_footprint.ipynb",
                                           "03_kernel_selection.ipynb"]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path):
    _check(_execute_module().execute(path), f"{path.name} (run now)")


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_saved_outputs_are_clean(path):
    import nbformat

    book = nbformat.read(path, as_version=4)
    _check(book, f"{path.name} (saved)")
    text = _text(book)
    for machine_path in (str(ROOT), sys.prefix, "site-packages", "/home/", "/root/"):
        assert machine_path not in text, (path.name, machine_path)
    assert "TqdmWarning" not in text


@pytest.mark.slow
def test_the_size_check_catches_a_wide_figure():
    """The check above fails on the layout that broke notebook 03: seven 6.5-inch panels in
    one row (4,532 px)."""
    import matplotlib

    matplotlib.use("Agg")
    import io

    import matplotlib.pyplot as plt
    import nbformat

    fig, axes = plt.subplots(1, 7, figsize=(6.5 * 7, 5))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    png = base64.b64encode(buffer.getvalue()).decode()
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": png})])])
    ((width, _),) = _png_sizes(book)
    assert width > MAX_FIGURE_WIDTH
    with pytest.raises(AssertionError):
        _check(book, "seven panels")
