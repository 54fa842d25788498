"""Progress reporting for long runs: a tqdm bar on stderr, counted in sources, and what the
CPU engine does differently while the bar is shown.

The bar appears only once a run has taken :data:`DELAY_SECONDS`, so quick runs print
nothing; from then on it is redrawn every :data:`TICK_SECONDS` (the time elapsed moves) even
while a long batch holds its count still. An engine whose batch would hold every source of a
small graph (the CPU engine fits thousands of sources in one batch) sweeps
:data:`FIRST_PACED_BATCH` sources first (:func:`paced_batches`), so that the bar has a rate
and a time left within a second, then its own batches.

No more than that: a batch's sources are swept together, and splitting them costs more than
the batches' fixed costs. GraphBLAS sweeps a wide batch faster per source, and on a machine
whose cores are shared its threads wait for each other once per level of every batch: on two
busy cores, 3,000 sources of a geometric graph took 8.7 ms each in one batch and 25 ms each in
batches of 128 (with one thread: 4.1 and 4.7 ms). The pacing of earlier versions (batches of
half a second) made such runs 28% slower, twice as slow on busy cores; the one small batch
costs its own time, a fraction of a percent (bench/progress_cost.py).

tqdm is imported from ``tqdm.auto`` only when a bar is shown: in a Jupyter kernel without
ipywidgets that import warns (``TqdmWarning: IProgress not found``), which a run without
``progress=True`` has no reason to do.
"""

from __future__ import annotations

import threading
import time

from tqdm.std import tqdm as plain_tqdm

__all__ = ["DELAY_SECONDS", "FIRST_PACED_BATCH", "TICK_SECONDS", "paced_batches",
           "source_progress"]

DELAY_SECONDS = 1.0
"""The bar is drawn once the run has lasted this long (tqdm's ``delay``)."""

TICK_SECONDS = 1.0
"""A shown bar is redrawn this often, whether or not sources were done meanwhile."""

FIRST_PACED_BATCH = 8
"""Sources swept first while a bar is shown, before the engine's own batches: the bar's
first rate and time left."""


def source_progress(total: int, enabled: bool, engine: str) -> plain_tqdm:
    """A progress bar over ``total`` sources; silent (but still usable) when not ``enabled``.

    The bar shows sources done, the rate and the estimated time left, from
    :data:`DELAY_SECONDS` into the run on, redrawn every :data:`TICK_SECONDS`.
    """
    if not enabled:
        return plain_tqdm(total=total, disable=True)
    from tqdm.auto import tqdm

    bar = tqdm(total=total, unit="src", desc=f"turbobc[{engine}]", dynamic_ncols=True,
               leave=True, delay=DELAY_SECONDS)
    threading.Thread(target=_tick, args=(bar,), daemon=True, name="turbobc-progress").start()
    return bar


def _tick(bar) -> None:
    """Redraw ``bar`` every :data:`TICK_SECONDS` until it is closed (tqdm's ``close``
    disables it), once its delay has passed: the time elapsed moves during a long batch."""
    while True:
        time.sleep(TICK_SECONDS)
        if bar.disable:
            return
        if time.time() - bar.start_t >= bar.delay:
            try:
                bar.refresh()
            except Exception:  # drawing is best effort: a closed stream, a closing bar
                return


def paced_batches(total: int, step: int, progress):
    """``(start, stop)`` bounds of the batches that sweep ``total`` sources.

    ``step`` sources at a time; with a shown bar (``progress`` a tqdm bar that is not
    disabled), :data:`FIRST_PACED_BATCH` of them first when there are more than twice as
    many, so that the bar has a rate early.

    Parameters
    ----------
    total : int
        Number of sources.
    step : int
        The engine's batch size (at least 1).
    progress : object
        The bar the engine advances.

    Yields
    ------
    tuple of int
        ``start, stop`` with ``0 <= start < stop <= total``, covering ``range(total)`` in
        order.
    """
    first = 0
    if is_shown(progress) and total > 2 * FIRST_PACED_BATCH and step > FIRST_PACED_BATCH:
        first = FIRST_PACED_BATCH
        yield 0, first
    for start in range(first, total, step):
        yield start, min(start + step, total)


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

