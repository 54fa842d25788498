"""The layers family's first phase: the B x n distances of a batch of sources on the device
(spmv/kernels/distances.cu), by frontier Bellman–Ford rounds or a source per block.

The fixed point is the least one, d(w) = min_v fl(d(v) + len(v, w)): the distances of the CPU
engine's min-plus sweep, and the sums networkx's Dijkstra compares. For unweighted BC every
length is 1.0, each slot is lowered once and the rounds are the breadth-first levels.
"""

from __future__ import annotations

import numpy as np

from spmv import _layers
from spmv import _arrays
from spmv._launch import all_bits_set
from spmv._module import c_index_type

from turbobc._tuning import current as current_tuning

__all__ = ["distances", "queued", "BLOCK_AUTO_BYTES", "QUEUE_BELOW_SHARE"]

BLOCK_AUTO_BYTES = 64 * 1024
"""``Tuning.gpu_block_distances="auto"`` finds the distances a source per block when a block's
shared memory (8 bytes and a bit per vertex) is at most this, so that three blocks or more
share a multiprocessor: n up to about 8,000. H200, lengths 1..100, weighted BC end to end,
blocks against rounds (bench/results/weighted_distances-20261125T115109Z.json): ego-Facebook
(32 KiB) 0.047 against 0.060 s, road-minnesota 0.020 against 0.055, power 0.019 against 0.035,
ca-GrQc 0.021 against 0.031, wiki-Vote (57 KiB) 0.060 against 0.069; delaunay_n14 (130 KiB,
one block a multiprocessor, hundreds of barrier rounds a source) 1.12 against 0.25 s."""

QUEUE_BELOW_SHARE = 64
"""A Bellman–Ford round queues what it lowers (and the queue is sorted) when its frontier's
edges, estimated as frontier x mean degree, are under 1/QUEUE_BELOW_SHARE of the B x n slots;
otherwise it marks them and the marks are listed (``spmv._layers.list_marks``). H200, lengths
1..100, seconds of the distances with 4 / 16 / 64 / 256: delaunay_n16 (8,192 sources) 2.00 /
0.49 / 0.38 / 0.37, road-luxembourg-osm (4,096) 1.17 / 1.09 / 1.12 / 1.38, ego-Facebook (4,039)
0.057 / 0.054 / 0.054 / 0.053 (bench/results/weighted_queue_share-20261125T0818Z.log)."""


