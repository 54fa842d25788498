"""Single-source time of every GPU kernel and of ``auto`` (graphs: docs/benchmarks.md).

For each graph and kernel: the format and vectors are put on the device once (as
the single-source family does, ``turbobc.engines.gpu.single.DeviceSweep``), then each of a few sources is run once to warm up and
``--repeats`` times timed with CUDA events around the one persistent launch; the record
keeps the median per source and the median over sources, MTEPS = nnz / time, the kernel
``auto`` chose, and peak device memory (CuPy pool and cudaMemGetInfo) against 4m + 48n.

Usage: python bench/single_source.py [--graphs myc16 kron18 ...] [--out results.json]
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
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from cuda_timing import time_each_source  # noqa: E402
from records import environment, mteps  # noqa: E402

DEFAULT_GRAPHS = ["myc16", "kron18", "sw100000", "del16", "road340", "ego-Facebook", "rgg16",
                  "myc14", "kron16", "del12"]
TARGET_MS = {"myc16": 0.45, "kron18": 1.5, "sw100000": 0.35, "del16": 1.5, "road340": 6.0,
             "ego-Facebook": 0.25}
PAPER_MS = {"myc16": 0.98, "kron18": 11.2, "sw100000": 0.78, "del16": 4.24, "road340": 26.0,
            "ego-Facebook": 0.52}


def time_kernel(graph, kernel: str, sources: np.ndarray, repeats: int) -> dict:
    import cupy

    from turbobc.engines.gpu import single as _gpu
    from turbobc.engines.gpu.memory import single_bytes

    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    free_before = cupy.cuda.runtime.memGetInfo()[0]
    used_before = pool.used_bytes()
    run = _gpu.DeviceSweep(graph, sources, kernel, np.int32)
    cupy.cuda.Device().synchronize()
    device_delta = free_before - cupy.cuda.runtime.memGetInfo()[0]
    per_source, grid = time_each_source(run, graph, sources.size, repeats)
    ms = statistics.median(per_source)
    one = run.bc.get() / (1 + repeats)  # sum of δ over the sources, for a cross-check
    record = {
        "kernel": run.kernel, "requested": kernel, "grid": grid,
        "scf": None if run.stats is None else run.stats.scf,
        "ms_per_source": ms, "ms_per_source_each": per_source,
        "mteps": mteps(graph.nnz, ms / 1e3),
        "peak_pool_bytes": run.peak - used_before, "device_bytes_delta": int(device_delta),
        "model_bytes": 4 * graph.nnz + 48 * graph.n,
        "expected_bytes": single_bytes(graph.n, graph.nnz, run.kernel, np.int32,
                                       sources.size),
    }
    del run
    return record, one


def bench_graph(name: str, repeats: int, num_sources: int, blocks_per_sm) -> dict:
    import spmv
    from turbobc import tuning
    from turbobc._graph import Graph

    t0 = time.perf_counter()
    A = graphs.graph(name)
    gen_s = time.perf_counter() - t0
    graph = Graph(pattern=A, directed=False)
    rng = np.random.default_rng(0)
    deg = graph.out_degree
    candidates = np.flatnonzero(deg > 0)
    sources = np.unique(np.concatenate([[candidates[0]], rng.choice(candidates,
                                                                    num_sources - 1)]))
    stats = spmv.stats_host(A, directed=False)
    out = {"graph": name, "n": graph.n, "nnz": graph.nnz, "generate_s": gen_s,
           "scf": stats.scf, "mean_degree": stats.mean_degree, "max_degree": stats.max_degree,
           "sources": sources.tolist(), "repeats": repeats, "blocks_per_sm": blocks_per_sm,
           "selected": spmv.select(stats), "kernels": {}}
    reference = None
    for kernel in ("auto",) + spmv.KERNELS:
        with tuning(single_blocks_per_sm=blocks_per_sm):
            record, sums = time_kernel(graph, kernel, sources, repeats)
        if reference is None:
            reference = sums
        scale = max(1.0, float(np.abs(reference).max()))
        record["max_rel_diff_vs_auto"] = float(np.abs(sums - reference).max() / scale)
        out["kernels"][kernel] = record
        print(f"  {name:14s} {kernel:7s} -> {record['kernel']:7s} {record['ms_per_source']:9.3f} "
              f"ms/src {record['mteps']:9.1f} MTEPS  peak {record['peak_pool_bytes']/2**20:8.2f}"
              f" MiB (model {record['model_bytes']/2**20:8.2f})  grid {record['grid']}",
              flush=True)
    best = min(out["kernels"].values(), key=lambda r: r["ms_per_source"])
    out["best_kernel"], out["best_ms"] = best["kernel"], best["ms_per_source"]
    if name in TARGET_MS:
        out["target_ms"], out["paper_ms"] = TARGET_MS[name], PAPER_MS[name]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=DEFAULT_GRAPHS)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sources", type=int, default=4)
    parser.add_argument("--blocks-per-sm", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    record = {"benchmark": "single_source", "env": environment(), "graphs": []}
    print(json.dumps(record["env"]), flush=True)
    for name in args.graphs:
        record["graphs"].append(bench_graph(name, args.repeats, args.sources, args.blocks_per_sm))
        if args.out:
            args.out.write_text(json.dumps(record, indent=1))
    print("\ngraph           auto     ms/src   best kernel  best ms   target  paper")
    for g in record["graphs"]:
        auto = g["kernels"]["auto"]
        print(f"{g['graph']:14s} {auto['kernel']:7s} {auto['ms_per_source']:8.3f}   "
              f"{g['best_kernel']:7s} {g['best_ms']:9.3f}   {g.get('target_ms', '-')!s:6s} "
              f"{g.get('paper_ms', '-')}")


if __name__ == "__main__":
    main()
