"""Readers for the file formats graphs come in: :func:`read_graph`.

Every reader returns a canonical ``scipy.sparse.csr_array`` (sorted, no duplicates, no self
loops) and the original vertex labels, so that results can be reported with the ids the file
uses. The matrix is the adjacency *pattern* (float64 ones), or, with ``weighted=True``, holds the
file's edge lengths (``turbobc.bc(A, weight=True)``). Errors in a file raise ``ValueError``
naming the file and the line. One module per format: :mod:`turbobc.io._matrix_market`,
:mod:`turbobc.io._edge_lists`, :mod:`turbobc.io._metis`, :mod:`turbobc.io._dimacs`; what they
share is in :mod:`turbobc.io._common`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from turbobc.io._common import EmptyGraphFileError, GraphFile
from turbobc.io._dimacs import read_gr
from turbobc.io._edge_lists import read_edge_list
from turbobc.io._matrix_market import read_mtx
from turbobc.io._metis import read_metis

__all__ = ["FORMATS", "EmptyGraphFileError", "GraphFile", "format_of", "load",
           "read_graph"]

FORMATS = ("mtx", "snap", "csv", "tsv", "metis", "gr")
"""Format names :func:`read_graph` accepts for ``format=``."""

_SUFFIX_FORMAT = {
    ".mtx": "mtx", ".mm": "mtx",
    ".txt": "snap", ".edges": "snap", ".edgelist": "snap", ".el": "snap",
    ".csv": "csv", ".tsv": "tsv",
    ".graph": "metis", ".metis": "metis",
    ".gr": "gr",
}


def read_graph(path, *, format=None, directed=None, weighted=False, progress=False):
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
    progress : bool or object, default False
        Matrix Market files read by fast_matrix_market: ``True`` shows a tqdm bar of the
        file's bytes read (compressed bytes for ``.gz``) once reading has taken a second; an
        object with an ``update(n)`` method is advanced by the bytes instead. The other
        formats, and Matrix Market through SciPy, read without a bar.

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
        negative, infinite or NaN, named with its line and edge. A header's counts are
        claims, checked before anything is allocated for them: a Matrix Market size line
        declaring more entries than the rest of the file can hold, or a Matrix Market or
        DIMACS header declaring more vertices than the memory available can hold (16 bytes
        a vertex), is refused naming its line.
    FileNotFoundError
        ``path`` does not exist.

    Notes
    -----
    Every format: a UTF-8 byte-order mark at the start of the file is skipped.
    Edge lists: lines starting with ``#`` or ``%`` and blank lines are skipped; CRLF line ends
    are accepted; columns after the second are ignored, except the third with
    ``weighted=True``. CSV/TSV files may start with a header line (recognized when its first
    two fields are not integers while the next line's are, or are usual column names such as
    ``source,target``); fields may be quoted as the ``csv`` module reads them. Parsing is in
    Python, about a million lines in a second or two; Matrix Market goes through
    fast_matrix_market when it is installed (``pip install 'turbobc[fast-io]'``: C++ on every
    core, for files of tens of GB; coordinate files) and ``scipy.io.mmread`` otherwise, the
    same graph and the same errors either way; a well-formed DIMACS ``.gr`` file (road networks run to tens of
    millions of arcs) is parsed by regular expressions and one NumPy parse, about twice as
    fast in a third of the memory, and any other one line by line, to name the bad line. A
    pattern read with ``weighted=False`` and passed to ``turbobc.bc(A, weight=True)`` has
    every length 1: the unweighted BC.

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
    graph = load(path, format=format, directed=directed, weighted=weighted, progress=progress)
    return graph.matrix, graph.labels


def load(path, *, format=None, directed=None, weighted=False, progress=False) -> GraphFile:
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
    fmt = format_of(path, format)
    if not path.exists():
        raise FileNotFoundError(f"no such graph file: {path}")
    weighted = bool(weighted)
    if isinstance(progress, np.bool_):
        progress = bool(progress)
    if not isinstance(progress, bool) and not callable(getattr(progress, "update", None)):
        raise TypeError(f"progress must be True or False, or an object with an update(n) "
                        f"method; got {type(progress).__name__} {progress!r}")
    if fmt == "mtx":
        return read_mtx(path, directed, weighted, progress=progress)
    if fmt == "metis":
        return read_metis(path, directed, weighted)
    if fmt == "gr":
        return read_gr(path, directed, weighted)
    return read_edge_list(path, fmt, directed, weighted)


def format_of(path: Path, format) -> str:
    """``format`` checked, or the format the name's suffix (before any .gz) says."""
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
