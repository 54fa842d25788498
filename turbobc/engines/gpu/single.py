"""The single-source family: Algorithm 1 of the TurboBC paper on the device, one source per
sweep (:class:`SingleFamily`, the family protocol of turbobc/engines/gpu/family.py).

A run sweeps with exactly one storage format (CSC for scCSC and veCSC, COOC
for scCOOC), allocates the sweep vectors once, and launches one persistent kernel per chunk of
sources (spmv/kernels/single.cuh): inside it, each BFS level and each dependency level is one
grid barrier, so there is no host round trip per level at all. The format, the vectors and the
result stay in the GPU sweeper's :class:`~turbobc.engines.gpu.resident.DeviceResident`, kept
across its runs.

Device memory, n vertices, m stored edges, index size b bytes (4, or 8 past 2^31 - 64 vertices
and under ``Tuning.index_bits=64``), pointer size p bytes (b, or 8 beside 4-byte indices past
2^31 - 64 stored edges: ``turbobc._graph.single_index_types``; scCOOC keeps no pointers and
takes 8-byte indices there)::

    format  CSC: p (n + 1) + b m      COOC: 2 b m
    S       b n       depth of discovery (the frontier is σ<S == d−1>, never stored)
    σ, t    16 n      path counts (scaled per level) and the backward accumulator
    bc      8 n       the result
    shifts  4 n       per-level power-of-two scale of σ
    sources b k
    units   (b + p) m / 1024 at most   (veCSC: hub columns cut into pieces of 1024 entries)

so a single-source CSC run needs 4m + 36n bytes (+ small) in int32, within the 4m + 48n model,
8m + 44n in int64, within 8m + 56n, and 4m + 40n with int64 pointers, within 4m + 52n
(turbobc/engines/gpu/memory.py, ``single_bytes`` and ``single_model``): kron26's 6.2 billion
stored edges in 4.3 bytes each instead of 8.5.
The frontier f and the dependencies δ are never stored: f = σ̂<S == d−1> and δ = σ̂ .* t, so
the paper's "free the BFS vectors before allocating the dependency vectors" holds trivially.
scCOOC stores 2m indices, so it fits the model only for mean degree below about 3 or small
graphs; ``kernel="auto"`` therefore chooses it only where it fits (spmv.select).
"""

from __future__ import annotations

import numpy as np

import spmv
from spmv import _ctl, _launch

from turbobc._graph import Graph, single_index_types
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.family import Family, Plan
from turbobc.engines.gpu.memory import (check_single_limit, device_memory_text, index_words,
                                        single_bytes, single_model)
from turbobc.engines.gpu.resident import DeviceFull, DeviceResident, allocated
from turbobc.engines.protocol import Partial
from turbobc.engines.wide import accumulate_wide

__all__ = ["SingleFamily", "DeviceSweep", "run_single", "index_types", "single_parts"]

_CTL_SLOTS = _ctl.N_CTL  # the control block (spmv/kernels/ctl.cuh)
_WIDE_SOURCE_SLOT = _ctl.WIDE_SOURCE  # 1 + the source that stopped a launch, 0: none


class _Vectors:
    """The sweep vectors of one index type: S, σ, t and the shifts (module docstring)."""

    def __init__(self, n: int, index_dtype):
        import cupy

        self.S = cupy.empty(n, dtype=index_dtype)
        self.sigma = cupy.empty(n, dtype=np.float64)
        self.t = cupy.empty(n, dtype=np.float64)
        self.shifts = cupy.empty(n + 2, dtype=np.int32)

    def arrays(self):
        return self.S, self.sigma, self.t, self.shifts


def index_types(graph: Graph, index_dtype=None) -> tuple[np.dtype, np.dtype]:
    """The (vertex, position) types a run sweeps with: ``index_dtype`` (one type for both, or
    a pair), by default ``single_index_types`` of the graph's size and ``Tuning.index_bits``."""
    if index_dtype is None:
        return single_index_types(graph.n, graph.nnz)
    if isinstance(index_dtype, tuple):
        return np.dtype(index_dtype[0]), np.dtype(index_dtype[1])
    return np.dtype(index_dtype), np.dtype(index_dtype)


def _statistics(resident: DeviceResident, vertex, position):
    """The graph statistics ``kernel="auto"`` selects from: measured on the device once, then
    kept in ``resident``."""
    if resident.statistics is None:
        graph = resident.graph
        colptr = resident.fetch("csc_ptr", position)
        rowidx = resident.fetch("csc_idx", vertex)
        resident.statistics = spmv.stats_device(colptr, rowidx, graph.n, graph.nnz,
                                                graph.directed)
        resident.mark(8 * graph.n + 8)  # the degrees it needed while it ran
    return resident.statistics


def single_parts(vertex, position) -> dict:
    """The parts the single family sweeps with, each in its type (``DeviceResident.keep_only``):
    pointers in ``position``, indices in ``vertex``, veCSC's units in both."""
    return {"csc_ptr": position, "csc_idx": vertex, "csc_col": vertex,
            "units": (vertex, position)}


