"""The validated graph every engine receives.

:func:`turbobc._validation.validate` turns whatever the user passed into one
:class:`Graph`: the adjacency *pattern* of ``A`` as a canonical CSR matrix
(sorted indices, no duplicates, no explicit zeros, no self loops, values all
one) plus the facts the engines need, and for weighted BC the edge lengths aligned with it.
Engines never look at the user's matrix, but the pattern may share its index arrays (a
canonical input is taken as it is): nothing may change a pattern in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

__all__ = ["Graph", "TRAVELLING_CACHE", "bfs_levels", "canonical_csr",
           "index_dtype_for", "mapped_graph", "single_index_types", "in_index_type",
           "INT32_LIMIT", "INDEX_BITS", "reverse_edge_positions", "exact_length_scale",
           "vanishing_length_error"]


INT32_LIMIT = 2**31 - 64
"""Largest n or nnz (exclusive) kept in int32 indices: the kernels step through neighbour lists
32 entries at a time in the index type, so a few slots below 2^31 stay free."""

INDEX_BITS = ("auto", 64, "offsets64")
"""The values of ``Tuning.index_bits``."""


def index_dtype_for(n: int, nnz: int, bits=None) -> np.dtype:
    """The index type of a graph of ``n`` vertices and ``nnz`` stored edges: int32 when both
    stay below :data:`INT32_LIMIT`, else int64; int64 whatever the size when ``bits`` (by
    default ``Tuning.index_bits``, the knob in force) is 64 or ``"offsets64"``.

    One type serves the row pointers and the column indices alike in every engine and family
    but the GPU's single-source family (:func:`single_index_types`): past 2^31 - 64 stored
    edges the indices take 8 bytes per stored edge there, although n may be small enough for 4
    (docs/architecture.md, "64-bit indices").

    Raises
    ------
    ValueError
        ``bits`` not one of :data:`INDEX_BITS`.
    """
    bits = _checked_bits(bits)
    if bits != "auto" or max(n, nnz) >= INT32_LIMIT:
        return np.dtype(np.int64)
    return np.dtype(np.int32)


def single_index_types(n: int, nnz: int, bits=None) -> tuple[np.dtype, np.dtype]:
    """The (vertex, position) types of the single-source GPU family, which alone takes two:
    vertices (column indices, depths, sources) in int32 while n stays below
    :data:`INT32_LIMIT`, positions (column pointers) in int64 once the stored edges pass it, so
    that a graph of billions of stored edges and fewer than 2^31 vertices takes 4 bytes a
    stored edge instead of 8. ``bits`` (default ``Tuning.index_bits``): 64, int64 both;
    ``"offsets64"``, int64 positions beside int32 vertices on any graph (the tests of the
    split on small graphs); every other family then runs in int64, as past the limit.

    Raises
    ------
    ValueError
        ``bits`` not one of :data:`INDEX_BITS`.
    """
    bits = _checked_bits(bits)
    if bits == 64 or n >= INT32_LIMIT:
        return np.dtype(np.int64), np.dtype(np.int64)
    wide = bits == "offsets64" or nnz >= INT32_LIMIT
    return np.dtype(np.int32), np.dtype(np.int64 if wide else np.int32)


def _checked_bits(bits):
    """``bits``, or the knob in force when None, refused unless one of :data:`INDEX_BITS`."""
    if bits is None:
        from turbobc._tuning import current

        bits = current().index_bits
    if isinstance(bits, (bool, np.bool_)) or bits not in INDEX_BITS:
        raise ValueError(f"index_bits must be 'auto', 64 (int64 indices on any graph) or "
                         f"'offsets64' (int64 row pointers beside int32 indices where the "
                         f"single-source GPU family runs, int64 elsewhere); got {bits!r}")
    return bits


def in_index_type(array: np.ndarray, n: int, nnz: int) -> np.ndarray:
    """``array`` (row pointers or column indices of a pattern) in the index type
    :func:`index_dtype_for` asks: unchanged (no copy) when it already is, converted
    otherwise. A small graph's int64 arrays (SciPy's and networkx's usual output) become
    int32, so every engine runs one index type per size (the compiled CPU code one set of
    signatures, and half the index bytes)."""
    want = index_dtype_for(n, nnz)
    if array.dtype == want:
        return array
    return array.astype(want)


TRAVELLING_CACHE = ("length_scale", "depth_estimate", "hub_search", "_locality")
"""What a pickled :class:`Graph` keeps of its cache (``Graph.__reduce__``): answers that cost a
search of the graph, not arrays that are quick to rebuild (the locality orders are n
integers each, 8 MB for a million vertices, against 0.17 to 0.4 s to compute on del20)."""


@dataclass(frozen=True, eq=False)
class Graph:
    """Adjacency pattern of a graph: ``pattern[i, j] == 1`` means an edge i -> j.

    Attributes
    ----------
    pattern : scipy.sparse.csr_array
        n x n, canonical (sorted, duplicate free), float64 ones, no diagonal.
        For an undirected graph it is symmetric and holds each edge twice.
    directed : bool
        Whether BC is computed on the directed graph (ordered pairs counted
        once) or on the undirected one (unordered pairs: raw sums halved).
    lengths : numpy.ndarray or None
        Weighted BC only: float64, positive and finite, one per stored edge in
        ``pattern.indices`` order (the length of edge i -> j at its position in the pattern);
        both entries of an undirected edge hold the same length. None: every edge has length
        one and shortest paths are counted in hops (unweighted BC).
    """

    pattern: sp.csr_array
    directed: bool
    lengths: np.ndarray | None = None

    def __reduce__(self):
        """Pickle what cannot be rebuilt, compactly: the pattern's row pointers and column
        indices, each in the smallest type that holds them (int32 up to 2^31 entries), and
        the lengths; not its values (ones) nor the cached arrays (``csc``, the degrees). What
        :data:`TRAVELLING_CACHE` names travels when computed: the cached scalars
        (:attr:`length_scale`, :attr:`depth_estimate`, :attr:`hub_search`) and the locality
        orders (turbobc/engines/gpu/lanes_order.py), which a Dask client
        computes once for every worker (turbobc/_dask.py, ``built_ahead``).
        This is what a Dask worker receives of a call's graph (turbobc/_dask.py): 4 bytes a
        stored edge and a vertex below 2^31 - 64 of either (8 beyond), where the pattern
        itself holds 16 and 8 (int64 indices) or 12 and 4 (int32). The copy has the pattern's
        own index types again (``Tuning.index_bits=64`` or not). A graph whose arrays a Dask
        call put in the host's shared memory (``_shared_folder``, turbobc/_dask_shared.py)
        pickles as that folder's name."""
        pattern = self.pattern
        cached = {name: self.__dict__[name] for name in TRAVELLING_CACHE
                  if name in self.__dict__}
        folder = self.__dict__.get("_shared_folder")
        if folder is not None:  # the arrays wait in the host's shared memory (_dask_shared)
            return (mapped_graph, (folder, self.n, pattern.indptr.dtype.str,
                                   pattern.indices.dtype.str, self.directed, cached))
        indptr, indices = self.compact_index_arrays()
        return (_unpickled_graph, (self.n, indptr, indices, pattern.indptr.dtype.str,
                                   pattern.indices.dtype.str, self.directed, self.lengths,
                                   cached))

    def compact_index_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The pattern's row pointers and column indices in the smallest type that holds them
        (int32 up to 2^31 entries, whatever ``Tuning.index_bits`` says): what travels to a
        Dask worker, by pickle or through shared memory."""
        small = self.compact_index_type()
        return (self.pattern.indptr.astype(small, copy=False),
                self.pattern.indices.astype(small, copy=False))

    def compact_index_type(self) -> np.dtype:
        """The type of :meth:`compact_index_arrays` (int32 up to 2^31 entries, else int64)."""
        return index_dtype_for(self.n, self.nnz, bits="auto")

    @property
    def weighted(self) -> bool:
        """Whether shortest paths are measured by :attr:`lengths` (weighted BC)."""
        return self.lengths is not None

    @cached_property
    def length_scale(self) -> float | None:
        """:func:`exact_length_scale` of :attr:`lengths` (None for an unweighted graph)."""
        return None if self.lengths is None else exact_length_scale(self.lengths)

    @property
    def n(self) -> int:
        """Number of vertices."""
        return self.pattern.shape[0]

    @property
    def nnz(self) -> int:
        """Number of stored edges (each undirected edge counts twice)."""
        return self.pattern.nnz

    @cached_property
    def csc(self) -> sp.csc_array:
        """The same pattern in CSC form (column j lists the in-neighbours of j)."""
        if not self.directed:
            # A == Aᵀ: the CSR arrays already are the CSC arrays.
            return sp.csc_array((self.pattern.data, self.pattern.indices, self.pattern.indptr),
                                shape=self.pattern.shape)
        return self.pattern.tocsc()

    @cached_property
    def out_degree(self) -> np.ndarray:
        """Out-degree of every vertex (for undirected graphs, the degree)."""
        return np.diff(self.pattern.indptr).astype(np.int64)

    @cached_property
    def in_degree(self) -> np.ndarray:
        """In-degree of every vertex (for undirected graphs, the degree)."""
        if not self.directed:
            return self.out_degree
        return np.bincount(self.pattern.indices, minlength=self.n).astype(np.int64)

    @cached_property
    def depth_estimate(self) -> int:
        """The eccentricity of the vertex of largest out-degree (its deepest breadth-first
        level along out-edges; 0 without edges): at least half the diameter of its component
        when undirected. O(n + m), once per graph (:attr:`hub_search`). Deep graphs (meshes,
        roads, grids) give hundreds to thousands, social and Kronecker graphs a handful."""
        return self.hub_search[0]

    @cached_property
    def hub_search(self) -> tuple[int, int]:
        """The breadth-first search from the vertex of largest out-degree (the first such):
        its depth (:attr:`depth_estimate`) and the last vertex it reaches (a pseudo-peripheral
        vertex: turbobc/engines/gpu/lanes_order.py starts its orders there); (0, 0) without
        edges, (0, -1) without vertices. One search serves both."""
        if self.n == 0:
            return 0, -1
        hub = int(np.argmax(self.out_degree))
        if self.nnz == 0:
            return 0, hub
        order, levels = bfs_levels(self.pattern, hub)
        return int(levels.max()), int(order[-1])


def _unpickled_graph(n, indptr, indices, indptr_type, indices_type, directed, lengths,
                     cached, ones_view: bool = False) -> Graph:
    """The :class:`Graph` that :meth:`Graph.__reduce__` pickled: its pattern rebuilt (ones,
    the original index types), its cached scalars set. ``ones_view``: the ones a read-only
    view of one value at any size (:func:`mapped_graph`)."""
    # the ones as validation makes them: a read-only view from 2^31 stored edges
    # (turbobc/_validation.py, ONES_VIEW_FROM)
    ones = (np.broadcast_to(np.float64(1.0), (indices.size,))
            if ones_view or indices.size >= 2**31 else np.ones(indices.size))
    pattern = sp.csr_array((ones, indices.astype(indices_type, copy=False),
                            indptr.astype(indptr_type, copy=False)), shape=(n, n))
    graph = Graph(pattern=pattern, directed=directed, lengths=lengths)
    graph.__dict__.update(cached)
    return graph


def mapped_graph(folder: str, n: int, indptr_type: str, indices_type: str, directed: bool,
                 cached: dict):
    """The :class:`Graph` of a shared-memory folder (turbobc/_dask_shared.py) on a Dask
    worker: its arrays mapped read-only (cast to the client's index types only where they
    differ), the ones a read-only view of one value, the client's cached scalars set; it
    pickles as the folder again (for a worker that joins later on the same host)."""
    import os

    def load(name: str):
        path = os.path.join(folder, f"{name}.npy")
        return np.asarray(np.load(path, mmap_mode="r")) if os.path.exists(path) else None

    graph = _unpickled_graph(n, load("indptr"), load("indices"), indptr_type, indices_type,
                             directed, load("lengths"), cached, ones_view=True)
    graph.__dict__["_shared_folder"] = folder
    return graph


def bfs_levels(csr, root: int) -> tuple[np.ndarray, np.ndarray]:
    """Breadth-first order from ``root`` along out-edges, and the level of every vertex it
    reaches (-1 elsewhere), in O(n + m): one compiled pass where the compiled loops are
    shipped ahead or SciPy cannot serve (past its int32 indices), else SciPy's search
    (turbobc/_traverse.py ``bfs_order_levels``; the same order and levels, the compiled pass
    1.6 to 3 times faster: road-luxembourg-osm 8.0 ms against 25.3 ms, 2 cores)."""
    from turbobc._traverse import bfs_order_levels

    return bfs_order_levels(csr.indptr, csr.indices, root)


def canonical_csr(rows: np.ndarray, cols: np.ndarray, n: int,
                  lengths: np.ndarray | None = None) -> sp.csr_array:
    """The canonical n x n CSR matrix (sorted indices, each entry once) of the entries
    ``(rows[k], cols[k])``: float64 ones, or with ``lengths`` each entry's smallest length
    (the one a shortest path takes over parallel edges).

    Every reader of a graph file (turbobc/io) and the networkx conversion of weighted graphs
    (turbobc/_validation.py) build their matrix here. Self loops and the second direction of
    undirected edges are the caller's business: every pair given is kept.

    Parameters
    ----------
    rows, cols : numpy.ndarray
        int64, the same length, each in 0..n-1.
    n : int
        Number of vertices.
    lengths : numpy.ndarray, optional
        float64, one per entry.

    Returns
    -------
    scipy.sparse.csr_array
        float64, ``A[rows[k], cols[k]]`` = 1 or the least ``lengths[j]`` over the k' with the
        same (row, col). Its index arrays are of :func:`index_dtype_for`'s type: int32, or
        int64 past 2^31 - 64 entries or vertices and under ``Tuning.index_bits=64``.
    """
    if lengths is None:
        matrix = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
        matrix.sum_duplicates()
        matrix.data[:] = 1.0
        matrix.sort_indices()
        return _index_typed(matrix)
    # sort the entries by (row, col): each run of equal pairs is one entry, its least length
    order = np.lexsort((cols, rows))
    rows, cols, lengths = rows[order], cols[order], lengths[order]
    first = np.ones(rows.size, dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    starts = np.flatnonzero(first)
    data = np.minimum.reduceat(lengths, starts) if starts.size else lengths
    # row i's entries start at indptr[i]: the running count of entries in the rows before it
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[starts], minlength=n), out=indptr[1:])
    return _index_typed(sp.csr_array((data, cols[starts], indptr), shape=(n, n)))


def _index_typed(matrix: sp.csr_array) -> sp.csr_array:
    """A canonical CSR matrix with its index arrays in :func:`index_dtype_for`'s type (SciPy
    keeps the int64 of its COO input: narrowed to int32 where that holds the graph; the same
    matrix when they already are)."""
    dtype = index_dtype_for(matrix.shape[0], matrix.nnz)
    indptr = matrix.indptr.astype(dtype, copy=False)
    indices = matrix.indices.astype(dtype, copy=False)
    if indptr is matrix.indptr and indices is matrix.indices:
        return matrix
    wide = sp.csr_array((matrix.data, indices, indptr), shape=matrix.shape)
    wide.has_canonical_format = True
    return wide


def entry_positions(pattern: sp.csr_array, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Where the entries (rows[k], cols[k]) of a canonical CSR pattern (sorted, no duplicates)
    are stored: their positions in ``pattern.indices``. Every entry asked for must be stored."""
    n = pattern.shape[0]
    keys = (np.repeat(np.arange(n, dtype=np.int64), np.diff(pattern.indptr)) * n
            + pattern.indices.astype(np.int64))          # increasing: the pattern is canonical
    return np.searchsorted(keys, np.asarray(rows, dtype=np.int64) * n
                           + np.asarray(cols, dtype=np.int64))


