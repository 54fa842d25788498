"""Progress in sources with a time estimate: the bar appears after DELAY_SECONDS, and the CPU
engine's batches are paced while it is shown, so that a graph whose sources all fit in one
batch still moves the bar about twice a second."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from tqdm.auto import tqdm

import turbobc
from data_files import load
from gpu_helpers import Counter
from turbobc import _progress
from turbobc._progress import (DELAY_SECONDS, FIRST_PACED_BATCH, MAX_GROWTH,
                               SECONDS_PER_UPDATE, next_paced_size, paced_batches,
                               source_progress)


class FakeClock:
    """A clock that only moves when the test moves it (``clock.now += seconds``)."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _shown_bar(total):
    return tqdm(total=total, file=io.StringIO(), delay=0)


def _covering(bounds, total):
    """The bounds cover range(total) in order, without gaps or overlaps."""
    starts = [start for start, _ in bounds]
    stops = [stop for _, stop in bounds]
    return starts[0] == 0 and stops[-1] == total and starts[1:] == stops[:-1]


@pytest.mark.parametrize("progress", [Counter(), source_progress(10, False, "graphblas")],
                         ids=["not-a-bar", "disabled-bar"])
def test_without_a_shown_bar_batches_are_the_engine_steps(progress):
    assert list(paced_batches(10, 4, progress)) == [(0, 4), (4, 8), (8, 10)]


def test_paced_batches_converge_on_the_update_interval():
    clock, total, step, cost = FakeClock(), 5000, 4000, 2.0**-9  # about 2 ms per source
    bounds = []
    for start, stop in paced_batches(total, step, _shown_bar(total), clock=clock):
        bounds.append((start, stop))
        clock.now += (stop - start) * cost
    sizes = [stop - start for start, stop in bounds]
    assert _covering(bounds, total)
    assert sizes[0] == FIRST_PACED_BATCH
    assert all(b <= MAX_GROWTH * a for a, b in zip(sizes, sizes[1:]))
    # 0.5 s / 2^-9 s = 256 sources per batch once measured: 8, 32, 128, then 256 each
    assert sizes[:4] == [8, 32, 128, 256] and set(sizes[3:-1]) == {256}
    assert max(sizes) * cost <= SECONDS_PER_UPDATE


def test_paced_batches_never_exceed_the_engine_step():
    clock, total = FakeClock(), 1000
    bounds = list(paced_batches(total, 50, _shown_bar(total), clock=clock))  # no time passes
    assert _covering(bounds, total)
    assert max(stop - start for start, stop in bounds) == 50


def test_next_paced_size():
    assert next_paced_size(8, 8, 0.004, 10_000) == 32  # wants 1000: growth capped at 4x
    assert next_paced_size(100, 100, 1.0, 10_000) == 50  # 0.5 s / 10 ms
    assert next_paced_size(100, 100, 1e3, 10_000) == 1  # very slow sources: one at a time
    assert next_paced_size(100, 100, 0.0, 300) == 300  # no time measured: the cap


def test_the_bar_waits_before_it_appears():
    bar = source_progress(5, True, "graphblas")
    assert bar.delay == DELAY_SECONDS >= 1.0 and not bar.disable and bar.unit == "src"
    bar.close()


def test_bc_with_progress_moves_the_bar_within_one_engine_batch(capsys, monkeypatch):
    """road-minnesota (2,642 vertices) is one batch of the CPU engine; with the bar shown it
    is swept in paced batches, each advancing the bar, and the values are unchanged."""
    monkeypatch.setattr(_progress, "DELAY_SECONDS", 0.0)
    A = load("road-minnesota.mtx", directed=False)
    from turbobc._graphblas import batch_size_for

    assert batch_size_for(A.shape[0], A.shape[0]) == A.shape[0]  # one batch without the bar
    with_bar = turbobc.bc(A, engine="graphblas", progress=True)
    err = capsys.readouterr().err
    counts = {int(c) for c in re.findall(r"(\d+)/2642", err)}
    assert len(counts - {0, 2642}) >= 3, err[-500:]
    assert "src/s" in err and re.search(r"<\d\d:\d\d", err)  # rate and time left
    # pacing changes only how sources are grouped: the sums are those of one batch
    np.testing.assert_allclose(with_bar, turbobc.bc(A, engine="graphblas"), rtol=1e-13)
