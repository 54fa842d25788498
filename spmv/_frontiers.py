"""Thin launcher of the frontiers family (``spmv/kernels/frontiers.cu``, ``bcf_sweep``): the
grid, the structs of views.cuh (``FrontierGraph``, ``FrontierWork``, ``FrontierRun``), nothing
else. Nothing here imports CuPy at import time."""

from __future__ import annotations

import math

from . import _ctl
from ._launch import resident_blocks
from ._module import c_index_type, get_kernel
from ._views import FRONTIER_GRAPH, FRONTIER_RUN, FRONTIER_WORK, record

__all__ = ["FRONTIER_THREADS", "WHOLE", "FORWARD", "BACKWARD", "kernel_for", "most_blocks",
           "sweep_frontiers"]

FRONTIER_THREADS = 256
"""Threads per block (``FRONTIER_THREADS`` and ``__launch_bounds__`` of frontiers.cu)."""

WHOLE, FORWARD, BACKWARD = 0, 1, 2
"""``FrontierRun.phase`` (frontiers.cu): every source forward and backward, the blocks taking
them from the counter; or a block per slot, forward only (its rows kept, its depth in
``work["depth"]``), then backward only from those rows."""


def kernel_for(index_dtype, defines: tuple = ()):
    """The compiled ``bcf_sweep`` of an index type (int32 or int64), with the ``FRONTIER_*``
    macros of ``defines`` ((name, value) pairs) in place of the file's defaults."""
    return get_kernel("frontiers.cu", f"bcf_sweep<{c_index_type(index_dtype)}>",
                      tuple((f"FRONTIER_{name}", value) for name, value in defines))


def most_blocks(index_dtype, blocks_per_sm: int | None = None, defines: tuple = ()) -> int:
    """Blocks that can be resident at once on the current device (at most ``blocks_per_sm`` per
    multiprocessor): the sources in flight."""
    return resident_blocks(kernel_for(index_dtype, defines), FRONTIER_THREADS, blocks_per_sm)


def sweep_frontiers(graph: dict, work: dict, *, blocks: int, sources, tau, omega, edge,
                    endpoints: bool, max_in_degree: int, defines: tuple = (),
                    phase: int = WHOLE, tau_stride: int = 0) -> None:
    """Sweep every source of ``sources`` (device int64), a block each at a time, ``blocks``
    blocks taking them from the counter ``work["next"]`` (zeroed by the caller); or with
    ``phase`` FORWARD or BACKWARD, block b sweeps ``sources[b]`` one way (``blocks`` is then
    ``sources.size``) with ``tau + b tau_stride`` its target weights. ``graph``: ptr, idx
    (device CSR of one index type) and n; ``work``: every FrontierWork array by name
    (``depth`` written and read by a phased run only, ``profile`` None but in a
    FRONTIER_PROFILE build)."""
    kernel = kernel_for(graph["ptr"].dtype, defines)
    small = math.ldexp(1.0, _ctl.OVERFLOW_EXP) / max(1, max_in_degree)
    kernel((blocks,), (FRONTIER_THREADS,),
           (record(FRONTIER_GRAPH, **graph, small_count=small), record(FRONTIER_WORK, **work),
            record(FRONTIER_RUN, sources=sources, nsrc=int(sources.size), tau=tau,
                   tau_stride=int(tau_stride), omega=omega, edge=edge,
                   endpoints=int(endpoints), phase=int(phase))))
