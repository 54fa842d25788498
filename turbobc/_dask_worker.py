"""What runs on a Dask worker for a call on a cluster (turbobc/_dask.py, the client's side).

Each function here is a task the client submits; a worker keeps, between the tasks of one
call, the sweeper it opened on the call's problem (:class:`WorkerState`, one per worker
process)::

    open_and_plan(problem, token, engine, n, knobs)  the sweeper opened (LocalExecutor.open);
                                                      the batch its engine plans for n sources
    sweep_chunk(problem, token, engine, chunk, knobs) its sweeper .run(chunk): a ChunkResult
    close_sweeper(token)                              (client.run, at the end of the call)
    warm(engine)                                      a tiny run of every kind of problem, so
                                                      that the compile caches are read before
                                                      the first call (turbobc._dask.warm_up)

``problem`` is the scattered :class:`~turbobc.engines.protocol.Problem` (the graph, the
weights of the folded trees, the plan of the folded chains), the same object for every task
of the worker; ``knobs`` are the :class:`~turbobc._tuning.Tuning` in force where the call
was made, in force while the task runs. Nothing of a call is kept on a worker but its open sweeper: a chunk's
sums, the chains' closed-form credit of its sources included, go back in its
:class:`ChunkResult`.
"""

from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np

from turbobc._executor import LocalExecutor
from turbobc._tuning import using
from turbobc._warm import engine_for, warm_up
from turbobc.engines.protocol import Partial, Problem

__all__ = ["ChunkResult", "MEMORY_RETRIES", "WorkerState", "close_sweeper", "gpu_usable",
           "open_and_plan", "sweep_chunk", "warm"]

MEMORY_RETRIES = 2
"""Times a chunk that ran out of memory is run again with half the memory budget."""


@dataclasses.dataclass
class ChunkResult:
    """What one chunk sends back: its sums and where and how it ran.

    Attributes
    ----------
    partial : Partial or None
        The chunk's raw sums (n floats, and m with edge sums; with folded chains, their
        closed-form credit included); None once the client has added it.
    seconds : float
        The task's seconds on its worker (opening the sweeper, when it was not open, and
        the sweep).
    worker, engine : str
        Where it ran, and on which engine.
    memory_retries : int
        Runs again after ``MemoryError`` (:func:`_run_with_memory_retries`).
    facts : dict
        The facts of the worker's sweeper after the chunk.
    slot_seconds : dict or None
        With folded chains, the plan's host seconds of this chunk (``target_weights``,
        ``credits``).
    """

    partial: Partial | None
    seconds: float
    worker: str
    engine: str
    memory_retries: int
    facts: dict
    slot_seconds: dict | None = None


def sweep_chunk(problem: Problem, token: str, engine: str, sources: np.ndarray,
                knobs) -> ChunkResult:
    """Run one chunk on this worker's sweeper for the call ``token``, under the caller's
    ``knobs`` (a :class:`~turbobc._tuning.Tuning`)."""
    from distributed import get_worker

    worker = get_worker()
    began = time.perf_counter()
    state = worker_state(worker)
    with state.lock, using(knobs):  # one chunk at a time: a sweeper serves one thread
        try:
            partial, retries, sweeper = _run_with_memory_retries(state, problem, token,
                                                                 engine, sources)
        except BaseException as exc:
            if hasattr(exc, "add_note"):
                exc.add_note(f"turbobc: on Dask worker {worker.address}")
            raise
        plan = sweeper.problem.slot_weights
        return ChunkResult(partial=partial, seconds=time.perf_counter() - began,
                           worker=worker.address, engine=sweeper.facts.get("engine", engine),
                           memory_retries=retries, facts=dict(sweeper.facts),
                           slot_seconds=None if plan is None else {
                               key: plan.seconds[key] for key in ("target_weights",
                                                                  "credits")})


def open_and_plan(problem: Problem, token: str, engine: str, num_sources: int,
                  knobs) -> tuple[int | None, float]:
    """Open this worker's sweeper for the call (kept for its chunks); the batch its engine
    plans for ``num_sources`` sources (None when the engine has no such plan) and the
    seconds the task took."""
    from distributed import get_worker

    worker = get_worker()
    began = time.perf_counter()
    state = worker_state(worker)
    with state.lock, using(knobs):
        try:
            sweeper = state.open(problem, token, engine)
        except BaseException as exc:
            if hasattr(exc, "add_note"):
                exc.add_note(f"turbobc: on Dask worker {worker.address}, opening the engine")
            raise
        plan = getattr(sweeper, "planned_batch", None)
        return (None if plan is None else plan(num_sources)), time.perf_counter() - began


class WorkerState:
    """The sweeper a worker keeps open for the call in progress."""

    def __init__(self):
        self.lock = threading.Lock()
        self.token = None
        self.sweeper = None
        self.opened = 0  # sweepers opened on this worker so far

    def open(self, problem: Problem, token: str, engine: str):
        if self.token != token or self.sweeper is None:
            self.close()
            self.sweeper = LocalExecutor().open(problem, _engine_for(engine, problem))
            self.token = token
            self.opened += 1
        return self.sweeper

    def close(self):
        if self.sweeper is not None:
            self.sweeper.close()
        self.sweeper = self.token = None


def _engine_for(engine: str, problem: Problem):
    """The engine ``engine`` names on this worker for ``problem``, resolved as the call
    would be here without Dask (turbobc/_warm.py ``engine_for``)."""
    return engine_for(engine, problem)


def worker_state(worker) -> WorkerState:
    state = getattr(worker, "_turbobc_state", None)
    if state is None:
        state = WorkerState()
        worker._turbobc_state = state
    return state


def _run_with_memory_retries(state: WorkerState, problem: Problem, token: str, engine: str,
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


def close_sweeper(token: str, dask_worker=None) -> None:
    """Close this worker's sweeper of the call ``token`` (run on every worker at the end)."""
    state = getattr(dask_worker, "_turbobc_state", None)
    if state is not None and state.token is not None and state.token.startswith(token):
        with state.lock:
            state.close()


def gpu_usable() -> bool:
    """Whether this worker has a usable GPU (``engine="auto"`` resolves to it there)."""
    from turbobc._engines import gpu_status

    return gpu_status()[0]


def warm(engine: str) -> dict:
    """Everything this worker's engine would compile at a call's first chunk, compiled (or
    loaded) now, and a small graph swept once for every kind of problem a call sends: the
    path of ``turbobc warm-up`` (turbobc/_warm.py); returns its report."""
    return warm_up(engine)
