"""The layers family's second phase: the sweep of a batch's shortest-path DAG on the device,
from its final distances (layers_distances.py), with plain float64 counts.

A graph small enough is swept a source per block in shared memory (spmv/kernels/block_sweep.cu);
others a hop layer per launch (spmv/kernels/layers.cu): the in-degrees and DAG masks of every
slot, the forward layers in Kahn's order (σ pushed to the DAG children), and the backward
layers, deepest first, with the accumulate step of spmv/kernels/accumulate.cuh

    δ(v) = Σ_{DAG children w} σ(v)/σ(w) · (τ(w) + δ(w)),   bc += ω Δ   (one product a batch)

and, for edge BC, each DAG edge's ω-weighted term added into its edge sum (CSR order). Lanes
whose counts reach +inf add nothing and are handed back for the exponent-per-vertex sweep
(turbobc/engines/wide.py).
"""

from __future__ import annotations

import time

import numpy as np

from spmv import _layers
from spmv import _arrays
from spmv._module import c_index_type

from turbobc.engines.protocol import SlotCounts
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.chain_terms import chain_terms
from turbobc.engines.gpu.layers_distances import queued
from turbobc.engines.protocol import SlotWeightsDeclined

__all__ = ["sweep_dag", "DistanceCounts", "dag_mask_layout", "phase_done",
           "SWEEP_BYTES_PER_VERTEX", "SWEEP_AUTO_BYTES"]

SWEEP_BYTES_PER_VERTEX = 24
"""Shared memory of ``bcl_block_sweep`` per vertex: distance and σ (8 each), the DAG parents
left (then the layer) and the place in the order (4 each); δ stays in global memory."""

SWEEP_AUTO_BYTES = 200 * 1024
"""``Tuning.gpu_block_sweep="auto"`` sweeps a source per block when its shared memory
(:data:`SWEEP_BYTES_PER_VERTEX` per vertex) is at most this: n up to 8,500 (two blocks a
multiprocessor up to about 4,700)."""


def sweep_dag(ptr, idx, lengths, n, sources, bc, edge, endpoints, weights, batch,
              batch_distances, progress, seconds=None, plan=None,
              batches=None) -> np.ndarray:
    """The ``"kernels"`` DAG sweep (:data:`PATHS`) of ``sources``, ``batch`` at a time,
    adding into ``bc`` (and ``edge``); returns the sources whose counts reached +inf (nothing
    of them added), for the wide path. ``seconds``, when given, gets the time of the
    in-degree launch, the forward layers and the backward layers added (``"indegree"``,
    ``"forward"``, ``"backward"``), or of the sweep a source per block (``"block"``), each
    phase waited for on the device.

    A graph small enough (``Tuning.gpu_block_sweep``, :func:`_block_sweep`) is swept a source
    per block in shared memory, one launch a batch (``bcl_block_sweep``); others a layer per
    launch (:func:`_sweep_layers`). With ``plan`` (per-slot target weights, always by layers)
    the slots are its ``batches``: between the forward and the backward layers τ of each slot
    is own(b) · τ plus what the plan adds (:class:`DistanceCounts`), ω is 1, and counts past
    float64's range decline the plan."""
    import cupy

    itype = c_index_type(idx.dtype)
    graph = _layers.LayerGraph(ptr, idx, lengths, n)
    tau, omega = weights
    if tau is None:
        tau = cupy.empty(n, dtype=cupy.float64)
        _arrays.fill(tau, 1.0)
    per_block = _block_sweep(n, itype) if plan is None else None
    masks = None if per_block is not None else _Masks(ptr, n)
    wide = []
    if batches is None:
        batches = [sources[start:start + batch] for start in range(0, sources.size, batch)]
    for index, chunk in enumerate(batches):
        B = chunk.size
        dist = batch_distances(chunk).ravel()
        chunk_dev = cupy.asarray(chunk)
        lane_weight = (cupy.asarray(np.ones(B)) if omega is None or plan is not None
                       else _arrays.gather(omega, chunk_dev))
        began = time.perf_counter()
        add_credits = None
        if per_block is not None:
            kernel, shared = per_block
            delta = cupy.empty(B * n, dtype=cupy.float64)
            skip = cupy.zeros(B, dtype=cupy.uint8)
            _layers.block_sweep(kernel, graph, chunk_dev, dist, delta,
                                _layers.SumArrays(tau=tau, lane_weight=lane_weight, skip=skip,
                                                  edge=edge, tau_per_slot=False), shared)
            out_of_range = skip  # 1 for a lane whose counts reached +inf
            del skip
            phase = "block"
        else:
            delta, out_of_range, add_credits, began = _sweep_layers(
                graph, itype, masks, n, chunk, dist, tau, lane_weight, edge, plan, index,
                seconds, began)
            phase = "backward"
        # bc += ω Δ (1 x B times B x n), without the sources' own δ (their layer fed only the
        # edge sums); the lanes out of range kept δ = 0
        _arrays.add_weighted_rows(bc, lane_weight, delta, B, n)
        if add_credits is not None:
            add_credits()  # on the host while the device ends the backward layers
        phase_done(seconds, phase, began)
        if endpoints:
            # +ω(s) for every vertex reached from s other than s, and s gets ω(s) (reached − 1)
            reached = cupy.isfinite(dist.reshape(B, n)) & (out_of_range[:, None] == 0)
            reached[cupy.arange(B), chunk_dev] = False
            bc += (reached * lane_weight[:, None]).sum(axis=0)
            bc[chunk_dev] += reached.sum(axis=1) * lane_weight
            del reached
        bad = out_of_range.get() != 0
        wide.extend(chunk[bad].tolist())
        swept = int(B - bad.sum()) if plan is None else int(np.count_nonzero(
            plan.own_weights(index)))  # a plan's helper slots are no sources of the run
        if progress is not None and swept:
            progress.update(swept)
        # the batch's slot arrays go now, not when the next batch's distances (which need
        # the room) have been found and the names rebound: BYTES_PER_HOP_SLOT is one batch's
        del dist, delta, out_of_range
    return np.asarray(wide, dtype=np.int64)


