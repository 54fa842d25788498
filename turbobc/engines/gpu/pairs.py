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

from spmv._launch import all_bits_set
from spmv._pairs import PAIR_BLOCK, sample_pairs

from turbobc._graph import Graph, index_dtype_for
from turbobc._pairs import PathCountOverflow
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.memory import pair_blocks

__all__ = ["PAIR_BLOCK", "PAIR_BLOCKS_PER_SM", "PairSampler", "PathCountOverflow"]

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
    memory_fraction : float, optional
        The share of the free device memory the workspaces may take (default
        ``Tuning.pair_memory_fraction``).
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

    def __init__(self, graph: Graph, *, endpoints: bool = False,
                 memory_fraction: float | None = None, blocks_per_sm: int | None = None):
        import cupy

        if graph.weighted:
            raise ValueError("the pair sampler counts shortest paths in hops: unweighted graphs")
        pattern = graph.pattern
        n = self.n = graph.n
        dtype = index_dtype_for(n, pattern.nnz)
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
        if memory_fraction is None:
            memory_fraction = current_tuning().pair_memory_fraction
        sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
        per_sm = PAIR_BLOCKS_PER_SM if blocks_per_sm is None else blocks_per_sm
        self.blocks = pair_blocks(n, np.dtype(dtype).itemsize, cupy.cuda.Device().mem_info[0],
                                  per_sm * sms, memory_fraction)
        self.levels = all_bits_set(self.blocks * 2 * n, cupy.int32)  # -1
        self.sigmas = cupy.zeros(self.blocks * 2 * n, dtype=cupy.float64)
        self.orders = cupy.empty(self.blocks * 2 * n, dtype=dtype)
        self.counts = cupy.zeros(n, dtype=cupy.uint64)
        self._status = cupy.zeros(1, dtype=cupy.int32)
        self._taken = cupy.zeros(1, dtype=cupy.uint64)  # samples handed out by the launch
        self.status = 0

    def __call__(self, seed: int, first: int, count: int, progress=None) -> np.ndarray:
        """Add the counts of samples ``first .. first + count − 1``; return the running total
        (host uint64, one per vertex). Raises :class:`PathCountOverflow` when a count reached
        infinity. ``progress`` (tqdm) advances per launch of ``64 * blocks`` samples."""
        chunk = 64 * self.blocks
        for start in range(first, first + count, chunk):
            size = min(chunk, first + count - start)
            self._taken.fill(0)
            sample_pairs(dict(ptr=self.ptr, idx=self.idx, rptr=self.rptr, ridx=self.ridx,
                              n=self.n),
                         dict(levels=self.levels, sigmas=self.sigmas, orders=self.orders,
                              counts=self.counts, status=self._status, taken=self._taken),
                         blocks=self.blocks, seed=seed, first=start, count=size,
                         endpoints=self.endpoints)
            self.status = int(self._status.get()[0])
            if self.status & 2:
                raise PathCountOverflow("a shortest-path count overflowed float64")
            if progress is not None:
                progress.update(size)
        return self.counts.get()
