"""Host time of one single-source launch, by part (issue 18: single-source rows of small graphs
got slower by a constant per source after the entry points took structs).

For each graph and kernel: the wall time of ``DeviceSweep.launch`` on the host (no
synchronization: what the host spends before the kernel is queued), and of its parts: the
kernel lookup (``get_kernel``), the occupancy query (``resident_blocks``) and building the three
view records (``spmv._views.record``); then the CUDA-event time of a launch, as
bench/single_source.py measures it.

Usage: python bench/launch_overhead.py [--graphs ego-Facebook sw100000] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(Path(__file__).resolve().parents[1]))  # PYTHONPATH (an older tree) first

import graphs  # noqa: E402


def _host_us(fn, repeats=300) -> float:
    fn()
    began = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - began) / repeats * 1e6


def measure(name: str, kernel: str) -> dict:
    import cupy

    from turbobc._validation import validate

    try:
        from turbobc.engines.gpu import single
    except ImportError:  # an older tree (BEFORE_DIR): the launch and its event time only
        from turbobc import _gpu as single
    A = graphs.graph(name)
    graph = validate(A, sources=None, k=None, seed=None, normalized=True, endpoints=False,
                     directed=None, engine="gpu", kernel=kernel, progress=False).graph
    run = getattr(single, "DeviceSweep", None) or single._DeviceSweep  # (an older tree)
    run = run(graph, np.arange(4), kernel, np.int32)
    launch = lambda: run.launch(graph, 0, 1, False)  # noqa: E731
    out = {"graph": name, "kernel": run.kernel, "launch_host_us": _host_us(launch, 200)}
    try:
        out.update(_parts(run, graph))
    except ImportError:
        pass
    cupy.cuda.Device().synchronize()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(50):
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e3)
    out["event_us_median"] = statistics.median(times)
    print(json.dumps(out), flush=True)
    return out


def _parts(run, graph) -> dict:
    """Host microseconds of the parts of a launch (this tree's launcher)."""
    from spmv import _launch
    from spmv._module import get_kernel
    from spmv._views import SINGLE_GRAPH, SINGLE_RUN, SINGLE_WORK, record

    cuda_name = {"sccsc": ("sccsc.cu", "bc_sccsc"), "sccooc": ("sccooc.cu", "bc_sccooc"),
                 "vecsc": ("vecsc.cu", "bc_vecsc")}[run.kernel]
    k = get_kernel(cuda_name[0], f"{cuda_name[1]}<int, double, int>")
    views = lambda: (record(SINGLE_GRAPH, a=run.a, b=run.b, unit_col=None, unit_start=None,  # noqa: E731
                            n=graph.n, m=graph.nnz, nunits=0, directed=0),
                     record(SINGLE_WORK, S=run.S, sigma=run.sigma, t=run.t, shifts=run.shifts,
                            ctl=run.ctl),
                     record(SINGLE_RUN, sources=run.sources[0:1], nsrc=1, bc=run.bc, tau=None,
                            omega=None, endpoints=0))
    return {"get_kernel_us": _host_us(lambda: get_kernel(cuda_name[0],
                                                         f"{cuda_name[1]}<int, double, int>")),
            "resident_blocks_us": _host_us(lambda: _launch.resident_blocks(k, _launch.BLOCK,
                                                                           None)),
            "three_records_us": _host_us(views)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=["ego-Facebook", "sw100000"])
    parser.add_argument("--kernels", nargs="+", default=["sccooc", "sccsc"])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    rows = [measure(g, k) for g in args.graphs for k in args.kernels]
    if args.out:
        args.out.write_text(json.dumps({"benchmark": "launch_overhead",
                                        "utc": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
                                        "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
