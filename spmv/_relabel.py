"""Launchers of spmv/kernels/relabel.cu: the frontiers family's relabeled graph and the sums of
its blocks, as shipped kernels (a first call compiles nothing; CuPy's own array code did the
same in a dozen kernels compiled at first use). Given NumPy arrays, each runs in NumPy instead
(its reference; the tests that run the family's host code on the CPU). Nothing here imports
CuPy at import time."""

from __future__ import annotations

import numpy as np

from ._module import c_index_type, get_kernel

__all__ = ["RELABEL_THREADS", "relabel", "block_sums"]

RELABEL_THREADS = 256


def _grid(count: int) -> tuple[int]:
    return (max(1, -(-count // RELABEL_THREADS)),)


def relabel(indptr, indices, rank, ptr, n: int, idx, edge_of) -> None:
    """P A Pᵀ into ``idx`` (the renamed columns, each row sorted) and ``edge_of`` (each
    entry's position in ``indices``): ``indptr``, ``rank`` and ``ptr`` (the new rows'
    pointers) int64 device arrays, ``indices`` and ``idx`` of one index type."""
    if isinstance(idx, np.ndarray):
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
        entries = np.arange(indptr[-1], dtype=np.int64)
        at = np.asarray(ptr)[np.asarray(rank)[rows]] + entries - np.asarray(indptr)[rows]
        idx[at] = np.asarray(rank)[indices]
        edge_of[at] = entries
        new_rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
        order = np.lexsort((idx, new_rows))  # each row's columns ascending
        idx[:], edge_of[:] = idx[order], edge_of[order]
        return
    kernel = get_kernel("relabel.cu", f"bcr_relabel<{c_index_type(indices.dtype)}>")
    kernel(_grid(n), (RELABEL_THREADS,), (indptr, indices, rank, ptr, np.int64(n), idx,
                                          edge_of))


def block_sums(rows, blocks: int, n: int, rank, out) -> None:
    """``out[v] = Σ_b rows[b n + rank[v]]`` (float64): the blocks' rows of raw sums added,
    back in the graph's ids (``rank`` int64)."""
    if isinstance(out, np.ndarray):
        out[:] = np.asarray(rows).reshape(blocks, n).sum(axis=0)[np.asarray(rank)]
        return
    dtype = np.int32 if n < 2**31 else np.int64
    kernel = get_kernel("relabel.cu", f"bcr_block_sums<{c_index_type(dtype)}>")
    kernel(_grid(n), (RELABEL_THREADS,), (rows, np.int64(blocks), dtype(n), rank, out))
