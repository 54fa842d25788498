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
from turbobc._progress import DELAY_SECONDS, paced_batches, source_progress


def _shown_bar(total):
    return tqdm(total=total, file=io.StringIO(), delay=0)


@pytest.mark.parametrize("progress", [Counter(), source_progress(10, False, "graphblas"),
                                      _shown_bar(10)],
                         ids=["not-a-bar", "disabled-bar", "shown-bar"])
def test_batches_are_the_engine_steps_whatever_the_bar(progress):
    """A shown bar changes no batch: splitting them cost more than the bar is worth
    (turbobc/_progress.py; bench/progress_cost.py)."""
    assert list(paced_batches(10, 4, progress)) == [(0, 4), (4, 8), (8, 10)]
    assert list(paced_batches(3000, 3000, progress)) == [(0, 3000)]


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


@pytest.mark.slow
def test_bc_with_progress_in_one_engine_batch(capsys, monkeypatch):
    """road-minnesota (2,642 vertices) is one batch of the CPU engine, with the bar as
    without it: the bar is redrawn while the batch runs (the time elapsed), reaches the total
    at its end with the rate, and the values are those of the run without a bar."""
    monkeypatch.setattr(_progress, "DELAY_SECONDS", 0.0)
    monkeypatch.setattr(_progress, "TICK_SECONDS", 0.05)
    A = load("road-minnesota.mtx", directed=False)
    from turbobc.engines.graphblas import batch_size_for

    assert batch_size_for(A.shape[0], A.shape[0]) == A.shape[0]  # one batch
    with_bar = turbobc.run_bc(A, engine="graphblas", progress=True)
    err = capsys.readouterr().err
    assert len(re.findall(r"\d+/2642 \[", err)) >= 3, err[-500:]  # redrawn during the run
    assert "2642/2642" in err and "src/s" in err
    without = turbobc.run_bc(A, engine="graphblas")
    assert with_bar.facts["batches"] == without.facts["batches"]
    np.testing.assert_array_equal(with_bar.values, without.values)
