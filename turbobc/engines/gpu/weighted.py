"""Weighted BC on the GPU engine: distances by Bellman–Ford on the device, then the
exponent-per-vertex sweep of the shortest-path DAG (turbobc.engines.wide) on CuPy.

Used by :class:`~turbobc.engines.gpu.engine.GpuSweeper` for every weighted problem
(``Graph.lengths``), vertex and edge BC, any number of sources. Per batch of B sources:

1. distances ``dist[b · n + v]`` (float64, +inf where not reached) by frontier Bellman–Ford
   rounds (spmv/kernels/weighted.cu, ``bcw_relax``): every (source, vertex) slot lowered in
   the last round relaxes its out-edges with an atomic min on the float64 bit pattern (the
   order of non-negative doubles), until a round lowers nothing. The fixed point is the least
   one, d(w) = min_v fl(d(v) + len(v, w)): the distances of the CPU engine's min-plus sweep,
   and the sums networkx's Dijkstra compares. A round's frontier is found by a scan of marks
   or from a queue, whichever its size favours, and the rounds run in near-far phases
   (:func:`distances`). A graph whose n distances fit a block's shared memory has each
   source's distances found by one block instead (``bcw_block_distances``, the same fixed
   point);
2. the sweep of :func:`turbobc.engines.wide.accumulate_wide` with the DAG test
   d(v) + len(v, w) == d(w) (exact float64 equality), on the device: path counts as
   (mantissa, exponent) pairs over the DAG's hop layers (Kahn's order), the dependencies
   pulled from DAG children on any deeper layer, the accumulate step of
   spmv/kernels/accumulate.cuh (τ, ω), the endpoint terms and, for edge BC, the edge sums
   (CSR order). No count over- or underflows, so no source ever needs a second path.

This is not (yet) the batched persistent kernel family (spmv/kernels/batched.cuh). By
default (``Tuning.gpu_weighted_path``, ``"kernels"``, :data:`PATHS`) the DAG is swept with
three kernels of spmv/kernels/weighted.cu and plain float64 counts, lanes whose counts reach
+inf going to the wide sweep; the other path, ``"wide"``, runs that sweep for every lane, as
CuPy array operations over lists of (source, vertex) entries, one layer at a time.
``kernel=`` is accepted and ignored.

Device memory per batch of B sources, n vertices, m stored edges: on the ``"kernels"`` path
:data:`BYTES_PER_HOP_SLOT` per (source, vertex) slot; on the ``"wide"`` path (and for the
kernels' lanes out of float64 range) about :data:`BYTES_PER_SLOT` per slot (distances, the
sweep's dense counts, exponents, in-degrees and δ, its level lists) and up to
:data:`BYTES_PER_EDGE_SLOT` per (source, stored edge) (one level's edge expansion, at worst
every edge); besides, the CSR format, the lengths (8 m) and bc (8 n), and the edge sums (8 m)
for edge BC.
"""

from __future__ import annotations

import time

import numpy as np

from turbobc.engines.protocol import SlotCounts
from turbobc._tuning import current as current_tuning
from turbobc._graph import index_dtype_for
from turbobc.engines.gpu.resident import DeviceResident
from turbobc.engines.wide import WIDE_BATCH_ENTRIES, accumulate_wide

__all__ = ["accumulate_on", "choose_batch", "memory_model", "hop_source_bytes", "distances",
           "chain_scratch_bytes",
           "dag_mask_layout", "WEIGHTED_PARTS",
           "BYTES_PER_SLOT", "BYTES_PER_HOP_SLOT", "BYTES_PER_EDGE_SLOT"]

WEIGHTED_PARTS = ("csr_ptr", "csr_idx", "lengths")
"""The format parts a weighted run sweeps with (turbobc/engines/gpu/resident.py)."""

BYTES_PER_SLOT = 112
"""Device bytes per (source, vertex) slot of a batch of the wide sweep (``"wide"`` path):
distances 8, the DAG sweep's dense M, E, in-degree, pending count and δ (40), its level lists
(key, M, E: 24) and its δ lists (16), rounded up; more than the distances' own arrays take
while they are found (:data:`BYTES_PER_HOP_SLOT`)."""

BYTES_PER_HOP_SLOT = 64
"""Device bytes per (source, vertex) slot of a batch of the layer kernels (the ``"kernels"``
path, weighted or ``hops``): the larger of its two phases, the distances and the layer sweep.
The distances (:func:`distances`) keep dist 8, the frontier marks 1, the round stamps 4 and
the near-far phase stamps 4, the queue 8 and the far list 8 (33), and at the peak of a round
or a phase's end the next frontier 8, the copy a sort makes 8 and its scratch, or a phase's
distances and tests of the far keys (8 and 1): up to about 58. The layer sweep (the
distances' other arrays freed by then): dist 8, in-degree 4 and the next layer's marks 1 (both
freed after the forward layers; a marked layer's listing takes up to 8 more while it is copied
into the layer order), the vertices' first mask words (8 (n + 1), once),
the DAG edge masks 4 (and a word per 32 out-edges of the vertices of more than 32, counted per
source by ``hop_source_bytes``), σ 8, layer order 8, δ 8 and the endpoint terms' temporaries
(10): 41 at most in the forward layers, 46 in the backward ones. Rounded up. The lanes out of float64 range go to the
wide sweep in batches of the full model. (The records of 2026-11-25 were taken at 48.)"""

BYTES_PER_EDGE_SLOT = 64
"""Device bytes per (source, stored edge) of a weighted batch: the expansion of one level's
out-edges (position, offset, edge, head, child key, tests: about 7 int64), at worst all."""

RELAX_BLOCK = 256

