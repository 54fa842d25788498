"""Thin launchers of the layers family's kernels (``spmv/kernels/distances.cu``, ``marks.cu``,
``layers.cu``, ``block_sweep.cu``): grid size, the structs of views.cuh, nothing else.

The family's driver, turbobc/engines/gpu/layers_distances.py and layers_sweep.py, decides what
to launch; these functions only launch it. Every kernel takes the graph as a
:data:`~spmv._views.LAYER_GRAPH` record (:func:`graph_view`) and its state as records
(``RELAX_STATE`` and ``RELAX_ROUND`` for a round of the distances; ``DAG_SLOTS``, ``LAYER_STEP``
and ``DAG_SUMS`` for the DAG's layers). ``itype`` is the C index type (``"int"`` or
``"long long"``, :func:`spmv._module.c_index_type`). Nothing here imports CuPy at import time.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property

import numpy as np

from . import _module
from ._views import (DAG_SLOTS, DAG_SUMS, LAYER_GRAPH, LAYER_STEP, RELAX_ROUND, RELAX_STATE,
                     record)

__all__ = ["RELAX_BLOCK", "BLOCK_THREADS", "SWEEP_THREADS", "MARK_THREADS", "LayerGraph",
           "RelaxArrays", "DagArrays", "SumArrays", "per_block_kernel", "relax",
           "block_distances", "list_marks", "indegree", "forward", "backward", "block_sweep"]

RELAX_BLOCK = 256
"""Threads per block of the launches over slots (relax, in-degrees, forward, backward)."""

BLOCK_THREADS = 256
"""Threads of each block of ``bcl_block_distances`` (a source per block)."""

SWEEP_THREADS = 1024
"""Threads of each block of ``bcl_block_sweep`` (a source per block: a warp per vertex of a
layer)."""

MARK_THREADS = 256
"""Threads per block of bcl_count_marks and bcl_list_marks (``MARK_THREADS`` in marks.cu)."""

_FILES = {"bcl_relax": "distances.cu", "bcl_block_distances": "distances.cu",
          "bcl_count_marks": "marks.cu", "bcl_list_marks": "marks.cu",
          "bcl_indegree": "layers.cu", "bcl_forward": "layers.cu", "bcl_backward": "layers.cu",
          "bcl_block_sweep": "block_sweep.cu"}


def _fields(view) -> dict:
    return {field.name: getattr(view, field.name) for field in fields(view)}


@dataclass(frozen=True)
class LayerGraph:
    """The graph on the device: CSR pattern (``ptr``, ``idx``), the lengths aligned with it
    (float64; all 1.0 for unweighted BC), n vertices (the ``LayerGraph`` struct)."""

    ptr: object
    idx: object
    lengths: object
    n: int

    @cached_property
    def view(self) -> np.void:
        return record(LAYER_GRAPH, ptr=self.ptr, idx=self.idx, len=self.lengths, n=self.n)


@dataclass(frozen=True)
class RelaxArrays:
    """A batch's distances (B x n float64 bit patterns) and how each round records what it
    lowers: marks, or a queue with per-slot stamps; the near-far phase's far list (the
    ``RelaxState`` struct)."""

    dist: object
    marks: object
    stamp: object
    queue: object
    queue_count: object
    far_stamp: object
    far: object
    far_count: object

    @cached_property
    def view(self) -> np.void:
        return record(RELAX_STATE, **_fields(self))


@dataclass(frozen=True)
class DagArrays:
    """A batch's slots of the DAG sweep (the ``DagSlots`` struct): the final distances, the
    counts σ, the dependencies δ, the DAG parents left of each slot and the DAG masks (None
    for an array a phase does not use)."""

    dist: object
    dag: object
    mask_at: object
    words: int
    total: int
    sigma: object = None
    delta: object = None
    remaining: object = None

    @cached_property
    def view(self) -> np.void:
        return record(DAG_SLOTS, **_fields(self))


@dataclass(frozen=True)
class SumArrays:
    """What the backward layers add into (the ``DagSums`` struct): τ per vertex, or per slot
    with ``tau_per_slot``; ω of each lane; the lanes to skip; the edge sums (None: vertex sums
    only)."""

    tau: object
    lane_weight: object
    skip: object
    edge: object
    tau_per_slot: bool

    @cached_property
    def view(self) -> np.void:
        return record(DAG_SUMS, tau=self.tau, lane_weight=self.lane_weight, skip=self.skip,
                      edge=self.edge, tau_per_slot=int(self.tau_per_slot),
                      has_edge=int(self.edge is not None))


def _kernel(name: str, itype: str):
    return _module.get_kernel(_FILES[name], f"{name}<{itype}>")


def _grid(count: int) -> int:
    """Blocks of :data:`RELAX_BLOCK` threads for ``count`` items (grid-stride past 2^20)."""
    return max(1, min(-(-count // RELAX_BLOCK), 1 << 20))


def per_block_kernel(name: str, itype: str, shared: int):
    """``bcl_block_distances`` or ``bcl_block_sweep`` when the device gives a block ``shared``
    bytes of shared memory (opting in past 48 KiB), else None."""
    kernel = _kernel(name, itype)
    return kernel if _module.allow_shared_memory(kernel, shared) else None


# ---- distances.cu ------------------------------------------------------------------------------

def relax(graph: LayerGraph, itype: str, state: RelaxArrays, *, keys, count: int,
          below: float, queued: bool, round: int, phase: int) -> None:
    """One Bellman–Ford round over ``count`` keys (``bcl_relax``)."""
    run = record(RELAX_ROUND, keys=keys, count=count, below=below, queued=int(queued),
                 round=round, phase=phase)
    _kernel("bcl_relax", itype)((_grid(count),), (RELAX_BLOCK,),
                                (graph.view, state.view, run))


def block_distances(kernel, graph: LayerGraph, sources, width: float, out,
                    shared: int) -> None:
    """The distances of every source, a block each, into ``out`` (B x n bit patterns)."""
    kernel((int(sources.size),), (BLOCK_THREADS,),
           (graph.view, sources, np.float64(width), out), shared_mem=shared)


# ---- marks.cu ----------------------------------------------------------------------------------

def list_marks(marks, itype: str):
    """The slots marked in ``marks`` (uint8, 0 or 1, a multiple of 16 bytes long) in slot order,
    as int64, the marks cleared: two launches over its 16-byte words (bcl_count_marks,
    bcl_list_marks) and a prefix sum of one count per block of words, in place of
    ``flatnonzero`` and ``fill(0)`` (a prefix sum of 8 bytes per slot)."""
    import cupy

    words = marks.size // 16
    blocks = max(1, -(-words // MARK_THREADS))
    counts = cupy.empty(blocks, dtype=cupy.uint32)
    _kernel("bcl_count_marks", itype)((blocks,), (MARK_THREADS,),
                                      (marks, np.int64(words), counts))
    ends = cupy.cumsum(counts, dtype=cupy.int64)
    total = int(ends[-1])
    keys = cupy.empty(total, dtype=cupy.int64)
    if total:
        _kernel("bcl_list_marks", itype)((blocks,), (MARK_THREADS,),
                                         (marks, np.int64(words), ends - counts, keys))
    return keys


# ---- layers.cu and block_sweep.cu --------------------------------------------------------------

def indegree(graph: LayerGraph, itype: str, slots: DagArrays) -> None:
    """The DAG parents of every slot and its DAG masks (``bcl_indegree``)."""
    _kernel("bcl_indegree", itype)((_grid(slots.total),), (RELAX_BLOCK,),
                                   (graph.view, slots.view))


def forward(graph: LayerGraph, itype: str, slots: DagArrays, *, layer, size: int,
            queued: bool, next, count, marks) -> None:
    """One hop layer forward (``bcl_forward``): σ pushed to the DAG children, the next layer
    queued into ``next`` (``count``) or marked in ``marks``."""
    step = record(LAYER_STEP, layer=layer, size=size, next=next, count=count, marks=marks,
                  queued=int(queued))
    _kernel("bcl_forward", itype)((_grid(size),), (RELAX_BLOCK,),
                                  (graph.view, slots.view, step))


def backward(graph: LayerGraph, itype: str, slots: DagArrays, sums: SumArrays, *, layer,
             size: int) -> None:
    """One hop layer backward (``bcl_backward``): δ pulled from the DAG children."""
    step = record(LAYER_STEP, layer=layer, size=size, next=None, count=None, marks=None,
                  queued=0)
    _kernel("bcl_backward", itype)((_grid(size),), (RELAX_BLOCK,),
                                   (graph.view, slots.view, step, sums.view))


def block_sweep(kernel, graph: LayerGraph, sources, dist, delta, sums: SumArrays,
                shared: int) -> None:
    """The whole DAG sweep of every source, a block each (``bcl_block_sweep``)."""
    kernel((int(sources.size),), (SWEEP_THREADS,),
           (graph.view, sources, dist, delta, sums.view), shared_mem=shared)
