"""The lanes family: B sources per sweep, 32 a warp (a lane each), as n x B vertex-major
blocks on the device (:class:`LanesFamily`, the family protocol of
turbobc/engines/gpu/family.py).

Chosen (turbobc/engines/gpu/engine.py, ``choose_family``) whenever more than one source of an
unweighted graph is swept, and for edge BC with any number of sources; one source of vertex BC
goes to the single-source family. Every per-source vector of
Algorithm 1 becomes an n x B block whose row holds the B values of one vertex
(docs/algorithm.md, "Many sources per sweep"). Per batch, one persistent launch
(spmv/kernels/batched.cuh) runs

    forward, d = 1, 2, ...      F<¬Σ> = F A ;  Σ += F ;  S<F> = d      (per lane f<¬σ> = Aᵀ f)
    backward, d = D .. 2        u<S==d> = (τ + δ) ./ σ ;  t = A u ;  δ<S==d−1> += t .* σ
    bc += Σ_lanes δ  (and the endpoint terms)
    edge BC, d = D .. 1         E<A> += Σ̂_{d−1}ᵀ U 2^-shift_d  (ω-weighted; EdgeSums)

with a grid barrier between levels, so a batch costs one launch and one host round trip.
Edge BC (``edge_raw``): the EdgeSums instantiation of the same kernels also adds, for every
edge v -> w of the shortest-path DAG, Σ_lanes ω σ(v)/σ(w) (τ(w) + δ(w)) into one float64
per stored edge (CSR order, the order the backward sweep walks the out-neighbours in).

Kernels (``kernel=``): each name of ``spmv.KERNELS`` means its batched generalization,
``sccsc`` thread per (vertex, source) dense pull, ``vecsc`` warp per (vertex, 32 sources)
with frontier push/pull, ``sccooc`` warp per (stored edge, 32 sources) with atomics; "auto"
is :func:`spmv._batched.select_batched`.

Device memory, n vertices, m stored edges, index size b, level size ℓ (2: int16, or 4 when a
batch is deeper than 32765 levels), B lanes, D_cap levels of the shift table::

    format   b (n + 1 + m), twice for directed graphs (CSR and CSC); scCOOC: b (n + 1 + 2m)
    per lane n (ℓ + 16)       level, σ̂ and t of every vertex
             n ℓ / 16         two per-unit flag arrays (frontier marks, then next depths)
             n / 2            two per-unit tagged lane masks (8 bytes per 32 lanes each)
             4 D_cap + 24     shift table column, largest count, reached count, source
    bc       8 n
    edges    8 m              the edge sums (edge BC only)

so a batch needs about 18.6 bytes per (vertex, source) (turbobc/engines/gpu/memory.py,
``lane_bytes``). Nothing depends on the size of a frontier, so the batch size chosen from free
memory (``memory.choose_lanes``) cannot run out
mid-sweep. The format, the blocks, bc and the control block stay in a
:class:`~turbobc.engines.gpu.resident.DeviceResident` (a GPU sweeper's, across its runs); a run
first lets go of the parts it does not sweep with, and counts kept blocks as free when it
sizes its batch (they are reused when they hold it, ``lanes_blocks.holds``, else replaced).
Sources are swept in locality order (lanes_order.py); per-slot target weights (chain
folding, vertex or edge BC) run the same kernels a phase at a time (lanes_slots.py).

Overflow-safe counts: when a level's largest count of some source passes 2^512, that
(source, level) is scaled to [0.5, 1) by a power of two and the shift is recorded; the
backward ratio σ_{d−1}/σ_d then carries 2^-shift, exactly as the CPU engine does
(:func:`turbobc.engines.graphblas._keep_in_range`). A lane whose scaled counts fall below
1 / :data:`turbobc.engines.wide.WIDE_RANGE` stops its batch before the backward sweep; the batch
reruns without it and the source is swept on the device by :mod:`turbobc.engines.wide`.
"""

from __future__ import annotations

import time

import numpy as np

import spmv
from spmv import _batched

from turbobc._graph import index_dtype_for
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.family import Family, Plan
from turbobc.engines.gpu.lanes_blocks import (LanesFormat, out_of_memory, status_of, widened,
                                              workspace_for)
from turbobc.engines.gpu.lanes_order import sweep_order
from turbobc.engines.gpu.lanes_slots import sweep_slots
from turbobc.engines.gpu.memory import (DEPTH_CAP, LANES, choose_lanes, device_free_bytes,
                                        lanes_bytes, round_up)
from turbobc.engines.gpu.resident import DeviceFull, DeviceResident, allocated
from turbobc.engines.gpu.single import index_types, run_single, single_parts
from turbobc.engines.protocol import Partial, SlotWeightsDeclined
from turbobc.engines.wide import accumulate_wide

__all__ = ["LanesFamily"]


