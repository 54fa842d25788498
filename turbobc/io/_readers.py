"""Readers for the file formats graphs come in: :func:`read_graph`.

Every reader returns a canonical ``scipy.sparse.csr_array`` (sorted, no duplicates, no self
loops) and the original vertex labels, so that results can be reported with the ids the file
uses. The matrix is the adjacency *pattern* (float64 ones), or, with ``weighted=True``, holds the
file's edge lengths (``turbobc.bc(A, weight=True)``). Errors in a file raise ``ValueError``
naming the file and the line.
"""

from __future__ import annotations

import csv
import gzip
import math
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["FORMATS", "EmptyGraphFileError", "GraphFile", "load", "read_graph"]

FORMATS = ("mtx", "snap", "csv", "tsv", "metis", "gr")
"""Format names :func:`read_graph` accepts for ``format=``."""

_SUFFIX_FORMAT = {
    ".mtx": "mtx", ".mm": "mtx",
    ".txt": "snap", ".edges": "snap", ".edgelist": "snap", ".el": "snap",
    ".csv": "csv", ".tsv": "tsv",
    ".graph": "metis", ".metis": "metis",
    ".gr": "gr",
}

# A SNAP header's first line: "# Directed graph ..." or "# Undirected graph ...".
_SNAP_DIRECTION = re.compile(r"^[#%]\s*(directed|undirected)\s+graph\b", re.IGNORECASE)

# Matrix Market banner words, and how many values follow the two indices of an entry.
_MM_VALUES_PER_FIELD = {"real": 1, "double": 1, "integer": 1, "complex": 2, "pattern": 0}
_MM_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")

# Header words a CSV/TSV edge list may start with (compared lower-case, see _csv_header).
_HEADER_WORDS = {"source", "target", "src", "dst", "from", "to", "u", "v", "node1", "node2",
                 "fromnodeid", "tonodeid", "head", "tail", "i", "j", "id1", "id2", "weight",
                 "sender", "receiver"}


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


