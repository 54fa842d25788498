"""The repository stands alone: code, tests, bench, notebooks and docs cite only its own files.

What a reader needs from the project's design notes lives in docs/; nothing here may send the
reader to the notes themselves, and every docs/ page (and section) that is cited must exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve()

SCANNED = ("turbobc", "spmv", "tests", "bench", "notebooks", "docs", "README.md",
           "_turbobc_nx.py", "pyproject.toml", ".ci")
"""Folders and files whose text is checked."""

SKIPPED_PARTS = {"__pycache__", ".ipynb_checkpoints"}
SKIPPED_DIRS = (ROOT / "bench" / "results", ROOT / "tests" / "data", ROOT / "turbobc" / "data")
"""Data, not prose: historical benchmark records and graph files (whose headers cite their
collections' web pages)."""

OUTSIDE = re.compile(r"DESIGN section|DESIGN\.md|research/|peers\.md")
"""How the code used to cite documents outside the repository."""

DOCS_PATH = re.compile(r"docs/([\w./-]+?\.md)(?:#([\w-]+)|, \"([^\"\n]+)\")?")
"""A docs/ page, optionally with its section: ``docs/x.md#anchor`` or ``docs/x.md, "Title"``."""

MD_LINK = re.compile(r"\]\(([\w./-]*?\.md)?(?:#([\w-]+))?\)")
"""A markdown link inside docs/: ``[text](page.md#anchor)``, ``[text](#anchor)``."""


def _text_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for p in candidates:
            if p == HERE or SKIPPED_PARTS & set(p.parts):
                continue
            if any(d in p.parents for d in SKIPPED_DIRS):
                continue
            try:
                files.append((p, p.read_text(encoding="utf-8")))
            except UnicodeDecodeError:  # data files (.gz, compiled caches)
                continue
    return files


def _slug(heading: str) -> str:
    """GitHub's anchor of a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _sections(page: Path) -> tuple[set[str], set[str]]:
    """(titles, anchors) of the headings of a markdown page."""
    titles = re.findall(r"^#{1,6} +(.+?) *$", page.read_text(encoding="utf-8"), flags=re.M)
    return set(titles), {_slug(t) for t in titles}


def _outside_references(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if OUTSIDE.search(line)]


def _broken_docs_citations(text: str) -> list[str]:
    broken = []
    for found in DOCS_PATH.finditer(text):
        page, anchor, title = found.groups()
        target = ROOT / "docs" / page
        if not target.is_file():
            broken.append(f"{found.group(0)}: no such page")
            continue
        titles, anchors = _sections(target)
        if anchor and anchor not in anchors:
            broken.append(f"{found.group(0)}: no section with that anchor")
        if title and title not in titles:
            broken.append(f"{found.group(0)}: no section with that title")
    return broken


FILES = _text_files()


def test_the_scan_sees_code_tests_bench_notebooks_and_docs():
    seen = {p.relative_to(ROOT).parts[0] for p, _ in FILES}
    assert {"turbobc", "spmv", "tests", "bench", "notebooks", "docs", "README.md"} <= seen
    assert ROOT / "spmv" / "kernels" / "batched.cuh" in {p for p, _ in FILES}
    assert (ROOT / "docs" / "algorithm.md").is_file() and (ROOT / "docs" / "benchmarks.md").is_file()


@pytest.mark.parametrize("path, text", FILES, ids=[str(p.relative_to(ROOT)) for p, _ in FILES])
def test_no_reference_to_documents_outside_the_repository(path, text):
    assert not _outside_references(text), (
        f"{path.relative_to(ROOT)} cites documents outside the repository; point to docs/ "
        f"instead: {_outside_references(text)}")


def test_every_cited_docs_page_and_section_exists():
    broken = [f"{p.relative_to(ROOT)}: {b}" for p, text in FILES
              for b in _broken_docs_citations(text)]
    cited = sum(len(DOCS_PATH.findall(text)) for p, text in FILES if "docs" not in p.parts)
    assert cited >= 10, "the code should cite docs/ where it relies on it"
    assert not broken, broken


def test_links_inside_docs_resolve():
    broken = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for found in MD_LINK.finditer(page.read_text(encoding="utf-8")):
            target = page.parent / found.group(1) if found.group(1) else page
            if not target.is_file():
                broken.append(f"{page.name}: {found.group(0)}")
            elif found.group(2) and found.group(2) not in _sections(target)[1]:
                broken.append(f"{page.name}: {found.group(0)}")
    assert not broken, broken


def test_readme_links_the_docs():
    assert "docs/" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_checks_catch_what_they_are_for():
    """A planted outside reference and a citation of a missing page or section are caught."""
    assert _outside_references("x = 1  # see DESIGN section 5\n")
    assert _outside_references("(research/peers.md section d)")
    assert not _outside_references('(docs/algorithm.md, "Many sources per sweep")')
    assert _broken_docs_citations("see docs/nowhere.md")
    assert _broken_docs_citations("docs/algorithm.md#no-such-section")
    assert _broken_docs_citations('docs/algorithm.md, "No such section"')
    assert not _broken_docs_citations('docs/algorithm.md, "Many sources per sweep" and '
                                      "docs/algorithm.md#normalization-networkxs-rules")
    assert _slug("Normalization (networkx's rules)") == "normalization-networkxs-rules"
