"""Readers for the file formats graphs come in: :func:`read_graph`.

Every reader returns the adjacency *pattern* (a canonical ``scipy.sparse.csr_array`` of float64
ones: sorted, no duplicates, no self loops) and the original vertex labels, so that results can
be reported with the ids the file uses. Errors in a file raise ``ValueError`` naming the file and
the line.
"""

from __future__ import annotations

import csv
import gzip
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["FORMATS", "GraphFile", "load", "read_graph"]

FORMATS = ("mtx", "snap", "csv", "tsv", "metis")
"""Format names :func:`read_graph` accepts for ``format=``."""

_SUFFIX_FORMAT = {
    ".mtx": "mtx", ".mm": "mtx",
    ".txt": "snap", ".edges": "snap", ".edgelist": "snap", ".el": "snap",
    ".csv": "csv", ".tsv": "tsv",
    ".graph": "metis", ".metis": "metis",
}

# Header words a CSV/TSV edge list may start with (compared lower-case, see _csv_header).
_HEADER_WORDS = {"source", "target", "src", "dst", "from", "to", "u", "v", "node1", "node2",
                 "fromnodeid", "tonodeid", "head", "tail", "i", "j", "id1", "id2", "weight",
                 "sender", "receiver"}


@dataclass(frozen=True)
class GraphFile:
    """What :func:`load` read from a file.

    Attributes
    ----------
    matrix : scipy.sparse.csr_array
        The canonical pattern (float64 ones, sorted, duplicate free, no self loops);
        symmetric, with each edge stored twice, when ``directed`` is False.
    labels : numpy.ndarray
        ``labels[i]`` is vertex i's id in the file (int64, or str for named vertices).
    directed : bool
        Whether the graph was read as directed.
    format : str
        The format read (a member of :data:`FORMATS`).
    self_loops : int
        Vertices with a self loop in the file (the loops are dropped).
    """

    matrix: sp.csr_array
    labels: np.ndarray
    directed: bool
    format: str
    self_loops: int

    @property
    def n(self) -> int:
        """Number of vertices."""
        return self.matrix.shape[0]

    @property
    def m(self) -> int:
        """Number of edges: arcs when directed, each undirected edge once otherwise."""
        return self.matrix.nnz if self.directed else self.matrix.nnz // 2


def read_graph(path, *, format=None, directed=None):
    """Read a graph file into an adjacency matrix and the original vertex labels.

    Parameters
    ----------
    path : str or os.PathLike
        The file; a name ending in ``.gz`` is decompressed on the fly.
    format : {"mtx", "snap", "csv", "tsv", "metis"}, optional
        Guessed from the suffix (before ``.gz``) when omitted: ``.mtx``/``.mm`` Matrix Market;
        ``.txt``/``.edges``/``.edgelist``/``.el`` a SNAP (whitespace separated) edge list;
        ``.csv`` and ``.tsv`` comma and tab separated edge lists; ``.graph``/``.metis`` METIS
        (the format of the DIMACS10 challenge).
    directed : bool, optional
        ``None`` (default) takes what the file says: Matrix Market ``symmetric`` (or
        ``skew-symmetric``, ``hermitian``) is undirected and ``general`` directed; METIS is
        undirected; edge lists carry no reliable flag (SNAP headers call undirected
        collaboration graphs "Directed graph"), so they are read as undirected. ``True``
        keeps every entry or line as an arc u -> v; ``False`` symmetrizes.

    Returns
    -------
    A : scipy.sparse.csr_array
        n x n, float64 ones: ``A[i, j] == 1`` means an edge i -> j. Self loops and repeated
        lines are dropped; an undirected graph is stored symmetric (each edge twice), so
        ``turbobc.bc(A)`` treats it as undirected.
    labels : numpy.ndarray
        Length n: ``labels[i]`` is the id vertex i has in the file. For Matrix Market and
        METIS these are the 1-based indices of the file (``labels[i] == i + 1``). For edge
        lists with integer ids, the distinct ids in ascending order (int64); with names
        (CSV/TSV), the names (str) in order of first appearance. Vertices whose only edge is
        a self loop are kept, isolated.

    Raises
    ------
    ValueError
        Unknown format or suffix, or a malformed file; the message names the file and the line.
    FileNotFoundError
        ``path`` does not exist.

    Notes
    -----
    Edge lists: lines starting with ``#`` or ``%`` and blank lines are skipped; CRLF line ends
    are accepted; columns after the second (weights, labels) are ignored. CSV/TSV files may
    start with a header line (recognized when its first two fields are not integers while
    the next line's are, or are usual column names such as ``source,target``); fields may be
    quoted as the ``csv`` module reads them. Parsing is in
    Python, about a million lines in a second or two; Matrix Market goes through
    ``scipy.io.mmread``.

    Examples
    --------
    >>> import pathlib, tempfile, turbobc
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "g.txt"
    >>> _ = path.write_text("# a path 10 - 20 - 30\\n10 20\\n20 30\\n")
    >>> A, labels = turbobc.read_graph(path)
    >>> labels.tolist(), A.nnz
    ([10, 20, 30], 4)
    >>> turbobc.bc(A, engine="graphblas").tolist()
    [0.0, 1.0, 0.0]
    """
    graph = load(path, format=format, directed=directed)
    return graph.matrix, graph.labels


