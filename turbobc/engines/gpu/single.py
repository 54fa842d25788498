"""The GPU engine: Algorithm 1 of the TurboBC paper on the device, one source per sweep.

:func:`accumulate_on` sweeps with exactly one storage format (CSC for scCSC and veCSC, COOC
for scCOOC), allocates the sweep vectors once, and launches one persistent kernel per chunk of
sources (spmv/kernels/single.cuh): inside it, each BFS level and each dependency level is one
grid barrier, so there is no host round trip per level at all. The format, the vectors and the
result stay in a :class:`~turbobc.engines.gpu.resident.DeviceResident`: a GPU sweeper's, kept
across its runs, or, for :func:`accumulate`, one that lives for the call.

Device memory, n vertices, m stored edges, index size b bytes (4, or 8 past 2^31 - 1)::

    format  CSC: b (n + 1 + m)        COOC: 2 b m
    S       b n       depth of discovery (the frontier is σ<S == d−1>, never stored)
    σ, t    16 n      path counts (scaled per level) and the backward accumulator
    bc      8 n       the result
    shifts  4 n       per-level power-of-two scale of σ
    sources b k
    units   2 b m / 1024 at most   (veCSC: hub columns cut into pieces of 1024 entries)

so a single-source CSC run needs 4m + 36n bytes (+ small) in int32, within the 4m + 48n model.
The frontier f and the dependencies δ are never stored: f = σ̂<S == d−1> and δ = σ̂ .* t, so
the paper's "free the BFS vectors before allocating the dependency vectors" holds trivially.
scCOOC stores 2m indices, so it fits the model only for mean degree below about 3 or small
graphs; ``kernel="auto"`` therefore chooses it only where it fits (spmv.select).
"""

from __future__ import annotations

import numpy as np

import spmv
from spmv import _ctl, _launch

from turbobc._graph import Graph, index_dtype_for
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.resident import DeviceFull, DeviceResident, allocated
from turbobc.engines.wide import accumulate_wide

__all__ = ["accumulate", "accumulate_on", "memory_model", "check_memory_limit"]

_CTL_SLOTS = _ctl.N_CTL  # the control block (spmv/kernels/ctl.cuh)
_WIDE_SOURCE_SLOT = _ctl.WIDE_SOURCE  # 1 + the source that stopped a launch, 0: none



def memory_model(n: int, m: int, kernel: str, index_dtype, num_sources: int = 1) -> int:
    """Bytes of device memory a run needs (the arrays of this module's docstring)."""
    b = np.dtype(index_dtype).itemsize
    fmt = 2 * b * m if kernel == "sccooc" else b * (n + 1 + m)
    return fmt + b * n + 24 * n + 4 * (n + 2) + 8 * _CTL_SLOTS + b * num_sources


def check_memory_limit(n: int, m: int, kernel: str, index_dtype, num_sources: int,
                       memory_limit: int | None, extra_bytes: int = 0) -> None:
    """Refuse a run whose :func:`memory_model` exceeds ``memory_limit`` (None: no limit).

    ``kernel="auto"`` is modelled as CSC (what scCSC and veCSC store; ``auto`` picks scCOOC only
    where its format fits the same model).

    Raises
    ------
    MemoryError
        Naming the model's bytes, the graph and the limit.
    """
    if memory_limit is None:
        return
    need = memory_model(n, m, "sccooc" if kernel == "sccooc" else "sccsc", index_dtype,
                        num_sources) + extra_bytes  # extra: the accumulate weights
    if need > memory_limit:
        from turbobc._memory import format_bytes

        raise MemoryError(f"the GPU engine needs about {format_bytes(need)} of device memory "
                          f"for one source of this graph (n={n}, {m} stored edges, "
                          f"kernel={kernel!r}), but memory_limit is "
                          f"{format_bytes(memory_limit)}; raise memory_limit")


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


def _statistics(resident: DeviceResident, index_dtype):
    """The graph statistics ``kernel="auto"`` selects from: measured on the device once, then
    kept in ``resident``."""
    if resident.statistics is None:
        graph = resident.graph
        colptr = resident.fetch("csc_ptr", index_dtype)
        rowidx = resident.fetch("csc_idx", index_dtype)
        resident.statistics = spmv.stats_device(colptr, rowidx, graph.n, graph.nnz,
                                                graph.directed)
        resident.mark(8 * graph.n + 8)  # the degrees it needed while it ran
    return resident.statistics


