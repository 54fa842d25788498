"""The graphblas engine's memory plan: bytes per (source, vertex) slot, the batch that fits, and
how many batches run at once.

A batch of B sources holds its levels (16 bytes per stored count; a level denser than
:data:`~turbobc.engines.graphblas.linalg.PULL_ABOVE_DENSITY` is a bitmap, 9 bytes per slot),
the visited bitmap and the temporaries of one level: up to :data:`BYTES_PER_SLOT` bytes per
(source, vertex) slot. :func:`batch_size_for` plans each batch for that many bytes within
``memory_limit``, or within ``Tuning.cpu_memory_fraction`` of the memory available (the lower
of MemAvailable and the room under the cgroup limit, :func:`turbobc._memory.available_memory`),
and caps it at ``Tuning.cpu_batch_cap`` slots, past which batches sweep hardly faster but peak
higher. The resident set grew with every batch (email-Enron, 914 sources a batch: 2.2, 4.2, 5.8
GiB after the first three, a 12.8 GiB peak over the whole run; the issue saw 15 GB) not from
allocator fragmentation but because every python-graphblas Matrix is in a reference cycle
(``Matrix.ss._parent``) and is freed only by Python's cyclic garbage collector, which seldom
runs here (few Python objects are made). So each batch ends with ``gc.collect()`` (20 ms): the
resident set returns to its start after every batch and the peak is that of one batch. Measured
alternatives (``python -m bench cpu_memory --mechanisms``,
bench/results/cpu_memory-20261123T144734Z.json; email-Enron, 3,000 sources, B = 914; peak /
resident after each batch, GiB): none 6.35 / 2.22 4.19 5.85 6.29; glibc ``malloc_trim(0)``
after each batch 5.30 / 2.13 4.10 1.85 2.33 (the memory is still referenced);
``MALLOC_ARENA_MAX=1`` 6.36 / 2.22 4.18 5.84 6.29; ``MALLOC_MMAP_THRESHOLD_=131072`` 4.37 /
2.13 2.12 3.82 4.30; ``gc.collect()`` 2.36 / 0.18 0.23 0.18 0.18 (kept); ``gc.collect()`` and
``malloc_trim(0)`` 2.35 / 0.15 0.15 0.15 0.15 (not kept: 30 MiB less, a glibc-only call).
Collecting more often within a batch does not lower its peak (2.34 GiB either way): the peak is
live data."""

from __future__ import annotations

import graphblas
import numpy as np

from turbobc._memory import available_memory, format_bytes
from turbobc._tuning import current as current_tuning

__all__ = ["BYTES_PER_SLOT", "BYTES_PER_EDGE_SLOT", "batch_size_for", "concurrent_batches",
           "fixed_bytes", "graphblas_threads"]

BYTES_PER_SLOT = 160
"""Bytes one (source, vertex) slot of a batch may take at the peak of its sweep: the levels
(16 bytes per stored count, 9 per slot for a level dense enough to be a bitmap), the visited
bitmap and the temporaries of one level. Measured peaks (one batch of 400 random sources,
resident set above the start): p2p-Gnutella31 10.5, cit-HepPh 22.1, road-luxembourg 23.3,
delaunay_n16 50.4, as-caida 64.5, ca-GrQc 65.8, email-Enron 68, ego-Facebook 73.3, and 117
and 153 on layered graphs built so that every level is just dense enough to be a bitmap."""

# A frontier denser than this (entries / (B n)) is pulled rather than pushed: it is handed to

BYTES_PER_EDGE_SLOT = 24
"""Weighted BC: bytes one (source, stored edge) slot of a batch may take at its peak, on top of
:data:`BYTES_PER_SLOT` per (source, vertex): the DAG T̃ (8 bytes per DAG edge), the B x m work
matrices of a layer (its DAG edges with their σ̂, the heads' u, the terms) and, while T̃ is
built, its column list twice. Every stored edge is on the DAG only in the worst case, a
layered DAG with unit lengths (20 layers, complete between neighbours, 300 sources of the
first: 18.6 bytes per slot above the unweighted run). Measured peaks of one batch (resident
set above the start) against what this and BYTES_PER_SLOT plan for it: ego-Facebook, 1,000
sources, unit lengths 699 MB of 4,879 planned, random lengths 508 MB; ca-GrQc, unit, 637 of
1,534; wiki-Vote (directed), unit, 855 of 3,627; email-Eu-core (directed), unit, 311 of 759;
road-minnesota, random, 300 sources, 158 of 174; the layered DAG 407 of 492."""


