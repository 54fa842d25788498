"""Progress reporting for long runs: a tqdm bar on stderr, counted in sources.

The bar appears only once a run has taken :data:`DELAY_SECONDS`, so quick runs print
nothing; from then on it is redrawn every :data:`TICK_SECONDS`, so that the time elapsed moves
while a long batch holds its count still. It advances as the engine finishes its batches:
the engines sweep the same batches with a bar as without (:func:`paced_batches`).

Splitting a batch for the bar's sake is not worth what it costs. Each batch pays a fixed
cost, the per-level work of a deep graph whatever its number of sources; GraphBLAS sweeps a
wide batch faster per source; and on cores shared with other work its threads wait for each
other once per level of every batch. bench/progress_cost.py measured it on two busy cores:
exact BC of a 3,000-vertex geometric graph took 2.6 times as long with the half-second batches
of earlier versions (they made it 28% slower on a quiet machine), and even one first batch of 8
sources made road-minnesota 14% slower (with one GraphBLAS thread: 8 sources of a deep road
network cost about as much as the per-level work of any batch, a third of a second there).

tqdm is imported from ``tqdm.auto`` only when a bar is shown: in a Jupyter kernel without
ipywidgets that import warns (``TqdmWarning: IProgress not found``), which a run without
``progress=True`` has no reason to do.
"""

from __future__ import annotations

import threading
import time

from tqdm.std import tqdm as plain_tqdm

__all__ = ["DELAY_SECONDS", "TICK_SECONDS", "paced_batches", "source_progress"]

DELAY_SECONDS = 1.0
"""The bar is drawn once the run has lasted this long (tqdm's ``delay``)."""

TICK_SECONDS = 1.0
"""A shown bar is redrawn this often, whether or not sources were done meanwhile."""


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
    """``(start, stop)`` bounds of the batches that sweep ``total`` sources: ``step`` at a
    time, whether or not ``progress`` is a shown bar (module docstring: what splitting them
    for the bar cost).

    Parameters
    ----------
    total : int
        Number of sources.
    step : int
        The engine's batch size (at least 1).
    progress : object
        The bar the engine advances, if any (it changes nothing here).

    Yields
    ------
    tuple of int
        ``start, stop`` with ``0 <= start < stop <= total``, covering ``range(total)`` in
        order.
    """
    for start in range(0, total, step):
        yield start, min(start + step, total)


def is_shown(progress) -> bool:
    """Whether ``progress`` is a tqdm bar that is drawn (any kind: ``tqdm.auto``'s are
    ``tqdm.std.tqdm`` too)."""
    return isinstance(progress, plain_tqdm) and not progress.disable


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