BLOCK_THREADS = 256
"""Threads of each block of ``bcw_block_distances`` (a source per block)."""

BLOCK_AUTO_BYTES = 64 * 1024
"""``Tuning.gpu_block_distances="auto"`` finds the distances a source per block when a block's
shared memory (8 bytes and a bit per vertex) is at most this, so that three blocks or more
share a multiprocessor: n up to about 8,000. H200, lengths 1..100, weighted BC end to end,
blocks against rounds (bench/results/weighted_distances-20261125T115109Z.json): ego-Facebook
(32 KiB) 0.047 against 0.060 s, road-minnesota 0.020 against 0.055, power 0.019 against 0.035,
ca-GrQc 0.021 against 0.031, wiki-Vote (57 KiB) 0.060 against 0.069; delaunay_n14 (130 KiB,
one block a multiprocessor, hundreds of barrier rounds a source) 1.12 against 0.25 s."""

SWEEP_THREADS = 1024
"""Threads of each block of ``bcw_block_sweep`` (a source per block: a warp per vertex of a
layer)."""

SWEEP_BYTES_PER_VERTEX = 24
"""Shared memory of ``bcw_block_sweep`` per vertex: distance and σ (8 each), the DAG parents
left (then the layer) and the place in the order (4 each); δ stays in global memory."""

SWEEP_AUTO_BYTES = 200 * 1024
"""``Tuning.gpu_block_sweep="auto"`` sweeps a source per block when its shared memory
(:data:`SWEEP_BYTES_PER_VERTEX` per vertex) is at most this: n up to 8,500 (two blocks a
multiprocessor up to about 4,700)."""

MARK_THREADS = 256
"""Threads per block of bcw_count_marks and bcw_list_marks (``MARK_THREADS`` in weighted.cu)."""

QUEUE_BELOW_SHARE = 64
"""A Bellman–Ford round queues what it lowers (and the queue is sorted) when its frontier's
edges, estimated as frontier x mean degree, are under 1/QUEUE_BELOW_SHARE of the B x n slots;
otherwise it marks them and the marks are listed (:func:`_list_marks`). H200, lengths 1..100,
seconds of the distances with 4 / 16 / 64 / 256: delaunay_n16 (8,192 sources) 2.00 / 0.49 /
0.38 / 0.37, road-luxembourg-osm (4,096) 1.17 / 1.09 / 1.12 / 1.38, ego-Facebook (4,039) 0.057 /
0.054 / 0.054 / 0.053 (bench/results/weighted_queue_share-20261125T0818Z.log)."""


PATHS = ("wide", "kernels")
"""How the DAG is swept after the distances (``Tuning.gpu_weighted_path``, default
``"kernels"``): ``"wide"``, engines/wide.py's sweep on CuPy (mantissa and exponent per count;
many small launches per layer), or ``"kernels"``, the layer kernels of
spmv/kernels/weighted.cu (``bcw_indegree``, ``bcw_forward``, ``bcw_backward``: plain float64
counts, three launches per layer, lanes whose counts reach +inf swept again by the wide
path), the default since their times were recorded (``Tuning.gpu_weighted_path``)."""


def chain_scratch_bytes(n: int, chains: int, inner: int) -> int:
    """Device bytes of a chain-folding plan beside a weighted batch (``bcw_chain_terms``):
    its arrays (r and the chain of each vertex: 16 n; the prefix sums and the class lookup:
    16 per inner vertex, 24 per chain), a launch's per-chain arguments (about 200 bytes a
    chain) and its class histograms (two of 2L + 1 doubles a chain: 32 per inner vertex, 48
    per chain), and a MiB spare."""
    return 16 * n + 48 * inner + 272 * chains + (1 << 20)


def format_bytes(n: int, m: int, index_bytes: int) -> int:
    """Bytes of what a weighted run keeps of the graph: CSR (b (n + 1 + m)) and the lengths."""
    return index_bytes * (n + 1 + m) + 8 * m


