"""The CPU engine's threads: Python threads over compiled functions that release the GIL.

Each compiled function of the engine (turbobc/_compiled.py) sweeps one piece of the work
(a chunk of sources, a batch of 64 lanes, a block of sampled pairs) serially and releases the
GIL while it runs, so :func:`on_threads` hands the pieces to a pool of
:func:`compute_threads` Python threads one at a time, as NetworKit hands sources to OpenMP
threads: a thread that finishes early, or was descheduled on a shared machine, takes the next
piece. Each piece writes its own row of partial sums; the caller adds the rows in piece order,
so the sums never depend on the threads. (numba's ``parallel=True`` did this before: its
parallel lowering took most of a first call's compile, and an extension compiled ahead cannot
carry it.)
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from turbobc._tuning import current as current_tuning

__all__ = ["compute_threads", "on_threads"]


def compute_threads() -> int:
    """The threads the engine runs on: ``Tuning.cpu_threads``, else ``NUMBA_NUM_THREADS``,
    else the cores this process may run on."""
    chosen = current_tuning().cpu_threads
    if chosen is not None:
        if not isinstance(chosen, int) or isinstance(chosen, bool) or chosen < 1:
            raise ValueError(f"Tuning.cpu_threads must be a positive int or None; got "
                             f"{chosen!r}")
        return chosen
    if os.environ.get("NUMBA_NUM_THREADS", "").isdigit():
        return max(1, int(os.environ["NUMBA_NUM_THREADS"]))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def on_threads(task, count: int, threads: int | None = None) -> None:
    """Run ``task(i)`` for i in 0 .. count - 1 on ``threads`` threads (default
    :func:`compute_threads`), handed out one at a time; the first exception is raised."""
    threads = min(count, threads or compute_threads())
    if threads <= 1:
        for i in range(count):
            task(i)
        return
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="turbobc-cpu") as pool:
        for future in [pool.submit(task, i) for i in range(count)]:
            future.result()
