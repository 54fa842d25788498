"""Scale-out through Dask: the same BC with 1, 2, ... workers, in one run, beside the same call
without Dask.

For each graph: first the call without Dask on one device of this machine (GPU 0, or the
CPU's ``--cpu-cores`` threads), one untimed warm-up call then the timed one (``local_seconds``;
``local_start_seconds``: its wall seconds less its sweep seconds, i.e. validation, folding,
opening the engine and expanding the sums). Then for each worker count: a local cluster (one
worker process per GPU, ``turbobc._dask.local_gpu_cluster``; or with ``--engine cpu`` or
``graphblas`` a CPU LocalCluster whose workers share the cores), ``turbobc._dask.warm_up``
(every worker loads its compiled code: ``warm_up_seconds``; before it, ``cold_call``: a call
of 64 sources on the fresh workers, its start split), then the timed call
``turbobc._api.run_bc(A, client=client, engine=...)`` end to end, with a progress recorder
that notes when the first chunk finished.

Each row: the seconds, the speedup over one worker and over the call without Dask; the start
(``first_chunk_seconds``: from the call to the first finished chunk; ``start_seconds``: that
less the chunk's own sweep, to compare with ``local_start_seconds``; ``start_breakdown``:
validation and folding on the client, the problem's scatter, the workers' opening, the rest
(scheduling, the chunk's transfers)); ``problem_bytes`` (what each worker received); the balance
(each worker's chunk seconds, the busiest one's, ``balance`` = least / most); the chunks; the
facts of what was folded (folded, core_vertices, chain_folded, chains); the largest
difference from the one-worker values and from the values without Dask.

Usage: python bench/dask_scaling.py [--graphs road-luxembourg-osm.mtx.gz kron20]
       [--workers 1 2] [--sources kron20:32768] [--chunk-sources kron20:4096]
       [--engine gpu|cpu|graphblas] [--cpu-cores C] [--fold-chains auto|on|off] [--out DIR]
``--local-device D`` runs the call without Dask in a child process on GPU D while the clusters
of at most D workers run on GPUs 0 .. D − 1 (the row's ``local_device``), to save a device
call's time, for graphs given ``--sources`` (minutes); an exact call (seconds) runs in this
process before the clusters, since beside one it takes the host's threads from it (call 13:
road-luxembourg-osm's one worker 5.56 s, against 1.54 s alone). The record says where it
ran. ``--sources NAME:K`` sweeps the first K vertices of NAME only (sources=), for graphs whose
exact BC would take longer than the run allows; the record says so. ``--engine cpu`` (or
``graphblas``) starts a CPU LocalCluster instead, its workers sharing ``--cpu-cores`` cores
(default: all; threads = cores // workers); the record's ``cluster`` says which.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from exact_gpu import LABELS, cached_graph  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

import turbobc  # noqa: E402
from turbobc._api import run_bc  # noqa: E402
from turbobc._dask import local_gpu_cluster, warm_up  # noqa: E402

FOLDED_FACTS = ("folded", "core_vertices", "chain_folded", "chains")
FOLD_CHAINS = {"auto": "auto", "on": True, "off": False}


TRANSFER_COMPARE_MAX = 2**27
"""Graphs of more stored edges skip :func:`compare_transfer` (its old way sends int64
indices and float64 ones through the scheduler three times: kron24's 1.5 billion stored
edges, 24 GB a time)."""


def _pairs(items: list[str]) -> dict[str, int]:
    return {name: int(value) for name, value in (item.rsplit(":", 1) for item in items)}


def cpu_cluster(workers: int, threads: int):
    """A LocalCluster of ``workers`` processes for the CPU engines, each with ``threads``
    threads (numba's and GraphBLAS's), so that the workers share the cores instead of each
    taking all."""
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                        dashboard_address=":0",
                        env={"OMP_NUM_THREADS": str(threads),
                             "NUMBA_NUM_THREADS": str(threads)})


def _set_graphblas_threads(threads: int) -> None:
    import graphblas as gb

    gb.ss.config["nthreads"] = threads


def _set_local_threads(engine: str, threads: int) -> None:
    """This process's threads for the call without Dask: the CPU's ``threads``."""
    if engine == "cpu":
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    elif engine == "graphblas":
        _set_graphblas_threads(threads)


class FirstChunk:
    """A progress recorder: when (perf_counter) it was first advanced, by how many sources."""

    def __init__(self):
        self.at = None
        self.done = 0

    def update(self, n=1):
        if self.at is None:
            self.at = time.perf_counter()
        self.done += n


def run_local(A, sources, engine: str, threads: int | None) -> dict:
    """The call without Dask: one untimed warm-up call, then the timed one. An exact call
    (every source) warms up whole: its folded path compiles kernels a call of 64 given
    sources never reaches."""
    if threads is not None:
        _set_local_threads(engine, threads)
    run_bc(A, sources=None if sources is None else sources[:64], engine=engine)
    began = time.perf_counter()
    result = run_bc(A, sources=sources, engine=engine)
    seconds = time.perf_counter() - began
    if engine == "gpu":
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()  # the workers use this GPU too
    sweep = result.facts.get("sweep_seconds")
    return {"values": result.values, "seconds": seconds, "facts": result.facts,
            "start_seconds": None if sweep is None else seconds - sweep}


class LocalBeside:
    """The call without Dask in a child process on GPU ``device`` (``--local-device``), while
    the clusters of fewer workers than that device's index run on GPUs 0 .. device − 1: the
    same :func:`run_local`, its values and facts handed back through an .npz file."""

    def __init__(self, name: str, sources, device: int, engine: str, cores: int | None):
        self.path = Path(tempfile.mkdtemp()) / "local.npz"
        argv = [sys.executable, __file__, "--local-only", name, "--local-file", str(self.path),
                "--engine", engine]
        if sources is not None:
            argv += ["--local-sources", str(len(sources))]
        if cores is not None:
            argv += ["--cpu-cores", str(cores)]
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(device))
        self.device = device
        self.process = subprocess.Popen(argv, env=env)

    def result(self) -> dict:
        if self.process.wait() != 0:
            raise RuntimeError(f"the call without Dask on GPU {self.device} failed "
                               f"(exit {self.process.returncode})")
        saved = np.load(self.path, allow_pickle=True)
        local = saved["local"].item()
        local["values"] = saved["values"]
        local["device"] = self.device
        return local


def local_only(name: str, sources_count: int | None, path: Path, engine: str,
               cores: int | None) -> None:
    """``--local-only``: :func:`run_local` on this process's GPU (or cores), saved to
    ``path``."""
    A = cached_graph(name)
    sources = None if sources_count is None else np.arange(min(sources_count, A.shape[0]))
    local = run_local(A, sources, engine, cores)
    values = local.pop("values")
    local["facts"] = {key: local["facts"].get(key) for key in FOLDED_FACTS + ("sweep_seconds",)}
    np.savez(path, values=values, local=np.array(local, dtype=object))


def run_graph(name: str, A, worker_counts: list[int], sources, chunk_sources,
              engine: str = "gpu", cpu_cores: int | None = None,
              local_device: int | None = None) -> list[dict]:
    from distributed import Client

    beside = local = None
    # an exact call (seconds) runs here first: beside a one-worker cluster it took its host's
    # threads (call 13, road-luxembourg-osm: one worker 5.56 s against 1.54 s alone)
    if local_device is None or sources is None:
        local = _said(name, run_local(A, sources, engine, cpu_cores))
    else:
        beside = LocalBeside(name, sources, local_device, engine, cpu_cores)
    rows, reference = [], None
    for workers in worker_counts:
        if beside is not None and workers > local_device:  # its GPU is needed now
            local, beside = _said(name, beside.result()), None
        threads = None if cpu_cores is None else max(1, cpu_cores // workers)
        cluster = (local_gpu_cluster(workers) if threads is None
                   else cpu_cluster(workers, threads))
        with cluster, Client(cluster) as client:
            client.wait_for_workers(workers)
            if engine == "graphblas":
                client.run(_set_graphblas_threads, threads)
            # on the fresh workers: a call of 64 sources, its start split (compile caches
            # read in its chunk), then every worker warmed, then the timed call
            warm = sources[:64] if sources is not None else np.arange(min(64, A.shape[0]))
            cold = _cold_call(client, A, warm, engine)
            began = time.perf_counter()
            warmed = warm_up(client, engine)
            warm_seconds = time.perf_counter() - began
            recorder = FirstChunk()
            with turbobc.tuning(dask_chunk_sources=chunk_sources):
                began = time.perf_counter()
                result = run_bc(A, sources=sources, client=client, engine=engine,
                                progress=recorder)
                seconds = time.perf_counter() - began
            # (past TRANSFER_COMPARE_MAX stored edges the old way alone would take minutes)
            transfer = (compare_transfer(client, A) if A.nnz <= TRANSFER_COMPARE_MAX
                        else None)
        if reference is None:
            reference, one_worker = result.values, seconds
        print(f"{LABELS.get(name, name):22s} workers={workers} {seconds:8.2f} s  speedup "
              f"{one_worker / seconds:.2f}  first chunk {recorder.at - began:.2f} s",
              flush=True)
        rows.append(dict(workers=workers, result=result, seconds=seconds,
                         one_worker=one_worker, reference=reference,
                         first_chunk=recorder.at - began, warm_seconds=warm_seconds,
                         warmed=warmed, threads=threads, transfer=transfer, cold=cold))
    if beside is not None:
        local = _said(name, beside.result())
    return [_finished_row(name, A, sources, local, **row) for row in rows]


def _said(name: str, local: dict) -> dict:
    where = f" (GPU {local['device']}, beside the clusters)" if "device" in local else ""
    print(f"{LABELS.get(name, name):22s} without Dask {local['seconds']:8.2f} s  start "
          f"{local['start_seconds'] or float('nan'):.2f} s{where}", flush=True)
    return local


def _finished_row(name, A, sources, local, *, workers, result, seconds, one_worker,
                  reference, first_chunk, warm_seconds, warmed, threads, transfer,
                  cold) -> dict:
    """A worker count's row once the call without Dask is known."""
    row = _row(name, A, sources, workers, seconds, one_worker, result, reference, local,
               first_chunk, warm_seconds, warmed, threads)
    row.update(graph_transfer=transfer, cold_call=cold, local_device=local.get("device", 0))
    print(f"{row['graph']:22s} workers={workers} {seconds:8.2f} s  speedup "
          f"{row['speedup']:.2f} (over no Dask {row['speedup_over_local']:.2f})  chunks "
          f"{result.facts.get('chunks')}  first chunk {row['first_chunk_seconds']:.2f} s, "
          f"start {row['start_seconds']:.2f} s ({row['start_breakdown']})  balance "
          f"{row['balance']:.2f}", flush=True)
    return row