def read_graph(path, *, format=None, directed=None, weighted=False):
    """Read a graph file into an adjacency matrix and the original vertex labels.

    Parameters
    ----------
    path : str or os.PathLike
        The file; a name ending in ``.gz`` is decompressed on the fly.
    format : {"mtx", "snap", "csv", "tsv", "metis", "gr"}, optional
        Guessed from the suffix (before ``.gz``) when omitted: ``.mtx``/``.mm`` Matrix Market;
        ``.txt``/``.edges``/``.edgelist``/``.el`` a SNAP (whitespace separated) edge list;
        ``.csv`` and ``.tsv`` comma and tab separated edge lists; ``.graph``/``.metis`` METIS
        (the format of the DIMACS10 challenge); ``.gr`` the DIMACS 9 shortest-path format
        (``c`` comments, a problem line ``p sp n m``, arcs ``a u v w``, 1-based: the road
        networks of that challenge).
    directed : bool, optional
        ``None`` (default) takes what the file says: Matrix Market ``symmetric`` (or
        ``skew-symmetric``, ``hermitian``) is undirected and ``general`` directed; an edge
        list whose first comment line starts ``# Directed graph`` or ``# Undirected graph``
        (SNAP's header) is read that way; DIMACS ``.gr`` arcs are directed; METIS and other
        edge lists are undirected. ``True`` keeps every entry or line as an arc u -> v;
        ``False`` symmetrizes. (Some SNAP files, ca-GrQc and email-Enron among them, say
        "Directed graph" but list every edge both ways: read as directed they give the same
        normalized BC; ``directed=False`` counts each edge once.)
    weighted : bool, default False
        ``False``: the pattern, float64 ones; edge values in the file are not read (so a
        third column that holds signs, timestamps or labels reads as before). ``True``: the
        matrix holds the file's edge lengths, for ``turbobc.bc(A, weight=True)``: a Matrix
        Market ``real`` or ``integer`` file's values (``symmetric``: both directions get the
        entry's value), the third column of a SNAP/CSV/TSV edge list, METIS edge weights
        (``fmt`` ending in 1), the ``w`` of DIMACS arcs. Every length must be a positive
        finite number. An edge listed more than once (repeated lines, ``u v`` and ``v u``
        of an undirected graph, parallel arcs) keeps its smallest length: the one its
        shortest paths use, as networkx's BC of the file read as a multigraph.

    Returns
    -------
    A : scipy.sparse.csr_array
        n x n, float64: ``A[i, j] != 0`` means an edge i -> j; its value is 1, or the edge's
        length with ``weighted=True``. Self loops and repeated lines are dropped; an
        undirected graph is stored symmetric (each edge twice), so ``turbobc.bc(A)`` treats
        it as undirected.
    labels : numpy.ndarray
        Length n: ``labels[i]`` is the id vertex i has in the file. For Matrix Market, METIS
        and DIMACS these are the 1-based indices of the file (``labels[i] == i + 1``). For
        edge lists with integer ids, the distinct ids in ascending order (int64); with names
        (CSV/TSV), the names (str) in order of first appearance (line by line, the first
        name of a line before the second, as ``networkx.read_edgelist`` adds nodes).
        Vertices whose only edge is a self loop are kept, isolated.

    Raises
    ------
    ValueError
        Unknown format or suffix, or a malformed file; the message names the file and the line
        (:class:`EmptyGraphFileError`, a ``ValueError``, for an empty Matrix Market, METIS or
        DIMACS file; an empty edge list gives n = 0). With ``weighted=True``: a file that
        holds no edge values (a ``pattern`` Matrix Market file, an edge-list line with two
        columns, METIS without edge weights), or a length that is not a number, zero,
        negative, infinite or NaN, named with its line and edge.
    FileNotFoundError
        ``path`` does not exist.

    Notes
    -----
    Edge lists: lines starting with ``#`` or ``%`` and blank lines are skipped; CRLF line ends
    are accepted; columns after the second are ignored, except the third with
    ``weighted=True``. CSV/TSV files may start with a header line (recognized when its first
    two fields are not integers while the next line's are, or are usual column names such as
    ``source,target``); fields may be quoted as the ``csv`` module reads them. Parsing is in
    Python, about a million lines in a second or two; Matrix Market goes through
    ``scipy.io.mmread``; a well-formed DIMACS ``.gr`` file (road networks run to tens of
    millions of arcs) is parsed by regular expressions and one NumPy parse, about twice as
    fast in a third of the memory, and any other one line by line, to name the bad line. A pattern read with ``weighted=False`` and passed to
    ``turbobc.bc(A, weight=True)`` has every length 1: the unweighted BC.

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

    A third column read as edge lengths:

    >>> _ = path.write_text("10 20 2.5\\n20 30 1\\n")
    >>> A, labels = turbobc.read_graph(path, weighted=True)
    >>> A.toarray().tolist()
    [[0.0, 2.5, 0.0], [2.5, 0.0, 1.0], [0.0, 1.0, 0.0]]
    """
    graph = load(path, format=format, directed=directed, weighted=weighted)
    return graph.matrix, graph.labels


def load(path, *, format=None, directed=None, weighted=False) -> GraphFile:
    """:func:`read_graph` with everything the reader found (directedness, self loops)."""
    if directed is not None and not isinstance(directed, (bool, np.bool_)):
        raise TypeError(f"directed must be True, False or None; got {type(directed).__name__} "
                        f"{directed!r}")
    if not isinstance(weighted, (bool, np.bool_)):
        raise TypeError(f"weighted must be True or False; got {type(weighted).__name__} "
                        f"{weighted!r}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike; got {type(path).__name__}")
    path = Path(path)
    fmt = _format_of(path, format)
    if not path.exists():
        raise FileNotFoundError(f"no such graph file: {path}")
    weighted = bool(weighted)
    if fmt == "mtx":
        return _read_mtx(path, directed, weighted)
    if fmt == "metis":
        return _read_metis(path, directed, weighted)
    if fmt == "gr":
        return _read_gr(path, directed, weighted)
    return _read_edge_list(path, fmt, directed, weighted)


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