def _format(resident: DeviceResident, kernel: str, index_dtype):
    """The kernel (``"auto"`` resolved), the statistics it was chosen from (None unless
    ``auto``), and the format it sweeps: arrays a and b, and the veCSC hub units or None."""
    had_pointers = resident.has("csc_ptr", index_dtype)
    stats = None
    if kernel == "auto":
        stats = _statistics(resident, index_dtype)
        kernel = spmv.select(stats)
    if kernel == "sccooc":
        # COOC: row = the CSC row indices, col expanded from the column pointers; pointers
        # copied only for this go again, so only one format stays on the device.
        col = resident.fetch("csc_col", index_dtype)
        if not had_pointers:
            resident.drop("csc_ptr", index_dtype)
        return kernel, stats, col, resident.fetch("csc_idx", index_dtype), None
    # CSC on the device: column j lists the in-neighbours of j.
    colptr = resident.fetch("csc_ptr", index_dtype)
    rowidx = resident.fetch("csc_idx", index_dtype)
    units = resident.fetch("units", index_dtype) if kernel == "vecsc" else None
    return kernel, stats, colptr, rowidx, units


class _DeviceSweep:
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
        self.kernel, self.stats, self.a, self.b, self.units = _format(resident, kernel,
                                                                      index_dtype)
        self.sources = cupy.asarray(sources.astype(index_dtype))
        vectors = resident.workspace("single")
        if vectors is None or vectors.S.dtype != index_dtype:
            resident.drop_workspace()
            vectors = _Vectors(graph.n, index_dtype)
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


def _free_bytes() -> str:
    import cupy

    pool = cupy.get_default_memory_pool()
    free, total = cupy.cuda.runtime.memGetInfo()
    limit = pool.get_limit()
    text = (f"{free} bytes free on the device of {total}, {pool.free_bytes()} more cached in "
            f"CuPy's memory pool")
    if limit:
        text += f", pool limit {limit} bytes with {pool.used_bytes()} in use"
    return text


def accumulate(graph: Graph, sources: np.ndarray, *, endpoints: bool, kernel: str, progress,
               memory_limit: int | None = None, facts: dict | None = None,
               target_weight=None, source_weight=None, _index_dtype=None) -> np.ndarray:
    """Raw (unscaled) Brandes dependencies summed over ``sources``, on the GPU.

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
        ``"auto"`` (the selector ``spmv.select`` on the device-computed scf) or a name in
        ``spmv.KERNELS``.
    progress : tqdm or None
        Updated once per finished source.
    memory_limit : int, optional
        Bytes of device memory the run may take; a run whose :func:`memory_model` exceeds it
        is refused before anything is allocated (:func:`check_memory_limit`).
    facts : dict, optional
        Filled with the facts of the run: family, kernel, grid, index type, scf, sources
        swept with per-vertex exponents, peak pool bytes, the memory model, whether the
        format was found resident (``resident_reused``) and the seconds spent building it
        (``upload_seconds``).
    target_weight, source_weight : numpy.ndarray, optional
        τ and ω of the accumulate step (float64, length n; None: all ones), as
        :class:`~turbobc.engines.protocol.Problem` defines them.
    _index_dtype : numpy dtype, optional
        Force int32 or int64 indices (tests of the int64 path); default: the smallest that fits.

    Returns
    -------
    numpy.ndarray
        float64, length n: ``raw[v] = Σ_{s in sources, s != v} δ_s(v)`` over ordered pairs (not
        halved for undirected graphs); with ``endpoints``, +1 for every vertex reached from s
        other than s, and (reached − 1) for s itself.

    Raises
    ------
    ValueError
        For an unknown kernel name.
    MemoryError
        When the model exceeds ``memory_limit``, or the device cannot hold the run; says how
        many bytes were needed and free. Everything allocated is released first.
    """
    with DeviceResident(graph) as resident:
        return accumulate_on(resident, sources, endpoints=endpoints, kernel=kernel,
                             progress=progress, memory_limit=memory_limit, facts=facts,
                             target_weight=target_weight, source_weight=source_weight,
                             _index_dtype=_index_dtype)


