"""Progress in sources with a time estimate: the bar appears after DELAY_SECONDS and is
redrawn every TICK_SECONDS; while it is shown the CPU engine sweeps a few sources first, so
that the bar has a rate early, and otherwise keeps its own batches (splitting them cost more
than the bar is worth: bench/progress_cost.py measures it)."""

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
from turbobc._progress import DELAY_SECONDS, FIRST_PACED_BATCH, paced_batches, source_progress


def _shown_bar(total):
    return tqdm(total=total, file=io.StringIO(), delay=0)


@pytest.mark.parametrize("progress", [Counter(), source_progress(10, False, "graphblas")],
                         ids=["not-a-bar", "disabled-bar"])
def test_without_a_shown_bar_batches_are_the_engine_steps(progress):
    assert list(paced_batches(10, 4, progress)) == [(0, 4), (4, 8), (8, 10)]


def test_a_shown_bar_gets_a_first_small_batch_then_the_engine_steps():
    """FIRST_PACED_BATCH sources first (the bar's first rate and time left), then the
    engine's own batches: a batch is never split further, whatever the bar."""
    bar = _shown_bar(5000)
    assert list(paced_batches(3000, 3000, bar)) == [(0, 8), (8, 3000)]
    assert list(paced_batches(5000, 2000, bar)) == [(0, 8), (8, 2008), (2008, 4008),
                                                    (4008, 5000)]
    assert FIRST_PACED_BATCH == 8


def test_a_tiny_run_or_a_narrow_engine_batch_is_not_split():
    bar = _shown_bar(100)
    assert list(paced_batches(16, 16, bar)) == [(0, 16)]
    assert list(paced_batches(20, 8, bar)) == [(0, 8), (8, 16), (16, 20)]


def test_the_bar_waits_before_it_appears():
    bar = source_progress(5, True, "graphblas")
    assert bar.delay == DELAY_SECONDS >= 1.0 and not bar.disable and bar.unit == "src"
    bar.close()


def test_a_shown_bar_is_redrawn_while_no_source_is_done(capsys, monkeypatch):
    """During a long batch the count stands still, the time elapsed does not: the bar is
    redrawn every TICK_SECONDS, and its thread ends with the bar."""
    import threading
    import time

    monkeypatch.setattr(_progress, "DELAY_SECONDS", 0.0)
    monkeypatch.setattr(_progress, "TICK_SECONDS", 0.05)
    earlier = set(threading.enumerate())  # other bars' threads end within their own tick
    bar = source_progress(10, True, "graphblas")
    bar.update(3)
    time.sleep(0.5)
    bar.close()
    time.sleep(0.2)
    err = capsys.readouterr().err
    assert err.count("3/10") >= 4, err  # drawn again and again with no update between
    assert not [t for t in set(threading.enumerate()) - earlier if t.name == "turbobc-progress"]


def test_bc_with_progress_moves_the_bar_within_one_engine_batch(capsys, monkeypatch):
    """road-minnesota (2,642 vertices) is one batch of the CPU engine; with the bar shown the
    bar has a rate and a time left before the end of the run, and the values are unchanged."""
    monkeypatch.setattr(_progress, "DELAY_SECONDS", 0.0)
    A = load("road-minnesota.mtx", directed=False)
    from turbobc.engines.graphblas import batch_size_for

    assert batch_size_for(A.shape[0], A.shape[0]) == A.shape[0]  # one batch without the bar
    with_bar = turbobc.bc(A, engine="graphblas", progress=True)
    err = capsys.readouterr().err
    counts = {int(c) for c in re.findall(r"(\d+)/2642", err)}
    assert counts - {0, 2642}, err[-500:]
    assert "src/s" in err and re.search(r"<\d\d:\d\d", err)  # rate and time left
    # the first batch changes only how sources are grouped: the sums are those of one batch
    np.testing.assert_allclose(with_bar, turbobc.bc(A, engine="graphblas"), rtol=1e-13)
