"""The README's headline results cannot drift from the records: every number of its table is
found, as shown, in the JSON record its row links to (in the entry of the row's graph)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHECKED = ("turbobc s", "peer s", "peer / turbobc")
"""The columns whose numbers come from the record; the others are words."""

RECORD_LINK = re.compile(r"\[([\w.-]+)\]\((bench/results/[\w.-]+\.json)\)")


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def _table_rows(section: str) -> list[dict[str, str]]:
    """The rows of the first markdown table in ``section``, each a dict keyed by the header."""
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header, _separator, *rows = [[cell.strip() for cell in line.strip("|").split("|")]
                                 for line in lines]
    return [dict(zip(header, row, strict=True)) for row in rows]


def _dicts(node):
    """Every dict inside a loaded JSON record, the record itself included."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _dicts(value)
    elif isinstance(node, list):
        for value in node:
            yield from _dicts(value)


def _numbers(node) -> list[float]:
    """Every number inside ``node`` (booleans are not numbers here)."""
    if isinstance(node, bool):
        return []
    if isinstance(node, (int, float)):
        return [float(node)]
    values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return [x for value in values for x in _numbers(value)]


def _shows(shown: str, value: float) -> bool:
    """Whether ``value`` rounds to the text ``shown`` (as many decimals as it has)."""
    plain = shown.replace(",", "")
    return f"{value:.{len(plain.partition('.')[2])}f}" == plain


def _graph_name(name: str) -> str:
    return name.split(".")[0]  # records name some graphs by file: wiki-Vote.txt.gz


def not_in_record(row: dict[str, str], record: dict) -> list[str]:
    """The checked cells of ``row`` that no entry of ``row["graph"]`` in ``record`` shows; all
    of them when the record has no entry of that graph."""
    scopes = [d for d in _dicts(record)
              if isinstance(d.get("graph"), str) and _graph_name(d["graph"]) == row["graph"]]
    missing = list(CHECKED)
    for scope in scopes:
        values = _numbers(scope)
        left = [column for column in CHECKED if not any(_shows(row[column], v) for v in values)]
        missing = min(missing, left, key=len)
    return missing


def _headline() -> str:
    return _section((ROOT / "README.md").read_text(encoding="utf-8"), "Results")


def _rows_with_records() -> list[tuple[dict[str, str], dict]]:
    pairs = []
    for row in _table_rows(_headline()):
        found = RECORD_LINK.fullmatch(row["record"])
        assert found, f"the record cell {row['record']!r} is not a link to bench/results/*.json"
        name, path = found.groups()
        assert Path(path).stem == name, f"the link {row['record']!r} names another file"
        pairs.append((row, json.loads((ROOT / path).read_text())))
    return pairs


def test_headline_table_links_records_and_the_results_page():
    section = _headline()
    assert "(docs/results.md)" in section
    pairs = _rows_with_records()
    assert 5 <= len(pairs) <= 12
    for row, _ in pairs:
        for column in CHECKED:
            assert re.fullmatch(r"\d[\d,]*(\.\d+)?", row[column]), (column, row[column])


@pytest.mark.parametrize("row, record", _rows_with_records(),
                         ids=[f"{row['graph']}-{row['BC']}" for row, _ in _rows_with_records()])
def test_every_headline_number_is_in_its_record(row, record):
    assert not_in_record(row, record) == [], (
        f"the README's headline row for {row['graph']} ({row['BC']}) shows numbers that "
        f"{row['record']} does not hold: {[(c, row[c]) for c in not_in_record(row, record)]}")


def test_the_check_catches_a_number_the_record_does_not_hold():
    row, record = _rows_with_records()[0]
    assert not_in_record(row, record) == []
    assert not_in_record({**row, "turbobc s": "0.001"}, record) == ["turbobc s"]
    assert not_in_record({**row, "peer / turbobc": "99.9"}, record) == ["peer / turbobc"]
    assert not_in_record({**row, "graph": "no-such-graph"}, record) == list(CHECKED)
    assert _shows("1,393", 1393.2168) and _shows("0.026", 0.025964)
    assert not _shows("0.027", 0.026) and not _shows("0.03", 0.024)
