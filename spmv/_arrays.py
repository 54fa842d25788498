"""Launchers of spmv/kernels/arrays.cu: array steps of the GPU engine's loops as shipped
kernels, in place of CuPy array expressions that CuPy compiles at first use (the cold-start
issue: a dozen of them made a weighted first call 14 s slower than the second). Arrays are
CuPy arrays of the types named; counts are Python ints. Given NumPy arrays, each function runs
the same step in NumPy instead (its reference, and what the tests that run the GPU's host code
on the CPU use). Nothing here imports CuPy at import time."""

from __future__ import annotations

import numpy as np

from ._module import get_kernel

__all__ = ["fill", "put", "gather", "rows_inf", "add_rows", "add_entries", "outer",
           "add_weighted_rows", "far_select", "copy_into", "sorted_copy"]

THREADS = 256


def _launch(name: str, count: int, args: tuple, *, blocks: int | None = None) -> None:
    if count <= 0:
        return
    wide = count >= 2**31
    kernel = get_kernel("arrays.cu", f"{name}<{'long long' if wide else 'int'}>")
    size = (np.int64 if wide else np.int32)
    grid = blocks if blocks is not None else -(-count // THREADS)
    kernel((grid,), (THREADS,), tuple(size(a) if isinstance(a, _Count) else a for a in args))


class _Count(int):
    """A count argument: passed as the kernel's index type."""


def _host(array) -> bool:
    """Whether ``array`` is a NumPy array (the NumPy path of every step)."""
    return isinstance(array, np.ndarray)


def _like(result, model):
    """``result`` as an array of ``model``'s NumPy subclass (tests hand arrays with get())."""
    return result.view(type(model)) if type(model) is not np.ndarray else result


def fill(out, value: float) -> None:
    """``out[:] = value`` (float64)."""
    if _host(out):
        out[...] = value
        return
    _launch("tba_fill_f64", out.size, (out, np.float64(value), _Count(out.size)))


def put(out, keys, value: float) -> None:
    """``out[keys] = value`` (float64 ``out``, int64 ``keys``)."""
    if _host(out):
        out[keys] = value
        return
    _launch("tba_put_f64", keys.size, (out, keys, np.float64(value), _Count(keys.size)))


def gather(src, at):
    """``src[at]`` (float64, int64 ``at``), a new array."""
    if _host(src):
        return _like(np.asarray(src)[np.asarray(at)], src)
    import cupy

    out = cupy.empty(at.size, dtype=cupy.float64)
    _launch("tba_gather_f64", at.size, (src, at, _Count(at.size), out))
    return out


def rows_inf(values, rows: int, n: int):
    """uint8, one per row of the ``rows`` x ``n`` float64 ``values``: 1 where the row holds
    an infinity."""
    if _host(values):
        return _like(np.isinf(np.asarray(values).reshape(rows, n)).any(axis=1)
                     .astype(np.uint8), values)
    import cupy

    out = cupy.zeros(rows, dtype=cupy.uint8)
    if n:
        _launch("tba_rows_inf", rows, (values, _Count(rows), _Count(n), out), blocks=rows)
    return out


def add_rows(dst, n: int, rows, values) -> None:
    """``dst[rows[p]] += values[p]`` for rows of n (``rows`` int64, may repeat)."""
    if _host(dst):
        np.add.at(dst.reshape(-1, n), np.asarray(rows), np.asarray(values).reshape(-1, n))
        return
    count = int(rows.size)
    _launch("tba_add_rows_f64", count * n, (dst, _Count(n), rows, _Count(count), values))


def add_entries(dst, at, values) -> None:
    """``dst[at[i]] += values[i]`` (flat int64 ``at``, may repeat)."""
    if _host(dst):
        np.add.at(dst.reshape(-1), np.asarray(at), np.asarray(values))
        return
    _launch("tba_add_entries_f64", at.size, (dst, at, values, _Count(at.size)))


def outer(a, b):
    """The ``a.size`` x ``b.size`` float64 product ``a[:, None] * b[None, :]``."""
    if _host(a):
        return _like(np.multiply.outer(np.asarray(a), np.asarray(b)), a)
    import cupy

    out = cupy.empty((a.size, b.size), dtype=cupy.float64)
    _launch("tba_outer_f64", a.size * b.size, (a, _Count(a.size), b, _Count(b.size), out))
    return out


def add_weighted_rows(bc, w, m, rows: int, n: int) -> None:
    """``bc += wᵀ M`` for the ``rows`` x ``n`` float64 ``m``."""
    if _host(bc):
        bc += np.asarray(w) @ np.asarray(m).reshape(rows, n)
        return
    _launch("tba_weighted_rows", n, (bc, w, m, _Count(rows), _Count(n)))


def far_select(dist, far, waiting: int, below: float):
    """The far keys ``far[:waiting]`` whose distance is still at or above ``below``, sorted,
    and the least of those distances (+inf when none)."""
    if _host(dist):
        at = np.asarray(dist)[np.asarray(far[:waiting])]
        still = at >= below
        least = float(at[still].min()) if still.any() else float("inf")
        return _like(np.sort(np.asarray(far[:waiting])[still]), far), least
    import cupy

    keys = cupy.empty(max(waiting, 1), dtype=cupy.int64)
    count = cupy.zeros(1, dtype=cupy.uint64)
    at = cupy.empty(max(waiting, 1), dtype=cupy.float64)
    _launch("tba_far_select", waiting, (dist, far, _Count(waiting), np.float64(below), keys,
                                        count, at))
    selected = int(count.get()[0])
    least = float(at[:waiting].min()) if waiting else float("inf")  # CUB, compiled ahead
    keys = keys[:selected]
    keys.sort()  # CuPy's sort: Thrust, compiled ahead
    return keys, least


def copy_into(dst, src) -> None:
    """``dst[:src.size] = src`` by a device copy (no kernel)."""
    if _host(dst):
        dst[:src.size] = src
        return
    dst.data.copy_from_device_async(src.data, src.nbytes)


def sorted_copy(src):
    """A sorted copy of the 1-D ``src``: a device copy, then CuPy's in-place sort (Thrust,
    compiled ahead; ``cupy.sort`` copies with a kernel compiled at first use)."""
    if _host(src):
        return _like(np.sort(np.asarray(src)), src)
    import cupy

    out = cupy.empty_like(src)
    copy_into(out, src)
    out.sort()
    return out
