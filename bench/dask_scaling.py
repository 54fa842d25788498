"""Scale-out through Dask: the same BC with 1, 2, ... GPU workers, in one run.

For each graph and each worker count: a local cluster with one worker process per GPU
(``turbobc._dask.local_gpu_cluster``: dask-cuda's LocalCUDACluster when installed, else one
``CUDA_VISIBLE_DEVICES`` per worker), one untimed warm-up call through the cluster (kernels
compiled into CuPy's on-disk cache, which every worker then reads), then the timed call
``turbobc._api.run_bc(A, client=client, engine="gpu")`` end to end. The record holds the
seconds, the speedup over one worker, the Dask overhead (``first_chunk_seconds``: submit to
the first finished chunk; ``chunk_seconds``: each chunk's time on its worker, so wall time
minus the busiest worker's chunk time is what scheduling and transfers cost), the chunks and
the largest difference from the one-worker values.

Usage: python bench/dask_scaling.py [--graphs road-luxembourg-osm.mtx.gz kron20]
       [--workers 1 2] [--sources kron20:32768] [--chunk-sources kron20:4096] [--out DIR]
``--sources NAME:K`` sweeps the first K vertices of NAME only (sources=), for graphs whose
exact BC would take longer than the run allows; the record says so. ``--cpu-cores C --engine
graphblas`` starts a CPU LocalCluster instead, its workers sharing C cores (GraphBLAS threads
= C // workers; record ``dask_scaling_cpu``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from exact_gpu import LABELS, cached_graph  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

import turbobc  # noqa: E402
from turbobc._api import run_bc  # noqa: E402
from turbobc._dask import local_gpu_cluster  # noqa: E402


def _pairs(items: list[str]) -> dict[str, int]:
    return {name: int(value) for name, value in (item.rsplit(":", 1) for item in items)}


def cpu_cluster(workers: int, threads: int):
    """A LocalCluster of ``workers`` processes for the CPU engine, each with ``threads``
    GraphBLAS threads (so that the workers share the cores instead of each taking all)."""
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                        dashboard_address=":0", env={"OMP_NUM_THREADS": str(threads)})


def _set_graphblas_threads(threads: int) -> None:
    import graphblas as gb

    gb.ss.config["nthreads"] = threads


def run_graph(name: str, A, worker_counts: list[int], sources, chunk_sources,
              engine: str = "gpu", cpu_cores: int | None = None) -> list[dict]:
    from distributed import Client

    rows, reference = [], None
    for workers in worker_counts:
        threads = None if cpu_cores is None else max(1, cpu_cores // workers)
        cluster = (local_gpu_cluster(workers) if threads is None
                   else cpu_cluster(workers, threads))
        with cluster, Client(cluster) as client:
            client.wait_for_workers(workers)
            if threads is not None:
                client.run(_set_graphblas_threads, threads)
            warm = sources[:64] if sources is not None else np.arange(min(64, A.shape[0]))
            run_bc(A, sources=warm, client=client, engine=engine)  # untimed: compile, cache
            with turbobc.tuning(dask_chunk_sources=chunk_sources):
                began = time.perf_counter()
                result = run_bc(A, sources=sources, client=client, engine=engine)
                seconds = time.perf_counter() - began
        facts = result.facts
        if reference is None:
            reference, one_worker = result.values, seconds
        busiest = _busiest_worker_seconds(facts)
        rows.append({
            "graph": LABELS.get(name, name), "n": A.shape[0], "nnz": A.nnz,
            "sources": A.shape[0] if sources is None else len(sources),
            "exact": sources is None, "workers": workers, "seconds": seconds,
            "speedup": one_worker / seconds, "chunks": facts.get("chunks"),
            "chunk_sources": facts.get("chunk_sources"),
            "first_chunk_seconds": facts.get("first_chunk_seconds"),
            "chunk_seconds": facts.get("chunk_seconds"),
            "chunk_workers": facts.get("chunk_workers"),
            "busiest_worker_chunk_seconds": busiest,
            "overhead_seconds": seconds - busiest if busiest is not None else None,
            "worker_engines": facts.get("worker_engines"), "folded": facts.get("folded"),
            "cluster": "gpu" if threads is None else f"cpu, {threads} GraphBLAS threads per worker",
            "kernel": facts.get("kernel"), "batch": facts.get("batch"),
            "max_rel_diff_from_one_worker": float(
                np.max(np.abs(result.values - reference) / np.maximum(np.abs(reference),
                                                                      1e-300))),
        })
        print(f"{rows[-1]['graph']:22s} workers={workers} {seconds:8.2f} s  speedup "
              f"{rows[-1]['speedup']:.2f}  chunks {facts.get('chunks')}  first chunk "
              f"{facts.get('first_chunk_seconds'):.2f} s", flush=True)
    return rows


def _busiest_worker_seconds(facts: dict) -> float | None:
    """The most chunk seconds any one worker spent (the lower bound of the wall time that
    the balance allowed)."""
    seconds, workers = facts.get("chunk_seconds"), facts.get("chunk_workers")
    if not seconds or not workers:
        return None
    per_worker: dict = {}
    for worker, s in zip(workers, seconds):
        per_worker[worker] = per_worker.get(worker, 0.0) + s
    return max(per_worker.values())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+",
                        default=["road-luxembourg-osm.mtx.gz", "kron20"])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--sources", nargs="*", default=["kron20:32768"],
                        help="NAME:K sweeps the first K vertices of NAME only")
    parser.add_argument("--chunk-sources", nargs="*", default=["kron20:4096"],
                        help="NAME:C sets Tuning.dask_chunk_sources for NAME")
    parser.add_argument("--engine", default="gpu",
                        help="engine of the workers (graphblas: a smoke test without GPU)")
    parser.add_argument("--cpu-cores", type=int, default=None,
                        help="a CPU LocalCluster instead of one worker per GPU: these cores "
                             "shared by the workers (GraphBLAS threads = cores // workers); "
                             "use with --engine graphblas")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    subsets, chunks = _pairs(args.sources), _pairs(args.chunk_sources)
    rows = []
    for name in args.graphs:
        began = time.perf_counter()
        A = cached_graph(name)
        print(f"{name}: n={A.shape[0]} nnz={A.nnz} loaded in "
              f"{time.perf_counter() - began:.1f} s", flush=True)
        label = LABELS.get(name, name)
        k = subsets.get(label, subsets.get(name))
        sources = None if k is None else np.arange(min(k, A.shape[0]))
        rows += run_graph(name, A, args.workers, sources, chunks.get(label, chunks.get(name)),
                          args.engine, args.cpu_cores)
    kind = "dask_scaling" if args.cpu_cores is None else "dask_scaling_cpu"
    path = write_record(kind, {"rows": rows}, results=args.out)
    print(f"record: {path}")


if __name__ == "__main__":
    main()