def _format(resident: DeviceResident, kernel: str, vertex, position):
    """The kernel (``"auto"`` resolved), the statistics it was chosen from (None unless
    ``auto``), the format it sweeps (arrays a and b, and the veCSC hub units or None) and
    the (vertex, position) types it sweeps in."""
    had_pointers = resident.has("csc_ptr", position)
    stats = None
    if kernel == "auto":
        stats = _statistics(resident, vertex, position)
        kernel = spmv.select(stats)
    if kernel == "sccooc":
        # COOC keeps no pointers: its entries are vertices and its loops long, but the
        # columns are expanded from pointers of the same type, so a split run takes the
        # positions' type for both (its int32 indices, if the statistics fetched them, go).
        if vertex != position:
            resident.drop("csc_idx", vertex)
            vertex = position
        # COOC: row = the CSC row indices, col expanded from the column pointers; pointers
        # copied only for this go again, so only one format stays on the device.
        col = resident.fetch("csc_col", vertex)
        if not had_pointers:
            resident.drop("csc_ptr", vertex)
        return kernel, stats, col, resident.fetch("csc_idx", vertex), None, (vertex, vertex)
    # CSC on the device: column j lists the in-neighbours of j.
    colptr = resident.fetch("csc_ptr", position)
    rowidx = resident.fetch("csc_idx", vertex)
    units = resident.fetch("units", (vertex, position)) if kernel == "vecsc" else None
    return kernel, stats, colptr, rowidx, units, (vertex, position)


class DeviceSweep:
    """Device arrays of one run: the storage format and the sweep vectors, kept in
    ``resident`` (a private :class:`~turbobc.engines.gpu.resident.DeviceResident` when None,
    as bench/ builds one run), and the sources of the run.

    Raises CuPy's OutOfMemoryError when the device cannot hold them.
    """

    def __init__(self, graph: Graph, sources: np.ndarray, kernel: str, index_dtype,
                 resident: DeviceResident | None = None):
        import cupy

        if resident is None:
            resident = DeviceResident(graph)
            resident.begin_run()
        self.resident = resident
        if resident.workspace("single") is None:
            resident.drop_workspace()  # the batched blocks: room for the format first
        vertex, position = index_types(graph, index_dtype)
        (self.kernel, self.stats, self.a, self.b, self.units,
         self.index_types) = _format(resident, kernel, vertex, position)
        vertex = self.index_types[0]
        self.sources = cupy.asarray(sources.astype(vertex))
        vectors = resident.workspace("single")
        if vectors is None or vectors.S.dtype != vertex:
            resident.drop_workspace()
            vectors = _Vectors(graph.n, vertex)
            resident.keep_workspace("single", vectors)
        self.S, self.sigma, self.t, self.shifts = vectors.arrays()
        self.bc, self.ctl = resident.accumulator(_CTL_SLOTS)
        self._launch_cache: dict = {}  # kernel, grid and the records that stay the same

    @property
    def baseline(self) -> int:
        """Pool bytes in use before the run, less what the resident object held then."""
        return self.resident.baseline

    @property
    def peak(self) -> int:
        """The most pool bytes in use during the run so far."""
        return self.resident.peak

    def launch(self, graph: Graph, begin: int, end: int, endpoints: bool,
               weights=(None, None)) -> int:
        """Run sources[begin:end] with the device weights (τ, ω) (None: all ones); returns
        the grid size used."""
        return _launch.SWEEPS[self.kernel](
            self.a, self.b, graph.n, graph.nnz, self.sources[begin:end], self.S, self.sigma,
            self.t, self.bc, self.shifts, self.ctl, directed=graph.directed,
            endpoints=endpoints, units=self.units, tau=weights[0], omega=weights[1],
            blocks_per_sm=current_tuning().single_blocks_per_sm, cache=self._launch_cache)


class SingleFamily(Family):
    """One source per sweep: a persistent launch of scCSC, scCOOC or veCSC per chunk of
    sources (module docstring).

    Parameters
    ----------
    problem : Problem
        Vertex sums only (``problem.edges`` runs on the lanes family); τ and ω of the
        accumulate step, endpoints, kernel, memory limit.
    index_dtype : numpy dtype or (vertex, position) pair, optional
        Force int32 or int64 indices (tests of the int64 path); default:
        ``turbobc._graph.single_index_types``.
    """

    name = "single"

    def __init__(self, problem, *, index_dtype=None):
        super().__init__(problem)
        self.index_dtype = index_dtype

    def plan(self, resident, num_sources: int) -> Plan:
        graph = resident.graph
        vertex, position = index_types(graph, self.index_dtype)
        kernel = self.problem.kernel
        return Plan(self.name, batch=1,
                    model_bytes=single_bytes(graph.n, graph.nnz, kernel, vertex,
                                             num_sources, position),
                    shape={"kernel": kernel, "index_dtype": vertex.name,
                           "position_dtype": position.name})

    def sweep(self, resident, sources, progress=None):
        """Raw sums of ``sources``: ``raw[v] = Σ_{s in sources, s != v} ω(s) δ_s(v)`` over
        ordered pairs (not halved for undirected graphs); with ``endpoints``, +ω(s) for every
        vertex reached from s other than s, and ω(s) (reached − 1) for s itself. The facts:
        family, kernel, grid, index type, scf, sources swept with per-vertex exponents, peak
        pool bytes, the memory model, ``resident_reused`` and ``upload_seconds``.

        Raises
        ------
        ValueError
            For an unknown kernel name.
        MemoryError
            When the model exceeds ``memory_limit``, or the device cannot hold the run; says
            how many bytes were needed and free. Everything allocated is released first.
        """
        problem = self.problem
        spmv.check_kernel(problem.kernel)
        facts: dict = {}
        sources = np.asarray(sources, dtype=np.int64)
        with resident.run():
            raw = run_single(resident, sources, endpoints=problem.endpoints,
                             kernel=problem.kernel, progress=progress,
                             memory_limit=problem.memory_limit, facts=facts,
                             index_dtype=self.index_dtype,
                             weights=resident.accumulate_weights(problem.target_weight,
                                                                 problem.source_weight))
        return Partial(vertex=raw, sources=int(sources.size)), facts


