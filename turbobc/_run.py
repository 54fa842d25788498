"""The one loop above the engines: a schedule of sources, a sweeper, partial sums, progress.

:func:`run_schedule` opens the engine on the problem, hands it the schedule's source sets,
adds the :class:`~turbobc.engines.protocol.Partial` sums they return and drives the progress bar;
:func:`turbobc._api.bc` then refuses non-finite sums and rescales. Today's schedules (every
source, given sources, k sampled with a seed) are one source set each, which the engine
batches by its own memory model; an adaptive schedule would hand several sets and stop early.
"""

from __future__ import annotations

import contextlib

import numpy as np

from turbobc._progress import source_progress
from turbobc.engines.protocol import Engine, Partial, Problem
from turbobc.exceptions import GPUUnavailableError

__all__ = ["engine_named", "resolve_engine", "run_schedule", "sweep_sources"]


def engine_named(name: str) -> Engine:
    """The engine called ``name`` ("gpu", "cpu" or "graphblas"; "auto" is resolved by
    validation)."""
    if name == "gpu":
        from turbobc.engines.gpu.engine import GpuEngine

        return GpuEngine()
    if name == "cpu":
        from turbobc.engines.cpu import CpuEngine

        return CpuEngine()
    if name == "graphblas":
        from turbobc.engines.graphblas import GraphblasEngine

        return GraphblasEngine()
    raise ValueError(f"engine must be 'gpu', 'cpu' or 'graphblas'; got {name!r}")


def resolve_engine(name: str, problem: Problem) -> Engine:
    """The engine that runs ``problem`` when the user asked for ``name``: each engine's
    :meth:`~turbobc.engines.protocol.Engine.can_serve` decides whether it can, nothing else.

    ``"auto"`` takes the GPU engine when it can serve, else the CPU engine. A named kernel is
    something only the GPU engine serves, so ``engine="auto"`` with one means the GPU.

    Raises
    ------
    turbobc.exceptions.GPUUnavailableError
        ``name`` is ``"gpu"``, or ``"auto"`` where only the GPU engine could serve (a named
        kernel), and the GPU engine cannot run here (its reason: no usable GPU).
    ValueError
        ``name`` is ``"cpu"`` or ``"graphblas"`` and that engine cannot serve (its reason: a
        GPU kernel).
    """
    if name == "auto":
        gpu = engine_named("gpu")
        gpu_reason = gpu.can_serve(problem)
        if gpu_reason is None:
            return gpu
        cpu = engine_named("cpu")
        if cpu.can_serve(problem) is None:
            return cpu
        asked = f"kernel={problem.kernel!r}" if problem.kernel != "auto" else "this call"
        raise _gpu_unavailable(asked, gpu_reason)
    engine = engine_named(name)
    reason = engine.can_serve(problem)
    if reason is None:
        return engine
    if name == "gpu":
        raise _gpu_unavailable("engine='gpu'", reason)
    raise ValueError(f"engine={name!r} cannot run this: {reason}; pass engine='gpu' or "
                     "'auto' instead")


def _gpu_unavailable(asked: str, reason: str) -> GPUUnavailableError:
    return GPUUnavailableError(f"{asked} needs a usable GPU, and the GPU engine cannot run "
                               f"here ({reason}). Use engine='cpu' (or 'auto') to run on "
                               "the CPU")


def run_schedule(problem: Problem, engine: Engine, schedule: list[np.ndarray], *,
                 progress=False) -> tuple[Partial, dict]:
    """Sweep every source set of ``schedule`` with ``engine``; the summed raw sums and the
    facts of the runs.

    ``progress``: True shows a bar (:func:`turbobc._progress.source_progress`), False shows
    none; an object with an ``update(n)`` method (the caller's tqdm bar, or a recorder) is
    advanced by the sources done instead, and left open.

    Raises
    ------
    ValueError
        When the engine cannot serve the problem (its reason).
    """
    reason = engine.can_serve(problem)
    if reason is not None:
        raise ValueError(f"the {engine.name} engine cannot run this: {reason}")
    total = Partial.zeros(problem.graph.n)
    if problem.edges:
        total.edge = np.zeros(problem.graph.nnz, dtype=np.float64)
    num_sources = sum(len(s) for s in schedule)
    if isinstance(progress, bool):
        shown = source_progress(num_sources, progress, engine.name)
    else:
        shown = contextlib.nullcontext(progress)  # the caller's: it stays open
    with shown as bar, engine.open(problem) as sweeper:
        for sources in schedule:
            total = total + sweeper.run(sources, bar)
        facts = dict(sweeper.facts)
    return total, facts


def sweep_sources(problem: Problem, engine: str, sources: np.ndarray, *, progress=False,
                  client=None) -> tuple[Partial, dict]:
    """The raw sums of ``sources``: here with ``engine`` (:func:`run_schedule`, one source
    set), or on the workers of a Dask ``client`` (:func:`turbobc._dask.run_on_cluster`,
    where each worker resolves ``engine`` itself)."""
    if client is None:
        return run_schedule(problem, engine_named(engine), [sources], progress=progress)
    from turbobc._dask import run_on_cluster

    if isinstance(progress, bool):
        shown = source_progress(len(sources), progress, "dask")
    else:
        shown = contextlib.nullcontext(progress)
    with shown as bar:
        return run_on_cluster(client, problem, engine, sources, progress=bar)
