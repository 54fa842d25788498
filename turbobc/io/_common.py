"""What every graph-file reader shares: the :class:`GraphFile` they return, opening a file
(gzip'ed or not, after a UTF-8 byte-order mark), edge lengths checked, and the claims a
header makes about the graph's size checked against what the file and the memory can hold.

The readers themselves are one module per format: :mod:`turbobc.io._matrix_market`,
:mod:`turbobc.io._edge_lists` (SNAP, CSV, TSV), :mod:`turbobc.io._metis` and
:mod:`turbobc.io._dimacs`; :func:`turbobc.io._readers.read_graph` picks one by the format.
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from turbobc._graph import canonical_csr
from turbobc._memory import available_memory, format_bytes

__all__ = ["EmptyGraphFileError", "GraphFile", "VERTEX_BYTES", "all_lengths", "as_integers",
           "check_vertex_count", "graph_file", "is_int", "length_problem", "open_binary",
           "parse_lengths", "read_text"]

UTF8_BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark some editors (Notepad, Excel's CSV export) put first: skipped."""

VERTEX_BYTES = 16
"""Bytes each vertex takes at least while a file is read: its label and its row pointer in
the CSR matrix (int64 each). A header that declares more vertices than the memory available
holds at this rate is refused before anything is allocated (:func:`check_vertex_count`)."""


class EmptyGraphFileError(ValueError):
    """The file holds no graph at all (no bytes, or only blank and comment lines where a
    header is required)."""


@dataclass(frozen=True)
class GraphFile:
    """What :func:`load` read from a file.

    Attributes
    ----------
    matrix : scipy.sparse.csr_array
        Canonical (sorted, duplicate free, no self loops): float64 ones, or the edge lengths
        when ``weighted``; symmetric, with each edge stored twice (with the same value), when
        ``directed`` is False.
    labels : numpy.ndarray
        ``labels[i]`` is vertex i's id in the file (int64, or str for named vertices).
    directed : bool
        Whether the graph was read as directed.
    format : str
        The format read (a member of :data:`FORMATS`).
    self_loops : int
        Vertices with a self loop in the file (the loops are dropped).
    header_directed : bool or None
        What the file's header says about direction (Matrix Market's symmetry, a SNAP
        "# Directed graph" / "# Undirected graph" first comment), None when it says nothing.
    appearance : numpy.ndarray or None
        Vertex indices in the order the file first names them (line by line, the first id of
        a line before the second): the node order of ``networkx.read_edgelist`` on the same
        file. None for Matrix Market, METIS and DIMACS, whose order is the index order.
    weighted : bool
        Whether ``matrix`` holds the file's edge lengths (read with ``weighted=True``) rather
        than ones.
    """

    matrix: sp.csr_array
    labels: np.ndarray
    directed: bool
    format: str
    self_loops: int
    header_directed: bool | None = None
    appearance: np.ndarray | None = None
    weighted: bool = False

    @property
    def file_order(self) -> np.ndarray:
        """Vertex indices in file order (:attr:`appearance`, or 0..n-1)."""
        if self.appearance is None:
            return np.arange(self.n, dtype=np.int64)
        return self.appearance

    @property
    def n(self) -> int:
        """Number of vertices."""
        return self.matrix.shape[0]

    @property
    def m(self) -> int:
        """Number of edges: arcs when directed, each undirected edge once otherwise."""
        return self.matrix.nnz if self.directed else self.matrix.nnz // 2


def open_binary(path: Path):
    """The file's bytes as a binary stream (decompressed on the fly when the name ends in
    .gz), positioned after a leading UTF-8 byte-order mark."""
    fh = gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")
    try:
        if fh.read(len(UTF8_BOM)) != UTF8_BOM:
            fh.seek(0)
    except BaseException:
        fh.close()
        raise
    return fh


def read_text(path: Path) -> str:
    try:
        with open_binary(path) as fh:
            data = fh.read()
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{path}: cannot read the file: {exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}, line {line}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None


def check_vertex_count(path: Path, line: int, n: int) -> None:
    """Refuse a header's ``n`` vertices when their arrays (:data:`VERTEX_BYTES` each) cannot
    fit in the memory available: a message naming the file and the header's line instead of
    NumPy's "Unable to allocate"."""
    needed = n * VERTEX_BYTES
    if needed <= 2**30:  # a GiB or less: not worth reading /proc/meminfo for
        return
    available = available_memory()
    if needed > available:
        raise ValueError(f"{path}, line {line}: the header declares n = {n:,} vertices, which "
                         f"take at least {format_bytes(needed)} to read ({VERTEX_BYTES} bytes "
                         f"a vertex), more than the {format_bytes(available)} of memory "
                         "available")


def is_int(token: str) -> bool:
    try:
        int(token)
    except ValueError:
        return False
    return True


def as_integers(tokens: list[str]):
    """The tokens as int64 when every one is an integer literal, else None."""
    if not tokens:
        return np.zeros(0, dtype=np.int64)
    try:
        return np.array(tokens, dtype=np.int64)
    except (ValueError, OverflowError):
        return None


def parse_lengths(path: Path, tokens: list[str], line_numbers: list[int], tails: list[str],
                   heads: list[str]) -> np.ndarray:
    """``tokens`` (one per edge line) as float64 edge lengths, or the error naming the first
    line whose token is not a positive finite number, and its edge (tail, head)."""
    try:
        lengths = np.array(tokens, dtype=np.float64)
    except (ValueError, OverflowError):
        lengths = None
    if lengths is not None and all_lengths(lengths):
        return lengths
    for token, number, u, v in zip(tokens, line_numbers, tails, heads):
        problem = length_problem(f"edge ({u}, {v})", token)
        if problem:
            raise ValueError(f"{path}, line {number}: {problem}")
    raise AssertionError("unreachable: some length was refused")


def all_lengths(values: np.ndarray) -> bool:
    """Whether every value is a positive finite number."""
    return bool(np.all(np.isfinite(values) & (values > 0)))


def length_problem(edge: str, token: str) -> str | None:
    """What is wrong with ``token`` as the length of ``edge``, or None."""
    try:
        value = float(token)
    except (ValueError, OverflowError):
        return f"the length of {edge}, {token[:40]!r}, is not a number"
    if math.isfinite(value) and value > 0:
        return None
    return (f"the length of {edge} is {token[:40]}; edge lengths must be positive finite "
            "numbers")



def graph_file(rows, cols, n, labels, directed, fmt, *, lengths=None, header_directed=None,
                appearance=None) -> GraphFile:
    """The :class:`GraphFile` of (row, col) pairs, with their ``lengths`` when given: self
    loops dropped, an undirected edge stored both ways, each entry once (with its smallest
    length)."""
    loop = rows == cols
    loops = np.unique(rows[loop]).size
    rows, cols = rows[~loop], cols[~loop]
    if lengths is not None:
        lengths = lengths[~loop]
    if not directed:
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
        if lengths is not None:
            lengths = np.concatenate([lengths, lengths])
    return GraphFile(matrix=canonical_csr(rows, cols, n, lengths), labels=labels,
                     directed=directed, format=fmt, self_loops=int(loops),
                     header_directed=header_directed, appearance=appearance,
                     weighted=lengths is not None)