def accumulate_on(resident: DeviceResident, sources: np.ndarray, *, endpoints: bool,
                  kernel: str, progress, memory_limit: int | None = None,
                  facts: dict | None = None, target_weight=None, source_weight=None,
                  _index_dtype=None) -> np.ndarray:
    """:func:`accumulate` on the graph of ``resident``, reusing the format parts, vectors and
    accumulator it holds and keeping what the run builds (turbobc/engines/gpu/resident.py).

    Raises
    ------
    RuntimeError
        When ``resident`` is closed, or already running.
    """
    spmv.check_kernel(kernel)
    with resident.run():
        return _accumulate(resident, sources, endpoints=endpoints, kernel=kernel,
                           progress=progress, memory_limit=memory_limit, facts=facts,
                           weights=resident.accumulate_weights(target_weight, source_weight),
                           _index_dtype=_index_dtype)


def _accumulate(resident: DeviceResident, sources, *, endpoints, kernel, progress,
                memory_limit, facts, _index_dtype, weights=(None, None)) -> np.ndarray:
    """The run inside :meth:`DeviceResident.run` (also the batched family's fallback)."""
    graph = resident.graph
    n, m = graph.n, graph.nnz
    sources = np.asarray(sources, dtype=np.int64)
    if sources.size == 0 or n == 0:
        return np.zeros(n, dtype=np.float64)
    index_dtype = np.dtype(_index_dtype) if _index_dtype is not None else index_dtype_for(n, m)
    check_memory_limit(n, m, kernel, index_dtype, sources.size, memory_limit,
                       extra_bytes=DeviceResident.weight_bytes(weights))
    # Everything is allocated before the first launch, so a run that finds the device full
    # while it holds arrays of earlier runs may drop them all and start once more.
    failure = None
    for _ in range(2 if resident.held_bytes() else 1):
        try:
            return _sweep(resident, sources, endpoints=endpoints, kernel=kernel,
                          progress=progress, facts=facts, index_dtype=index_dtype,
                          weights=weights)
        except DeviceFull as exc:
            failure = exc.failure
        # The run's frames (and the arrays they held) died with the except block.
        resident.release()
    del weights  # nothing of the run stays on the device while the error travels
    need = memory_model(n, m, "sccooc" if kernel == "sccooc" else "sccsc", index_dtype,
                        sources.size)
    raise MemoryError(f"the GPU engine needs about {need} bytes of device memory for this "
                      f"graph (n={n}, {m} stored edges, kernel={kernel!r}); {_free_bytes()}. "
                      f"CuPy said: {failure}")


def _sweep(resident: DeviceResident, sources: np.ndarray, *, endpoints, kernel, progress, facts,
           index_dtype, weights=(None, None)) -> np.ndarray:
    """Launch chunk after chunk of sources; raises DeviceFull when the arrays do not fit."""
    import cupy

    graph = resident.graph
    n, m = graph.n, graph.nnz
    resident.drop_edge_accumulator()  # this family sums no edges (edge BC runs batched)
    run = allocated(lambda: _DeviceSweep(graph, sources, kernel, index_dtype, resident))
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
    if wide:
        accumulate_wide(cupy, resident.borrow("csr_ptr", index_dtype),
                        resident.borrow("csr_idx", index_dtype), n, np.array(wide), run.bc,
                        endpoints=endpoints, progress=progress, target_weight=weights[0],
                        source_weight=weights[1])
    raw = run.bc.get()
    if facts is not None:
        facts.update(family="single", kernel=run.kernel, grid=grid, index_dtype=str(index_dtype),
                     wide_sources=len(wide),
                     scf=None if run.stats is None else run.stats.scf,
                     peak_pool_bytes=resident.peak - resident.baseline,
                     model_bytes=4 * m + 48 * n,
                     expected_bytes=memory_model(n, m, run.kernel, index_dtype, sources.size),
                     **resident.run_facts())
    return raw
