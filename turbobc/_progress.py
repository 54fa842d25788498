"""Progress reporting for long runs: a tqdm bar on stderr, counted in sources, and the pacing
of the CPU engine's batches while the bar is shown.

The bar appears only once a run has taken :data:`DELAY_SECONDS`, so quick runs print
nothing. An engine whose batch would hold every source of a small graph (the CPU engine fits
thousands of sources in one batch) walks the sources through :func:`paced_batches` instead,
which sizes batches from the measured time per source so that the bar moves about every
:data:`SECONDS_PER_UPDATE` and its time estimate means something from the first seconds.
"""

from __future__ import annotations

import time

from tqdm.auto import tqdm

__all__ = ["DELAY_SECONDS", "SECONDS_PER_UPDATE", "paced_batches", "source_progress"]

DELAY_SECONDS = 1.0
"""The bar is drawn once the run has lasted this long (tqdm's ``delay``)."""

SECONDS_PER_UPDATE = 0.5
"""Target time of one paced batch, i.e. between two updates of the bar."""

FIRST_PACED_BATCH = 8
"""Sources in the first paced batch, which measures the time per source."""

MAX_GROWTH = 4
"""A paced batch holds at most this many times the sources of the one before."""


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
    is not disabled): batches of about :data:`SECONDS_PER_UPDATE` each, measured on the
    batches already done (the caller's work on a batch runs between two yields), starting
    at :data:`FIRST_PACED_BATCH` sources, growing at most :data:`MAX_GROWTH`-fold per batch
    and never above ``step`` (the engine's memory bound).

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
    if not _is_shown(progress):
        for start in range(0, total, step):
            yield start, min(start + step, total)
        return
    size, start = min(step, FIRST_PACED_BATCH), 0
    while start < total:
        stop = min(start + size, total)
        began = clock()
        yield start, stop
        size = next_paced_size(size, stop - start, clock() - began, step)
        start = stop


def next_paced_size(previous: int, done: int, seconds: float, step: int) -> int:
    """Sources in the next paced batch after ``done`` sources took ``seconds``.

    Aims at :data:`SECONDS_PER_UPDATE`, within ``1 .. min(step, MAX_GROWTH * previous)``.
    """
    ceiling = min(step, MAX_GROWTH * previous)
    if seconds <= 0:
        return max(1, ceiling)
    wanted = int(done * SECONDS_PER_UPDATE / seconds)
    return max(1, min(ceiling, wanted))


def _is_shown(progress) -> bool:
    return isinstance(progress, tqdm) and not progress.disable