class LanesFamily(Family):
    """B sources per sweep, 32 a warp (module docstring).

    Parameters
    ----------
    problem : Problem
        Vertex or edge sums (``problem.edges``: the EdgeSums kernels), τ and ω, endpoints,
        kernel (each name of ``spmv.KERNELS`` means its batched generalization), memory limit,
        and per-slot target weights (``problem.slot_weights``: the plan's batches,
        lanes_slots.py; the sources a sweep is given are then unused).
    batch : int, optional
        Force the number of sources per batch (tests); default ``memory.choose_lanes``.
    level_dtype : numpy dtype, optional
        Start with int32 levels instead of int16 (tests of the wide path).
    index_dtype : numpy dtype, optional
        Force int32 or int64 indices (tests of the int64 path).
    depth_cap : int, optional
        Initial levels of the shift table (tests of its growth).
    """

    name = "lanes"

    def __init__(self, problem, *, batch=None, level_dtype=None, index_dtype=None,
                 depth_cap=None):
        super().__init__(problem)
        self.batch, self.level_dtype = batch, level_dtype
        self.index_dtype, self.depth_cap = index_dtype, depth_cap

    def plan(self, resident, num_sources: int) -> Plan:
        """About the lanes of one batch of a run of ``num_sources`` sources now: the model of
        the largest format (veCSC), 2-byte levels and the free device memory (a Dask run sizes
        its chunks from it, turbobc/_dask.py); a batch of 1 when not even 32 lanes fit (the run
        then goes one source at a time)."""
        graph, problem = resident.graph, self.problem
        index_dtype = np.dtype(self.index_dtype or index_dtype_for(graph.n, graph.nnz))
        batch = choose_lanes(graph.n, graph.nnz, num_sources, device_free_bytes(),
                             index_bytes=index_dtype.itemsize, level_bytes=2,
                             directed=graph.directed, kernel="vecsc",
                             memory_limit=problem.memory_limit, edges=problem.edges)
        batch = max(1, batch)
        return Plan(self.name, batch=batch,
                    model_bytes=lanes_bytes(graph.n, graph.nnz, kernel="vecsc",
                                            index_bytes=index_dtype.itemsize, level_bytes=2,
                                            batch=round_up(batch, LANES), depth_cap=DEPTH_CAP,
                                            directed=graph.directed, edges=problem.edges),
                    shape={"lanes": round_up(batch, LANES), "index_dtype": str(index_dtype)})

    def sweep(self, resident, sources, progress=None):
        """Raw sums of ``sources``: ``raw[v] = Σ_{s in sources, s != v} ω(s) δ_s(v)`` over
        ordered pairs (not halved for undirected graphs), with ``endpoints`` +ω(s) for every
        vertex reached from s other than s and ω(s) (reached − 1) for s itself, and for edge BC
        each stored edge's share of the dependencies (CSR order). The facts: family, kernel,
        source order, seconds of ordering and of the sweeps, batch size, batches, depth,
        reruns, sources swept with per-vertex exponents, types, peak pool bytes, the memory
        model, ``resident_reused`` and ``upload_seconds``.

        Raises
        ------
        ValueError
            For an unknown kernel name, or repeated sources.
        MemoryError
            When the device cannot hold even the storage format; everything allocated is
            released first. When the format fits but no batch of 32 sources does, the run goes
            one source at a time through the single-source family instead, except for edge BC,
            which that family does not compute: MemoryError then too.
        SlotWeightsDeclined
            With per-slot target weights, when a batch's counts need the wide sweep or the
            device runs out of memory (the caller sweeps unfolded).
        """
        problem = self.problem
        spmv.check_kernel(problem.kernel)
        facts: dict = {}
        sources = np.asarray(sources, dtype=np.int64)
        graph = resident.graph
        if problem.slot_weights is not None:
            raw, edge = self._sweep_slots(resident, sources, progress, facts)
            return Partial(vertex=raw, sources=int(sources.size), edge=edge), facts
        edge = np.zeros(graph.nnz, dtype=np.float64) if problem.edges else None
        with resident.run():
            raw = _run(resident, sources, endpoints=problem.endpoints, kernel=problem.kernel,
                       progress=progress, memory_limit=problem.memory_limit, facts=facts,
                       weights=resident.accumulate_weights(problem.target_weight,
                                                           problem.source_weight),
                       edge_raw=edge, batch=self.batch, level_dtype=self.level_dtype,
                       index_dtype=self.index_dtype, depth_cap=self.depth_cap)
        return Partial(vertex=raw, sources=int(sources.size), edge=edge), facts

    def _sweep_slots(self, resident, sources, progress, facts) -> tuple:
        """The per-slot target weights' run over ``sources`` (lanes_slots.py): the vertex
        sums and, for edge BC, the edge sums (else None); declined when the device is full."""
        import cupy

        plan, problem = self.problem.slot_weights, self.problem
        full = None
        with resident.run():
            try:
                return sweep_slots(resident, plan, sources, kernel=problem.kernel,
                                   progress=progress, memory_limit=problem.memory_limit,
                                   facts=facts, target_weight=problem.target_weight,
                                   batch=self.batch, edges=problem.edges)
            except DeviceFull as exc:
                full = exc.failure  # not exc itself: its traceback holds the run's arrays
            except cupy.cuda.memory.OutOfMemoryError as exc:  # outside allocated()
                full = str(exc)
            finally:
                plan.forget_device()  # the plan's uploads
        resident.release()
        # the caller sweeps unfolded, whose own memory model says whether it fits
        raise SlotWeightsDeclined(f"the device ran out of memory: {full}")


