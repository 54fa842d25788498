"""Thin launchers, one per kernel: argument order and grid size, nothing else.

Each sweep launcher runs Algorithm 1 for ``sources`` (a device array) in one persistent
launch. The grid never exceeds what can be resident at once (the kernels synchronize the grid
in software), and is smaller when the graph is small (a cheaper barrier). The kernels take
three structs by value (spmv/kernels/views.cuh, mirrored by :mod:`spmv._views`): the graph,
the workspace and the run. ``tau`` and ``omega`` are the per-vertex target and source
weights of the accumulate step (spmv/kernels/accumulate.cuh): float64 device arrays of
length n, or None for all ones.
"""

from __future__ import annotations

import math

import numpy as np

from ._module import get_kernel, instance_name
from ._views import SINGLE_GRAPH, SINGLE_RUN, SINGLE_WORK, record

__all__ = ["BLOCK", "sweep_sccsc", "sweep_sccooc", "sweep_vecsc", "out_degree", "column_length",
           "degree_product_sum", "expand_columns", "missing_reverse", "SWEEPS"]

BLOCK = 512
"""Threads per block of every sweep kernel (matches ``__launch_bounds__`` in the .cu files)."""

VERTICES_PER_THREAD = 2
"""scCSC (vertices per thread) and veCSC (per warp) grid size: at most n / this threads."""

EDGES_PER_THREAD = 8
"""scCOOC grid size: at most m / this threads (two unrolled rounds of four edges)."""

_STATS_BLOCK = 256


def resident_blocks(kernel, block: int, cap_per_sm: int | None) -> int:
    """Blocks of ``block`` threads that can be resident at once on the current device (the
    most a persistent launch with a software grid barrier may use), at most ``cap_per_sm``
    per multiprocessor when given."""
    import cupy

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, block, 0)
    if cap_per_sm is not None:
        per_sm = min(per_sm, cap_per_sm)
    if per_sm < 1:
        raise RuntimeError(f"kernel {kernel.name} cannot be resident with {block} threads per block")
    return sms * per_sm


def _sweep(filename, kernel_name, a, b, n, m, sources, S, sigma, t, bc, shifts, ctl, *,
           directed, endpoints, work_items, units=None, tau=None, omega=None,
           blocks_per_sm=None, cache=None):
    """Launch one single-source sweep. ``cache`` (a dict kept by the caller for arrays that
    do not change between its launches) keeps the kernel, the grid and the graph and
    workspace records: a source then costs the host one record and the launch (a small
    graph's sweep is about 0.1 ms, so the 25 µs of building the rest showed)."""
    # vertices in S's type, positions in a's (the column pointers; COOC: a's entries are
    # vertices, and its one instantiation per type has P = I)
    key = (kernel_name, S.dtype, a.dtype, blocks_per_sm, directed)
    if cache is not None and key in cache:
        kernel, grid, graph, work = cache[key]
    else:
        kernel = get_kernel(filename, instance_name(kernel_name, S.dtype, a.dtype))
        grid = min(resident_blocks(kernel, BLOCK, blocks_per_sm),
                   max(1, math.ceil(work_items / BLOCK)))
        # (work_items is already divided by the items each thread should take per level: a
        # smaller grid makes the per-level grid barrier cheaper, which deep graphs feel most)
        unit_col, unit_start = units if units is not None else (None, None)
        graph = record(SINGLE_GRAPH, a=a, b=b, unit_col=unit_col, unit_start=unit_start, n=n,
                       m=m, nunits=0 if unit_col is None else unit_col.size,
                       directed=int(directed))
        work = record(SINGLE_WORK, S=S, sigma=sigma, t=t, shifts=shifts, ctl=ctl)
        if cache is not None:
            cache[key] = (kernel, grid, graph, work)
    run = record(SINGLE_RUN, sources=sources, nsrc=sources.size, bc=bc, tau=tau, omega=omega,
                 endpoints=int(endpoints))
    kernel((grid,), (BLOCK,), (graph, work, run))
    return grid


HEAVY_CHUNK = 1024
"""veCSC splits columns longer than this into units of this many entries (single.cuh)."""