def _cold_call(client, A, sources, engine) -> dict:
    """A call of ``sources`` (64) on workers that have run nothing yet: the seconds, from
    the call to its first finished chunk, and how the workers' start split (their engine's
    compiled code read from the caches in the chunk's sweep)."""
    recorder = FirstChunk()
    began = time.perf_counter()
    result = run_bc(A, sources=sources, client=client, engine=engine, progress=recorder)
    seconds = time.perf_counter() - began
    start = result.facts.get("start_seconds", {})
    return {"sources": len(sources), "seconds": seconds,
            "first_chunk_seconds": recorder.at - began,
            "dask_start_seconds": {k: round(v, 4) for k, v in start.items()}}


def compare_transfer(client, A, repeats: int = 3) -> dict:
    """The graph alone scattered to every worker as a call scatters it now (in a
    :class:`~turbobc.engines.protocol.Problem`, compact, straight from the client,
    ``turbobc._dask``) and as it was scattered before (its CSR
    arrays as they are, int64 indices and float64 ones included, through the scheduler):
    bytes and the median seconds of ``repeats``."""
    import pickle
    import statistics
    import types

    from turbobc._dask import _scatter
    from turbobc._graph import Graph
    from turbobc.engines.protocol import Problem

    graph = Graph(pattern=A, directed=False)
    before = types.SimpleNamespace(pattern=A, directed=False, lengths=None)
    out = {}
    for label, data, scatter in (
            ("now", Problem(graph), lambda d: _scatter(client, d)),
            ("before", before, lambda d: client.scatter(d, broadcast=True, hash=False,
                                                        direct=False))):
        sizes: list = []
        head = pickle.dumps(data, protocol=5, buffer_callback=lambda b: sizes.append(
            b.raw().nbytes))
        seconds = []
        for _ in range(repeats):
            began = time.perf_counter()
            future = scatter(data)
            seconds.append(time.perf_counter() - began)
            future.release()
            del future
            time.sleep(0.2)  # the workers let the copies go
        out[label] = {"bytes": len(head) + sum(sizes), "seconds": statistics.median(seconds)}
    return out