def hop_source_bytes(n: int, m: int) -> int:
    """Device bytes per source of a batch of the layer kernels: :data:`BYTES_PER_HOP_SLOT` per
    vertex, and the DAG mask words past one per vertex (a 32-bit word per 32 out-edges of the
    vertices of more than 32: at most m / 32 words, ``dag_mask_layout``)."""
    return BYTES_PER_HOP_SLOT * n + 4 * (m // 32)


def memory_model(n: int, m: int, *, batch: int, index_bytes: int, edges: bool = False,
                 hops: bool = False) -> int:
    """Device bytes of a weighted run with ``batch`` sources per batch (module docstring);
    ``hops``: of a run of the layer kernels (:data:`BYTES_PER_HOP_SLOT`), unweighted or the
    ``"kernels"`` path of a weighted one."""
    per_source = (hop_source_bytes(n, m) if hops
                  else BYTES_PER_SLOT * n + BYTES_PER_EDGE_SLOT * m)
    return format_bytes(n, m, index_bytes) + 8 * n + (8 * m if edges else 0) + batch * per_source


def choose_batch(n: int, m: int, num_sources: int, free_bytes: int, *, index_bytes: int = 4,
                 edges: bool = False, memory_limit: int | None = None,
                 memory_fraction: float = 0.8, hops: bool = False,
                 slot_scratch: int | None = None) -> int:
    """Sources per weighted batch: as many as ``memory_fraction`` of the free bytes (or the
    ``memory_limit``) hold beside the format and the sums, at most ``num_sources`` and, for
    the wide sweep, ``WIDE_BATCH_ENTRIES // n``, and at least 1 (0 only when there is no
    source). The batches it implies are as even as possible. ``hops``: the batch of the layer
    kernels, weighted (the ``"kernels"`` path) or not (:data:`BYTES_PER_HOP_SLOT` per slot, no
    cap from the wide sweep); ``slot_scratch``: with a τ per slot (8 bytes more per slot) and
    that many bytes for the chain-folding plan (:func:`chain_scratch_bytes`). A pure
    function."""
    if num_sources <= 0:
        return 0
    if memory_limit is not None:
        free_bytes = min(free_bytes, memory_limit)
    budget = (int(memory_fraction * free_bytes) - format_bytes(n, m, index_bytes) - 8 * n
              - (8 * m if edges else 0))
    if slot_scratch is not None:
        budget -= slot_scratch
    if hops:
        per_source = hop_source_bytes(max(n, 1), m) + (0 if slot_scratch is None else 8 * n)
        cap = num_sources
    else:
        per_source = BYTES_PER_SLOT * max(n, 1) + BYTES_PER_EDGE_SLOT * m
        cap = WIDE_BATCH_ENTRIES // max(n, 1)
    batch = max(1, min(num_sources, max(0, budget) // per_source, cap))
    batches = -(-num_sources // batch)
    return -(-num_sources // batches)


def distances(ptr, idx, lengths, n: int, sources, rounds: list | None = None):
    """The B x n float64 distances from ``sources`` (host int64, distinct) on the device
    (CuPy array, +inf where not reached), by frontier Bellman–Ford (module docstring).

    ``ptr``, ``idx``: the CSR pattern on the device (int32 or int64); ``lengths``: float64,
    aligned with ``idx``. ``rounds``, when given, gets the number of rounds appended (0 when
    the blocks found them).

    When a source's n distances fit a block's shared memory (``Tuning.gpu_block_distances``;
    by default up to :data:`BLOCK_AUTO_BYTES`), one launch finds them, a block per source (``bcw_block_distances``): its rounds run
    behind block barriers, with no launch, host wait or pass over the batch per round.
    Otherwise each round's frontier comes in slot order from the round before, in one of two ways
    (:data:`QUEUE_BELOW_SHARE` picks): a round whose frontier covers much of the batch marks
    what it lowers and the B x n marks are scanned; a round with a small frontier appends what
    it lowers to a queue (each slot once: a per-slot stamp of the round that queued it), which
    is sorted. The scan alone cost about 0.25 ms a round however small the frontier: 1,357
    rounds per batch of 142 sources on road-luxembourg-osm, 9.7 of the 12.7 s of weighted BC
    from 4,096 sources (bench/results/weighted_gpu-20261123T234334Z.json), and kept batches
    that small; queueing every round instead costs atomics where the frontier is wide
    (ego-Facebook distances 0.14 s against 0.055 s).

    The rounds run in near-far phases (``Tuning.gpu_near_far_width``): a key at or above the phase's
    threshold is listed in ``far`` (once a phase) instead of relaxed; when a phase has nothing
    left below its threshold, the next starts from the far keys still at or above it (the
    others were relaxed at their final distance since), its threshold the least of their
    distances plus the width. Every lowered slot is still relaxed at its final distance, so the
    fixed point is the same; fewer slots are relaxed before their distance is final (delaunay_n16
    with lengths 1..100: 1.11 s of distances against 2.49 s in one phase).
    """
    import cupy

    import spmv._module as _module

    sources = np.asarray(sources, dtype=np.int64)
    B = sources.size
    itype = _module.c_index_type(idx.dtype)
    knobs = current_tuning()
    phase_width, block_width = knobs.gpu_near_far_width, knobs.gpu_block_near_far_width
    for name, value in (("gpu_near_far_width", phase_width),
                        ("gpu_block_near_far_width", block_width)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be positive or None, not {value!r}")
    per_block = _block_distances(n, itype)
    if per_block is not None:  # a source per block, in shared memory: no rounds on the host
        kernel, shared = per_block
        dist = cupy.empty(B * n, dtype=cupy.uint64)
        width = _phase_width(block_width, lengths)
        kernel((B,), (BLOCK_THREADS,), (ptr, idx, lengths, np.int64(n), cupy.asarray(sources),
                                        np.float64(width), dist), shared_mem=shared)
        if rounds is not None:
            rounds.append(0)
        return dist.view(cupy.float64).reshape(B, n)
    kernel = _module.get_kernel("weighted.cu", f"bcw_relax<{itype}>")
    dist = cupy.full(B * n, np.float64(np.inf)).view(cupy.uint64)
    keys = cupy.asarray(np.arange(B, dtype=np.int64) * n + sources)
    dist[keys] = 0  # the bit pattern of +0.0
    # a dense round's record, padded to whole 16-byte words (_list_marks reads words)
    marks = cupy.zeros(-(-(B * n) // 16) * 16, dtype=cupy.uint8)
    stamp = cupy.full(B * n, -1, dtype=cupy.int32)  # a queued round's: the round that queued
    queue = cupy.empty(B * n, dtype=cupy.int64)
    queue_count = cupy.zeros(1, dtype=cupy.uint64)
    m = int(ptr[-1])
    mean_degree = max(1.0, m / max(n, 1))
    # near-far phases: keys at distance >= below wait in far for the next phase
    # (equal lengths: the rounds are breadth-first levels, each slot lowered once: no phases)
    width = _phase_width(phase_width, lengths)
    below = width
    far_stamp = cupy.full(B * n, -1, dtype=cupy.int32) if width < np.inf else stamp
    far = cupy.empty(B * n if width < np.inf else 1, dtype=cupy.int64)
    far_count = cupy.zeros(1, dtype=cupy.uint64)
    count = int(keys.size)
    done = phase = 0
    while count:
        queued = _queued(count, mean_degree, B * n)
        if queued:
            queue_count.fill(0)
        kernel((_launch_size(count),), (RELAX_BLOCK,),
               (ptr, idx, lengths, np.int64(n), keys, np.int64(count), dist, marks,
                np.int32(queued), stamp, np.int32(done), queue, queue_count,
                np.float64(below), far_stamp, np.int32(phase), far, far_count))
        keys = None  # freed once the launch is done (the pool orders it on the stream)
        done += 1
        if queued:
            count = int(queue_count.get()[0])
            keys = cupy.sort(queue[:count])  # slot order: neighbouring threads, nearby slots
        else:
            keys = _list_marks(marks, itype)
            count = int(keys.size)
        if count == 0 and width < np.inf:
            waiting = int(far_count.get()[0])
            if waiting:
                # the next phase: the far keys not relaxed since (those below `below` were)
                at = dist.view(cupy.float64)[far[:waiting]]
                still = at >= below
                least = float(cupy.where(still, at, np.inf).min())
                del at
                keys = cupy.sort(far[:waiting][still])
                del still
                count = int(keys.size)
                if count:
                    # above the least distance waiting, even where adding the width rounds
                    # to nothing next to it (every phase then relaxes at least that slot)
                    below = max(least + width, float(np.nextafter(least, np.inf)))
                far_count.fill(0)
                phase += 1
    if rounds is not None:
        rounds.append(done)
    return dist.view(cupy.float64).reshape(B, n)


def _queued(size: int, mean_degree: float, slots: int) -> bool:
    """Whether a round of ``size`` keys (or a forward layer of ``size`` slots) queues the
    slots it lowers (or readies): its edges, estimated as size x mean degree, under
    1/QUEUE_BELOW_SHARE of the batch's ``slots``; otherwise it marks them for a listing."""
    return size * mean_degree * QUEUE_BELOW_SHARE < slots


def _phase_width(mean_lengths: float | None, lengths) -> float:
    """The width of a near-far phase: ``mean_lengths`` mean edge lengths, or +inf (one phase)
    for None, no edge, or equal lengths (the rounds are then breadth-first levels)."""
    if mean_lengths is None or lengths.size == 0:
        return np.inf
    if float(lengths.min()) == float(lengths.max()):
        return np.inf
    return mean_lengths * float(lengths.mean())


def _block_distances(n: int, itype: str):
    """``(kernel, shared bytes)`` of ``bcw_block_distances`` when a source's distances fit a
    block's shared memory (8 bytes and a bit per vertex) and ``Tuning.gpu_block_distances``
    allows it (``"auto"``: up to :data:`BLOCK_AUTO_BYTES`); else None (the rounds of
    :func:`distances`)."""
    import spmv._module as _module

    allowed = current_tuning().gpu_block_distances
    if allowed not in (True, False, "auto"):
        raise ValueError(f"Tuning.gpu_block_distances must be True, False or 'auto'; got "
                         f"{allowed!r}")
    shared = 8 * n + 4 * (-(-n // 32))
    if not allowed or n == 0 or (allowed == "auto" and shared > BLOCK_AUTO_BYTES):
        return None
    kernel = _module.get_kernel("weighted.cu", f"bcw_block_distances<{itype}>")
    return (kernel, shared) if _module.allow_shared_memory(kernel, shared) else None


def _list_marks(marks, itype: str):
    """The slots marked in ``marks`` (uint8, 0 or 1, a multiple of 16 bytes long) in slot order,
    as int64, the marks cleared: two launches over its 16-byte words (bcw_count_marks,
    bcw_list_marks of spmv/kernels/weighted.cu) and a prefix sum of one count per block of
    words, in place of ``flatnonzero`` and ``fill(0)`` (a prefix sum of 8 bytes per slot)."""
    import cupy

    import spmv._module as _module

    words = marks.size // 16
    blocks = max(1, -(-words // MARK_THREADS))
    counts = cupy.empty(blocks, dtype=cupy.uint32)
    _module.get_kernel("weighted.cu", f"bcw_count_marks<{itype}>")(
        (blocks,), (MARK_THREADS,), (marks, np.int64(words), counts))
    ends = cupy.cumsum(counts, dtype=cupy.int64)
    total = int(ends[-1])
    keys = cupy.empty(total, dtype=cupy.int64)
    if total:
        _module.get_kernel("weighted.cu", f"bcw_list_marks<{itype}>")(
            (blocks,), (MARK_THREADS,), (marks, np.int64(words), ends - counts, keys))
    return keys


def accumulate_on(resident: DeviceResident, sources: np.ndarray, *, endpoints: bool,
                  kernel: str = "auto", progress=None, memory_limit: int | None = None,
                  facts: dict | None = None, target_weight=None, source_weight=None,
                  edge_raw=None, hops: bool = False, slot_weights=None,
                  _batch: int | None = None, _index_dtype=None,
                  _path: str | None = None) -> np.ndarray:
    """Raw (unscaled) weighted Brandes dependencies summed over ``sources``, on the graph of
    ``resident`` (which must carry lengths), reusing and keeping its parts.

    Same contract as :func:`turbobc.engines.gpu.batched.accumulate_on`: ``raw[v] =
    Σ_{s in sources, s != v} ω(s) δ_s(v)`` (τ-weighted), the endpoint terms with
    ``endpoints``, and each edge's share added into ``edge_raw`` (aligned with
    ``graph.pattern.indices``) when given. ``kernel`` is checked and otherwise ignored.
    ``hops``: sweep an unweighted graph (no ``graph.lengths``) with every edge of length 1:
    the distances are breadth-first levels, each slot lowered once, and the layers of the DAG
    sweep are the levels (the queue family of :mod:`turbobc.engines.gpu.engine`, for deep
    graphs); the batch then plans :data:`BYTES_PER_HOP_SLOT` per slot, the layer kernels'
    arrays only. ``slot_weights`` (``Problem.slot_weights``, a weighted graph with exact sums
    of lengths): the plan's batches are swept on the layer kernels, with τ per slot
    (:class:`_DistanceCounts`), and ``sources`` is unused; the plan is declined
    (``SlotWeightsDeclined``) when a batch's counts pass float64's range or the device runs
    out of memory. ``_batch`` forces the sources per batch, ``_index_dtype`` the index type,
    ``_path`` the DAG sweep (:data:`PATHS`; default ``Tuning.gpu_weighted_path``; with
    ``hops`` always the kernels) (tests, benchmarks).

    Raises
    ------
    ValueError
        For an unknown kernel, an unweighted graph or repeated sources.
    MemoryError
        When the device cannot hold the format and one source's arrays.
    RuntimeError
        When ``resident`` is closed, or already running.
    """
    import spmv

    spmv.check_kernel(kernel)
    path = current_tuning().gpu_weighted_path if _path is None else _path
    if path not in PATHS:
        raise ValueError(f"_path must be one of {PATHS}; got {path!r}")
    if (resident.graph.lengths is None) != hops:
        raise ValueError("the weighted GPU path needs a graph with lengths" if not hops else
                         "hops=True sweeps an unweighted graph; this one has lengths")
    if hops or slot_weights is not None:
        path = "kernels"
    with resident.run():
        weights = resident.accumulate_weights(target_weight, source_weight)
        failure = None
        try:
            return _accumulate(resident, sources, endpoints=endpoints, progress=progress,
                               memory_limit=memory_limit, facts=facts, weights=weights,
                               edge_raw=edge_raw, _batch=_batch, _index_dtype=_index_dtype,
                               path=path, hops=hops, plan=slot_weights)
        except _OutOfMemory as exc:
            failure = str(exc)
        finally:
            if slot_weights is not None:
                slot_weights.forget_device()  # the plan's uploads
        resident.release()
        del weights
        if slot_weights is not None:
            from turbobc.engines.protocol import SlotWeightsDeclined

            # the caller sweeps unfolded, whose own memory model says whether it fits
            raise SlotWeightsDeclined(f"the device ran out of memory: {failure}")
        graph = resident.graph
        model = (f"about {BYTES_PER_HOP_SLOT} bytes per vertex"
                 if path == "kernels" else
                 f"about {BYTES_PER_SLOT} bytes per vertex and {BYTES_PER_EDGE_SLOT} per stored "
                 "edge")
        raise MemoryError(
            f"the GPU engine could not hold a weighted batch (n={graph.n}, m={graph.nnz}: "
            f"{model}, per source); free device memory or run it with engine='graphblas'. "
            f"CuPy said: {failure}")


class _OutOfMemory(Exception):
    pass


def _accumulate(resident, sources, *, endpoints, progress, memory_limit, facts, weights,
                edge_raw, _batch, _index_dtype, path="kernels", hops=False,
                plan=None) -> np.ndarray:
    import cupy

    from turbobc.engines.gpu.batched import _device_free_bytes
    from spmv import _batched

    graph = resident.graph
    n, m = graph.n, graph.nnz
    edges = edge_raw is not None
    sources = np.asarray(sources if plan is None else plan.sources, dtype=np.int64)
    if sources.size == 0 or n == 0:
        return np.zeros(n, dtype=np.float64)
    if np.unique(sources).size != sources.size:
        raise ValueError("sources must be distinct")
    index_dtype = (np.dtype(_index_dtype) if _index_dtype is not None
                   else index_dtype_for(n, m))
    # what a weighted run does not sweep with would only take memory
    resident.keep_only(WEIGHTED_PARTS, index_dtype)
    resident.drop_workspace()
    if not edges:
        resident.drop_edge_accumulator()
    failure = None
    try:
        ptr = resident.fetch("csr_ptr", index_dtype)
        idx = resident.fetch("csr_idx", index_dtype)
        lengths = resident.fetch("lengths", index_dtype)
        bc, _ = resident.accumulator(_batched.CTL_SLOTS)
        edge = resident.edge_accumulator() if edges else None
        budget = None if memory_limit is None else max(
            0, memory_limit - DeviceResident.weight_bytes(weights))
        free = _device_free_bytes() + resident.edge_bytes()
        # the wide sweep's batch (every lane of a weighted run, the lanes out of float64
        # range of the kernels) plans the full model; a hops run's kernels plan their own
        wide_batch = choose_batch(n, m, sources.size, free, index_bytes=index_dtype.itemsize,
                                  edges=edges, memory_limit=budget)
        if _batch is not None:
            batch = wide_batch = max(1, min(int(_batch), sources.size))
        elif path == "kernels":  # (always with hops and with a plan)
            # the layer kernels hold a slot in BYTES_PER_HOP_SLOT whatever the lengths: their
            # batch is not capped by the wide sweep's, which takes its own (smaller) batches;
            # a plan's helper slots join its sources, so its batches plan for every vertex
            batch = choose_batch(n, m, n if plan is not None else sources.size, free,
                                 index_bytes=index_dtype.itemsize, edges=edges,
                                 memory_limit=budget, hops=True,
                                 slot_scratch=(None if plan is None else
                                               chain_scratch_bytes(
                                                   n, plan.chains.count, plan.folded)))
        else:
            batch = wide_batch
        rounds: list = []
        # the distances, and the layer kernels' phases (each timed to the device's end)
        seconds = {"distances": 0.0, "indegree": 0.0, "forward": 0.0, "backward": 0.0,
                   "block": 0.0}

        def batch_distances(batch_sources):
            began = time.perf_counter()
            out = distances(ptr, idx, lengths, n, batch_sources, rounds)
            # the per-block kernel returns before it is done: its time is the distances'
            cupy.cuda.get_current_stream().synchronize()
            resident.mark()
            seconds["distances"] += time.perf_counter() - began
            return out

        began = time.perf_counter()
        wide = sources
        batches = None
        if plan is not None:
            batches = plan.batches(batch)
            batch = max(len(slots) for slots in batches)
        if path == "kernels":
            wide = _sweep_kernels(ptr, idx, lengths, n, sources, bc, edge, endpoints,
                                  weights, batch, batch_distances, progress, seconds,
                                  plan=plan, batches=batches)
        if len(wide):
            accumulate_wide(cupy, ptr, idx, n, wide, bc, endpoints=endpoints,
                            progress=progress, batch_entries=wide_batch * n,
                            target_weight=weights[0], source_weight=weights[1],
                            edge_raw=edge, lengths=lengths, distances=batch_distances)
        raw = bc.get()
        if edges:
            edge_raw += edge.get()
        resident.mark()
        sweep_seconds = time.perf_counter() - began
    except cupy.cuda.memory.OutOfMemoryError as exc:
        failure = str(exc)  # the run's arrays die with this block
    if failure is not None:
        raise _OutOfMemory(failure)
    if facts is not None:
        facts.update(family="queue" if hops else "weighted",
                     kernel="bfs+kernels" if hops else f"bellman-ford+{path}", batch=batch,
                     batches=(len(batches) if batches is not None
                              else -(-sources.size // batch)),
                     rounds=max(rounds, default=0),
                     distance_seconds=seconds["distances"], sweep_seconds=sweep_seconds,
                     layer_seconds={key: seconds[key]
                                    for key in ("indegree", "forward", "backward", "block")},
                     index_dtype=str(index_dtype),
                     wide_sources=len(wide) if path == "kernels" else 0, edge_sums=edges,
                     peak_pool_bytes=resident.peak - resident.baseline,
                     model_bytes=memory_model(n, m, batch=batch,
                                              index_bytes=index_dtype.itemsize, edges=edges,
                                              hops=path == "kernels"),
                     **resident.run_facts())
    return raw


def _launch_size(count: int) -> int:
    return max(1, min(-(-count // RELAX_BLOCK), 1 << 20))


def _sweep_kernels(ptr, idx, lengths, n, sources, bc, edge, endpoints, weights, batch,
                   batch_distances, progress, seconds=None, plan=None,
                   batches=None) -> np.ndarray:
    """The ``"kernels"`` DAG sweep (:data:`PATHS`) of ``sources``, ``batch`` at a time,
    adding into ``bc`` (and ``edge``); returns the sources whose counts reached +inf (nothing
    of them added), for the wide path. ``seconds``, when given, gets the time of the
    in-degree launch, the forward layers and the backward layers added (``"indegree"``,
    ``"forward"``, ``"backward"``), or of the sweep a source per block (``"block"``), each
    phase waited for on the device.

    A graph small enough (``Tuning.gpu_block_sweep``, :func:`_block_sweep`) is swept a source
    per block in shared memory, one launch a batch (``bcw_block_sweep``); others a layer per
    launch (:func:`_sweep_layers`). With ``plan`` (per-slot target weights, always by layers)
    the slots are its ``batches``: between the forward and the backward layers τ of each slot
    is own(b) · τ plus what the plan adds (:class:`_DistanceCounts`), ω is 1, and counts past
    float64's range decline the plan."""
    import cupy

    import spmv._module as _module

    itype = _module.c_index_type(idx.dtype)
    tau, omega = weights
    tau = cupy.ones(n, dtype=cupy.float64) if tau is None else tau
    per_block = _block_sweep(n, itype) if plan is None else None
    layers = None if per_block is not None else _LayerKernels(ptr, n, itype)
    has_edge = edge is not None
    edge_arg = edge if has_edge else cupy.zeros(1, dtype=cupy.float64)
    wide = []
    if batches is None:
        batches = [sources[start:start + batch] for start in range(0, sources.size, batch)]
    for index, chunk in enumerate(batches):
        B = chunk.size
        dist = batch_distances(chunk).ravel()
        chunk_dev = cupy.asarray(chunk)
        lane_weight = (cupy.ones(B, dtype=cupy.float64) if omega is None or plan is not None
                       else cupy.ascontiguousarray(omega[chunk_dev]))
        began = time.perf_counter()
        add_credits = None
        if per_block is not None:
            kernel, shared = per_block
            delta = cupy.empty(B * n, dtype=cupy.float64)
            skip = cupy.zeros(B, dtype=cupy.uint8)
            kernel((B,), (SWEEP_THREADS,),
                   (ptr, idx, lengths, np.int64(n), chunk_dev, dist, tau, np.int32(0),
                    lane_weight, delta, skip, edge_arg, np.int32(has_edge)), shared_mem=shared)
            out_of_range = skip != 0
            del skip
            phase = "block"
        else:
            delta, out_of_range, add_credits, began = _sweep_layers(
                layers, ptr, idx, lengths, n, chunk, dist, tau, lane_weight, edge_arg,
                has_edge, plan, index, seconds, began)
            phase = "backward"
        # bc += ω Δ (1 x B times B x n), without the sources' own δ (their layer fed only the
        # edge sums); the lanes out of range kept δ = 0
        bc += lane_weight @ delta.reshape(B, n)
        if add_credits is not None:
            add_credits()  # on the host while the device ends the backward layers
        _phase_done(seconds, phase, began)
        if endpoints:
            # +ω(s) for every vertex reached from s other than s, and s gets ω(s) (reached − 1)
            reached = cupy.isfinite(dist.reshape(B, n)) & ~out_of_range[:, None]
            reached[cupy.arange(B), chunk_dev] = False
            bc += (reached * lane_weight[:, None]).sum(axis=0)
            bc[chunk_dev] += reached.sum(axis=1) * lane_weight
            del reached
        bad = out_of_range.get()
        wide.extend(chunk[bad].tolist())
        swept = int(B - bad.sum()) if plan is None else int(np.count_nonzero(
            plan.own_weights(index)))  # a plan's helper slots are no sources of the run
        if progress is not None and swept:
            progress.update(swept)
        # the batch's slot arrays go now, not when the next batch's distances (which need
        # the room) have been found and the names rebound: BYTES_PER_HOP_SLOT is one batch's
        del dist, delta, out_of_range
    return np.asarray(wide, dtype=np.int64)


class _LayerKernels:
    """What the layer kernels of a run share: the three kernels, the mean degree and the DAG
    masks' layout (a word per vertex, one per 32 out-edges past 32: weighted.cu)."""

    def __init__(self, ptr, n: int, itype: str):
        import cupy

        import spmv._module as _module

        self.indegree = _module.get_kernel("weighted.cu", f"bcw_indegree<{itype}>")
        self.forward = _module.get_kernel("weighted.cu", f"bcw_forward<{itype}>")
        self.backward = _module.get_kernel("weighted.cu", f"bcw_backward<{itype}>")
        self.itype = itype
        self.mean_degree = max(1.0, int(ptr[-1]) / max(n, 1))
        at, self.words = dag_mask_layout(ptr.get())
        self.mask_at = cupy.asarray(at)


def _sweep_layers(layers: _LayerKernels, ptr, idx, lengths, n, chunk, dist, tau, lane_weight,
                  edge_arg, has_edge, plan, index, seconds, began):
    """One batch's DAG sweep a layer per launch: ``bcw_indegree``, the forward layers
    (``bcw_forward``, the next layer queued or marked and listed), the plan's target weights
    when there is one, and the backward layers (``bcw_backward``). Returns δ (B n, 0 at the
    sources and for the lanes out of range), the lanes whose counts reached +inf, the plan's
    credits to add (or None) and the time the backward layers began."""
    import cupy

    B = chunk.size
    total = B * n
    words, mask_at = layers.words, layers.mask_at
    remaining = cupy.zeros(total, dtype=cupy.int32)
    dag = cupy.empty(B * words, dtype=cupy.uint32)  # each slot's DAG masks (weighted.cu)
    layers.indegree((_launch_size(total),), (RELAX_BLOCK,),
                    (ptr, idx, lengths, np.int64(n), np.int64(total), dist, remaining, dag,
                     mask_at, np.int64(words)))
    began = _phase_done(seconds, "indegree", began)
    lane_keys = cupy.asarray(np.arange(B, dtype=np.int64) * n + chunk)
    sigma = cupy.zeros(total, dtype=cupy.float64)
    sigma[lane_keys] = 1.0
    order = cupy.empty(total, dtype=cupy.int64)
    order[:B] = lane_keys
    offsets = [0, B]
    count = cupy.zeros(1, dtype=cupy.uint64)
    # the next layer's slots: queued by the kernel after a small layer, marked and listed
    # in slot order after a wide one (QUEUE_BELOW_SHARE, as the distances' rounds)
    marks = cupy.zeros(-(-total // 16) * 16, dtype=cupy.uint8)
    while offsets[-1] < total:
        low, high = offsets[-2], offsets[-1]
        queued = _queued(high - low, layers.mean_degree, total)
        count.fill(0)
        layers.forward((_launch_size(high - low),), (RELAX_BLOCK,),
                       (ptr, idx, np.int64(n), order[low:], np.int64(high - low), dag,
                        mask_at, np.int64(words), sigma, remaining, np.int32(queued),
                        order[high:], count, marks))
        if queued:
            added = int(count.get()[0])
        else:
            listed = _list_marks(marks, layers.itype)
            added = int(listed.size)
            order[high:high + added] = listed
            del listed
        if added == 0:
            break
        offsets.append(high + added)
    del remaining, marks  # every count is 0 now
    began = _phase_done(seconds, "forward", began)
    out_of_range = cupy.isinf(sigma.reshape(B, n)).any(axis=1)
    skip = out_of_range.astype(cupy.uint8)
    slot_tau, add_credits = tau, None
    if plan is not None:
        if bool(out_of_range.any()):
            from turbobc.engines.protocol import SlotWeightsDeclined

            raise SlotWeightsDeclined("path counts pass float64's range")
        # τ of slot b = own(b) τ, plus the plan's terms from both ends' distances and σ
        own = cupy.asarray(plan.own_weights(index))
        slot_tau = own[:, None] * tau[None, :]
        add_credits = plan.add_target_weights(
            index, _DistanceCounts(dist.reshape(B, n), sigma.reshape(B, n), slot_tau))
    delta = cupy.zeros(total, dtype=cupy.float64)
    last = 0 if has_edge else 1  # the sources' layer only feeds their edges
    for d in range(len(offsets) - 2, last - 1, -1):
        low, high = offsets[d], offsets[d + 1]
        layers.backward((_launch_size(high - low),), (RELAX_BLOCK,),
                        (ptr, idx, np.int64(n), order[low:], np.int64(high - low), dag,
                         mask_at, np.int64(words), sigma, delta, slot_tau,
                         np.int32(plan is not None), lane_weight, skip, edge_arg,
                         np.int32(has_edge)))
    delta[lane_keys] = 0.0
    return delta, out_of_range, add_credits, began


def _block_sweep(n: int, itype: str):
    """``(kernel, shared bytes)`` of ``bcw_block_sweep`` when a source's sweep fits a
    block's shared memory (:data:`SWEEP_BYTES_PER_VERTEX` per vertex) and
    ``Tuning.gpu_block_sweep`` allows it (``"auto"``: up to :data:`SWEEP_AUTO_BYTES`); else
    None (a layer per launch)."""
    import spmv._module as _module

    allowed = current_tuning().gpu_block_sweep
    if allowed not in (True, False, "auto"):
        raise ValueError(f"Tuning.gpu_block_sweep must be True, False or 'auto'; got "
                         f"{allowed!r}")
    shared = SWEEP_BYTES_PER_VERTEX * n
    if not allowed or n == 0 or (allowed == "auto" and shared > SWEEP_AUTO_BYTES):
        return None
    kernel = _module.get_kernel("weighted.cu", f"bcw_block_sweep<{itype}>")
    return (kernel, shared) if _module.allow_shared_memory(kernel, shared) else None


class _DistanceCounts(SlotCounts):
    """A batch's distances, counts and per-slot τ on the device (B x n CuPy arrays), for
    per-slot target weights (:class:`turbobc._chains.SlotCounts`): the chains of a weighted
    graph are measured in lengths, so the distances stand for the levels (-1 where not
    reached); the counts are plain float64 (no exponent)."""

    def __init__(self, dist, sigma, tau):
        import cupy

        self.xp, self.n = cupy, dist.shape[1]
        self.chunk_entries = 1 << 62  # chain_terms needs no scratch: every chain at once
        self._dist, self._sigma, self._tau = dist, sigma, tau

    def levels(self, lanes):
        dist = self._dist[self.xp.asarray(lanes)]
        return self.xp.where(self.xp.isinf(dist), -1.0, dist)

    def counts(self, lanes):
        return self._sigma[self.xp.asarray(lanes)], None

    def add_target_weights(self, lanes, values) -> None:
        self.xp.add.at(self._tau, self.xp.asarray(lanes), values)

    def add_target_entries(self, lanes, vertices, values) -> None:
        xp = self.xp
        xp.add.at(self._tau, (xp.asarray(lanes), xp.asarray(vertices)), xp.asarray(values))

    def at(self, lanes, vertices):
        xp = self.xp
        where = (xp.asarray(lanes), xp.asarray(vertices))
        dist = self._dist[where]
        return xp.asnumpy(xp.where(xp.isinf(dist), -1.0, dist)), xp.asnumpy(self._sigma[where])

    def chain_terms(self, plan, rows):
        """:meth:`SlotCounts.chain_terms` in one launch of ``bcw_chain_terms``
        (spmv/kernels/chains.cu): a block per (chain, stretch of vertices), each target's
        class found by a binary search over its chain's doubled positions."""
        import spmv._module as _module
        from turbobc.engines.protocol import SlotWeightsDeclined

        cupy = self.xp
        dev = cupy.asarray
        uploaded = plan.on_device(cupy)
        size = int(rows.hist_off[-1])
        mass = cupy.zeros(size, dtype=np.float64)
        tie_mass = cupy.zeros(size, dtype=np.float64)
        stretches = max(1, min(64, -(-self.n // 4096)))
        kernel = _module.get_kernel("chains.cu", "bcw_chain_terms<long long>")
        shared = 16 * int(2 * rows.length.max() + 1)  # the two histograms of the longest chain
        if not _module.allow_shared_memory(kernel, shared):
            raise SlotWeightsDeclined(f"a chain of {int(rows.length.max())} edges needs "
                                      f"{shared} bytes of shared memory, more than the device "
                                      "gives a block")
        span, base, first = plan.class_rows(rows)
        kernel((rows.chains.size, stretches), (256,),
               (self._dist, self._sigma, np.int64(self.n), np.float64(plan.scale),
                dev(rows.chains), dev(rows.lane_a), dev(rows.lane_b), dev(rows.first),
                dev(rows.last), dev(rows.length), dev(rows.prefix_off), dev(rows.hist_off),
                dev(span), dev(base), dev(first), uploaded["class_at"], uploaded["prefix"],
                uploaded["chain_of"], uploaded["r"], self._tau, mass, tie_mass),
               shared_mem=shared)
        return cupy.asnumpy(mass), cupy.asnumpy(tie_mass)


def dag_mask_layout(indptr: np.ndarray) -> tuple[np.ndarray, int]:
    """Where each vertex's DAG mask words start within a source's masks (int64, n + 1
    entries), and how many words a source takes: one word per vertex of at most 32
    out-edges (none too), ceil(degree / 32) for a wider one (spmv/kernels/weighted.cu,
    ``bcw_indegree``). At most n + m / 32 words."""
    degree = np.diff(np.asarray(indptr, dtype=np.int64))
    per_vertex = np.maximum(1, -(-degree // 32))
    at = np.zeros(degree.size + 1, dtype=np.int64)
    np.cumsum(per_vertex, out=at[1:])
    return at, int(at[-1])


def _phase_done(seconds: dict | None, phase: str, began: float) -> float:
    """seconds[phase] += the time since ``began``, once the device has done its work; the
    time now (``seconds`` None: no timing, no wait)."""
    if seconds is None:
        return began
    import cupy

    cupy.cuda.get_current_stream().synchronize()
    now = time.perf_counter()
    seconds[phase] += now - began
    return now