def _read_mtx(path: Path, directed, weighted: bool) -> GraphFile:
    try:
        with _open_binary(path) as fh:
            first = fh.readline().decode("utf-8", "replace")
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: cannot read the file: {exc}") from None
    if not first:
        raise EmptyGraphFileError(f"{path}: the file is empty; a Matrix Market file starts "
                                  "with '%%MatrixMarket matrix coordinate <field> <symmetry>'")
    problem = _mtx_banner_problem(first.split())
    if problem:
        raise ValueError(f"{path}, line 1: {problem}")
    field, symmetry = (word.lower() for word in first.split()[3:])
    if weighted:
        problem = _mtx_lengths_problem(field, symmetry)
        if problem:
            raise ValueError(f"{path}, line 1: {problem}")
    try:
        with _open_binary(path) as fh:
            matrix = _mmread(fh)
    except (ValueError, OSError, EOFError) as exc:
        raise _mtx_error(path, exc) from None
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{path}: an adjacency matrix must be square; the size line declares "
                         f"{matrix.shape[0]} x {matrix.shape[1]}")
    file_directed = symmetry == "general"
    if directed is None:
        directed = file_directed
    coo = sp.coo_array(matrix)  # a dense 'array' file loses its zeros here: no edge there
    lengths = None
    if weighted:
        lengths = coo.data.astype(np.float64)
        if not _all_lengths(lengths):
            raise _mtx_length_error(path)
        keep = slice(None)  # every entry is an edge; an explicit zero is refused above
    else:
        keep = coo.data != 0  # explicit zeros are not edges
    rows, cols = coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64)
    n = matrix.shape[0]
    labels = np.arange(1, n + 1, dtype=np.int64)
    return _graph_file(rows, cols, n, labels, bool(directed), "mtx", lengths=lengths,
                       header_directed=file_directed)


def _mtx_lengths_problem(field: str, symmetry: str) -> str | None:
    """Why a Matrix Market file of this field and symmetry cannot give edge lengths, or
    None."""
    needs = "weighted=True needs a 'real' or 'integer' file"
    if field == "pattern":
        return (f"a 'pattern' Matrix Market file holds no edge values; {needs} (read it "
                "without weighted=True: every edge has length 1)")
    if field == "complex":
        return f"'complex' values are not edge lengths; {needs}"
    if symmetry == "skew-symmetric":
        return ("a 'skew-symmetric' file stands for the negated value at each mirrored entry, "
                "which cannot be an edge length")
    return None


def _mtx_length_error(path: Path) -> ValueError:
    """The error for the first Matrix Market value that is not a length, at its line: the
    file is read again line by line to find it (only after a bad value was seen)."""
    lines = _read_text(path).splitlines()
    coordinate = lines[0].split()[2].lower() == "coordinate"
    size_seen = False
    for number, raw in enumerate(lines[1:], start=2):
        fields = raw.split()
        if not fields or fields[0].startswith("%"):
            continue
        if not size_seen:
            size_seen = True
            continue
        token = fields[2] if coordinate else fields[0]
        if not coordinate and float(token) == 0:
            continue  # a dense file's zero: no edge
        problem = _length_problem(f"edge ({fields[0]}, {fields[1]})" if coordinate
                                  else "an edge", token)
        if problem:
            return ValueError(f"{path}, line {number}: {problem}")
    return ValueError(f"{path}: a value is not a positive finite edge length")


def _mtx_banner_problem(banner: list[str]) -> str | None:
    """What is wrong with a Matrix Market banner line (split in words), or None."""
    expected = ("the first line must be '%%MatrixMarket matrix <coordinate|array> <field> "
                "<symmetry>'")
    if (len(banner) != 5 or banner[0].lower() != "%%matrixmarket"
            or banner[1].lower() != "matrix"):
        return f"not a Matrix Market file ({expected}); got {' '.join(banner)[:80]!r}"
    layout, field, symmetry = (word.lower() for word in banner[2:])
    if layout not in ("coordinate", "array"):
        return f"unknown layout {banner[2]!r} ({expected})"
    if field not in _MM_VALUES_PER_FIELD:
        return (f"unknown field {banner[3]!r}; expected one of "
                f"{', '.join(map(repr, _MM_VALUES_PER_FIELD))}")
    if symmetry not in _MM_SYMMETRIES:
        return (f"unknown symmetry {banner[4]!r}; expected one of "
                f"{', '.join(map(repr, _MM_SYMMETRIES))}")
    return None


def _mtx_error(path: Path, exc: Exception) -> ValueError:
    """The error for a Matrix Market file scipy.io.mmread refused, at the real line: the file
    is read again line by line to find it (scipy's own line numbers skip comment lines)."""
    found = _mtx_problem(path)
    if found is not None:
        line, problem = found
        return ValueError(f"{path}, line {line}: {problem}")
    reason = re.sub(r"^\s*line \d+:\s*", "", str(exc), flags=re.IGNORECASE)
    return ValueError(f"{path}: scipy.io.mmread cannot read it: {reason}")


