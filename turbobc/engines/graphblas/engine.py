"""The graphblas engine behind the protocol (turbobc/engines/protocol.py): :class:`GraphblasEngine`,
its :class:`GraphblasSweeper` (batches in turn, or several at once), and :func:`accumulate`."""

from __future__ import annotations

import collections
import contextvars
import gc
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from turbobc._graph import Graph
from turbobc._progress import is_shown, paced_batches
from turbobc._tuning import current as current_tuning
import turbobc.engines.graphblas.sweep as core
from turbobc.engines.graphblas.dag import ShortestPathDag
from turbobc.engines.graphblas.hops import HopLevels
from turbobc.engines.graphblas.memory import (batch_size_for, concurrent_batches,
                                              graphblas_threads)
from turbobc.engines.protocol import (Engine, Partial, Problem, SlotWeightsDeclined, Sweeper,
                                      slot_weights_reason)
from turbobc.engines.wide import WIDE_BATCH_ENTRIES, accumulate_wide

__all__ = ["accumulate", "GraphblasEngine", "GraphblasSweeper"]


def accumulate(graph: Graph, sources: np.ndarray, *, endpoints: bool, progress,
               memory_limit: int | None = None) -> np.ndarray:
    """Raw betweenness sums over ordered pairs from the given sources.

    Parameters
    ----------
    graph : turbobc._graph.Graph
        The validated adjacency pattern.
    sources : numpy.ndarray
        Distinct int64 vertex ids.
    endpoints : bool
        Add networkx's endpoint terms: +1 to each vertex reached from s (other
        than s) and (reached - 1) to s.
    progress : tqdm.tqdm
        Advanced by the number of sources of each finished batch (batches are paced
        to about half a second while the bar is shown, see ``_progress.paced_batches``).
    memory_limit : int, optional
        Bytes the run may use (:func:`batch_size_for`); default: sized from the memory
        available.

    Returns
    -------
    numpy.ndarray
        ``raw[v] = Σ_{s ≠ v} δ_s(v)`` (+ endpoint terms), not halved, not normalized.

    Raises
    ------
    MemoryError
        Not even one source fits (:func:`batch_size_for`); raised before any work.
    """
    with GraphblasSweeper(Problem(graph, endpoints=endpoints,
                                  memory_limit=memory_limit)) as sweeper:
        return sweeper.run(sources, progress).vertex


class GraphblasEngine(Engine):
    """The CPU engine: python-graphblas (SuiteSparse:GraphBLAS), many sources per batch."""

    name = "graphblas"

    def can_serve(self, problem: Problem) -> str | None:
        if problem.kernel != "auto":
            return (f"kernel={problem.kernel!r} names a GPU kernel; the graphblas engine "
                    "takes kernel='auto'")
        return slot_weights_reason(problem)

    def open(self, problem: Problem) -> "GraphblasSweeper":
        return GraphblasSweeper(problem)


