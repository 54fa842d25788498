"""The frontiers family: one source per thread block, its breadth-first frontier a queue
(:class:`FrontiersFamily`, the family protocol of turbobc/engines/gpu/family.py;
spmv/kernels/frontiers.cu).

Work-efficient where the lanes family idles: on meshes, grid-like roads and geometric graphs a
level holds a few hundred to a few thousand vertices for hundreds to thousands of levels, and a
warp per (vertex, 32 sources) keeps only a few of its lanes busy (docs/deep-graphs.md). Here a
block touches only its own frontier's edges and keeps the vertices it reached in order, level
after level, so its backward sweep walks the levels in reverse with no pass over the graph.
Many blocks sweep at once, each taking the next source from a counter, each with its own rows
(level, σ̂, t, the queue, the level starts and shifts, and its own bc: turbobc/engines/gpu/
memory.py, ``frontier_block_bytes``); the rows are cleared as each source ends, touching only
what it reached. Path counts are scaled per level (a level whose largest count passes 2^512
is scaled back by a power of two); a source whose level spreads wider than that can hold is
swept with an exponent per vertex by turbobc/engines/wide.py.

The graph is swept relabeled in a locality order (``Tuning.frontier_order``, reverse
Cuthill–McKee by default: a frontier's vertices then sit in a few runs of consecutive ids, so
a block's reads and atomics share cache lines), its sources in that order (blocks that run at
once start close together and share the graph's lines in L2); the sums come back in the
graph's own order.

Serves unweighted vertex and edge BC, τ (targets), ω (folded trees), endpoints, directed and
undirected graphs, and per-slot target weights (chain folding, ``Problem.slot_weights``: a
phased run, turbobc/engines/gpu/frontiers_slots.py); weighted graphs go to the layers family
(turbobc/engines/gpu/engine.py, ``choose_family``).
"""

from __future__ import annotations

import time

import numpy as np

import spmv
from spmv import _ctl, _frontiers
from spmv._launch import all_bits_set
from spmv._relabel import block_sums, relabel

from turbobc._graph import index_dtype_for
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.family import Family, Plan
from turbobc.engines.gpu.frontiers_relabel import inverse_permutation, relabeled_csr
from turbobc.engines.gpu.frontiers_slots import SLOT_SPARE, SLOT_WAVES, sweep_slots
from turbobc.engines.gpu.lanes_order import locality_order
from turbobc.engines.gpu.memory import (choose_frontier_blocks, device_free_bytes,
                                        device_memory_text, frontier_block_bytes,
                                        frontiers_bytes, index_words)
from turbobc.engines.gpu.resident import DeviceFull, DeviceResident, allocated
from turbobc.engines.protocol import Partial, SlotWeightsDeclined
from turbobc.engines.wide import accumulate_wide

__all__ = ["FrontiersFamily", "SOURCES_PER_BLOCK"]

SOURCES_PER_BLOCK = 16
"""Sources per block of one launch: a run is launched in chunks of blocks x this many sources
(progress per chunk; a chunk of del20 takes about a second)."""


