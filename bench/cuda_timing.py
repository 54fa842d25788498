"""Timing one source at a time with CUDA events (shared by the single-source and memory
benchmarks)."""

from __future__ import annotations

import statistics


def time_each_source(run, graph, num_sources: int, repeats: int) -> tuple[list[float], int]:
    """Milliseconds per source of a prepared ``turbobc.engines.gpu.single.DeviceSweep``.

    Each source is launched once to warm up (compiling the kernel on first use), then
    ``repeats`` times between two CUDA events; the median of those is its time.

    Returns
    -------
    per_source : list of float
        Median milliseconds of each of the first ``num_sources`` sources of ``run``.
    grid : int
        The grid size of the last launch.
    """
    import cupy

    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    per_source, grid = [], 0
    for i in range(num_sources):
        grid = run.launch(graph, i, i + 1, False)  # warm-up
        times = []
        for _ in range(repeats):
            start.record()
            run.launch(graph, i, i + 1, False)
            stop.record()
            stop.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, stop))
        per_source.append(statistics.median(times))
    return per_source, grid
