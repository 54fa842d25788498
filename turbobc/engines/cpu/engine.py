"""The CPU engine behind the protocol (turbobc/engines/protocol.py): :class:`CpuEngine` and its
:class:`CpuSweeper`, which hands the compiled core (turbobc/engines/cpu/sweep.py and lanes.py,
through turbobc/_compiled.py: compiled ahead, or at first use) rounds of sources on the
threads (turbobc/engines/cpu/threads.py), adds their partial sums in order, advances the
progress bar, sends the sources whose counts spread too wide to the exponent-per-vertex sweep (turbobc/engines/wide.py) and serves
per-slot target weights (chain folding).
"""

from __future__ import annotations

import time

import numpy as np

from turbobc.engines.protocol import SlotCounts
from turbobc._graph import vanishing_length_error, in_index_type
from turbobc._progress import paced_batches
from turbobc._scaling import OVERFLOW_EXP, WIDE_EXP
from turbobc._tuning import current as current_tuning
from turbobc._compiled import entry
from turbobc._traverse import component_order_levels
from turbobc.engines.cpu.memory import chunk_sources, plan_chunks, slot_capacity
from turbobc.engines.cpu.statuses import LANES, VANISHED, WIDE
from turbobc.engines.cpu.threads import compute_threads, on_threads
from turbobc.engines.protocol import (Engine, Partial, Problem, SlotWeightsDeclined, Sweeper,
                                      slot_weights_reason)
from turbobc.engines.wide import WIDE_BATCH_ENTRIES, accumulate_wide

__all__ = ["CpuEngine", "CpuSweeper", "RESCALE_ABOVE_EXP", "WIDE_BELOW_EXP",
           "breadth_first_rank"]

RESCALE_ABOVE_EXP = OVERFLOW_EXP
"""A count finished above 2^RESCALE_ABOVE_EXP is scaled back (walks.py); read at each run, so
tests may lower it."""

WIDE_BELOW_EXP = WIDE_EXP
"""A count finished below 2^-WIDE_BELOW_EXP sends its source to the wide sweep."""

class CpuEngine(Engine):
    """The compiled CPU engine: per-source BFS or Dijkstra walks on threads over sources."""

    name = "cpu"

    def can_serve(self, problem: Problem) -> str | None:
        if problem.kernel != "auto":
            return (f"kernel={problem.kernel!r} names a GPU kernel; the cpu engine takes "
                    "kernel='auto'")
        return slot_weights_reason(problem)

    def open(self, problem: Problem) -> "CpuSweeper":
        return CpuSweeper(problem)