class FrontiersFamily(Family):
    """One source per block (module docstring).

    Parameters
    ----------
    problem : Problem
        Unweighted; vertex or edge sums, τ and ω, endpoints, memory limit, and per-slot target
        weights (``problem.slot_weights``: the plan's batches, frontiers_slots.py; the
        sources a sweep is given are then the plan's sources of that run).
    blocks : int, optional
        Force the blocks (sources in flight) of a launch (tests); default the most that can be
        resident and fit the memory.
    index_dtype : numpy dtype, optional
        Force int32 or int64 indices.
    """

    name = "frontiers"
    builds_ahead = True

    def __init__(self, problem, *, blocks=None, index_dtype=None):
        super().__init__(problem)
        self.blocks, self.index_dtype = blocks, index_dtype

    def build_ahead(self) -> None:
        """The locality order the graph is relabeled in (:class:`_Labels`), kept on the
        graph: del20's reverse Cuthill–McKee order took 0.23 to 0.40 s in each of four Dask
        workers' first chunk, 0.28 s with one (device call 17)."""
        locality_order(self.problem.graph, current_tuning().frontier_order)

    def _blocks(self, graph, num_sources: int, free: int, index_dtype,
                memory_limit: int | None) -> int:
        """Blocks of a launch: the sources in flight of a whole run; a phased run's slots
        (a batch), each with its τ row, up to :data:`SLOT_WAVES` times what is resident."""
        if self.blocks is not None:
            return max(1, min(int(self.blocks), num_sources))
        knobs = current_tuning()
        most = _frontiers.most_blocks(index_dtype, knobs.frontier_blocks_per_sm,
                                      _variant(knobs))
        phased = self.problem.slot_weights is not None
        return choose_frontier_blocks(graph.n, graph.nnz, num_sources, free,
                                      most * (SLOT_WAVES if phased else 1),
                                      index_bytes=np.dtype(index_dtype).itemsize,
                                      edges=self.problem.edges, memory_limit=memory_limit,
                                      target_rows=phased)

    def plan(self, resident, num_sources: int) -> Plan:
        """The blocks (sources in flight) of a run of ``num_sources`` now."""
        graph = resident.graph
        index_dtype = np.dtype(self.index_dtype or index_dtype_for(graph.n, graph.nnz))
        blocks = max(1, self._blocks(graph, num_sources, device_free_bytes(), index_dtype,
                                     self.problem.memory_limit))
        return Plan(self.name, batch=blocks,
                    model_bytes=frontiers_bytes(graph.n, graph.nnz, blocks=blocks,
                                                index_bytes=index_dtype.itemsize,
                                                edges=self.problem.edges,
                                                target_rows=self.problem.slot_weights
                                                is not None),
                    shape={"blocks": blocks, "threads": _frontiers.FRONTIER_THREADS,
                           "index_dtype": str(index_dtype)})

    def sweep(self, resident, sources, progress=None):
        """Raw sums of ``sources`` and the run's facts, as
        :meth:`turbobc.engines.gpu.lanes.LanesFamily.sweep` defines them.

        Raises
        ------
        ValueError
            For repeated sources, or a weighted problem (the layers family serves those).
        MemoryError
            When the device cannot hold the format and one block's rows.
        SlotWeightsDeclined
            With per-slot target weights, when a slot's counts need the wide sweep or the
            device runs out of memory (the caller sweeps unfolded).
        """
        import cupy

        problem = self.problem
        spmv.check_kernel(problem.kernel)
        if problem.weighted:
            raise ValueError("the frontiers family sweeps unweighted graphs")
        sources = np.asarray(sources, dtype=np.int64)
        edge = np.zeros(resident.graph.nnz, dtype=np.float64) if problem.edges else None
        facts: dict = {}
        failure = None
        phased = problem.slot_weights is not None
        with resident.run():
            # a phased run's τ rows come from the plan (own weight ⊗ target weight)
            weights = (None, None) if phased else resident.accumulate_weights(
                problem.target_weight, problem.source_weight)
            try:
                raw = self._run(resident, sources, weights, edge, progress, facts)
                return Partial(vertex=raw, sources=int(sources.size), edge=edge), facts
            except DeviceFull as exc:
                failure = exc.failure  # not exc itself: its traceback holds the run's arrays
            except cupy.cuda.memory.OutOfMemoryError as exc:  # outside allocated(): the
                if not phased:  # phased run's shift tables (frontiers_slots.FrontierCounts)
                    raise
                failure = str(exc)
            finally:
                if phased:
                    problem.slot_weights.forget_device()  # the plan's uploads
            resident.release()
            del weights
        if phased:  # the caller sweeps unfolded, whose own memory model says whether it fits
            raise SlotWeightsDeclined(f"the device ran out of memory: {failure}")
        graph = resident.graph
        index = np.dtype(self.index_dtype or index_dtype_for(graph.n, graph.nnz))
        raise MemoryError(
            f"the frontiers family of the GPU engine needs about "
            f"{frontier_block_bytes(graph.n, index.itemsize)} bytes of device memory per source "
            f"in flight beside the graph (n={graph.n}, {graph.nnz} stored edges, "
            f"{index_words(index)}); "
            f"{device_memory_text()}. CuPy said: {failure}")

    def _run(self, resident: DeviceResident, sources, weights, edge_raw, progress,
             facts) -> np.ndarray:
        """The run inside :meth:`DeviceResident.run`: chunks of sources, one launch each, then
        the sources whose counts spread too wide by the exponent sweep; or with per-slot
        target weights the plan's batches, two launches each (frontiers_slots.py)."""
        import cupy

        graph = resident.graph
        n, m = graph.n, graph.nnz
        if sources.size == 0 or n == 0:
            return np.zeros(n, dtype=np.float64)
        if np.unique(sources).size != sources.size:
            raise ValueError("sources must be distinct")
        index_dtype = np.dtype(self.index_dtype or index_dtype_for(n, m))
        edges = edge_raw is not None
        resident.keep_only((), index_dtype)  # the relabeled graph is the workspace's own
        if resident.workspace("frontiers") is None:
            resident.drop_workspace()
        if not edges:
            resident.drop_edge_accumulator()
        order_began = time.perf_counter()
        built_before = resident.workspace("frontiers")
        labels = allocated(lambda: _labels(resident, index_dtype))
        order_seconds = time.perf_counter() - order_began
        relabeled = labels is not built_before  # built by this run (order and upload)
        del built_before
        ptr, idx = labels.ptr, labels.idx
        bc, _ = allocated(lambda: resident.accumulator(_ctl.N_CTL))
        edge = allocated(resident.edge_accumulator) if edges else None
        # what this run keeps is free for it: the graph is counted in the model, and kept rows
        # are reused or let go before new ones are allocated
        free = device_free_bytes() + labels.nbytes() + resident.edge_bytes()
        # the accumulate weights already on the device come out of the limit's budget
        limit = (None if self.problem.memory_limit is None else max(
            0, self.problem.memory_limit - DeviceResident.weight_bytes(weights)))
        plan = self.problem.slot_weights
        # a phased run's batches hold helper slots too (the other ends of their chains)
        wanted = sources.size + (SLOT_SPARE if plan is not None else 0)
        blocks = self._blocks(graph, wanted, free, index_dtype, limit)
        if blocks < 1:
            raise DeviceFull("not even one block's rows fit beside the graph")
        rows = allocated(lambda: labels.rows_for(n, blocks))
        rows.bc.fill(0)
        # the edge sums in the relabeled pattern's order
        edge_new = allocated(lambda: cupy.zeros(m, dtype=np.float64)) if edges else None
        if plan is not None:
            return self._run_slots(resident, labels, rows, blocks, sources, bc, edge, edge_new,
                                   edge_raw, progress, facts, relabeled, order_seconds)
        chunk = blocks * SOURCES_PER_BLOCK
        # the sources in the new ids, ascending: blocks that run at once start close together
        dev_sources = cupy.asarray(np.sort(labels.rank[sources]))
        tau, omega = (None if w is None else w[labels.perm_dev] for w in weights)
        wide_sources: list = []
        max_in_degree = int(graph.in_degree.max()) if n else 0
        variant = _variant(current_tuning())
        # FRONTIER_PROFILE builds: block 0 of the first launch records its first source
        profile = (allocated(lambda: cupy.zeros(6 * (n + 2) + 3, dtype=cupy.int64))
                   if dict(variant).get("PROFILE") else None)
        began = time.perf_counter()
        launches = 0
        for start in range(0, sources.size, chunk):
            part = dev_sources[start:start + chunk]
            rows.next.fill(0)
            rows.wide_count.fill(0)
            _frontiers.sweep_frontiers(
                {"ptr": ptr, "idx": idx, "n": n},
                rows.work(profile if launches == 0 else None),
                blocks=min(blocks, int(part.size)), sources=part, tau=tau, omega=omega,
                edge=edge_new, endpoints=self.problem.endpoints, max_in_degree=max_in_degree,
                defines=variant)
            launches += 1
            widened = int(rows.wide_count.get()[0])
            if widened:  # back in the graph's own ids
                wide_sources.extend(labels.perm[rows.wide[:widened].get()].tolist())
            if progress is not None:
                progress.update(int(part.size) - widened)
        resident.mark()
        _back_in_graph_ids(rows, labels, bc, edge, edge_new)
        del edge_new
        sweep_seconds = time.perf_counter() - began
        if wide_sources:
            accumulate_wide(cupy, resident.borrow("csr_ptr", index_dtype),
                            resident.borrow("csr_idx", index_dtype), n,
                            np.array(sorted(wide_sources)), bc,
                            endpoints=self.problem.endpoints, progress=progress,
                            target_weight=weights[0], source_weight=weights[1], edge_raw=edge)
        raw = bc.get()
        if edges:
            edge_raw += edge.get()
        facts.update(_run_facts(resident, labels, blocks=blocks, edges=edges, phased=False,
                                sweep_seconds=sweep_seconds, order_seconds=order_seconds,
                                relabeled=relabeled),
                     launches=launches, wide_sources=len(wide_sources))
        if profile is not None:
            facts["level_profile"] = _level_profile(profile.get(), n, labels.perm)
        return raw

    def _run_slots(self, resident, labels, rows, capacity, sources, bc, edge, edge_new,
                   edge_raw, progress, facts, relabeled: bool, order_seconds: float) -> np.ndarray:
        """A phased run (per-slot target weights: frontiers_slots.py) into ``rows``, then its
        sums back in the graph's own ids with the plan's closed-form credit."""
        graph, problem = resident.graph, self.problem
        n = graph.n
        plan = problem.slot_weights
        began = time.perf_counter()
        try:
            shown = sweep_slots(labels, rows, plan, sources, capacity=capacity, n=n,
                                target_weight=problem.target_weight, edge=edge_new,
                                max_in_degree=int(graph.in_degree.max()) if n else 0,
                                defines=_variant(current_tuning()), progress=progress,
                                mark=resident.mark)
        except BaseException:
            labels.rows = None  # a batch swept forward only leaves its rows set
            raise
        _back_in_graph_ids(rows, labels, bc, edge, edge_new)
        raw = bc.get() + plan.credit
        if edge is not None:
            edge_raw += edge.get()
            edge_raw += plan.edge_credit()
        facts.update(_run_facts(resident, labels, blocks=capacity, edges=edge is not None,
                                phased=True, sweep_seconds=time.perf_counter() - began,
                                order_seconds=order_seconds, relabeled=relabeled),
                     phased=True, wide_sources=0, **shown)
        return raw


