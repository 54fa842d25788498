"""Thin launcher of the pair sampler (``spmv/kernels/pairs.cu``, ``bcp_sample``): grid size and
the structs of views.cuh (``PairGraph``, ``PairWork``, ``PairRun``), nothing else. Nothing here
imports CuPy at import time."""

from __future__ import annotations

from ._module import c_index_type, get_kernel
from ._views import PAIR_GRAPH, PAIR_RUN, PAIR_WORK, record

__all__ = ["PAIR_BLOCK", "sample_pairs"]

PAIR_BLOCK = 256
"""Threads per block: a sample's levels are spread over its 8 warps (``PAIR_THREADS`` of
spmv/kernels/pairs.cu)."""


def sample_pairs(graph: dict, work: dict, *, blocks: int, seed: int, first: int, count: int,
                 endpoints: bool) -> None:
    """Samples ``first .. first + count − 1`` on ``blocks`` blocks, each taking the next from the
    counter ``work["taken"]`` (zeroed by the caller). ``graph``: ptr, idx, rptr, ridx (device
    arrays of one index type) and n; ``work``: levels, sigmas, orders, counts, status, taken."""
    kernel = get_kernel("pairs.cu", f"bcp_sample<{c_index_type(graph['ptr'].dtype)}>")
    kernel((blocks,), (PAIR_BLOCK,),
           (record(PAIR_GRAPH, **graph), record(PAIR_WORK, **work),
            record(PAIR_RUN, seed=seed, first=first, count=count, endpoints=int(endpoints))))
