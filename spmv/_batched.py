"""Launchers and the selector of the batched kernels (``spmv/kernels/batched.cu``).

Each kernel name of ``spmv.KERNELS`` has a batched generalization, B sources per launch as
n x B vertex-major blocks (docs/algorithm.md, "Mapping to the kernels"):

============  ===========================================================================
``sccsc``     thread per (vertex, source); every forward level is the dense masked pull
              ``F<¬Σ> = F A`` and the backward pull visits every vertex
``vecsc``     warp per (vertex, 32-source chunk), lane per source, with frontier units:
              push from small frontiers, pull from large ones, and a backward pull that
              visits only the units holding the level (the default)
``sccooc``    warp per (stored edge, 32-source chunk), lanes over sources, atomics into the
              target in both sweeps
============  ===========================================================================

Each comes in two instantiations (spmv/kernels/batched.cu): with the VertexSums accumulator
(vertex BC) and with EdgeSums (``bcb_*_edge``: the vertex sums and one sum per stored edge,
edge BC); :func:`sweep_batch` launches the second when it is handed an ``edge`` array.

Nothing here imports CuPy at import time.
"""

from __future__ import annotations

import math

import numpy as np

from . import _ctl
from ._launch import resident_blocks
from ._module import c_index_type, get_kernel
from ._views import BATCH_GRAPH, BATCH_RUN, BATCH_WORK, record

__all__ = ["BLOCK", "LANES", "CTL_SLOTS", "STATUS_SLOT", "DEPTH_SLOT", "LEVEL_OVERFLOW",
           "SHIFT_TABLE_FULL", "WIDE_RANGE", "WIDE_LANE", "PHASE_BOTH", "PHASE_FORWARD",
           "PHASE_BACKWARD", "select_batched", "sweep_batch"]

BLOCK = 256
"""Threads per block (matches ``__launch_bounds__(256, 6)`` in batched.cuh: at most 40
registers, six resident blocks per multiprocessor). The sweeps are latency bound: four blocks
per SM cost kron18 1.5x (bench/results/exact_gpu-20261122T021944Z.json), five (48 registers)
against six, first 16384 sources: kron18 4.60 -> 4.29 s, myc16 2.46 -> 2.19 s, myc14 0.232 ->
0.206 s, road-luxembourg-osm 3.04 -> 3.18 s (bench/results/exact_gpu_variants-
20261122T025208Z.json and -20261122T025301Z.json)."""

LANES = 32
"""Sources per unit: a batch's row stride is a multiple of this."""

CTL_SLOTS, STATUS_SLOT, DEPTH_SLOT = _ctl.N_CTL, _ctl.STATUS, _ctl.DEPTH
"""Length of the control block, and the slots the host reads after a launch (spmv/_ctl.py)."""

LEVEL_OVERFLOW, SHIFT_TABLE_FULL, WIDE_RANGE = (_ctl.LEVEL_OVERFLOW, _ctl.SHIFT_TABLE_FULL,
                                                _ctl.WIDE_RANGE)
"""Statuses of a batch that must be rerun: the depth passed the level type, or the shift table,
or some lanes' counts spread wider than per-level scaling holds (spmv/_ctl.py)."""

WIDE_LANE = 1 << 63
"""``reached`` of a lane marked by status WIDE_RANGE (batched.cuh)."""


SCCSC_MAX_ENTRIES = 2**24
"""``select_batched`` picks ``sccsc`` only when n x (lanes of one batch) is at most this..."""

SCCSC_MAX_DEPTH = 16
"""...and the graph is at most this deep (its dense pull visits every unit at every level)."""


PHASE_BOTH, PHASE_FORWARD, PHASE_BACKWARD = 0, 1, 2
"""What one launch of :func:`sweep_batch` runs (spmv/kernels/batched.cuh, ``Phase``)."""


