"""What a GPU sweeper keeps on its device between runs: the graph stays until ``close()``.

A :class:`DeviceResident` belongs to one graph and starts empty: opening a sweeper allocates
nothing, and the first run builds what it needs. Until :meth:`DeviceResident.close` it holds

- the **format parts** the runs built, each under :func:`part_key` (the part and the index
  type), so that a later run with the same index type finds them with no copy of the graph
  to the device:

  ===========  ================================================  =========================
  part         device array                                      swept by
  ===========  ================================================  =========================
  ``csc_ptr``  ``graph.csc.indptr`` (column j: in-neighbours)    single scCSC and veCSC;
  ``csc_idx``  ``graph.csc.indices``                             batched, directed (Aᵀ)
  ``csr_ptr``  ``graph.pattern.indptr`` (row v: out-neighbours)  batched; the exponent
  ``csr_idx``  ``graph.pattern.indices``                         sweep (engines/wide.py)
  ``csc_col``  column of every CSC entry (COOC, with csc_idx)    single scCOOC
  ``csr_row``  row of every CSR entry (COO, with csr_idx)        batched scCOOC
  ``units``    veCSC hub units (``spmv._launch.heavy_units``)    single veCSC
  ``lengths``  ``graph.lengths`` (float64, CSR order; all 1.0   weighted BC; the queue
               for an unweighted graph)                          family
                                                                 (engines/gpu/layers.py)
  ===========  ================================================  =========================

  An undirected graph has A = Aᵀ, and ``graph.csc`` holds the very arrays of
  ``graph.pattern`` (turbobc/_graph.py): its CSR parts are kept under the CSC keys, so one
  upload serves both families.
- the single-source family's graph statistics, from which ``kernel="auto"`` chooses;
- one **workspace**, of the family that ran last: the single-source vectors or the batched
  n x B blocks (a later batched run reuses blocks that hold its batch, level type and
  shift table: ``turbobc.engines.gpu.lanes_blocks.holds``);
- the result **accumulator** ``bc`` (n float64) and the **control block**, zeroed by every
  run, and for edge BC the **edge sums** (m float64, one per stored edge in CSR order: the
  batched kernels walk the out-neighbours, so no permutation is kept), zeroed by every edge
  run and dropped by a batched run without edges.

What each run keeps, drops and reports:

- A batched run first drops the parts and the workspace it does not sweep with: its batch
  is sized from the free device memory, which they would only take. A single-source run
  drops the batched blocks and keeps every part it finds.
- A run that runs out of device memory leaves nothing on the device (the single-source
  family first drops everything and tries once more when something was held). CuPy's
  out-of-memory becomes :class:`DeviceFull` where the run allocates, and the family turns it
  into ``MemoryError`` once the run's frames are gone.
- :meth:`DeviceResident.run_facts`: ``resident_reused`` (no part of the graph was built, that
  is copied to or expanded on the device, during the run) and ``upload_seconds``.

Memory: :meth:`~DeviceResident.close` (and :meth:`~DeviceResident.release`) only drop the
references. CuPy's memory pool keeps the blocks cached for the later allocations of this
process; ``cupy.get_default_memory_pool().free_all_blocks()`` gives them back to the device.

Threads: a :class:`DeviceResident` serves one run at a time (a second, concurrent run is
refused with RuntimeError), so a sweeper is used by one thread at a time; separate objects
share nothing mutable.
"""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np

from turbobc._graph import Graph

__all__ = ["DeviceResident", "DeviceFull", "part_key", "PARTS", "allocated",
           "upload_as"]

PARTS = ("csc_ptr", "csc_idx", "csr_ptr", "csr_idx", "csc_col", "csr_row", "units",
         "lengths")
"""The format parts a :class:`DeviceResident` can hold (module docstring)."""


_SAME_WHEN_UNDIRECTED = (("csr_ptr", "csc_ptr"), ("csr_idx", "csc_idx"), ("csr_row", "csc_col"))


def part_key(part: str, index_dtype, directed: bool) -> tuple[str, str]:
    """The key ``part`` is kept under: the part's name and the index type's name.

    For an undirected graph the CSR parts are the CSC parts (A = Aᵀ), so they share a key:
    ``part_key("csr_ptr", np.int32, False) == ("csc_ptr", "int32")``. Each part has one type
    (pointers and indices may differ: the single family's split, ``single_index_types``) but
    ``units``, whose columns are vertices and whose starts are positions: its type is the pair
    (vertex, position), named ``"int32+int64"`` when they differ.

    Raises
    ------
    ValueError
        For a name not in :data:`PARTS`.
    """
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(map(repr, PARTS))}; got {part!r}")
    if not directed:
        part = dict(_SAME_WHEN_UNDIRECTED).get(part, part)
    names = [np.dtype(t).name for t in (index_dtype if isinstance(index_dtype, tuple)
                                        else (index_dtype,))]
    return part, "+".join(dict.fromkeys(names))


