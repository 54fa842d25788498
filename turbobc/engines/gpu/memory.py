"""Every GPU memory model, in one place: what each family keeps on the device per run and per
source, and the batch sizes that follow from the free device memory.

n vertices, m stored edges, index size b bytes (4, or 8 past 2^31 - 64 vertices or stored edges
and under ``Tuning.index_bits=64``: row pointers and column indices share the type, so b counts
for every stored edge, except in the single family, whose pointers take p bytes: 8 beside
4-byte indices past 2^31 - 64 stored edges with fewer vertices; docs/architecture.md, "64-bit
indices"), level size ℓ (2:
int16, or 4 when a batch is deeper than 32,765 levels), B sources of a batch:

==========  ===============================================  ==================================
family      kept once per run                                per source of a batch
==========  ===============================================  ==================================
single      CSC p (n + 1) + b m, or COOC 2 b m; S b n, σ     (one source per sweep)
            and t 16 n, bc 8 n, shifts 4 n: 4m + 36n in
            int32, 8m + 44n in int64, 4m + 40n split
            (:func:`single_model`: bm + (40 + b + p) n)
lanes       CSR b (n + 1 + m), twice when directed (CSC);    :func:`lane_bytes`: n (ℓ + 16)
            scCOOC b (n + 1 + 2m); bc 8 n; edge sums 8 m     plus flags, masks, shift table:
                                                             about 18.6 n bytes
layers      CSR and lengths: b (n + 1 + m) + 8 m; bc 8 n;    :data:`BYTES_PER_HOP_SLOT` n and
            edge sums 8 m                                    the wide vertices' mask words
frontiers   CSR relabeled b (n + 1 + m) + 8 m + 16 n; bc     a block's rows (a source in flight
            8 n; edge sums 16 m                              each): about (36 + 2 b) n
==========  ===============================================  ==================================

Every batch size is a pure function of the free bytes it is handed (:func:`device_free_bytes`
on the device) and takes at most ``Tuning.gpu_memory_fraction`` of them (or of the user's
``memory_limit``, when lower). The families (single.py, lanes.py, layers.py) read their models
here and nowhere else.
"""

from __future__ import annotations

import numpy as np

from spmv import _batched, _ctl

from turbobc._tuning import current as current_tuning
from turbobc.engines.wide import WIDE_BATCH_ENTRIES

__all__ = ["LANES", "DEPTH_CAP", "device_free_bytes", "device_memory_text", "single_bytes",
           "check_single_limit", "lanes_format_bytes", "lane_bytes", "sums_bytes",
           "lanes_bytes", "choose_lanes", "slot_lanes", "layers_format_bytes",
           "hop_source_bytes", "layers_bytes", "choose_layers_batch", "chain_scratch_bytes",
           "BYTES_PER_SLOT", "BYTES_PER_HOP_SLOT", "BYTES_PER_EDGE_SLOT", "round_up",
           "pair_block_bytes", "pair_blocks", "frontier_block_bytes", "frontiers_bytes",
           "choose_frontier_blocks", "frontier_graph_bytes", "single_model", "index_words"]

LANES = _batched.LANES
"""Sources per unit of the lanes family: a batch's row stride is a multiple of this."""

DEPTH_CAP = 2048
"""Levels of the lanes family's shift table at first; a deeper batch is rerun with four times
as many."""


