"""The engines' tuning knobs, as one object that can be set for a block of code.

Every knob has a measured default (the docstrings of the engines name the records) and
none needs changing for correct results. Benchmarks and experiments change them for a block
of code::

    with turbobc.tuning(order="rcm", push_ratio=4):
        turbobc.bc(A)

The setting lives in a :class:`contextvars.ContextVar`, so it is local to the thread (and
asyncio task) that set it: two threads running :func:`turbobc.bc` at once each see their own
knobs, and nothing is kept in module globals.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from dataclasses import dataclass

__all__ = ["Tuning", "tuning", "current", "using"]


@dataclass(frozen=True)
class Tuning:
    """Knobs of the engines (all optional to change; defaults are the measured best).

    Attributes
    ----------
    order : str
        Source order of the GPU's lanes family: ``"auto"``, ``"bfs"``, ``"cluster"``,
        ``"rcm"`` or ``"vertex"`` (``turbobc.engines.gpu.lanes_order.locality_order``).
    order_min_share : float
        Sources are put in locality order only when they are at least this share of the
        vertices (fewer are swept in vertex order).
    push_ratio : int
        The lanes family's veCSC pushes a forward level while the frontier's unit-edges times this
        are fewer than all unit-edges (m · chunks); otherwise it pulls.
    batched_blocks_per_sm : int or None
        Cap on resident blocks per multiprocessor of a lanes launch (None: as many as fit).
    single_blocks_per_sm : int or None
        The same for the single-source launches.
    gpu_memory_fraction : float
        Share of the free device memory (plus CuPy's cached blocks) a GPU run may take.
    max_batch : int
        Most sources per batch of the GPU's lanes family.
    layers_max_batch : int or None
        Most sources per batch of the GPU's layers family (weighted graphs); None: as many as
        the memory holds (a deep graph's batch pays its distance rounds and layers whatever
        its size: road-luxembourg-osm weighted took 1.20x the time in batches of 16,384).
    cpu_memory_fraction : float
        Share of the available host memory an automatic CPU batch size may plan for
        (``memory_limit=`` replaces the whole budget).
    cpu_batch_cap : int
        Most (source, vertex) slots of a CPU batch, whatever the memory: larger batches sweep
        hardly faster but peak higher (email-Enron on two cores, 3,000 sources, CPU seconds
        of two runs each: B = 457 25.4 and 23.4, peak 1.26 GiB; B = 914 24.7 and 22.0, peak
        2.36 GiB; B = 2048 peaks at 5.0 GiB; turbobc/engines/graphblas/memory.py).
    cpu_collect_above_slots : int or float
        After a graphblas batch of at least this many (source, vertex) slots, Python's cyclic
        garbage collector runs (about 20 ms), which frees the batch's python-graphblas
        matrices (they sit in reference cycles) before the next batch; ``math.inf``: never.
        Smaller batches hold little (at most 160 MiB at 160 bytes per slot) and skip the
        20 ms. Measured on email-Enron, 3,000 sources in batches of 914, two cores (peak /
        resident set after each batch, GiB): never 6.35 / 2.22 4.19 5.85 6.29; after every
        batch 2.36 / 0.18 0.23 0.18 0.18 (bench/results/cpu_memory-20261123T144734Z.json,
        ``python -m bench.cpu_memory --mechanisms``).
    cpu_concurrent_batches : int or str
        Batches the graphblas engine sweeps at once, each in its own thread with its share of
        GraphBLAS's threads (a ``graphblas.ss.Context``), their sums added in batch order.
        ``"auto"``: a quarter of GraphBLAS's threads when it has at least 8, else 1 (one
        batch at a time with every thread). A batch's calls on a sparse level are too small
        to keep 16 threads busy, and batches at once still share Python's lock between calls,
        so the gain is small: exact BC on 16 cores, seconds with one batch at a time / "auto"
        (4 at once): road-minnesota 1.00 / 0.91, power 0.83 / 0.90, ca-GrQc 0.67 / 0.66,
        ego-Facebook 0.72 / 0.65, wiki-Vote 1.30 / 1.11
        (bench/results/cpu_threads-20261125T075733Z.json, NetworKit beside them).
    cpu_threads : int or None
        Threads of the cpu engine (turbobc/engines/cpu/threads.py); None:
        ``NUMBA_NUM_THREADS`` when set, else the cores this process may run on.
    cpu_lanes : bool or str
        Whether the cpu engine sweeps unweighted vertex BC 64 sources at a time, the sources
        as the bits of a word (turbobc/engines/cpu/lanes.py), rather than each source alone:
        ``"auto"`` on graphs whose breadth-first depth is at most ``cpu_lanes_max_depth``;
        True always; False never. Edge sums and lengths always take the walks of one source.
    cpu_lanes_max_depth : int
        ...the depth of one breadth-first order of the graph (every component from its least
        vertex). Exact BC on one thread, CPU seconds alone / in lanes (one-off runs, two
        shared cores): email-Eu-core (depth 4) 0.38 / 0.06, wiki-Vote (5) 19.6 / 4.7,
        ego-Facebook (6) 4.5 / 0.53, as20000102 (6) 3.6 / 1.5, p2p-Gnutella08 (6) 6.9 / 3.8,
        ca-GrQc (13) 2.5 / 1.5, power (27) 2.2 / 1.9, delaunay_n12 (31) 2.5 / 1.9, del13
        (42) 14.7 / 14.4, road-minnesota (99) 0.64 / 1.07, road80 (158) 3.5 / 10.1: a vertex
        lies at ever more distinct depths from the 64 sources of a deep graph.
    cpu_lanes_min_sources : int
        ...and ``"auto"`` only for a run of at least this many sources: a batch of 64 lanes
        costs about as much however few of them hold a source. Best of three, two shared
        cores, lanes / alone seconds (random sources): power 4 sources 0.040 / 0.016, 8
        0.064 / 0.016, 16 0.089 / 0.024, 32 0.120 / 0.040; ego-Facebook 4 0.035 / 0.020, 8
        0.036 / 0.026, 16 0.048 / 0.047, 32 0.049 / 0.074; ca-GrQc 8 0.036 / 0.012, 16
        0.048 / 0.026, 32 0.048 / 0.047 (what turbobc.DynamicBC's updates sweep).
        Before exact BC of an undirected graph (every vertex a source), vertex or edge BC,
        fold the trees hanging off it into the vertices they hang from and sweep the smaller
        core with source and target weights (:mod:`turbobc._reduce`; exact). A weighted graph
        folds only when every sum of its lengths is exact (``Graph.length_scale``: integer
        lengths, halves, ...). False sweeps the graph as it is.
    fold_min_share : float
        ...when at least this share of the vertices folds away: the core's weighted sweeps
        cost a little more per source, the work saved grows with the share folded. CPU
        engine, two cores, medians of three in one run, folded / unfolded seconds
        (bench/results/cpu-small-20261123T172134Z.json): power (32% folded) 3.37 / 6.45,
        ca-GrQc (21%) 2.93 / 4.24, as20000102 (38%) 2.27 / 4.80, wiki-Vote as an undirected
        graph (32%) 5.33 / 7.98, road-minnesota (5.3%) 1.075 / 1.077: the break-even.
    fold_chains : bool or "auto"
        Before exact BC (vertex or edge) of an undirected graph, unweighted or with exact sums
        of lengths, fold the sources inside chains of degree-2 vertices into the chains' ends
        (:mod:`turbobc._chains`; exact): the ends' sweeps carry them with per-slot target
        weights, their vertex or edge sums alike. False sweeps every core vertex; True
        folds on either engine; ``"auto"`` on the GPU engine when the core has at least
        ``chain_min_vertices`` vertices. Measured on an H200, exact BC with / without
        (bench/results/chain_folding-20261125T095535Z.json): road-luxembourg-osm 1.38 /
        8.94 s; the small graphs lose to the split launch and the target weights (road-minnesota
        0.027 / 0.023 s, power 0.024 / 0.017, ca-GrQc 0.020 / 0.012), and so does the CPU
        engine on the host's 16 cores (road-minnesota 0.98 / 0.89 s, power 1.63 / 1.13,
        ca-GrQc 1.70 / 0.84: its dense per-slot arrays cost more than the sources saved).
    chain_min_share : float
        ...when at least this share of the vertices lies inside chains.
    chain_min_vertices : int
        ...and (``"auto"``) the core has at least this many vertices.
    chain_max_length : int
        Chains of more edges stay unfolded (their in-chain pairs cost O(L²) on the host).
    gpu_weighted_path : str
        How the GPU engine sweeps a weighted graph's shortest-path DAG after the distances
        (``turbobc.engines.gpu.layers.PATHS``): ``"wide"``, engines/wide.py's sweep on CuPy
        (an exponent per count), or ``"kernels"``, the layer kernels of
        spmv/kernels/layers.cu (the default: 0.112 s against 0.668 s on ego-Facebook and
        3.3 s against 27.5 s on delaunay_n16, 8,192 sources, lengths 1..100, H200,
        bench/gpu_check.sh WEIGHTED run of 2026-11-23). Both pass the same GPU tests.
    gpu_block_distances : bool or "auto"
        The GPU's weighted distances (and the layers family's levels) found a source per block
        in shared memory (``bcl_block_distances`` of spmv/kernels/distances.cu: 8 bytes and a
        bit per vertex, so graphs of up to about 28,000 vertices on an H100 or H200) instead
        of in rounds over the whole batch. ``"auto"``: when they take at most 64 KiB (n up
        to about 8,000; ``turbobc.engines.gpu.layers_distances.BLOCK_AUTO_BYTES`` gives the
        measurements: ego-Facebook's weighted BC 0.047 s against 0.060, delaunay_n14's
        1.12 s against 0.25); True: whenever they fit; False: never.
    gpu_block_sweep : bool or "auto"
        The GPU's weighted DAG sweep (and the layers family's) a source per block in shared
        memory (``bcl_block_sweep`` of spmv/kernels/block_sweep.cu: 24 bytes per vertex, the
        layers behind block barriers) instead of a launch per layer over the whole batch.
        ``"auto"``: when it takes at most 200 KiB (n up to 8,500:
        ``turbobc.engines.gpu.layers_sweep.SWEEP_AUTO_BYTES``); True: whenever it fits the
        device's shared memory; False: never. Not with chain folding (its target weights
        come between the forward and the backward layers).
    gpu_block_near_far_width : float or None
        The same near-far phases inside ``bcl_block_distances`` (a source per block, above),
        in mean edge lengths; None: one phase. Weighted BC end to end, lengths 1..100, H200,
        seconds with None / 0.25 / 0.5 / 1 / 2 / 4 (bench/results/weighted_distances-
        20261125T121432Z.json): ego-Facebook 0.054 / 0.047 / 0.047 / 0.049 / 0.053 / 0.053,
        road-minnesota 0.026 / 0.025 / 0.022 / 0.021 / 0.020 / 0.019, power 0.018 / 0.025 /
        0.021 / 0.019 / 0.018 / 0.018, ca-GrQc 0.023 / 0.025 / 0.022 / 0.021 / 0.020 / 0.020,
        wiki-Vote 0.058 at every width. 1 is within 10% of the best on each.
    gpu_near_far_width : float or None
        The GPU's weighted distances run their Bellman–Ford rounds in near-far phases
        (turbobc/engines/gpu/layers_distances.py, ``distances``): a phase relaxes only the slots below
        its threshold, the least distance waiting plus this many mean edge lengths; None: one
        phase (every lowered slot relaxed in the next round). Equal lengths take one phase
        whatever this is. Lengths 1..100, H200, weighted BC from 4,039 / 8,192 / 4,096
        sources of ego-Facebook / delaunay_n16 / road-luxembourg-osm, seconds with one phase:
        0.120 / 3.52 / 1.64; width 0.5: 0.146 / 2.63 / 3.77; 1: 0.128 / 1.96 / 2.55;
        2: 0.121 / 1.83 / 1.82; 4: 0.116 / 1.86 / 1.42; 8: 0.117 / 1.95 / 1.34
        (bench/results/weighted_nearfar-20261125T075000Z.json). A narrow phase relaxes fewer
        slots before their distance is final but takes more rounds.
    gpu_family : str
        The GPU engine's family for unweighted runs of many sources
        (``turbobc.engines.gpu.engine.FAMILIES``): ``"lanes"``, a warp per vertex and 32
        sources (turbobc/engines/gpu/lanes.py), ``"layers"``, the layer kernels with every
        length 1 (a thread per source and vertex of each level, turbobc/engines/gpu/layers.py),
        ``"frontiers"``, a source per thread block with its frontier a queue
        (turbobc/engines/gpu/frontiers.py), or ``"auto"``: the lanes or the frontiers, whichever
        is predicted cheaper from the graph's facts (turbobc/engines/gpu/family_costs.py; on
        an H200 the frontiers took 0.5x to 0.6x the lanes' seconds on meshes and roads,
        delaunay_n16 1.09 s against 1.82 s, and 2x to 8x on social graphs,
        bench/results/family_choice-20261129T090626Z.json).
    approx_sampler : str
        What an approximate run (``epsilon=``) samples: ``"sources"`` (whole source sweeps,
        turbobc/_approx.py, any engine), ``"pairs"`` (one random shortest path per sampled
        pair, turbobc/_pairs.py: the GPU kernel, the cpu engine's compiled sampler, or on the
        graphblas engine a plain-Python reference for small graphs) or ``"auto"`` (pairs on
        the GPU and the cpu engine for unweighted graphs without Dask, sources otherwise).
    pair_cost_in_sources : float
        κ, a sampled pair's cost in source sweeps on the GPU: ``"auto"`` samples pairs only
        while Hoeffding's size for pairs times κ stays below n (else sources, exact when that
        costs no more).
    pair_switch_in_sources : float
        The exact rule's κ on the GPU (turbobc/_exact_rule.py): a sampled path's cost in
        sources of a full wave of the exact sweep. Before sampling, a graph whose n sources
        are a few waves is swept exactly when Hoeffding's size for pairs times κ reaches n;
        after each step of the pilot and each checkpoint, when the paths still needed times κ
        reach ``EXACT_SHARE`` of the sources. 0.2, below what a path costs: measured on one
        H200 (bench/results/approx-20261129T052241Z and -052430Z, a path's seconds over the
        exact run's seconds a source) 0.19 on ego-Twitter, 0.24 on CA-CondMat, 0.36 on
        email-Enron, 0.42 on astro-ph, 0.56 on delaunay_n16, 0.61 on kron18; but before
        sampling the rule weighs the upper limit, 3 to 7 times the paths a run needs, and
        the median, 0.4, took astro-ph at ε = 0.01 to its exact run, 0.07 s against 0.016 s
        of paths, and delaunay_n16 at 0.005 to 1.25 s against 0.99 s
        (approx-20261129T054622Z).
    frontier_max_degree : float
        ``gpu_family="auto"`` predicts the families' seconds (a search for the graph's depth)
        only for a graph of at most this many stored edges a vertex (meshes, roads and
        geometric graphs: 2 to 14; social and Kronecker graphs up to hundreds), and takes the
        lanes for a denser one.
    frontier_order : str
        The locality order the GPU's frontiers family relabels the graph in (an order of
        ``turbobc.engines.gpu.lanes_order.locality_order``: ``"rcm"``, ``"bfs"``, ``"cluster"``,
        ``"auto"``, or ``"vertex"``: as numbered).
    frontier_kernel : dict or None
        A compile-time variant of the frontiers kernel: FRONTIER_* macros of
        spmv/kernels/frontiers.cu without the prefix, e.g. ``{"BATCH": 2, "MIN_BLOCKS": 4}``
        (benchmarks of variants, bench/frontier_variants.py); None: the file's defaults.
    frontier_blocks_per_sm : int or None
        Cap on resident blocks per multiprocessor of the GPU's frontiers family (a source per
        block; None: as many as fit).
    pair_memory_fraction : float
        The share of the free device memory the pair sampler's workspaces may take
        (turbobc/engines/gpu/memory.py, ``pair_blocks``).
    cpu_pair_cost_in_sources : float
        κ on the cpu engine. One thread, µs per pair sample / ms per source of exact BC
        (64-lane batches): ego-Facebook 34 / 0.13, power 31 / 0.38, ca-GrQc 5.4 / 0.28 (one-off
        runs on two shared cores). κ = 0.075 lies between the break-evens of ε = 0.01 there:
        ego-Facebook (Hoeffding's 60,023 pairs) is swept exactly, power and ca-GrQc sample
        pairs, as is every one of them at ε = 0.05.
    cpu_pair_switch_in_sources : float
        The exact rule's κ on the cpu engine (turbobc/_exact_rule.py): after each step of the
        pairs' pilot and each checkpoint, the run sweeps every source instead (exact, folded
        as ``bc`` folds) when the paths still needed times this reach ``EXACT_SHARE`` (0.7)
        of n. A sampled path costs 0.06 to 0.36 of a source's sweep
        (ca-GrQc, power, ego-Facebook on 2 cores; 0.09 to 1.0 on 16): 0.2 sweeps power's
        4,941 sources at ε = 0.01 (0.43 s against 0.76 s of pairs on 2 cores) and keeps
        ca-GrQc's 12,000 predicted paths (0.05 s against 0.34 s exact).
    dask_chunk_sources : int or None
        Sources per chunk of a run on a Dask cluster (``client=``); None: automatic
        (:func:`turbobc._dask.chunk_size`: at most 64 chunks, at least the engine's batch).
    index_bits : str or int
        The index type of the graph's arrays (row pointers and column indices alike) on every
        engine: ``"auto"``, int32 while n and the stored edges stay below
        ``turbobc._graph.INT32_LIMIT`` (2^31 - 64) and int64 past it; ``64``: int64 on any
        graph, so that the 64-bit paths (GPU kernels instantiated with ``long long``, the cpu
        engine's compiled walks on int64 arrays, the graphblas conversion, validation and
        the folding of trees and chains) run on small graphs too (their tests:
        tests/test_index64.py). Correct results never need it: it costs 4 more bytes per
        stored edge (docs/architecture.md, "64-bit indices"). The GPU's single-source family
        takes two types: past 2^31 - 64 stored edges with fewer vertices, int64 row pointers
        beside int32 column indices (4 bytes a stored edge); ``"offsets64"`` forces that split
        on any graph (every other family and engine then runs in int64), as its tests do.
        ``turbobc._graph.index_dtype_for`` and ``single_index_types`` read it.
    dynamic_recompute_share : float
        :class:`turbobc.DynamicBC` recomputes a batch from scratch when sweeping its sources
        before and after it (2 |X| sources) would cost at least this share of the sources a
        fresh ``bc()`` sweeps, or when it changes at least half as many edges (two distance
        searches each; turbobc/_dynamic_exact.py): its sources counted, and priced at the
        seconds a source of the largest update so far. Below 1 for what a recompute's
        searches and a busy machine's noise add: at 1.0 the slowest of four random
        insertions took 1.16x a recompute on power and road-minnesota (two shared cores).
        ``math.inf``: never (the tests' way to reach the update on small graphs); 0: always.
    """

    order: str = "auto"
    order_min_share: float = 1 / 8
    push_ratio: int = 8
    batched_blocks_per_sm: int | None = None
    single_blocks_per_sm: int | None = None
    gpu_memory_fraction: float = 0.8
    max_batch: int = 16384
    layers_max_batch: int | None = None
    cpu_memory_fraction: float = 0.5
    cpu_batch_cap: int = 2**24
    cpu_collect_above_slots: int | float = 2**20
    cpu_concurrent_batches: int | str = "auto"
    cpu_threads: int | None = None
    cpu_lanes: bool | str = "auto"
    cpu_lanes_max_depth: int = 40
    cpu_lanes_min_sources: int = 16
    fold_trees: bool = True
    fold_min_share: float = 0.05
    fold_chains: bool | str = "auto"
    chain_min_share: float = 0.1
    chain_min_vertices: int = 16384
    chain_max_length: int = 1024
    gpu_weighted_path: str = "kernels"
    gpu_block_distances: bool | str = "auto"
    gpu_block_sweep: bool | str = "auto"
    gpu_block_near_far_width: float | None = 1.0
    gpu_near_far_width: float | None = 4.0
    gpu_family: str = "auto"
    dask_chunk_sources: int | None = None
    approx_sampler: str = "auto"
    pair_cost_in_sources: float = 0.05
    pair_switch_in_sources: float = 0.2
    pair_memory_fraction: float = 0.5
    frontier_max_degree: float = 16.0
    frontier_order: str = "rcm"
    frontier_kernel: dict | None = None
    frontier_blocks_per_sm: int | None = None
    cpu_pair_cost_in_sources: float = 0.075
    cpu_pair_switch_in_sources: float = 0.2
    index_bits: int | str = "auto"
    dynamic_recompute_share: float = 0.8


_CURRENT: contextvars.ContextVar[Tuning] = contextvars.ContextVar("turbobc_tuning",
                                                                  default=Tuning())


def current() -> Tuning:
    """The knobs in force in this thread (or task)."""
    return _CURRENT.get()


@contextlib.contextmanager
def tuning(**changes):
    """Set engine knobs for the ``with`` block (this thread or task only).

    Parameters
    ----------
    **changes
        Fields of :class:`Tuning` and their values.

    Raises
    ------
    TypeError
        For a name that is not a knob.

    Examples
    --------
    >>> import turbobc
    >>> with turbobc.tuning(push_ratio=4):
    ...     turbobc._tuning.current().push_ratio
    4
    >>> turbobc._tuning.current().push_ratio
    8
    """
    known = {f.name for f in dataclasses.fields(Tuning)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise TypeError(f"unknown tuning knob(s) {unknown}; the knobs are {sorted(known)}")
    token = _CURRENT.set(dataclasses.replace(_CURRENT.get(), **changes))
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def using(knobs: Tuning):
    """Set every knob to ``knobs`` for the ``with`` block (this thread or task only): how a
    Dask worker runs a chunk under the knobs of the call that submitted it
    (turbobc/_dask.py)."""
    token = _CURRENT.set(knobs)
    try:
        yield knobs
    finally:
        _CURRENT.reset(token)
