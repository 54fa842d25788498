"""Progress reporting for long runs: a tqdm bar on stderr, counted in sources, and the pacing
of the CPU engine's batches while the bar is shown.

The bar appears only once a run has taken :data:`DELAY_SECONDS`, so quick runs print
nothing. An engine whose batch would hold every source of a small graph (the CPU engine fits
thousands of sources in one batch) walks the sources through :func:`paced_batches` instead,
which sizes batches from the measured cost of the batches done so that the bar moves about
every :data:`SECONDS_PER_UPDATE` (longer where a batch has a large fixed cost, so that pacing
adds at most about :data:`MAX_OVERHEAD` to the run) and its time estimate means something
from the first seconds.
"""

from __future__ import annotations

import time

from tqdm.auto import tqdm

__all__ = ["DELAY_SECONDS", "SECONDS_PER_UPDATE", "batch_cost_model", "next_paced_size",
           "paced_batches", "source_progress"]

DELAY_SECONDS = 1.0
"""The bar is drawn once the run has lasted this long (tqdm's ``delay``)."""

SECONDS_PER_UPDATE = 0.5
"""Target time of one paced batch, i.e. between two updates of the bar."""

FIRST_PACED_BATCH = 8
"""Sources in the first paced batch, which measures the time per source."""

MAX_GROWTH = 4
"""A paced batch holds at most this many times the sources of the one before."""

MAX_OVERHEAD = 0.2
"""Largest ratio of the estimated fixed cost of a batch (the per-level work of a deep graph,
whatever the number of sources) to its per-source work: a paced batch lasts at least
``fixed * (1 + 1 / MAX_OVERHEAD)``, so splitting a run into paced batches makes it at most
about 20% slower."""


def source_progress(total: int, enabled: bool, engine: str) -> tqdm:
    """A progress bar over ``total`` sources; silent (but still usable) when not ``enabled``.

    The bar shows sources done, the rate and the estimated time left, from
    :data:`DELAY_SECONDS` into the run on.
    """
    return tqdm(total=total, disable=not enabled, unit="src", desc=f"turbobc[{engine}]",
                dynamic_ncols=True, leave=True, delay=DELAY_SECONDS)


def paced_batches(total: int, step: int, progress, *, clock=time.perf_counter):
    """``(start, stop)`` bounds of the batches that sweep ``total`` sources.

    Without a shown bar: ``step`` sources at a time. With one (``progress`` a tqdm bar that
    is not disabled): batches sized by :func:`next_paced_size` from the time of the batches
    already done (the caller's work on a batch runs between two yields), starting at
    :data:`FIRST_PACED_BATCH` sources.

    Parameters
    ----------
    total : int
        Number of sources.
    step : int
        The engine's batch size (at least 1).
    progress : object
        The bar the engine advances.
    clock : callable, optional
        Seconds as a float (tests pass a fake clock).

    Yields
    ------
    tuple of int
        ``start, stop`` with ``0 <= start < stop <= total``, covering ``range(total)`` in
        order.
    """
    if not is_shown(progress):
        for start in range(0, total, step):
            yield start, min(start + step, total)
        return
    size, start, history = min(step, FIRST_PACED_BATCH), 0, []
    while start < total:
        stop = min(start + size, total)
        began = clock()
        yield start, stop
        history.append((stop - start, clock() - began))
        size = next_paced_size(history, step)
        start = stop


def next_paced_size(history: list[tuple[int, float]], step: int) -> int:
    """Sources in the next paced batch, from ``(sources, seconds)`` of the batches done.

    With the cost model ``seconds = fixed + per_source * sources`` of
    :func:`batch_cost_model`, the batch aims at ``max(SECONDS_PER_UPDATE, fixed * (1 + 1 /
    MAX_OVERHEAD))`` seconds, within ``1 .. min(step, MAX_GROWTH * last batch)``.
    """
    ceiling = max(1, min(step, MAX_GROWTH * history[-1][0]))
    fixed, per_source = batch_cost_model(history)
    if per_source <= 0:
        return ceiling  # nothing measurable yet: grow
    target = max(SECONDS_PER_UPDATE, fixed * (1 + 1 / MAX_OVERHEAD))
    return max(1, min(ceiling, int((target - fixed) / per_source)))


def batch_cost_model(history: list[tuple[int, float]]) -> tuple[float, float]:
    """``(fixed, per_source)`` seconds of a batch: a least-squares line through the
    ``(sources, seconds)`` of the batches done, with ``fixed`` kept within ``[0, shortest
    batch time]``; with one batch size only, ``fixed = 0``."""
    sizes = [float(b) for b, _ in history]
    times = [float(t) for _, t in history]
    mean_size, mean_time = sum(sizes) / len(sizes), sum(times) / len(times)
    spread = sum((b - mean_size) ** 2 for b in sizes)
    fixed = 0.0
    if spread > 0:
        slope = sum((b - mean_size) * (t - mean_time) for b, t in zip(sizes, times)) / spread
        fixed = min(max(mean_time - slope * mean_size, 0.0), min(times))
    per_source = (sum(times) - fixed * len(times)) / sum(sizes)
    return fixed, per_source


def is_shown(progress) -> bool:
    """Whether ``progress`` is a tqdm bar that is drawn."""
    return isinstance(progress, tqdm) and not progress.disable


class ForwardedProgress:
    """A caller's progress object (anything with ``update(n)``) seen through a counter:
    ``done`` counts every source reported, and ``update`` passes on all but the first
    ``already`` of them. A sweep that replaces an abandoned attempt (chain folding declined
    midway: turbobc/_fold.py) then counts its sources without counting again the ones the
    attempt already reported; the total passed on is still the number of sources."""

    def __init__(self, progress, already: int = 0):
        self.progress, self.already, self.done = progress, already, 0

    def update(self, n: int = 1) -> None:
        before = max(0, self.done - self.already)
        self.done += n
        passed = max(0, self.done - self.already) - before
        if passed:
            self.progress.update(passed)