def _row(name, A, sources, workers, seconds, one_worker, result, reference, local,
         first_chunk, warm_seconds, warmed, threads) -> dict:
    facts = result.facts
    start = facts.get("start_seconds", {})
    per_worker = _worker_chunk_seconds(facts)
    busiest = max(per_worker.values()) if per_worker else None
    sweep = start.get("first_chunk_sweep", 0.0)
    # the caller's clock from the call to the first finished chunk, split: validation and
    # folding on the client (until the scatter), what the client builds for every worker
    # (ahead), the scatter, the workers' opening, the rest (scheduling, the chunk's
    # transfers), the chunk's own sweep
    client_side = first_chunk - start.get("first_chunk", first_chunk)
    breakdown = {"client": client_side, "ahead": start.get("ahead"),
                 "scatter": start.get("scatter"), "open": start.get("open"),
                 "scheduling": (start.get("first_chunk", 0.0) - start.get("ahead", 0.0)
                                - start.get("scatter", 0.0) - start.get("open", 0.0) - sweep),
                 "first_chunk_sweep": sweep}
    local_start = local["start_seconds"]
    return {
        "graph": LABELS.get(name, name), "n": A.shape[0], "nnz": A.nnz,
        "sources": A.shape[0] if sources is None else len(sources),
        "exact": sources is None, "workers": workers, "seconds": seconds,
        "speedup": one_worker / seconds, "local_seconds": local["seconds"],
        "speedup_over_local": local["seconds"] / seconds,
        "chunks": facts.get("chunks"), "chunk_sources": facts.get("chunk_sources"),
        "first_chunk_seconds": first_chunk, "first_chunk_sweep_seconds": sweep,
        "start_seconds": first_chunk - sweep, "local_start_seconds": local_start,
        "start_over_local_seconds": (None if local_start is None
                                     else first_chunk - sweep - local_start),
        "start_breakdown": {k: None if v is None else round(v, 4)
                            for k, v in breakdown.items()},
        "dask_start_seconds": start, "problem_bytes": facts.get("problem_bytes"),
        "graph_via": facts.get("graph_via"),
        "chunk_seconds": facts.get("chunk_seconds"),
        "chunk_workers": facts.get("chunk_workers"),
        "chunk_order_seconds": facts.get("chunk_order_seconds"),
        "worker_chunk_seconds": per_worker, "busiest_worker_chunk_seconds": busiest,
        "balance": min(per_worker.values()) / busiest if busiest else None,
        "overhead_seconds": seconds - busiest if busiest is not None else None,
        "worker_engines": facts.get("worker_engines"),
        **{key: facts.get(key) for key in FOLDED_FACTS},
        "local_facts": {key: local["facts"].get(key) for key in FOLDED_FACTS},
        "warm_up_seconds": warm_seconds,
        "warm_up": {w: round(v["seconds"], 3) for w, v in warmed.items()},
        "cluster": "gpu" if threads is None else f"cpu, {threads} threads per worker",
        "kernel": facts.get("kernel"), "batch": facts.get("batch"),
        # the last chunk's worker: its device pool's peak over the graph's upload, the memory
        # model of its batch and the index type it swept in
        "peak_pool_bytes": facts.get("peak_pool_bytes"), "model_bytes": facts.get("model_bytes"),
        "index_dtype": facts.get("index_dtype"),
        "max_rel_diff_from_one_worker": _max_rel_diff(result.values, reference),
        "max_rel_diff_from_local": _max_rel_diff(result.values, local["values"]),
    }


