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
import threading
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
    :func:`compute_threads`), handed out one at a time; the first exception is raised. The
    threads are the process's pool (:func:`_pool`), started once: a new pool each call cost
    the CPU engine 7 ms of road-minnesota's 47 ms on 16 cores (a run calls this several
    times). A task that calls it again runs its pieces in its own thread."""
    threads = min(count, threads or compute_threads())
    if threads <= 1 or threading.current_thread().name.startswith(_PREFIX):
        for i in range(count):
            task(i)
        return
    pool = _pool(threads)
    # at most `threads` pieces in flight: the pool may be wider than this call asked for
    pending = iter(range(count))
    errors: list = []

    def worker() -> None:
        for i in pending:  # next() on a range iterator is atomic under the GIL
            if errors:
                return
            try:
                task(i)
            except BaseException as exc:  # the first is raised in the caller
                errors.append(exc)
                return

    for future in [pool.submit(worker) for _ in range(threads)]:
        future.result()
    if errors:
        raise errors[0]


_PREFIX = "turbobc-cpu"
_pools: dict = {}
_pools_lock = threading.Lock()


def _pool(threads: int) -> ThreadPoolExecutor:
    """The process's pool of at least ``threads`` threads (a wider one replaces it; the
    narrower one is not shut down, as a caller may still be handing it pieces: its threads
    end once it is no longer referenced)."""
    with _pools_lock:
        pool = _pools.get("pool")
        if pool is None or pool._max_workers < threads:
            pool = _pools["pool"] = ThreadPoolExecutor(max_workers=threads,
                                                       thread_name_prefix=_PREFIX)
        return pool


def _forget_pools() -> None:
    """A forked child has none of its parent's threads: it starts its own pool."""
    _pools.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)
