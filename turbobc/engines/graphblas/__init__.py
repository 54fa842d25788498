"""The reference engine: Algorithm 1 in python-graphblas, many sources at once.

It is the linear-algebra formulation of the paper, line by line, and the engine the others
are checked against (``engine="graphblas"``); the compiled CPU engine (turbobc/engines/cpu/)
is the faster way to run on the CPU.

A batch of B sources is processed together; every per-source vector of the
paper becomes a B x n matrix with one row per source (LAGraph's layout,
docs/algorithm.md, "Many sources per sweep"). In row form the paper's products read

    paper (one source, column vectors)      here (B sources, row vectors)
    f<¬σ> = Aᵀ f                            F<¬Σ> = F A
    t = A u                                 T<S_{d-1}> = U Aᵀ

Both products use the plus-first semiring: the sum over neighbours of the
left operand's values; the values of A never matter, only its pattern.

The modules, by role:

- ``sweep``: the traversal core, one batch's forward and backward loops (path counts kept in
  range per level, :func:`~turbobc.engines.graphblas.sweep.accumulate_batch`);
- ``hops`` and ``dag``: the walks that supply the shortest-path DAG, :class:`HopWalk` (BFS
  levels) or :class:`DagWalk` (distances by min-plus Bellman–Ford, the DAG edges
  d(v) + len == d(w) of each source, swept by their hop layers; docs/algorithm.md, "Weighted
  BC");
- ``memory``: the memory plan (bytes per slot, the batch that fits, batches at once);
- ``engine``: the engine and its sweeper behind the protocol (turbobc/engines/protocol.py);
- ``linalg``: the small GraphBLAS helpers they share.

Path counts are kept overflow-safe per level (``sweep._keep_in_range``):
each level's counts σ_d are stored as σ̂_d = σ_d / 2^E_d with an integer
exponent E_d per source, so the algorithm stays correct far past 1e308 while
graphs whose counts fit in float64 never scale at all. A source one of whose
levels spreads wider than :data:`turbobc.engines.wide.WIDE_RANGE` (the small counts
would underflow) is taken out of its batch and swept by :mod:`turbobc.engines.wide`,
which keeps an exponent per (source, vertex).
"""

from turbobc.engines.graphblas.dag import DagWalk, ShortestPathDag
from turbobc.engines.graphblas.engine import GraphblasEngine, GraphblasSweeper, accumulate
from turbobc.engines.graphblas.hops import HopLevels, HopWalk
from turbobc.engines.graphblas.memory import (BYTES_PER_EDGE_SLOT, BYTES_PER_SLOT,
                                              batch_size_for, concurrent_batches, fixed_bytes,
                                              graphblas_threads)

__all__ = ["accumulate", "batch_size_for", "concurrent_batches", "fixed_bytes",
           "graphblas_threads", "BYTES_PER_SLOT", "BYTES_PER_EDGE_SLOT", "GraphblasEngine",
           "GraphblasSweeper", "HopLevels", "HopWalk", "ShortestPathDag", "DagWalk"]
