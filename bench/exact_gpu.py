"""Exact BC on the GPU (the batched engine) on the issue-4 graphs, against the memory floor.

For each graph: compile and warm up on a few sources, then time ``turbobc.bc(A,
engine="gpu")`` end to end (validation on the host included) and the engine's own device
loop (the run's facts, ``turbobc._api.run_bc(...).facts["sweep_seconds"]``); a run shorter than 2 s is repeated
and the median of 5 reported (with every sample in ``seconds_all``). GTEPS = n · nnz / t
(bench/records.py). The memory floor is 16 bytes of traffic per (source, stored edge) at the
device's copy bandwidth, measured in the same run with a large device-to-device copy
(bytes read + bytes written per second); ``floor_fraction`` = floor / sweep seconds.

When a probe (the first 8192 sources in sweep order) predicts more than ``--max-seconds`` for the
exact run, the graph runs on ``k`` sources only and the record says ``"extrapolated": true``
with the seconds scaled by n / k: such a row is an estimate, not an exact run.

Edge BC beside vertex BC (issue 13, target: edge BC at most :data:`EDGE_TARGET_RATIO` times the
vertex BC time): on every graph, the same sources (all of them up to ``--edge-sources``, else
the first ``--edge-sources`` in sweep order, as the probe) are swept once for vertex sums and
once with the edge sums (``Problem(edges=True)``, the EdgeSums kernels), through the engine
protocol so that both take the same path (no tree folding); the row gets ``edge_*`` fields:
device-loop and wall seconds of both, their ratio, and the exact edge BC seconds it predicts.
``--no-edges`` skips it. ``--check`` graphs also compare GPU edge BC with the graphblas engine
(every 8th source).

Weighted BC beside unweighted BC (issue 13, target: weighted BC at most
:data:`WEIGHTED_TARGET_RATIO` times the unweighted time): ``--weighted GRAPH:K ...`` gives the
graph's edges integer lengths uniform in 1..100 (both directions of an edge alike, seed 0),
sweeps the same K random sources once unweighted and once weighted with each DAG sweep of
``--weighted-paths`` (turbobc/engines/gpu/layers.py ``PATHS``; default the kernels) through
the engine protocol (no tree folding), each after an untimed warm-up on the same path, and
records the wall and engine seconds, the ratios, and the largest relative difference of the
weighted sums from the graphblas engine on a few of the sources (record ``weighted_gpu``; no
exact runs). Beside it, NetworKit's weighted Betweenness on all threads (issue 13: turbobc at
least :data:`WEIGHTED_NETWORKIT_TARGET` times faster), both as exact-run estimates: turbobc's
seconds · n / K, NetworKit's per-source cost from ``EstimateBetweenness`` (``networkit_weighted``;
``--networkit-samples``), calibrated by its exact run on graphs below 5,000 vertices.

The two GPU families for unweighted BC (issue 12: a work-efficient traversal for deep graphs):
``--families GRAPH:K ...`` times the lanes family (``Tuning.gpu_family="lanes"``) and the
layers family on hops (``"layers"``, the layer kernels with every length 1; ``queue_*`` in the
record) on the same K
sources, then exact BC with each when its estimate is within ``--max-seconds`` (record
``gpu_families``).

Usage: python bench/exact_gpu.py [--graphs ego-Facebook myc14 ...] [--out DIR] [--no-edges]
       python bench/exact_gpu.py --weighted ego-Facebook:512 del16:256
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from records import RESULTS, gteps, write_record  # noqa: E402

DEFAULT_GRAPHS = ["ego-Facebook", "myc14", "del16", "delaunay_n16.mtx.gz",
                  "road-luxembourg-osm.mtx.gz", "kron18", "myc16"]
LABELS = {"delaunay_n16.mtx.gz": "delaunay_n16", "road-luxembourg-osm.mtx.gz":
          "road-luxembourg-osm"}
TARGET_S = {"ego-Facebook": 0.05, "myc14": 0.1, "delaunay_n16": 5.0, "road-luxembourg-osm": 15.0,
            "del16": 10.0, "kron18": 60.0}
FLOOR_TARGET = {"kron18": 3.0, "myc16": 3.0}  # within 3x of the memory floor
FLOOR_BYTES_PER_PAIR = 16
SHORT_RUN_S, SHORT_REPEATS = 2.0, 5  # exact runs shorter than this report the median of 5
EDGE_TARGET_RATIO = 1.3  # issue 13: edge BC within 1.3x the time of vertex BC
EDGE_SOURCES = 8192      # sources of the edge/vertex comparison (all of them on smaller graphs)
WEIGHTED_TARGET_RATIO = 3.0  # issue 13: weighted BC within 3x the time of unweighted BC
WEIGHTED_CHECK_SOURCES = 4   # sources of the weighted check against the graphblas engine
WEIGHTED_NETWORKIT_TARGET = 30.0  # issue 13: weighted BC at least 30x NetworKit's (all threads)


def copy_bandwidth(nbytes: int = 4 * 2**30, repeats: int = 5) -> float:
    """Device-to-device copy bandwidth in bytes/s (read + write), best of ``repeats``."""
    import cupy

    src = cupy.ones(nbytes // 8, dtype=np.float64)
    dst = cupy.empty_like(src)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    best = float("inf")
    for _ in range(repeats + 1):
        start.record()
        cupy.copyto(dst, src)
        stop.record()
        stop.synchronize()
        best = min(best, cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    del src, dst
    cupy.get_default_memory_pool().free_all_blocks()
    return 2 * nbytes / best


def run_once(A, kernel: str, sources=None, in_sweep_order: bool = False) -> tuple[float, dict]:
    """Seconds of one ``turbobc.bc`` call and the engine's facts. ``in_sweep_order``: put
    the sources in locality order even when they are few (probes of an exact run)."""
    import contextlib

    import cupy

    import turbobc
    from turbobc._api import run_bc

    knobs = turbobc.tuning(order_min_share=0.0) if in_sweep_order else contextlib.nullcontext()
    with knobs:
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        _, facts = run_bc(A, engine="gpu", kernel=kernel, sources=sources)
        cupy.cuda.Device().synchronize()
        return time.perf_counter() - t0, facts


def run_sums(A, sources, edges: bool, kernel: str = "auto") -> tuple[float, dict]:
    """Wall seconds of one GPU engine run over ``sources`` (in sweep order), with the edge
    sums or without, and its facts (``sweep_seconds``: the device loop). Through the engine
    protocol, so that vertex and edge BC take the same path."""
    import cupy

    import turbobc
    from turbobc._graph import Graph
    from turbobc._run import run_schedule
    from turbobc.engines import engine_named
    from turbobc.engines.protocol import Problem

    problem = Problem(Graph(pattern=A, directed=False), kernel=kernel, edges=edges)
    with turbobc.tuning(order_min_share=0.0):  # the exact run's order, few sources or not
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        _, facts = run_schedule(problem, engine_named("gpu"), [np.asarray(sources)])
        cupy.cuda.Device().synchronize()
        return time.perf_counter() - t0, facts


def bench_edges(A, rank: np.ndarray, num_sources: int = EDGE_SOURCES,
                kernel: str = "auto") -> dict:
    """Vertex and edge BC on the same sources (all when n <= ``num_sources``, else the first
    ``num_sources`` in sweep order): seconds, device-loop seconds, the edge / vertex ratio of
    the device loops against :data:`EDGE_TARGET_RATIO`, and the exact edge BC seconds that
    predicts. Short runs: median of :data:`SHORT_REPEATS`."""
    n = A.shape[0]
    k = min(n, num_sources)
    sources = np.sort(np.argsort(rank)[:k])
    out = {"edge_sources": k}
    for label, edges in (("vertex", False), ("edge", True)):
        run_sums(A, sources[:64], edges, kernel)  # compile, warm
        runs = [run_sums(A, sources, edges, kernel)]
        if runs[0][0] < SHORT_RUN_S:
            runs += [run_sums(A, sources, edges, kernel) for _ in range(SHORT_REPEATS - 1)]
        runs.sort(key=lambda item: item[1]["sweep_seconds"])
        seconds, facts = runs[len(runs) // 2]
        out[f"edge_{label}_seconds"] = seconds
        out[f"edge_{label}_sweep_seconds"] = facts["sweep_seconds"]
        out[f"edge_{label}_sweep_all"] = [item[1]["sweep_seconds"] for item in runs]
        out[f"edge_{label}_kernel"] = facts["kernel"]
        out[f"edge_{label}_batch"] = facts["batch"]
        out[f"edge_{label}_peak_pool_bytes"] = facts["peak_pool_bytes"]
    ratio = out["edge_edge_sweep_seconds"] / out["edge_vertex_sweep_seconds"]
    out.update(edge_ratio=ratio,
               edge_wall_ratio=out["edge_edge_seconds"] / out["edge_vertex_seconds"],
               edge_predicted_exact_sweep_seconds=out["edge_edge_sweep_seconds"] * n / k,
               edge_target_ratio=EDGE_TARGET_RATIO,
               edge_target_met=bool(ratio <= EDGE_TARGET_RATIO))
    return out


def bench_graph(name: str, kernel: str, bandwidth: float, max_seconds: float,
                edges: bool = False, edge_sources: int = EDGE_SOURCES) -> dict:
    import cupy

    label = LABELS.get(name, name)
    t0 = time.perf_counter()
    A = graphs.graph(name)
    n, nnz = A.shape[0], A.nnz
    record = {"graph": label, "n": n, "nnz": nnz, "generate_s": time.perf_counter() - t0,
              "kernel_requested": kernel}
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    free0 = cupy.cuda.runtime.memGetInfo()[0]
    # warm-up: compile, and a probe of one batch of random sources to predict the exact time
    run_once(A, kernel, sources=list(range(min(n, 64))))
    from turbobc.engines.gpu.lanes_order import locality_order
    from turbobc._graph import Graph

    # the probe: the first sources of the order the exact run sweeps them in
    rank, _, _ = locality_order(Graph(pattern=A, directed=False))  # bench graphs: canonical
    probe_k = min(n, 8192)
    probe = np.sort(np.argsort(rank)[:probe_k]).tolist()
    rng = np.random.default_rng(0)
    probe_s, probe_run = run_once(A, kernel, sources=probe, in_sweep_order=True)
    predicted = probe_run["sweep_seconds"] * n / probe_k
    record.update(probe_sources=probe_k, probe_sweep_seconds=probe_run["sweep_seconds"],
                  predicted_exact_seconds=predicted)
    if probe_k == n or predicted <= max_seconds:
        seconds, run = run_once(A, kernel)  # exact (warm, when the probe already was)
        k = n
        if seconds < SHORT_RUN_S:
            # short runs: a median, host time included (docs/benchmarks.md#units-and-timing)
            runs = [(seconds, run)] + [run_once(A, kernel) for _ in range(SHORT_REPEATS - 1)]
            runs.sort(key=lambda item: item[0])
            seconds, run = runs[len(runs) // 2]
            record["repeats"] = SHORT_REPEATS
            record["seconds_all"] = [item[0] for item in runs]
    else:
        k = int(min(n, max(probe_k, n * max_seconds / predicted)))
        sources = np.sort(rng.choice(n, k, replace=False)).tolist()
        seconds, run = run_once(A, kernel, sources=sources)
    free1 = cupy.cuda.runtime.memGetInfo()[0]
    scale = n / k
    sweep = run["sweep_seconds"] * scale
    total = seconds * scale
    floor = FLOOR_BYTES_PER_PAIR * n * nnz / bandwidth
    record.update(
        sources=k, extrapolated=k < n, seconds=total, sweep_seconds=sweep,
        gteps=gteps(n, nnz, total), sweep_gteps=gteps(n, nnz, sweep),
        batch=run["batch"], batches=run["batches"], depth=run["depth"], kernel=run["kernel"],
        order=run.get("order"), order_seconds=run.get("order_seconds"),
        level_dtype=run["level_dtype"], reruns=run["reruns"], grid=run["grid"],
        peak_pool_bytes=run["peak_pool_bytes"], model_bytes=run["model_bytes"],
        device_bytes_used=int(free0 - free1), floor_seconds=floor,
        floor_fraction=floor / sweep, times_floor=sweep / floor,
        folded=run.get("folded"), chain_folded=run.get("chain_folded"),
        slot_weight_seconds=run.get("slot_weight_seconds"))
    if label in TARGET_S:
        record["target_seconds"] = TARGET_S[label]
        record["target_met"] = bool(total <= TARGET_S[label]) and k == n
    if label in FLOOR_TARGET:
        record["floor_target_times"] = FLOOR_TARGET[label]
        record["floor_target_met"] = bool(sweep <= FLOOR_TARGET[label] * floor) and k == n
    if edges:
        record.update(bench_edges(A, rank, edge_sources, kernel=kernel))
    return record


def bench_sampled(name: str, k: int, repeats: int = 3) -> dict:
    """``turbobc.bc(A, engine="gpu", k=k, seed=1)`` end to end (median of ``repeats``): the
    k sampled sources go through the batched engine, ceil(k / B) sweeps."""
    from turbobc._api import run_bc

    A = graphs.graph(name)
    n, nnz = A.shape[0], A.nnz
    run_bc(A, engine="gpu", k=min(k, 64), seed=1)  # compile, warm
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        _, facts = run_bc(A, engine="gpu", k=k, seed=1)
        samples.append((time.perf_counter() - t0, facts))
    samples.sort(key=lambda item: item[0])
    seconds, run = samples[len(samples) // 2]
    return {"graph": LABELS.get(name, name), "n": n, "nnz": nnz, "k": k, "seconds": seconds,
            "seconds_all": [item[0] for item in samples], "sweep_seconds": run["sweep_seconds"],
            "batch": run["batch"], "batches": run["batches"], "depth": run["depth"],
            "kernel": run["kernel"], "order": run.get("order"),
            "seconds_per_source": seconds / k,
            # exact BC sweeps every source: the sampled run's seconds scaled by n / k (an
            # estimate; the sampled sources' depths stand for all)
            "exact_estimate_seconds": seconds * n / k}


def with_random_lengths(A, seed: int = 0, high: int = 100):
    """The symmetric pattern of ``A`` (no diagonal) with integer lengths uniform in 1..high,
    the two directions of an edge alike."""
    import scipy.sparse as sp

    upper = sp.triu(sp.csr_array(A), k=1).tocoo()
    lengths = np.random.default_rng(seed).integers(1, high + 1, upper.nnz).astype(np.float64)
    rows = np.concatenate([upper.row, upper.col])
    cols = np.concatenate([upper.col, upper.row])
    L = sp.csr_array((np.concatenate([lengths, lengths]), (rows, cols)), shape=A.shape)
    L.sum_duplicates()
    L.sort_indices()
    return L


def bench_weighted(name: str, num_sources: int, seed: int = 0,
                   networkit_samples: int = 1024, paths=("kernels",),
                   exact: bool = False) -> dict:
    """Weighted (lengths 1..100) against unweighted BC on the same ``num_sources`` random
    sources of graph ``name``, both through the GPU engine's protocol (module docstring),
    the weighted run with each DAG sweep of ``paths``."""
    import dataclasses

    import cupy

    from turbobc._run import run_schedule
    from turbobc.engines import engine_named
    from turbobc._validation import _weighted_graph
    from turbobc._tuning import current as current_tuning, tuning
    from turbobc.engines.protocol import Problem

    L = with_random_lengths(cached_graph(name), seed)
    weighted = _weighted_graph(L, False)
    unweighted = dataclasses.replace(weighted, lengths=None)
    n = weighted.n
    rng = np.random.default_rng(seed)
    sources = np.sort(rng.choice(n, size=min(n, num_sources), replace=False)).astype(np.int64)
    row = {"graph": LABELS.get(name, name), "n": n, "nnz": int(weighted.nnz),
           "sources": int(sources.size), "lengths": "integers 1..100"}
    runs = [("unweighted", unweighted, None)] + [
        (f"weighted_{path}", weighted, path) for path in paths]
    for label, graph, path in runs:
        engine = engine_named("gpu")
        with tuning(gpu_weighted_path=path or current_tuning().gpu_weighted_path):
            # compile and warm up on the path the timed run takes (the unweighted run: all
            # of its sources, as the batched kernel's first launch loads its module)
            warm = sources if path is None else sources[:64]
            run_schedule(Problem(graph), engine, [warm])
            # the median of SHORT_REPEATS runs when one is shorter than SHORT_RUN_S (a
            # single run of ego-Facebook varied from 0.010 to 0.017 s between records)
            timed = []
            while not timed or (len(timed) < SHORT_REPEATS and timed[0][0] < SHORT_RUN_S):
                cupy.cuda.Device().synchronize()
                t0 = time.perf_counter()
                total, facts = run_schedule(Problem(graph), engine, [sources])
                cupy.cuda.Device().synchronize()
                timed.append((time.perf_counter() - t0, facts))
            seconds, facts = sorted(timed, key=lambda item: item[0])[len(timed) // 2]
            row[f"{label}_seconds_all"] = [item[0] for item in timed]
            check = sources[:WEIGHTED_CHECK_SOURCES]
            got, _ = run_schedule(Problem(graph), engine, [check])
        row[f"{label}_seconds"] = seconds
        row[f"{label}_sweep_seconds"] = facts.get("sweep_seconds")
        row[f"{label}_family"] = facts.get("family")
        row[f"{label}_batch"] = facts.get("batch")
        if path is not None:
            row[f"{label}_distance_seconds"] = facts.get("distance_seconds")
            row[f"{label}_layer_seconds"] = facts.get("layer_seconds")
            row[f"{label}_rounds"] = facts.get("rounds")
            row[f"{label}_wide_sources"] = facts.get("wide_sources")
            want, _ = run_schedule(Problem(graph), engine_named("graphblas"), [check])
            scale = np.maximum(np.abs(want.vertex), 1e-300)
            row[f"{label}_graphblas_max_rel_diff"] = float(np.max(
                np.where(want.vertex == 0, np.abs(got.vertex), np.abs(got.vertex - want.vertex)
                         / scale))) if n else 0.0
            row[f"{label}_ratio"] = row[f"{label}_seconds"] / row["unweighted_seconds"]
    best = min(paths, key=lambda p: row[f"weighted_{p}_seconds"])
    row["best_path"] = best
    row["ratio"] = row[f"weighted_{best}_ratio"]
    row["target_ratio"] = WEIGHTED_TARGET_RATIO
    row["target_met"] = bool(row["ratio"] <= WEIGHTED_TARGET_RATIO)
    row["turbobc_exact_estimate_seconds"] = row[f"weighted_{best}_seconds"] * n / sources.size
    if exact:  # the whole run, as a user calls it (trees folded), unweighted and weighted
        import turbobc

        import scipy.sparse as sp

        pattern = sp.csr_array((np.ones(L.nnz), L.indices, L.indptr), shape=L.shape)
        for label, matrix, weight in (("unweighted", pattern, None), ("weighted", L, True)):
            # the first call compiles the call's own kernels (ego-Facebook's first unweighted
            # call took 0.19 s): timed again once, or SHORT_REPEATS times for a short run, and
            # the median of those reported; a first call of 4 SHORT_RUN_S or more stands

            call_facts = {}

            def timed_call() -> float:
                t0 = time.perf_counter()
                result = turbobc.run_bc(matrix, weight=weight, engine="gpu")
                cupy.cuda.Device().synchronize()
                call_facts.update(result.facts)
                return time.perf_counter() - t0

            timed = [timed_call()]
            if timed[0] < 4 * SHORT_RUN_S:
                timed += [timed_call()
                          for _ in range(SHORT_REPEATS if timed[0] < SHORT_RUN_S else 1)]
            runs = timed[1:] or timed
            row[f"turbobc_{label}_exact_seconds"] = float(np.median(runs))
            row[f"turbobc_{label}_exact_seconds_all"] = timed
            # what the folding left to sweep (trees, chains) and how
            row[f"turbobc_{label}_exact_facts"] = {
                key: call_facts.get(key) for key in ("folded", "core_vertices", "chain_folded",
                                                     "chains", "family", "batch", "batches",
                                                     "sweep_seconds", "chain_seconds")}
        row["exact_weighted_over_unweighted"] = (row["turbobc_weighted_exact_seconds"]
                                                 / row["turbobc_unweighted_exact_seconds"])
    row.update(networkit_weighted(L, networkit_samples))
    if "networkit_exact_estimate_seconds" in row:
        row["networkit_over_turbobc"] = (row["networkit_exact_estimate_seconds"]
                                         / row["turbobc_exact_estimate_seconds"])
        if exact:
            row["networkit_over_turbobc_exact"] = (row["networkit_exact_estimate_seconds"]
                                                   / row["turbobc_weighted_exact_seconds"])
        # the whole graph's run when it was timed, else the estimate from the sources
        row["networkit_target_met"] = bool(row.get("networkit_over_turbobc_exact",
                                                   row["networkit_over_turbobc"])
                                           >= WEIGHTED_NETWORKIT_TARGET)
    return row


def networkit_weighted(L, samples: int, exact_below: int = 5000) -> dict:
    """NetworKit's weighted Betweenness on all threads, as a per-source cost: the exact
    time is estimated as ``EstimateBetweenness(G, samples, parallel=True)`` seconds · n /
    samples (each sample is one Dijkstra and one dependency sweep, as in the exact run);
    graphs with fewer than ``exact_below`` vertices also time the exact
    ``Betweenness`` (the estimate's calibration). Empty when NetworKit is not installed."""
    import scipy.sparse as sp

    try:
        import networkit as nk
    except ImportError as exc:
        print(f"networkit not installed ({exc}): no NetworKit column", flush=True)
        return {}
    n = L.shape[0]
    upper = sp.triu(sp.csr_array(L), k=1).tocoo()
    G = nk.Graph(n, weighted=True, directed=False)
    for u, v, w in zip(upper.row.tolist(), upper.col.tolist(), upper.data.tolist()):
        G.addEdge(u, v, w)
    samples = min(samples, n)
    t0 = time.perf_counter()
    nk.centrality.EstimateBetweenness(G, samples, False, True).run()
    sampled = time.perf_counter() - t0
    out = {"networkit_threads": nk.getMaxNumberOfThreads(), "networkit_samples": samples,
           "networkit_sample_seconds": sampled,
           "networkit_exact_estimate_seconds": sampled * n / samples}
    if n < exact_below:
        t0 = time.perf_counter()
        nk.centrality.Betweenness(G, normalized=False).run()
        out["networkit_exact_seconds"] = time.perf_counter() - t0
    return out


def bench_families(name: str, num_sources: int, max_seconds: float = 40.0) -> dict:
    """The GPU engine's two families for unweighted BC (``Tuning.gpu_family``: ``lanes``, the
    batched kernels, and ``queue``, the layer kernels with every length 1) on the same
    ``num_sources`` sources of graph ``name`` (the first in locality order, as the exact run
    sweeps them), each after a warm-up; then exact BC with each family whose estimate (the
    probe's seconds · n / K) is within ``max_seconds``. Records the seconds, the ratio and the
    largest relative difference between the families' values."""
    import cupy

    import turbobc
    from turbobc._api import run_bc
    from turbobc._graph import Graph
    from turbobc.engines.gpu.lanes_order import locality_order

    A = cached_graph(name)
    n = A.shape[0]
    rank, order, depth = locality_order(Graph(pattern=A, directed=False))
    k = min(n, num_sources)
    probe = np.sort(np.argsort(rank)[:k])
    row = {"graph": LABELS.get(name, name), "n": n, "nnz": int(A.nnz), "sources": int(k),
           "order": order, "depth_estimate": depth}
    values = {}
    # the record's "queue_*" fields (so named since the first records) are the layers family
    # on hops, Tuning.gpu_family="layers"
    for family, knob in (("lanes", "lanes"), ("queue", "layers")):
        with turbobc.tuning(gpu_family=knob, order_min_share=0.0):
            run_bc(A, engine="gpu", sources=probe[:64])  # compile, warm up
            cupy.cuda.Device().synchronize()
            t0 = time.perf_counter()
            result = run_bc(A, engine="gpu", sources=probe)
            cupy.cuda.Device().synchronize()
            seconds = time.perf_counter() - t0
            values[family] = result.values
            facts = result.facts
            row.update({f"{family}_seconds": seconds,
                        f"{family}_sweep_seconds": facts.get("sweep_seconds"),
                        f"{family}_batch": facts.get("batch"),
                        f"{family}_batches": facts.get("batches"),
                        f"{family}_kernel": facts.get("kernel"),
                        f"{family}_estimate_seconds": seconds * n / k})
            if k < n and seconds * n / k <= max_seconds:
                t0 = time.perf_counter()
                exact = run_bc(A, engine="gpu")
                cupy.cuda.Device().synchronize()
                row[f"{family}_exact_seconds"] = time.perf_counter() - t0
                row[f"{family}_exact_folded"] = exact.facts.get("folded")
    row["queue_over_lanes"] = row["queue_seconds"] / row["lanes_seconds"]
    scale = np.maximum(np.abs(values["lanes"]), 1e-300)
    row["max_rel_diff"] = float(np.max(np.abs(values["queue"] - values["lanes"]) / scale))
    return row


def cached_graph(name: str):
    """graphs.graph(name), kept as .npz under $EXACT_GRAPH_CACHE when that is set (several
    variant processes on one machine generate kron18 once)."""
    import os

    import scipy.sparse as sp

    folder = os.environ.get("EXACT_GRAPH_CACHE")
    if not folder:
        return graphs.graph(name)
    path = Path(folder) / f"{name}.npz"
    if path.exists():
        return sp.csr_array(sp.load_npz(path))
    A = graphs.graph(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    sp.save_npz(path, sp.csr_matrix(A))
    return A


VARIANT_KEYS = ("order", "push_ratio", "blocks_per_sm", "kernel")


def parse_variant(text: str) -> dict:
    """``order=cluster,push_ratio=4,blocks_per_sm=3,kernel=vecsc`` -> dict (missing: defaults)."""
    spec = {}
    for item in filter(None, text.split(",")):
        key, value = item.split("=")
        if key not in VARIANT_KEYS:
            raise ValueError(f"unknown variant key {key!r}")
        spec[key] = value if key in ("order", "kernel") else int(value)
    return spec


def bench_variants(name: str, variants: list[str], num_sources: int, label: str = "") -> list:
    """Device-loop seconds of the first ``num_sources`` sources (in each variant's own sweep
    order) under each variant of the private knobs (source order, push ratio, resident blocks
    per SM, kernel), and the exact-BC seconds that predicts (times n / num_sources)."""
    import cupy

    import turbobc
    from turbobc.engines.gpu import lanes_order
    from turbobc._graph import Graph

    A = cached_graph(name)
    n, nnz = A.shape[0], A.nnz
    graph = Graph(pattern=A, directed=False)
    k = min(n, num_sources)
    rows = []
    for text in variants:
        spec = parse_variant(text)
        knobs = {key: spec[key] for key in ("order", "push_ratio") if key in spec}
        if "blocks_per_sm" in spec:
            knobs["batched_blocks_per_sm"] = spec["blocks_per_sm"]
        with turbobc.tuning(**knobs):
            kernel = spec.get("kernel", "auto")
            t0 = time.perf_counter()
            rank, _, _ = lanes_order.locality_order(graph)
            order_s = time.perf_counter() - t0
            sources = np.sort(np.argsort(rank)[:k]).tolist()
            run_once(A, kernel, sources=sources[:64])  # compile, warm
            seconds, run = run_once(A, kernel, sources=sources, in_sweep_order=True)
            row = {"graph": LABELS.get(name, name), "n": n, "nnz": nnz, "variant": text,
                   "build": label, "sources": k, "order": run.get("order"),
                   "order_seconds": order_s, "seconds": seconds,
                   "sweep_seconds": run["sweep_seconds"], "batch": run["batch"],
                   "batches": run["batches"], "depth": run["depth"], "kernel": run["kernel"],
                   "grid": run["grid"],
                   "predicted_exact_sweep_seconds": run["sweep_seconds"] * n / k}
            rows.append(row)
            print(f"  variant {label:6s} {row['graph']:20s} {text:45s} k={k:6d} sweep "
                  f"{row['sweep_seconds']:8.3f} s -> exact {row['predicted_exact_sweep_seconds']:8.2f}"
                  f" s  B={row['batch']} grid={row['grid']} depth={row['depth']} "
                  f"order {row['order']} {order_s:.3f} s", flush=True)
            cupy.get_default_memory_pool().free_all_blocks()
    return rows


def check_against_graphblas(name: str) -> float:
    """Largest relative difference of exact GPU BC from the graphblas engine."""
    import turbobc

    A = graphs.graph(name)
    gpu = turbobc.bc(A, engine="gpu")
    cpu = turbobc.bc(A, engine="graphblas")
    return float(np.abs(gpu - cpu).max() / max(np.abs(cpu).max(), 1e-300))


def check_edges_against_graphblas(name: str, step: int = 8) -> float:
    """Largest relative difference of GPU edge BC (every ``step``-th source) from the
    graphblas engine's."""
    import turbobc

    A = graphs.graph(name)
    sources = list(range(0, A.shape[0], step))
    gpu = turbobc.edge_bc(A, sources=sources, engine="gpu")
    cpu = turbobc.edge_bc(A, sources=sources, engine="graphblas")
    return float(np.abs(gpu - cpu).max() / max(np.abs(cpu).max(), 1e-300))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=DEFAULT_GRAPHS)
    parser.add_argument("--kernel", default="auto")
    parser.add_argument("--kernels", nargs="*", default=[],
                        help="graphs on which every kernel is timed as well")
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--check", nargs="*", default=["ego-Facebook"],
                        help="graphs whose exact GPU BC is compared with the graphblas engine")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--variants", nargs="*", default=[],
                        help="GRAPH:K:VARIANT;VARIANT;... (see parse_variant): time the first K "
                             "sources under each variant of the private knobs, no exact runs")
    parser.add_argument("--build", default="", help="label of this build (variant records)")
    parser.add_argument("--edges", action=argparse.BooleanOptionalAction, default=True,
                        help="also time edge BC beside vertex BC on the same sources of each "
                             "graph (--no-edges: vertex BC only)")
    parser.add_argument("--edge-sources", type=int, default=EDGE_SOURCES,
                        help="sources of the edge/vertex comparison (all when n is smaller)")
    parser.add_argument("--sampled", nargs="*", default=[],
                        help="GRAPH:K[:R]: time k-sampled BC (k=K, seed=1; median of R runs, "
                        "default 3) instead, no exact runs")
    parser.add_argument("--weighted", nargs="*", default=[],
                        help="GRAPH:K: time weighted BC (integer lengths 1..100) against "
                             "unweighted BC on K random sources instead, no exact runs")
    parser.add_argument("--families", nargs="*", default=[],
                        help="GRAPH:K: the GPU engine's lanes and queue families (unweighted) "
                             "on the same K sources, then exact runs within --max-seconds")
    parser.add_argument("--weighted-paths", nargs="+", default=["kernels"],
                        help="DAG sweeps of the weighted runs (turbobc/engines/gpu/weighted.py "
                             "PATHS; the wide one is many times slower)")
    parser.add_argument("--weighted-exact", action="store_true",
                        help="--weighted also times exact BC of the whole graph, unweighted and "
                             "weighted, as turbobc.bc runs it (trees folded)")
    parser.add_argument("--networkit-samples", type=int, default=1024,
                        help="sources of NetworKit's weighted per-source cost (--weighted)")
    args = parser.parse_args(argv)
    if args.families:
        rows, record = [], None
        for item in args.families:
            name, k = item.rsplit(":", 1)
            row = bench_families(name, int(k), args.max_seconds)
            rows.append(row)
            record = write_record("gpu_families", {"rows": rows}, results=args.out, path=record)
            print(f"{row['graph']:20s} n={row['n']:9d} sources={row['sources']:6d} lanes "
                  f"{row['lanes_seconds']:8.3f} s (B={row['lanes_batch']}) queue "
                  f"{row['queue_seconds']:8.3f} s (B={row['queue_batch']}) = "
                  f"x{row['queue_over_lanes']:.2f}; exact lanes "
                  f"{row.get('lanes_exact_seconds', float('nan')):.2f} s, queue "
                  f"{row.get('queue_exact_seconds', float('nan')):.2f} s; max rel diff "
                  f"{row['max_rel_diff']:.2g}", flush=True)
        print(f"record: {record}")
        return
    if args.weighted:
        rows, record = [], None
        for item in args.weighted:
            name, k = item.rsplit(":", 1)
            row = bench_weighted(name, int(k), networkit_samples=args.networkit_samples,
                                 paths=args.weighted_paths, exact=args.weighted_exact)
            rows.append(row)
            record = write_record("weighted_gpu", {"rows": rows}, results=args.out,
                                  path=record)
            print(f"{row['graph']:20s} n={row['n']:9d} nnz={row['nnz']:11d} "
                  f"sources={row['sources']:6d} unweighted {row['unweighted_seconds']:8.3f} s",
                  flush=True)
            for path in args.weighted_paths:
                key = f"weighted_{path}"
                print(f"{'':20s} weighted ({path:7s}) {row[key + '_seconds']:8.3f} s = "
                      f"x{row[key + '_ratio']:6.2f}, distances "
                      f"{row[key + '_distance_seconds']:.3f} s in {row[key + '_rounds']} rounds, "
                      f"max rel diff from graphblas {row[key + '_graphblas_max_rel_diff']:.3g}; "
                      f"layers {row.get(key + '_layer_seconds')}", flush=True)
            print(f"{'':20s} best {row['best_path']}: x{row['ratio']:.2f} "
                  f"(target x{WEIGHTED_TARGET_RATIO} met={row['target_met']})", flush=True)
            if "networkit_over_turbobc" in row:
                print(f"{'':20s} exact weighted estimate: turbobc "
                      f"{row['turbobc_exact_estimate_seconds']:.2f} s, NetworKit "
                      f"{row['networkit_exact_estimate_seconds']:.2f} s on "
                      f"{row['networkit_threads']} threads = x{row['networkit_over_turbobc']:.1f}"
                      f" (target x{WEIGHTED_NETWORKIT_TARGET})", flush=True)
            if "turbobc_weighted_exact_seconds" in row:
                print(f"{'':20s} exact, whole graph: unweighted "
                      f"{row['turbobc_unweighted_exact_seconds']:.2f} s, weighted "
                      f"{row['turbobc_weighted_exact_seconds']:.2f} s (x"
                      f"{row['exact_weighted_over_unweighted']:.2f}); NetworKit estimate / "
                      f"turbobc x{row.get('networkit_over_turbobc_exact', float('nan')):.1f}",
                      flush=True)
        print(f"record: {record}")
        return
    if args.sampled:
        rows, path = [], None
        for item in args.sampled:
            name, k, *repeats = item.split(":")
            row = bench_sampled(name, int(k), *(int(r) for r in repeats))
            rows.append(row)
            print(f"{row['graph']:20s} n={row['n']:9d} nnz={row['nnz']:11d} k={row['k']:6d} "
                  f"{row['seconds']:8.3f} s (sweep {row['sweep_seconds']:8.3f}) B={row['batch']}"
                  f" x {row['batches']} depth {row['depth']}; exact estimate "
                  f"{row['exact_estimate_seconds']:.1f} s", flush=True)
            # rewritten after each graph: a run cut by its time limit keeps the rows it finished
            path = write_record("sampled_gpu", {"rows": rows}, results=args.out, path=path)
        print(f"record: {path}")
        return
    if args.variants:
        rows = []
        for item in args.variants:
            name, k, specs = item.split(":", 2)
            rows += bench_variants(name, specs.split(";"), int(k), args.build)
        path = write_record("exact_gpu_variants", {"build": args.build, "variants": rows},
                            results=args.out)
        print(f"record: {path}")
        return

    bandwidth = copy_bandwidth()
    print(f"copy bandwidth {bandwidth / 1e12:.3f} TB/s (read + write)", flush=True)
    rows, comparisons = [], []
    for name in args.graphs:
        rec = bench_graph(name, args.kernel, bandwidth, args.max_seconds, edges=args.edges,
                          edge_sources=args.edge_sources)
        rows.append(rec)
        print(f"{rec['graph']:20s} n={rec['n']:8d} nnz={rec['nnz']:10d} {rec['seconds']:9.3f} s "
              f"(sweep {rec['sweep_seconds']:9.3f}) {rec['gteps']:7.2f} GTEPS  B={rec['batch']:5d}"
              f" x{rec['batches']:4d} depth {rec['depth']:5d} peak "
              f"{rec['peak_pool_bytes'] / 2**30:6.2f} GiB  floor x{rec['times_floor']:6.2f}"
              f"{'  EXTRAPOLATED from %d sources' % rec['sources'] if rec['extrapolated'] else ''}"
              f"  target {rec.get('target_seconds', '-')} met={rec.get('target_met', '-')}",
              flush=True)
        if args.edges:
            print(f"{'':20s} edge BC / vertex BC on {rec['edge_sources']} sources: sweep "
                  f"{rec['edge_edge_sweep_seconds']:8.3f} / {rec['edge_vertex_sweep_seconds']:8.3f}"
                  f" s = x{rec['edge_ratio']:5.2f} (wall x{rec['edge_wall_ratio']:5.2f}), "
                  f"exact edge BC ~{rec['edge_predicted_exact_sweep_seconds']:8.2f} s  "
                  f"target x{EDGE_TARGET_RATIO} met={rec['edge_target_met']}", flush=True)
    for name in args.kernels:
        for kernel in ("sccsc", "sccooc", "vecsc"):
            rec = bench_graph(name, kernel, bandwidth, args.max_seconds / 4)
            comparisons.append(rec)
            print(f"  kernel {kernel:7s} {rec['graph']:20s} {rec['seconds']:9.3f} s "
                  f"(sweep {rec['sweep_seconds']:9.3f}){' extrapolated' if rec['extrapolated'] else ''}",
                  flush=True)
    checks, edge_checks = {}, {}
    for name in args.check:
        checks[name] = check_against_graphblas(name)
        print(f"max relative difference from graphblas on {name}: {checks[name]:.3g}", flush=True)
        if args.edges:
            edge_checks[name] = check_edges_against_graphblas(name)
            print(f"max relative difference of edge BC (every 8th source) from graphblas on "
                  f"{name}: {edge_checks[name]:.3g}", flush=True)
    path = write_record("exact_gpu", {"copy_bandwidth_bytes_per_s": bandwidth,
                                      "floor_bytes_per_source_edge": FLOOR_BYTES_PER_PAIR,
                                      "graphs": rows, "kernel_comparison": comparisons,
                                      "graphblas_check_max_rel_diff": checks,
                                      "graphblas_edge_check_max_rel_diff": edge_checks},
                        results=args.out)
    print(f"record: {path}")
    print(json.dumps([{k: r[k] for k in ("graph", "seconds", "gteps", "batch", "times_floor",
                                         "extrapolated", "edge_ratio") if k in r}
                      for r in rows]))


if __name__ == "__main__":
    main()