def round_up(x: int, k: int) -> int:
    """The least multiple of ``k`` at or above ``x``."""
    return -(-x // k) * k


def device_free_bytes() -> int:
    """Device bytes a run may allocate now: free on the device plus CuPy's cached blocks,
    under the pool's limit when one is set."""
    import cupy

    pool = cupy.get_default_memory_pool()
    free, _ = cupy.cuda.runtime.memGetInfo()
    available = free + pool.free_bytes()
    limit = pool.get_limit()
    if limit:
        available = min(available, limit - pool.used_bytes())
    return max(0, available)


def device_memory_text() -> str:
    """The device's free memory in words, for the messages of MemoryError."""
    import cupy

    pool = cupy.get_default_memory_pool()
    free, total = cupy.cuda.runtime.memGetInfo()
    limit = pool.get_limit()
    text = (f"{free} bytes free on the device of {total}, {pool.free_bytes()} more cached in "
            f"CuPy's memory pool")
    if limit:
        text += f", pool limit {limit} bytes with {pool.used_bytes()} in use"
    return text


def _budget(free_bytes: int, memory_limit: int | None, memory_fraction: float | None) -> int:
    """The bytes a run may plan for: ``memory_fraction`` (default ``Tuning.gpu_memory_fraction``)
    of the free bytes, or of the memory limit when that is lower."""
    if memory_fraction is None:
        memory_fraction = current_tuning().gpu_memory_fraction
    if memory_limit is not None:
        free_bytes = min(free_bytes, memory_limit)
    return int(memory_fraction * free_bytes)


def index_words(index_dtype, position_dtype=None) -> str:
    """The index type in words, for the messages of MemoryError: ``'int64 indices, 8 bytes per
    stored edge'``; with int64 ``position_dtype`` beside int32 indices, ``'int32 indices with
    int64 pointers, 4 bytes per stored edge'``."""
    dtype = np.dtype(index_dtype)
    pointers = ("" if position_dtype is None or np.dtype(position_dtype) == dtype
                else f" with {np.dtype(position_dtype).name} pointers")
    return f"{dtype.name} indices{pointers}, {dtype.itemsize} bytes per stored edge"


# ---- single source -------------------------------------------------------------------------

def single_model(n: int, m: int, index_dtype, position_dtype=None) -> int:
    """The single-source model in bytes, b m + (40 + b + p) n for index size b and pointer
    size p (default b): 4m + 48n in int32 (the paper's), 8m + 56n in int64, 4m + 52n for int32
    indices with int64 pointers (past 2^31 stored edges, n below it). :func:`single_bytes`
    itemizes it (CSC: p (n + 1) + b m + b n + 28 n and a few hundred bytes, within the
    model)."""
    b = np.dtype(index_dtype).itemsize
    p = b if position_dtype is None else np.dtype(position_dtype).itemsize
    return b * m + (40 + b + p) * n


def single_bytes(n: int, m: int, kernel: str, index_dtype, num_sources: int = 1,
                 position_dtype=None) -> int:
    """Bytes of device memory a single-source run needs: its format (CSC, or COOC for
    ``"sccooc"``, which keeps no pointers), S, σ, t, bc, the shifts, the control block and the
    sources; ``position_dtype``: the CSC pointers' type (default ``index_dtype``)."""
    b = np.dtype(index_dtype).itemsize
    p = b if position_dtype is None else np.dtype(position_dtype).itemsize
    fmt = 2 * b * m if kernel == "sccooc" else p * (n + 1) + b * m
    return fmt + b * n + 24 * n + 4 * (n + 2) + 8 * _ctl.N_CTL + b * num_sources


def check_single_limit(n: int, m: int, kernel: str, index_dtype, num_sources: int,
                       memory_limit: int | None, extra_bytes: int = 0,
                       position_dtype=None) -> None:
    """Refuse a single-source run whose :func:`single_bytes` exceeds ``memory_limit`` (None: no
    limit). ``kernel="auto"`` is modelled as CSC (``auto`` picks scCOOC only where its format
    fits the same model); ``extra_bytes``: the accumulate weights.

    Raises
    ------
    MemoryError
        Naming the model's bytes, the graph and the limit.
    """
    if memory_limit is None:
        return
    need = single_bytes(n, m, "sccooc" if kernel == "sccooc" else "sccsc", index_dtype,
                        num_sources, position_dtype) + extra_bytes
    if need > memory_limit:
        from turbobc._memory import format_bytes

        raise MemoryError(f"the GPU engine needs about {format_bytes(need)} of device memory "
                          f"for one source of this graph (n={n}, {m} stored edges, "
                          f"{index_words(index_dtype, position_dtype)}, kernel={kernel!r}), "
                          f"but memory_limit is "
                          f"{format_bytes(memory_limit)}; raise memory_limit")


# ---- lanes: 32 sources a warp ----------------------------------------------------------------

def lanes_format_bytes(n: int, m: int, index_bytes: int, directed: bool, kernel: str) -> int:
    """Bytes of the storage format a lanes kernel keeps on the device."""
    if kernel == "sccooc":
        return index_bytes * (n + 1 + 2 * m)
    return index_bytes * (n + 1 + m) * (2 if directed else 1)


def lane_bytes(n: int, level_bytes: int, depth_cap: int) -> int:
    """Bytes one lane (one source of a batch) costs: its level, σ̂ and t of every vertex, two
    per-unit flag arrays, two per-unit tagged lane masks and its shift-table column."""
    return n * (level_bytes + 16) + round_up(2 * level_bytes * n, LANES) // LANES \
        + round_up(2 * 8 * n, LANES) // LANES + 4 * depth_cap + 24


def sums_bytes(n: int, m: int, edges: bool) -> int:
    """Bytes of the sums a run adds into: bc (8 n), and the edge sums (8 m) for edge BC."""
    return 8 * n + (8 * m if edges else 0)


def lanes_bytes(n: int, m: int, *, kernel: str, index_bytes: int, level_bytes: int,
                batch: int, depth_cap: int, directed: bool, edges: bool = False) -> int:
    """Device bytes of a lanes run with ``batch`` lanes (format, batch blocks, bc and the edge
    sums when ``edges``, control)."""
    return (lanes_format_bytes(n, m, index_bytes, directed, kernel)
            + batch * lane_bytes(n, level_bytes, depth_cap) + sums_bytes(n, m, edges)
            + 8 * _batched.CTL_SLOTS)


def choose_lanes(n: int, m: int, num_sources: int, free_bytes: int, *, index_bytes: int = 4,
                 level_bytes: int = 2, directed: bool = False, kernel: str = "vecsc",
                 depth_cap: int = DEPTH_CAP, memory_limit: int | None = None,
                 memory_fraction: float | None = None, max_batch: int | None = None,
                 edges: bool = False) -> int:
    """Lanes per batch: as many as ``memory_fraction`` of ``free_bytes`` holds.

    A pure function. The result is a multiple of 32, at most ``max_batch`` and at most
    ``num_sources`` rounded up to 32, and the batches it implies are as even as possible
    (``ceil(num_sources / batch)`` batches of nearly equal size). Returns 0 when not even
    32 lanes fit (the caller then runs one source at a time) or there is no source.

    Parameters
    ----------
    n, m : int
        Vertices and stored edges.
    num_sources : int
        Sources still to run.
    free_bytes : int
        Device memory available to the run (free plus CuPy's cached blocks).
    index_bytes, level_bytes : int
        Sizes of an index (4 or 8) and of a level (2 or 4).
    directed : bool
        Directed graphs keep CSR and CSC.
    kernel : str
        The lanes kernel (its storage format).
    depth_cap : int
        Levels of the shift table.
    memory_limit : int, optional
        The user's ``memory_limit`` in bytes: the batch is sized from
        ``min(free_bytes, memory_limit)``.
    memory_fraction, max_batch : optional
        Default: the knobs in force (``turbobc._tuning.Tuning.gpu_memory_fraction`` and
        ``max_batch``).
    edges : bool
        Edge BC: the 8 m bytes of the edge sums come out of the budget too.
    """
    max_batch = current_tuning().max_batch if max_batch is None else max_batch
    if num_sources <= 0:
        return 0
    budget = (_budget(free_bytes, memory_limit, memory_fraction)
              - lanes_format_bytes(n, m, index_bytes, directed, kernel)
              - sums_bytes(n, m, edges) - 1024)
    lanes = max(0, budget) // lane_bytes(n, level_bytes, depth_cap) // LANES * LANES
    if lanes < LANES:
        return 0
    batch = min(lanes, max_batch, round_up(num_sources, LANES))
    batches = -(-num_sources // batch)
    return round_up(-(-num_sources // batches), LANES)


def slot_lanes(n: int, m: int, free_bytes: int, *, index_bytes: int, level_bytes: int,
               depth_cap: int, directed: bool, kernel: str, scratch: int,
               memory_limit: int | None = None, edges: bool = False) -> int:
    """Lanes per batch of a lanes run with per-slot target weights (chain folding): as
    :func:`choose_lanes`, with a τ block (8 n) and an exponent column (as the shift table) more
    per lane and ``scratch`` bytes of the plan's device arrays out of the budget, and with
    ``edges`` (edge BC) the edge sums (8 m); a multiple of 32 (below 32: none fit), at most
    ``Tuning.max_batch``."""
    budget = _budget(free_bytes, memory_limit, None) - scratch
    per_lane = lane_bytes(n, level_bytes, depth_cap) + 8 * n + 4 * depth_cap
    lanes = (max(0, budget - lanes_format_bytes(n, m, index_bytes, directed, kernel)
                 - sums_bytes(n, m, edges) - 1024) // per_lane // LANES * LANES)
    return int(min(lanes, current_tuning().max_batch))


# ---- layers: a thread per (source, vertex) slot of each layer ----------------------------------

BYTES_PER_SLOT = 112
"""Device bytes per (source, vertex) slot of a batch of the wide sweep (``"wide"`` path):
distances 8, the DAG sweep's dense M, E, in-degree, pending count and δ (40), its level lists
(key, M, E: 24) and its δ lists (16), rounded up; more than the distances' own arrays take
while they are found (:data:`BYTES_PER_HOP_SLOT`)."""

BYTES_PER_HOP_SLOT = 64
"""Device bytes per (source, vertex) slot of a batch of the layer kernels (the ``"kernels"``
path, weighted or ``hops``): the larger of its two phases, the distances and the layer sweep.
The distances (layers_distances.py) keep dist 8, the frontier marks 1, the round stamps 4 and
the near-far phase stamps 4, the queue 8 and the far list 8 (33), and at the peak of a round
or a phase's end the next frontier 8, the copy a sort makes 8 and its scratch, or a phase's
distances and tests of the far keys (8 and 1): up to about 58. The layer sweep (the
distances' other arrays freed by then): dist 8, in-degree 4 and the next layer's marks 1 (both
freed after the forward layers; a marked layer's listing takes up to 8 more while it is copied
into the layer order), the vertices' first mask words (8 (n + 1), once), the DAG edge masks 4
(and a word per 32 out-edges of the vertices of more than 32, counted per source by
:func:`hop_source_bytes`), σ 8, layer order 8, δ 8 and the endpoint terms' temporaries (10): 41
at most in the forward layers, 46 in the backward ones. Rounded up. The lanes out of float64
range go to the wide sweep in batches of the full model. (The records of 2026-11-25 were
taken at 48.)"""

BYTES_PER_EDGE_SLOT = 64
"""Device bytes per (source, stored edge) of a weighted batch of the wide sweep: the
expansion of one level's out-edges (position, offset, edge, head, child key, tests: about 7
int64), at worst all."""


def chain_scratch_bytes(n: int, chains: int, inner: int) -> int:
    """Device bytes of a chain-folding plan beside a layers batch (``bcl_chain_terms``): its
    arrays (r and the chain of each vertex: 16 n; the prefix sums and the class lookup: 16 per
    inner vertex, 24 per chain), a launch's per-chain arguments (about 200 bytes a chain) and
    its class histograms (two of 2L + 1 doubles a chain: 32 per inner vertex, 48 per chain),
    and a MiB spare."""
    return 16 * n + 48 * inner + 272 * chains + (1 << 20)


def layers_format_bytes(n: int, m: int, index_bytes: int) -> int:
    """Bytes of what a layers run keeps of the graph: CSR (b (n + 1 + m)) and the lengths."""
    return index_bytes * (n + 1 + m) + 8 * m


def hop_source_bytes(n: int, m: int) -> int:
    """Device bytes per source of a batch of the layer kernels: :data:`BYTES_PER_HOP_SLOT` per
    vertex, and the DAG mask words past one per vertex (a 32-bit word per 32 out-edges of the
    vertices of more than 32: at most m / 32 words, ``dag_mask_layout``)."""
    return BYTES_PER_HOP_SLOT * n + 4 * (m // 32)


def layers_bytes(n: int, m: int, *, batch: int, index_bytes: int, edges: bool = False,
                 hops: bool = False) -> int:
    """Device bytes of a layers run with ``batch`` sources per batch; ``hops``: of the layer
    kernels (:data:`BYTES_PER_HOP_SLOT`), unweighted or the ``"kernels"`` path of a weighted
    run; otherwise of the wide sweep (:data:`BYTES_PER_SLOT`, :data:`BYTES_PER_EDGE_SLOT`)."""
    per_source = (hop_source_bytes(n, m) if hops
                  else BYTES_PER_SLOT * n + BYTES_PER_EDGE_SLOT * m)
    return (layers_format_bytes(n, m, index_bytes) + 8 * n + (8 * m if edges else 0)
            + batch * per_source)


def choose_layers_batch(n: int, m: int, num_sources: int, free_bytes: int, *,
                        index_bytes: int = 4, edges: bool = False,
                        memory_limit: int | None = None, memory_fraction: float | None = None,
                        hops: bool = False, slot_scratch: int | None = None) -> int:
    """Sources per layers batch: as many as ``memory_fraction`` (default
    ``Tuning.gpu_memory_fraction``) of the free bytes (or the ``memory_limit``) hold beside the
    format and the sums, at most ``num_sources``, ``Tuning.layers_max_batch`` (when set) and,
    for the wide sweep, ``WIDE_BATCH_ENTRIES // n``, and at least 1 (0 only when there is no source). The batches
    it implies are as even as possible. ``hops``: the batch of the layer kernels, weighted (the
    ``"kernels"`` path) or not (:data:`BYTES_PER_HOP_SLOT` per slot, no cap from the wide
    sweep); ``slot_scratch``: with a τ per slot (8 bytes more per slot) and that many bytes for
    the chain-folding plan (:func:`chain_scratch_bytes`). A pure function of its arguments and
    the knobs."""
    if num_sources <= 0:
        return 0
    budget = (_budget(free_bytes, memory_limit, memory_fraction)
              - layers_format_bytes(n, m, index_bytes) - 8 * n - (8 * m if edges else 0))
    if slot_scratch is not None:
        budget -= slot_scratch
    if hops:
        per_source = hop_source_bytes(max(n, 1), m) + (0 if slot_scratch is None else 8 * n)
        cap = num_sources
    else:
        per_source = BYTES_PER_SLOT * max(n, 1) + BYTES_PER_EDGE_SLOT * m
        cap = WIDE_BATCH_ENTRIES // max(n, 1)
    if current_tuning().layers_max_batch is not None:
        cap = min(cap, current_tuning().layers_max_batch)
    batch = max(1, min(num_sources, max(0, budget) // per_source, cap))
    batches = -(-num_sources // batch)
    return -(-num_sources // batches)


# ---- the pair sampler: a block per sample in flight ---------------------------------------------

def pair_block_bytes(n: int, index_bytes: int) -> int:
    """Device bytes of one block's workspace of the pair sampler (turbobc/engines/gpu/pairs.py):
    2 n levels (int32), 2 n path counts (float64) and 2 n visited vertices (the index type)."""
    return 2 * n * (4 + 8 + index_bytes)


def pair_blocks(n: int, index_bytes: int, free_bytes: int, most: int,
                memory_fraction: float) -> int:
    """Samples in flight: at most ``most`` blocks, as many workspaces as ``memory_fraction`` of
    the free bytes hold.

    Raises
    ------
    MemoryError
        When not even one workspace fits.
    """
    per_block = pair_block_bytes(n, index_bytes)
    fits = int(memory_fraction * free_bytes) // max(per_block, 1)
    if fits < 1:
        raise MemoryError(f"one sample's workspace takes {per_block} bytes; "
                          f"{free_bytes} bytes of device memory are free")
    return int(max(1, min(most, fits)))


# ---- frontiers: a source per block ---------------------------------------------------------

def frontier_block_bytes(n: int, index_bytes: int, target_row: bool = False) -> int:
    """Device bytes of one block's rows of the frontiers family: level 4, σ̂ 8, t 8, its own
    bc 8 and the queue (the index type) per vertex, and the level starts (the index type) and
    shifts (4) per level (at most n + 2 levels); with ``target_row`` (a phased run, per-slot
    target weights) a τ row (8 n) and the slot's cumulative shifts (4 per level)."""
    own = n * (4 + 8 + 8 + 8 + index_bytes) + (n + 2) * (index_bytes + 4)
    return own + (8 * n + 4 * (n + 2) if target_row else 0)


def frontier_graph_bytes(n: int, m: int, index_bytes: int) -> int:
    """Device bytes of the graph a frontiers run keeps: the relabeled CSR (b (n + 1 + m)), each
    entry's position in the graph's own order (8 m) and the labels both ways (16 n)."""
    return index_bytes * (n + 1 + m) + 8 * m + 16 * n


def frontiers_bytes(n: int, m: int, *, blocks: int, index_bytes: int,
                    edges: bool = False, target_rows: bool = False) -> int:
    """Device bytes of a frontiers run with ``blocks`` blocks: the relabeled graph, bc (8 n),
    the edge sums (8 m, and 8 m more in the relabeled order, for edge BC) and every block's
    rows (with ``target_rows``, a phased run's: :func:`frontier_block_bytes`)."""
    return (frontier_graph_bytes(n, m, index_bytes) + sums_bytes(n, m, edges)
            + (8 * m if edges else 0)
            + blocks * frontier_block_bytes(n, index_bytes, target_rows))


def choose_frontier_blocks(n: int, m: int, num_sources: int, free_bytes: int, most: int, *,
                           index_bytes: int = 4, edges: bool = False,
                           memory_limit: int | None = None,
                           memory_fraction: float | None = None,
                           target_rows: bool = False) -> int:
    """Blocks of a frontiers run (the sources in flight; a phased run's slots, with
    ``target_rows``): at most ``most`` (what can be resident, or a phased batch's share of
    it) and ``num_sources``, as many as ``memory_fraction`` of the free bytes (or of the
    memory limit) hold beside the format and the sums; 0 when not even one fits."""
    if num_sources <= 0:
        return 0
    budget = (_budget(free_bytes, memory_limit, memory_fraction)
              - frontiers_bytes(n, m, blocks=0, index_bytes=index_bytes, edges=edges) - 1024)
    fits = max(0, budget) // frontier_block_bytes(max(n, 1), index_bytes, target_rows)
    return int(min(most, num_sources, fits))
