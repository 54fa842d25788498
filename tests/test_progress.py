"""Progress in sources with a time estimate: the bar appears after DELAY_SECONDS, and the CPU
engine's batches are paced while it is shown, so that a graph whose sources all fit in one
batch still moves the bar, in a few long batches whose fixed costs stay within 2% of the run
(bench/progress_cost.py measures the real cost)."""

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
from turbobc._progress import (DELAY_SECONDS, FIRST_PACED_BATCH, MAX_GROWTH, MAX_OVERHEAD,
                               SECONDS_PER_UPDATE, batch_cost_model, next_paced_size,
                               paced_batches, source_progress)


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


def _paced_run(total, step, fixed, per_source):
    """Bounds and seconds of each paced batch when a batch costs fixed + per_source * size."""
    clock, bounds, seconds = FakeClock(), [], []
    for start, stop in paced_batches(total, step, _shown_bar(total), clock=clock):
        bounds.append((start, stop))
        seconds.append(fixed + (stop - start) * per_source)
        clock.now += seconds[-1]
    return bounds, seconds


def test_paced_batches_converge_on_the_update_interval():
    """No fixed cost, 2 ms a source: 8 sources measure it, then batches of 0.78 s, the first
    batch's time / MAX_OVERHEAD (above SECONDS_PER_UPDATE), reached in 16x steps."""
    bounds, seconds = _paced_run(5000, 4000, 0.0, 2.0**-9)  # about 2 ms per source
    sizes = [stop - start for start, stop in bounds]
    assert _covering(bounds, 5000)
    assert sizes[:3] == [FIRST_PACED_BATCH, 16 * FIRST_PACED_BATCH, 400]
    assert all(b <= MAX_GROWTH * a for a, b in zip(sizes, sizes[1:]))
    target = max(SECONDS_PER_UPDATE, seconds[0] / MAX_OVERHEAD)  # 8 / 512 / 0.02 = 0.78 s
    assert all(0.99 * target <= t <= target for t in seconds[2:-1])
    assert target <= seconds[-1] < 2 * target  # the rest went along with the last batch


def test_a_large_fixed_cost_per_batch_lengthens_the_batches():
    """A deep graph: 0.3 s per batch whatever its size (per-level work), then 2^-9 s per
    source. Once the batches have grown (8, 128, 2048 sources), each lasts at least
    0.3 / MAX_OVERHEAD = 15 s: pacing adds the growing batches' fixed costs and at most 2% of
    the run."""
    fixed = 0.3
    bounds, seconds = _paced_run(20000, 20000, fixed, 2.0**-9)
    assert _covering(bounds, 20000)
    assert [stop - start for start, stop in bounds][:3] == [8, 128, 2048]
    assert len(bounds) == 5 and all(t >= fixed / MAX_OVERHEAD for t in seconds[3:])
    unpaced = fixed + 20000 * 2.0**-9
    assert sum(seconds) <= (1 + MAX_OVERHEAD) * unpaced + 3 * fixed


def test_a_run_shorter_than_two_batches_is_not_split_further():
    """3,000 sources of 1.1 ms and 26 ms a batch (a 3,000-vertex geometric graph, 3.4 s):
    three batches, the last taking what a second full one would have left; two extra fixed
    costs: under 2% of the run."""
    bounds, seconds = _paced_run(3000, 3000, 0.026, 0.0011)
    assert [stop - start for start, stop in bounds] == [8, 128, 2864]
    unpaced = 0.026 + 3000 * 0.0011
    assert sum(seconds) / unpaced - 1 < 0.02


def test_a_tiny_run_is_one_batch():
    assert list(paced_batches(10, 10, _shown_bar(10), clock=FakeClock())) == [(0, 10)]


def test_paced_batches_never_exceed_the_engine_step():
    clock, total = FakeClock(), 1000
    bounds = list(paced_batches(total, 50, _shown_bar(total), clock=clock))  # no time passes
    assert _covering(bounds, total)
    assert max(stop - start for start, stop in bounds) == 50


def test_next_paced_size():
    # 0.5 ms a source: 0.5 s (SECONDS_PER_UPDATE, above 0.004 / 0.02) wants 1000: 16x caps it
    assert next_paced_size([(8, 0.004)], 10_000) == 128
    # a first batch of 1 s may be all fixed cost: the next lasts 1 / 0.02 = 50 s
    assert next_paced_size([(100, 1.0), (1600, 16.0)], 100_000) == 5000
    assert next_paced_size([(100, 1.0)], 1_000) == 1_000  # never beyond the engine's step
    assert next_paced_size([(100, 0.0)], 300) == 300  # nothing measured: the cap


def test_batch_cost_model_recovers_a_line():
    # 0.25 s per batch + 4 ms per source, by hand: 10 -> 0.29 s, 100 -> 0.65 s, 50 -> 0.45 s
    fixed, per_source = batch_cost_model([(10, 0.29), (100, 0.65), (50, 0.45)])
    assert fixed == pytest.approx(0.25) and per_source == pytest.approx(0.004)
    assert batch_cost_model([(10, 0.5), (10, 0.7)]) == (0.0, pytest.approx(0.06))
    # a fitted line below zero at no sources: no fixed cost
    assert batch_cost_model([(10, 0.01), (100, 0.5)])[0] == 0.0


def test_the_bar_waits_before_it_appears():
    bar = source_progress(5, True, "graphblas")
    assert bar.delay == DELAY_SECONDS >= 1.0 and not bar.disable and bar.unit == "src"
    bar.close()


def test_bc_with_progress_moves_the_bar_within_one_engine_batch(capsys, monkeypatch):
    """road-minnesota (2,642 vertices) is one batch of the CPU engine; with the bar shown it
    is swept in paced batches, each advancing the bar, and the values are unchanged."""
    monkeypatch.setattr(_progress, "DELAY_SECONDS", 0.0)
    monkeypatch.setattr(_progress, "SECONDS_PER_UPDATE", 0.05)  # many updates, even if fast
    monkeypatch.setattr(_progress, "MAX_OVERHEAD", 0.2)
    A = load("road-minnesota.mtx", directed=False)
    from turbobc.engines.graphblas import batch_size_for

    assert batch_size_for(A.shape[0], A.shape[0]) == A.shape[0]  # one batch without the bar
    with_bar = turbobc.bc(A, engine="graphblas", progress=True)
    err = capsys.readouterr().err
    counts = {int(c) for c in re.findall(r"(\d+)/2642", err)}
    assert len(counts - {0, 2642}) >= 3, err[-500:]
    assert "src/s" in err and re.search(r"<\d\d:\d\d", err)  # rate and time left
    # pacing changes only how sources are grouped: the sums are those of one batch
    np.testing.assert_allclose(with_bar, turbobc.bc(A, engine="graphblas"), rtol=1e-13)
