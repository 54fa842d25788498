"""The CPU engine's memory plan: how many sources a chunk holds, how many chunks run at once
and how many slots a batch of per-slot target weights holds.

A chunk in flight (turbobc/engines/cpu/sweep.py) holds its work arrays and its row of partial
sums: :data:`BYTES_PER_VERTEX` bytes per vertex (:data:`HEAP_BYTES_PER_VERTEX` more with edge
lengths, for Dijkstra's heap) and, with edge sums, 8 bytes per stored edge. A run holds the
graph as the core reads it and the sums once (:func:`fixed_bytes`). Chunks run
``CHUNKS_PER_THREAD`` per thread at once, fewer when the budget holds fewer: the budget is
``memory_limit``, or without one ``Tuning.cpu_memory_fraction`` of the available memory
(:func:`turbobc._memory.available_memory`).
"""

from __future__ import annotations

from turbobc._graph import Graph
from turbobc._memory import available_memory, format_bytes
from turbobc._tuning import current as current_tuning

__all__ = ["BYTES_PER_VERTEX", "HEAP_BYTES_PER_VERTEX", "SLOT_BYTES_PER_VERTEX",
           "CHUNKS_PER_THREAD", "chunk_sources", "fixed_bytes",
           "plan_chunks", "slot_capacity"]

BYTES_PER_VERTEX = 64
"""A chunk's work arrays per vertex: distance, σ̂, exponent, order and u (8 bytes each; the
parent count and q too for networkx's edge subset rule), and its row of partial sums."""

HEAP_BYTES_PER_VERTEX = 24
"""Dijkstra's heap: its vertices, their keys and each vertex's place in it."""

LANE_BYTES_PER_VERTEX = 3 * 64 * 8 + 64
"""A batch of 64 lanes (turbobc/engines/cpu/lanes.py) per vertex: σ and two work rows of 64
float64, the seen and pending bits, the level lists (about one entry per vertex and depth),
the queue of touched vertices and its row of partial sums."""

SLOT_BYTES_PER_VERTEX = 64
"""A slot of a per-slot batch: its walk kept (distance, σ̂, exponent, parents, order) and its
row of target weights, 8 bytes each, with room for the plan's temporaries."""

CHUNKS_PER_THREAD = 4
"""Chunks each thread gets per call: enough that one slow chunk does not idle the others."""

MAX_CHUNK_SOURCES = 16
"""The most sources of a chunk (:func:`chunk_sources`)."""


def chunk_sources(num_sources: int) -> int:
    """Sources per chunk: a 64th of them, 1 to :data:`MAX_CHUNK_SOURCES`. A function of the
    sources alone, so the sums (added chunk by chunk) do not depend on the threads."""
    return max(1, min(MAX_CHUNK_SOURCES, -(-num_sources // 64)))


def fixed_bytes(graph: Graph, edges: bool) -> int:
    """Bytes of a run that do not depend on the chunks: the int64 row pointers, the sums (and
    the edge sums), τ and ω."""
    return 8 * (graph.n + 1) + 24 * graph.n + (8 * graph.nnz if edges else 0)


def chunk_bytes(graph: Graph, chunk: int, edges: bool, lanes: bool = False) -> int:
    """Bytes of one chunk in flight (a batch of 64 lanes with ``lanes``)."""
    if lanes:
        return LANE_BYTES_PER_VERTEX * graph.n
    per_vertex = BYTES_PER_VERTEX + (HEAP_BYTES_PER_VERTEX if graph.weighted else 0)
    return per_vertex * graph.n + (8 * graph.nnz if edges else 0)


def _budget(memory_limit: int | None) -> tuple[int, int, str, str]:
    """(budget, ceiling, what limits it, how to fix it) for a run."""
    if memory_limit is not None:
        return (memory_limit, memory_limit, f"memory_limit is {format_bytes(memory_limit)}",
                "raise memory_limit")
    ceiling = available_memory()
    return (int(current_tuning().cpu_memory_fraction * ceiling), ceiling,
            f"only {format_bytes(ceiling)} of memory is available (MemAvailable, or the room "
            "under the cgroup limit)", "free memory, or pass a larger memory_limit to try "
            "anyway")


def plan_chunks(graph: Graph, chunk: int, threads: int, num_sources: int,
                memory_limit: int | None = None, edges: bool = False,
                lanes: bool = False) -> int:
    """Chunks per call: ``CHUNKS_PER_THREAD`` per thread, no more than the sources fill and
    the memory budget holds.

    Raises
    ------
    MemoryError
        Not even one chunk fits in ``memory_limit`` (or, without it, in the available
        memory); the message gives the estimate and the limit.
    """
    budget, ceiling, what, fix = _budget(memory_limit)
    fixed, one = fixed_bytes(graph, edges), chunk_bytes(graph, chunk, edges, lanes)
    if fixed + one > ceiling:
        raise MemoryError(
            f"the cpu engine needs about {format_bytes(fixed + one)} for one chunk of sources "
            f"(n={graph.n}, {graph.nnz} stored edges: {format_bytes(fixed)} for the graph and "
            f"the sums, {format_bytes(one)} per chunk in flight), but {what}; {fix}")
    fits = max(1, (budget - fixed) // one)
    wanted = CHUNKS_PER_THREAD * max(1, threads)
    return int(max(1, min(wanted, fits, -(-num_sources // chunk))))


def slot_capacity(graph: Graph, memory_limit: int | None = None, edges: bool = False) -> int:
    """Slots of one batch of per-slot target weights: what the budget holds at
    :data:`SLOT_BYTES_PER_VERTEX` per (slot, vertex), at most ``Tuning.cpu_batch_cap`` slots
    of n; with ``edges`` (edge BC) the edge sums and a row of them per chunk of slots (at
    most 64 chunks, :func:`chunk_sources`) come out of the budget first.

    Raises
    ------
    MemoryError
        Not even one slot fits.
    """
    budget, ceiling, what, fix = _budget(memory_limit)
    fixed = fixed_bytes(graph, edges) + (64 * 8 * graph.nnz if edges else 0)
    per_slot = SLOT_BYTES_PER_VERTEX * max(graph.n, 1)
    if fixed + per_slot > ceiling:
        raise MemoryError(
            f"the cpu engine needs about {format_bytes(fixed + per_slot)} for one slot of "
            f"chain folding (n={graph.n}: {SLOT_BYTES_PER_VERTEX} bytes per vertex and slot), "
            f"but {what}; {fix}")
    cap = current_tuning().cpu_batch_cap // max(graph.n, 1)
    return int(max(1, min(cap, (budget - fixed) // per_slot)))
