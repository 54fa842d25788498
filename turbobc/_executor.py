"""Executors: where the one loop (turbobc/_run.py) sweeps its source sets.

An executor answers two calls, and the loop makes them once per call::

    label = executor.label(engine)                    # how a progress bar names the run
    with executor.open(problem, engine) as sweeper:   # a session on the problem
        part = sweeper.run(sources, progress)         # raw sums of these sources: a Partial
        sweeper.facts                                  # what the runs did

so a session is a :class:`~turbobc.engines.protocol.Sweeper` as far as the loop can tell.
:class:`LocalExecutor` (this module) runs here; :class:`turbobc._dask.DaskExecutor` cuts each
set into chunks swept on the workers of a Dask cluster, each worker opening its own sweeper
through :class:`LocalExecutor`. So :meth:`LocalExecutor.open` is the one place in turbobc that
opens a sweeper (``Engine.open``). Executors sit below the loop: they call the engines and
never the loop.
"""

from __future__ import annotations

from turbobc.engines.protocol import Engine, Problem, Sweeper

__all__ = ["LocalExecutor"]


class LocalExecutor:
    """Sweep in this process, on one engine's sweeper."""

    name = "local"

    def label(self, engine: Engine) -> str:
        """A progress bar's name for the run: the engine's."""
        return engine.name

    def open(self, problem: Problem, engine: Engine) -> Sweeper:
        """``engine``'s sweeper for ``problem``, once its ``can_serve`` agrees.

        Raises
        ------
        ValueError
            When the engine cannot serve the problem (its reason).
        """
        reason = engine.can_serve(problem)
        if reason is not None:
            raise ValueError(f"the {engine.name} engine cannot run this: {reason}")
        return engine.open(problem)
