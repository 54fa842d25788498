"""What the ``turbobc`` command prints and writes.

Results go to stdout through :func:`say`, one flushed line at a time: when whoever reads them
closes the pipe early (``turbobc bc g.mtx | head -3``), the rest is dropped quietly and the run
goes on, so that its output files are still written. Notes go to stderr (:func:`note`). The
top-N tables print one column of values with the same decimals (:func:`aligned`). Output files
are written whole or not at all (:func:`_replacing`): an interrupted run leaves none behind.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import sys
from pathlib import Path

import numpy as np

__all__ = ["CSV_VALUE_FORMAT", "aligned", "flush", "label", "note", "print_top",
           "print_top_edges", "say", "write_edges_csv", "write_edges_json", "write_vertices"]

CSV_VALUE_FORMAT = "%.16e"
"""Every value of the CSV output: 17 significant digits, exact round trip, one width."""

EDGES_CSV_HEADER = ["src", "dst", "bc"]
"""The header of every edge CSV (``bc --edges``, ``edge-bc -o .csv``)."""

TABLE_DIGITS = 6
"""Significant digits of the largest value in a top-N table (the files hold all 17)."""

_stdout_closed = False


def say(text: str = "") -> None:
    """Print one line of results on stdout, at once; nothing once the reader has gone."""
    if _stdout_closed:
        return
    try:
        print(text, flush=True)
    except BrokenPipeError:
        _let_stdout_go()


def flush() -> None:
    """Flush stdout (before the exit status is returned); a reader who has gone is let go
    quietly, as by :func:`say`."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _let_stdout_go()
    except (OSError, ValueError):  # stdout closed or replaced: nothing is waiting in it
        pass


def _let_stdout_go() -> None:
    """The reader closed stdout: from now on, what is still buffered and anything printed
    later goes to /dev/null, so that flushing at exit does not fail again."""
    global _stdout_closed
    _stdout_closed = True
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def note(text: str) -> None:
    """Print a note (not a result) on stderr."""
    print(text, file=sys.stderr, flush=True)


def label(value):
    """A vertex label as Python prints it: 42, not np.int64(42)."""
    return value.item() if isinstance(value, np.generic) else value


def aligned(values: np.ndarray, digits: int = TABLE_DIGITS) -> list[str]:
    """``values`` as one column: ``digits`` significant digits for the largest, and the same
    number of decimals for every value, so that the decimal points line up when the strings
    are right-aligned (scientific notation, with its one digit before the point, when the
    largest is below 1e-4 or has more than ``digits`` digits before it)."""
    values = np.asarray(values, dtype=np.float64)
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    if largest == 0.0 or 1e-4 <= largest < 10.0**digits:
        magnitude = math.floor(math.log10(largest)) if largest else 0
        decimals = max(0, digits - 1 - magnitude)
        return [f"{x:.{decimals}f}" for x in values.tolist()]
    return [f"{x:.{digits - 1}e}" for x in values.tolist()]


def print_top(values: np.ndarray, labels: np.ndarray, top: int) -> None:
    """The ``top`` most central vertices: rank, the vertex's id in the file, its value."""
    order = np.argsort(-values, kind="stable")[:top]
    names = [str(label(labels[v])) for v in order]
    numbers = aligned(values[order])
    width = max([6] + [len(s) for s in names])
    value_width = max([11] + [len(s) for s in numbers])
    say()
    say(f"{'rank':>4}  {'vertex':>{width}}  {'betweenness':>{value_width}}")
    for rank, (name, number) in enumerate(zip(names, numbers), start=1):
        say(f"{rank:>4}  {name:>{width}}  {number:>{value_width}}")


def print_top_edges(edges, labels: np.ndarray, directed: bool, top: int) -> None:
    """The ``top`` most central edges: rank, 'u -> v' (or 'u -- v'), the value."""
    best = np.argsort(-edges.values, kind="stable")[:top]
    ends = [(str(label(labels[edges.rows[e]])), str(label(labels[edges.cols[e]])))
            for e in best]
    numbers = aligned(edges.values[best])
    width = max([6] + [len(a) for a, _ in ends] + [len(b) for _, b in ends])
    value_width = max([11] + [len(s) for s in numbers])
    arrow = "->" if directed else "--"
    say()
    say(f"{'rank':>4}  {'edge':>{2 * width + 4}}  {'betweenness':>{value_width}}")
    for rank, ((a, b), number) in enumerate(zip(ends, numbers), start=1):
        say(f"{rank:>4}  {a:>{width}} {arrow} {b:<{width}}  {number:>{value_width}}")


@contextlib.contextmanager
def _replacing(path: str, binary: bool = False):
    """A file to write ``path`` through: a new file beside it, renamed over ``path`` once
    written, and removed instead if anything (an error, Ctrl-C) stops the writing."""
    target = Path(path)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        if binary:
            with open(partial, "xb") as fh:
                yield fh
        else:
            with open(partial, "x", newline="", encoding="utf-8") as fh:
                yield fh
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def write_vertices(path: str, values: np.ndarray, labels: np.ndarray, record: dict) -> None:
    """Every vertex's value into ``path``, by suffix: .csv ('label,bc', '%.16e'), .json
    (``record``, the labels and the values) or .npy (the values)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".npy":
        with _replacing(path, binary=True) as fh:
            np.save(fh, values)
        return
    names = [label(v) for v in labels]
    with _replacing(path) as fh:
        if suffix == ".csv":
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["label", "bc"])
            writer.writerows(zip(names, (CSV_VALUE_FORMAT % x for x in values.tolist())))
        else:
            json.dump(dict(record, vertices=names, betweenness=values.tolist()), fh)


def _edge_labels(edges, labels: np.ndarray) -> list[list]:
    """[[src label, dst label], ...] with the ids the file uses."""
    names = [label(v) for v in labels]
    return [[names[i], names[j]] for i, j in zip(edges.rows.tolist(), edges.cols.tolist())]


def write_edges_csv(path: str, edges, labels: np.ndarray) -> None:
    """The edge CSV of ``bc --edges`` and ``edge-bc -o .csv``: 'src,dst,bc', '%.16e'."""
    with _replacing(path) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(EDGES_CSV_HEADER)
        writer.writerows([a, b, CSV_VALUE_FORMAT % x]
                         for (a, b), x in zip(_edge_labels(edges, labels),
                                              edges.values.tolist()))


def write_edges_json(path: str, edges, labels: np.ndarray, record: dict) -> None:
    """``record``, the edges (pairs of labels) and their values as one JSON object."""
    with _replacing(path) as fh:
        json.dump(dict(record, edges=_edge_labels(edges, labels),
                       betweenness=edges.values.tolist()), fh)