def heavy_units(colptr: np.ndarray, index_dtype, position_dtype=None):
    """Host arrays (unit_col, unit_start) of the veCSC hub units: every column with more than
    HEAVY_CHUNK entries, cut into pieces of HEAVY_CHUNK entries starting at unit_start;
    columns in ``index_dtype``, starts (entry positions) in ``position_dtype`` (default the
    same)."""
    deg = np.diff(colptr)
    heavy = np.flatnonzero(deg > HEAVY_CHUNK)
    counts = -(-deg[heavy] // HEAVY_CHUNK)
    unit_col = np.repeat(heavy, counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    unit_start = colptr[unit_col] + (np.arange(unit_col.size) - first) * HEAVY_CHUNK
    return (unit_col.astype(index_dtype),
            unit_start.astype(index_dtype if position_dtype is None else position_dtype))


def sweep_sccsc(colptr, rowidx, n, m, sources, S, sigma, t, bc, shifts, ctl, *, directed,
                endpoints, units=None, tau=None, omega=None,
                blocks_per_sm=None, cache=None):
    """scCSC: a thread per vertex over the CSC matrix (``colptr``, ``rowidx``)."""
    return _sweep("sccsc.cu", "bc_sccsc", colptr, rowidx, n, m, sources, S, sigma, t, bc, shifts,
                  ctl, directed=directed, endpoints=endpoints, tau=tau, omega=omega,
                  blocks_per_sm=blocks_per_sm, cache=cache,
                  work_items=math.ceil(n / VERTICES_PER_THREAD))


def sweep_vecsc(colptr, rowidx, n, m, sources, S, sigma, t, bc, shifts, ctl, *, directed,
                endpoints, units=None, tau=None, omega=None,
                blocks_per_sm=None, cache=None):
    """veCSC: a warp per vertex over the CSC matrix (``colptr``, ``rowidx``); ``units``:
    the device arrays of :func:`heavy_units`."""
    return _sweep("vecsc.cu", "bc_vecsc", colptr, rowidx, n, m, sources, S, sigma, t, bc, shifts,
                  ctl, directed=directed, endpoints=endpoints, tau=tau, omega=omega,
                  blocks_per_sm=blocks_per_sm, cache=cache,
                  work_items=32 * math.ceil(n / VERTICES_PER_THREAD), units=units)


def sweep_sccooc(col, row, n, m, sources, S, sigma, t, bc, shifts, ctl, *, directed, endpoints,
                 units=None, tau=None, omega=None,
                blocks_per_sm=None, cache=None):
    """scCOOC: a thread per stored edge over the COOC matrix (``col``, ``row``)."""
    return _sweep("sccooc.cu", "bc_sccooc", col, row, n, m, sources, S, sigma, t, bc, shifts,
                  ctl, directed=directed, endpoints=endpoints, tau=tau, omega=omega,
                  blocks_per_sm=blocks_per_sm, cache=cache,
                  work_items=math.ceil(m / EDGES_PER_THREAD))


SWEEPS = {"sccsc": sweep_sccsc, "sccooc": sweep_sccooc, "vecsc": sweep_vecsc}
"""Kernel name -> sweep launcher."""


def _stats_launch(name, index_dtype, items, args, position_dtype=None):
    kernel = get_kernel("stats.cu", instance_name(name, index_dtype, position_dtype))
    grid = max(1, min(4096, math.ceil(items / _STATS_BLOCK)))
    kernel((grid,), (_STATS_BLOCK,), args)


def out_degree(rowidx, m, deg):
    """deg(i) += number of stored entries in row i (deg must start at zero)."""
    _stats_launch("out_degree", rowidx.dtype, m, (rowidx, np.int64(m), deg))


def column_length(colptr, n, deg):
    """deg(j) = length of column j."""
    _stats_launch("column_length", colptr.dtype, n, (colptr, colptr.dtype.type(n), deg))


def degree_product_sum(colptr, rowidx, n, deg, out):
    """out += Σ over stored edges i -> j of deg(i)·deg(j) (out is a float64 scalar array);
    ``colptr`` may be int64 beside int32 ``rowidx``."""
    _stats_launch("degree_product_sum", rowidx.dtype, n,
                  (colptr, rowidx, rowidx.dtype.type(n), deg, out), colptr.dtype)


def expand_columns(colptr, n, col):
    """col[k] = j for every entry k of column j (COOC column array from CSC pointers)."""
    _stats_launch("expand_columns", colptr.dtype, n, (colptr, colptr.dtype.type(n), col))


def all_bits_set(count: int, dtype):
    """A device array of ``count`` integers of ``dtype`` with every bit set (-1, or the
    largest unsigned value), by a memset: ``cupy.full`` runs an elementwise kernel, which
    CuPy compiles at first use."""
    import cupy

    array = cupy.empty(count, dtype=dtype)
    array.data.memset_async(0xFF, array.nbytes)
    return array


def missing_reverse(indptr, indices, n, nnz):
    """(count, first) of a canonical CSR pattern's stored edges whose reverse is not stored:
    how many, and the least entry position of one (-1 when none). One thread per stored edge,
    two binary searches each; ``indptr`` and ``indices`` share one index dtype."""
    import cupy

    missing = cupy.zeros(1, dtype=cupy.uint64)
    first = all_bits_set(1, cupy.uint64)  # the largest uint64
    if nnz:
        _stats_launch("missing_reverse", indptr.dtype, nnz,
                      (indptr, indices, indptr.dtype.type(n), np.int64(nnz), missing, first))
    count, position = int(missing.get()[0]), int(first.get()[0])
    return count, (position if count else -1)