class GraphblasSweeper(Sweeper):
    """The graph as GraphBLAS matrices, kept across :meth:`run` calls: A, and Aᵀ for directed
    graphs (:class:`HopLevels`), or the weighted matrices of :class:`ShortestPathDag`."""

    def __init__(self, problem: Problem):
        super().__init__(problem)
        graph = problem.graph
        self.walks = ShortestPathDag(graph) if graph.weighted else HopLevels(graph)

    def run(self, sources: np.ndarray, progress=None) -> Partial:
        """Raw sums of ``sources``, in batches sized by :func:`batch_size_for`; raises
        ``MemoryError`` before any work when not even one source fits."""
        problem = self.problem
        graph, endpoints = problem.graph, problem.endpoints
        tau, omega = problem.target_weight, problem.source_weight
        sources = np.asarray(sources, dtype=np.int64)
        raw = np.zeros(graph.n, dtype=np.float64)
        # per-edge sums (in the walks' own form) when the problem asks for them
        edge_sums = self.walks.new_edge_sums() if self.problem.edges else None
        edge_raw = np.zeros(graph.nnz, dtype=np.float64) if self.problem.edges else None
        if len(sources) == 0:
            return Partial(vertex=raw, sources=0, edge=edge_raw)
        began = time.perf_counter()
        slots = problem.slot_weights is not None
        # (per-slot weights: helper slots join the sources, so plan for as many as vertices)
        step = batch_size_for(graph.n, graph.n if slots else len(sources), m=graph.nnz,
                              directed=graph.directed, memory_limit=self.problem.memory_limit,
                              weighted=graph.weighted)
        workers = 1 if slots else concurrent_batches(len(sources), step)
        if slots:
            # τ per slot: three dense B x n arrays beside the levels, so half the batch
            wide, batches = [], self._run_slots(sources, max(1, step // 2), raw, edge_sums,
                                                progress)
        elif workers > 1:
            # as many batches at once: each within its share of the memory budget, and at
            # least two per worker while the sources allow
            step = max(1, min(step // workers, -(-len(sources) // (2 * workers))))
            wide, batches = self._run_concurrently(sources, step, workers, raw, edge_sums,
                                                   progress)
        else:
            wide, batches = self._run_in_turn(sources, step, raw, edge_sums, progress)
        if wide:
            # Sources whose levels span more than per-level scaling holds: per-vertex
            # exponents, in batches no larger than this engine's (fewer bytes per slot).
            pattern = graph.pattern
            accumulate_wide(np, pattern.indptr, pattern.indices, graph.n, np.array(wide), raw,
                            endpoints=endpoints, progress=progress, target_weight=tau,
                            source_weight=omega, edge_raw=edge_raw,
                            split_non_targets=self.problem.split_non_targets,
                            batch_entries=min(WIDE_BATCH_ENTRIES, step * graph.n),
                            **self.walks.wide_arguments())
        if edge_sums is not None:
            edge_raw += self.walks.edge_array(edge_sums)
        if slots:
            # what the folded sources of the run add in closed form: to the vertices (vertex
            # BC) or to the chains' edges (edge BC)
            raw += problem.slot_weights.credit
            if edge_raw is not None:
                edge_raw += problem.slot_weights.edge_credit()
        self.facts.update(engine="graphblas", batch=step, batches=batches,
                          concurrent_batches=workers, wide_sources=len(wide),
                          index_dtype=str(graph.pattern.indices.dtype),
                          sweep_seconds=time.perf_counter() - began)
        return Partial(vertex=raw, sources=len(sources), edge=edge_raw)

    def _run_slots(self, sources, step, raw, edge_sums, progress) -> int:
        """The batches of the problem's per-slot target weights over ``sources``, one after
        another, added into ``raw`` (and ``edge_sums``, edge BC); returns their number (the
        plan's closed-form credit is added by :meth:`run`)."""
        plan = self.problem.slot_weights
        try:
            # a shown bar moves at least eight times (not paced by time: the plan fixes
            # every batch's slots at once)
            paced = max(32, -(-len(sources) // 8)) if is_shown(progress) else step
            batches = plan.batches(min(step, paced), sources=sources)
        except SlotWeightsDeclined:
            if paced >= step:
                raise
            # a source's chains need more room than the pace
            batches = plan.batches(step, sources=sources)
        for index, slots in enumerate(batches):
            core.accumulate_slots(self.walks, self.problem, index, slots, raw, edge_sums)
            if len(slots) * self.problem.graph.n >= current_tuning().cpu_collect_above_slots:
                gc.collect()  # the batch's matrices (module docstring, "Memory")
            swept = int(np.count_nonzero(plan.own_weights(index)))
            if progress is not None and swept:
                progress.update(swept)
        return len(batches)

    def _run_in_turn(self, sources, step, raw, edge_sums, progress) -> tuple[list, int]:
        """One batch after another with every GraphBLAS thread, added into ``raw`` (and
        ``edge_sums``); returns the sources for the wide sweep and the number of batches."""
        wide, batches = [], 0
        collect_above = current_tuning().cpu_collect_above_slots
        # While a progress bar is shown, batches are paced to update it about twice a second.
        for start, stop in paced_batches(len(sources), step, progress):
            batch = sources[start:stop]
            wide_here = core.accumulate_batch(self.walks, self.problem, batch, raw, edge_sums)
            wide.extend(wide_here)
            batches += 1
            if len(batch) * self.problem.graph.n >= collect_above:
                # python-graphblas objects are freed by the cyclic collector only (Matrix.ss
                # refers back to its Matrix): collect the batch's matrices now, so the next
                # batch reuses their memory instead of stacking on it (docstring, "Memory").
                gc.collect()
            if progress is not None:
                progress.update(len(batch) - len(wide_here))
        return wide, batches

    def _run_concurrently(self, sources, step, workers, raw, edge_sums,
                          progress) -> tuple[list, int]:
        """``workers`` batches at once, each in a thread with its share of GraphBLAS's
        threads and its own sums, added into ``raw`` (and ``edge_sums``) in batch order, so
        the result does not depend on which thread finished first; returns as
        :meth:`_run_in_turn`."""
        from graphblas.core.ss.context import Context

        threads = max(1, graphblas_threads() // workers)
        walks, problem, n = self.walks, self.problem, self.problem.graph.n

        def sweep(batch):
            context = Context(nthreads=threads)  # this thread's calls only
            try:
                own = np.zeros(n, dtype=np.float64)
                own_edges = walks.new_edge_sums() if edge_sums is not None else None
                wide_here = core.accumulate_batch(walks, problem, batch, own, own_edges)
                return own, own_edges, wide_here
            finally:
                context.disengage()

        batches = [sources[start:start + step] for start in range(0, len(sources), step)]
        collect = workers * step * n >= current_tuning().cpu_collect_above_slots
        wide, pending, added = [], collections.deque(), 0

        def add_finished(keep: int) -> None:
            """Add the oldest batches' sums, in batch order, until ``keep`` are in flight."""
            nonlocal added
            while len(pending) > keep:
                batch, future = pending.popleft()
                own, own_edges, wide_here = future.result()
                np.add(raw, own, out=raw)
                if own_edges is not None:
                    walks.add_edge_sums(edge_sums, own_edges)
                wide.extend(wide_here)
                if progress is not None:
                    progress.update(len(batch) - len(wide_here))
                added += 1
                if collect and added % workers == 0:
                    gc.collect()  # the finished batches' matrices (docstring, "Memory")

        pool = ThreadPoolExecutor(workers)
        try:
            for batch in batches:
                # each task in a copy of this thread's context: the Tuning knobs in force here
                pending.append((batch, pool.submit(contextvars.copy_context().run, sweep,
                                                   batch)))
                add_finished(keep=workers)  # a bounded window: their sums fit the budget
            add_finished(keep=0)
        except BaseException:
            # a failing batch (or Ctrl-C) ends the run now: the batches not started are dropped
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return wide, len(batches)

    def close(self) -> None:
        self.walks = None