def _dtypes(index_dtype):
    """``index_dtype`` as numpy dtypes: one, or the (vertex, position) pair of ``units``."""
    if isinstance(index_dtype, tuple):
        return tuple(np.dtype(t) for t in index_dtype)
    return np.dtype(index_dtype)


UPLOAD_CHUNK = 1 << 27
"""Entries converted per step where :func:`upload_as` narrows an array on the device."""


def upload_as(host: np.ndarray, dtype):
    """``host`` on the device in ``dtype``. Where the type changes, the array is converted
    on the device chunk by chunk (:data:`UPLOAD_CHUNK` entries), so that narrowing the int64
    indices of billions of stored edges to int32 costs neither a host copy of them nor a
    device copy beyond one chunk."""
    import cupy

    dtype = np.dtype(dtype)
    if host.dtype == dtype or host.size <= UPLOAD_CHUNK:
        return cupy.asarray(host.astype(dtype, copy=False))
    array = cupy.empty(host.size, dtype=dtype)
    for first in range(0, host.size, UPLOAD_CHUNK):
        last = min(first + UPLOAD_CHUNK, host.size)
        array[first:last] = cupy.asarray(host[first:last])  # cast on the device
    return array


class DeviceFull(Exception):
    """CuPy ran out of device memory where a run allocates.

    Raised outside CuPy's ``except`` block (so it holds no frame of the failed allocation) and
    caught by the family's entry point, which releases everything and raises ``MemoryError``.

    Attributes
    ----------
    failure : str
        What CuPy said.
    batch : int or None
        The batch being allocated (the batched family's message names it).
    """

    def __init__(self, failure: str, batch: int | None = None):
        super().__init__(failure)
        self.failure, self.batch = failure, batch


def allocated(build, batch: int | None = None):
    """``build()``, with CuPy's out-of-memory turned into :class:`DeviceFull`."""
    import cupy

    failure = None
    try:
        return build()
    except cupy.cuda.memory.OutOfMemoryError as exc:
        # The traceback (and the partly built arrays its frames hold) dies with this block.
        failure = str(exc)
    raise DeviceFull(failure, batch)


def _device_arrays(values):
    """The CuPy arrays among ``values``: arrays, tuples of them, and workspaces (objects with
    an ``arrays()`` method)."""
    import cupy

    for value in values:
        if isinstance(value, cupy.ndarray):
            yield value
        elif isinstance(value, tuple):
            yield from _device_arrays(value)
        elif hasattr(value, "arrays"):
            yield from _device_arrays(value.arrays())