def run_single(resident: DeviceResident, sources, *, endpoints, kernel, progress,
               memory_limit, facts, index_dtype=None, weights=(None, None)) -> np.ndarray:
    """The raw vertex sums of ``sources`` inside :meth:`DeviceResident.run`, one source per
    sweep (:meth:`SingleFamily.sweep`; also the lanes family's way when not even 32 lanes
    fit)."""
    graph = resident.graph
    n, m = graph.n, graph.nnz
    sources = np.asarray(sources, dtype=np.int64)
    if sources.size == 0 or n == 0:
        return np.zeros(n, dtype=np.float64)
    vertex, position = index_types(graph, index_dtype)
    check_single_limit(n, m, kernel, vertex, sources.size, memory_limit,
                       extra_bytes=DeviceResident.weight_bytes(weights),
                       position_dtype=position)
    # Everything is allocated before the first launch, so a run that finds the device full
    # while it holds arrays of earlier runs may drop them all and start once more.
    failure = None
    for _ in range(2 if resident.held_bytes() else 1):
        try:
            return _sweep(resident, sources, endpoints=endpoints, kernel=kernel,
                          progress=progress, facts=facts, index_dtype=(vertex, position),
                          weights=weights)
        except DeviceFull as exc:
            failure = exc.failure
        # The run's frames (and the arrays they held) died with the except block.
        resident.release()
    del weights  # nothing of the run stays on the device while the error travels
    need = single_bytes(n, m, "sccooc" if kernel == "sccooc" else "sccsc", vertex,
                        sources.size, position)
    raise MemoryError(f"the GPU engine needs about {need} bytes of device memory for this "
                      f"graph (n={n}, {m} stored edges, {index_words(vertex, position)}, "
                      f"kernel={kernel!r}); "
                      f"{device_memory_text()}. "
                      f"CuPy said: {failure}")


def _sweep(resident: DeviceResident, sources: np.ndarray, *, endpoints, kernel, progress, facts,
           index_dtype, weights=(None, None)) -> np.ndarray:
    """Launch chunk after chunk of sources; raises DeviceFull when the arrays do not fit."""
    import cupy

    graph = resident.graph
    n, m = graph.n, graph.nnz
    resident.drop_edge_accumulator()  # this family sums no edges (edge BC runs batched)
    run = allocated(lambda: DeviceSweep(graph, sources, kernel, index_dtype, resident))
    chunk, done, grid = 1, 0, 0
    wide = []
    while done < sources.size:
        end = min(sources.size, done + chunk)
        grid = run.launch(graph, done, end, endpoints, weights)
        stopped_at = int(run.ctl[_WIDE_SOURCE_SLOT].get())
        if stopped_at:
            # Source done + stopped_at - 1 spread its counts too wide for per-level scaling:
            # the launch stopped before adding anything of it; the sweep of turbobc.engines.wide
            # takes it, and the next launch starts after it.
            run.ctl[_WIDE_SOURCE_SLOT] = 0
            end = done + stopped_at
            wide.append(int(sources[end - 1]))
        if progress is not None:
            progress.update(end - done - (1 if stopped_at else 0))
        done, chunk = end, min(2 * chunk, 4096)
    vertex, position = run.index_types
    if wide:
        accumulate_wide(cupy, resident.borrow("csr_ptr", position),
                        resident.borrow("csr_idx", vertex), n, np.array(wide), run.bc,
                        endpoints=endpoints, progress=progress, target_weight=weights[0],
                        source_weight=weights[1])
    raw = run.bc.get()
    if facts is not None:
        facts.update(family="single", kernel=run.kernel, grid=grid, index_dtype=vertex.name,
                     position_dtype=position.name, wide_sources=len(wide),
                     scf=None if run.stats is None else run.stats.scf,
                     peak_pool_bytes=resident.peak - resident.baseline,
                     model_bytes=single_model(n, m, vertex, position),
                     expected_bytes=single_bytes(n, m, run.kernel, vertex, sources.size,
                                                 position),
                     **resident.run_facts())
    return raw