def _mtx_problem(path: Path):
    """(line, what is wrong) for the first bad line of a coordinate Matrix Market file, or
    None when nothing is found. Pure Python: only run after scipy.io.mmread failed."""
    lines = _read_text(path).splitlines()
    banner = lines[0].split()
    if banner[2].lower() != "coordinate":
        return None  # dense 'array' files: scipy's message stands
    values = _MM_VALUES_PER_FIELD[banner[3].lower()]
    size, size_line, count = None, 0, 0
    for number, raw in enumerate(lines[1:], start=2):
        fields = raw.split()
        if not fields or fields[0].startswith("%"):
            continue
        if size is None:
            if len(fields) != 3 or not all(_is_int(t) and int(t) >= 0 for t in fields):
                return number, ("the size line must be 'rows columns entries' (three "
                                f"non-negative integers); got {raw.strip()[:80]!r}")
            size, size_line = [int(t) for t in fields], number
            continue
        count += 1
        problem = _mtx_entry_problem(fields, values, size, count)
        if problem:
            return number, problem
    if size is None:
        return f"{len(lines) + 1} (end of file)", ("no size line 'rows columns entries' after "
                                                   "the banner and comments")
    if count < size[2]:
        return f"{len(lines) + 1} (end of file)", (
            f"the size line (line {size_line}) declares {size[2]} entries; only {count} "
            "follow")
    return None


def _mtx_entry_problem(fields: list[str], values: int, size: list[int], count: int):
    """What is wrong with the ``count``-th entry line of a coordinate file, or None."""
    rows, cols, entries = size
    if count > entries:
        return f"more entry lines than the {entries} the size line declares"
    expected = 2 + values
    if len(fields) != expected:
        return (f"expected {expected} values (row, column"
                f"{', value' * values}); got {' '.join(fields)[:80]!r}")
    if not (_is_int(fields[0]) and _is_int(fields[1])):
        return f"row and column must be integers; got {' '.join(fields[:2])[:80]!r}"
    row, col = int(fields[0]), int(fields[1])
    if not (1 <= row <= rows and 1 <= col <= cols):
        return f"entry ({row}, {col}) is outside the declared {rows} x {cols} (1-based)"
    for token in fields[2:]:
        try:
            float(token)
        except ValueError:
            return f"value {token[:40]!r} is not a number"
    return None


def _mmread(fh):
    """scipy.io.mmread returning a sparse array: newer SciPy warns (DeprecationWarning) unless
    ``spmatrix=False`` is passed, older SciPy has no such argument."""
    import inspect

    import scipy.io

    if "spmatrix" in inspect.signature(scipy.io.mmread).parameters:
        return scipy.io.mmread(fh, spmatrix=False)
    return scipy.io.mmread(fh)


# --------------------------------------------------------------------------- edge lists

def _read_edge_list(path: Path, fmt: str, directed, weighted: bool) -> GraphFile:
    text = _read_text(path)
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
    ids = _as_integers(tokens)
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
    return _graph_file(rows, cols, len(labels), labels, bool(directed), fmt, lengths=lengths,
                       header_directed=header_directed, appearance=_appearance_order(inverse))


def _third_column_lengths(path, thirds, line_numbers, firsts, seconds):
    """The third column of an edge list as edge lengths (float64), or the error naming the
    first line without one or with a value that is not a positive finite number."""
    for token, number, u, v in zip(thirds, line_numbers, firsts, seconds):
        if not token:
            raise ValueError(f"{path}, line {number}: weighted=True reads the third column "
                             f"as the edge length; edge ({u}, {v}) has none")
    return _parse_lengths(path, thirds, line_numbers, firsts, seconds)


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


