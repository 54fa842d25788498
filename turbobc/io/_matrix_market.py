"""Matrix Market files (.mtx): the banner and size line checked here, the entries read by
fast_matrix_market (the optional extra ``turbobc[fast-io]``: C++, parsed on every core, files
of tens of GB) when it is installed and the file is a coordinate one, else by
``scipy.io.mmread``, and every refusal named with its line. A progress bar of the bytes read
(``progress=``) follows the fast reader."""

from __future__ import annotations

import gzip
import io
import os
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from turbobc.io._common import (UTF8_BOM, EmptyGraphFileError, GraphFile, all_lengths,
                                check_vertex_count, graph_file, is_int, length_problem,
                                open_binary, read_text)

__all__ = ["read_mtx", "READERS", "fast_reader"]

READERS = ("auto", "fast_matrix_market", "scipy")
"""What reads a Matrix Market file's entries: ``"auto"`` is fast_matrix_market when it is
installed (and the file a coordinate one), else SciPy."""

# Matrix Market banner words, and how many values follow the two indices of an entry.
_MM_VALUES_PER_FIELD = {"real": 1, "double": 1, "integer": 1, "complex": 2, "pattern": 0}
_MM_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


def fast_reader():
    """The fast_matrix_market module, or None when it is not installed."""
    try:
        import fast_matrix_market
    except ImportError:
        return None
    return fast_matrix_market


def read_mtx(path: Path, directed, weighted: bool, *, progress=False,
             reader: str = "auto") -> GraphFile:
    """A Matrix Market file: the banner checked, the size line's claims checked against the
    file (:func:`_check_size_line`), then the entries through fast_matrix_market
    (:func:`_fast_entries`) or ``scipy.io.mmread`` (``reader``: one of :data:`READERS`)."""
    if reader not in READERS:
        raise ValueError(f"reader must be one of {', '.join(map(repr, READERS))}; got "
                         f"{reader!r}")
    try:
        with open_binary(path) as fh:
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
        _check_size_line(path, first.split()[2].lower() == "coordinate", field, symmetry)
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{path}: cannot read the file: {exc}") from None
    file_directed = symmetry == "general"
    if directed is None:
        directed = file_directed
    module = fast_reader() if reader != "scipy" else None
    if reader == "fast_matrix_market" and module is None:
        raise ImportError("reader='fast_matrix_market' needs the fast_matrix_market package: "
                          "pip install 'turbobc[fast-io]'")
    coordinate = first.split()[2].lower() == "coordinate"
    try:
        if module is not None and coordinate:
            # a symmetric file's mirror entries only when they are arcs of their own: read as
            # undirected, graph_file stores every edge both ways anyway
            data, row, col, n = _fast_entries(module, path, mirror=bool(directed) and
                                              not file_directed, progress=progress)
        else:
            with open_binary(path) as fh:
                matrix = _mmread(fh)
            coo = sp.coo_array(matrix)  # a dense 'array' file loses its zeros: no edge there
            data, row, col, n = coo.data, coo.row, coo.col, matrix.shape[0]
    except (ValueError, OSError, EOFError) as exc:
        raise _mtx_error(path, exc) from None
    lengths = None
    if weighted:
        lengths = data.astype(np.float64)
        if not all_lengths(lengths):
            raise _mtx_length_error(path)
        keep = slice(None)  # every entry is an edge; an explicit zero is refused above
    else:
        keep = data != 0  # explicit zeros are not edges
    rows, cols = row[keep].astype(np.int64), col[keep].astype(np.int64)
    del data, row, col
    labels = np.arange(1, n + 1, dtype=np.int64)
    return graph_file(rows, cols, n, labels, bool(directed), "mtx", lengths=lengths,
                       header_directed=file_directed)


def _fast_entries(module, path: Path, *, mirror: bool, progress=False):
    """(values, rows, cols, n) of a coordinate file through fast_matrix_market, the mirror
    entries of a symmetric file added when ``mirror``. The file is handed over by name (its
    C++ reader then reads it itself, on every core), or, gzip'ed, after a byte-order mark, or
    with ``progress``, as a stream counted in the file's bytes (:func:`_bytes_bar`)."""
    plain = not path.name.lower().endswith(".gz")
    with open(path, "rb") as raw:
        bom = raw.read(len(UTF8_BOM)) == UTF8_BOM
    if plain and not bom and progress is False:
        (data, (row, col)), shape = module.read_coo(str(path), generalize_symmetry=mirror)
        return data, row, col, shape[0]
    with open(path, "rb") as raw, _bytes_bar(progress, path) as bar:
        stream = io.BufferedReader(_Counted(raw, bar), buffer_size=1 << 20)
        if not plain:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")
        if stream.peek(len(UTF8_BOM))[:len(UTF8_BOM)] == UTF8_BOM:
            stream.read(len(UTF8_BOM))
        (data, (row, col)), shape = module.read_coo(stream, generalize_symmetry=mirror)
    return data, row, col, shape[0]


