"""The GPU's shortest-path sampler: spmv/kernels/pairs.cu (``bcp_sample``) on a graph kept on
the device (turbobc/_pairs.py says what a sample is).

A launch runs ``blocks`` blocks, each taking the next sample of a range from a counter when it
is done with one; a block has its own workspace, 2 n levels (int32), 2 n path counts (float64) and 2 n visited vertices (the
index type), and leaves it clean after each sample, so one allocation serves the whole run.
The counts of the samples add up on the device (uint64, the same whatever the grid) and come
back after each call.
"""

from __future__ import annotations

import numpy as np

from turbobc._graph import Graph
from turbobc._pairs import PathCountOverflow

__all__ = ["PAIR_BLOCK", "PAIR_BLOCKS_PER_SM", "PairSampler", "PathCountOverflow"]

PAIR_BLOCK = 256
"""Threads per block: a sample's levels are spread over its 8 warps (``PAIR_THREADS`` of
spmv/kernels/pairs.cu)."""

PAIR_BLOCKS_PER_SM = 6
"""Blocks (samples at a time) per multiprocessor, fewer when their workspaces do not fit: the
kernel is compiled to hold 6 at once (``PAIR_MIN_BLOCKS``, 40 registers a thread). A sample is
latency-bound; H100, 8,192 samples (bench/results/pairs_occupancy-*.json): 2 blocks per SM
(118 registers) 519 µs a sample on road1000 and 350 on del20, 4 blocks 321 and 221, 6 blocks
275 and 206, 8 blocks 269 and 231 (then the probe rule of spmv/kernels/pairs.cu: 6 blocks
226 and 183)."""


class PairSampler:
    """Sample shortest paths of ``graph`` on the current device.

    Parameters
    ----------
    graph : Graph
        Unweighted; directed graphs also keep their transpose (side t follows in-edges).
    endpoints : bool
        Count s and t too.
    memory_fraction : float
        The share of the free device memory the workspaces may take.
    blocks_per_sm : int, optional
        Blocks of the grid per multiprocessor (default :data:`PAIR_BLOCKS_PER_SM`); those
        beyond the ones resident wait, then take samples from the counter.

    Attributes
    ----------
    blocks : int
        Samples in flight.
    status : int
        Bit 1: some path count passed 2^53 (spmv/kernels/pairs.cu).
    """

    def __init__(self, graph: Graph, *, endpoints: bool = False, memory_fraction: float = 0.5,
                 blocks_per_sm: int | None = None):
        import cupy

        import spmv._module as _module

        if graph.weighted:
            raise ValueError("the pair sampler counts shortest paths in hops: unweighted graphs")
        pattern = graph.pattern
        n = self.n = graph.n
        wide = max(n, pattern.nnz) >= 2**31
        dtype = np.int64 if wide else np.int32
        self.ptr = cupy.asarray(pattern.indptr.astype(dtype))
        self.idx = cupy.asarray(pattern.indices.astype(dtype))
        if graph.directed:
            transpose = pattern.T.tocsr()
            transpose.sort_indices()
            self.rptr = cupy.asarray(transpose.indptr.astype(dtype))
            self.ridx = cupy.asarray(transpose.indices.astype(dtype))
        else:
            self.rptr, self.ridx = self.ptr, self.idx
        self.endpoints = endpoints
        per_block = 2 * n * (4 + 8 + np.dtype(dtype).itemsize)
        sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
        free = cupy.cuda.Device().mem_info[0]
        fits = int(memory_fraction * free) // max(per_block, 1)
        if fits < 1:
            raise MemoryError(f"one sample's workspace takes {per_block} bytes; "
                              f"{free} bytes of device memory are free")
        per_sm = PAIR_BLOCKS_PER_SM if blocks_per_sm is None else blocks_per_sm
        self.blocks = int(max(1, min(per_sm * sms, fits)))
        self.levels = cupy.full(self.blocks * 2 * n, -1, dtype=cupy.int32)
        self.sigmas = cupy.zeros(self.blocks * 2 * n, dtype=cupy.float64)
        self.orders = cupy.empty(self.blocks * 2 * n, dtype=dtype)
        self.counts = cupy.zeros(n, dtype=cupy.uint64)
        self._status = cupy.zeros(1, dtype=cupy.int32)
        self._taken = cupy.zeros(1, dtype=cupy.uint64)  # samples handed out by the launch
        self.kernel = _module.get_kernel("pairs.cu",
                                         f"bcp_sample<{_module.c_index_type(dtype)}>")
        self.status = 0

    def __call__(self, seed: int, first: int, count: int, progress=None) -> np.ndarray:
        """Add the counts of samples ``first .. first + count − 1``; return the running total
        (host uint64, one per vertex). Raises :class:`PathCountOverflow` when a count reached
        infinity. ``progress`` (tqdm) advances per launch of ``64 * blocks`` samples."""
        chunk = 64 * self.blocks
        for start in range(first, first + count, chunk):
            size = min(chunk, first + count - start)
            self._taken.fill(0)
            self.kernel((self.blocks,), (PAIR_BLOCK,),
                        (self.ptr, self.idx, self.rptr, self.ridx, np.int64(self.n),
                         np.uint64(seed), np.int64(start), np.int64(size),
                         np.int32(self.endpoints), self.levels, self.sigmas, self.orders,
                         self.counts, self._status, self._taken))
            self.status = int(self._status.get()[0])
            if self.status & 2:
                raise PathCountOverflow("a shortest-path count overflowed float64")
            if progress is not None:
                progress.update(size)
        return self.counts.get()
