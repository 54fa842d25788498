"""Scale-out through Dask: the executor of the one loop (turbobc/_run.py) that cuts each
source set of a call into chunks, swept on many workers.

``turbobc.bc(A, ..., client=client)`` (and :func:`turbobc.edge_bc`) runs the same problem as
without ``client``, on any ``dask.distributed`` cluster (``LocalCUDACluster`` with one worker
per GPU, a ``LocalCluster`` of CPU workers, a remote scheduler, or a mix). The loop opens one
:class:`ClusterSweeper` per call (:meth:`DaskExecutor.open`) and hands it the schedule's
source sets (one for exact BC, one per checkpoint of an approximation)::

    problem ──scatter(broadcast)──► every worker holds the graph once (first set)
    sources ──cut──► chunk 0, chunk 1, ..., chunk C-1     (from the source list alone)
    chunk i ──submit──► any free worker: its cached sweeper (LocalExecutor.open) .run(chunk i)
    Partial 0 + Partial 1 + ... + Partial C-1             (in chunk order) ──► the loop

- **The graph travels once per worker.** The :class:`~turbobc.engines.protocol.Problem` is
  scattered with ``broadcast=True``; each worker opens one sweeper on it (the graph on its
  device; through :class:`turbobc._executor.LocalExecutor`, as a run without Dask does) and
  keeps it for every chunk it runs, until the call ends and closes it. A worker
  that joins later (a restarted one) fetches the problem from a peer; if every copy is lost,
  the chunks still to run are handed to the cluster again with a fresh scatter.
- **Dynamic balance, nothing pinned.** Chunks are ordinary tasks: the scheduler hands them to
  workers as they free up, and re-runs the chunks of a worker that dies elsewhere.
- **Reproducible sums.** Chunk boundaries depend only on the number of sources
  (:func:`chunk_sources`), and the partials are added in chunk order, so the result does not
  depend on the number of workers or on which finished first (beyond what one engine's runs
  already vary: the GPU kernels' atomics add lanes in no fixed order).
- **The caller's knobs hold on the workers.** Each chunk carries the
  :class:`~turbobc._tuning.Tuning` in force where the call was made (``with
  turbobc.tuning(...)`` around ``bc(..., client=)``), and runs under it: ``index_bits=64``,
  a GPU family, a batch cap apply to every worker's sweeps as to a local run.
- **Each worker picks its engine.** ``engine="auto"`` is resolved on the worker (its own GPU,
  else the CPU engine), so a cluster may mix GPU and CPU workers; ``engine="gpu"`` fails on a
  worker without a GPU, and the error names the worker and the chunk.
- **Out of memory.** A chunk that raises ``MemoryError`` is run again on a sweeper with half
  the memory budget (smaller batches), up to :data:`MEMORY_RETRIES` times.

Importing turbobc never imports Dask: the loop imports this module only when ``client`` is
given, and this module imports ``distributed`` only inside its functions. It sits below the
loop and never calls it.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
import uuid

import numpy as np

from turbobc._executor import LocalExecutor
from turbobc._tuning import current as current_tuning, using
from turbobc.engines import resolve_engine
from turbobc.engines.protocol import Partial, Problem, Sweeper

__all__ = ["CHUNK_MIN_SOURCES", "CHUNKS", "MEMORY_RETRIES", "ClusterSweeper", "DaskExecutor",
           "check_client", "chunk_size", "chunk_sources", "local_gpu_cluster"]

CHUNKS = 64
"""Chunks a call's sources are cut into at most, unless the engine's own batch is larger
(:func:`chunk_size`): a few per worker on clusters of up to 16 workers, so that the last
chunks balance the load."""

CHUNK_MIN_SOURCES = 64
"""Fewest sources in a chunk (except when the call has fewer): below this the task overhead
of Dask (milliseconds) is no longer small beside the sweep."""

MEMORY_RETRIES = 2
"""Times a chunk that ran out of memory is run again with half the memory budget."""

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


def chunk_size(num_sources: int, engine_batch: int | None = None) -> int:
    """Sources per chunk: ``Tuning.dask_chunk_sources`` when set, else enough for at most
    :data:`CHUNKS` chunks, at least :data:`CHUNK_MIN_SOURCES`, and at least the batch the
    engine plans for this problem on a worker (``engine_batch``): a GPU sweeps a batch of
    thousands of sources in about the time of one, level by level, so a chunk smaller than
    its batch would waste it. It depends on the problem and the kind of worker, never on how
    many workers there are."""
    chosen = current_tuning().dask_chunk_sources
    if chosen is not None:
        return max(1, int(chosen))
    return max(1, CHUNK_MIN_SOURCES, math.ceil(num_sources / CHUNKS), engine_batch or 0)


def chunk_sources(sources: np.ndarray, size: int) -> list[np.ndarray]:
    """Cut ``sources`` into ``ceil(len / size)`` consecutive chunks whose sizes differ by at
    most one."""
    sources = np.asarray(sources, dtype=np.int64)
    if len(sources) == 0:
        return []
    return np.array_split(sources, math.ceil(len(sources) / size))


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
        """A session of one call on the cluster; ``engine`` ("auto", "gpu", "graphblas") is
        resolved on each worker (:func:`turbobc.engines.resolve_engine`)."""
        return ClusterSweeper(self.client, problem, engine)


class ClusterSweeper(Sweeper):
    """One call's session on the cluster, a :class:`~turbobc.engines.protocol.Sweeper` to the
    loop: the problem is scattered once, at the first :meth:`run`; each worker opens one
    sweeper on it (the graph on its device) and keeps it for every chunk of every run of the
    session, until :meth:`close`.

    Attributes
    ----------
    facts : dict
        Over every run so far: workers, chunks, the engines the workers used, seconds from
        the first submit to the first finished chunk, each chunk's seconds on its worker, and
        the facts of the last chunk's sweeper.
    """

    def __init__(self, client, problem: Problem, engine: str):
        super().__init__(problem)
        self.client, self.engine = client, engine
        self.facts = {"engine": "dask", "chunks": 0}
        self._token = uuid.uuid4().hex
        self._scattered = None
        self._began = self._first_done = None
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
            self._scattered = _scatter(client, problem)
        pending = {}
        try:
            # one worker opens its sweeper (kept for its chunks) and says what batch it plans
            planned = client.submit(_planned_batch, self._scattered, self._token, self.engine,
                                    len(sources), current_tuning(),
                                    key=f"turbobc-plan-{self._token}-{len(self._chunks)}",
                                    pure=False).result()
            chunks = chunk_sources(sources, chunk_size(len(sources), planned))
            results: list = [None] * len(chunks)
            pending = _submit(client, self._scattered, self._token, self.engine, chunks,
                              range(len(chunks)))
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
                    if self._first_done is None:
                        self._first_done = time.perf_counter() - self._began
                    if progress is not None:
                        progress.update(len(chunks[index]))
                if lost:
                    self._resubmits += 1
                    if self._resubmits > RESUBMITS:
                        raise RuntimeError(f"the problem was lost from every Dask worker "
                                           f"{RESUBMITS} times; {len(lost)} chunks did not run")
                    self._scattered = _scatter(client, problem)
                    pending = _submit(client, self._scattered, self._token, self.engine,
                                      chunks, lost)
        finally:
            for future in pending:
                future.cancel()
        for result in results:
            total = total + result.partial
        # what the facts read of each chunk, without its sums (n floats, or m with edges)
        self._results += [dataclasses.replace(result, partial=None) for result in results]
        self._chunks += chunks
        self.facts = _facts(self._results, self._chunks, self._first_done, self._resubmits,
                            client)
        return total

    def close(self) -> None:
        """Close every worker's sweeper of this session."""
        if self._scattered is not None:
            self.client.run(_close_sweeper, self._token)
            self._scattered = None