def distances(ptr, idx, lengths, n: int, sources, rounds: list | None = None):
    """The B x n float64 distances from ``sources`` (host int64, distinct) on the device
    (CuPy array, +inf where not reached), by frontier Bellman–Ford (module docstring).

    ``ptr``, ``idx``: the CSR pattern on the device (int32 or int64); ``lengths``: float64,
    aligned with ``idx``. ``rounds``, when given, gets the number of rounds appended (0 when
    the blocks found them).

    When a source's n distances fit a block's shared memory (``Tuning.gpu_block_distances``;
    by default up to :data:`BLOCK_AUTO_BYTES`), one launch finds them, a block per source
    (``bcl_block_distances``): its rounds run
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

    sources = np.asarray(sources, dtype=np.int64)
    B = sources.size
    itype = c_index_type(idx.dtype)
    graph = _layers.LayerGraph(ptr, idx, lengths, n)
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
        _layers.block_distances(kernel, graph, cupy.asarray(sources),
                                _phase_width(block_width, lengths), dist, shared)
        if rounds is not None:
            rounds.append(0)
        return dist.view(cupy.float64).reshape(B, n)
    dist = cupy.empty(B * n, dtype=cupy.float64)
    _arrays.fill(dist, np.inf)
    keys = cupy.asarray(np.arange(B, dtype=np.int64) * n + sources)
    _arrays.put(dist, keys, 0.0)
    dist = dist.view(cupy.uint64)
    # a dense round's record, padded to whole 16-byte words (list_marks reads words)
    marks = cupy.zeros(-(-(B * n) // 16) * 16, dtype=cupy.uint8)
    stamp = all_bits_set(B * n, cupy.int32)  # -1; a queued round's: the round that queued
    queue = cupy.empty(B * n, dtype=cupy.int64)
    queue_count = cupy.zeros(1, dtype=cupy.uint64)
    m = int(ptr[-1])
    mean_degree = max(1.0, m / max(n, 1))
    # near-far phases: keys at distance >= below wait in far for the next phase
    # (equal lengths: the rounds are breadth-first levels, each slot lowered once: no phases)
    width = _phase_width(phase_width, lengths)
    below = width
    far_stamp = all_bits_set(B * n, cupy.int32) if width < np.inf else stamp
    far = cupy.empty(B * n if width < np.inf else 1, dtype=cupy.int64)
    far_count = cupy.zeros(1, dtype=cupy.uint64)
    state = _layers.RelaxArrays(dist=dist, marks=marks, stamp=stamp, queue=queue,
                                queue_count=queue_count, far_stamp=far_stamp, far=far,
                                far_count=far_count)
    count = int(keys.size)
    done = phase = 0
    while count:
        queued_round = queued(count, mean_degree, B * n)
        if queued_round:
            queue_count.fill(0)
        _layers.relax(graph, itype, state, keys=keys, count=count, below=below,
                      queued=queued_round, round=done, phase=phase)
        keys = None  # freed once the launch is done (the pool orders it on the stream)
        done += 1
        if queued_round:
            count = int(queue_count.get()[0])
            keys = _arrays.sorted_copy(queue[:count])  # slot order: neighbouring threads,
            # nearby slots
        else:
            keys = _layers.list_marks(marks, itype)
            count = int(keys.size)
        if count == 0 and width < np.inf:
            waiting = int(far_count.get()[0])
            if waiting:
                # the next phase: the far keys not relaxed since (those below `below` were)
                keys, least = _arrays.far_select(dist.view(cupy.float64), far, waiting, below)
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


def queued(size: int, mean_degree: float, slots: int) -> bool:
    """Whether a round of ``size`` keys (or a forward layer of ``size`` slots) queues the
    slots it lowers (or readies): its edges, estimated as size x mean degree, under
    1/QUEUE_BELOW_SHARE of the batch's ``slots``; otherwise it marks them for a listing."""
    return size * mean_degree * QUEUE_BELOW_SHARE < slots


def _phase_width(mean_lengths: float | None, lengths) -> float:
    """The width of a near-far phase: ``mean_lengths`` mean edge lengths, or +inf (one phase)
    for None, no edge, or equal lengths (the rounds are then breadth-first levels)."""
    if mean_lengths is None or lengths.size == 0:
        return np.inf
    # CuPy's min, max and sum: CUB, compiled ahead (its mean is a kernel compiled at first use)
    if float(lengths.min()) == float(lengths.max()):
        return np.inf
    return mean_lengths * float(lengths.sum()) / lengths.size


def _block_distances(n: int, itype: str):
    """``(kernel, shared bytes)`` of ``bcl_block_distances`` when a source's distances fit a
    block's shared memory (8 bytes and a bit per vertex) and ``Tuning.gpu_block_distances``
    allows it (``"auto"``: up to :data:`BLOCK_AUTO_BYTES`); else None (the rounds of
    :func:`distances`)."""
    allowed = current_tuning().gpu_block_distances
    if allowed not in (True, False, "auto"):
        raise ValueError(f"Tuning.gpu_block_distances must be True, False or 'auto'; got "
                         f"{allowed!r}")
    shared = 8 * n + 4 * (-(-n // 32))
    if not allowed or n == 0 or (allowed == "auto" and shared > BLOCK_AUTO_BYTES):
        return None
    kernel = _layers.per_block_kernel("bcl_block_distances", itype, shared)
    return None if kernel is None else (kernel, shared)
