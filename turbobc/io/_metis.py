"""METIS graph files (.graph, the format of the DIMACS10 challenge): a header ``n m [fmt
[ncon]]`` after ``%`` comments, then one adjacency line per vertex (1-based neighbours,
optionally with vertex sizes, vertex weights and edge weights)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from turbobc.io._common import (EmptyGraphFileError, GraphFile, graph_file, is_int,
                                length_problem, read_text)

__all__ = ["read_metis"]


@dataclass(frozen=True)
class _MetisHeader:
    """A METIS header line: sizes, the fmt flags and what precedes the neighbours."""

    line: int  # 1-based line number of the header
    n: int
    m: int
    fmt: str  # three 0/1 digits: vertex sizes, vertex weights, edge weights
    ncon: int  # vertex weights per vertex

    @property
    def has_edge_weights(self) -> bool:
        return self.fmt[2] == "1"

    @property
    def skip(self) -> int:
        """Values before the first neighbour: the size, then ncon vertex weights."""
        return int(self.fmt[0] == "1") + (self.ncon if self.fmt[1] == "1" else 0)


def read_metis(path: Path, directed, weighted: bool) -> GraphFile:
    lines = read_text(path).splitlines()
    header = _metis_header(path, lines)
    if weighted and not header.has_edge_weights:
        raise ValueError(f"{path}, line {header.line}: the header's fmt {header.fmt} declares "
                         "no edge weights (its last digit is 0), so weighted=True has no "
                         "lengths to read")
    rows, cols, weights = [], [], []
    vertex = 0
    for number in range(header.line, len(lines)):
        raw = lines[number]
        if raw.lstrip().startswith("%"):
            continue
        if vertex == header.n:
            if raw.strip():
                raise ValueError(f"{path}, line {number + 1}: the header declares n = "
                                 f"{header.n} vertices but there are more adjacency lines")
            continue
        neighbours, lengths = _metis_line(path, number + 1, raw, vertex, header, weighted)
        rows.extend([vertex] * len(neighbours))
        cols.extend(neighbours)
        weights.extend(lengths)
        vertex += 1
    _check_metis_counts(path, header, vertex, len(cols), len(lines))
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64) - 1
    labels = np.arange(1, header.n + 1, dtype=np.int64)
    return graph_file(rows, cols, header.n, labels,
                       False if directed is None else bool(directed), "metis",
                       lengths=np.asarray(weights, dtype=np.float64) if weighted else None)


def _metis_header(path: Path, lines: list[str]) -> _MetisHeader:
    """The header line after the leading comments, checked."""
    number = 0
    while number < len(lines) and lines[number].lstrip().startswith("%"):
        number += 1
    if number == len(lines):
        error = EmptyGraphFileError if not "".join(lines).strip() else ValueError
        raise error(f"{path}, line {number + 1}: METIS file has no header line "
                    "'n m [fmt [ncon]]'")
    raw = lines[number]
    fields = raw.split()
    if not 2 <= len(fields) <= 4 or not all(is_int(t) for t in fields):
        raise ValueError(f"{path}, line {number + 1}: METIS header must be 'n m [fmt [ncon]]' "
                         f"with integers; got {raw[:80]!r}")
    n, m = int(fields[0]), int(fields[1])
    fmt = fields[2] if len(fields) > 2 else "0"
    if n < 0 or m < 0 or len(fmt) > 3 or set(fmt) - {"0", "1"}:
        raise ValueError(f"{path}, line {number + 1}: METIS header needs n >= 0, m >= 0 and fmt "
                         f"made of up to three 0/1 digits; got {raw[:80]!r}")
    fmt = fmt.zfill(3)
    ncon = int(fields[3]) if len(fields) > 3 else (1 if fmt[1] == "1" else 0)
    return _MetisHeader(line=number + 1, n=n, m=m, fmt=fmt, ncon=ncon)


def _metis_line(path: Path, number: int, raw: str, vertex: int, header: _MetisHeader,
                weighted: bool):
    """The 1-based neighbours of ``vertex`` on its adjacency line, and their edge weights
    (an empty list unless ``weighted``)."""
    fields = raw.split()
    if not all(is_int(t) for t in fields):
        raise ValueError(f"{path}, line {number}: METIS adjacency lines hold integers; "
                         f"got {raw[:80]!r}")
    step = 2 if header.has_edge_weights else 1
    entries = fields[header.skip:]
    if len(fields) < header.skip or len(entries) % step:
        raise ValueError(f"{path}, line {number}: with fmt {header.fmt} and ncon {header.ncon}, "
                         f"expected {header.skip} leading value(s) then neighbour"
                         f"{' weight' if header.has_edge_weights else ''} entries; got "
                         f"{raw[:80]!r}")
    neighbours = [int(t) for t in entries[::step]]
    for w in neighbours:
        if not 1 <= w <= header.n:
            raise ValueError(f"{path}, line {number}: neighbour {w} of vertex {vertex + 1} is "
                             f"outside 1..{header.n}")
    if not weighted:
        return neighbours, []
    tokens = entries[1::2]
    for w, token in zip(neighbours, tokens):
        problem = length_problem(f"edge ({vertex + 1}, {w})", token)
        if problem:
            raise ValueError(f"{path}, line {number}: {problem}")
    return neighbours, [int(t) for t in tokens]


def _check_metis_counts(path: Path, header: _MetisHeader, vertices: int, entries: int,
                        lines: int) -> None:
    """Every vertex has its line, and the lines hold 2m neighbour entries."""
    if vertices < header.n:
        raise ValueError(f"{path}, line {lines + 1} (end of file): the header declares "
                         f"n = {header.n} vertices but only {vertices} adjacency lines follow")
    if entries != 2 * header.m:
        raise ValueError(f"{path}, line {header.line}: the header declares m = {header.m} "
                         f"edges, so the adjacency lines should hold 2m = {2 * header.m} "
                         f"entries; they hold {entries}")