def _scatter(client, problem: Problem):
    """The problem on every worker, once."""
    return client.scatter(problem, broadcast=True, hash=False)


def _submit(client, scattered, token: str, engine: str, chunks, indices) -> dict:
    """Submit the chunks at ``indices``; {future: chunk index}."""
    futures, knobs = {}, current_tuning()
    for index in indices:
        future = client.submit(_sweep_chunk, scattered, token, engine, chunks[index], knobs,
                               key=f"turbobc-chunk-{token}-{index}-{uuid.uuid4().hex[:8]}",
                               pure=False)
        futures[future] = index
    return futures


def _facts(results, chunks, first_done, resubmits, client) -> dict:
    seconds = [r.seconds for r in results]
    facts = dict(results[-1].facts)
    facts.update(engine="dask", worker_engines=sorted({r.engine for r in results}),
                 workers=len(client.scheduler_info().get("workers", {})),
                 workers_used=len({r.worker for r in results}), chunks=len(chunks),
                 chunk_sources=[len(c) for c in chunks], chunk_seconds=seconds,
                 chunk_workers=[r.worker for r in results],
                 first_chunk_seconds=first_done, resubmits=resubmits,
                 memory_retries=sum(r.memory_retries for r in results))
    return facts


@dataclasses.dataclass
class ChunkResult:
    """What one chunk sends back: its sums and where and how it ran."""

    partial: Partial | None  # None once the session has added it (ClusterSweeper.run)
    seconds: float
    worker: str
    engine: str
    memory_retries: int
    facts: dict


# ---- on the worker -----------------------------------------------------------------------