def fixed_bytes(n: int, m: int, directed: bool, weighted: bool = False) -> int:
    """Bytes of a run that do not depend on the batch: the GraphBLAS copy of the pattern
    (8-byte row pointers and column indices; Aᵀ too for directed graphs) and the sums. Weighted:
    A with its lengths, the incidence matrices and edge arrays of :class:`ShortestPathDag`, and
    the edge sums."""
    if weighted:
        # A_len ; Src ; Srcᵀ and Dst (a row per edge) ; tails, heads, lengths ; edge sums, raw
        return (8 * (n + 1) + 16 * m) + (8 * (n + 1) + 8 * m) + 2 * (8 * (m + 1) + 8 * m) \
            + 24 * m + 8 * m + 8 * n
    return (8 * (n + 1) + 8 * m) * (2 if directed else 1) + 8 * n


def batch_size_for(n: int, num_sources: int, *, m: int = 0, directed: bool = False,
                   memory_limit: int | None = None, available: int | None = None,
                   weighted: bool = False) -> int:
    """Sources per batch: what the memory budget holds, at most ``Tuning.cpu_batch_cap`` slots.

    Parameters
    ----------
    n, num_sources : int
        Vertices, and sources still to sweep.
    m : int
        Stored edges of the pattern.
    directed : bool
        Directed graphs keep Aᵀ too.
    memory_limit : int, optional
        The user's ``memory_limit`` in bytes: the whole run (:func:`fixed_bytes` plus
        :data:`BYTES_PER_SLOT` per source and vertex) must fit in it.
    available : int, optional
        Available memory in bytes; default :func:`turbobc._memory.available_memory`. Without
        ``memory_limit`` the batches plan for ``Tuning.cpu_memory_fraction`` of it.
    weighted : bool
        Weighted BC: also :data:`BYTES_PER_EDGE_SLOT` per source and stored edge.

    Returns
    -------
    int
        At least 1 (0 when there is no source).

    Raises
    ------
    MemoryError
        Not even one source fits in ``memory_limit`` (or, without it, in the available
        memory); the message gives the estimate and the limit.
    """
    if num_sources == 0:
        return 0
    knobs = current_tuning()
    fixed = fixed_bytes(n, m, directed, weighted)
    per_source = BYTES_PER_SLOT * max(n, 1) + (BYTES_PER_EDGE_SLOT * m if weighted else 0)
    if memory_limit is not None:
        budget = ceiling = memory_limit
        what = f"memory_limit is {format_bytes(memory_limit)}"
        fix = "raise memory_limit"
    else:
        ceiling = available_memory() if available is None else available
        budget = int(knobs.cpu_memory_fraction * ceiling)
        what = (f"only {format_bytes(ceiling)} of memory is available (MemAvailable, or the "
                "room under the cgroup limit)")
        fix = "free memory, or pass a larger memory_limit to try anyway"
    if fixed + per_source > ceiling:
        raise MemoryError(
            f"the CPU engine needs about {format_bytes(fixed + per_source)} for one source "
            f"(n={n}, {m} stored edges: {format_bytes(fixed)} for the graph and "
            f"{BYTES_PER_SLOT} bytes per vertex and source"
            + (f", {BYTES_PER_EDGE_SLOT} per stored edge and source" if weighted else "")
            + f"), but {what}; {fix}")
    fits = max(1, (budget - fixed) // per_source)
    return int(max(1, min(num_sources, knobs.cpu_batch_cap // max(n, 1), fits)))


def graphblas_threads() -> int:
    """The threads SuiteSparse:GraphBLAS uses for a call made here: the engaged context's
    (``graphblas.ss.Context``; the global one unless a thread engaged its own)."""
    from graphblas.core.ss.context import threadlocal

    engaged = int(threadlocal.context["nthreads"])
    return engaged if engaged > 0 else max(1, int(graphblas.ss.config["nthreads"]))


def concurrent_batches(num_sources: int, step: int) -> int:
    """Batches to sweep at once (``Tuning.cpu_concurrent_batches``), given the sources and
    the batch the memory budget plans (``step``): never more than ``step`` (each of the
    batches at once gets a share of that budget, at least one source), and never more than
    half the sources (at least two batches each)."""
    wanted = current_tuning().cpu_concurrent_batches
    if wanted == "auto":
        threads = graphblas_threads()
        wanted = threads // 4 if threads >= 8 else 1
    if isinstance(wanted, bool) or not isinstance(wanted, (int, np.integer)) or wanted < 1:
        raise ValueError(f"cpu_concurrent_batches must be 'auto' or an int of at least 1, "
                         f"not {wanted!r}")
    return max(1, min(int(wanted), step, num_sources // 2))