def _back_in_graph_ids(rows, labels, bc, edge, edge_new) -> None:
    """The blocks' own sums added into ``bc`` in the graph's own ids (v's sum is at rank[v]),
    and the relabeled edge sums ``edge_new`` put into ``edge`` (each new entry's position in
    the pattern), where there are edge sums."""
    block_sums(rows.bc, rows.blocks, labels.rank.size, labels.rank_dev, bc)
    if edge is not None:
        edge[labels.edge_of] = edge_new


def _run_facts(resident, labels, *, blocks: int, edges: bool, phased: bool,
               sweep_seconds: float, order_seconds: float, relabeled: bool) -> dict:
    """The facts a whole or a phased run share: the family and kernel, the blocks, the order
    and its seconds, the seconds of the sweeps, the index type, the pool's peak and the
    memory model, and whether the run found the graph on the device (``relabeled``: this run
    built the relabeled graph, its order's seconds counted as upload)."""
    graph, index_dtype = resident.graph, labels.index_dtype
    run = resident.run_facts()
    return dict(family="frontiers", kernel="bcf_sweep", blocks=blocks, batch=blocks,
                order=labels.order, order_seconds=order_seconds, sweep_seconds=sweep_seconds,
                index_dtype=str(index_dtype), edge_sums=edges,
                peak_pool_bytes=resident.peak - resident.baseline,
                model_bytes=frontiers_bytes(graph.n, graph.nnz, blocks=blocks,
                                            index_bytes=index_dtype.itemsize, edges=edges,
                                            target_rows=phased),
                resident_reused=run["resident_reused"] and not relabeled,
                upload_seconds=run["upload_seconds"] + (order_seconds if relabeled else 0.0))