class CpuSweeper(Sweeper):
    """The graph as the compiled core reads it (int64 row pointers, the pattern's column
    indices: int32, or int64 past 2^31 - 64 or under ``Tuning.index_bits=64``, each a
    specialization of the compiled functions; the lengths), kept across :meth:`run`
    calls."""

    def __init__(self, problem: Problem):
        super().__init__(problem)
        graph = problem.graph
        self.indptr = np.ascontiguousarray(graph.pattern.indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(in_index_type(graph.pattern.indices, graph.n,
                                                        graph.nnz))
        self.lengths = (np.empty(0) if graph.lengths is None
                        else np.ascontiguousarray(graph.lengths, dtype=np.float64))
        self.tau = _weights(problem.target_weight)
        self.omega = _weights(problem.source_weight)
        self.rank = self.depth = None  # breadth-first order and its depth (lanes)

    def run(self, sources: np.ndarray, progress=None) -> Partial:
        """Raw sums of ``sources``: rounds of chunks of sources on every thread, then the
        wide sweep for the sources whose counts spread too wide; raises ``MemoryError``
        before any work when not even one chunk fits the memory budget."""
        problem, graph = self.problem, self.problem.graph
        sources = np.ascontiguousarray(sources, dtype=np.int64)
        raw = np.zeros(graph.n, dtype=np.float64)
        edge_raw = np.zeros(graph.nnz, dtype=np.float64) if problem.edges else None
        if len(sources) == 0:
            return Partial(vertex=raw, sources=0, edge=edge_raw)
        began = time.perf_counter()
        threads = compute_threads()
        if problem.slot_weights is not None:
            batches = self._run_slots(sources, raw, edge_raw, progress, threads)
            self.facts.update(engine="cpu", threads=threads, lanes=False, batches=batches,
                              wide_sources=0, index_dtype=str(self.indices.dtype),
                              sweep_seconds=time.perf_counter() - began)
            return Partial(vertex=raw, sources=len(sources), edge=edge_raw)
        lanes = self._lanes_serve(len(sources))
        if lanes:
            try:
                per_round = plan_chunks(graph, LANES, threads, len(sources),
                                        problem.memory_limit, lanes=True)
            except MemoryError:
                lanes = False  # a batch of lanes does not fit: sources alone, 25x less
        if lanes:
            # neighbours in one batch: a vertex lies at few distinct depths from its sources
            sources = sources[np.argsort(self._rank()[sources], kind="stable")]
            chunk = LANES
        else:
            chunk = chunk_sources(len(sources))
            per_round = plan_chunks(graph, chunk, threads, len(sources), problem.memory_limit,
                                    problem.edges)
        wide, rounds = [], 0
        for start, stop in paced_batches(len(sources), per_round * chunk, progress):
            part = sources[start:stop]
            if lanes:
                wide_here = self._sweep_lanes(part, raw)
            else:
                wide_here = self._sweep(part, chunk, raw, edge_raw)
            wide.extend(wide_here)
            rounds += 1
            if progress is not None:
                progress.update(len(part) - len(wide_here))
        if wide:
            self._sweep_wide(np.array(wide, dtype=np.int64), raw, edge_raw, progress,
                             per_round * chunk)
        self.facts.update(engine="cpu", threads=threads, lanes=lanes, chunk=chunk,
                          rounds=rounds, wide_sources=len(wide),
                          index_dtype=str(self.indices.dtype), sweep_seconds=time.perf_counter() - began)
        return Partial(vertex=raw, sources=len(sources), edge=edge_raw)

    def planned_batch(self, num_sources: int) -> int:
        """The sources one call sweeps at once (the Dask driver cuts chunks no smaller):
        with 64-lane batches, one batch per thread (a smaller call leaves threads idle: a
        Dask chunk of 64 sources ran on one of two threads, twice as long); else a round of
        chunks on every thread."""
        graph, problem, threads = self.problem.graph, self.problem, compute_threads()
        if self._lanes_serve(num_sources):
            try:
                per_round = plan_chunks(graph, LANES, threads, num_sources,
                                        problem.memory_limit, lanes=True)
                return LANES * min(max(1, threads), per_round)
            except MemoryError:
                pass  # sources alone, as run() does
        chunk = chunk_sources(num_sources)
        return chunk * plan_chunks(graph, chunk, threads, num_sources, problem.memory_limit,
                                   problem.edges)

    def _sweep(self, sources: np.ndarray, chunk: int, raw: np.ndarray,
               edge_raw: np.ndarray | None) -> list:
        """One round: ``sources`` in chunks on the threads, the partial sums added into
        ``raw`` (and ``edge_raw``) in chunk order; returns the sources for the wide sweep."""
        problem, graph = self.problem, self.problem.graph
        chunks = -(-len(sources) // chunk)
        bc_parts = np.zeros((chunks, graph.n), dtype=np.float64)
        edge_parts = np.zeros((chunks, graph.nnz if edge_raw is not None else 0))
        status = np.zeros(len(sources), dtype=np.int64)
        bad_edge = np.full(len(sources), -1, dtype=np.int64)
        sweep = entry("sweep_chunk", self.indices.dtype)

        def one_chunk(c):
            part = slice(c * chunk, (c + 1) * chunk)
            sweep(self.indptr, self.indices, self.lengths, sources[part], RESCALE_ABOVE_EXP,
                  WIDE_BELOW_EXP, self.tau, self.omega, problem.split_non_targets, problem.endpoints, bc_parts[c],
                  edge_parts[c], status[part], bad_edge[part])

        on_threads(one_chunk, chunks)
        self._check_vanished(sources, status, bad_edge)
        for c in range(chunks):  # in chunk order: the sums do not depend on the threads
            raw += bc_parts[c]
            if edge_raw is not None:
                edge_raw += edge_parts[c]
        return sources[status == WIDE].tolist()

    def _lanes_serve(self, num_sources: int) -> bool:
        """Whether the 64-lane batches (turbobc/engines/cpu/lanes.py) sweep this problem:
        unweighted vertex sums (without networkx's edge subset rule), on a shallow graph, a
        run of at least ``Tuning.cpu_lanes_min_sources`` sources (``Tuning.cpu_lanes``)."""
        problem, knobs = self.problem, current_tuning()
        choice = knobs.cpu_lanes
        if choice not in (True, False, "auto"):
            raise ValueError(f"Tuning.cpu_lanes must be True, False or 'auto'; got {choice!r}")
        if not choice or problem.weighted or problem.edges or problem.split_non_targets:
            return False
        return choice is True or (num_sources >= knobs.cpu_lanes_min_sources
                                  and self._shallow())

    def _shallow(self) -> bool:
        """Whether the graph is shallow enough for lanes: the breadth-first order's depth
        is at most ``Tuning.cpu_lanes_max_depth``."""
        self._rank()
        return self.depth <= current_tuning().cpu_lanes_max_depth

    def _rank(self) -> np.ndarray:
        """Each vertex's place in a breadth-first order (computed once)."""
        if self.rank is None:
            self.rank, self.depth = breadth_first_rank(self.indptr, self.indices)
        return self.rank

    def _sweep_lanes(self, sources: np.ndarray, raw: np.ndarray) -> list:
        """One round of 64-source batches, added into ``raw`` in batch order; a source whose
        counts grew past one scale is swept alone (:meth:`_sweep`). Returns the sources for
        the wide sweep."""
        problem, graph = self.problem, self.problem.graph
        batches = -(-len(sources) // LANES)
        bc_parts = np.zeros((batches, graph.n), dtype=np.float64)
        declined = np.zeros(len(sources), dtype=np.bool_)
        sweep = entry("sweep_lane_batch", self.indices.dtype)

        def one_batch(b):
            part = slice(b * LANES, (b + 1) * LANES)
            sweep(self.indptr, self.indices, sources[part], RESCALE_ABOVE_EXP, self.tau,
                  self.omega, problem.endpoints, bc_parts[b], declined[part])

        on_threads(one_batch, batches)
        for b in range(batches):
            raw += bc_parts[b]
        if not declined.any():
            return []
        alone = sources[declined]
        return self._sweep(alone, chunk_sources(len(alone)), raw, None)

    def _check_vanished(self, sources, status, bad_edge) -> None:
        """Raise for the first source whose walk met a length that vanished in a sum."""
        hit = np.flatnonzero(status == VANISHED)
        if hit.size == 0:
            return
        e = int(bad_edge[hit[0]])
        tail = int(np.searchsorted(self.indptr, e, side="right") - 1)
        at = self._distances(sources[hit[:1]])[0, tail]
        raise vanishing_length_error(tail, int(self.indices[e]), float(self.lengths[e]),
                                     float(at))

    def _sweep_wide(self, wide: np.ndarray, raw, edge_raw, progress, step: int) -> None:
        """Sources whose counts spread more than one scale holds: per-vertex exponents
        (turbobc/engines/wide.py), in batches of at most ``step`` sources."""
        problem, graph = self.problem, self.problem.graph
        weighted = graph.lengths is not None

        accumulate_wide(np, self.indptr, self.indices, graph.n, wide, raw,
                        endpoints=problem.endpoints, progress=progress,
                        target_weight=problem.target_weight,
                        source_weight=problem.source_weight, edge_raw=edge_raw,
                        split_non_targets=problem.split_non_targets,
                        batch_entries=min(WIDE_BATCH_ENTRIES, max(1, step) * graph.n),
                        lengths=graph.lengths if weighted else None,
                        distances=self._distances if weighted else None)

    def _distances(self, sources) -> np.ndarray:
        """B x n float64: the shortest distances from each of ``sources`` (inf where not
        reached), on the threads."""
        sources = np.ascontiguousarray(sources, dtype=np.int64)
        out = np.empty((sources.size, self.problem.graph.n))
        row = entry("distances_row", self.indices.dtype)
        on_threads(lambda b: row(self.indptr, self.indices, self.lengths, int(sources[b]),
                                 RESCALE_ABOVE_EXP, out[b]), sources.size)
        return out

    def _run_slots(self, sources: np.ndarray, raw: np.ndarray, edge_raw: np.ndarray | None,
                   progress, threads: int) -> int:
        """The batches of the problem's per-slot target weights (``Problem.slot_weights``)
        over ``sources``, one after another, adding into ``raw`` (and ``edge_raw``, edge BC),
        and the closed-form credit of the folded sources they carry; returns their number."""
        problem, graph = self.problem, self.problem.graph
        plan = problem.slot_weights
        batches = plan.batches(slot_capacity(graph, problem.memory_limit, problem.edges),
                               sources=sources)
        for index, slots in enumerate(batches):
            walked = _SlotWalks(self, slots)
            tau = np.ones(graph.n) if self.tau.size == 0 else self.tau
            walked.tau = np.outer(plan.own_weights(index), tau)
            add_credits = plan.add_target_weights(index, walked)
            walked.accumulate(raw, edge_raw, chunk_sources(len(slots)))
            add_credits()
            swept = int(np.count_nonzero(plan.own_weights(index)))
            if progress is not None and swept:
                progress.update(swept)
        # what the folded sources add in closed form (vertex BC), or to the chains' edges
        raw += plan.credit
        if edge_raw is not None:
            edge_raw += plan.edge_credit()
        return len(batches)

    def close(self) -> None:
        self.indptr = self.indices = self.lengths = None


class _SlotWalks(SlotCounts):
    """One batch's slots walked and kept (B x n rows), shown to the chain plan
    (:class:`turbobc.engines.protocol.SlotCounts`) between the walks and the accumulate step: hop
    levels, or for a weighted graph the distances, and the counts σ̂ · 2^E."""

    def __init__(self, sweeper: CpuSweeper, slots: np.ndarray):
        self.sweeper = sweeper
        self.slots = np.ascontiguousarray(slots, dtype=np.int64)
        B, n = len(slots), sweeper.problem.graph.n
        self.n = n
        self.weighted = sweeper.lengths.size > 0
        self.dist = np.full((B, n), np.inf)
        self.sigma = np.zeros((B, n))
        self.expo = np.zeros((B, n), dtype=np.int64)
        self.order = np.empty((B, n), dtype=np.int64)
        self.reached = np.zeros(B, dtype=np.int64)
        self.scaled = np.zeros(B, dtype=np.bool_)
        status = np.zeros(B, dtype=np.int64)
        bad_edge = np.full(B, -1, dtype=np.int64)
        walk = entry("walk_slot", sweeper.indices.dtype)
        on_threads(lambda b: walk(sweeper.indptr, sweeper.indices, sweeper.lengths,
                                  self.slots, b, RESCALE_ABOVE_EXP, WIDE_BELOW_EXP, self.dist,
                                  self.sigma, self.expo, self.order, self.reached, status,
                                  self.scaled, bad_edge), B)
        sweeper._check_vanished(self.slots, status, bad_edge)
        if (status == WIDE).any():
            raise SlotWeightsDeclined("path counts spread wider than one scale holds")
        self.tau = None

    def levels(self, lanes):
        """Hop levels (int64), or for a weighted graph the distances; -1 where not reached."""
        dist = self.dist[lanes]
        if self.weighted:
            return np.where(np.isinf(dist), -1.0, dist)
        return np.where(np.isinf(dist), -1, dist).astype(np.int64)

    def counts(self, lanes):
        return self.sigma[lanes], (self.expo[lanes] if self.scaled.any() else None)

    def at(self, lanes, vertices):
        dist = self.dist[lanes, vertices]
        level = np.where(np.isinf(dist), -1.0, dist)
        if not self.weighted:
            level = level.astype(np.int64)
        sigma = np.ldexp(self.sigma[lanes, vertices],
                         self.expo[lanes, vertices].astype(np.int32))
        return level, sigma

    def accumulate(self, raw: np.ndarray, edge_raw: np.ndarray | None, chunk: int) -> None:
        """The accumulate step of every slot with its row of :attr:`tau`, added into
        ``raw`` (and its edge terms into ``edge_raw`` when given), chunk by chunk in order."""
        s = self.sweeper
        chunks = -(-len(self.slots) // chunk)
        bc_parts = np.zeros((chunks, self.n))
        edge_parts = np.zeros((chunks, edge_raw.size if edge_raw is not None else 0))
        tau = np.ascontiguousarray(self.tau, dtype=np.float64)
        accumulate = entry("accumulate_slots", s.indices.dtype)
        on_threads(lambda c: accumulate(
            s.indptr, s.indices, s.lengths, self.slots, self.reached, self.order, self.dist,
            self.sigma, self.expo, self.scaled, tau, c * chunk,
            min((c + 1) * chunk, len(self.slots)), bc_parts[c], edge_parts[c]), chunks)
        for c in range(chunks):
            raw += bc_parts[c]
            if edge_raw is not None:
                edge_raw += edge_parts[c]


def breadth_first_rank(indptr, indices):
    """Each vertex's place in a breadth-first order of the whole graph (every component from
    its least vertex; sources sorted by it lie near their neighbours in the order), and the
    order's largest depth (a lower bound on the deepest BFS of any source):
    turbobc/_traverse.py's compiled search."""
    order, depth = component_order_levels(indptr, indices)
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank, int(depth.max(initial=0))


def _weights(values) -> np.ndarray:
    """τ or ω as the core takes them: float64, or empty for all ones."""
    if values is None:
        return np.empty(0, dtype=np.float64)
    return np.ascontiguousarray(values, dtype=np.float64)