def _read_metis(path: Path, directed, weighted: bool) -> GraphFile:
    lines = _read_text(path).splitlines()
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
    return _graph_file(rows, cols, header.n, labels,
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
    if not 2 <= len(fields) <= 4 or not all(_is_int(t) for t in fields):
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
    if not all(_is_int(t) for t in fields):
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
        problem = _length_problem(f"edge ({vertex + 1}, {w})", token)
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


# --------------------------------------------------------------------------- DIMACS 9 (.gr)

def _read_gr(path: Path, directed, weighted: bool) -> GraphFile:
    """The DIMACS 9 shortest-path format: ``c`` comment lines, one problem line
    ``p sp n m``, then m arc lines ``a u v w`` (1-based vertices, integer lengths w)."""
    text = _read_text(path)
    arcs = _gr_arcs_at_once(text, weighted)
    if arcs is None:  # something is off: the line-by-line reader says what, and where
        arcs = _gr_arcs_by_line(path, text, weighted)
    n, rows, cols, values = arcs
    labels = np.arange(1, n + 1, dtype=np.int64)
    return _graph_file(rows, cols, n, labels, True if directed is None else bool(directed),
                       "gr", lengths=values)


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
    if lengths is not None and not _all_lengths(lengths):
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
    values = _parse_lengths(path, lengths, line_numbers, tails, heads) if weighted else None
    return n, rows, cols, values


def _gr_problem_line(path: Path, number: int, raw: str, fields: list[str], size):
    """(n, m, line) of the problem line ``p sp n m``; only one may come."""
    if size is not None:
        raise ValueError(f"{path}, line {number}: a second problem line (the first is line "
                         f"{size[2]})")
    if (len(fields) != 4 or fields[1] != "sp"
            or not all(_is_int(t) and int(t) >= 0 for t in fields[2:])):
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
    ids = _as_integers([t for pair in zip(tails, heads) for t in pair])
    if ids is not None and np.all((ids >= 1) & (ids <= n)):
        return ids[0::2] - 1, ids[1::2] - 1
    for u, v, number in zip(tails, heads, line_numbers):
        for token in (u, v):
            if not _is_int(token) or not 1 <= int(token) <= n:
                raise ValueError(f"{path}, line {number}: vertex {token[:40]!r} is not an "
                                 f"integer in 1..{n}")
    raise AssertionError("unreachable: some vertex id was refused")


# --------------------------------------------------------------------------- common

def _parse_lengths(path: Path, tokens: list[str], line_numbers: list[int], tails: list[str],
                   heads: list[str]) -> np.ndarray:
    """``tokens`` (one per edge line) as float64 edge lengths, or the error naming the first
    line whose token is not a positive finite number, and its edge (tail, head)."""
    try:
        lengths = np.array(tokens, dtype=np.float64)
    except (ValueError, OverflowError):
        lengths = None
    if lengths is not None and _all_lengths(lengths):
        return lengths
    for token, number, u, v in zip(tokens, line_numbers, tails, heads):
        problem = _length_problem(f"edge ({u}, {v})", token)
        if problem:
            raise ValueError(f"{path}, line {number}: {problem}")
    raise AssertionError("unreachable: some length was refused")


def _all_lengths(values: np.ndarray) -> bool:
    """Whether every value is a positive finite number."""
    return bool(np.all(np.isfinite(values) & (values > 0)))


def _length_problem(edge: str, token: str) -> str | None:
    """What is wrong with ``token`` as the length of ``edge``, or None."""
    try:
        value = float(token)
    except (ValueError, OverflowError):
        return f"the length of {edge}, {token[:40]!r}, is not a number"
    if math.isfinite(value) and value > 0:
        return None
    return (f"the length of {edge} is {token[:40]}; edge lengths must be positive finite "
            "numbers")


def _graph_file(rows, cols, n, labels, directed, fmt, *, lengths=None, header_directed=None,
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
    return GraphFile(matrix=_canonical(rows, cols, n, lengths), labels=labels,
                     directed=directed, format=fmt, self_loops=int(loops),
                     header_directed=header_directed, appearance=appearance,
                     weighted=lengths is not None)


def _canonical(rows, cols, n: int, lengths) -> sp.csr_array:
    """Sorted, duplicate-free n x n CSR of (row, col) pairs: ones, or each entry's smallest
    length (the one shortest paths take)."""
    if lengths is None:
        matrix = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
        matrix.sum_duplicates()
        matrix.data[:] = 1.0
        matrix.sort_indices()
        return matrix
    order = np.lexsort((cols, rows))
    rows, cols, lengths = rows[order], cols[order], lengths[order]
    first = np.ones(rows.size, dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    starts = np.flatnonzero(first)
    data = np.minimum.reduceat(lengths, starts) if starts.size else lengths
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[starts], minlength=n), out=indptr[1:])
    return sp.csr_array((data, cols[starts], indptr), shape=(n, n))