def _run(resident: DeviceResident, sources, *, endpoints, kernel, progress, memory_limit,
         facts, batch, level_dtype, index_dtype, depth_cap, weights=(None, None),
         edge_raw=None) -> np.ndarray:
    """The run inside :meth:`DeviceResident.run`."""
    graph = resident.graph
    n, m = graph.n, graph.nnz
    sources = np.asarray(sources, dtype=np.int64)
    if sources.size == 0 or n == 0:
        return np.zeros(n, dtype=np.float64)
    if np.unique(sources).size != sources.size:
        # the kernels give each source of a chunk its own lane bit of the depth-0 mask
        raise ValueError("sources must be distinct")
    order_began = time.perf_counter()
    sources, order, depth_estimate = sweep_order(graph, sources)
    order_seconds = time.perf_counter() - order_began
    name = kernel if kernel != "auto" else _batched.select_batched(
        n, m, sources.size, depth=depth_estimate)
    forced_index = index_dtype
    index_dtype = np.dtype(index_dtype) if index_dtype is not None else index_dtype_for(n, m)
    level_dtype = np.dtype(level_dtype) if level_dtype is not None else np.dtype(np.int16)
    failure = None
    try:
        raw = _sweep(resident, sources, endpoints=endpoints, name=name, progress=progress,
                     memory_limit=memory_limit, facts=facts, index_dtype=index_dtype,
                     level_dtype=level_dtype, depth_cap=min(n + 2, depth_cap or DEPTH_CAP),
                     forced_batch=batch, order=order, order_seconds=order_seconds,
                     weights=weights, edge_raw=edge_raw)
    except DeviceFull as exc:
        failure = exc.batch, exc.failure  # not exc itself: its traceback holds the run's arrays
    if failure is not None:
        # The run's frames (and the arrays they held) died with the except block.
        resident.release()
        del weights  # nothing of the run stays on the device while the error travels
        raise out_of_memory(n, m, name, *failure, edges=edge_raw is not None)
    if raw is None:
        # Not even 32 lanes fit: one source at a time (its memory model is far smaller), on
        # the parts of the format the single-source family sweeps with.
        resident.keep_only(single_parts(*index_types(resident.graph, forced_index)))
        resident.drop_workspace()
        return run_single(resident, sources, endpoints=endpoints, kernel=kernel,
                          progress=progress, memory_limit=memory_limit, facts=facts,
                          index_dtype=forced_index, weights=weights)
    return raw


