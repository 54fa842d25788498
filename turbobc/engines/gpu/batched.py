"""The batched GPU engine: B sources per sweep, as n x B vertex-major blocks on the device.

Used by :func:`turbobc.bc` whenever more than one source is needed (exact BC, ``k``,
``sources``), and for edge BC with any number of sources; one source of vertex BC goes to
:mod:`turbobc.engines.gpu.single`. Every per-source vector of
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

so a batch needs about 18.6 bytes per (vertex, source). Nothing depends on the size of a
frontier, so the batch size chosen from free memory (:func:`choose_batch`) cannot run out
mid-sweep. The format, the blocks, bc and the control block stay in a
:class:`~turbobc.engines.gpu.resident.DeviceResident` (a GPU sweeper's, across its runs); a run
first lets go of the parts it does not sweep with, and counts kept blocks as free when it
sizes its batch (they are reused when they :func:`holds` it, else replaced).

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

from turbobc.engines.protocol import SlotCounts
from turbobc._graph import Graph, index_dtype_for
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.resident import SINGLE_PARTS, DeviceFull, DeviceResident, allocated
from turbobc.engines.wide import accumulate_wide

__all__ = ["accumulate", "accumulate_on", "choose_batch", "memory_model", "planned_batch",
           "sums_bytes", "locality_order", "sweep_order", "holds", "DEPTH_CAP"]

# The knobs (share of free memory a run may take, most lanes per batch, source order, the
# share of vertices from which sources are ordered for locality) are fields of
# turbobc._tuning.Tuning, with their measured defaults and what they were measured on.

DEPTH_CAP = 2048
"""Levels of the shift table at first; a deeper batch is rerun with four times as many."""

LANES = _batched.LANES


def planned_batch(graph: Graph, num_sources: int, *, memory_limit: int | None = None,
                  edges: bool = False) -> int:
    """About the lanes of one batch a run of ``num_sources`` sources would take now: the
    memory model of the largest format (veCSC), 2-byte levels and the free device memory
    (a Dask run sizes its chunks from it, turbobc/_dask.py); 1 when not even 32 lanes fit."""
    index_dtype = index_dtype_for(graph.n, graph.nnz)
    batch = choose_batch(graph.n, graph.nnz, num_sources, _device_free_bytes(),
                         index_bytes=index_dtype.itemsize, level_bytes=2,
                         directed=graph.directed, kernel="vecsc", memory_limit=memory_limit,
                         edges=edges)
    return max(1, batch)


def _round_up(x: int, k: int) -> int:
    return -(-x // k) * k


def format_bytes(n: int, m: int, index_bytes: int, directed: bool, kernel: str) -> int:
    """Bytes of the storage format a batched kernel keeps on the device."""
    if kernel == "sccooc":
        return index_bytes * (n + 1 + 2 * m)
    return index_bytes * (n + 1 + m) * (2 if directed else 1)


def lane_bytes(n: int, level_bytes: int, depth_cap: int) -> int:
    """Bytes one lane (one source of a batch) costs: see the module docstring."""
    return n * (level_bytes + 16) + _round_up(2 * level_bytes * n, LANES) // LANES \
        + _round_up(2 * 8 * n, LANES) // LANES + 4 * depth_cap + 24


def sums_bytes(n: int, m: int, edges: bool) -> int:
    """Bytes of the sums a run adds into: bc (8 n), and the edge sums (8 m) for edge BC."""
    return 8 * n + (8 * m if edges else 0)


def memory_model(n: int, m: int, *, kernel: str, index_bytes: int, level_bytes: int,
                 batch: int, depth_cap: int, directed: bool, edges: bool = False) -> int:
    """Device bytes of a run with ``batch`` lanes (format, batch blocks, bc and the edge
    sums when ``edges``, control)."""
    return (format_bytes(n, m, index_bytes, directed, kernel)
            + batch * lane_bytes(n, level_bytes, depth_cap) + sums_bytes(n, m, edges)
            + 8 * _batched.CTL_SLOTS)


def choose_batch(n: int, m: int, num_sources: int, free_bytes: int, *, index_bytes: int = 4,
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
        The batched kernel (its storage format).
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
    knobs = current_tuning()
    memory_fraction = knobs.gpu_memory_fraction if memory_fraction is None else memory_fraction
    max_batch = knobs.max_batch if max_batch is None else max_batch
    if num_sources <= 0:
        return 0
    if memory_limit is not None:
        free_bytes = min(free_bytes, memory_limit)
    budget = (int(memory_fraction * free_bytes)
              - format_bytes(n, m, index_bytes, directed, kernel) - sums_bytes(n, m, edges)
              - 1024)
    lanes = max(0, budget) // lane_bytes(n, level_bytes, depth_cap) // LANES * LANES
    if lanes < LANES:
        return 0
    batch = min(lanes, max_batch, _round_up(num_sources, LANES))
    batches = -(-num_sources // batch)
    return _round_up(-(-num_sources // batches), LANES)


# Source orders (the knob Tuning.order), how :func:`locality_order` ranks the sources: ``"bfs"``
# (breadth-first order from a pseudo-peripheral vertex, O(n + m) in SciPy), ``"cluster"``
# (greedy breadth-first balls of 32 vertices: compact groups on meshes and roads, O(n + m) in
# Python), ``"rcm"`` (scipy's reverse Cuthill-McKee, quadratic in the largest degree),
# ``"vertex"`` (as numbered), ``"auto"`` (``"cluster"`` on meshes: the breadth-first search from
# the vertex of largest degree is at least :data:`CLUSTER_DEPTH` levels deep, the mean degree at
# least :data:`CLUSTER_MIN_DEGREE` and the graph has at most :data:`CLUSTER_MAX_NNZ` stored
# edges; ``"bfs"`` when that search is at most :data:`BFS_MAX_DEPTH` deep; else ``"rcm"``).
#
# Measured on an H200 (bench/results/exact_gpu_variants-20261122T025208Z.json, device loop of
# the first 16384 sources, times n / 16384): kron18 rcm 58.3 s, bfs 73.6 s; myc16 rcm 7.8 s,
# bfs 7.4 s; del16 cluster 2.2 s, rcm 4.4 s; road-luxembourg-osm (mean degree 2.1) rcm 16.3 s,
# cluster 21.2 s. See bench/gpu_notes.md, "Source order".

BFS_MAX_DEPTH = 2
"""Eccentricity of the vertex of largest degree up to which ``"auto"`` takes the (cheap)
breadth-first order: on graphs this shallow every order does about as well (myc14, H200,
device loop of exact BC: bfs 0.092 s, rcm 0.094 s, vertex 0.136 s; ordering on the host:
bfs 0.011 s, rcm 0.035 s; bench/results/exact_gpu_variants-20261122T033838Z.json)."""

CLUSTER_DEPTH = 16
"""Eccentricity of the vertex of largest degree from which ``"auto"`` may group in balls."""

CLUSTER_MIN_DEGREE = 4.0
"""Least mean degree (stored edges / n) for ball groups: road networks (2.1) keep RCM."""

CLUSTER_MAX_NNZ = 8_000_000
"""Most stored edges for which the (Python) ball grouping runs: about 1 s per million."""


def _bfs(csr, root: int):
    """Breadth-first order from ``root`` (edges taken both ways) and the distance of every
    vertex it reaches (-1 elsewhere). O(n + m) in SciPy plus O(n log depth) in NumPy."""
    from scipy.sparse.csgraph import breadth_first_order

    order, pred = breadth_first_order(csr, root, directed=True, return_predecessors=True)
    n = csr.shape[0]
    dist = np.full(n, -1, dtype=np.int64)
    # pointer jumping over the BFS tree: hops[v] to jump[v], until every jump is the root
    jump = pred[order].astype(np.int64)
    jump[0] = root
    hops = np.ones(order.size, dtype=np.int64)
    hops[0] = 0
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(order.size)
    jump = pos[jump]                       # positions in `order`
    while True:
        done = jump == 0
        if done.all():
            break
        hops = hops + np.where(done, 0, hops[jump])
        jump = np.where(done, 0, jump[jump])
    dist[order] = hops
    return order, dist


def _balls(indptr: np.ndarray, indices: np.ndarray, seq: np.ndarray) -> np.ndarray:
    """Groups of :data:`LANES` vertices grown greedily as breadth-first balls: each ball
    starts at the first vertex of ``seq`` not yet taken and takes the nearest vertices not
    yet taken (a ball that runs out of room is completed by the next one). Returns ``seq``
    reordered ball by ball. O(n + m) steps in Python: used on graphs of a few million edges.
    """
    from collections import deque

    ptr = indptr.tolist()
    idx = indices.tolist()
    taken = bytearray(len(ptr) - 1)
    out = []
    for start in seq.tolist():
        if taken[start]:
            continue
        need = LANES - len(out) % LANES
        queue = deque([start])
        taken[start] = 1
        out.append(start)
        need -= 1
        while queue and need:
            v = queue.popleft()
            for w in idx[ptr[v]:ptr[v + 1]]:
                if not taken[w]:
                    taken[w] = 1
                    out.append(w)
                    queue.append(w)
                    need -= 1
                    if not need:
                        break
    return np.asarray(out, dtype=np.int64)


def locality_order(graph: Graph, order: str | None = None) -> tuple[np.ndarray, str, int]:
    """Rank of every vertex in the order the sources are swept, the order used (``"auto"``
    resolved) and the depth found.

    Sources are swept in this order, so the 32 sources of a unit sit close together: their
    distances to any vertex differ little, and a unit takes part in few levels. Edges count
    both ways; vertices the first breadth-first search does not reach follow in vertex order.
    ``order`` defaults to the knob ``Tuning.order`` (the orders: see the comment above). The depth is
    the eccentricity of the vertex of largest degree (-1 when no breadth-first search ran):
    a lower bound of the deepest batch, at least half the diameter of that component.
    """
    import scipy.sparse as sp

    order = current_tuning().order if order is None else order
    depth = -1
    n = graph.n
    rank = np.empty(n, dtype=np.int64)
    if order == "vertex" or n == 0:
        rank[:] = np.arange(n)
        return rank, order, depth
    csr = sp.csr_matrix(graph.pattern)
    if order == "auto":
        # eccentricity of the vertex of largest degree: deep graphs are meshes and roads
        start = int(np.argmax(np.diff(csr.indptr)))
        seq, dist = _bfs(csr, start)
        depth = int(dist.max())
        mesh = (depth >= CLUSTER_DEPTH and graph.nnz >= CLUSTER_MIN_DEGREE * n
                and graph.nnz <= CLUSTER_MAX_NNZ)
        order = "cluster" if mesh else "bfs" if depth <= BFS_MAX_DEPTH else "rcm"
    if order == "rcm":
        from scipy.sparse.csgraph import reverse_cuthill_mckee

        seq = reverse_cuthill_mckee(csr, symmetric_mode=not graph.directed)
        rank[seq] = np.arange(n, dtype=np.int64)
        return rank, order, depth
    if order not in ("bfs", "cluster"):
        raise ValueError(f"unknown source order {order!r}")
    # pseudo-peripheral vertex: the last one reached from the vertex of largest degree
    if depth < 0:
        start = int(np.argmax(np.diff(csr.indptr)))
        seq, dist = _bfs(csr, start)
        depth = int(dist.max())
    seq1, _ = _bfs(csr, int(seq[-1]))
    if order == "bfs":
        head = seq1
    else:
        head = _balls(csr.indptr, csr.indices, seq1)
    rest = np.ones(n, dtype=bool)
    rest[head] = False
    seq = np.concatenate([head, np.flatnonzero(rest)])
    rank[seq] = np.arange(n, dtype=np.int64)
    return rank, order, depth


# Tuning.order_min_share (1/8): sources are put in locality order only when they are at least
# this share of the vertices: the order is an O(n + m) pass on the host whatever the number of
# sources, and a few sources spread over a large graph rarely neighbour each other (kron20,
# k = 1000, H200: rcm order 1.57 s on the host for a device loop of 0.50 s instead of 0.60 s
# in vertex order).


def sweep_order(graph: Graph, sources: np.ndarray) -> tuple[np.ndarray, str, int | None]:
    """The sources in the order they are swept, the order's name, and the depth estimate
    for :func:`spmv._batched.select_batched` (None when no search ran).

    Nearby sources share units (module docstring), so the sources follow
    :func:`locality_order` when they are at least ``Tuning.order_min_share`` of the vertices,
    and vertex order otherwise.
    """
    if sources.size < current_tuning().order_min_share * graph.n:
        return np.sort(sources), "vertex", None
    rank, order, depth = locality_order(graph)
    ordered = sources[np.argsort(rank[sources], kind="stable")]
    return ordered, order, (depth if depth >= 0 else None)


def _device_free_bytes() -> int:
    import cupy

    pool = cupy.get_default_memory_pool()
    free, _ = cupy.cuda.runtime.memGetInfo()
    available = free + pool.free_bytes()
    limit = pool.get_limit()
    if limit:
        available = min(available, limit - pool.used_bytes())
    return max(0, available)


class _Format:
    """The storage format a batched kernel sweeps (CSR, plus CSC for directed graphs; COO rows
    for scCOOC), fetched from ``resident`` (built there when missing)."""

    def __init__(self, resident: DeviceResident, kernel: str, index_dtype):
        self.out_ptr = resident.fetch("csr_ptr", index_dtype)
        self.out_idx = resident.fetch("csr_idx", index_dtype)
        self.in_ptr, self.in_idx = self.out_ptr, self.out_idx  # A == Aᵀ when undirected
        self.erow, self.ecol = self.out_idx, self.out_idx      # unused unless scCOOC
        if kernel == "sccooc":
            self.erow = resident.fetch("csr_row", index_dtype)
        elif resident.graph.directed:
            self.in_ptr = resident.fetch("csc_ptr", index_dtype)
            self.in_idx = resident.fetch("csc_idx", index_dtype)

    @staticmethod
    def parts(kernel: str, directed: bool) -> tuple[str, ...]:
        """The resident parts the format is made of."""
        if kernel == "sccooc":
            return ("csr_ptr", "csr_idx", "csr_row")
        return ("csr_ptr", "csr_idx") + (("csc_ptr", "csc_idx") if directed else ())


def holds(shape: tuple, batch: int, level_dtype, depth_cap: int) -> bool:
    """Whether a workspace of ``shape`` (its lanes, level type and shift-table levels) serves
    a batch of ``batch`` lanes with ``level_dtype`` levels and ``depth_cap`` table levels: it
    has at least as many lanes, levels at least as wide and a table at least as deep."""
    lanes, held_level, held_cap = shape
    return (lanes >= batch and np.dtype(held_level).itemsize >= np.dtype(level_dtype).itemsize
            and held_cap >= depth_cap)


class _Workspace:
    """The n x B blocks of one batch size, level type and shift-table depth."""

    def __init__(self, n: int, batch: int, level_dtype, depth_cap: int):
        import cupy

        self.batch, self.level_dtype, self.depth_cap = batch, np.dtype(level_dtype), depth_cap
        units = n * (batch // LANES)
        self.level = cupy.empty(n * batch, dtype=level_dtype)
        self.sigma = cupy.empty(n * batch, dtype=np.float64)
        self.t = cupy.empty(n * batch, dtype=np.float64)
        self.flag0 = cupy.empty(units, dtype=level_dtype)
        self.flag1 = cupy.empty(units, dtype=level_dtype)
        self.masks = cupy.empty(2 * units, dtype=np.uint64)
        self.shifts = cupy.empty(batch * depth_cap, dtype=np.int32)
        self.maxbits = cupy.empty(batch, dtype=np.uint64)
        self.reached = cupy.empty(batch, dtype=np.uint64)

    @property
    def shape(self) -> tuple:
        """(lanes, level type, shift-table levels)."""
        return self.batch, self.level_dtype, self.depth_cap

    def arrays(self):
        return (self.level, self.sigma, self.t, self.flag0, self.flag1, self.masks,
                self.shifts, self.maxbits, self.reached)


def _workspace(resident: DeviceResident, n: int, batch: int, level_dtype,
               depth_cap: int) -> _Workspace:
    """The workspace ``resident`` keeps when it :func:`holds` the batch, else a new one (the
    old one is let go first, so its blocks can serve the new one)."""
    held = resident.workspace("batched")
    if held is not None and holds(held.shape, batch, level_dtype, depth_cap):
        return held
    held = None  # no reference may keep the old blocks from the pool
    resident.drop_workspace()
    ws = _Workspace(n, _round_up(batch, LANES), level_dtype, depth_cap)
    resident.keep_workspace("batched", ws)
    return ws


def _out_of_memory(n, m, kernel, batch, failure, edges=False) -> MemoryError:
    from turbobc.engines.gpu.single import _free_bytes

    need = batch * lane_bytes(n, 2, DEPTH_CAP) + (8 * m if edges else 0)
    what = " and the edge sums" if edges else ""
    return MemoryError(f"the batched GPU engine needs about {need} bytes of device memory for "
                       f"a batch of {batch} sources{what} (n={n}, {m} stored edges, "
                       f"kernel={kernel!r}); {_free_bytes()}. CuPy said: {failure}")


def accumulate(graph: Graph, sources: np.ndarray, *, endpoints: bool, kernel: str, progress,
               memory_limit: int | None = None, facts: dict | None = None,
               _batch: int | None = None,
               target_weight=None, source_weight=None, edge_raw=None,
               _level_dtype=None, _index_dtype=None,
               _depth_cap: int | None = None) -> np.ndarray:
    """Raw (unscaled) Brandes dependencies summed over ``sources``, B sources per sweep.

    Builds the format on the device, sweeps and frees it: :func:`accumulate_on` over a
    :class:`~turbobc.engines.gpu.resident.DeviceResident` closed at the end (a GPU sweeper
    keeps its own across runs instead).

    Parameters
    ----------
    graph : Graph
        The validated pattern.
    sources : numpy.ndarray
        Distinct source vertices, int64, 1-D (possibly empty).
    endpoints : bool
        Also count the endpoints of each path (networkx ``endpoints=True``).
    kernel : str
        ``"auto"`` or a name in ``spmv.KERNELS``, meaning its batched generalization (module
        docstring).
    progress : tqdm or None
        Updated once per finished batch, by the batch's number of sources.
    memory_limit : int, optional
        Bytes of device memory the run may take: batches are sized from the lower of it and
        the free memory (:func:`choose_batch`); when not even 32 lanes fit, the single-source
        engine runs under the same limit (and refuses a graph whose model exceeds it).
    facts : dict, optional
        Filled with the facts of the run: family, kernel, source order, seconds of ordering
        and of the sweeps, batch size, batches, depth, reruns, sources swept with per-vertex
        exponents, types, peak pool bytes, the memory model, whether the format was found
        resident (``resident_reused``) and the seconds spent building it (``upload_seconds``).
    _batch : int, optional
        Force the number of sources per batch (tests); default :func:`choose_batch`.
    _level_dtype : numpy dtype, optional
        Start with int32 levels instead of int16 (tests of the wide path).
    target_weight, source_weight : numpy.ndarray, optional
        τ and ω of the accumulate step (float64, length n; None: all ones), as
        :class:`~turbobc.engines.protocol.Problem` defines them.
    edge_raw : numpy.ndarray, optional
        float64, one per stored edge, aligned with ``graph.pattern.indices``: each edge's
        share of the dependencies over ``sources`` is added to it (edge BC, ω-weighted; the
        EdgeSums kernels, and :mod:`turbobc.engines.wide` for sources whose counts spread too
        wide). None: vertex sums only.
    _index_dtype : numpy dtype, optional
        Force int32 or int64 indices (tests of the int64 path).
    _depth_cap : int, optional
        Initial levels of the shift table (tests of its growth).

    Returns
    -------
    numpy.ndarray
        float64, length n: ``raw[v] = Σ_{s in sources, s != v} δ_s(v)`` over ordered pairs
        (not halved for undirected graphs); with ``endpoints``, +1 for every vertex reached
        from s other than s, and (reached − 1) for s itself.

    Raises
    ------
    ValueError
        For an unknown kernel name.
    MemoryError
        When the device cannot hold even the storage format; everything allocated is
        released first. When the format fits but no batch of 32 sources does, the run goes
        one source at a time through :mod:`turbobc.engines.gpu.single` instead, except for
        edge BC (``edge_raw``), which that family does not compute: MemoryError then too.
    """
    with DeviceResident(graph) as resident:
        return accumulate_on(resident, sources, endpoints=endpoints, kernel=kernel,
                             progress=progress, memory_limit=memory_limit, facts=facts,
                             _batch=_batch, _level_dtype=_level_dtype,
                             target_weight=target_weight,
                             source_weight=source_weight, edge_raw=edge_raw,
                             _index_dtype=_index_dtype, _depth_cap=_depth_cap)


def accumulate_on(resident: DeviceResident, sources: np.ndarray, *, endpoints: bool,
                  kernel: str, progress, memory_limit: int | None = None,
                  facts: dict | None = None, target_weight=None, source_weight=None,
                  edge_raw=None, _batch: int | None = None, _level_dtype=None,
                  _index_dtype=None, _depth_cap: int | None = None,
                  slot_weights=None) -> np.ndarray:
    """:func:`accumulate` on the graph of ``resident``, reusing the format parts, workspace and
    accumulator it holds and keeping what the run builds (turbobc/engines/gpu/resident.py).
    With ``slot_weights`` (``Problem.slot_weights``) the batches are the plan's and
    ``sources`` is unused (:func:`_sweep_slots`).

    Raises
    ------
    RuntimeError
        When ``resident`` is closed, or already running.
    """
    spmv.check_kernel(kernel)
    if slot_weights is not None:
        from turbobc.engines.protocol import SlotWeightsDeclined

        full = None
        with resident.run():
            try:
                return _sweep_slots(resident, slot_weights, kernel=kernel, progress=progress,
                                    memory_limit=memory_limit, facts=facts,
                                    target_weight=target_weight, _batch=_batch)
            except DeviceFull as exc:
                full = exc.failure  # not exc itself: its traceback holds the run's arrays
            except _out_of_device_memory() as exc:  # an allocation outside allocated()
                full = str(exc)
            finally:
                slot_weights.forget_device()  # the plan's uploads
        resident.release()
        # the caller sweeps unfolded, whose own memory model says whether it fits
        raise SlotWeightsDeclined(f"the device ran out of memory: {full}")
    with resident.run():
        return _accumulate(resident, sources, endpoints=endpoints, kernel=kernel,
                           progress=progress, memory_limit=memory_limit, facts=facts,
                           weights=resident.accumulate_weights(target_weight, source_weight),
                           edge_raw=edge_raw, _batch=_batch, _level_dtype=_level_dtype,
                           _index_dtype=_index_dtype, _depth_cap=_depth_cap)


def _accumulate(resident: DeviceResident, sources, *, endpoints, kernel, progress,
                memory_limit, facts, _batch, _level_dtype, _index_dtype,
                _depth_cap, weights=(None, None), edge_raw=None) -> np.ndarray:
    """The run inside :meth:`DeviceResident.run`."""
    from turbobc.engines.gpu import single

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
    index_dtype = np.dtype(_index_dtype) if _index_dtype is not None else index_dtype_for(n, m)
    level_dtype = np.dtype(_level_dtype) if _level_dtype is not None else np.dtype(np.int16)
    failure = None
    try:
        raw = _sweep(resident, sources, endpoints=endpoints, name=name, progress=progress,
                     memory_limit=memory_limit, facts=facts, index_dtype=index_dtype,
                     level_dtype=level_dtype, depth_cap=min(n + 2, _depth_cap or DEPTH_CAP),
                     forced_batch=_batch, order=order, order_seconds=order_seconds,
                     weights=weights, edge_raw=edge_raw)
    except DeviceFull as exc:
        failure = exc.batch, exc.failure  # not exc itself: its traceback holds the run's arrays
    if failure is not None:
        # The run's frames (and the arrays they held) died with the except block.
        resident.release()
        del weights  # nothing of the run stays on the device while the error travels
        raise _out_of_memory(n, m, name, *failure, edges=edge_raw is not None)
    if raw is None:
        # Not even 32 lanes fit: one source at a time (its memory model is far smaller), on
        # the parts of the format the single-source family sweeps with.
        resident.keep_only(SINGLE_PARTS, index_dtype)
        resident.drop_workspace()
        return single._accumulate(resident, sources, endpoints=endpoints, kernel=kernel,
                                  progress=progress, memory_limit=memory_limit, facts=facts,
                                  _index_dtype=_index_dtype, weights=weights)
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
    resident.keep_only(_Format.parts(name, graph.directed), index_dtype)
    if resident.workspace("batched") is None:
        resident.drop_workspace()
    if not edges:
        resident.drop_edge_accumulator()
    fmt = allocated(lambda: _Format(resident, name, index_dtype), LANES)

    def size_for(remaining: int) -> int:
        if forced_batch is not None:
            return min(forced_batch, remaining)
        # the blocks of a kept workspace are reused, or let go before new ones are allocated;
        # kept edge sums are reused (choose_batch counts them among the sums)
        free = (_device_free_bytes() + resident.workspace_bytes("batched")
                + resident.edge_bytes())
        return choose_batch(n, m, remaining, free, index_bytes=index_dtype.itemsize,
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
            ws = allocated(lambda: _workspace(resident, n, batch, level_dtype, depth_cap),
                           batch)
            # a kept workspace may hold wider levels or a deeper shift table: sweep with them
            level_dtype, depth_cap = ws.level_dtype, ws.depth_cap
            resident.mark()
        end = min(sources.size, start + batch)
        grid = _batched.sweep_batch(
            name, in_ptr=fmt.in_ptr, in_idx=fmt.in_idx, out_ptr=fmt.out_ptr,
            out_idx=fmt.out_idx, erow=fmt.erow, ecol=fmt.ecol, n=n, m=m,
            stride=_round_up(end - start, LANES), sources=dev_sources[start:end],
            level=ws.level, sigma=ws.sigma, t=ws.t, flag0=ws.flag0, flag1=ws.flag1,
            masks=ws.masks, shifts=ws.shifts, dcap=depth_cap, maxbits=ws.maxbits,
            reached=ws.reached, bc=bc, ctl=ctl, endpoints=endpoints,
            max_in_degree=max_in_degree, push_ratio=knobs.push_ratio,
            blocks_per_sm=knobs.batched_blocks_per_sm, tau=weights[0], omega=weights[1],
            edge=edge)
        status, batch_depth = _status_of(ctl)
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
            level_dtype, depth_cap = _widened(status, level_dtype, depth_cap, n)
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
        facts.update(family="batched", kernel=name, order=order, order_seconds=order_seconds,
                     sweep_seconds=seconds, batch=batch, batches=batches,
                     depth=depth, reruns=reruns, wide_sources=len(wide_sources),
                     grid=grid, level_dtype=str(level_dtype), index_dtype=str(index_dtype),
                     depth_cap=depth_cap, peak_pool_bytes=resident.peak - resident.baseline,
                     model_bytes=memory_model(n, m, kernel=name,
                                              index_bytes=index_dtype.itemsize,
                                              level_bytes=level_dtype.itemsize,
                                              batch=_round_up(batch, LANES),
                                              depth_cap=depth_cap, directed=graph.directed,
                                              edges=edges),
                     edge_sums=edges,
                     **resident.run_facts())
    return raw


def _status_of(ctl) -> tuple[int, int]:
    """(status, depth) of the batch just swept, from its control block: 0, or why it stopped
    (``WIDE_RANGE``, ``LEVEL_OVERFLOW``, a batch deeper than the shift table)."""
    status, depth = (int(x) for x in ctl[_batched.STATUS_SLOT:_batched.DEPTH_SLOT + 1].get())
    return status, depth


def _widened(status: int, level_dtype, depth_cap: int, n: int):
    """The level type and shift-table depth to sweep a batch again with, after it stopped
    with ``status``: int32 levels past the int16 ones (``LEVEL_OVERFLOW``), else a shift table
    four times deeper (at most n + 2 levels)."""
    if status == _batched.LEVEL_OVERFLOW:
        return np.dtype(np.int32), depth_cap
    return level_dtype, min(n + 2, 4 * depth_cap)


def _out_of_device_memory():
    import cupy

    return cupy.cuda.memory.OutOfMemoryError


def _sweep_slots(resident: DeviceResident, plan, *, kernel, progress, memory_limit, facts,
                 target_weight, _batch: int | None = None) -> np.ndarray:
    """The batches of ``plan`` (per-slot target weights, ``Problem.slot_weights``): per batch
    a forward launch, the plan's target weights written into a τ block laid out as ``t``
    (own weight ⊗ ``target_weight``, plus the plan's terms), and a backward launch with it.
    Raises :class:`~turbobc.engines.protocol.SlotWeightsDeclined` when a batch's counts need
    the wide sweep, or when the plan's batches no longer fit once a batch needs wider
    levels or a deeper shift table."""
    import cupy

    from turbobc.engines.protocol import SlotWeightsDeclined

    graph = resident.graph
    n, m = graph.n, graph.nnz
    knobs = current_tuning()
    order_began = time.perf_counter()
    rank, order, depth_estimate = locality_order(graph)
    order_seconds = time.perf_counter() - order_began
    name = kernel if kernel != "auto" else _batched.select_batched(
        n, m, plan.sources.size, depth=depth_estimate if depth_estimate >= 0 else None)
    index_dtype = index_dtype_for(n, m)
    level_dtype, depth_cap = np.dtype(np.int16), min(n + 2, DEPTH_CAP)
    resident.keep_only(_Format.parts(name, graph.directed), index_dtype)
    resident.drop_workspace()
    resident.drop_edge_accumulator()
    fmt = allocated(lambda: _Format(resident, name, index_dtype), LANES)
    # the plan's arrays on the device (prefix sums, chain of each vertex, r: 24 n) and its
    # per-chain arrays and histograms (about 200 bytes a chain, the histograms 16 (2L + 1)),
    # with room to spare
    chains = plan.chains
    scratch = 64 * (n + 1024) + 200 * chains.count + 32 * int(chains.inner.size
                                                              + 2 * chains.count)

    def size_for() -> int:
        if _batch is not None:
            return _batch
        free = _device_free_bytes() + resident.workspace_bytes("batched")
        # the τ block (8 bytes a slot) and the plan's device arrays come out too
        budget = free if memory_limit is None else min(free, memory_limit)
        budget = int(knobs.gpu_memory_fraction * budget) - scratch
        # per lane also the τ block (8 n) and the exponent table (as the shift table)
        per_lane = lane_bytes(n, level_dtype.itemsize, depth_cap) + 8 * n + 4 * depth_cap
        lanes = (max(0, budget - format_bytes(n, m, index_dtype.itemsize, graph.directed, name)
                     - sums_bytes(n, m, False) - 1024) // per_lane // LANES * LANES)
        return int(min(lanes, knobs.max_batch))

    capacity = size_for()
    if capacity < LANES:
        raise SlotWeightsDeclined("not even 32 slots fit beside the format and the τ block")
    batches = plan.batches(capacity, rank)
    bc, ctl = allocated(lambda: resident.accumulator(_batched.CTL_SLOTS), capacity)
    base = cupy.ones(n) if target_weight is None else cupy.asarray(
        np.asarray(target_weight, dtype=np.float64))
    max_in_degree = int(graph.in_degree.max())
    began = time.perf_counter()
    ws, depth, reruns, target_seconds, grid = None, 0, 0, 0.0, 0
    for index, slots in enumerate(batches):
        stride = _round_up(slots.size, LANES)
        dev_slots = cupy.asarray(slots.astype(index_dtype))
        common = dict(in_ptr=fmt.in_ptr, in_idx=fmt.in_idx, out_ptr=fmt.out_ptr,
                      out_idx=fmt.out_idx, erow=fmt.erow, ecol=fmt.ecol, n=n, m=m,
                      stride=stride, sources=dev_slots, bc=bc, ctl=ctl, endpoints=False,
                      max_in_degree=max_in_degree, push_ratio=knobs.push_ratio,
                      blocks_per_sm=knobs.batched_blocks_per_sm)
        while True:
            if ws is None:
                ws = allocated(lambda: _workspace(resident, n, capacity, level_dtype,
                                                  depth_cap), capacity)
                level_dtype, depth_cap = ws.level_dtype, ws.depth_cap
                tau = allocated(lambda: cupy.empty(ws.batch * n, dtype=np.float64), capacity)
            work = dict(level=ws.level, sigma=ws.sigma, t=ws.t, flag0=ws.flag0,
                        flag1=ws.flag1, masks=ws.masks, shifts=ws.shifts, dcap=depth_cap,
                        maxbits=ws.maxbits, reached=ws.reached)
            _batched.sweep_batch(name, **common, **work, phase=_batched.PHASE_FORWARD)
            status, batch_depth = _status_of(ctl)
            if status == 0:
                break
            if status == _batched.WIDE_RANGE:
                raise SlotWeightsDeclined("path counts spread wider than per-level scaling "
                                          "holds")
            # deeper than the level type or the shift table: widen and run it again
            reruns += 1
            level_dtype, depth_cap = _widened(status, level_dtype, depth_cap, n)
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
            index, _LaneCounts(ws, tau_block, n, stride, batch_depth))
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
    if facts is not None:
        facts.update(family="batched", kernel=name, order=order, order_seconds=order_seconds,
                     sweep_seconds=time.perf_counter() - began, batch=capacity,
                     batches=len(batches), depth=depth, reruns=reruns,
                     slot_weight_seconds=target_seconds, grid=grid,
                     model_bytes=memory_model(n, m, kernel=name,
                                              index_bytes=index_dtype.itemsize,
                                              level_bytes=level_dtype.itemsize,
                                              batch=capacity, depth_cap=depth_cap,
                                              directed=graph.directed) + 8 * n * capacity
                     + scratch, level_dtype=str(level_dtype),
                     index_dtype=str(index_dtype), depth_cap=depth_cap,
                     peak_pool_bytes=resident.peak - resident.baseline, **resident.run_facts())
    return raw


class _LaneCounts(SlotCounts):
    """A batch's levels and counts on the device, for per-slot target weights
    (:class:`turbobc._chains.SlotCounts`): lane b of vertex v is entry ((b / 32) n + v) 32
    + b % 32 of each block. It serves :meth:`chain_terms` with a kernel and :meth:`at` by
    gathers, so it needs none of the (chains, n) blocks (``levels``, ``counts``,
    ``add_target_weights``) the array code of the base class reads."""

    def __init__(self, ws: "_Workspace", tau_block, n: int, stride: int, depth: int):
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
        """:meth:`SlotCounts.chain_terms` in one launch of ``bcc_chain_terms``
        (spmv/kernels/chains.cu): a block per (chain, stretch of vertices)."""
        from spmv import _module

        cupy = self.xp
        dev = cupy.asarray
        uploaded = plan.on_device(cupy)  # what every batch of the plan reads, once
        prefix, chain_of, r = uploaded["prefix"], uploaded["chain_of"], uploaded["r"]
        size = int(rows.hist_off[-1])
        mass = cupy.zeros(size, dtype=np.float64)
        tie_mass = cupy.zeros(size, dtype=np.float64)
        stretches = max(1, min(64, -(-self.n // 4096)))
        width = int(2 * rows.length.max() + 1)
        kernel = _module.get_kernel("chains.cu", "bcc_chain_terms<long long>")
        shared = 16 * width  # the two histograms of the longest chain
        if not _module.allow_shared_memory(kernel, shared):
            from turbobc.engines.protocol import SlotWeightsDeclined

            raise SlotWeightsDeclined(f"a chain of {int(rows.length.max())} edges needs "
                                      f"{shared} bytes of shared memory, more than the device "
                                      "gives a block")
        kernel((rows.chains.size, stretches), (256,),
               (self._level, np.int32(self._level.dtype.itemsize), self._sigma,
                self._exponent if self._exponent is not None else np.uint64(0),
                np.int64(self._stride), np.int64(self.n), dev(rows.chains),
                dev(rows.lane_a), dev(rows.lane_b), dev(rows.first), dev(rows.last),
                dev(rows.length), dev(rows.prefix_off), dev(rows.hist_off), prefix, chain_of,
                r, self._tau, mass, tie_mass), shared_mem=shared)
        return cupy.asnumpy(mass), cupy.asnumpy(tie_mass)
