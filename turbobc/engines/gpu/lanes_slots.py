"""The lanes family with per-slot target weights (chain folding, ``Problem.slot_weights``):
the plan's batches, a forward launch, the plan's target weights written into a τ block laid out
as ``t``, and a backward launch with it (:func:`sweep_slots`); :class:`LaneCounts` shows the
plan a batch's levels and counts where they lie, on the device. Edge BC launches the EdgeSums
instantiation of the same kernels (spmv/kernels/batched_backward.cuh): the term of each DAG
edge v -> w is σ(v)/σ(w) · (τ(w) + δ(w)) = σ̂(v) 2^-shift u(w), u(w) = τ(w)/σ̂(w) + t(w)
written from the slot's τ (``tau_slot``) when w is finished, so the edge sums take the slot's
target weights as the vertex sums do (ω is 1: no ``omega`` is passed)."""

from __future__ import annotations

import time

import numpy as np

from spmv import _batched

from turbobc.engines.protocol import SlotCounts
from turbobc._graph import index_dtype_for
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.chain_terms import chain_terms
from turbobc.engines.gpu.lanes_blocks import (LanesFormat, Workspace, status_of, widened,
                                              workspace_for)
from turbobc.engines.gpu.lanes_order import locality_order
from turbobc.engines.gpu.memory import (DEPTH_CAP, LANES, device_free_bytes, lanes_bytes,
                                        round_up, slot_lanes)
from turbobc.engines.gpu.resident import DeviceResident, allocated
from turbobc.engines.protocol import SlotWeightsDeclined

__all__ = ["sweep_slots", "LaneCounts"]


