"""The notebooks execute headless on a CPU-only machine (they read the JSON records)."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_three_notebooks():
    assert [p.name for p in NOTEBOOKS] == ["01_vs_graphblas.ipynb",
                                           "02_memory_footprint.ipynb",
                                           "03_kernel_selection.ipynb"]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path):
    import nbformat
    from nbclient import NotebookClient

    book = nbformat.read(path, as_version=4)
    NotebookClient(book, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for cell in book.cells if cell.cell_type == "code"
              for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    committed = [o for cell in nbformat.read(path, as_version=4).cells
                 if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert committed, f"{path.name} is committed without its outputs"
    assert not [o for o in committed if o.get("output_type") == "error"]