def _level_profile(profile: np.ndarray, n: int, perm: np.ndarray) -> dict:
    """The levels a ``FRONTIER_PROFILE`` build recorded (spmv/kernels/frontiers.cu): block 0's
    first source while the other blocks swept theirs. ``forward`` and ``backward``: one
    ``[cycles, vertices, out-edges]`` per level (level 0 first), ``depth``, the source's
    ``cycles`` in all (the SM's clock) and the ``source`` (the graph's id, ``perm`` of the
    relabeled one: the blocks take sources as they start, so block 0's first is the run's
    first only when it started first)."""
    at = 3 * (n + 2)
    depth = int(profile[2 * at])
    forward = profile[:3 * (depth + 1)].reshape(-1, 3)
    backward = profile[at:at + 3 * depth].reshape(-1, 3)
    return {"depth": depth, "cycles": int(profile[2 * at + 1]),
            "source": int(perm[profile[2 * at + 2]]),
            "forward": forward.tolist(), "backward": backward.tolist()}


def _variant(knobs) -> tuple:
    """The kernel's compile-time variant: ``Tuning.frontier_kernel`` as sorted (name, value)
    pairs of frontiers.cu's FRONTIER_* macros (empty: the file's defaults)."""
    return tuple(sorted((knobs.frontier_kernel or {}).items()))