def sweep_slots(resident: DeviceResident, plan, sources, *, kernel, progress, memory_limit,
                facts, target_weight, batch: int | None = None,
                edges: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """The batches of ``plan`` (per-slot target weights, ``Problem.slot_weights``) over
    ``sources`` (the run's): per batch a forward launch, the plan's target weights written
    into a τ block laid out as ``t`` (own weight ⊗ ``target_weight``, plus the plan's terms),
    and a backward launch with it. Returns the vertex sums and, with ``edges`` (edge BC: the
    EdgeSums kernels), the edge sums (one per stored edge, CSR order; else None), each with
    the closed-form credit of the folded sources the batches carry.

    Raises :class:`~turbobc.engines.protocol.SlotWeightsDeclined` when a batch's counts need
    the wide sweep, or when the plan's batches no longer fit once a batch needs wider
    levels or a deeper shift table."""
    import cupy

    graph = resident.graph
    n, m = graph.n, graph.nnz
    knobs = current_tuning()
    order_began = time.perf_counter()
    rank, order, depth_estimate = locality_order(graph)
    order_seconds = time.perf_counter() - order_began
    name = kernel if kernel != "auto" else _batched.select_batched(
        n, m, len(sources), depth=depth_estimate if depth_estimate >= 0 else None)
    index_dtype = index_dtype_for(n, m)
    level_dtype, depth_cap = np.dtype(np.int16), min(n + 2, DEPTH_CAP)
    resident.keep_only(LanesFormat.parts(name, graph.directed), index_dtype)
    resident.drop_workspace()
    if not edges:
        resident.drop_edge_accumulator()
    fmt = allocated(lambda: LanesFormat(resident, name, index_dtype), LANES)
    # the plan's arrays on the device (prefix sums, chain of each vertex, r: 24 n) and its
    # per-chain arrays and histograms (about 200 bytes a chain, the histograms 16 (2L + 1)),
    # with room to spare
    chains = plan.chains
    scratch = 64 * (n + 1024) + 200 * chains.count + 32 * int(chains.inner.size
                                                              + 2 * chains.count)

    def size_for() -> int:
        if batch is not None:
            return batch
        # the τ block (8 bytes a slot), the plan's device arrays and the edge sums come out
        # too (kept edge sums are reused)
        return slot_lanes(n, m, device_free_bytes() + resident.workspace_bytes("lanes")
                          + resident.edge_bytes(),
                          index_bytes=index_dtype.itemsize, level_bytes=level_dtype.itemsize,
                          depth_cap=depth_cap, directed=graph.directed, kernel=name,
                          scratch=scratch, memory_limit=memory_limit, edges=edges)

    capacity = size_for()
    if capacity < LANES:
        raise SlotWeightsDeclined("not even 32 slots fit beside the format and the τ block")
    batches = plan.batches(capacity, rank, sources=sources)
    bc, ctl = allocated(lambda: resident.accumulator(_batched.CTL_SLOTS), capacity)
    # edge BC: E<A> += Σ̂_{d−1}ᵀ U 2^-shift_d with the slots' own τ in U (the EdgeSums kernels)
    edge = allocated(resident.edge_accumulator, capacity) if edges else None
    base = cupy.ones(n) if target_weight is None else cupy.asarray(
        np.asarray(target_weight, dtype=np.float64))
    max_in_degree = int(graph.in_degree.max())
    began = time.perf_counter()
    ws, depth, reruns, target_seconds, grid = None, 0, 0, 0.0, 0
    for index, slots in enumerate(batches):
        stride = round_up(slots.size, LANES)
        dev_slots = cupy.asarray(slots.astype(index_dtype))
        common = dict(in_ptr=fmt.in_ptr, in_idx=fmt.in_idx, out_ptr=fmt.out_ptr,
                      out_idx=fmt.out_idx, erow=fmt.erow, ecol=fmt.ecol, n=n, m=m,
                      stride=stride, sources=dev_slots, bc=bc, ctl=ctl, endpoints=False,
                      max_in_degree=max_in_degree, push_ratio=knobs.push_ratio,
                      blocks_per_sm=knobs.batched_blocks_per_sm, edge=edge)
        while True:
            if ws is None:
                ws = allocated(lambda: workspace_for(resident, n, capacity, level_dtype,
                                                  depth_cap), capacity)
                level_dtype, depth_cap = ws.level_dtype, ws.depth_cap
                tau = allocated(lambda: cupy.empty(ws.batch * n, dtype=np.float64), capacity)
            work = dict(level=ws.level, sigma=ws.sigma, t=ws.t, flag0=ws.flag0,
                        flag1=ws.flag1, masks=ws.masks, shifts=ws.shifts, dcap=depth_cap,
                        maxbits=ws.maxbits, reached=ws.reached)
            _batched.sweep_batch(name, **common, **work, phase=_batched.PHASE_FORWARD)
            status, batch_depth = status_of(ctl)
            if status == 0:
                break
            if status == _batched.WIDE_RANGE:
                raise SlotWeightsDeclined("path counts spread wider than per-level scaling "
                                          "holds")
            # deeper than the level type or the shift table: widen and run it again
            reruns += 1
            level_dtype, depth_cap = widened(status, level_dtype, depth_cap, n)
            ws = tau = None
            resident.drop_workspace()
            if size_for() < capacity:
                raise SlotWeightsDeclined("the plan's batches do not fit with wider levels")
        depth = max(depth, batch_depth)
        t0 = time.perf_counter()
        blocks = (stride // LANES, n, LANES)
        own = np.zeros(stride)
        own[:slots.size] = plan.own_weights(index)
        tau_block = tau[:stride * n].reshape(blocks)
        cupy.multiply(base[None, :, None], cupy.asarray(own).reshape(-1, 1, LANES),
                      out=tau_block)
        add_credits = plan.add_target_weights(
            index, LaneCounts(ws, tau_block, n, stride, batch_depth))
        target_seconds += time.perf_counter() - t0
        resident.mark()
        grid = _batched.sweep_batch(name, **common, **work, tau_slot=tau[:stride * n],
                                    phase=_batched.PHASE_BACKWARD)
        add_credits()  # on the host while the backward sweep runs
        if progress is not None:
            swept = int(np.count_nonzero(own))
            if swept:
                progress.update(swept)
    raw = bc.get()
    edge_raw = edge.get() if edges else None
    # what the folded sources of the run add in closed form: to the vertices (vertex BC) or
    # to the chains' edges (edge BC)
    raw += plan.credit
    if edge_raw is not None:
        edge_raw += plan.edge_credit()
    if facts is not None:
        facts.update(family="lanes", kernel=name, order=order, order_seconds=order_seconds,
                     sweep_seconds=time.perf_counter() - began, batch=capacity,
                     batches=len(batches), depth=depth, reruns=reruns,
                     slot_weight_seconds=target_seconds, grid=grid,
                     model_bytes=lanes_bytes(n, m, kernel=name,
                                              index_bytes=index_dtype.itemsize,
                                              level_bytes=level_dtype.itemsize,
                                              batch=capacity, depth_cap=depth_cap,
                                              directed=graph.directed, edges=edges)
                     + 8 * n * capacity + scratch, level_dtype=str(level_dtype), edge_sums=edges,
                     index_dtype=str(index_dtype), depth_cap=depth_cap,
                     peak_pool_bytes=resident.peak - resident.baseline, **resident.run_facts())
    return raw, edge_raw


class LaneCounts(SlotCounts):
    """A batch's levels and counts on the device, for per-slot target weights
    (:class:`turbobc.engines.protocol.SlotCounts`): lane b of vertex v is entry ((b / 32) n + v) 32
    + b % 32 of each block. It serves :meth:`chain_terms` with a kernel and :meth:`at` by
    gathers, so it needs none of the (chains, n) blocks (``levels``, ``counts``,
    ``add_target_weights``) the array code of the base class reads."""

    def __init__(self, ws: "Workspace", tau_block, n: int, stride: int, depth: int):
        import cupy

        self.xp, self.n = cupy, n
        self.chunk_entries = 1 << 62  # chain_terms needs no scratch: every chain at once
        blocks = (stride // LANES, n, LANES)
        self._level = ws.level[:stride * n].reshape(blocks)
        self._sigma = ws.sigma[:stride * n].reshape(blocks)
        self._tau = tau_block
        # σ = σ̂ 2^E, E the sum of the shifts of the levels up to the vertex's (per lane)
        shifts = ws.shifts[:(depth + 1) * stride].reshape(depth + 1, stride)
        self._exponent = (cupy.cumsum(shifts, axis=0, dtype=np.int32) if bool(shifts.any())
                          else None)
        self._stride = stride

    def add_target_entries(self, lanes, vertices, values) -> None:
        lanes, vertices = self.xp.asarray(lanes), self.xp.asarray(vertices)
        self.xp.add.at(self._tau, (lanes // LANES, vertices, lanes % LANES),
                       self.xp.asarray(values))

    def at(self, lanes, vertices):
        cupy = self.xp
        lanes, vertices = cupy.asarray(lanes), cupy.asarray(vertices)
        where = (lanes // LANES, vertices, lanes % LANES)
        level = self._level[where].astype(np.int64)
        sigma = self._sigma[where]
        if self._exponent is not None:
            sigma = cupy.ldexp(sigma, self._exponent[cupy.maximum(level, 0), lanes])
        return cupy.asnumpy(level), cupy.asnumpy(sigma)

    def chain_terms(self, plan, rows):
        """:meth:`SlotCounts.chain_terms` in one launch of ``bcc_lane_terms``
        (spmv/kernels/chains.cu): a block per (chain, stretch of vertices)."""
        counts = {"level": self._level, "sigma": self._sigma, "exponent": self._exponent,
                  "lanes": self._stride}
        return chain_terms("lanes", counts, plan, rows, self._tau, self.n)
