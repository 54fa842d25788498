"""Progress reporting for long runs: a tqdm bar on stderr, counted in sources, and the pacing
of the CPU engine's batches while the bar is shown.

The bar appears only once a run has taken :data:`DELAY_SECONDS`, so quick runs print
nothing. An engine whose batch would hold every source of a small graph (the CPU engine fits
thousands of sources in one batch) walks the sources through :func:`paced_batches` instead, so
that the bar moves and its time estimate means something early. Splitting a batch is not free:
each batch pays a fixed cost (the per-level work of a deep graph, whatever its number of
sources; a garbage collection), and a wider batch sweeps each source faster. Pacing therefore
keeps the batches few and long: a first batch of :data:`FIRST_PACED_BATCH` sources measures
the fixed cost (it can be no more than that batch's time), and every later batch lasts at least
that time / :data:`MAX_OVERHEAD` (and :data:`SECONDS_PER_UPDATE`), so the fixed cost it adds
is at most 2% of it; the last batch takes along whatever a full batch would leave behind.
bench/progress_cost.py measures what pacing costs against the engine's own batches.

tqdm is imported from ``tqdm.auto`` only when a bar is shown: in a Jupyter kernel without
ipywidgets that import warns (``TqdmWarning: IProgress not found``), which a run without
``progress=True`` has no reason to do.
"""

from __future__ import annotations

import time

from tqdm.std import tqdm as plain_tqdm

__all__ = ["DELAY_SECONDS", "SECONDS_PER_UPDATE", "batch_cost_model", "next_paced_size",
           "paced_batches", "source_progress"]

DELAY_SECONDS = 1.0
"""The bar is drawn once the run has lasted this long (tqdm's ``delay``)."""

SECONDS_PER_UPDATE = 0.5
"""Shortest paced batch after the first: the bar moves at most about twice a second."""

FIRST_PACED_BATCH = 8
"""Sources in the first paced batch, which measures the time per batch and per source."""

MAX_GROWTH = 16
"""A paced batch holds at most this many times the sources of the one before (the first
batch's time per source includes the fixed cost, so the second is sized short anyway)."""

MAX_OVERHEAD = 0.02
"""Largest ratio of a batch's fixed cost to the batch's time: every paced batch after the
first lasts at least the shortest batch's time (which bounds the fixed cost) divided by this,
so that each batch pacing adds costs at most about 2% of what it sweeps."""


def source_progress(total: int, enabled: bool, engine: str) -> tqdm:
    """A progress bar over ``total`` sources; silent (but still usable) when not ``enabled``.

    The bar shows sources done, the rate and the estimated time left, from
    :data:`DELAY_SECONDS` into the run on.
    """
    if not enabled:
        return plain_tqdm(total=total, disable=True)
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="src", desc=f"turbobc[{engine}]", dynamic_ncols=True,
                leave=True, delay=DELAY_SECONDS)


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
        if total - stop < size and total - start <= step:
            stop = total  # less than a batch would be left: it goes along with this one
        began = clock()
        yield start, stop
        history.append((stop - start, clock() - began))
        size = next_paced_size(history, step)
        start = stop


def next_paced_size(history: list[tuple[int, float]], step: int) -> int:
    """Sources in the next paced batch, from ``(sources, seconds)`` of the batches done.

    With the cost model ``seconds = fixed + per_source * sources`` of
    :func:`batch_cost_model`, the batch aims at ``max(SECONDS_PER_UPDATE, shortest /
    MAX_OVERHEAD)`` seconds, ``shortest`` the shortest batch's time (no batch's fixed cost
    exceeds it), within ``1 .. min(step, MAX_GROWTH * last batch)``.
    """
    ceiling = max(1, min(step, MAX_GROWTH * history[-1][0]))
    fixed, per_source = batch_cost_model(history)
    if per_source <= 0:
        return ceiling  # nothing measurable yet: grow
    shortest = min(seconds for _, seconds in history)
    target = max(SECONDS_PER_UPDATE, shortest / MAX_OVERHEAD)
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
    """Whether ``progress`` is a tqdm bar that is drawn (any kind: ``tqdm.auto``'s are
    ``tqdm.std.tqdm`` too)."""
    return isinstance(progress, plain_tqdm) and not progress.disable


class ForwardedProgress:
    """A caller's progress object (anything with ``update(n)``) seen through a counter:
    ``done`` counts every source reported, and ``update`` passes on all but the first
    ``already`` of them. A sweep that replaces an abandoned attempt (chain folding declined
    midway: turbobc/_api.py) then counts its sources without counting again the ones the
    attempt already reported; the total passed on is still the number of sources."""

    def __init__(self, progress, already: int = 0):
        self.progress, self.already, self.done = progress, already, 0

    def update(self, n: int = 1) -> None:
        before = max(0, self.done - self.already)
        self.done += n
        passed = max(0, self.done - self.already) - before
        if passed:
            self.progress.update(passed)