class _Rows:
    """Every block's rows of the frontiers family (spmv/kernels/frontiers.cu, FrontierWork):
    level -1 and σ̂ 0 between sources (each source clears what it touched); t is written
    before it is read."""

    def __init__(self, n: int, blocks: int, index_dtype):
        import cupy

        self.blocks, self.index_dtype = blocks, np.dtype(index_dtype)
        self.level = all_bits_set(blocks * n, cupy.int32)  # -1
        self.sigma = cupy.zeros(blocks * n, dtype=cupy.float64)
        self.t = cupy.zeros(blocks * n, dtype=cupy.float64)
        self.order = cupy.empty(blocks * n, dtype=index_dtype)
        self.start = cupy.empty(blocks * (n + 2), dtype=index_dtype)
        self.shifts = cupy.empty(blocks * (n + 2), dtype=cupy.int32)
        self.bc = cupy.zeros(blocks * n, dtype=cupy.float64)
        self.next = cupy.zeros(1, dtype=cupy.uint64)
        self.wide = cupy.empty(blocks * SOURCES_PER_BLOCK, dtype=cupy.int64)
        self.wide_count = cupy.zeros(1, dtype=cupy.uint64)
        self.depth = cupy.zeros(blocks, dtype=cupy.int32)  # a phased run's forward depths
        self.tau = None  # a phased run's τ rows, made by frontiers_slots.py when first needed

    def work(self, profile=None) -> dict:
        """The ``FrontierWork`` arrays of these rows (``profile``: a FRONTIER_PROFILE build's)."""
        return {"level": self.level, "sigma": self.sigma, "t": self.t, "order": self.order,
                "start": self.start, "shifts": self.shifts, "bc": self.bc, "next": self.next,
                "wide": self.wide, "wide_count": self.wide_count, "profile": profile,
                "depth": self.depth}


