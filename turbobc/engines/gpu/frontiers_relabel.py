"""The frontiers family's relabeled graph, P A Pᵀ, built with array code on any array module
(turbobc/engines/gpu/frontiers.py, ``_Labels``): CuPy on the device, NumPy on the host (the
tests, and the fallback when the device cannot hold the temporaries).

A vertex v becomes ``rank[v]``, so the edge i -> j becomes the entry (rank[i], rank[j]). The
relabeled CSR has its rows in order and each row's columns sorted (what SciPy gives for
``A[perm][:, perm]`` after ``sort_indices``), and each of its entries keeps its position in
A's own order (``edge_of``: where an edge sum goes back to). O(n + m) gathers and scatters and
one sort of m int64 keys; the rows are moved first, so the sort only reorders the columns
within each row (nearly sorted keys, which NumPy's sort takes in a fraction of the time).
"""

from __future__ import annotations

import numpy as np

__all__ = ["relabeled_csr", "inverse_permutation"]

_KEY_LIMIT = 2**63
"""Row-major keys ``row * n + column`` fit int64 while n * n is below this."""


def inverse_permutation(xp, rank):
    """The vertex of every new id: ``perm[rank[v]] = v``.

    Parameters
    ----------
    xp : module
        The array module (``numpy`` or ``cupy``) that holds ``rank``.
    rank : array of int64
        The new id of every vertex (a permutation of 0..n-1).

    Returns
    -------
    perm : array of int64
        Pᵀ as an index array: ``perm[rank] == arange(n)``, the same as a stable argsort of
        ``rank``, by one scatter.
    """
    perm = xp.empty(rank.shape[0], dtype=np.int64)
    perm[rank] = xp.arange(rank.shape[0], dtype=np.int64)
    return perm


def relabeled_csr(xp, indptr, indices, rank, dtype=None):
    """The CSR pattern of P A Pᵀ: the entry (rank[i], rank[j]) for every stored (i, j).

    Parameters
    ----------
    xp : module
        The array module (``numpy`` or ``cupy``) that holds the arrays and runs the steps.
    indptr, indices : arrays of int32 or int64
        The CSR pattern of A (n x n; each row's columns distinct).
    rank : array of int64
        The new id of every vertex (a permutation of 0..n-1).
    dtype : numpy dtype, optional
        Index type of the returned ``ptr`` and ``idx``; default the type of ``indices``.

    Returns
    -------
    ptr, idx : arrays of ``dtype``
        The relabeled CSR pattern: rows in new-id order, each row's columns ascending.
    edge_of : array of int64
        For each entry of ``idx``, its position in ``indices``.
    """
    n, nnz = int(indptr.shape[0]) - 1, int(indices.shape[0])
    dtype = np.dtype(indices.dtype if dtype is None else dtype)
    # P d: new row rank[v] holds v's out-degree; its pointers are their running sums
    degree = xp.empty(n, dtype=np.int64)
    degree[rank] = xp.diff(indptr)
    ptr = xp.zeros(n + 1, dtype=np.int64)
    ptr[1:] = xp.cumsum(degree)
    # P A: new row r is old row perm[r], its entries in their old order
    rows = _entry_rows(xp, ptr, nnz)
    shift = indptr[:-1][inverse_permutation(xp, rank)] - ptr[:-1]
    source = shift[rows] + xp.arange(nnz, dtype=np.int64)
    # (P A) Pᵀ: the columns renamed, then sorted within each row
    cols = rank[indices[source]]
    order = _row_major_order(xp, rows, cols, n)
    return ptr.astype(dtype), cols[order].astype(dtype), source[order]


def _entry_rows(xp, indptr, nnz: int):
    """The row of every stored entry of a CSR pattern: the row pointers past it, counted
    (``bincount`` of the row starts, then their running sum; empty rows count once each)."""
    starts = xp.bincount(indptr[1:-1], minlength=nnz + 1)[:nnz]
    return xp.cumsum(starts)


def _row_major_order(xp, rows, cols, n: int):
    """The entries' order by (row, column): one sort of the int64 keys ``row * n + column``
    while they fit (the keys are distinct, so any sort gives this order), else a two-key
    (lexicographic) sort."""
    if n * n < _KEY_LIMIT:
        return xp.argsort(rows * n + cols)
    return xp.lexsort(xp.stack([cols, rows]))
