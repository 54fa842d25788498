"""DIMACS 9 shortest-path files (.gr, the road networks of that challenge): ``c`` comments,
one problem line ``p sp n m``, then m arcs ``a u v w`` (1-based vertices, lengths w). A
well-formed file is parsed at once by regular expressions and NumPy; any other is read line
by line to name its first bad line."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np

from turbobc.io._common import (EmptyGraphFileError, GraphFile, all_lengths, as_integers,
                                check_vertex_count, graph_file, is_int, parse_lengths, read_text)

__all__ = ["read_gr"]


def read_gr(path: Path, directed, weighted: bool) -> GraphFile:
    """The DIMACS 9 shortest-path format: ``c`` comment lines, one problem line
    ``p sp n m``, then m arc lines ``a u v w`` (1-based vertices, integer lengths w)."""
    text = read_text(path)
    arcs = _gr_arcs_at_once(text, weighted)
    if arcs is None:  # something is off: the line-by-line reader says what, and where
        arcs = _gr_arcs_by_line(path, text, weighted)
    n, rows, cols, values = arcs
    check_vertex_count(path, _problem_line_number(text), n)
    labels = np.arange(1, n + 1, dtype=np.int64)
    return graph_file(rows, cols, n, labels, True if directed is None else bool(directed),
                       "gr", lengths=values)


def _problem_line_number(text: str) -> int:
    """The line of the problem line ``p sp n m`` (the first line whose first word is p)."""
    found = re.search(r"^[ \t]*p[ \t\r]", text, flags=re.MULTILINE)
    return 1 if found is None else text.count("\n", 0, found.start()) + 1


# A well-formed DIMACS file, read without a Python loop over its lines (_gr_arcs_at_once).
_GR_PROBLEM = re.compile(r"^p[ \t]+sp[ \t]+(\d+)[ \t]+(\d+)[ \t]*\r?$", re.MULTILINE)
_GR_ARC = re.compile(r"^a[ \t]+\d+[ \t]+\d+[ \t]+\S+[ \t]*\r?$", re.MULTILINE)
_GR_COMMENT = re.compile(r"^c[^\n]*$", re.MULTILINE)


def _gr_arcs_at_once(text: str, weighted: bool):
    """(n, 0-based tails, heads, lengths or None) of a well-formed DIMACS file, by regular
    expressions and one NumPy parse (no Python object per line: a fraction of the time and
    memory of the loop), or None for any file it does not accept as well-formed.

    Well-formed: one problem line, before every arc; exactly m lines ``a u v w`` (u, v
    unsigned integers in 1..n, w a number, a positive finite one if ``weighted``); every other
    line a comment or blank. With m such lines counted, the numbers left once the ``a`` and
    the comments are gone are exactly 3m only if no other line holds anything.
    """
    found = _GR_PROBLEM.search(text)
    if found is None or text.count("\np") + text.startswith("p") != 1:
        return None
    head, body = text[:found.start()], text[found.end():]
    if _GR_COMMENT.sub("", head).strip():  # before it only comments and blank lines
        return None
    n, m = int(found.group(1)), int(found.group(2))
    if _GR_ARC.subn("", body)[1] != m:
        return None
    if "\nc" in body:
        body = _GR_COMMENT.sub("", body)
    # DIMACS lengths are integers, parsed six times faster as such; any other number as float
    numbers = _numbers(body.replace("\na", "\n"), np.int64)
    if numbers is None or numbers.size != 3 * m:
        numbers = _numbers(body.replace("\na", "\n"), np.float64)
    if numbers is None or numbers.size != 3 * m:
        return None
    numbers = numbers.reshape(m, 3)
    if m and not (numbers[:, :2].min() >= 1 and numbers[:, :2].max() <= n):
        return None
    lengths = numbers[:, 2].astype(np.float64) if weighted else None
    if lengths is not None and not all_lengths(lengths):
        return None
    return (n, numbers[:, 0].astype(np.int64) - 1, numbers[:, 1].astype(np.int64) - 1,
            lengths)


def _numbers(text: str, dtype):
    """The whitespace-separated numbers of ``text`` as ``dtype``, or None where a token is
    not one (a bad line, another kind of line) or, for an integer dtype, may not fit (NumPy
    clamps an integer beyond the dtype to its limits)."""
    if not text or text.isspace():
        return np.zeros(0, dtype=dtype)  # NumPy reads white space alone as one 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            numbers = np.fromstring(text, dtype=dtype, sep=" ")
        except (ValueError, DeprecationWarning):
            return None
    if np.issubdtype(dtype, np.integer) and numbers.size:
        limits = np.iinfo(dtype)
        if numbers.max() == limits.max or numbers.min() == limits.min:
            return None
    return numbers


def _gr_arcs_by_line(path: Path, text: str, weighted: bool):
    """:func:`_gr_arcs_at_once` line by line, raising the error of the first bad line."""
    lines = text.splitlines()
    size, tails, heads, lengths, line_numbers = None, [], [], [], []
    for number, raw in enumerate(lines, start=1):
        fields = raw.split()
        if not fields or fields[0][0] == "c":
            continue
        if fields[0] == "p":
            size = _gr_problem_line(path, number, raw, fields, size)
        elif fields[0] == "a":
            _check_gr_arc(path, number, raw, fields, size)
            tails.append(fields[1])
            heads.append(fields[2])
            lengths.append(fields[3])
            line_numbers.append(number)
        else:
            raise ValueError(f"{path}, line {number}: DIMACS shortest-path lines start with "
                             f"'c' (comment), 'p' (problem) or 'a' (arc); got {raw[:80]!r}")
    if size is None:
        error = EmptyGraphFileError if not text.strip() else ValueError
        raise error(f"{path}, line {len(lines) + 1} (end of file): no problem line 'p sp n m' "
                    "(a DIMACS shortest-path file has one before its arcs)")
    n, m = size[0], size[1]
    _check_gr_count(path, m, line_numbers, len(lines) + 1)
    rows, cols = _gr_arcs(path, tails, heads, line_numbers, n)
    values = parse_lengths(path, lengths, line_numbers, tails, heads) if weighted else None
    return n, rows, cols, values


def _gr_problem_line(path: Path, number: int, raw: str, fields: list[str], size):
    """(n, m, line) of the problem line ``p sp n m``; only one may come."""
    if size is not None:
        raise ValueError(f"{path}, line {number}: a second problem line (the first is line "
                         f"{size[2]})")
    if (len(fields) != 4 or fields[1] != "sp"
            or not all(is_int(t) and int(t) >= 0 for t in fields[2:])):
        raise ValueError(f"{path}, line {number}: the problem line must be 'p sp n m' (n "
                         f"vertices, m arcs, non-negative integers); got {raw[:80]!r}")
    return int(fields[2]), int(fields[3]), number


def _check_gr_arc(path: Path, number: int, raw: str, fields: list[str], size) -> None:
    if size is None:
        raise ValueError(f"{path}, line {number}: an arc before the problem line 'p sp n m'")
    if len(fields) != 4:
        raise ValueError(f"{path}, line {number}: an arc line is 'a u v w' (tail, head, "
                         f"length); got {raw[:80]!r}")


def _check_gr_count(path: Path, m: int, line_numbers: list[int], end: int) -> None:
    if len(line_numbers) > m:
        raise ValueError(f"{path}, line {line_numbers[m]}: more arc lines than the m = {m} "
                         "the problem line declares")
    if len(line_numbers) < m:
        raise ValueError(f"{path}, line {end} (end of file): the problem line declares "
                         f"m = {m} arcs; only {len(line_numbers)} follow")


def _gr_arcs(path: Path, tails: list[str], heads: list[str], line_numbers: list[int],
             n: int):
    """The arcs' 0-based tails and heads (int64), every id checked to lie in 1..n."""
    ids = as_integers([t for pair in zip(tails, heads) for t in pair])
    if ids is not None and np.all((ids >= 1) & (ids <= n)):
        return ids[0::2] - 1, ids[1::2] - 1
    for u, v, number in zip(tails, heads, line_numbers):
        for token in (u, v):
            if not is_int(token) or not 1 <= int(token) <= n:
                raise ValueError(f"{path}, line {number}: vertex {token[:40]!r} is not an "
                                 f"integer in 1..{n}")
    raise AssertionError("unreachable: some vertex id was refused")

