"""Scale-out through Dask: the executor of the one loop (turbobc/_run.py) that cuts each
source set of a call into chunks, swept on many workers.

``turbobc.bc(A, ..., client=client)`` (and :func:`turbobc.edge_bc`) runs the same problem as
without ``client``, on any ``dask.distributed`` cluster (``LocalCUDACluster`` with one worker
per GPU, a ``LocalCluster`` of CPU workers, a remote scheduler, or a mix). The loop opens one
:class:`ClusterSweeper` per call (:meth:`DaskExecutor.open`) and hands it the schedule's
source sets (one for exact BC, one per checkpoint of an approximation)::

    problem ──scatter(direct, broadcast)──► every worker holds it once (first set)
    every worker opens its sweeper at once; the first to answer says what batch it plans
    sources ──cut──► chunk 0, chunk 1, ..., chunk C-1     (from the source list alone)
    chunk i ──submit──► any free worker: its open sweeper .run(chunk i)   (turbobc/_dask_worker.py)
    Partial 0 + Partial 1 + ... + Partial C-1             (in chunk order) ──► the loop

- **Every reduction of the local path.** The problem is what the caller sweeps: for exact BC
  of an undirected graph, the core left once its trees are folded, its vertices weighted by
  what they stand for, and the plan of its folded chains (turbobc/_fold.py). All of it is
  scattered once with the graph; each chunk's partial comes back whole, the chains' credit
  of its sources included (``ChainFolding.batches``), so the caller expands the sum as it
  expands a local run's.
- **One copy on a host.** A graph of :data:`turbobc._dask_shared.SHARED_FROM` stored edges
  or more, whose workers all share the client's host, goes through the host's shared memory
  instead: written once, mapped by every worker, its folder's name the only thing that
  travels (turbobc/_dask_shared.py).
- **The graph travels once per worker, compactly.** The
  :class:`~turbobc.engines.protocol.Problem` is scattered straight from the client to one
  worker (``direct``: not through the scheduler) and copied from worker to worker in a tree
  (``broadcast``); a graph pickles as its index arrays in the smallest type (``Graph``'s
  ``__reduce__``: 4 bytes a stored edge up to 2^31 of them). Each worker opens one sweeper
  on it (through :class:`turbobc._executor.LocalExecutor`, as a run without Dask does) and
  keeps it for every chunk it runs, until the call ends and closes it. A worker that joins
  later (a restarted one) fetches the problem from a peer; if every copy is lost, the
  chunks still to run are handed to the cluster again with a fresh scatter.
- **Dynamic balance, nothing pinned.** Chunks are ordinary tasks: the scheduler hands them to
  workers as they free up, and re-runs the chunks of a worker that dies elsewhere. The last
  chunks are smaller (:func:`chunk_sources`), so the workers finish close together.
- **Reproducible sums.** Chunk boundaries depend only on the number of sources and the
  engine's batch (:func:`chunk_sources`), and the partials are added in chunk order, so the
  result does not depend on the number of workers or on which finished first (beyond what
  one engine's runs already vary: the GPU kernels' atomics add lanes in no fixed order).
- **The caller's knobs hold on the workers.** Each task carries the
  :class:`~turbobc._tuning.Tuning` in force where the call was made (``with
  turbobc.tuning(...)`` around ``bc(..., client=)``), and runs under it: ``index_bits=64``,
  a GPU family, a batch cap apply to every worker's sweeps as to a local run.
- **Each worker picks its engine.** ``engine="auto"`` is resolved on the worker (its own GPU,
  else the CPU engine), so a cluster may mix GPU and CPU workers; ``engine="gpu"`` fails on a
  worker without a GPU, and the error names the worker and the chunk.
- **Out of memory.** A chunk that raises ``MemoryError`` is run again on a sweeper with half
  the memory budget (smaller batches), up to ``MEMORY_RETRIES`` times.
- **Warm workers.** :func:`warm_up` has every worker load its engine's compiled code once
  (numba's cache, CuPy's kernels), so that no call's first chunk waits for it.

Importing turbobc never imports Dask: the loop imports this module only when ``client`` is
given, and this module imports ``distributed`` only inside its functions. It sits below the
loop and never calls it.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
import uuid

import numpy as np

import turbobc._dask_shared as shared
import turbobc._dask_worker as on_worker
from turbobc._graph import index_dtype_for
from turbobc._tuning import current as current_tuning
from turbobc.engines.protocol import Partial, Problem, Sweeper

__all__ = ["CHUNK_MIN_SOURCES", "CHUNKS", "TAPER", "ClusterSweeper", "DaskExecutor",
           "built_ahead", "check_client", "chunk_size", "chunk_sources", "chunk_unit",
           "local_gpu_cluster", "problem_bytes", "warm_up", "workers_have_gpus"]

CHUNKS = 64
"""Chunks of :func:`chunk_size` sources a call's sources make at most, unless the engine's
own batch is larger: a few per worker on clusters of up to 16 workers."""

CHUNK_MIN_SOURCES = 64
"""Fewest sources in a chunk (except when the call has fewer): below this the task overhead
of Dask (milliseconds) is no longer small beside the sweep."""

TAPER = 16
"""Once fewer than ``TAPER`` chunks' worth of sources are left, each chunk takes at most
1/TAPER of what is left (:func:`chunk_sources`), down to the smallest chunk: the last chunks
of up to 16 workers are then small, and the workers finish within about one of them."""

RESUBMITS = 3
"""Times the chunks still to run are handed to the cluster again after the problem was lost
from every worker."""


def check_client(client) -> None:
    """Raise ``TypeError`` unless ``client`` looks like a ``dask.distributed.Client``."""
    for method in ("submit", "scatter", "run"):
        if not callable(getattr(client, method, None)):
            raise TypeError("client must be a dask.distributed.Client (connected to any "
                            f"cluster); got {type(client).__name__} {client!r}, which has no "
                            f"{method}() method")


def chunk_size(num_sources: int, engine_batch: int | None = None,
               workers: int | None = None) -> int:
    """Sources per chunk: ``Tuning.dask_chunk_sources`` when set, else enough for at most
    :data:`CHUNKS` chunks, at least :data:`CHUNK_MIN_SOURCES`, and at least the batch the
    engine plans for this problem on a worker (``engine_batch``: a GPU sweeps a batch of
    thousands of sources in about the time of one, level by level, so a chunk smaller than
    its batch would waste it), rounded up to a whole number of the engine's batches
    (:func:`chunk_unit`). Where the sources make no more batches than there are ``workers``,
    one chunk a worker instead: a chunk of a deep graph costs its levels whatever its size
    (road-luxembourg-osm's chain-folded core: 1.5 s in one chunk, 8.8 s in 16 on one GPU),
    and fewer chunks than workers would leave some idle."""
    chosen = current_tuning().dask_chunk_sources
    if chosen is not None:
        return max(1, int(chosen))
    if engine_batch and workers and engine_batch * workers >= num_sources:
        return max(1, CHUNK_MIN_SOURCES, math.ceil(num_sources / workers))
    size = max(1, CHUNK_MIN_SOURCES, math.ceil(num_sources / CHUNKS), engine_batch or 0)
    unit = chunk_unit(size, engine_batch)
    return -(-size // unit) * unit


def chunk_unit(size: int, engine_batch: int | None) -> int:
    """The step chunk sizes come in: the engine's batch where a chunk holds one or more
    (the lanes' batches, the frontiers' blocks: a part-filled last batch or wave of blocks
    idles the device for as long as a full one), else 32 (a warp's lanes); 1 without a
    batch."""
    if not engine_batch:
        return 1
    return int(engine_batch) if size >= engine_batch else 32


def chunk_sources(sources: np.ndarray, size: int, smallest: int | None = None,
                  unit: int = 1) -> list[np.ndarray]:
    """Cut ``sources`` into consecutive chunks: of ``size`` sources (sizes differing by at
    most one), or, with ``smallest`` below ``size``, tapered at the end: chunks of ``size``
    until fewer than ``(TAPER + 1) * size`` sources are left, then each of 1/:data:`TAPER`
    of what is left (rounded up to a multiple of ``unit``), at least ``smallest`` (the last
    one up to twice that; where ``unit`` > 1, that one before the smallest ones, since a part
    of a wave costs a whole one: a rest of 1.5 of the frontiers' waves last, del20's 592
    sources in waves of 396, kept one worker 0.08 s after the others in device call 13). With
    W ≤ TAPER workers taking chunks as they free up, the last W chunks are small, so the
    workers finish within about one small chunk of each other."""
    sources = np.asarray(sources, dtype=np.int64)
    total = len(sources)
    if total == 0:
        return []
    if smallest is None or smallest >= size:
        return np.array_split(sources, math.ceil(total / size))
    head = max(0, total - TAPER * size) // size      # whole chunks of size before the tail
    at, tail = head * size, []
    while at < total:
        left = total - at
        take = max(smallest, math.ceil(left / TAPER))
        take = min(left, size, -(-take // unit) * unit)
        if left - take < smallest:
            take = left  # no chunk smaller than the smallest after it
        tail.append(take)
        at += take
    if unit > 1:
        tail.sort(reverse=True)
    bounds = np.cumsum([0] + [size] * head + tail)
    return [sources[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def problem_bytes(problem: Problem) -> int:
    """Bytes of the arrays a worker receives of ``problem`` (each array once): the graph as
    it pickles (``Graph.__reduce__``: row pointers and column indices in the smallest index
    type, lengths), the weights of the folded trees and the plan of the folded chains."""
    graph = problem.graph
    total = (graph.n + 1 + graph.nnz) * index_dtype_for(graph.n, graph.nnz,
                                                        bits="auto").itemsize
    seen: set = set()
    arrays = [graph.lengths, problem.target_weight, problem.source_weight]
    plan = problem.slot_weights
    if plan is not None:
        state = plan.__getstate__()
        arrays += [value for value in state.values() if isinstance(value, np.ndarray)]
        chains = state.get("chains")
        if chains is not None:
            arrays += [getattr(chains, field.name) for field in dataclasses.fields(chains)]
    for array in arrays:
        if isinstance(array, np.ndarray) and id(array) not in seen:
            seen.add(id(array))
            total += array.nbytes
    return int(total)


def warm_up(client, engine: str = "auto") -> dict:
    """Have every worker of ``client`` sweep a small graph once for each kind of problem
    (turbobc/_dask_worker.py, ``warm``), so that its engine's compiled code is loaded from
    the caches (numba's on the CPU, CuPy's kernels on the GPU) now rather than in a call's
    first chunk. Call it once after starting a cluster; a worker that starts later loads
    its code in its first chunk.

    Returns
    -------
    dict
        Per worker address: the engines it used and the seconds it took.
    """
    return _on_each_worker(client, on_worker.warm, engine)


def workers_have_gpus(client) -> bool:
    """Whether every worker of ``client`` (at least one) has a usable GPU: where
    ``engine="auto"`` sweeps on the GPU engine."""
    usable = _on_each_worker(client, on_worker.gpu_usable)
    return bool(usable) and all(usable.values())


def _on_each_worker(client, function, *args) -> dict:
    """``function(*args)`` as a task on each worker of ``client``; {address: result}."""
    workers = list(client.nthreads())  # every worker (scheduler_info may list a few)
    futures = {address: client.submit(function, *args, workers=[address],
                                      allow_other_workers=False, pure=False,
                                      key=f"turbobc-{function.__name__}-{uuid.uuid4().hex}")
               for address in workers}
    return dict(zip(futures, client.gather(list(futures.values()))))


class DaskExecutor:
    """Sweep on the workers of a Dask ``client`` (module docstring): an executor of the one
    loop (turbobc/_executor.py), whose sessions are :class:`ClusterSweeper`."""

    name = "dask"

    def __init__(self, client):
        self.client = client

    def label(self, engine: str) -> str:
        """A progress bar's name for the run."""
        return "dask"

    def open(self, problem: Problem, engine: str) -> "ClusterSweeper":
        """A session of one call on the cluster; ``engine`` ("auto", "gpu", "cpu",
        "graphblas") is resolved on each worker (:func:`turbobc.engines.resolve_engine`)."""
        return ClusterSweeper(self.client, problem, engine)


class ClusterSweeper(Sweeper):
    """One call's session on the cluster, a :class:`~turbobc.engines.protocol.Sweeper` to the
    loop: the problem is scattered once, at the first :meth:`run`; each worker opens one
    sweeper on it (the graph on its device) and keeps it for every chunk of every run of the
    session, until :meth:`close`.

    Attributes
    ----------
    facts : dict
        Over every run so far: workers, chunks, the engines the workers used, where the
        seconds before the first finished chunk went (``start_seconds``), each chunk's
        seconds on its worker, the bytes of the problem each worker received, and the facts
        of the last chunk's sweeper.
    """

    def __init__(self, client, problem: Problem, engine: str):
        super().__init__(problem)
        self.client, self.engine = client, engine
        self.facts = {"engine": "dask", "chunks": 0}
        self._token = uuid.uuid4().hex
        self._knobs = current_tuning()  # the caller's, in force on the workers
        self._scattered = None
        self._shared = None  # the folder of the graph's arrays in shared memory, if any
        self._began = None
        self._start: dict = {}
        self._opening: list = []
        self._results: list = []
        self._chunks: list = []
        self._resubmits = 0

    def run(self, sources: np.ndarray, progress=None) -> Partial:
        """The raw sums of ``sources`` (distinct int64 vertex ids), swept in chunks on the
        workers and added in chunk order; ``progress`` (a tqdm bar or an object with
        ``update(n)``, or None) is advanced by the sources of each finished chunk.

        Raises
        ------
        Exception
            The first chunk that failed, with its own type and the worker's traceback, and a
            note naming the chunk and the worker; the chunks still running are cancelled.
        """
        from distributed import as_completed

        problem, client = self.problem, self.client
        total = Partial.zeros(problem.graph.n)
        if problem.edges:
            total.edge = np.zeros(problem.graph.nnz, dtype=np.float64)
        if len(sources) == 0:
            return total
        if self._scattered is None:
            self._began = time.perf_counter()
            self._start["ahead"] = built_ahead(problem, self.engine, client, len(sources))
            scatter_began = time.perf_counter()
            self._shared = shared.share(client, problem.graph)  # None: by TCP
            self._scattered = _scatter(client, problem, self._shared)
            self._start["scatter"] = time.perf_counter() - scatter_began
        pending = {}
        try:
            planned = self._open_everywhere(len(sources))
            size = chunk_size(len(sources), planned, len(self.client.nthreads()) or 1)
            tuned = current_tuning().dask_chunk_sources is not None
            unit = chunk_unit(size, planned)
            smallest = max(CHUNK_MIN_SOURCES, min(size, planned or 0))
            chunks = chunk_sources(sources, size, None if tuned else smallest,
                                   1 if tuned else unit)
            results: list = [None] * len(chunks)
            added = 0  # the chunks before this one are in total, their sums let go
            pending = self._submit(chunks, range(len(chunks)))
            while pending:
                lost = []
                for future in as_completed(list(pending)):
                    index = pending.pop(future)
                    if future.status == "cancelled":  # its input (the problem) was lost
                        lost.append(index)
                        continue
                    try:
                        results[index] = future.result()
                    except BaseException as exc:
                        if hasattr(exc, "add_note"):
                            exc.add_note(f"turbobc: in chunk {index} of {len(chunks)} "
                                         f"({len(chunks[index])} sources) of a Dask run")
                        raise
                    if "first_chunk" not in self._start:
                        self._start.update(first_chunk=time.perf_counter() - self._began,
                                           first_chunk_sweep=results[index].seconds)
                    # in chunk order, as soon as the chunks before are in: the client
                    # holds only the sums of chunks that finished ahead of an earlier one
                    while added < len(chunks) and results[added] is not None:
                        total = total + results[added].partial
                        results[added] = dataclasses.replace(results[added], partial=None)
                        added += 1
                    if progress is not None:
                        progress.update(len(chunks[index]))
                if lost:
                    self._resubmits += 1
                    if self._resubmits > RESUBMITS:
                        raise RuntimeError(f"the problem was lost from every Dask worker "
                                           f"{RESUBMITS} times; {len(lost)} chunks did not run")
                    self._scattered = _scatter(client, problem, self._shared)
                    pending = self._submit(chunks, lost)
        finally:
            for future in pending:
                future.cancel()
        # what the facts read of each chunk, without its sums (n floats, or m with edges)
        self._results += results
        self._chunks += chunks
        self.facts = _facts(self._results, self._chunks, self._start, self._resubmits,
                            client, problem)
        self.facts["graph_via"] = "shared memory" if self._shared else "tcp"
        return total

    def _open_everywhere(self, num_sources: int) -> int | None:
        """Every worker opens its sweeper at once (a task addressed to each, run before its
        chunks); the batch the first to answer plans for ``num_sources`` sources."""
        from distributed import as_completed

        began = time.perf_counter()
        workers = list(self.client.nthreads()) or [None]
        round_ = len(self._chunks)
        self._opening = [
            self.client.submit(on_worker.open_and_plan, self._scattered, self._token,
                               self.engine, num_sources, self._knobs,
                               workers=None if address is None else [address],
                               allow_other_workers=True, pure=False,
                               key=f"turbobc-open-{self._token}-{round_}-{i}")
            for i, address in enumerate(workers)]
        first = next(as_completed(self._opening))
        planned, _ = first.result()
        self._start.setdefault("open", time.perf_counter() - began)
        return planned

    def _submit(self, chunks, indices) -> dict:
        """Submit the chunks at ``indices``; {future: chunk index}."""
        futures = {}
        for index in indices:
            future = self.client.submit(
                on_worker.sweep_chunk, self._scattered, self._token, self.engine,
                chunks[index], self._knobs, pure=False,
                key=f"turbobc-chunk-{self._token}-{index}-{uuid.uuid4().hex[:8]}")
            futures[future] = index
        return futures

    def close(self) -> None:
        """Close every worker's sweeper of this session."""
        for future in self._opening:
            future.release()
        self._opening = []
        if self._scattered is not None:
            self.client.run(on_worker.close_sweeper, self._token)
            self._scattered = None
        shared.release(self._shared)  # (the workers' maps hold the pages they still use)
        self._shared = None


def built_ahead(problem: Problem, engine: str, client, num_sources: int) -> float:
    """Build here, once, what every GPU worker would otherwise build from the graph alone in
    its first chunk, so that it travels with the graph (``Graph.__reduce__`` keeps it): what
    the family the workers' GPU engine would choose builds ahead
    (turbobc/engines/gpu/family.py, ``Family.build_ahead``; the family from
    turbobc/engines/gpu/engine.py, ``choose_family``, asked here with the caller's knobs, as
    the workers are). Returns the seconds (0 where nothing was built)."""
    if engine not in ("gpu", "auto") or num_sources < 2:
        return 0.0
    began = time.perf_counter()
    from turbobc.engines.gpu.engine import choose_family

    family, _ = choose_family(problem, num_sources)
    if not family.builds_ahead or (engine == "auto" and not workers_have_gpus(client)):
        return 0.0
    family.build_ahead()
    return time.perf_counter() - began


def _scatter(client, problem: Problem, folder: str | None = None):
    """The problem on every worker, once: straight from the client to one worker, then from
    worker to worker (``direct`` unless the client was made with
    ``direct_to_workers=False``, for a client that cannot reach the workers); a graph whose
    arrays wait in ``folder`` (turbobc/_dask_shared.py) travels as the folder's name."""
    direct = getattr(client, "direct_to_workers", None)
    graph = problem.graph
    if folder is not None:
        graph.__dict__["_shared_folder"] = folder  # (Graph.__reduce__ reads it)
    try:
        return client.scatter(problem, broadcast=True, hash=False,
                              direct=True if direct is None else direct)
    finally:
        graph.__dict__.pop("_shared_folder", None)


def _facts(results, chunks, start, resubmits, client, problem) -> dict:
    seconds = [r.seconds for r in results]
    facts = dict(results[-1].facts)
    facts.update(engine="dask", worker_engines=sorted({r.engine for r in results}),
                 workers=len(client.nthreads()),
                 workers_used=len({r.worker for r in results}), chunks=len(chunks),
                 chunk_sources=[len(c) for c in chunks], chunk_seconds=seconds,
                 chunk_workers=[r.worker for r in results],
                 first_chunk_seconds=start.get("first_chunk"), start_seconds=dict(start),
                 problem_bytes=problem_bytes(problem), resubmits=resubmits,
                 memory_retries=sum(r.memory_retries for r in results))
    orders = [r.facts.get("order_seconds") for r in results]
    if any(orders):  # the frontiers family's relabeling, in each worker's first chunk
        facts["chunk_order_seconds"] = orders
    slots = [r.slot_seconds for r in results if r.slot_seconds is not None]
    if slots:
        facts["slot_seconds"] = {key: sum(s[key] for s in slots) for key in slots[0]}
    return facts


def local_gpu_cluster(gpus: int):
    """A local cluster with one worker per GPU (``dask_cuda.LocalCUDACluster`` when
    installed, else worker processes each seeing one device through
    ``CUDA_VISIBLE_DEVICES``), one thread each, each allowed 1/gpus of the host's memory.

    Parameters
    ----------
    gpus : int
        Workers to start: GPUs 0 .. gpus-1. More than the GPUs CuPy sees is an error (a
        worker given a device that is not there failed to start, "Nanny failed to start",
        on a one-GPU host); where CuPy sees none, the workers start and their ``"auto"``
        engine runs on the CPU.
    """
    from turbobc._engines import gpu_count

    if gpus < 1:
        raise ValueError(f"gpus must be at least 1; got {gpus}")
    present = gpu_count()
    if 0 < present < gpus:
        raise ValueError(f"gpus={gpus}, but CuPy sees {present} GPU(s) on this machine: one "
                         f"worker a GPU, so at most gpus={present}")
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        LocalCUDACluster = None
    if LocalCUDACluster is not None:
        return LocalCUDACluster(CUDA_VISIBLE_DEVICES=list(range(gpus)), threads_per_worker=1)
    from distributed import Nanny, Scheduler, SpecCluster
    from distributed.system import MEMORY_LIMIT

    # each worker may hold a share of the host's memory by GPU, as LocalCUDACluster gives:
    # Dask's default for one thread is the host's memory by core (8 GB of 512 on 64 cores),
    # and its nanny restarted a worker receiving kron24's graph (1.5 billion stored edges)
    memory = int(MEMORY_LIMIT // gpus)
    workers = {f"gpu{i}": {"cls": Nanny,
                           "options": {"nthreads": 1, "memory_limit": memory,
                                       "env": {"CUDA_VISIBLE_DEVICES": str(i)}}}
               for i in range(gpus)}
    return SpecCluster(scheduler={"cls": Scheduler, "options": {"dashboard_address": ":0"}},
                       workers=workers, silence_logs=logging.WARNING)