def load(path, *, format=None, directed=None) -> GraphFile:
    """:func:`read_graph` with everything the reader found (directedness, self loops)."""
    if directed is not None and not isinstance(directed, (bool, np.bool_)):
        raise TypeError(f"directed must be True, False or None; got {type(directed).__name__} "
                        f"{directed!r}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike; got {type(path).__name__}")
    path = Path(path)
    fmt = _format_of(path, format)
    if not path.exists():
        raise FileNotFoundError(f"no such graph file: {path}")
    if fmt == "mtx":
        return _read_mtx(path, directed)
    if fmt == "metis":
        return _read_metis(path, directed)
    return _read_edge_list(path, fmt, directed)


def _format_of(path: Path, format) -> str:
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(map(repr, FORMATS))}; "
                             f"got {format!r}")
        return format
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = Path(name).suffix
    if suffix not in _SUFFIX_FORMAT:
        known = ", ".join(sorted(_SUFFIX_FORMAT))
        raise ValueError(f"cannot tell the format of {path} from its suffix {suffix!r} "
                         f"(known: {known}, each optionally followed by .gz); pass format= "
                         f"one of {', '.join(map(repr, FORMATS))}")
    return _SUFFIX_FORMAT[suffix]


def _open_binary(path: Path):
    return gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")


def _read_text(path: Path) -> str:
    try:
        with _open_binary(path) as fh:
            data = fh.read()
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{path}: cannot read the file: {exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}, line {line}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None


# --------------------------------------------------------------------------- Matrix Market

def _read_mtx(path: Path, directed) -> GraphFile:
    try:
        with _open_binary(path) as fh:
            header = fh.readline().decode("utf-8", "replace").split()
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: cannot read the file: {exc}") from None
    if len(header) < 5 or header[0].lower() != "%%matrixmarket":
        raise ValueError(f"{path}, line 1: not a Matrix Market file (the first line must be "
                         f"'%%MatrixMarket matrix coordinate <field> <symmetry>'); got "
                         f"{' '.join(header)[:80]!r}")
    symmetry = header[4].lower()
    try:
        with _open_binary(path) as fh:
            matrix = _mmread(fh)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{path}, {_mtx_error_line(path, str(exc))}: {exc}") from None
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{path}: an adjacency matrix must be square; the size line declares "
                         f"{matrix.shape[0]} x {matrix.shape[1]}")
    file_directed = symmetry == "general"
    if directed is None:
        directed = file_directed
    coo = sp.coo_array(matrix)
    keep = coo.data != 0
    rows, cols = coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64)
    n = matrix.shape[0]
    labels = np.arange(1, n + 1, dtype=np.int64)
    return _pattern(rows, cols, n, labels, bool(directed), "mtx")


def _mmread(fh):
    """scipy.io.mmread returning a sparse array: newer SciPy warns (DeprecationWarning) unless
    ``spmatrix=False`` is passed, older SciPy has no such argument."""
    import inspect

    import scipy.io

    if "spmatrix" in inspect.signature(scipy.io.mmread).parameters:
        return scipy.io.mmread(fh, spmatrix=False)
    return scipy.io.mmread(fh)


def _mtx_error_line(path: Path, message: str) -> str:
    """'line N' for an mmread error message ('Line 4: ...', or a truncated file)."""
    found = re.match(r"\s*line (\d+)", message, re.IGNORECASE)
    if found:
        return f"line {found.group(1)}"
    with _open_binary(path) as fh:
        lines = sum(1 for _ in fh)
    return f"line {lines + 1} (end of file)" if "runcated" in message else f"line {lines}"


# --------------------------------------------------------------------------- edge lists

