"""Edge lists: SNAP (white space separated, .txt), CSV and TSV, one edge ``u v [length]`` a
line, vertex ids as the file writes them (integers, or names in CSV/TSV)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np

from turbobc.io._common import GraphFile, as_integers, graph_file, is_int, parse_lengths, read_text

__all__ = ["read_edge_list"]

# A SNAP header's first line: "# Directed graph ..." or "# Undirected graph ...".
_SNAP_DIRECTION = re.compile(r"^[#%]\s*(directed|undirected)\s+graph\b", re.IGNORECASE)

# Header words a CSV/TSV edge list may start with (compared lower-case, see _csv_header).
_HEADER_WORDS = {"source", "target", "src", "dst", "from", "to", "u", "v", "node1", "node2",
                 "fromnodeid", "tonodeid", "head", "tail", "i", "j", "id1", "id2", "weight",
                 "sender", "receiver"}


def read_edge_list(path: Path, fmt: str, directed, weighted: bool) -> GraphFile:
    text = read_text(path)
    delimiter = {"snap": None, "csv": ",", "tsv": "\t"}[fmt]
    firsts, seconds, thirds, line_numbers = [], [], [], []
    header_directed = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#%":
            if not firsts and header_directed is None:
                header_directed = _header_direction(line)
            continue
        fields = line.split() if delimiter is None else next(csv.reader([line],
                                                                        delimiter=delimiter))
        if len(fields) < 2:
            raise ValueError(f"{path}, line {number}: expected two vertex ids separated by "
                             f"{_delimiter_name(delimiter)}; got {raw[:80]!r}")
        u, v = fields[0].strip(), fields[1].strip()
        if not u or not v:
            raise ValueError(f"{path}, line {number}: empty vertex id in {raw[:80]!r}")
        firsts.append(u)
        seconds.append(v)
        thirds.append(fields[2].strip() if len(fields) > 2 else None)
        line_numbers.append(number)
    if fmt != "snap" and firsts and _csv_header(firsts, seconds):
        del firsts[0], seconds[0], thirds[0], line_numbers[0]

    tokens = [t for pair in zip(firsts, seconds) for t in pair]  # u1, v1, u2, v2, ...
    ids = as_integers(tokens)
    if ids is None:
        if fmt == "snap":
            _raise_first_non_integer(path, firsts, seconds, line_numbers)
        labels, inverse = _first_appearance(tokens)
    else:
        labels, inverse = np.unique(ids, return_inverse=True)
    inverse = inverse.astype(np.int64)
    rows, cols = inverse[0::2], inverse[1::2]
    lengths = None
    if weighted:
        lengths = _third_column_lengths(path, thirds, line_numbers, firsts, seconds)
    if directed is None:
        directed = bool(header_directed)
    return graph_file(rows, cols, len(labels), labels, bool(directed), fmt, lengths=lengths,
                       header_directed=header_directed, appearance=_appearance_order(inverse))


def _third_column_lengths(path, thirds, line_numbers, firsts, seconds):
    """The third column of an edge list as edge lengths (float64), or the error naming the
    first line without one or with a value that is not a positive finite number."""
    for token, number, u, v in zip(thirds, line_numbers, firsts, seconds):
        if not token:
            raise ValueError(f"{path}, line {number}: weighted=True reads the third column "
                             f"as the edge length; edge ({u}, {v}) has none")
    return parse_lengths(path, thirds, line_numbers, firsts, seconds)


def _header_direction(line: str) -> bool | None:
    """True or False when a comment line is a SNAP header naming the direction, else None."""
    found = _SNAP_DIRECTION.match(line)
    return None if found is None else found.group(1).lower() == "directed"


def _appearance_order(inverse: np.ndarray) -> np.ndarray:
    """Vertex indices in the order ``inverse`` (vertex of each token, in file order) first
    names them."""
    _, first = np.unique(inverse, return_index=True)
    return inverse[np.sort(first)]


def _delimiter_name(delimiter) -> str:
    return {None: "white space", ",": "a comma", "\t": "a tab"}[delimiter]


def _raise_first_non_integer(path, firsts, seconds, line_numbers):
    for u, v, number in zip(firsts, seconds, line_numbers):
        for token in (u, v):
            try:
                int(token)
            except ValueError:
                raise ValueError(f"{path}, line {number}: SNAP vertex ids are integers; got "
                                 f"{token[:40]!r} (read names with format='csv' or 'tsv')"
                                 ) from None
            if not -2**63 <= int(token) < 2**63:
                raise ValueError(f"{path}, line {number}: vertex id {token[:40]} does not "
                                 "fit in 64 bits")
    raise AssertionError("unreachable: every token parsed as an integer")


def _first_appearance(tokens: list[str]):
    position: dict[str, int] = {}
    inverse = np.fromiter((position.setdefault(t, len(position)) for t in tokens),
                          dtype=np.int64, count=len(tokens))
    labels = np.array(list(position), dtype=object)
    return labels, inverse


def _csv_header(firsts: list[str], seconds: list[str]) -> bool:
    """Whether the first CSV/TSV row is a header line."""
    u, v = firsts[0], seconds[0]
    if u.lower() in _HEADER_WORDS and v.lower() in _HEADER_WORDS:
        return True
    if is_int(u) or is_int(v) or len(firsts) < 2:
        return False
    return is_int(firsts[1]) and is_int(seconds[1])