def _sweep(resident: DeviceResident, sources: np.ndarray, *, endpoints, name, progress,
           memory_limit, facts, index_dtype, level_dtype, depth_cap, forced_batch, order,
           order_seconds, weights=(None, None), edge_raw=None) -> np.ndarray | None:
    """Sweep batch after batch of ``sources`` (in sweep order) with kernel ``name``, adding the
    edge sums into ``edge_raw`` when given; None when not even 32 lanes fit beside the format
    (vertex sums only). Raises DeviceFull when the device is full, or when 32 lanes do not fit
    beside the format and the edge sums."""
    import cupy

    graph = resident.graph
    n, m = graph.n, graph.nnz
    knobs = current_tuning()
    edges = edge_raw is not None
    # What this run does not sweep with would only shrink its batch: let it go first.
    resident.keep_only(LanesFormat.parts(name, graph.directed), index_dtype)
    if resident.workspace("lanes") is None:
        resident.drop_workspace()
    if not edges:
        resident.drop_edge_accumulator()
    fmt = allocated(lambda: LanesFormat(resident, name, index_dtype), LANES)

    def size_for(remaining: int) -> int:
        if forced_batch is not None:
            return min(forced_batch, remaining)
        # the blocks of a kept workspace are reused, or let go before new ones are allocated;
        # kept edge sums are reused (choose_lanes counts them among the sums)
        free = (device_free_bytes() + resident.workspace_bytes("lanes")
                + resident.edge_bytes())
        return choose_lanes(n, m, remaining, free, index_bytes=index_dtype.itemsize,
                            level_bytes=level_dtype.itemsize, directed=graph.directed,
                            kernel=name, depth_cap=depth_cap, memory_limit=budget,
                            edges=edges)

    # the accumulate weights already on the device come out of the limit's budget
    budget = None if memory_limit is None else max(
        0, memory_limit - DeviceResident.weight_bytes(weights))
    batch = size_for(sources.size)
    if batch == 0:
        if edges:
            # the single-source family, the fallback of vertex sums, sums no edges
            raise DeviceFull("not even 32 sources fit beside the format and the edge sums "
                             "(edge BC runs batched only)", LANES)
        return None
    bc, ctl = allocated(lambda: resident.accumulator(_batched.CTL_SLOTS), batch)
    edge = allocated(resident.edge_accumulator, batch) if edges else None
    dev_sources = cupy.asarray(sources.astype(index_dtype))
    ws = None
    start, batches, depth, reruns, grid = 0, 0, 0, 0, 0
    wide_sources: list = []
    max_in_degree = int(graph.in_degree.max())
    began = time.perf_counter()
    while start < sources.size:
        if ws is None:
            ws = allocated(lambda: workspace_for(resident, n, batch, level_dtype, depth_cap),
                           batch)
            # a kept workspace may hold wider levels or a deeper shift table: sweep with them
            level_dtype, depth_cap = ws.level_dtype, ws.depth_cap
            resident.mark()
        end = min(sources.size, start + batch)
        grid = _batched.sweep_batch(
            name, in_ptr=fmt.in_ptr, in_idx=fmt.in_idx, out_ptr=fmt.out_ptr,
            out_idx=fmt.out_idx, erow=fmt.erow, ecol=fmt.ecol, n=n, m=m,
            stride=round_up(end - start, LANES), sources=dev_sources[start:end],
            level=ws.level, sigma=ws.sigma, t=ws.t, flag0=ws.flag0, flag1=ws.flag1,
            masks=ws.masks, shifts=ws.shifts, dcap=depth_cap, maxbits=ws.maxbits,
            reached=ws.reached, bc=bc, ctl=ctl, endpoints=endpoints,
            max_in_degree=max_in_degree, push_ratio=knobs.push_ratio,
            blocks_per_sm=knobs.batched_blocks_per_sm, tau=weights[0], omega=weights[1],
            edge=edge)
        status, batch_depth = status_of(ctl)
        if status == _batched.WIDE_RANGE:
            # Some lanes' counts spread wider than per-level scaling holds: nothing was added
            # to bc (nor to the edge sums) yet; those sources go to the exponent-per-vertex
            # sweep, the rest reruns.
            marked = ws.reached[:end - start].get() == np.uint64(_batched.WIDE_LANE)
            wide_sources.extend(sources[start:end][marked].tolist())
            sources = np.concatenate([sources[:start], sources[start:end][~marked],
                                      sources[end:]])
            dev_sources = cupy.asarray(sources.astype(index_dtype))
            reruns += 1
            continue
        if status != 0:
            # The batch went deeper than the level type or the shift table: nothing was
            # added to bc yet; widen, re-size and run the same sources again.
            reruns += 1
            level_dtype, depth_cap = widened(status, level_dtype, depth_cap, n)
            ws = None
            resident.drop_workspace()  # its blocks go back to the pool, counted free by size_for
            batch = size_for(sources.size - start)
            if batch == 0:
                raise DeviceFull("no room for 32 lanes after widening", LANES)
            continue
        depth = max(depth, batch_depth)
        batches += 1
        if progress is not None:
            progress.update(end - start)
        start = end
    if wide_sources:
        # out_idx is the CSR pattern: the wide sweep's edge sums align with the kernels'
        accumulate_wide(cupy, fmt.out_ptr, fmt.out_idx, n, np.array(wide_sources), bc,
                        endpoints=endpoints, progress=progress, target_weight=weights[0],
                        source_weight=weights[1], edge_raw=edge)
    raw = bc.get()
    if edges:
        edge_raw += edge.get()
    seconds = time.perf_counter() - began
    if facts is not None:
        facts.update(family="lanes", kernel=name, order=order, order_seconds=order_seconds,
                     sweep_seconds=seconds, batch=batch, batches=batches,
                     depth=depth, reruns=reruns, wide_sources=len(wide_sources),
                     grid=grid, level_dtype=str(level_dtype), index_dtype=str(index_dtype),
                     depth_cap=depth_cap, peak_pool_bytes=resident.peak - resident.baseline,
                     model_bytes=lanes_bytes(n, m, kernel=name,
                                              index_bytes=index_dtype.itemsize,
                                              level_bytes=level_dtype.itemsize,
                                              batch=round_up(batch, LANES),
                                              depth_cap=depth_cap, directed=graph.directed,
                                              edges=edges),
                     edge_sums=edges,
                     **resident.run_facts())
    return raw
