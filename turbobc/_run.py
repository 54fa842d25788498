"""The one loop: a schedule of source sets, swept on an executor, the partial sums added, the
progress shown.

Every sweep of a call runs here, whatever the schedule and wherever it runs::

    schedule ──source set──► loop ──► executor.open(problem, engine) ──► sweeper.run(set)
        ▲                      │                (this process, or Dask's workers)
        └─────── Partial ──────┘   total = Partial + Partial + ...  ──► the caller rescales

- **Schedules** say which sources to sweep, in which sets (:class:`Schedule`). A fixed one
  (:class:`SourceSets`) knows its sets beforehand: every source, given sources, ``k``
  sampled with a seed (one set each today, which the engine batches by its own memory
  model). An adaptive one hands a set, reads its :class:`~turbobc.engines.protocol.Partial`,
  and decides what comes next, until its stopping rule says stop: approximation with a
  guarantee (``SourceSampling``, turbobc/_approx.py).
- **Executors** sweep a set (turbobc/_executor.py): here (:class:`~turbobc._executor.LocalExecutor`,
  the one place that opens a sweeper) or on the workers of a Dask cluster
  (:class:`~turbobc._dask.DaskExecutor`, whose workers open theirs through the local one).
  The loop opens one executor session per call and closes it when the schedule is done.
  The executors sit below the loop and never call back up into it.

The callers sit above: :func:`turbobc._api.run_bc` (and the folding of trees and chains,
turbobc/_fold.py, which sweeps a smaller core through this loop) refuses non-finite sums and
rescales what it returns.
"""

from __future__ import annotations

import contextlib

import numpy as np

from turbobc._executor import LocalExecutor
from turbobc._progress import source_progress
from turbobc.engines import engine_named
from turbobc.engines.protocol import Engine, Partial, Problem

__all__ = ["Schedule", "SourceSets", "planned_batch_of", "run_schedule"]


class Schedule:
    """Which sources the loop sweeps, in which sets.

    Attributes
    ----------
    most : int
        The most sources the schedule may hand: the length of a progress bar the loop shows.
    """

    most: int = 0

    def drive(self, sweep) -> None:
        """Hand source sets to ``sweep`` one at a time until the schedule is done.

        ``sweep(sources)`` sweeps distinct int64 vertex ids on the loop's executor, adds
        their raw sums to the loop's total and returns them (a
        :class:`~turbobc.engines.protocol.Partial`), from which an adaptive schedule decides
        what comes next. ``sweep.planned_batch(k)``, unless None, gives the sources the
        sweeper sweeps at once in a run of k (its engine's wave).
        """
        raise NotImplementedError


class SourceSets(Schedule):
    """A fixed schedule: source sets known beforehand, swept in order.

    Parameters
    ----------
    sets : sequence of numpy.ndarray
        Distinct int64 vertex ids per set (the sets disjoint).
    """

    def __init__(self, sets):
        self.sets = [np.asarray(sources) for sources in sets]
        self.most = sum(len(sources) for sources in self.sets)

    def drive(self, sweep) -> None:
        for sources in self.sets:
            sweep(sources)


def run_schedule(problem: Problem, engine: Engine | str, schedule, *, progress=False,
                 client=None) -> tuple[Partial, dict]:
    """Sweep every source set ``schedule`` hands; the summed raw sums and the facts of the
    runs.

    Parameters
    ----------
    problem : Problem
    engine : Engine or str
        The engine, or its name (turbobc/engines/__init__.py). With ``client``, the name is
        resolved on each worker (``"auto"`` too).
    schedule : Schedule or sequence of numpy.ndarray
        A :class:`Schedule`, or the source sets of a :class:`SourceSets`.
    progress : bool or object with ``update(n)``
        True shows a bar (:func:`turbobc._progress.source_progress`) over the schedule's
        :attr:`~Schedule.most` sources, False shows none; an object with an ``update(n)``
        method (the caller's tqdm bar, or a recorder) is advanced by the sources done
        instead, and left open.
    client : dask.distributed.Client, optional
        Sweep on its workers (:class:`turbobc._dask.DaskExecutor`) instead of here.

    Returns
    -------
    (Partial, dict)
        The raw sums over every source swept, and the facts of the executor's sweeper.

    Raises
    ------
    ValueError
        When the engine cannot serve the problem (its reason).
    """
    if not isinstance(schedule, Schedule):
        schedule = SourceSets(schedule)
    if client is None:
        executor = LocalExecutor()
        engine = engine_named(engine) if isinstance(engine, str) else engine
    else:
        from turbobc._dask import DaskExecutor

        executor = DaskExecutor(client)
        engine = engine if isinstance(engine, str) else engine.name
    total = Partial.zeros(problem.graph.n)
    if problem.edges:
        total.edge = np.zeros(problem.graph.nnz, dtype=np.float64)
    if isinstance(progress, bool):
        shown = source_progress(schedule.most, progress, executor.label(engine))
    else:
        shown = contextlib.nullcontext(progress)  # the caller's: it stays open
    with shown as bar, executor.open(problem, engine) as sweeper:
        def sweep(sources: np.ndarray) -> Partial:
            nonlocal total
            part = sweeper.run(sources, bar)
            total = total + part
            return part

        # what the sweeper sweeps at once in a run of k sources (None where it does not
        # say, as on Dask): an adaptive schedule sizes its steps by it
        sweep.planned_batch = getattr(sweeper, "planned_batch", None)
        schedule.drive(sweep)
        facts = dict(sweeper.facts)
    return total, facts


def planned_batch_of(problem: Problem, engine: Engine | str, client=None):
    """``planned_batch(k)`` of the engine's sweeper on ``problem`` (its wave: the sources it
    sweeps at once), asked once, for all n sources, of a sweeper opened and closed here; None
    where there is none to ask (a Dask client, an engine that does not say). The exact rule
    of a run that samples shortest paths, which opens no sweeper, weighs the exact sweep by it
    (turbobc/_exact_rule.py)."""
    if client is not None:
        return None
    engine = engine_named(engine) if isinstance(engine, str) else engine
    with LocalExecutor().open(problem, engine) as sweeper:
        plan = getattr(sweeper, "planned_batch", None)
        if plan is None:
            return None
        batch = max(1, int(plan(problem.graph.n)))
    return lambda k: batch
