"""Launchers and the selector of the batched kernels (``spmv/kernels/batched.cu``).

Each kernel name of ``spmv.KERNELS`` has a batched generalization, B sources per launch as
n x B vertex-major blocks (research/peers.md section d.8):

============  ===========================================================================
``sccsc``     thread per (vertex, source); every forward level is the dense masked pull
              ``F<¬Σ> = F A`` and the backward pull visits every vertex
``vecsc``     warp per (vertex, 32-source chunk), lane per source, with frontier units:
              push from small frontiers, pull from large ones, and a backward pull that
              visits only the units holding the level (the default)
``sccooc``    warp per (stored edge, 32-source chunk), lanes over sources, atomics into the
              target in both sweeps
============  ===========================================================================

Nothing here imports CuPy at import time.
"""

from __future__ import annotations

import math

import numpy as np

from ._module import c_index_type, get_kernel

__all__ = ["BLOCK", "LANES", "CTL_SLOTS", "STATUS_SLOT", "DEPTH_SLOT", "LEVEL_OVERFLOW",
           "SHIFT_TABLE_FULL", "select_batched", "sweep_batch"]

BLOCK = 256
"""Threads per block (matches ``__launch_bounds__(256)`` in batched.cuh). Asking for four
resident blocks per multiprocessor instead removes ptxas's few spills but cost kron18 1.5x
(bench/results/exact_gpu-20261122T021944Z.json): the sweeps are latency bound."""

PUSH_RATIO = 8
"""The batched veCSC pushes a forward level while the frontier's unit-edges times this are fewer
than all unit-edges (m · chunks); otherwise it pulls."""

BLOCKS_PER_SM = None
"""Resident blocks per multiprocessor of a batched launch; None: as many as fit."""

LANES = 32
"""Sources per unit: a batch's row stride is a multiple of this."""

CTL_SLOTS = 16
"""Length of the unsigned long long control block."""

STATUS_SLOT, DEPTH_SLOT = 9, 10
"""Control-block slots the host reads after a launch (batched.cuh, enum Ctl)."""

LEVEL_OVERFLOW, SHIFT_TABLE_FULL = 1, 2
"""Statuses of a batch that must be rerun: the depth passed the level type, or the shift table."""


def select_batched(n: int, nnz: int, num_sources: int) -> str:
    """The batched kernel for a graph of ``n`` vertices and ``nnz`` stored edges.

    ``vecsc`` (frontier units with push and pull) for every graph and batch: its pull levels
    do the work of ``sccsc``, and its push levels and backward skipping only remove work,
    which is what deep graphs (meshes, roads) need; ``sccooc`` scans every stored edge of
    every chunk at every level. ``bench/exact_gpu.py --kernels`` times all three.

    Parameters
    ----------
    n, nnz : int
        Vertices and stored edges.
    num_sources : int
        Sources of the run.

    Returns
    -------
    str
        A member of ``spmv.KERNELS``.
    """
    if n < 0 or nnz < 0 or num_sources < 0:
        raise ValueError(f"sizes must be non-negative; got n={n}, nnz={nnz}, "
                         f"num_sources={num_sources}")
    return "vecsc"


def _resident_blocks(kernel) -> int:
    import cupy

    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, BLOCK, 0)
    if BLOCKS_PER_SM:
        per_sm = min(per_sm, BLOCKS_PER_SM)
    if per_sm < 1:
        raise RuntimeError(f"kernel {kernel.name} cannot be resident with {BLOCK} threads per block")
    return sms * per_sm


def sweep_batch(kernel: str, *, in_ptr, in_idx, out_ptr, out_idx, erow, ecol, n: int, m: int,
                stride: int, sources, level, sigma, t, flag0, flag1, shifts, dcap: int,
                maxbits, reached, bc, ctl, endpoints: bool) -> int:
    """One persistent launch: Algorithm 1 for ``sources`` (a device array, one per lane).

    ``stride`` is the row length of the n x stride blocks (a multiple of :data:`LANES`, at
    least ``sources.size``); the level type (int16 or int32) is ``level.dtype``. Returns the
    grid size. The kernel reports in ``ctl[STATUS_SLOT]`` whether the batch must be rerun.
    """
    width = {np.dtype(np.int16): 16, np.dtype(np.int32): 32}[np.dtype(level.dtype)]
    itype = in_ptr.dtype.type
    fn = get_kernel("batched.cu", f"bcb_{kernel}{width}<{c_index_type(in_ptr.dtype)}>")
    work = (m if kernel == "sccooc" else n) * stride
    grid = min(_resident_blocks(fn), max(1, math.ceil(work / BLOCK)))
    fn((grid,), (BLOCK,), (in_ptr, in_idx, out_ptr, out_idx, erow, ecol, itype(n), itype(m),
                           np.int64(stride), sources, np.int64(sources.size), level, sigma, t,
                           flag0, flag1, shifts, np.int64(dcap), maxbits, reached, bc, ctl,
                           np.uint64(PUSH_RATIO), np.int32(endpoints)))
    return grid