class DeviceResident:
    """The device arrays a GPU sweeper keeps for one graph (module docstring).

    Parameters
    ----------
    graph : Graph
        The validated pattern whose parts this object builds.

    Attributes
    ----------
    graph : Graph
    parts : dict
        ``part_key(...) -> device array`` (a tuple of two for ``units``): what is resident.
    statistics : spmv.GraphStats or None
        The single-source family's graph statistics, once a ``kernel="auto"`` run measured them.
    bc, ctl : cupy.ndarray or None
        The result accumulator and the control block.
    edge : cupy.ndarray or None
        The edge sums (edge BC), aligned with ``graph.pattern.indices``.
    closed : bool
        Whether :meth:`close` was called.
    baseline, peak : int
        CuPy pool bytes at the start of the current run less what this object held then, and
        the most pool bytes seen during the run.
    """

    def __init__(self, graph: Graph):
        self.graph = graph
        self.parts: dict = {}
        self.statistics = None
        self.bc = self.ctl = self.edge = None
        self.closed = False
        self.baseline = self.peak = 0
        self._workspace = None
        self._workspace_family = None
        self._device_id = None
        self._busy = threading.Lock()
        self._built: list = []
        self._upload_seconds = 0.0
        self._weights = None  # (host τ, host ω, device τ, device ω) of the last run

    # -- one run ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def run(self):
        """The context of one run: refuses a closed object and a second concurrent run, makes
        the object's device current (the one current at its first run), and starts the run's
        ledger (parts built, seconds, peak)."""
        if self.closed:
            raise RuntimeError("this GPU sweeper's device arrays were released by close(); "
                               "open a new sweeper")
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("a GPU sweeper runs one call at a time; it is already running "
                               "(use one sweeper per thread)")
        try:
            import cupy

            if self._device_id is None:
                self._device_id = cupy.cuda.Device().id
            with cupy.cuda.Device(self._device_id):
                self.begin_run()
                yield self
        finally:
            self._busy.release()

    def begin_run(self) -> None:
        """Start the ledger of a run: no part built yet, the pool's baseline and peak."""
        import cupy

        self._built, self._upload_seconds = [], 0.0
        used = cupy.get_default_memory_pool().used_bytes()
        self.baseline, self.peak = used - self.held_bytes(), used

    def mark(self, extra: int = 0) -> None:
        """Record the pool's bytes in use (plus ``extra`` transient bytes) in :attr:`peak`."""
        import cupy

        self.peak = max(self.peak, cupy.get_default_memory_pool().used_bytes() + extra)

    def run_facts(self) -> dict:
        """``resident_reused`` (the run built no part) and ``upload_seconds`` of the run."""
        return {"resident_reused": not self._built, "upload_seconds": self._upload_seconds}

    # -- format parts ----------------------------------------------------------------------

    def has(self, part: str, index_dtype) -> bool:
        """Whether ``part`` is resident in ``index_dtype``."""
        return part_key(part, index_dtype, self.graph.directed) in self.parts

    def fetch(self, part: str, index_dtype):
        """``part`` in ``index_dtype`` on the device: resident, or built now and kept."""
        key = part_key(part, index_dtype, self.graph.directed)
        if key not in self.parts:
            self.parts[key] = self._build(key[0], _dtypes(index_dtype))
            self.mark()
        return self.parts[key]

    def borrow(self, part: str, index_dtype):
        """``part`` in ``index_dtype`` on the device: resident, or built now and not kept."""
        key = part_key(part, index_dtype, self.graph.directed)
        if key in self.parts:
            return self.parts[key]
        return self._build(key[0], _dtypes(index_dtype))

    def drop(self, part: str, index_dtype) -> None:
        """Let ``part`` go (nothing when it is not resident)."""
        self.parts.pop(part_key(part, index_dtype, self.graph.directed), None)

    def keep_only(self, parts, index_dtype=None) -> None:
        """Drop every part but ``parts`` in ``index_dtype``; ``parts`` may instead map each
        part to its own type (the single family's split, ``index_dtype`` then unused)."""
        typed = parts if isinstance(parts, dict) else dict.fromkeys(parts, index_dtype)
        keep = {part_key(p, t, self.graph.directed) for p, t in typed.items()}
        for key in [k for k in self.parts if k not in keep]:
            del self.parts[key]

    def _build(self, part: str, index_dtype):
        """Copy (or expand on the device) one part; timed and recorded in the run's ledger."""
        import cupy

        from spmv import _launch

        began, seconds = time.perf_counter(), self._upload_seconds
        graph = self.graph
        if part in ("csc_ptr", "csc_idx", "csr_ptr", "csr_idx"):
            matrix = graph.csc if part.startswith("csc") else graph.pattern
            host = matrix.indptr if part.endswith("ptr") else matrix.indices
            array = upload_as(host, index_dtype)
        elif part in ("csc_col", "csr_row"):
            # the column (row) of every stored entry, expanded from the pointers on the device
            pointers = self.borrow("csc_ptr" if part == "csc_col" else "csr_ptr", index_dtype)
            array = cupy.empty(graph.nnz, dtype=index_dtype)
            _launch.expand_columns(pointers, graph.n, array)
            self.mark()  # the pointers may be a temporary copy, alive until here
            del pointers
        elif part == "lengths":  # weighted BC: float64 whatever the index type
            if graph.lengths is None:  # the layers family's hops: every edge of length 1
                array = cupy.ones(graph.nnz, dtype=cupy.float64)
            else:
                array = cupy.asarray(np.asarray(graph.lengths, dtype=np.float64))
        else:  # units: hub columns cut into pieces (a few bytes per 1024 entries)
            vertex, position = (index_dtype if isinstance(index_dtype, tuple)
                                else (index_dtype, index_dtype))
            array = tuple(cupy.asarray(x) for x in
                          _launch.heavy_units(graph.csc.indptr, vertex, position))
        cupy.cuda.get_current_stream().synchronize()
        # the whole build (a temporary part built inside it included, counted once)
        self._upload_seconds = seconds + time.perf_counter() - began
        self._built.append(part)
        return array

    # -- workspace, accumulator ------------------------------------------------------------

    def workspace(self, family: str):
        """The workspace kept for ``family`` ("single" or "lanes"), or None."""
        return self._workspace if self._workspace_family == family else None

    def keep_workspace(self, family: str, workspace) -> None:
        """Keep ``workspace`` as ``family``'s (drop the previous one before allocating it)."""
        self._workspace, self._workspace_family = workspace, family

    def drop_workspace(self) -> None:
        """Let the workspace go (its blocks return to CuPy's pool)."""
        self._workspace = self._workspace_family = None

    def workspace_bytes(self, family: str) -> int:
        """Pool bytes of ``family``'s workspace (0 when none is kept)."""
        return self._bytes([self.workspace(family)])

    def accumulator(self, ctl_slots: int):
        """``bc`` (n float64) and the control block (``ctl_slots`` uint64), both zeroed."""
        import cupy

        if self.bc is None:
            self.bc = cupy.zeros(self.graph.n, dtype=np.float64)
        else:
            self.bc.fill(0)
        if self.ctl is None or self.ctl.size != ctl_slots:
            self.ctl = None
            self.ctl = cupy.zeros(ctl_slots, dtype=np.uint64)
        else:
            self.ctl.fill(0)
        self.mark()
        return self.bc, self.ctl

    def edge_accumulator(self):
        """The edge sums (one float64 per stored edge, aligned with ``graph.pattern.indices``),
        zeroed."""
        import cupy

        if self.edge is None:
            self.edge = cupy.zeros(self.graph.nnz, dtype=np.float64)
        else:
            self.edge.fill(0)
        self.mark()
        return self.edge

    def drop_edge_accumulator(self) -> None:
        """Let the edge sums go."""
        self.edge = None

    def edge_bytes(self) -> int:
        """Pool bytes of the edge sums (0 when none are kept)."""
        return self._bytes([self.edge])

    # -- memory ----------------------------------------------------------------------------

    def held_bytes(self) -> int:
        """Pool bytes of everything this object holds (each allocation counted once)."""
        weights = [] if self._weights is None else list(self._weights[2:])
        return self._bytes([self.parts, self._workspace, self.bc, self.ctl, self.edge,
                            *weights])

    @staticmethod
    def _bytes(values) -> int:
        flat = []
        for value in values:
            flat.extend(value.values() if isinstance(value, dict) else [value])
        if all(v is None for v in flat):
            return 0
        sizes = {a.data.ptr: a.data.mem.size for a in _device_arrays(flat) if a.nbytes}
        return sum(sizes.values())

    def accumulate_weights(self, target_weight, source_weight) -> tuple:
        """τ and ω of the accumulate step on the device (None stays None: all ones), copied
        at the first run that passes these host arrays and kept while later runs pass them."""
        import cupy

        kept = self._weights
        if kept is None or kept[0] is not target_weight or kept[1] is not source_weight:
            self._weights = None
            failure = None
            try:
                tau = None if target_weight is None else cupy.asarray(
                    np.asarray(target_weight, dtype=np.float64))
                # one array for both (tree folding passes the same counts): one copy
                omega = tau if source_weight is target_weight else (
                    None if source_weight is None else cupy.asarray(
                        np.asarray(source_weight, dtype=np.float64)))
            except cupy.cuda.memory.OutOfMemoryError as exc:
                failure = str(exc)  # the arrays of the failed attempt die with this block
            if failure is not None:
                raise MemoryError(f"the GPU engine could not hold the accumulate weights "
                                  f"(8 bytes per vertex each, n={self.graph.n}); CuPy said: "
                                  f"{failure}")
            self._weights = kept = (target_weight, source_weight, tau, omega)
        return kept[2], kept[3]

    @staticmethod
    def weight_bytes(weights) -> int:
        """Device bytes of the weights (τ, ω) a run passes (one array counted once)."""
        arrays = {id(w): w for w in weights if w is not None}
        return sum(int(w.nbytes) for w in arrays.values())

    def release(self) -> None:
        """Drop every device array (the parts, the workspace, the accumulators, the weights)."""
        self.parts = {}
        self.drop_workspace()
        self.bc = self.ctl = self.edge = None
        self._weights = None

    def close(self) -> None:
        """Release everything and refuse later runs; calling it again does nothing."""
        self.release()
        self.statistics = None
        self.closed = True

    def __enter__(self) -> "DeviceResident":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