def select_batched(n: int, nnz: int, num_sources: int, depth: int | None = None) -> str:
    """The batched kernel for a graph of ``n`` vertices and ``nnz`` stored edges.

    ``sccsc`` (dense pull, no frontier bookkeeping) when the run is one small batch of a
    shallow graph: ``n`` x min(``num_sources``, 16384) lanes at most
    :data:`SCCSC_MAX_ENTRIES` and ``depth`` known and at most :data:`SCCSC_MAX_DEPTH`;
    ``vecsc`` (frontier units with push and pull, backward skipping) otherwise; ``sccooc``
    never: it scans every stored edge of every chunk at every level and was the slowest on
    every graph measured.

    Measured on an H200, device-loop seconds sccsc / vecsc / sccooc
    (bench/results/exact_gpu_variants-20261122T025208Z.json): ego-Facebook (n·B = 1.6e7,
    depth 8) 0.014 / 0.017 / 0.057; myc14 (n·B = 1.5e8) 0.296 / 0.232 / 1.043; kron18, 2048
    sources, 0.80 / 0.72 / -; del16, 16384 sources, 2.10 / 0.55 / -; road-luxembourg-osm,
    1024 sources (depth 1337), 1.62 / 0.33 / 3.22.

    Parameters
    ----------
    n, nnz : int
        Vertices and stored edges.
    num_sources : int
        Sources of the run.
    depth : int, optional
        An estimate of the BFS depth (from ``turbobc.engines.gpu.lanes_order.sweep_order``: the
        eccentricity of the vertex of largest degree); unknown, as when the sources are fewer
        than n / 8 and no search ran: never ``sccsc``.

    Returns
    -------
    str
        A member of ``spmv.KERNELS``.
    """
    if n < 0 or nnz < 0 or num_sources < 0:
        raise ValueError(f"sizes must be non-negative; got n={n}, nnz={nnz}, "
                         f"num_sources={num_sources}")
    lanes = -(-min(num_sources, 16384) // LANES) * LANES
    if depth is not None and 0 <= depth <= SCCSC_MAX_DEPTH and n * lanes <= SCCSC_MAX_ENTRIES:
        return "sccsc"
    return "vecsc"


def sweep_batch(kernel: str, *, in_ptr, in_idx, out_ptr, out_idx, erow, ecol, n: int, m: int,
                stride: int, sources, level, sigma, t, flag0, flag1, masks, shifts, dcap: int,
                maxbits, reached, bc, ctl, endpoints: bool, max_in_degree: int,
                push_ratio: int, blocks_per_sm: int | None = None, tau=None,
                omega=None, edge=None, tau_slot=None, phase: int = 0) -> int:
    """One persistent launch: Algorithm 1 for ``sources`` (a device array, one per lane).

    ``stride`` is the row length of the n x stride blocks (a multiple of :data:`LANES`, at
    least ``sources.size``); the level type (int16 or int32) is ``level.dtype``;
    ``max_in_degree`` bounds the terms of one pushed sum (counts up to 2^OVERFLOW_EXP / it need no
    overflow test). ``push_ratio``: the batched veCSC pushes a forward level while the
    frontier's unit-edges times this are fewer than all unit-edges (m · chunks), else pulls;
    ``blocks_per_sm`` caps the resident blocks per multiprocessor (None: as many as fit);
    ``tau`` and ``omega`` are the per-vertex target and source weights of the accumulate step
    (spmv/kernels/accumulate.cuh), float64 device arrays of length n, or None for all ones.
    ``edge``: a float64 device array of one sum per stored edge, aligned with ``out_idx`` (the
    CSR pattern), into which the EdgeSums instantiation adds each DAG edge's share of the
    dependencies (edge BC) beside ``bc``; None: the VertexSums one (vertex sums only).
    ``tau_slot``: target weights per slot, laid out as ``t`` (then ``tau`` is unused);
    ``phase``: :data:`PHASE_BOTH` sweeps, or :data:`PHASE_FORWARD` then, in a second launch
    on the same workspace, :data:`PHASE_BACKWARD` (per-slot weights written in between).
    The kernel takes three structs by value (spmv/kernels/views.cuh, :mod:`spmv._views`).
    Returns the grid size. The kernel reports in ``ctl[STATUS_SLOT]`` whether the batch must
    be rerun.
    """
    width = {np.dtype(np.int16): 16, np.dtype(np.int32): 32}[np.dtype(level.dtype)]
    accumulator = "" if edge is None else "_edge"
    fn = get_kernel("batched.cu",
                    f"bcb_{kernel}{width}{accumulator}<{c_index_type(in_ptr.dtype)}>")
    work = (m if kernel == "sccooc" else n) * stride
    grid = min(resident_blocks(fn, BLOCK, blocks_per_sm), max(1, math.ceil(work / BLOCK)))
    graph_view = record(BATCH_GRAPH, in_ptr=in_ptr, in_idx=in_idx, out_ptr=out_ptr,
                        out_idx=out_idx, erow=erow, ecol=ecol, n=n, m=m,
                        small_count=math.ldexp(1.0, _ctl.OVERFLOW_EXP) / max(1, max_in_degree))
    work_view = record(BATCH_WORK, level=level, sigma=sigma, t=t, flag0=flag0, flag1=flag1,
                       masks=masks, shifts=shifts, maxbits=maxbits, reached=reached, ctl=ctl,
                       dcap=dcap)
    run_view = record(BATCH_RUN, sources=sources, nsrc=sources.size, lanes=stride, bc=bc,
                      edge=edge, tau=tau, omega=omega, tau_slot=tau_slot, phase=phase,
                      push_ratio=push_ratio,
                      endpoints=int(endpoints))
    fn((grid,), (BLOCK,), (graph_view, work_view, run_view))
    return grid
