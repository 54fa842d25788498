"""The CPU's shortest-path sampler on threads: blocks of samples (the compiled
:func:`turbobc.engines.cpu.pairs.sample_block`, through turbobc/_compiled.py) handed to the
engine's threads, each with its own workspace, their counts added in uint64 (the same in any
order)."""

from __future__ import annotations

import threading

import numpy as np

from turbobc._compiled import entry
from turbobc._graph import Graph, in_index_type
from turbobc._pairs import PathCountOverflow, pair_of
from turbobc.engines.cpu.threads import on_threads

__all__ = ["CpuPairSampler"]


class CpuPairSampler:
    """Sample shortest paths of ``graph`` on the CPU's threads: ``sampler(seed, first, count,
    bar)`` adds the counts of samples ``first .. first + count − 1`` to a running total and
    returns it (uint64, one per vertex), as the GPU's
    :class:`turbobc.engines.gpu.pairs.PairSampler` does.

    Parameters
    ----------
    graph : Graph
        Unweighted; a directed graph also keeps its transpose (side t follows in-edges).
    endpoints : bool
        Count s and t too.
    threads : int
        The threads of the run; each call cuts its samples into 4 blocks per thread.
    """

    def __init__(self, graph: Graph, *, endpoints: bool = False, threads: int = 1):
        if graph.weighted:
            raise ValueError("the pair sampler counts shortest paths in hops: unweighted graphs")
        pattern = graph.pattern
        self.out_ptr = np.ascontiguousarray(pattern.indptr, dtype=np.int64)
        self.out_idx = np.ascontiguousarray(in_index_type(pattern.indices, graph.n, graph.nnz))
        if graph.directed:
            transpose = pattern.T.tocsr()
            transpose.sort_indices()
            self.in_ptr = np.ascontiguousarray(transpose.indptr, dtype=np.int64)
            self.in_idx = np.ascontiguousarray(transpose.indices, dtype=self.out_idx.dtype)
        else:
            self.in_ptr, self.in_idx = self.out_ptr, self.out_idx
        self.endpoints = bool(endpoints)
        self.threads = max(1, threads)
        self.blocks_per_call = 4 * self.threads
        self.total = np.zeros(graph.n, dtype=np.uint64)
        self._free: list = []
        self._lock = threading.Lock()

    def _workspace(self) -> tuple:
        """A workspace no other thread holds (about 40 bytes a vertex, and its own part of
        the counts), made once and kept: levels -1 and counts 0, as every sample leaves
        them."""
        with self._lock:
            if self._free:
                return self._free.pop()
            n = self.total.size
            return (np.full((2, n), -1, dtype=np.int32), np.zeros((2, n)),
                    np.empty((2, n), dtype=np.int64), np.zeros(n, dtype=np.uint64))

    def __call__(self, seed: int, first: int, count: int, bar=None) -> np.ndarray:
        blocks = max(1, min(self.blocks_per_call, count))
        overflowed = np.full(blocks, -1, dtype=np.int64)
        sample = entry("sample_block", self.out_idx.dtype)
        used = []

        def block(b):
            work = self._workspace()
            try:
                overflowed[b] = sample(self.out_ptr, self.out_idx, self.in_ptr, self.in_idx,
                                       np.uint64(seed), first + count * b // blocks,
                                       first + count * (b + 1) // blocks, self.endpoints,
                                       *work)
            finally:
                with self._lock:
                    self._free.append(work)
                    used.append(work)

        on_threads(block, blocks, self.threads)
        for work in {id(w): w for w in used}.values():  # each workspace's part, then zeroed
            self.total += work[3]
            work[3][:] = 0
        hit = overflowed[overflowed >= 0]
        if hit.size:
            sample, side = divmod(int(hit.min()), 2)
            root = pair_of(seed, sample, self.total.size)[side]
            raise PathCountOverflow(f"sample {sample}: a shortest-path count from {root} "
                                    "overflowed float64")
        if bar is not None:
            bar.update(count)
        return self.total