def reverse_edge_positions(pattern: sp.csr_array) -> np.ndarray:
    """For a symmetric CSR pattern: position k of edge i -> j maps to the position of j -> i."""
    positions = sp.csr_array((np.arange(pattern.nnz, dtype=np.int64), pattern.indices,
                              pattern.indptr), shape=pattern.shape)
    transposed = sp.csr_array(positions.T)
    transposed.sort_indices()
    return transposed.data  # aligned with the pattern's entries, as A == Aᵀ


EXACT_SUM_LIMIT = 2.0**52
"""Scaled path lengths stay below this (:func:`exact_length_scale`): every partial sum of
integers below 2^53 is exact in float64; one bit is kept spare."""


def exact_length_scale(lengths: np.ndarray) -> float | None:
    """The least power of two 2^e (e ≥ 0) that makes every length an integer, when the sum of
    all the lengths times it stays below :data:`EXACT_SUM_LIMIT`; else None.

    Then every float64 sum of lengths along any path is exact, in any order: a shortest path
    from s through a to t is exactly d(s, a) + d(a, t), as networkx's Dijkstra sums it edge
    by edge from s. The exact graph reductions (turbobc/_reduce.py, turbobc/_chains.py)
    move sources along such paths, so a weighted graph is reduced only when this is not None
    (integer lengths, or halves, quarters, ... with a small enough total). With lengths such
    as 0.1 and 0.2, ``(1 + 0.1) + 0.2 == 1 + 0.3`` while ``0.1 + 0.2 != 0.3``: a tie seen from
    one source is no tie from the next vertex.
    """
    lengths = np.asarray(lengths, dtype=np.float64)
    if lengths.size == 0:
        return 1.0
    if np.array_equal(lengths, np.floor(lengths)):  # integers: the common case, at once
        return 1.0 if float(lengths.sum()) < EXACT_SUM_LIMIT else None
    mantissa, exponent = np.frexp(lengths)
    whole = (mantissa * 2.0**53).astype(np.int64)              # length = whole · 2^(exponent − 53)
    lowest = np.log2((whole & -whole).astype(np.float64)).astype(np.int64)   # its trailing zeros
    e = max(0, int(-(exponent - 53 + lowest).min()))
    if e > 52:
        return None
    scale = 2.0**e
    return scale if float(lengths.sum()) * scale < EXACT_SUM_LIMIT else None


def vanishing_length_error(tail: int, head: int, length: float, at: float) -> ValueError:
    """The error for a shortest-path DAG edge ``tail -> head`` whose ``length`` vanishes next
    to the distance ``at`` it is added to: both ends lie at the same distance, so the DAG is
    ambiguous and networkx's counts would depend on the order it pops ties."""
    return ValueError(
        f"the edge ({tail}, {head}) of length {length!r} vanishes next to the distance "
        f"{at!r} it is added to (float64 keeps 53 bits): shortest paths through it are "
        "ambiguous; use lengths that span less than 2^52 / n")
