"""The device blocks of the lanes family: the storage format a kernel sweeps, the n x B
workspace of a batch, and what a batch's control block says after its launch."""

from __future__ import annotations

import numpy as np

from spmv import _batched

from turbobc.engines.gpu.memory import (DEPTH_CAP, LANES, device_memory_text, lane_bytes,
                                        round_up)
from turbobc.engines.gpu.resident import DeviceResident

__all__ = ["LanesFormat", "Workspace", "holds", "workspace_for", "status_of", "widened",
           "out_of_memory"]


class LanesFormat:
    """The storage format a batched kernel sweeps (CSR, plus CSC for directed graphs; COO rows
    for scCOOC), fetched from ``resident`` (built there when missing)."""

    def __init__(self, resident: DeviceResident, kernel: str, index_dtype):
        self.out_ptr = resident.fetch("csr_ptr", index_dtype)
        self.out_idx = resident.fetch("csr_idx", index_dtype)
        self.in_ptr, self.in_idx = self.out_ptr, self.out_idx  # A == Aᵀ when undirected
        self.erow, self.ecol = self.out_idx, self.out_idx      # unused unless scCOOC
        if kernel == "sccooc":
            self.erow = resident.fetch("csr_row", index_dtype)
        elif resident.graph.directed:
            self.in_ptr = resident.fetch("csc_ptr", index_dtype)
            self.in_idx = resident.fetch("csc_idx", index_dtype)

    @staticmethod
    def parts(kernel: str, directed: bool) -> tuple[str, ...]:
        """The resident parts the format is made of."""
        if kernel == "sccooc":
            return ("csr_ptr", "csr_idx", "csr_row")
        return ("csr_ptr", "csr_idx") + (("csc_ptr", "csc_idx") if directed else ())


def holds(shape: tuple, batch: int, level_dtype, depth_cap: int) -> bool:
    """Whether a workspace of ``shape`` (its lanes, level type and shift-table levels) serves
    a batch of ``batch`` lanes with ``level_dtype`` levels and ``depth_cap`` table levels: it
    has at least as many lanes, levels at least as wide and a table at least as deep."""
    lanes, held_level, held_cap = shape
    return (lanes >= batch and np.dtype(held_level).itemsize >= np.dtype(level_dtype).itemsize
            and held_cap >= depth_cap)


class Workspace:
    """The n x B blocks of one batch size, level type and shift-table depth."""

    def __init__(self, n: int, batch: int, level_dtype, depth_cap: int):
        import cupy

        self.batch, self.level_dtype, self.depth_cap = batch, np.dtype(level_dtype), depth_cap
        units = n * (batch // LANES)
        self.level = cupy.empty(n * batch, dtype=level_dtype)
        self.sigma = cupy.empty(n * batch, dtype=np.float64)
        self.t = cupy.empty(n * batch, dtype=np.float64)
        self.flag0 = cupy.empty(units, dtype=level_dtype)
        self.flag1 = cupy.empty(units, dtype=level_dtype)
        self.masks = cupy.empty(2 * units, dtype=np.uint64)
        self.shifts = cupy.empty(batch * depth_cap, dtype=np.int32)
        self.maxbits = cupy.empty(batch, dtype=np.uint64)
        self.reached = cupy.empty(batch, dtype=np.uint64)

    @property
    def shape(self) -> tuple:
        """(lanes, level type, shift-table levels)."""
        return self.batch, self.level_dtype, self.depth_cap

    def arrays(self):
        return (self.level, self.sigma, self.t, self.flag0, self.flag1, self.masks,
                self.shifts, self.maxbits, self.reached)


def workspace_for(resident: DeviceResident, n: int, batch: int, level_dtype,
                  depth_cap: int) -> Workspace:
    """The workspace ``resident`` keeps when it :func:`holds` the batch, else a new one (the
    old one is let go first, so its blocks can serve the new one)."""
    held = resident.workspace("lanes")
    if held is not None and holds(held.shape, batch, level_dtype, depth_cap):
        return held
    held = None  # no reference may keep the old blocks from the pool
    resident.drop_workspace()
    ws = Workspace(n, round_up(batch, LANES), level_dtype, depth_cap)
    resident.keep_workspace("lanes", ws)
    return ws


def out_of_memory(n, m, kernel, batch, failure, edges=False) -> MemoryError:
    """The MemoryError of a lanes run the device could not hold (a batch of ``batch``)."""
    need = batch * lane_bytes(n, 2, DEPTH_CAP) + (8 * m if edges else 0)
    what = " and the edge sums" if edges else ""
    return MemoryError(f"the lanes family of the GPU engine needs about {need} bytes of device memory for "
                       f"a batch of {batch} sources{what} (n={n}, {m} stored edges, "
                       f"kernel={kernel!r}); {device_memory_text()}. CuPy said: {failure}")


def status_of(ctl) -> tuple[int, int]:
    """(status, depth) of the batch just swept, from its control block: 0, or why it stopped
    (``WIDE_RANGE``, ``LEVEL_OVERFLOW``, a batch deeper than the shift table)."""
    status, depth = (int(x) for x in ctl[_batched.STATUS_SLOT:_batched.DEPTH_SLOT + 1].get())
    return status, depth


def widened(status: int, level_dtype, depth_cap: int, n: int):
    """The level type and shift-table depth to sweep a batch again with, after it stopped
    with ``status``: int32 levels past the int16 ones (``LEVEL_OVERFLOW``), else a shift table
    four times deeper (at most n + 2 levels)."""
    if status == _batched.LEVEL_OVERFLOW:
        return np.dtype(np.int32), depth_cap
    return level_dtype, min(n + 2, 4 * depth_cap)