class _Labels:
    """The graph relabeled in a locality order on the device (module docstring), and the rows
    of the blocks: what the frontiers family keeps in a GPU sweeper's workspace.

    Attributes
    ----------
    rank, perm : numpy.ndarray
        The new id of every vertex, and the vertex of every new id (host int64).
    ptr, idx : cupy arrays
        The relabeled CSR pattern, P A Pᵀ, rows sorted.
    edge_of : cupy array
        For each stored entry of the relabeled pattern, its position in the graph's own.
    """

    def __init__(self, graph, index_dtype, order: str):
        import cupy

        self.index_dtype, self.asked = np.dtype(index_dtype), order
        self.rank, self.order, _ = locality_order(graph, order)
        self.perm = inverse_permutation(np, self.rank)
        self.rank_dev = cupy.asarray(self.rank)
        self.perm_dev = cupy.asarray(self.perm)
        self.ptr, self.idx, self.edge_of = _relabeled(graph.pattern, self.rank, self.rank_dev,
                                                      self.index_dtype)
        self.rows = None

    def nbytes(self, with_rows: bool = True) -> int:
        """Device bytes of the relabeled graph (and of the rows, when kept)."""
        arrays = [self.ptr, self.idx, self.edge_of, self.rank_dev, self.perm_dev]
        if with_rows and self.rows is not None:
            arrays += [value for value in vars(self.rows).values() if hasattr(value, "nbytes")]
        return sum(int(a.nbytes) for a in arrays)

    def rows_for(self, n: int, blocks: int) -> _Rows:
        """The rows when they serve ``blocks`` blocks, else new ones (the old let go first)."""
        if self.rows is None or self.rows.blocks < blocks:
            self.rows = None
            self.rows = _Rows(n, blocks, self.index_dtype)
        return self.rows


RELABEL_SORT_MAX_DEGREE = 512
"""The kernel relabels a graph whose rows hold at most this many entries (it sorts each row by
insertion, one thread a row): meshes and roads; a graph with longer rows takes CuPy's sort."""


def _relabeled(pattern, rank: np.ndarray, rank_dev, index_dtype) -> tuple:
    """P A Pᵀ of ``pattern`` on the device: the new rows' pointers on the host (the degrees
    in new order, summed), then spmv/kernels/relabel.cu's pass (a thread a row) where no row
    is longer than :data:`RELABEL_SORT_MAX_DEGREE`, else :func:`relabeled_csr` with CuPy
    (a few array passes and one sort); on the host and then uploaded when the device cannot
    hold the temporaries. Returns the device arrays ``ptr``, ``idx`` and ``edge_of``."""
    import cupy

    n, m = pattern.shape[0], pattern.nnz
    degree = np.diff(pattern.indptr).astype(np.int64)
    try:
        if m == 0 or degree.max() <= RELABEL_SORT_MAX_DEGREE:
            in_order = np.empty(n, dtype=np.int64)
            in_order[rank] = degree  # new row rank[v] holds v's entries
            ptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(in_order, out=ptr[1:])
            idx = cupy.empty(m, dtype=index_dtype)
            edge_of = cupy.empty(m, dtype=np.int64)
            relabel(cupy.asarray(pattern.indptr.astype(np.int64, copy=False)),
                    cupy.asarray(pattern.indices.astype(index_dtype, copy=False)), rank_dev,
                    cupy.asarray(ptr), n, idx, edge_of)
            return cupy.asarray(ptr.astype(index_dtype)), idx, edge_of
        return relabeled_csr(cupy, cupy.asarray(pattern.indptr),
                             cupy.asarray(pattern.indices), rank_dev, index_dtype)
    except cupy.cuda.memory.OutOfMemoryError:
        pass  # the temporaries die with this block; the host has room
    host = relabeled_csr(np, pattern.indptr, pattern.indices, rank, index_dtype)
    return tuple(cupy.asarray(array) for array in host)


def _labels(resident: DeviceResident, index_dtype) -> _Labels:
    """The relabeled graph ``resident`` keeps for this index type and order, else a new one."""
    order = current_tuning().frontier_order
    held = resident.workspace("frontiers")
    if held is not None and held.index_dtype == np.dtype(index_dtype) and held.asked == order:
        return held
    held = None
    resident.drop_workspace()
    labels = _Labels(resident.graph, index_dtype, order)
    resident.keep_workspace("frontiers", labels)
    return labels
