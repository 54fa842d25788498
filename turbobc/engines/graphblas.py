"""The CPU engine and the reference: Algorithm 1 in python-graphblas, many sources at once.

A batch of B sources is processed together; every per-source vector of the
paper becomes a B x n matrix with one row per source (LAGraph's layout,
docs/algorithm.md, "Many sources per sweep"). In row form the paper's products read

    paper (one source, column vectors)      here (B sources, row vectors)
    f<¬σ> = Aᵀ f                            F<¬Σ> = F A
    t = A u                                 T<S_{d-1}> = U Aᵀ

Both products use the plus-first semiring: the sum over neighbours of the
left operand's values; the values of A never matter, only its pattern.

Weighted BC (``Graph.lengths``) keeps the same forward and backward loops (:func:`_forward`,
:func:`_backward`) and swaps the walk that supplies the shortest-path DAG: :class:`HopWalk`
(BFS levels) or :class:`DagWalk` (distances by min-plus Bellman–Ford, the DAG edges
d(v) + len == d(w) of each source, swept by their hop layers; docs/algorithm.md, "Weighted BC").

Path counts are kept overflow-safe per level (see :func:`_keep_in_range`):
each level's counts σ_d are stored as σ̂_d = σ_d / 2^E_d with an integer
exponent E_d per source, so the algorithm stays correct far past 1e308 while
graphs whose counts fit in float64 never scale at all. A source one of whose
levels spreads wider than :data:`turbobc.engines.wide.WIDE_RANGE` (the small counts
would underflow) is taken out of its batch and swept by :mod:`turbobc.engines.wide`,
which keeps an exponent per (source, vertex).

Memory. A batch of B sources holds its levels (16 bytes per stored count; a level denser than
:data:`PULL_ABOVE_DENSITY` is a bitmap, 9 bytes per slot), the visited bitmap and the
temporaries of one level: up to :data:`BYTES_PER_SLOT` bytes per (source, vertex) slot.
:func:`batch_size_for` plans each batch for that many bytes within ``memory_limit``, or within
``Tuning.cpu_memory_fraction`` of the memory available (the lower of MemAvailable and the room under
the cgroup limit, :func:`turbobc._memory.available_memory`), and caps it at
``Tuning.cpu_batch_cap`` slots, past which batches sweep hardly faster but peak higher. The
resident set grew with every batch (email-Enron, 914 sources a batch: 2.2, 4.2, 5.8 GiB after
the first three, a 12.8 GiB peak over the whole run; the issue saw 15 GB) not from allocator
fragmentation but because every python-graphblas Matrix is in a reference cycle
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
live data.
"""

from __future__ import annotations

import collections
import contextvars
import gc
import time
from concurrent.futures import ThreadPoolExecutor

import graphblas
import numpy as np
from graphblas import Matrix, Vector, binary, dtypes, monoid, semiring, unary

from spmv._ctl import OVERFLOW_EXP

from turbobc._graph import Graph, entry_positions
from turbobc.engines.protocol import SlotCounts
from turbobc.engines.protocol import (Engine, Partial, Problem, SlotWeightsDeclined, Sweeper,
                                      slot_weights_reason)
from turbobc._memory import available_memory, format_bytes
from turbobc._progress import is_shown, paced_batches
from turbobc._tuning import current as current_tuning
from turbobc.engines.wide import WIDE_BATCH_ENTRIES, WIDE_RANGE, accumulate_wide

__all__ = ["accumulate", "batch_size_for", "GraphblasEngine", "GraphblasSweeper"]

# A level whose largest count exceeds 2**RESCALE_ABOVE_EXP is scaled back to [0.5, 1): the
# kernels' limit too (spmv/kernels/ctl.cuh, mirrored in spmv/_ctl.py).
RESCALE_ABOVE_EXP = OVERFLOW_EXP

BYTES_PER_SLOT = 160
"""Bytes one (source, vertex) slot of a batch may take at the peak of its sweep: the levels
(16 bytes per stored count, 9 per slot for a level dense enough to be a bitmap), the visited
bitmap and the temporaries of one level. Measured peaks (one batch of 400 random sources,
resident set above the start): p2p-Gnutella31 10.5, cit-HepPh 22.1, road-luxembourg 23.3,
delaunay_n16 50.4, as-caida 64.5, ca-GrQc 65.8, email-Enron 68, ego-Facebook 73.3, and 117
and 153 on layered graphs built so that every level is just dense enough to be a bitmap."""