def _sweep_chunk(problem: Problem, token: str, engine: str, sources: np.ndarray,
                 knobs=None) -> ChunkResult:
    """Run one chunk on this worker's sweeper for the call ``token``, under the caller's
    ``knobs`` (a :class:`~turbobc._tuning.Tuning`; None: the worker's own)."""
    from distributed import get_worker

    worker = get_worker()
    began = time.perf_counter()
    state = _worker_state(worker)
    # one chunk at a time per worker: a sweeper is not shared by threads
    with state.lock, using(knobs if knobs is not None else current_tuning()):
        try:
            partial, retries, sweeper = _run_with_memory_retries(state, problem, token,
                                                                 engine, sources)
        except BaseException as exc:
            if hasattr(exc, "add_note"):
                exc.add_note(f"turbobc: on Dask worker {worker.address}")
            raise
        return ChunkResult(partial=partial, seconds=time.perf_counter() - began,
                           worker=worker.address, engine=sweeper.facts.get("engine", engine),
                           memory_retries=retries, facts=dict(sweeper.facts))


def _planned_batch(problem: Problem, token: str, engine: str, num_sources: int,
                   knobs=None) -> int | None:
    """Open this worker's sweeper for the call and return the batch its engine plans for
    ``num_sources`` sources (None when the engine has no such plan), under the caller's
    ``knobs``."""
    from distributed import get_worker

    worker = get_worker()
    state = _worker_state(worker)
    with state.lock, using(knobs if knobs is not None else current_tuning()):
        try:
            sweeper = state.open(problem, token, engine)
        except BaseException as exc:
            if hasattr(exc, "add_note"):
                exc.add_note(f"turbobc: on Dask worker {worker.address}, opening the engine")
            raise
        plan = getattr(sweeper, "planned_batch", None)
        return None if plan is None else plan(num_sources)


class _WorkerState:
    """The sweeper a worker keeps open for the call in progress."""

    def __init__(self):
        self.lock = threading.Lock()
        self.token = None
        self.sweeper = None
        self.opened = 0  # sweepers opened on this worker so far

    def open(self, problem: Problem, token: str, engine: str):
        if self.token != token or self.sweeper is None:
            self.close()
            self.sweeper = LocalExecutor().open(problem, resolve_engine(engine, problem))
            self.token = token
            self.opened += 1
        return self.sweeper

    def close(self):
        if self.sweeper is not None:
            self.sweeper.close()
        self.sweeper = self.token = None


def _worker_state(worker) -> _WorkerState:
    state = getattr(worker, "_turbobc_state", None)
    if state is None:
        state = _WorkerState()
        worker._turbobc_state = state
    return state


def _run_with_memory_retries(state: _WorkerState, problem: Problem, token: str, engine: str,
                             sources: np.ndarray, *, retries: int = MEMORY_RETRIES):
    """``sweeper.run(sources)``; on ``MemoryError`` the sweeper is closed (its memory freed)
    and the chunk runs again on one with half the budget, up to ``retries`` times. Returns
    the partial, the retries taken and the sweeper."""
    budget = problem.memory_limit
    for attempt in range(retries + 1):
        sweeper = state.open(problem, token, engine)
        try:
            return sweeper.run(sources), attempt, sweeper
        except MemoryError:
            if attempt == retries:
                raise
            budget = max(1, (budget or _memory_budget(sweeper)) // 2)
            state.close()
            problem = dataclasses.replace(problem, memory_limit=budget)
            token = f"{token}-retry{attempt + 1}"
    raise AssertionError("unreachable")


def _memory_budget(sweeper) -> int:
    """The memory a run may take on this worker now: free device memory for the GPU engine,
    the CPU engine's available memory otherwise."""
    if sweeper.facts.get("engine", "").startswith("gpu") or type(sweeper).__module__.startswith(
            "turbobc.engines.gpu"):
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
        return int(cupy.cuda.runtime.memGetInfo()[0])
    from turbobc._memory import available_memory

    return int(available_memory())


def _close_sweeper(token: str, dask_worker=None) -> None:
    """Close this worker's sweeper of the call ``token`` (run on every worker at the end)."""
    state = getattr(dask_worker, "_turbobc_state", None)
    if state is not None and state.token is not None and state.token.startswith(token):
        with state.lock:
            state.close()


def local_gpu_cluster(gpus: int):
    """A local cluster with one worker per GPU (``dask_cuda.LocalCUDACluster`` when
    installed, else worker processes each seeing one device through
    ``CUDA_VISIBLE_DEVICES``), one thread each.

    Parameters
    ----------
    gpus : int
        Workers to start: GPUs 0 .. gpus-1.
    """
    if gpus < 1:
        raise ValueError(f"gpus must be at least 1; got {gpus}")
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        LocalCUDACluster = None
    if LocalCUDACluster is not None:
        return LocalCUDACluster(CUDA_VISIBLE_DEVICES=list(range(gpus)), threads_per_worker=1)
    from distributed import Nanny, Scheduler, SpecCluster

    workers = {f"gpu{i}": {"cls": Nanny,
                           "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(i)}}}
               for i in range(gpus)}
    return SpecCluster(scheduler={"cls": Scheduler, "options": {"dashboard_address": ":0"}},
                       workers=workers, silence_logs=logging.WARNING)

