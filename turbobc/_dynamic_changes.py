"""A batch of edge changes for :class:`turbobc.DynamicBC`: checked against the graph
(:func:`check_batch`), applied to it (:func:`changed_graph`), and the twin graph on which the
affected sources are swept before and after the batch in one run (:func:`twin_graph`).

A batch deletes edges, then inserts edges: an edge deleted and inserted in the same batch
changes its length. On an undirected graph an edge is one pair (u, v), and both stored
entries, u -> v and v -> u, change. Every check runs before anything changes, so a bad batch
leaves the caller's state as it was; its message names the change, and :class:`BadChange`
says which one (the ``turbobc bc --updates`` command turns that into a file's line).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from turbobc._graph import Graph, in_index_type

__all__ = ["BadChange", "Batch", "changed_graph", "check_batch", "stored", "twin_graph"]


class BadChange(ValueError):
    """A change the graph cannot take (a ``ValueError``): the message says which and why.

    Attributes
    ----------
    kind : str
        ``"insert"``, ``"delete"`` or ``"lengths"``: the list the change is in.
    position : int
        Its place in that list.
    """

    def __init__(self, message: str, kind: str, position: int):
        super().__init__(message)
        self.kind, self.position = kind, position


@dataclass(frozen=True)
class Batch:
    """A checked batch: the pairs as given (one per undirected edge), int64 (k, 2) arrays.

    Attributes
    ----------
    insert, delete : numpy.ndarray
        (k, 2) and (j, 2) int64: edge u -> v as row (u, v).
    lengths : numpy.ndarray or None
        float64, one per inserted edge (weighted graphs); None on an unweighted graph.
    """

    insert: np.ndarray
    delete: np.ndarray
    lengths: np.ndarray | None

    def __len__(self) -> int:
        return len(self.insert) + len(self.delete)

    def arcs(self, which: str, directed: bool) -> np.ndarray:
        """The stored entries (u, v) that ``which`` ("insert" or "delete") changes: the pairs,
        and on an undirected graph their reverses after them."""
        pairs = getattr(self, which)
        return pairs if directed else np.concatenate([pairs, pairs[:, ::-1]])


def check_batch(pattern: sp.csr_array, directed: bool, weighted: bool, insert, delete,
                lengths, name=str) -> Batch:
    """``insert``, ``delete`` and ``lengths`` checked against the canonical ``pattern`` of the
    graph before the batch (the deletions apply first, then the insertions).

    ``name(i)`` names vertex i in the messages (default: its index).

    Raises
    ------
    TypeError
        A list that is not a sequence of pairs of integers, a length that is not a number.
    BadChange
        A vertex out of range, a self loop, an edge named twice in one list, inserting an
        edge that exists (and is not deleted in the batch), deleting one that does not;
        lengths given for an unweighted graph, missing for a weighted one, of the wrong
        count, or not positive and finite.
    """
    n = pattern.shape[0]
    pairs = {kind: _pairs(kind, value, n, name) for kind, value in (("delete", delete),
                                                                     ("insert", insert))}
    for kind, edges in pairs.items():
        _distinct(kind, edges, directed, n, name)
    found_deleted, _ = stored(pattern, pairs["delete"][:, 0], pairs["delete"][:, 1])
    if not found_deleted.all():
        i = int(np.flatnonzero(~found_deleted)[0])
        raise BadChange(f"delete: edge {_edge(pairs['delete'][i], name)} does not exist",
                        "delete", i)
    found, _ = stored(pattern, pairs["insert"][:, 0], pairs["insert"][:, 1])
    # an edge deleted in the same batch may come back (with another length)
    found &= ~np.isin(_keys(pairs["insert"], n, directed), _keys(pairs["delete"], n, directed))
    if found.any():
        i = int(np.flatnonzero(found)[0])
        raise BadChange(f"insert: edge {_edge(pairs['insert'][i], name)} already exists",
                        "insert", i)
    return Batch(pairs["insert"], pairs["delete"],
                 _lengths(lengths, pairs["insert"], weighted, name))


def _pairs(kind: str, value, n: int, name) -> np.ndarray:
    """The (u, v) pairs of ``value`` (None: none) as a (k, 2) int64 array, each vertex in
    range and no self loop."""
    if value is None:
        return np.zeros((0, 2), dtype=np.int64)
    if isinstance(value, (str, bytes)) or not np.iterable(value):
        raise TypeError(f"{kind} must be a sequence of (u, v) pairs of vertex indices; got "
                        f"{type(value).__name__} {value!r}")
    items = list(value)
    for i, item in enumerate(items):
        if (isinstance(item, (str, bytes)) or not np.iterable(item) or len(item) != 2
                or not all(isinstance(x, numbers.Integral)
                           and not isinstance(x, (bool, np.bool_)) for x in item)):
            raise TypeError(f"{kind}: change {i} must be a pair (u, v) of integer vertex "
                            f"indices; got {item!r}")
    edges = np.array([[int(u), int(v)] for u, v in items], dtype=np.int64).reshape(-1, 2)
    outside = (edges < 0) | (edges >= n)
    if outside.any():
        i, side = (int(x) for x in np.argwhere(outside)[0])
        raise BadChange(f"{kind}: vertex {edges[i, side]} of change {i}, ({edges[i, 0]}, "
                        f"{edges[i, 1]}), is not a vertex of this graph (indices 0 to "
                        f"{n - 1})", kind, i)
    loops = np.flatnonzero(edges[:, 0] == edges[:, 1])
    if loops.size:
        i = int(loops[0])
        raise BadChange(f"{kind}: {_edge(edges[i], name)} is a self loop, which no shortest "
                        "path takes (BC ignores self loops)", kind, i)
    return edges


def _keys(edges: np.ndarray, n: int, directed: bool) -> np.ndarray:
    """One int64 key per edge: u n + v, or for an undirected edge min n + max."""
    if not directed:
        edges = np.sort(edges, axis=1)
    return edges[:, 0] * n + edges[:, 1]


def _distinct(kind: str, edges: np.ndarray, directed: bool, n: int, name) -> None:
    """No edge twice in one list (an undirected edge named both ways is one edge)."""
    keys = _keys(edges, n, directed)
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    if (counts > 1).any():
        key = keys[first[np.flatnonzero(counts > 1)[0]]]
        twice = np.flatnonzero(keys == key)
        a, b = edges[twice[0]], edges[twice[1]]
        same = "" if (a == b).all() else f" (as {_edge(b, name)})"
        raise BadChange(f"{kind}: edge {_edge(a, name)} appears twice in the batch{same}",
                        kind, int(twice[1]))


def _lengths(lengths, insert: np.ndarray, weighted: bool, name) -> np.ndarray | None:
    """The inserted edges' lengths: one positive finite number per inserted edge of a
    weighted graph; none on an unweighted one."""
    if not weighted:
        if lengths is not None:
            raise BadChange("lengths= gives the lengths of the edges inserted into a weighted "
                            "graph (weight=True); this graph is unweighted", "lengths", 0)
        return None
    if lengths is None:
        if len(insert):
            raise BadChange("lengths: the graph is weighted; give one length per inserted "
                            "edge (update(insert=..., lengths=[...]))", "lengths", 0)
        return np.zeros(0)
    if isinstance(lengths, (str, bytes)) or not np.iterable(lengths):
        raise TypeError(f"lengths must be a sequence of numbers; got {type(lengths).__name__} "
                        f"{lengths!r}")
    values = list(lengths)
    if len(values) != len(insert):
        raise BadChange(f"lengths: {len(values)} lengths for {len(insert)} inserted edges; "
                        "give one per inserted edge, in the same order", "lengths",
                        min(len(values), len(insert)))
    for i, x in enumerate(values):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
            raise TypeError(f"lengths: the length of {_edge(insert[i], name)} must be a "
                            f"number; got {type(x).__name__} {x!r}")
        if not (math.isfinite(float(x)) and float(x) > 0):
            raise BadChange(f"lengths: edge {_edge(insert[i], name)} has length {x!r}; "
                            "lengths must be positive and finite", "insert", i)
    return np.array(values, dtype=np.float64)


def _edge(pair, name) -> str:
    return f"({name(int(pair[0]))}, {name(int(pair[1]))})"


def stored(pattern: sp.csr_array, rows: np.ndarray, cols: np.ndarray):
    """Whether each entry (rows[k], cols[k]) is stored in the canonical CSR ``pattern``, and
    where it is (or where it would go to keep its row sorted): a binary search of each row,
    all entries at once."""
    indptr, indices = pattern.indptr, pattern.indices
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    lo, end = indptr[rows].astype(np.int64), indptr[rows + 1].astype(np.int64)
    hi = end.copy()
    while True:  # the first place in row u whose column is not below v
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        below = active & (indices[np.minimum(mid, max(indices.size - 1, 0))] < cols)
        lo = np.where(below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)
    at = indices[np.minimum(lo, max(indices.size - 1, 0))] if indices.size else cols + 1
    return (lo < end) & (at == cols), lo


def changed_graph(graph: Graph, batch: Batch) -> Graph:
    """The graph after ``batch``: its deleted entries removed, then its inserted ones put in
    place (rows kept sorted, so the pattern stays canonical), with their lengths on a
    weighted graph. O(n + m) array passes; ``graph`` itself is left as it was."""
    n = graph.n
    pattern = graph.pattern
    indptr = pattern.indptr.astype(np.int64)
    indices, lengths = pattern.indices, graph.lengths
    # A' = A − Σ e_u e_vᵀ over the deleted entries
    gone = batch.arcs("delete", graph.directed)
    if len(gone):
        _, at = stored(pattern, gone[:, 0], gone[:, 1])
        indices = np.delete(indices, at)
        lengths = None if lengths is None else np.delete(lengths, at)
        indptr = indptr - _row_offsets(gone[:, 0], n)
    # A' = A' + Σ e_u e_vᵀ over the inserted entries, each at its place in its row
    new = batch.arcs("insert", graph.directed)
    if len(new):
        order = np.lexsort((new[:, 1], new[:, 0]))  # equal places take them in column order
        new = new[order]
        kept = sp.csr_array((np.ones(indices.size), indices, indptr), shape=(n, n))
        _, at = stored(kept, new[:, 0], new[:, 1])
        indices = np.insert(indices, at, new[:, 1].astype(indices.dtype))
        if lengths is not None:
            both = (batch.lengths if graph.directed
                    else np.concatenate([batch.lengths, batch.lengths]))
            lengths = np.insert(lengths, at, both[order])
        indptr = indptr + _row_offsets(new[:, 0], n)
    nnz = indices.size
    result = sp.csr_array((np.ones(nnz), in_index_type(indices, n, nnz),
                           in_index_type(indptr, n, nnz)), shape=(n, n))
    result.has_canonical_format = True  # sorted rows, each entry once
    return Graph(pattern=result, directed=graph.directed,
                 lengths=None if lengths is None else np.ascontiguousarray(lengths))


def _row_offsets(rows: np.ndarray, n: int) -> np.ndarray:
    """How far each row pointer moves when entries are added to (or removed from) ``rows``:
    the count of entries in the rows before it."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=offsets[1:])
    return offsets


def twin_graph(before: Graph, after: Graph) -> Graph:
    """The graph of 2n vertices holding ``before`` on vertices 0 .. n − 1 and ``after`` on
    n .. 2n − 1, with no edge between the two: ``[[A, 0], [0, A']]``. A source s of the first
    copy and s + n of the second sweep the two graphs in one run (one batch, one level loop:
    the deep graphs' levels are paid once), and the two halves of the raw sums are the two
    graphs' sums."""
    n = before.n
    indptr = np.concatenate([before.pattern.indptr.astype(np.int64),
                             after.pattern.indptr[1:].astype(np.int64) + before.nnz])
    indices = np.concatenate([before.pattern.indices.astype(np.int64),
                              after.pattern.indices.astype(np.int64) + n])
    nnz = indices.size
    pattern = sp.csr_array((np.ones(nnz), in_index_type(indices, 2 * n, nnz),
                            in_index_type(indptr, 2 * n, nnz)), shape=(2 * n, 2 * n))
    pattern.has_canonical_format = True
    lengths = (None if before.lengths is None
               else np.concatenate([before.lengths, after.lengths]))
    return Graph(pattern=pattern, directed=before.directed, lengths=lengths)
