"""The CPU engine's pool of threads (turbobc/engines/cpu/threads.py): every piece run once,
the first error raised, a nested call run in its own thread, one pool kept between calls."""

from __future__ import annotations

import threading

import pytest

from turbobc.engines.cpu import threads as cpu_threads
from turbobc.engines.cpu.threads import on_threads


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_every_piece_runs_once(threads):
    seen, lock = [], threading.Lock()

    def task(i):
        with lock:
            seen.append(i)

    on_threads(task, 37, threads)
    assert sorted(seen) == list(range(37))


def test_the_first_error_is_raised_and_the_rest_stop():
    ran = []

    def task(i):
        ran.append(i)
        if i == 3:
            raise ValueError("piece 3")

    with pytest.raises(ValueError, match="piece 3"):
        on_threads(task, 1000, 4)
    assert len(ran) < 1000  # the other threads stop taking pieces


def test_a_nested_call_runs_in_its_own_thread_and_the_pool_is_kept():
    inner = []

    def task(i):
        names = set()
        on_threads(lambda j: names.add(threading.current_thread().name), 8, 4)
        inner.append(names)

    on_threads(task, 4, 2)
    pool = cpu_threads._pools["pool"]
    assert all(len(names) == 1 for names in inner)  # no pool thread waits on the pool
    on_threads(lambda i: None, 4, 2)
    assert cpu_threads._pools["pool"] is pool  # kept between calls
    on_threads(lambda i: None, 64, 64)
    assert cpu_threads._pools["pool"]._max_workers >= 64  # a wider call widens it
