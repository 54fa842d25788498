"""Run the notebooks headless and save them with their outputs, from the records in
bench/results/ (nothing is timed in a cell): ``python notebooks/execute.py [NOTEBOOK ...]``
(default: every notebook here). tests/test_notebooks.py runs them the same way."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))


def execute(path: Path):
    """The notebook at ``path``, run top to bottom in a fresh python3 kernel started in this
    folder (figures inline, as PNG), with its outputs; timing metadata left out."""
    import nbformat
    from nbclient import NotebookClient

    book = nbformat.read(path, as_version=4)
    NotebookClient(book, timeout=600, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return book


def main(argv: list[str]) -> int:
    import nbformat

    for path in [Path(p).resolve() for p in argv] or NOTEBOOKS:
        nbformat.write(execute(path), path)
        print(f"ran and saved {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