def _max_rel_diff(values, reference) -> float:
    return float(np.max(np.abs(values - reference) / np.maximum(np.abs(reference), 1e-300),
                        initial=0.0))


def _worker_chunk_seconds(facts: dict) -> dict:
    """Per worker, the chunk seconds it spent (the busiest one's is the lower bound of the
    wall time that the balance allowed)."""
    seconds, workers = facts.get("chunk_seconds"), facts.get("chunk_workers")
    per_worker: dict = {}
    for worker, s in zip(workers or [], seconds or []):
        per_worker[worker] = per_worker.get(worker, 0.0) + s
    return per_worker


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+",
                        default=["road-luxembourg-osm.mtx.gz", "kron20"])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--sources", nargs="*", default=["kron20:32768"],
                        help="NAME:K sweeps the first K vertices of NAME only")
    parser.add_argument("--chunk-sources", nargs="*", default=["kron20:4096"],
                        help="NAME:C sets Tuning.dask_chunk_sources for NAME")
    parser.add_argument("--engine", default="gpu", choices=["gpu", "cpu", "graphblas"],
                        help="engine of the workers; cpu or graphblas: a CPU LocalCluster")
    parser.add_argument("--cpu-cores", type=int, default=None,
                        help="cores the CPU cluster's workers share (threads = cores // "
                             "workers; default: all of them)")
    parser.add_argument("--fold-chains", default="auto", choices=sorted(FOLD_CHAINS),
                        help="Tuning.fold_chains (auto: on the GPU engine, large cores)")
    parser.add_argument("--local-device", type=int, default=None,
                        help="run the call without Dask in a child process on this GPU, "
                             "beside the clusters of fewer workers (GPU engine)")
    parser.add_argument("--local-only", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--local-sources", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--local-file", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.local_only is not None:  # the child of LocalBeside
        local_only(args.local_only, args.local_sources, args.local_file, args.engine,
                   args.cpu_cores)
        return
    cores = args.cpu_cores
    if args.engine != "gpu" and cores is None:
        cores = os.cpu_count()
    subsets, chunks = _pairs(args.sources), _pairs(args.chunk_sources)
    rows, path = [], None
    with turbobc.tuning(fold_chains=FOLD_CHAINS[args.fold_chains]):
        for name in args.graphs:
            began = time.perf_counter()
            A = cached_graph(name)
            print(f"{name}: n={A.shape[0]} nnz={A.nnz} loaded in "
                  f"{time.perf_counter() - began:.1f} s", flush=True)
            label = LABELS.get(name, name)
            k = subsets.get(label, subsets.get(name))
            sources = None if k is None else np.arange(min(k, A.shape[0]))
            rows += run_graph(name, A, args.workers, sources,
                              chunks.get(label, chunks.get(name)), args.engine, cores,
                              args.local_device)
            # after each graph, so that a run cut by its time limit keeps the graphs it did
            path = write_record("dask_scaling", {
                "cluster": "gpu" if cores is None else "cpu", "engine": args.engine,
                "cpu_cores": cores, "fold_chains": args.fold_chains, "rows": rows},
                results=args.out, path=path)
    print(f"record: {path}")


if __name__ == "__main__":
    main()