# A frontier denser than this (entries / (B n)) is pulled rather than pushed: it is handed to
# the product as a bitmap, which lets SuiteSparse use its dot-product method (LAGraph's switch).
# Forward sweeps alone, B = n, two cores, seconds at 0.05 / 0.2 / never a bitmap: ca-GrQc core
# 1.50 / 1.15 / 0.95, power core 1.60 / 1.15 / 1.15, ego-Facebook 1.22 / 1.17 / 1.41,
# wiki-Vote as undirected core 1.76 / 1.81 / 2.42, as20000102 core 0.71 / 0.67 / 0.83: deep
# graphs' mid-size frontiers were pulled too early (one-off script, not a record).
PULL_ABOVE_DENSITY = 0.2


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
            wide, batches = [], self._run_slots(max(1, step // 2), raw, progress)
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
        self.facts.update(engine="graphblas", batch=step, batches=batches,
                          concurrent_batches=workers, wide_sources=len(wide),
                          sweep_seconds=time.perf_counter() - began)
        return Partial(vertex=raw, sources=len(sources), edge=edge_raw)

    def _run_slots(self, step, raw, progress) -> int:
        """The batches of the problem's per-slot target weights, one after another; returns
        their number."""
        plan = self.problem.slot_weights
        try:
            # a shown bar moves at least eight times (not paced by time: the plan fixes
            # every batch's slots at once)
            paced = max(32, -(-plan.sources.size // 8)) if is_shown(progress) else step
            batches = plan.batches(min(step, paced))
        except SlotWeightsDeclined:
            if paced >= step:
                raise
            batches = plan.batches(step)  # a source's chains need more room than the pace
        for index, slots in enumerate(batches):
            _accumulate_slots(self.walks, self.problem, index, slots, raw)
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
            wide_here = _accumulate_batch(self.walks, self.problem, batch, raw, edge_sums)
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
                wide_here = _accumulate_batch(walks, problem, batch, own, own_edges)
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


def _accumulate_batch(walks, problem: Problem, batch: np.ndarray, raw: np.ndarray,
                      edge_sums=None) -> list:
    """Forward and backward sweep for one batch of sources; adds into ``raw``.

    ``walks`` is the graph's shortest-path structure (:class:`HopLevels` or
    :class:`ShortestPathDag`); the problem's target and source weights τ and ω weigh the
    accumulate step (spmv/kernels/accumulate.cuh; None: all ones); ``edge_sums`` (from
    ``walks.new_edge_sums()``, or None) also gets each stored edge's share of the dependencies
    (edge BC). Returns the sources whose counts left the range of per-level scaling (nothing
    of them was added: the batch is swept again without them); they need
    :mod:`turbobc.engines.wide`.
    """
    walk = walks.start(batch)
    levels, shifts, too_wide = _forward(walk, batch)
    if too_wide.any():
        del walk, levels, shifts
        if not too_wide.all():
            _accumulate_batch(walks, problem, batch[~too_wide], raw, edge_sums)
        return batch[too_wide].tolist()
    omega = problem.source_weight
    weights = None if omega is None else np.asarray(omega, dtype=np.float64)[batch]
    _backward(walk, levels, shifts, raw, problem.target_weight, weights, edge_sums,
              problem.split_non_targets)
    if problem.endpoints:
        _add_endpoint_terms(walk.reached(), batch, raw, weights)
    return []


def _accumulate_slots(walks, problem: Problem, index: int, slots: np.ndarray,
                      raw: np.ndarray) -> None:
    """:func:`_accumulate_batch` for batch ``index`` of the problem's per-slot target weights
    (``Problem.slot_weights``): τ of slot b is own(b) · target_weight plus what the plan adds
    once the forward sweep is done; ω is folded into τ."""
    plan = problem.slot_weights
    walk = walks.start(slots)
    levels, shifts, too_wide = _forward(walk, slots)
    if too_wide.any():
        raise SlotWeightsDeclined("path counts spread wider than per-level scaling holds")
    # a weighted walk's chains are measured in lengths: its distances, not its hop layers
    distances = walk.D.to_dense(fill_value=-1.0) if problem.weighted else None
    counts = _LevelCounts(levels, shifts, walk.n, distances)
    tau = problem.target_weight
    base = np.ones(walk.n) if tau is None else np.asarray(tau, dtype=np.float64)
    counts.tau = np.outer(plan.own_weights(index), base)
    add_credits = plan.add_target_weights(index, counts)
    _backward(walk, levels, shifts, raw, slot_tau=counts.tau)
    add_credits()


class _LevelCounts(SlotCounts):
    """A batch's levels and counts as dense B x n arrays, for per-slot target weights; for a
    weighted batch ``distances`` (B x n, -1 where not reached) stand for the levels."""

    def __init__(self, levels: list, shifts: list, n: int,
                 distances: np.ndarray | None = None):
        B = levels[0].nrows
        self.n = n
        self.level = np.full((B, n), -1, dtype=np.int64)
        self.sigma = np.zeros((B, n), dtype=np.float64)
        scaled = any(s is not None for s in shifts)
        self.exponent = np.zeros((B, n), dtype=np.int64) if scaled else None
        exponent = np.zeros(B, dtype=np.int64)  # Σ_{d' ≤ d} shift_d' of each row
        for d, level in enumerate(levels):
            rows, cols, vals = level.to_coo()
            self.level[rows, cols] = d
            self.sigma[rows, cols] = vals
            if scaled:
                if shifts[d] is not None:
                    exponent += shifts[d]
                self.exponent[rows, cols] = exponent[rows]
        if distances is not None:
            self.level = distances
        self.tau = None

    def levels(self, lanes):
        return self.level[lanes]

    def counts(self, lanes):
        return self.sigma[lanes], None if self.exponent is None else self.exponent[lanes]

    def add_target_weights(self, lanes, values) -> None:
        np.add.at(self.tau, lanes, values)

    def add_target_entries(self, lanes, vertices, values) -> None:
        np.add.at(self.tau, (lanes, vertices), values)

    def at(self, lanes, vertices):
        sigma = self.sigma[lanes, vertices]
        if self.exponent is not None:
            sigma = np.ldexp(sigma, self.exponent[lanes, vertices].astype(np.int32))
        return self.level[lanes, vertices], sigma


def _forward(walk, batch: np.ndarray):
    """Multi-source path counting, level by level of the shortest-path DAG.

    Level d holds the vertices whose longest DAG path from the source has d edges: for
    unweighted BC the BFS levels, for weighted BC the DAG's hop layers (Kahn's order). Returns
    the per-level count matrices ``levels[d]`` (B x n, pattern = the vertices of level d of
    each source, values σ̂_d), the per-level exponent shifts (None where the level was not
    scaled) and a boolean per source: its counts spread too wide.
    """
    B, n = len(batch), walk.n
    rows = np.arange(B, dtype=np.int64)
    # f = e_s, σ = e_s, S(s) = 0: depth 0 is the source itself with one path.
    frontier = Matrix.from_coo(rows, batch, 1.0, nrows=B, ncols=n)
    levels, shifts = [frontier], [None]
    too_wide = np.zeros(B, dtype=bool)
    while True:
        nxt = walk.next_level(frontier)
        if nxt.nvals == 0:
            break
        shift = _keep_in_range(nxt, too_wide)
        if shift is not None:
            walk.level_scaled(np.ldexp(1.0, -shift))
        levels.append(nxt)
        shifts.append(shift)
        frontier = nxt
    return levels, shifts, too_wide


def _backward(walk, levels: list, shifts: list, raw: np.ndarray,
              tau: np.ndarray | None = None, row_weights: np.ndarray | None = None,
              edge_sums=None, split_non_targets: bool = False,
              slot_tau: np.ndarray | None = None) -> None:
    """Brandes' dependency accumulation from the deepest level up to depth 1; row b's δ
    counts ``row_weights[b]`` times (the weight of its source; None: once). With
    ``edge_sums``, every edge v -> w of the shortest-path DAG also gets its term
    σ(v)/σ(w) · (τ(w) + δ(w)), down to the source's own edges (level 1).

    ``walk`` hands each finished level's u to the parents (:meth:`HopWalk.children_sums`
    and :meth:`DagWalk.children_sums`): from the next level only for BFS levels, from every
    deeper level for a weighted DAG.

    ``split_non_targets`` (τ in {0, 1}, with ``edge_sums``) is networkx's edge subset BC: a
    target w hands each parent σ(v)/σ(w) · (1 + δ(w)), a non-target δ(w) / |P(w)|, an equal
    share whatever the path counts. ``slot_tau`` (B x n) is a target weight per slot instead
    of ``tau``."""
    delta = None  # δ of the child level d, pattern within S_d
    last = 1 if edge_sums is not None else 2  # level 1 only feeds the source (and its edges)
    for d in range(len(levels) - 1, last - 1, -1):
        sigma_child, sigma_parent = levels[d], levels[d - 1]
        # u<S == d> = (τ + δ) ./ σ   (the accumulate step: spmv/kernels/accumulate.cuh)
        u = _target_weights(sigma_child, tau, slot_tau)
        share = None  # split_non_targets: q = (1 − τ) δ ./ |P|, each parent's equal share
        if delta is not None and split_non_targets:
            # u = τ (1 + δ) ./ σ ; q<S == d> = (1 − τ) δ ./ |P|  (|P|: the DAG parents)
            parents = walk.parent_counts(sigma_child, sigma_parent)
            rest = sigma_child.apply(unary.one).new()
            rest(binary.minus) << u                     # 1 − τ on the level
            share = rest.ewise_mult(delta, binary.times).new()
            share << share.ewise_mult(parents, binary.truediv)
            u(binary.plus) << u.ewise_mult(delta, binary.times)
        elif delta is not None:
            u(binary.plus) << delta
        u << u.ewise_mult(sigma_child, binary.truediv)
        walk.finish_level(u, share)
        if shifts[d] is not None:
            # σ_{d-1} / σ_d = σ̂_{d-1} / σ̂_d · 2^-shift_d
            walk.scale_finished(np.ldexp(1.0, -shifts[d]))
        if edge_sums is not None:
            # each DAG edge v -> w out of level d − 1: σ(v)/σ(w) (τ(w) + δ(w)) = σ̂(v) u(w)
            walk.add_edge_terms(edge_sums, sigma_parent, row_weights)
        if d == 1:
            break  # the source's δ is not needed
        # t<S == d-1> : u summed over the children w of each parent v
        t = walk.children_sums(sigma_parent)
        # δ<S == d-1> = t .* σ   (each vertex's δ is complete once its children are done)
        delta = t.ewise_mult(sigma_parent, binary.times).new()
        if share is not None:  # δ<S == d-1> += the equal shares of the non-target children
            delta(binary.plus) << walk.children_shares(sigma_parent)
        # bc += ω δ ; sources sit at depth 0 and are never reached by this loop.
        _add_columns(delta, raw, row_weights)


class HopLevels:
    """Unweighted BC's shortest paths: BFS levels, the DAG test level(w) = level(v) + 1.

    Holds A, and Aᵀ for directed graphs (the same matrix for undirected ones), across
    batches; :meth:`start` opens a :class:`HopWalk` on a batch of sources. Edge sums are an
    n x n matrix within A's pattern (``E<A> += ...`` per level), made into an array aligned
    with the pattern at the end.
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        self.A = Matrix.from_csr(graph.pattern.indptr, graph.pattern.indices, True,
                                 nrows=graph.n, ncols=graph.n)
        # The backward product needs Aᵀ: the same matrix for undirected graphs, else built once.
        self.AT = self.A if not graph.directed else self.A.T.new()
        # finished now (from_csr leaves rows unsorted, sorted by the first product that reads
        # them): batches swept at once then only read them (cpu_concurrent_batches)
        for matrix in (self.A, self.AT):
            matrix.wait()

    def start(self, batch: np.ndarray) -> "HopWalk":
        return HopWalk(self, batch)

    def new_edge_sums(self) -> Matrix:
        """E, n x n: the per-edge sums, pattern within A's."""
        return Matrix(dtypes.FP64, self.graph.n, self.graph.n)

    def add_edge_sums(self, total: Matrix, part: Matrix) -> None:
        """total += part (the edge sums of another batch)."""
        total(binary.plus) << part

    def edge_array(self, edge_sums: Matrix) -> np.ndarray:
        return _aligned_with_pattern(edge_sums, self.graph.pattern)

    def wide_arguments(self) -> dict:
        """What :func:`turbobc.engines.wide.accumulate_wide` needs besides the pattern."""
        return {}


class HopWalk:
    """One batch's BFS (LAGraph's batched BC): f<¬σ> = Aᵀ f forward, t = A u backward."""

    def __init__(self, hops: HopLevels, batch: np.ndarray):
        self.A, self.AT = hops.A, hops.AT
        self.n = hops.graph.n
        B = len(batch)
        self.visited = Matrix.from_coo(np.arange(B, dtype=np.int64), batch, True, nrows=B,
                                       ncols=self.n)
        self.visited.ss.config["sparsity_control"] = {"bitmap"}  # a dense mask, tested everywhere
        self.u = self.share = None  # of the level last finished by the backward sweep

    def next_level(self, frontier: Matrix) -> Matrix:
        """The counts of the next BFS level."""
        B, n = frontier.nrows, self.n
        if frontier.nvals > PULL_ABOVE_DENSITY * B * n:
            frontier.ss.config["sparsity_control"] = {"bitmap"}
        # f<¬σ> = Aᵀ f : paths into the undiscovered vertices, summed over the frontier.
        nxt = Matrix(dtypes.FP64, B, n)
        nxt(~self.visited.S, replace=True) << frontier.mxm(self.A, semiring.plus_first)
        # S<f> = d : the level joins the discovered set (its counts stay in the levels).
        self.visited(nxt.S) << True
        return nxt

    def level_scaled(self, factors: np.ndarray) -> None:
        """Nothing waits in another scale: a BFS level is complete when it is found."""

    def reached(self) -> Matrix:
        """pattern(σ): every vertex reached from each source."""
        return self.visited

    def parent_counts(self, sigma_child: Matrix, sigma_parent: Matrix) -> Matrix:
        """|P(w)| of every w at level d: its neighbours at level d − 1."""
        parents = Matrix(dtypes.FP64, sigma_child.nrows, sigma_child.ncols)
        # |P|<S == d> = pattern(σ_{d−1}) A
        parents(sigma_child.S) << sigma_parent.apply(unary.one).mxm(self.A, semiring.plus_times)
        return parents

    def finish_level(self, u: Matrix, share: Matrix | None) -> None:
        """Level d's u (and equal shares q) are all its parents need."""
        self.u, self.share = u, share

    def scale_finished(self, factors: np.ndarray) -> None:
        """u into the scale of the parent level: row b times ``factors[b]``."""
        self.u << _row_scaling(factors).mxm(self.u, semiring.any_times)

    def add_edge_terms(self, edge_sums: Matrix, sigma_parent: Matrix,
                       row_weights: np.ndarray | None) -> None:
        """E<A> += ω-weighted σ̂_{d-1}ᵀ u : the term σ(v)/σ(w) (τ(w) + δ(w)) of each DAG
        edge v -> w (v at d − 1, w at d), summed over the batch's sources.

        A dot product over the batch per stored edge (``axb_method="dot"``): the sources
        with v on level d − 1 against those with w on level d, so each edge's lists over
        all levels add up to the batch twice. SuiteSparse's own choice, a masked saxpy, costs
        |level d − 1| x |level d| per source and level (ego-Facebook, 1,010 sources: 6.5 s
        for edge BC against 0.65 s for vertex BC; with dot products 0.97 s)."""
        parent = sigma_parent if row_weights is None else _row_scaling(row_weights).mxm(
            sigma_parent, semiring.any_times).new()
        edge_sums(accum=binary.plus, mask=self.A.S, axb_method="dot") << parent.T.mxm(
            self.u, semiring.plus_times)
        if self.share is not None:  # E<A> += ω-weighted pattern(σ̂_{d-1})ᵀ q
            ones = sigma_parent.apply(unary.one).new()
            if row_weights is not None:
                ones = _row_scaling(row_weights).mxm(ones, semiring.any_times).new()
            edge_sums(accum=binary.plus, mask=self.A.S, axb_method="dot") << ones.T.mxm(
                self.share, semiring.plus_times)

    def children_sums(self, sigma_parent: Matrix) -> Matrix:
        """t<S == d-1> = A u : sum over the children w of each parent v."""
        return self._pulled(self.u, sigma_parent)

    def children_shares(self, sigma_parent: Matrix) -> Matrix:
        """A q : the equal shares of each parent's non-target children."""
        return self._pulled(self.share, sigma_parent)

    def _pulled(self, values: Matrix, sigma_parent: Matrix) -> Matrix:
        t = Matrix(dtypes.FP64, values.nrows, values.ncols)
        t(sigma_parent.S, replace=True) << values.mxm(self.AT, semiring.plus_first)
        return t


class ShortestPathDag:
    """Weighted BC's shortest paths: the DAG test d(v) + len(v, w) == d(w), per source.

    Holds, across batches, the graph as incidence matrices over its m stored edges, e
    numbered in ``pattern.indices`` order (docs/algorithm.md, "Weighted BC"):

    - ``A_len`` (n x n): A with the lengths, for the distances (min-plus);
    - ``Src`` (n x m): ``Src[v, e] = 1`` for e leaving v, and ``SrcT`` (m x n);
    - ``Dst`` (m x n): ``Dst[e, w] = 1`` for e entering w (its transpose is read through the
      descriptor: ``U Dstᵀ`` masked by a few edges is then a dot product per edge);

    and the tail, head and length of every edge as NumPy arrays (the DAG test). :meth:`start`
    opens a :class:`DagWalk` on a batch. Edge sums are already aligned with the pattern: a
    float64 array of m.
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        n, m = graph.n, graph.nnz
        indptr, indices = graph.pattern.indptr, graph.pattern.indices
        self.tails = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
        self.heads = indices.astype(np.int64)
        self.lengths = graph.lengths
        edges = np.arange(m, dtype=np.int64)
        one_per_row = np.arange(m + 1, dtype=np.int64)
        self.A_len = Matrix.from_csr(indptr, indices, self.lengths, nrows=n, ncols=n)
        self.Src = Matrix.from_csr(indptr, edges, 1.0, nrows=n, ncols=m)
        self.SrcT = Matrix.from_csr(one_per_row, self.tails, 1.0, nrows=m, ncols=n)
        self.Dst = Matrix.from_csr(one_per_row, self.heads, 1.0, nrows=m, ncols=n)
        for matrix in (self.A_len, self.Src, self.SrcT, self.Dst):  # finished: HopLevels
            matrix.wait()
        # A length below half an ulp of a distance vanishes in the sum d(v) + len: then
        # d(v) == d(w) on a DAG edge, and networkx's Dijkstra counts in the order it pops
        # ties. Every distance is below (n − 1) max len, so a spread of lengths under 2^52 / n
        # rules that out; otherwise each batch checks (_dag_edges).
        self.lengths_may_vanish = bool(m) and bool(
            self.lengths.min() * 2.0**52 <= n * self.lengths.max())

    def start(self, batch: np.ndarray) -> "DagWalk":
        return DagWalk(self, batch)

    def new_edge_sums(self) -> np.ndarray:
        return np.zeros(self.graph.nnz, dtype=np.float64)

    def add_edge_sums(self, total: np.ndarray, part: np.ndarray) -> None:
        """total += part (the edge sums of another batch)."""
        total += part

    def edge_array(self, edge_sums: np.ndarray) -> np.ndarray:
        return edge_sums

    def distances(self, batch: np.ndarray) -> np.ndarray:
        """Dense B x n distances from the sources of ``batch`` (inf: not reached)."""
        return _distances(self.A_len, batch).to_dense(fill_value=np.inf)

    def wide_arguments(self) -> dict:
        """The DAG test for :func:`turbobc.engines.wide.accumulate_wide`: the lengths and
        the distances of a batch."""
        return {"lengths": self.lengths, "distances": self.distances}


class DagWalk:
    """One batch's weighted sweep (docs/algorithm.md, "Weighted BC").

    On opening: the distances D (B x n), the DAG mask T and the in-degrees in the DAG. T is
    kept with a row per (source, tail), T̃ ((B n) x m, ``T̃[(b, v), e] = T[b, e]`` for e
    leaving v), so that the DAG edges out of a level are a product over that level's entries
    alone: ``X<T> = F Src`` is ``X = F̃ T̃`` with F̃ (B x Bn) the level spread onto its rows,
    ``F̃[b, (b, v)] = F[b, v]``. Forward, the DAG's hop layers in Kahn's order (a vertex joins
    the next level once all its DAG parents are done), with the path counts of the vertices
    still waiting kept in the scale of the newest level. Backward, every level's δ is gathered
    from all its children, which lie on any deeper level: U accumulates u over the finished
    levels, kept in the scale of the level being finished.
    """

    def __init__(self, dag: ShortestPathDag, batch: np.ndarray):
        self.dag = dag
        self.n = dag.graph.n
        B = len(batch)
        self.D = _distances(dag.A_len, batch)
        # T̃, and |P| = pattern(T) Dst : the DAG parents of each reached vertex
        self.T_by_tail, self.indegree = _dag_edges(self.D, dag)
        # R = |P| : parents not yet done (Kahn) ; Σ_pending : counts summed so far
        self.remaining = self.indegree.dup()
        self.pending = Matrix(dtypes.FP64, B, self.n)
        # U, Q : u and the equal shares q of every finished level (backward)
        self.U = Matrix(dtypes.FP64, B, self.n)
        self.Q = None
        for matrix in (self.remaining, self.pending, self.U):
            matrix.ss.config["sparsity_control"] = {"bitmap"}
        # the work matrices of a level, the same objects at every level: python-graphblas
        # objects are freed by the cyclic collector only (module docstring, "Memory"), and
        # new B x m ones per level would pile up until the batch ends
        m = dag.graph.nnz
        self._spread = Matrix(dtypes.FP64, B, B * self.n)  # F̃
        self._X, self._heads_u, self._heads_q, self._terms = (
            Matrix(dtypes.FP64, B, m) for _ in range(4))
        self._done, self._ready = Matrix(dtypes.FP64, B, self.n), Matrix(dtypes.FP64, B, self.n)
        self._gathered = None  # the level whose X, U Dstᵀ and Q Dstᵀ the work matrices hold

    def next_level(self, frontier: Matrix) -> Matrix:
        """The counts of the next hop layer: the vertices all of whose DAG parents are done."""
        dag = self.dag
        X = self._out_edges(frontier)
        self._gathered = None
        # Σ_pending += X Dst : each child's paths through the frontier
        self.pending(binary.plus) << X.mxm(dag.Dst, semiring.plus_first)
        # R −= pattern(X) Dst : the DAG parents just done
        self._done << X.mxm(dag.Dst, semiring.plus_pair[dtypes.FP64])
        self.remaining(binary.minus) << self._done
        # next<R == 0> = Σ_pending, among the children just touched
        self._ready << self.remaining.ewise_mult(self._done, binary.first)
        self._ready << self._ready.select("==", 0)
        return self.pending.ewise_mult(self._ready, binary.first).new()

    def _out_edges(self, level: Matrix) -> Matrix:
        """X = F̃ T̃ (B x m): σ̂ of each vertex of ``level`` on its DAG edges (X<T> = F Src)."""
        rows, cols, values = level.to_coo()
        rows = rows.astype(np.int64)
        self._spread.build(rows, rows * self.n + cols.astype(np.int64), values, clear=True)
        self._X << self._spread.mxm(self.T_by_tail, semiring.any_first)
        return self._X

    def level_scaled(self, factors: np.ndarray) -> None:
        """Σ_pending in the scale of the newest level: row b times ``factors[b]``."""
        self.pending << _row_scaling(factors).mxm(self.pending, semiring.any_times)

    def reached(self) -> Matrix:
        """pattern(D): every vertex reached from each source."""
        return self.D.apply(unary.one[dtypes.BOOL]).new()

    def parent_counts(self, sigma_child: Matrix, sigma_parent: Matrix) -> Matrix:
        """|P(w)| of every w of the level: its DAG parents (on any earlier level)."""
        return self.indegree.ewise_mult(sigma_child, binary.first).new()

    def finish_level(self, u: Matrix, share: Matrix | None) -> None:
        """U += u (the level's own vertices: disjoint from U's); Q += q."""
        self.U(binary.plus) << u
        if share is not None:
            if self.Q is None:
                self.Q = share.dup()
            else:
                self.Q(binary.plus) << share

    def scale_finished(self, factors: np.ndarray) -> None:
        """U into the scale of the parent level: row b times ``factors[b]`` (q needs none:
        it is a share of δ, not a ratio of counts)."""
        self.U << _row_scaling(factors).mxm(self.U, semiring.any_times)

    def add_edge_terms(self, edge_sums: np.ndarray, sigma_parent: Matrix,
                       row_weights: np.ndarray | None) -> None:
        """edge_raw += ω-weighted column sums of X_{d-1} ∘ (U Dstᵀ) (and of
        pattern(X_{d-1}) ∘ (Q Dstᵀ)): σ̂(v) u(w) on every DAG edge e = v -> w out of the
        level, already one per stored edge."""
        on_edges, heads_u, heads_q = self._gather(sigma_parent)
        self._terms << on_edges.ewise_mult(heads_u, binary.times)
        _add_columns(self._terms, edge_sums, row_weights)
        if heads_q is not None:
            _add_columns(heads_q, edge_sums, row_weights)

    def children_sums(self, sigma_parent: Matrix) -> Matrix:
        """t<S == d-1> = (X_{d-1} ∘ U Dstᵀ) Srcᵀ : u summed over each vertex's DAG children."""
        return self._gather(sigma_parent)[1].mxm(self.dag.SrcT, semiring.plus_first).new()

    def children_shares(self, sigma_parent: Matrix) -> Matrix:
        """(X_{d-1} ∘ Q Dstᵀ) Srcᵀ : the equal shares of each vertex's non-target children."""
        return self._gather(sigma_parent)[2].mxm(self.dag.SrcT, semiring.plus_first).new()

    def _gather(self, sigma_parent: Matrix):
        """X_{d-1} = F̃ T̃ of the level, and U Dstᵀ and Q Dstᵀ on its edges: the edge terms and
        the children's sums of one level share them."""
        heads_q = None if self.Q is None else self._heads_q
        if self._gathered is sigma_parent:
            return self._X, self._heads_u, heads_q
        on_edges = self._out_edges(sigma_parent)
        # (U Dstᵀ)<X_{d-1}> : u of each DAG edge's head (finished: it lies on a deeper level)
        self._heads_u(on_edges.S, replace=True) << self.U.mxm(self.dag.Dst.T,
                                                              semiring.any_first)
        if heads_q is not None:
            heads_q(on_edges.S, replace=True) << self.Q.mxm(self.dag.Dst.T, semiring.any_first)
        self._gathered = sigma_parent
        return on_edges, self._heads_u, heads_q


def _distances(A_len: Matrix, batch: np.ndarray) -> Matrix:
    """D (B x n): the shortest distance from each source of ``batch`` to every vertex it
    reaches, by frontier Bellman–Ford in the min-plus semiring.

    Rounds until no distance improves: the fixed point of d(w) = min_v d(v) + len(v, w), which
    is networkx's Dijkstra to the last bit (float64 addition is monotone and never decreases a
    distance, so both are the smallest left-to-right sum over the paths).
    """
    B, n = len(batch), A_len.nrows
    rows = np.arange(B, dtype=np.int64)
    # D = 0 at the sources ; F = D
    D = Matrix.from_coo(rows, batch, 0.0, nrows=B, ncols=n)
    D.ss.config["sparsity_control"] = {"bitmap"}
    frontier = D.dup()
    # the same three matrices every round: python-graphblas objects are freed by the cyclic
    # collector only (module docstring, "Memory"), so new ones per round would pile up
    reach = Matrix(dtypes.FP64, B, n)
    shorter = Matrix(dtypes.BOOL, B, n)
    while frontier.nvals:
        if frontier.nvals > PULL_ABOVE_DENSITY * B * n:
            frontier.ss.config["sparsity_control"] = {"bitmap"}
        # N = F min.plus A_len : one more edge out of the vertices that improved last round
        reach << frontier.mxm(A_len, semiring.min_plus)
        # F<¬D> = N ; F<N < D> = N : reached for the first time, or by a shorter path
        shorter << reach.ewise_mult(D, binary.lt)
        frontier.clear()
        frontier(~D.S) << reach
        frontier(shorter.V) << reach
        # D<F> = F
        D(frontier.S) << frontier
    return D


def _dag_edges(D: Matrix, dag: ShortestPathDag) -> tuple[Matrix, Matrix]:
    """T: the stored edges e = v -> w on a shortest path from each source,
    ``T = (D Src + len == D Dstᵀ)``, i.e. d_b(v) + len(e) == d_b(w) in float64, as networkx's
    Dijkstra compares ``dist + weight == seen[w]``; returned as T̃ ((B n) x m, a pattern with a
    row per (source, tail): :class:`DagWalk`), with the in-degrees |P| = pattern(T) Dst (B x n).

    Computed a source at a time (NumPy gathers of row b of D at the edges' tails and heads, over
    every edge, or over the edges out of the vertices reached when they are few): the same
    comparison as the two B x m products, without their dense B x m temporaries (ego-Facebook,
    400 sources: 0.23 s against 1.8 s for the products, compare and select in GraphBLAS).

    Raises
    ------
    ValueError
        Where a length vanishes in the sum (d_b(v) == d_b(w) on a DAG edge): the DAG would be
        ambiguous, and networkx's counts depend on the order it pops ties.
    """
    B, n = D.nrows, D.ncols
    dist = D.to_dense(fill_value=np.inf)
    indptr = np.zeros(B * n + 1, dtype=np.int64)  # of T̃: DAG edges per (b, v), then summed
    parents = np.zeros((B, n), dtype=np.int32)
    columns = [None] * B

    def sources(rows: range) -> None:
        for b in rows:
            found = columns[b] = _tight_edges(dist[b], dag)
            # rows (b, v) of T̃ ; |P| of row b
            indptr[b * n + 1:(b + 1) * n + 1] = np.bincount(dag.tails[found], minlength=n)
            parents[b] = np.bincount(dag.heads[found], minlength=n)

    # NumPy's gathers and compares release the GIL: the sources split over GraphBLAS's threads
    workers = max(1, min(B, graphblas_threads()))
    chunks = [range(B * i // workers, B * (i + 1) // workers) for i in range(workers)]
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(sources, chunks))
    cols = np.concatenate(columns) if columns else np.zeros(0, dtype=np.int64)
    columns.clear()  # (the closure above refers to the list: emptied, not deleted)
    np.cumsum(indptr, out=indptr)
    T_by_tail = Matrix.from_csr(indptr, cols, True, nrows=B * n, ncols=dag.graph.nnz)
    rows, vertices = np.nonzero(parents)
    indegree = Matrix.from_coo(rows, vertices, parents[rows, vertices].astype(np.float64),
                               nrows=B, ncols=n)
    return T_by_tail, indegree


def _tight_edges(row: np.ndarray, dag: ShortestPathDag) -> np.ndarray:
    """The stored edges (sorted ids) on a shortest path from one source, whose distances are
    ``row`` (inf: not reached): row b of T."""
    reached = np.flatnonzero(row < np.inf)
    if 4 * reached.size <= row.size:  # a small part of the graph: the edges out of it
        edges = _edges_out(reached, dag.graph.pattern.indptr)
        return edges[_tight(row[dag.tails[edges]], row[dag.heads[edges]], dag.lengths[edges],
                            edges, dag)]
    # most of the graph: every edge, without an index
    return np.flatnonzero(_tight(row[dag.tails], row[dag.heads], dag.lengths, None, dag))


def _tight(at_tail: np.ndarray, at_head: np.ndarray, lengths: np.ndarray, ids, dag) -> np.ndarray:
    """T[b, e] = d_b(v) + len(e) == d_b(w), w reached: which of the edges (``ids``; None: all
    in order) whose tails and heads lie at ``at_tail`` and ``at_head`` are on the DAG."""
    tight = (at_tail + lengths == at_head) & (at_head < np.inf)
    if dag.lengths_may_vanish:
        flat = tight & (at_tail == at_head)
        found = np.flatnonzero(flat)
        _check_nothing_vanishes(found if ids is None else ids[found], dag, at_tail[found])
    return tight


def _edges_out(vertices: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """The stored edges out of ``vertices`` (sorted), in pattern order."""
    starts, degree = indptr[vertices], np.diff(indptr)[vertices]
    ends = np.cumsum(degree)
    offsets = np.arange(int(ends[-1]) if ends.size else 0) - np.repeat(ends - degree, degree)
    return np.repeat(starts, degree) + offsets


def _check_nothing_vanishes(flat: np.ndarray, dag: ShortestPathDag, at: np.ndarray) -> None:
    """Raise for the DAG edges ``flat`` (stored edge ids), which join two vertices at the same
    distance ``at``: their lengths vanished in the sum."""
    if flat.size:
        e = int(flat[0])
        raise ValueError(
            f"the edge ({int(dag.tails[e])}, {int(dag.heads[e])}) of length "
            f"{float(dag.lengths[e])!r} vanishes next to the distance {float(at[0])!r} it is "
            "added to (float64 keeps 53 bits): shortest paths through it are ambiguous; use "
            "lengths that span less than 2^52 / n")


def _keep_in_range(level: Matrix, too_wide: np.ndarray) -> np.ndarray | None:
    """Scale rows whose largest count exceeds 2^RESCALE_ABOVE_EXP back to [0.5, 1).

    The scaling multiplies by a power of two, which is exact in floating point,
    so results are bit-identical to unscaled arithmetic wherever that does not
    overflow. Returns the per-row exponent shift, or None when nothing was scaled.
    Rows whose smallest count falls below 1 / WIDE_RANGE once scaled are marked in
    ``too_wide`` (only a scaled level can newly fall there: an unscaled count is
    at least its smallest parent).
    """
    largest = level.reduce_scalar(monoid.max).new().value
    if largest is None or largest <= np.ldexp(1.0, RESCALE_ABOVE_EXP):
        return None
    row_max = level.reduce_rowwise(monoid.max).new()
    idx, vals = row_max.to_coo()
    shift = np.zeros(level.nrows, dtype=np.int64)
    big = vals > np.ldexp(1.0, RESCALE_ABOVE_EXP)
    shift[idx[big]] = np.frexp(vals[big])[1]
    level << _row_scaling(np.ldexp(1.0, -shift)).mxm(level, semiring.any_times)
    min_idx, smallest = level.reduce_rowwise(monoid.min).new().to_coo()
    too_wide[min_idx[smallest < 1.0 / WIDE_RANGE]] = True
    return shift


def _target_weights(level: Matrix, tau: np.ndarray | None,
                    slot_tau: np.ndarray | None = None) -> Matrix:
    """τ(w) at every entry (b, w) of ``level``: the target weight of the accumulate step,
    all ones when ``tau`` is None (every vertex a target, weight 1); ``slot_tau[b, w]`` when
    the weights depend on the slot."""
    if slot_tau is not None:
        rows, cols, _ = level.to_coo(values=False)
        return Matrix.from_coo(rows, cols, slot_tau[rows, cols], nrows=level.nrows,
                               ncols=level.ncols)
    ones = level.apply(unary.one).new()
    if tau is None:
        return ones
    # column w scaled by τ(w): ones · diag(τ)
    weights = Vector.from_dense(np.asarray(tau, dtype=np.float64)).diag()
    return ones.mxm(weights, semiring.any_times).new()


def _row_scaling(factors: np.ndarray) -> Matrix:
    """diag(factors) as a B x B matrix."""
    return Vector.from_coo(np.arange(len(factors)), factors, size=len(factors)).diag()


def _aligned_with_pattern(E: Matrix, pattern) -> np.ndarray:
    """The values of E (pattern within ``pattern``'s) as an array aligned with
    ``pattern.indices`` (zero where E has no entry)."""
    rows, cols, vals = E.to_coo()
    out = np.zeros(pattern.nnz, dtype=np.float64)
    out[entry_positions(pattern, rows, cols)] = vals
    return out


def _add_columns(M: Matrix, raw: np.ndarray, row_weights: np.ndarray | None = None) -> None:
    """raw += the column sums of M, row b counted ``row_weights[b]`` times (ωᵀ M) when given."""
    if row_weights is None:
        sums = M.reduce_columnwise(monoid.plus).new()
    else:
        sums = Vector.from_dense(row_weights).vxm(M, semiring.plus_times).new()
    idx, vals = sums.to_coo()
    raw[idx] += vals


def _add_endpoint_terms(visited: Matrix, batch: np.ndarray, raw: np.ndarray,
                        row_weights: np.ndarray | None = None) -> None:
    """networkx's endpoint terms from the reach pattern R = pattern(σ).

    bc += colsum(R) - e_S  (every reached vertex but the source gets +1), and
    bc[s] += rowsum_s(R) - 1  (the source gets the number of others it reaches); with
    ``row_weights`` ω, every term of row b counts ω_b times.
    """
    reaches = visited.reduce_rowwise(monoid.plus[dtypes.INT64]).new().to_dense(fill_value=0)
    if row_weights is None:
        reached_by = visited.reduce_columnwise(monoid.plus[dtypes.INT64]).new()
        idx, counts = reached_by.to_coo()
        raw[idx] += counts
        raw[batch] += reaches - 2
        return
    # colsum(diag(ω) R)
    weighted = Vector.from_dense(row_weights).vxm(visited, semiring.plus_times).new()
    idx, counts = weighted.to_coo()
    raw[idx] += counts
    raw[batch] += row_weights * (reaches - 2)