def _read_edge_list(path: Path, fmt: str, directed) -> GraphFile:
    text = _read_text(path)
    delimiter = {"snap": None, "csv": ",", "tsv": "\t"}[fmt]
    firsts, seconds, line_numbers = [], [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#%":
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
        line_numbers.append(number)
    if fmt != "snap" and firsts and _csv_header(firsts, seconds):
        del firsts[0], seconds[0], line_numbers[0]

    ids = _as_integers(firsts + seconds)
    if ids is None:
        if fmt == "snap":
            _raise_first_non_integer(path, firsts, seconds, line_numbers)
        labels, inverse = _first_appearance(firsts + seconds)
    else:
        labels, inverse = np.unique(ids, return_inverse=True)
    e = len(firsts)
    rows, cols = inverse[:e].astype(np.int64), inverse[e:].astype(np.int64)
    return _pattern(rows, cols, len(labels), labels, bool(directed), fmt)


def _delimiter_name(delimiter) -> str:
    return {None: "white space", ",": "a comma", "\t": "a tab"}[delimiter]


def _as_integers(tokens: list[str]):
    """The tokens as int64 when every one is an integer literal, else None."""
    if not tokens:
        return np.zeros(0, dtype=np.int64)
    try:
        return np.array(tokens, dtype=np.int64)
    except (ValueError, OverflowError):
        return None


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


def _is_int(token: str) -> bool:
    try:
        int(token)
    except ValueError:
        return False
    return True


def _csv_header(firsts: list[str], seconds: list[str]) -> bool:
    """Whether the first CSV/TSV row is a header line."""
    u, v = firsts[0], seconds[0]
    if u.lower() in _HEADER_WORDS and v.lower() in _HEADER_WORDS:
        return True
    if _is_int(u) or _is_int(v) or len(firsts) < 2:
        return False
    return _is_int(firsts[1]) and _is_int(seconds[1])


# --------------------------------------------------------------------------- METIS

def _read_metis(path: Path, directed) -> GraphFile:
    text = _read_text(path)
    lines = text.splitlines()
    number = 0
    while number < len(lines) and lines[number].lstrip().startswith("%"):
        number += 1
    if number == len(lines):
        raise ValueError(f"{path}, line {number + 1}: METIS file has no header line "
                         "'n m [fmt [ncon]]'")
    header_line = number + 1
    header = lines[number].split()
    if not 2 <= len(header) <= 4 or not all(_is_int(t) for t in header):
        raise ValueError(f"{path}, line {header_line}: METIS header must be 'n m [fmt [ncon]]' "
                         f"with integers; got {lines[number][:80]!r}")
    n, m = int(header[0]), int(header[1])
    fmt = header[2] if len(header) > 2 else "0"
    if n < 0 or m < 0 or len(fmt) > 3 or set(fmt) - {"0", "1"}:
        raise ValueError(f"{path}, line {header_line}: METIS header needs n >= 0, m >= 0 and fmt "
                         f"made of up to three 0/1 digits; got {lines[number][:80]!r}")
    fmt = fmt.zfill(3)
    has_size, has_vertex_weights, has_edge_weights = (c == "1" for c in fmt)
    ncon = int(header[3]) if len(header) > 3 else (1 if has_vertex_weights else 0)
    skip = int(has_size) + (ncon if has_vertex_weights else 0)
    step = 2 if has_edge_weights else 1

    rows, cols = [], []
    vertex = 0
    for number in range(header_line, len(lines)):
        raw = lines[number]
        if raw.lstrip().startswith("%"):
            continue
        if vertex == n:
            if raw.strip():
                raise ValueError(f"{path}, line {number + 1}: the header declares n = {n} "
                                 "vertices but there are more adjacency lines")
            continue
        fields = raw.split()
        if not all(_is_int(t) for t in fields):
            raise ValueError(f"{path}, line {number + 1}: METIS adjacency lines hold integers; "
                             f"got {raw[:80]!r}")
        entries = fields[skip:]
        if len(fields) < skip or len(entries) % step:
            raise ValueError(f"{path}, line {number + 1}: with fmt {fmt} and ncon {ncon}, "
                             f"expected {skip} leading value(s) then neighbour"
                             f"{' weight' if has_edge_weights else ''} entries; got "
                             f"{raw[:80]!r}")
        neighbours = [int(t) for t in entries[::step]]
        for w in neighbours:
            if not 1 <= w <= n:
                raise ValueError(f"{path}, line {number + 1}: neighbour {w} of vertex "
                                 f"{vertex + 1} is outside 1..{n}")
        rows.extend([vertex] * len(neighbours))
        cols.extend(neighbours)
        vertex += 1
    if vertex < n:
        raise ValueError(f"{path}, line {len(lines) + 1} (end of file): the header declares "
                         f"n = {n} vertices but only {vertex} adjacency lines follow")
    if len(cols) != 2 * m:
        raise ValueError(f"{path}, line {header_line}: the header declares m = {m} edges, so "
                         f"the adjacency lines should hold 2m = {2 * m} entries; they hold "
                         f"{len(cols)}")
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64) - 1
    labels = np.arange(1, n + 1, dtype=np.int64)
    return _pattern(rows, cols, n, labels, False if directed is None else bool(directed),
                    "metis")


# --------------------------------------------------------------------------- common

def _pattern(rows, cols, n, labels, directed, fmt) -> GraphFile:
    """Canonical pattern from (row, col) pairs: no self loops, no duplicates, ones."""
    loop = rows == cols
    loops = np.unique(rows[loop]).size
    rows, cols = rows[~loop], cols[~loop]
    if not directed:
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
    matrix = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
    matrix.sum_duplicates()
    matrix.data[:] = 1.0
    matrix.sort_indices()
    return GraphFile(matrix=matrix, labels=labels, directed=directed, format=fmt,
                     self_loops=int(loops))

