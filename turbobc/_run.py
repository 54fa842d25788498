"""The one loop above the engines: a schedule of sources, a sweeper, partial sums, progress.

:func:`run_schedule` opens the engine on the problem, hands it the schedule's source sets,
adds the :class:`~turbobc.engines.protocol.Partial` sums they return and drives the progress bar;
:func:`turbobc._api.bc` then refuses non-finite sums and rescales. Today's schedules (every
source, given sources, k sampled with a seed) are one source set each, which the engine
batches by its own memory model; an adaptive schedule would hand several sets and stop early.
"""

from __future__ import annotations

import numpy as np

from turbobc._progress import source_progress
from turbobc.engines.protocol import Engine, Partial, Problem

__all__ = ["engine_named", "run_schedule"]


def engine_named(name: str) -> Engine:
    """The engine called ``name`` ("gpu" or "graphblas"; "auto" is resolved by validation)."""
    if name == "gpu":
        from turbobc.engines.gpu.engine import GpuEngine

        return GpuEngine()
    if name == "graphblas":
        from turbobc.engines.graphblas import GraphblasEngine

        return GraphblasEngine()
    raise ValueError(f"engine must be 'gpu' or 'graphblas'; got {name!r}")


def run_schedule(problem: Problem, engine: Engine, schedule: list[np.ndarray], *,
                 progress: bool = False) -> tuple[Partial, dict]:
    """Sweep every source set of ``schedule`` with ``engine``; the summed raw sums and the
    facts of the runs.

    Raises
    ------
    ValueError
        When the engine cannot serve the problem (its reason).
    """
    reason = engine.can_serve(problem)
    if reason is not None:
        raise ValueError(f"the {engine.name} engine cannot run this: {reason}")
    total = Partial.zeros(problem.graph.n)
    num_sources = sum(len(s) for s in schedule)
    with source_progress(num_sources, progress, engine.name) as bar, \
            engine.open(problem) as sweeper:
        for sources in schedule:
            total = total + sweeper.run(sources, bar)
        facts = dict(sweeper.facts)
    return total, facts