class _Masks:
    """What every batch's layers share: the mean degree (the queue-or-mark rule) and the DAG
    masks' layout (a word per vertex, one per 32 out-edges past 32: layers.cu)."""

    def __init__(self, ptr, n: int):
        import cupy

        self.mean_degree = max(1.0, int(ptr[-1]) / max(n, 1))
        at, self.words = dag_mask_layout(ptr.get())
        self.mask_at = cupy.asarray(at)


def _sweep_layers(graph, itype: str, masks: _Masks, n, chunk, dist, tau, lane_weight, edge,
                  plan, index, seconds, began):
    """One batch's DAG sweep a layer per launch: ``bcl_indegree``, the forward layers
    (``bcl_forward``, the next layer queued or marked and listed), the plan's target weights
    when there is one, and the backward layers (``bcl_backward``). Returns δ (B n, 0 at the
    sources and for the lanes out of range), the lanes whose counts reached +inf, the plan's
    credits to add (or None) and the time the backward layers began."""
    import cupy

    B = chunk.size
    total = B * n
    remaining = cupy.zeros(total, dtype=cupy.int32)
    dag = cupy.empty(B * masks.words, dtype=cupy.uint32)  # each slot's DAG masks (layers.cu)

    def slots(sigma=None, delta=None, remaining=None):  # the DagSlots of a phase's arrays
        return _layers.DagArrays(dist=dist, dag=dag, mask_at=masks.mask_at, words=masks.words,
                                 total=total, sigma=sigma, delta=delta, remaining=remaining)

    _layers.indegree(graph, itype, slots(remaining=remaining))
    began = phase_done(seconds, "indegree", began)
    lane_keys = cupy.asarray(np.arange(B, dtype=np.int64) * n + chunk)
    sigma = cupy.zeros(total, dtype=cupy.float64)
    _arrays.put(sigma, lane_keys, 1.0)
    forward = slots(sigma, remaining=remaining)
    order = cupy.empty(total, dtype=cupy.int64)
    _arrays.copy_into(order, lane_keys)
    offsets = [0, B]
    count = cupy.zeros(1, dtype=cupy.uint64)
    # the next layer's slots: queued by the kernel after a small layer, marked and listed
    # in slot order after a wide one (QUEUE_BELOW_SHARE, as the distances' rounds)
    marks = cupy.zeros(-(-total // 16) * 16, dtype=cupy.uint8)
    while offsets[-1] < total:
        low, high = offsets[-2], offsets[-1]
        queued_layer = queued(high - low, masks.mean_degree, total)
        count.fill(0)
        _layers.forward(graph, itype, forward, layer=order[low:], size=high - low,
                        queued=queued_layer, next=order[high:], count=count, marks=marks)
        if queued_layer:
            added = int(count.get()[0])
        else:
            listed = _layers.list_marks(marks, itype)
            added = int(listed.size)
            _arrays.copy_into(order[high:], listed)
            del listed
        if added == 0:
            break
        offsets.append(high + added)
    del remaining, marks, forward  # every count is 0 now
    began = phase_done(seconds, "forward", began)
    out_of_range = _arrays.rows_inf(sigma, B, n)  # 1 where a lane's count reached +inf
    skip = out_of_range
    slot_tau, add_credits = tau, None
    if plan is not None:
        if int(out_of_range.max()):  # CuPy's max: CUB, compiled ahead
            raise SlotWeightsDeclined("path counts pass float64's range")
        # τ of slot b = own(b) τ, plus the plan's terms from both ends' distances and σ
        own = cupy.asarray(plan.own_weights(index))
        slot_tau = _arrays.outer(own, tau)
        add_credits = plan.add_target_weights(
            index, DistanceCounts(dist.reshape(B, n), sigma.reshape(B, n), slot_tau))
    delta = cupy.zeros(total, dtype=cupy.float64)
    backward = slots(sigma, delta)
    sums = _layers.SumArrays(tau=slot_tau, lane_weight=lane_weight, skip=skip, edge=edge,
                             tau_per_slot=plan is not None)
    last = 0 if edge is not None else 1  # the sources' layer only feeds their edges
    for d in range(len(offsets) - 2, last - 1, -1):
        low, high = offsets[d], offsets[d + 1]
        _layers.backward(graph, itype, backward, sums, layer=order[low:], size=high - low)
    _arrays.put(delta, lane_keys, 0.0)
    return delta, out_of_range, add_credits, began


def _block_sweep(n: int, itype: str):
    """``(kernel, shared bytes)`` of ``bcl_block_sweep`` when a source's sweep fits a
    block's shared memory (:data:`SWEEP_BYTES_PER_VERTEX` per vertex) and
    ``Tuning.gpu_block_sweep`` allows it (``"auto"``: up to :data:`SWEEP_AUTO_BYTES`); else
    None (a layer per launch)."""
    allowed = current_tuning().gpu_block_sweep
    if allowed not in (True, False, "auto"):
        raise ValueError(f"Tuning.gpu_block_sweep must be True, False or 'auto'; got "
                         f"{allowed!r}")
    shared = SWEEP_BYTES_PER_VERTEX * n
    if not allowed or n == 0 or (allowed == "auto" and shared > SWEEP_AUTO_BYTES):
        return None
    kernel = _layers.per_block_kernel("bcl_block_sweep", itype, shared)
    return None if kernel is None else (kernel, shared)


class DistanceCounts(SlotCounts):
    """A batch's distances, counts and per-slot τ on the device (B x n CuPy arrays), for
    per-slot target weights (:class:`turbobc.engines.protocol.SlotCounts`): the chains of a weighted
    graph are measured in lengths, so the distances stand for the levels (-1 where not
    reached); the counts are plain float64 (no exponent)."""

    def __init__(self, dist, sigma, tau):
        import cupy

        self.xp, self.n = cupy, dist.shape[1]
        self.chunk_entries = 1 << 62  # chain_terms needs no scratch: every chain at once
        self._dist, self._sigma, self.tau = dist, sigma, tau

    def levels(self, lanes):
        dist = self._dist[self.xp.asarray(lanes)]
        return self.xp.where(self.xp.isinf(dist), -1.0, dist)

    def counts(self, lanes):
        return self._sigma[self.xp.asarray(lanes)], None

    def at(self, lanes, vertices):
        flat = self.xp.asarray(np.asarray(lanes, dtype=np.int64) * self.n
                               + np.asarray(vertices, dtype=np.int64))
        dist = _arrays.gather(self._dist.ravel(), flat).get()
        return (np.where(np.isinf(dist), -1.0, dist),
                _arrays.gather(self._sigma.ravel(), flat).get())

    def add_target_weights(self, lanes, values) -> None:
        """τ of slot ``lanes[p]`` += ``values[p]`` (a row of n; lanes may repeat)."""
        _arrays.add_rows(self.tau, self.n, self.xp.asarray(np.asarray(lanes, dtype=np.int64)),
                         self.xp.ascontiguousarray(values, dtype=np.float64))

    def add_target_entries(self, lanes, vertices, values) -> None:
        """τ of slot ``lanes[p]`` at vertex ``vertices[p]`` += ``values[p]`` (host arrays)."""
        flat = (np.asarray(lanes, dtype=np.int64) * self.n
                + np.asarray(vertices, dtype=np.int64))
        _arrays.add_entries(self.tau, self.xp.asarray(flat),
                            self.xp.asarray(np.asarray(values, dtype=np.float64)))

    def chain_terms(self, plan, rows):
        """:meth:`SlotCounts.chain_terms` in one launch of ``bcc_slot_terms``
        (spmv/kernels/chains.cu): a block per (chain, stretch of vertices), each target's
        class found by a binary search over its chain's doubled positions."""
        counts = {"dist": self._dist, "sigma": self._sigma, "scale": plan.scale}
        return chain_terms("slots", counts, plan, rows, self.tau, self.n,
                           classes=plan.class_rows(rows))


def dag_mask_layout(indptr: np.ndarray) -> tuple[np.ndarray, int]:
    """Where each vertex's DAG mask words start within a source's masks (int64, n + 1
    entries), and how many words a source takes: one word per vertex of at most 32
    out-edges (none too), ceil(degree / 32) for a wider one (spmv/kernels/layers.cu,
    ``bcl_indegree``). At most n + m / 32 words."""
    degree = np.diff(np.asarray(indptr, dtype=np.int64))
    per_vertex = np.maximum(1, -(-degree // 32))
    at = np.zeros(degree.size + 1, dtype=np.int64)
    np.cumsum(per_vertex, out=at[1:])
    return at, int(at[-1])


def phase_done(seconds: dict | None, phase: str, began: float) -> float:
    """seconds[phase] += the time since ``began``, once the device has done its work; the
    time now (``seconds`` None: no timing, no wait)."""
    if seconds is None:
        return began
    import cupy

    cupy.cuda.get_current_stream().synchronize()
    now = time.perf_counter()
    seconds[phase] += now - began
    return now