class _Counted(io.RawIOBase):
    """A binary file whose reads advance ``bar`` (anything with ``update(n)``) by the bytes
    read."""

    def __init__(self, raw, bar):
        self.raw, self.bar = raw, bar

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = self.raw.readinto(buffer)
        if count:
            self.bar.update(count)
        return count


class _bytes_bar:
    """``progress`` as a context: a tqdm bar over the file's bytes for True (shown after
    turbobc._progress.DELAY_SECONDS, closed at the end), the caller's object with
    ``update(n)`` as it is, or a silent one for False."""

    def __init__(self, progress, path: Path):
        from turbobc._progress import DELAY_SECONDS

        self.bar = self.own = None
        if progress is True:
            from tqdm.auto import tqdm

            self.bar = self.own = tqdm(total=os.path.getsize(path), unit="B", unit_scale=True,
                                       desc=f"reading {path.name}", delay=DELAY_SECONDS,
                                       dynamic_ncols=True)
        elif progress is not False and progress is not None:
            self.bar = progress
        else:
            from tqdm.std import tqdm

            self.bar = self.own = tqdm(total=0, disable=True)

    def __enter__(self):
        return self.bar

    def __exit__(self, *exc) -> None:
        if self.own is not None:
            self.own.close()


def _check_size_line(path: Path, coordinate: bool, field: str, symmetry: str) -> None:
    """The size line's counts are claims: refuse them, naming the line, where the file cannot
    hold the entries they declare (scipy.io.mmread allocates for every declared entry before
    it reads one, and a failed allocation there can abort the process) or the memory cannot
    hold the vertices; leave a malformed size line to :func:`_mtx_problem`, which also names
    the line where a file falls short of its entries.

    An entry line holds 2 indices and the field's values (one value a line in an 'array'
    file), each at least one character followed by a space or a line end: at least
    2 x tokens - 1 bytes for all of them."""
    with open_binary(path) as fh:
        fh.readline()  # the banner
        number = 1
        for raw in fh:
            number += 1
            fields = raw.split()
            if fields and not fields[0].startswith(b"%"):
                break
        else:
            return  # no size line: _mtx_problem says so
        tokens = [t.decode("ascii", "replace") for t in fields]
        if len(tokens) != (3 if coordinate else 2) or not all(
                is_int(t) and int(t) >= 0 for t in tokens):
            return
        rows, cols = int(tokens[0]), int(tokens[1])
        if rows != cols:
            raise ValueError(f"{path}, line {number}: an adjacency matrix must be square; the "
                             f"size line declares {rows} x {cols}")
        values = _MM_VALUES_PER_FIELD[field]
        if coordinate:
            entries, per_entry = int(tokens[2]), 2 + values
        else:  # every value of the matrix, or of its lower triangle
            entries = (rows * rows if symmetry == "general" else
                       rows * (rows - 1) // 2 if symmetry == "skew-symmetric" else
                       rows * (rows + 1) // 2)
            per_entry = max(values, 1)
        needed = max(0, 2 * entries * per_entry - 1)
        left = _bytes_left(fh, path, needed)
        if left < needed:  # the line-by-line check names the first line that falls short
            found = _mtx_problem(path)
            if found is not None:
                raise ValueError(f"{path}, line {found[0]}: {found[1]}")
            raise ValueError(f"{path}, line {number}: the size line declares {entries:,} "
                             f"entries, which take at least {needed:,} bytes; the file holds "
                             f"{left:,} after that line")
    check_vertex_count(path, number, rows)


def _bytes_left(fh, path: Path, needed: int) -> int:
    """Bytes of ``fh`` after its position: at most ``needed`` of them counted (by
    decompressing) when the file is gzip'ed, all of them, from the file's size, when not."""
    if not path.name.lower().endswith(".gz"):
        return os.path.getsize(path) - fh.tell()
    left = 0
    while left < needed:
        chunk = fh.read(min(2**20, needed - left))
        if not chunk:
            break
        left += len(chunk)
    return left


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
    lines = read_text(path).splitlines()
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
        problem = length_problem(f"edge ({fields[0]}, {fields[1]})" if coordinate
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
    return ValueError(f"{path}: the Matrix Market reader cannot read it: {reason}")


def _mtx_problem(path: Path):
    """(line, what is wrong) for the first bad line of a coordinate Matrix Market file, or
    None when nothing is found. Pure Python: only run after scipy.io.mmread failed."""
    lines = read_text(path).splitlines()
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
            if len(fields) != 3 or not all(is_int(t) and int(t) >= 0 for t in fields):
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
    if not (is_int(fields[0]) and is_int(fields[1])):
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
