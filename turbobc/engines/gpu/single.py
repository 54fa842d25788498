"""The GPU engine: Algorithm 1 of the TurboBC paper on the device, one source per sweep.

:func:`accumulate` uploads exactly one storage format (CSC for scCSC and veCSC, COOC for
scCOOC), allocates the sweep vectors once, and launches one persistent kernel per chunk of
sources (spmv/kernels/sweep.cuh): inside it, each BFS level and each dependency level is one
grid barrier, so there is no host round trip per level at all.

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
from turbobc.engines.wide import accumulate_wide

__all__ = ["accumulate", "memory_model", "check_memory_limit"]

_CTL_SLOTS = _ctl.N_CTL  # the control block (spmv/kernels/ctl.cuh)
_WIDE_SOURCE_SLOT = _ctl.WIDE_SOURCE  # 1 + the source that stopped a launch, 0: none



def memory_model(n: int, m: int, kernel: str, index_dtype, num_sources: int = 1) -> int:
    """Bytes of device memory a run needs (the arrays of this module's docstring)."""
    b = np.dtype(index_dtype).itemsize
    fmt = 2 * b * m if kernel == "sccooc" else b * (n + 1 + m)
    return fmt + b * n + 24 * n + 4 * (n + 2) + 8 * _CTL_SLOTS + b * num_sources


def check_memory_limit(n: int, m: int, kernel: str, index_dtype, num_sources: int,
                       memory_limit: int | None) -> None:
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
                        num_sources)
    if need > memory_limit:
        from turbobc._memory import format_bytes

        raise MemoryError(f"the GPU engine needs about {format_bytes(need)} of device memory "
                          f"for one source of this graph (n={n}, {m} stored edges, "
                          f"kernel={kernel!r}), but memory_limit is "
                          f"{format_bytes(memory_limit)}; raise memory_limit")


class _DeviceSweep:
    """Device arrays of one run: the storage format and the sweep vectors."""

    def __init__(self, graph: Graph, sources: np.ndarray, kernel: str, index_dtype):
        import cupy

        pool = cupy.get_default_memory_pool()
        self.baseline = self.peak = pool.used_bytes()
        n, m = graph.n, graph.nnz
        csc = graph.csc
        # CSC on the device: column j lists the in-neighbours of j.
        colptr = cupy.asarray(csc.indptr.astype(index_dtype, copy=False))
        rowidx = cupy.asarray(csc.indices.astype(index_dtype, copy=False))
        self._mark(pool)
        self.stats = None
        if kernel == "auto":
            self.stats = spmv.stats_device(colptr, rowidx, n, m, graph.directed)
            self.peak = max(self.peak, pool.used_bytes() + 8 * n + 8)
            kernel = spmv.select(self.stats)
        self.kernel = kernel
        if kernel == "sccooc":
            # COOC: row = the CSC row indices, col expanded from the column pointers; then the
            # pointers go, so only one format stays on the device.
            col = cupy.empty(m, dtype=index_dtype)
            _launch.expand_columns(colptr, n, col)
            self._mark(pool)
            del colptr
            self.a, self.b = col, rowidx
        else:
            self.a, self.b = colptr, rowidx
        self.units = None
        if kernel == "vecsc":  # hub columns cut into units (a few bytes per 1024 entries)
            self.units = tuple(cupy.asarray(x) for x in
                               _launch.heavy_units(csc.indptr, index_dtype))
        self.sources = cupy.asarray(sources.astype(index_dtype))
        self.S = cupy.empty(n, dtype=index_dtype)
        self.sigma = cupy.empty(n, dtype=np.float64)
        self.t = cupy.empty(n, dtype=np.float64)
        self.bc = cupy.zeros(n, dtype=np.float64)
        self.shifts = cupy.empty(n + 2, dtype=np.int32)
        self.ctl = cupy.zeros(_CTL_SLOTS, dtype=np.uint64)
        self._mark(pool)

    def _mark(self, pool):
        self.peak = max(self.peak, pool.used_bytes())

    def launch(self, graph: Graph, begin: int, end: int, endpoints: bool) -> int:
        """Run sources[begin:end]; returns the grid size used."""
        return _launch.SWEEPS[self.kernel](
            self.a, self.b, graph.n, graph.nnz, self.sources[begin:end], self.S, self.sigma,
            self.t, self.bc, self.shifts, self.ctl, directed=graph.directed,
            endpoints=endpoints, units=self.units,
            blocks_per_sm=current_tuning().single_blocks_per_sm)


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
               _index_dtype=None) -> np.ndarray:
    """Raw (unscaled) Brandes dependencies summed over ``sources``, on the GPU.

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
        swept with per-vertex exponents, peak pool bytes and the memory model.
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
    import cupy

    spmv.check_kernel(kernel)
    n, m = graph.n, graph.nnz
    sources = np.asarray(sources, dtype=np.int64)
    if sources.size == 0 or n == 0:
        return np.zeros(n, dtype=np.float64)
    index_dtype = np.dtype(_index_dtype) if _index_dtype is not None else index_dtype_for(n, m)
    check_memory_limit(n, m, kernel, index_dtype, sources.size, memory_limit)
    failure = None
    try:
        run = _DeviceSweep(graph, sources, kernel, index_dtype)
    except cupy.cuda.memory.OutOfMemoryError as exc:
        # The traceback (and the partly allocated arrays its frames hold) dies with this
        # block, so the pool is back at its baseline before MemoryError is raised.
        failure = str(exc)
    if failure is not None:
        need = memory_model(n, m, "sccooc" if kernel == "sccooc" else "sccsc", index_dtype,
                            sources.size)
        raise MemoryError(f"the GPU engine needs about {need} bytes of device memory for this "
                          f"graph (n={n}, {m} stored edges, kernel={kernel!r}); {_free_bytes()}. "
                          f"CuPy said: {failure}")
    chunk, done, grid = 1, 0, 0
    wide = []
    while done < sources.size:
        end = min(sources.size, done + chunk)
        grid = run.launch(graph, done, end, endpoints)
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
        pattern = graph.pattern
        accumulate_wide(cupy, cupy.asarray(pattern.indptr), cupy.asarray(pattern.indices), n,
                        np.array(wide), run.bc, endpoints=endpoints, progress=progress)
    raw = run.bc.get()
    if facts is not None:
        facts.update(family="single", kernel=run.kernel, grid=grid, index_dtype=str(index_dtype),
                     wide_sources=len(wide),
                     scf=None if run.stats is None else run.stats.scf,
                     peak_pool_bytes=run.peak - run.baseline, model_bytes=4 * m + 48 * n,
                     expected_bytes=memory_model(n, m, run.kernel, index_dtype, sources.size))
    return raw
