"""Memory footprint: peak device memory of single-source, batched (k-sampled) and approximate
runs against the models.

For each Kronecker scale (Graph500 definition, sampled on the GPU: bench/graphs.py) from about
1 million to more than 10 billion stored edges (kron25 to kron27 pass 2^31 stored edges: int64
column pointers beside int32 indices in the single-source family, 4 bytes a stored edge, and
int64 indices elsewhere, 8; ``python -m bench memory --scales 25 26 27``; a scale may name its
edge factor, ``26:72``, the sampled edges a vertex, 48 by default: kron26 with 72 holds about
9 billion stored edges in fewer than 2^31 vertices):

- single source: the engine's device arrays (``turbobc.engines.gpu.single.DeviceSweep``, kernel auto)
  for a few sources, each timed with CUDA events after a warm-up launch (median of
  ``repeats``); peak CuPy pool bytes and the drop of ``cudaMemGetInfo``'s free bytes against
  the model b m + (40 + b + p) n bytes (b the index size, p the pointers': 4m + 48n in int32,
  8m + 56n in int64, 4m + 52n split; ``turbobc.engines.gpu.memory.single_model``) and the
  engine's itemized model
  (``turbobc.engines.gpu.memory.single_bytes``);
- batched: one batch of the size the engine chooses from free memory
  (``turbobc.engines.gpu.memory.choose_lanes``), run by the lanes family; its peak
  pool bytes against ``turbobc.engines.gpu.memory.lanes_bytes`` (format b(n + 1 + m), per source
  n(ℓ + 16) + nℓ/16 + n/2 + 4·D_cap + 24, bc 8n: about 18.6 bytes per (vertex, source) with int16
  levels), and the time per source = sweep seconds / batch. The batch's sources are random
  and swept in vertex order (:data:`SOURCE_ORDER`): k-sampled BC with k the batch;
- k-sampled: ``bc(A, k=SAMPLED_K, seed=0)`` on the GPU through the public path, its seconds,
  the family that ran (one source at a time in the split types where no batch of 32 fits),
  and its peak pool bytes;
- approximate: ``turbobc.bc(A, epsilon=0.01)`` on the GPU through the public path (validation
  included), its seconds, sampler, samples and peak pool bytes; then its guarantee checked
  against an independent estimate from exact single-source sums (sampled sources, ε = 0.05,
  :func:`_check_guarantee`) on a sample of vertices and on all of them (thousands of sources:
  ``TURBOBC_MEMORY_CHECK=0`` skips it, saying so).

``TURBOBC_MEMORY_STEPS="sampled approx"`` runs the single-source step and only the steps it
names (batched, sampled, approx); the others are recorded as not requested.

Every measurement also gives bytes per stored edge (its peak over m) beside the models' bytes
per stored edge in int32 and int64 (:func:`per_edge`).

Then, by the models, the largest Kronecker scale whose single-source run fits the device
(and an 80 GB H100: :data:`H100_BYTES`), with stored edges per vertex extrapolated linearly in
the scale from the measured graphs, and whether a batch of 32 sources fits too.

On a machine without a GPU the suite records why the measurements were skipped and still
writes the model rows (host-generated Kronecker graphs of small scales).
"""

from __future__ import annotations

import os
import statistics
import time
from functools import partial

import numpy as np

from bench import graphs
from bench.cuda_timing import time_each_source
from bench.records import gteps, mteps

__all__ = ["DEVICE_SCALES", "HOST_SCALES", "H100_BYTES", "single_model", "largest_fitting",
           "per_edge", "run", "APPROX_EPSILON"]

APPROX_EPSILON = 0.01
"""ε of the approximate measurement (δ the library's default, 0.1)."""

VALIDATION_BYTES_PER_EDGE = 12
"""Host bytes per stored edge that ``turbobc.bc``'s validation holds beside the user's matrix
(turbobc/_validation.py: the row of every entry, int64 past 2^31 stored edges, and the masks
of kept and finite entries; the pattern's ones are a view there): the approximate measurement
is skipped, saying so, where the host has less (an out-of-memory kill would lose the record)."""

DEVICE_SCALES = (14, 16, 18, 20, 22, 24, 23)
"""Kronecker scales measured on a GPU, in the order they run (kron24 before the optional
kron23, so the billion-edge point comes first when the time budget runs short)."""

HOST_SCALES = (10, 12, 14)
"""Scales generated on the host for the model rows when no GPU is present."""

H100_BYTES = 81559 * 2**20
"""Device memory of an H100 80 GB (HBM3) as nvidia-smi reports it (81,559 MiB)."""

SOURCE_ORDER = ("vertex order: the engine's locality order (reverse Cuthill-McKee) is a "
                "pass over the whole graph on the host (SciPy's took minutes past kron22), "
                "and a single batch of random sources gains little from it; memory does not "
                "depend on the order")
"""How the batched measurement orders its sources, recorded with each point."""

CONTEXT_BYTES = 2**30
"""Reserve for the CUDA context and CuPy's own allocations when a capacity is not measured."""


SAMPLED_K = 64
"""Sources of the k-sampled measurement."""


def scale_spec(text) -> tuple[int, int]:
    """(scale, edge factor) of ``"26"`` (edge factor 48) or ``"26:72"``."""
    scale, _, factor = str(text).partition(":")
    return int(scale), int(factor or 48)


def single_model(n: int, m: int, index_dtype=None, position_dtype=None) -> int:
    """The single-source model in bytes, b m + (40 + b + p) n: 4m + 48n with int32 indices,
    8m + 56n with int64, 4m + 52n with int32 indices beside int64 pointers (float64 values);
    ``index_dtype`` (and ``position_dtype``, default the same) default to the split the engine
    takes for n and m (``turbobc._graph.single_index_types``: int64 pointers past 2^31 - 64
    stored edges)."""
    from turbobc._graph import single_index_types
    from turbobc.engines.gpu.memory import single_model as model

    if index_dtype is not None:
        return model(n, m, index_dtype, position_dtype)
    return model(n, m, *single_index_types(n, m, bits="auto"))


def per_edge(n: int, m: int, measured: int | None = None) -> dict:
    """Bytes per stored edge: the single-source model's in int32, in int64 and split (int32
    indices, int64 pointers), the types the engine takes, and ``measured`` bytes over m when
    given."""
    from turbobc._graph import single_index_types
    from turbobc.engines.gpu.memory import single_model as model

    vertex, position = single_index_types(n, m, bits="auto")
    out = {"index_dtype": vertex.name, "position_dtype": position.name,
           "model_int32": model(n, m, np.int32) / max(m, 1),
           "model_int64": model(n, m, np.int64) / max(m, 1),
           "model_split": model(n, m, np.int32, np.int64) / max(m, 1)}
    if measured is not None:
        out["measured"] = measured / max(m, 1)
    return out


def _single_expected(n: int, m: int, kernel: str = "vecsc") -> int:
    from turbobc.engines.gpu.memory import single_bytes
    from turbobc._graph import single_index_types

    vertex, position = single_index_types(n, m)
    return single_bytes(n, m, kernel, vertex, 1, position)


def _batched_expected(n: int, m: int, batch: int) -> int:
    from turbobc.engines.gpu.memory import DEPTH_CAP, lanes_bytes
    from turbobc._graph import index_dtype_for

    return lanes_bytes(n, m, kernel="vecsc", index_bytes=index_dtype_for(n, m).itemsize,
                        level_bytes=2, batch=batch, depth_cap=DEPTH_CAP, directed=False)


def largest_fitting(points: list[dict], capacity: int, max_scale: int = 40) -> dict:
    """The largest Kronecker scale whose single-source run, and whose 32-source batch, fit
    ``capacity`` bytes by the engines' itemized models.

    Stored edges per vertex is fitted linearly in the scale over ``points`` (dicts with
    ``scale``, ``n``, ``nnz``), so scales past the measured ones are an extrapolation.
    """
    scales = np.array([p["scale"] for p in points], dtype=float)
    degree = np.array([p["nnz"] / p["n"] for p in points])
    slope, intercept = np.polyfit(scales, degree, 1) if len(points) > 1 else (0.0, degree[0])
    from turbobc._graph import index_dtype_for
    from turbobc.engines.gpu.memory import choose_lanes
    from turbobc._tuning import current

    out = {"capacity_bytes": int(capacity), "degree_fit": [float(slope), float(intercept)],
           "single_source": None, "batched": None, "rows": []}
    for s in range(int(scales.min()), max_scale + 1):
        n = 2**s
        m = int(round(n * (slope * s + intercept)))
        single = _single_expected(n, m)
        lanes = choose_lanes(n, m, n, capacity,
                             index_bytes=index_dtype_for(n, m, bits="auto").itemsize)
        row = {"scale": s, "n": n, "nnz_estimated": m, "single_expected_bytes": single,
               "single_fits": single <= capacity, "batch_lanes": lanes,
               "batch_expected_bytes": _batched_expected(n, m, lanes) if lanes else None}
        out["rows"].append(row)
        if row["single_fits"]:
            out["single_source"] = {k: row[k] for k in ("scale", "n", "nnz_estimated",
                                                         "single_expected_bytes")}
        if lanes:
            out["batched"] = {k: row[k] for k in ("scale", "n", "nnz_estimated", "batch_lanes",
                                                   "batch_expected_bytes")}
        if not row["single_fits"]:
            break
    out["batched_memory_fraction"] = current().gpu_memory_fraction
    return out


def _measure_single(graph, repeats: int, num_sources: int) -> dict:
    import cupy

    from turbobc.engines.gpu import single as _gpu
    from turbobc.engines.gpu.memory import single_bytes

    n, m = graph.n, graph.nnz
    rng = np.random.default_rng(0)
    sources = np.sort(rng.choice(np.flatnonzero(graph.out_degree > 0), num_sources,
                                 replace=False))
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    free0 = cupy.cuda.runtime.memGetInfo()[0]
    run = _gpu.DeviceSweep(graph, sources, "auto", None)  # the engine's types: split past 2^31
    vertex, position = run.index_types
    cupy.cuda.Device().synchronize()
    delta = free0 - cupy.cuda.runtime.memGetInfo()[0]
    per_source, _ = time_each_source(run, graph, sources.size, repeats)
    ms = statistics.median(per_source)
    record = {"kernel": run.kernel, "scf": None if run.stats is None else run.stats.scf,
              "sources": sources.tolist(), "repeats": repeats,
              "ms_per_source": ms, "ms_per_source_each": per_source,
              "mteps": mteps(m, ms / 1e3),
              "peak_pool_bytes": int(run.peak - run.baseline), "device_bytes_delta": int(delta),
              "index_dtype": vertex.name, "position_dtype": position.name,
              "model_bytes": single_model(n, m, vertex, position),
              "expected_bytes": int(single_bytes(n, m, run.kernel, vertex, sources.size,
                                                 position))}
    del run
    pool.free_all_blocks()
    return record


def _host_short(A) -> dict | None:
    """``{"skipped": ...}`` where the host has too little memory for ``turbobc.bc``'s
    validation of ``A`` (:data:`VALIDATION_BYTES_PER_EDGE`; an out-of-memory kill would lose
    the record), else None."""
    from turbobc._memory import available_memory, format_bytes

    need = VALIDATION_BYTES_PER_EDGE * A.nnz + 16 * A.shape[0]
    if need > available_memory():
        return {"skipped": f"validation needs about {format_bytes(need)} of host memory "
                           f"({VALIDATION_BYTES_PER_EDGE} bytes a stored edge beside the "
                           f"graph); {format_bytes(available_memory())} available"}
    return None


def _measure_sampled(A, k: int = SAMPLED_K) -> dict:
    """``bc(A, k=k, seed=0)`` on the GPU through the public path (validation included): the
    seconds, seconds a source, the family and types that ran, and the peak pool bytes."""
    import cupy

    from turbobc._api import run_bc

    short = _host_short(A)
    if short is not None:
        return short
    m = A.nnz
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    start = time.perf_counter()
    _, facts = run_bc(A, k=k, seed=0, engine="gpu")
    wall = time.perf_counter() - start
    pool.free_all_blocks()
    kept = {key: v for key, v in facts.items() if isinstance(v, (int, float, str, bool))}
    return {"k": k, "seconds": wall, "seconds_per_source": wall / k,
            "family": kept.get("family"), "kernel": kept.get("kernel"),
            "index_dtype": kept.get("index_dtype"), "position_dtype": kept.get("position_dtype"),
            "peak_pool_bytes": kept.get("peak_pool_bytes"),
            "bytes_per_stored_edge": (kept["peak_pool_bytes"] / m
                                      if kept.get("peak_pool_bytes") else None),
            "facts": kept}


def _measure_batched(graph) -> dict:
    import cupy

    from turbobc import tuning

    from turbobc.engines.gpu import memory as _gpu_memory
    from turbobc.engines.gpu.family import sweep_with
    from turbobc.engines.gpu.lanes import LanesFamily
    from turbobc._graph import index_dtype_for

    n, m = graph.n, graph.nnz
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    free0 = cupy.cuda.runtime.memGetInfo()[0]
    lanes = _gpu_memory.choose_lanes(n, m, n, free0,
                                      index_bytes=index_dtype_for(n, m).itemsize)
    if lanes == 0:
        return {"skipped": "not even 32 sources fit the free memory"}
    sources = np.sort(np.random.default_rng(0).permutation(n)[:lanes])
    start = time.perf_counter()
    with tuning(order="vertex"):  # sources as numbered: the measurement needs no order pass
        _, run = sweep_with(LanesFamily, graph, sources)
    wall = time.perf_counter() - start
    delta = free0 - cupy.cuda.runtime.memGetInfo()[0]  # the pool keeps its blocks until freed
    pool.free_all_blocks()
    if "sweep_seconds" not in run:  # no batch of 32 fitted: the sources went one at a time
        return {"skipped": f"no batch of 32 sources fitted beside the graph ({lanes} planned "
                           f"from {free0} free bytes): the lanes family swept them one at a "
                           f"time ({wall:.1f} s)",
                "facts": {k: v for k, v in run.items()
                          if isinstance(v, (int, float, str, bool))}}
    sweep = run["sweep_seconds"]
    return {"kernel": run["kernel"], "sources": int(sources.size), "batch": run["batch"],
            "batches": run["batches"], "depth": run["depth"], "level_dtype": run["level_dtype"],
            "index_dtype": run["index_dtype"], "wall_seconds": wall, "sweep_seconds": sweep,
            "seconds_per_source": sweep / sources.size,
            "gteps": gteps(sources.size, m, sweep),
            "peak_pool_bytes": int(run["peak_pool_bytes"]), "device_bytes_delta": int(delta),
            "model_bytes": int(run["model_bytes"]), "free_bytes_before": int(free0),
            "source_order": SOURCE_ORDER}


def _measure_approx(A, epsilon: float = APPROX_EPSILON) -> dict:
    """``turbobc.bc(A, epsilon=...)`` on the GPU: seconds, what the run sampled and its peak."""
    import cupy

    from turbobc._api import run_bc

    short = _host_short(A)
    if short is not None:
        return short
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    free0 = cupy.cuda.runtime.memGetInfo()[0]
    start = time.perf_counter()
    values, facts = run_bc(A, epsilon=epsilon, engine="gpu")
    wall = time.perf_counter() - start
    delta = free0 - cupy.cuda.runtime.memGetInfo()[0]
    pool.free_all_blocks()
    kept = {k: v for k, v in facts.items() if isinstance(v, (int, float, str, bool))}
    record = {"epsilon": epsilon, "seconds": wall, "device_bytes_delta": int(delta),
              "peak_pool_bytes": kept.get("peak_pool_bytes"), "facts": kept}
    for key in ("sources", "samples", "pairs"):
        if isinstance(kept.get(key), int) and kept[key] > 0:
            record[f"seconds_per_{key[:-1]}"] = wall / kept[key]
    if os.environ.get("TURBOBC_MEMORY_CHECK", "1") == "0":
        record["guarantee_check"] = {"skipped": "TURBOBC_MEMORY_CHECK=0 (the check sweeps "
                                                "thousands of sources)"}
        return record
    try:
        record["guarantee_check"] = _check_guarantee(A, values, epsilon)
    except Exception as exc:  # the check is extra: keep the measurement
        record["guarantee_check"] = {"error": f"{type(exc).__name__}: {exc}"}
    return record


CHECK_EPSILON = 0.05
"""ε of the independent estimate that checks an approximate run (:func:`_check_guarantee`)."""

CHECK_VERTICES = 64
"""Vertices of the check's sample: the half of largest estimate and as many drawn at random."""


def _check_guarantee(A, values: np.ndarray, epsilon: float, seed: int = 12345,
                     engine: str = "gpu") -> dict:
    """The approximate values against an independent estimate from exact single-source sums:
    ``bc(A, epsilon=CHECK_EPSILON)`` with ``Tuning.approx_sampler = "sources"`` (the mean of
    sampled sources' exact dependencies, Bernstein-stopped: within CHECK_EPSILON of the
    exact values with probability 1 − δ), another seed. Both within their ε of the exact
    value means the two within ε + CHECK_EPSILON of each other (probability 1 − 2δ): the
    largest difference over a sample of vertices (the CHECK_VERTICES / 2 of largest
    estimate and as many at random) and over all of them, against that sum."""
    import turbobc
    from turbobc._api import run_bc

    rng = np.random.default_rng(seed)
    top = np.argsort(values)[-(CHECK_VERTICES // 2):]
    drawn = rng.choice(values.size, size=CHECK_VERTICES // 2, replace=False)
    sample = np.unique(np.concatenate([top, drawn]))
    start = time.perf_counter()
    with turbobc.tuning(approx_sampler="sources"):
        check, facts = run_bc(A, epsilon=CHECK_EPSILON, engine=engine, seed=seed)
    seconds = time.perf_counter() - start
    allowed = epsilon + CHECK_EPSILON
    differences = np.abs(values - check)
    largest_sample = float(differences[sample].max())
    return {"check_epsilon": CHECK_EPSILON, "check_sampler": facts.get("sampler"),
            "check_samples": facts.get("samples"), "check_seconds": seconds,
            "sample_vertices": int(sample.size),
            "largest_value": float(values.max()),
            "largest_difference_in_sample": largest_sample,
            "largest_difference": float(differences.max()), "allowed": allowed,
            "within": bool(differences.max() <= allowed)}


def _warm_up() -> None:
    """Compile the single-source and batched kernels on a small graph."""
    import spmv
    from turbobc.engines.gpu.family import sweep_with
    from turbobc.engines.gpu.lanes import LanesFamily
    from turbobc.engines.gpu.single import SingleFamily
    from turbobc._graph import Graph

    graph = Graph(pattern=graphs.kronecker(10, device=False), directed=False)
    sources = np.arange(4)
    for kernel in ("auto",) + spmv.KERNELS:
        sweep_with(SingleFamily, graph, sources, kernel=kernel)
    sweep_with(LanesFamily, graph, np.arange(64))


def _within_budget(asked: bool, what: str, predicted: float, left: float, measure):
    """One optional measurement of a scale: ``{"skipped": ...}`` when not asked for or when
    its predicted seconds pass the time left, else what ``measure()`` returns (or the error
    it raised); with its seconds (None when it did not run)."""
    if not asked:
        return {"skipped": f"{what} runs not requested"}, None
    if predicted > left:
        return {"skipped": f"time budget: predicted {predicted:.0f} s, {left:.0f} s left"}, None
    step = time.perf_counter()
    try:
        row = measure()
    except Exception as exc:
        row = {"error": f"{type(exc).__name__}: {exc}"}
    return row, time.perf_counter() - step


def run(*, scales=None, budget_seconds: float = 300.0, repeats: int = 3, num_sources: int = 3,
        batched: bool = True, sampled: bool = True, approx: bool = True, log=print,
        checkpoint=None) -> dict:
    """Measure (on a GPU) or model (without one) the memory footprint; returns the record.
    ``checkpoint(record)``, when given, is called after each measured point (the caller
    writes the record so far: a run cut by its time limit, or failing after its
    measurements, keeps them)."""
    from turbobc._graph import Graph

    steps = os.environ.get("TURBOBC_MEMORY_STEPS")
    if steps is not None:  # e.g. "sampled": the single-source step and only those named
        batched, sampled, approx = (name in steps.split() for name in ("batched", "sampled",
                                                                        "approx"))
    on_device = graphs.device_present()
    record = {"suite": "memory", "points": [], "skipped": None}
    began = time.perf_counter()
    if not on_device:
        record["skipped"] = "no usable GPU: peak device memory needs one; model rows only"
        for s, factor in map(scale_spec, scales or HOST_SCALES):
            A = graphs.kronecker(s, factor, device=False)
            n, m = A.shape[0], A.nnz
            record["points"].append({"graph": _name(s, factor), "scale": s,
                                     "edge_factor": factor, "n": n, "nnz": m,
                                     "generator": "numpy (host)",
                                     "single_model_bytes": single_model(n, m),
                                     "single_expected_bytes": _single_expected(n, m),
                                     "bytes_per_stored_edge": per_edge(n, m)})
        record["capacity_source"] = "H100 80 GB (81,559 MiB) less 1 GiB for the context"
        record["largest"] = largest_fitting(record["points"], H100_BYTES - CONTEXT_BYTES)
        return record

    import cupy

    free, total = cupy.cuda.runtime.memGetInfo()
    record.update(device_total_bytes=int(total), device_free_bytes_at_start=int(free))
    _warm_up()
    cost = {}  # seconds per stored edge of each step, from the last scale that ran it
    for s, factor in map(scale_spec, scales or DEVICE_SCALES):
        n, expected_m = 2**s, 86 * 2**s * factor // 48
        left = budget_seconds - (time.perf_counter() - began)
        predicted = cost.get("single", 0.0) * expected_m
        if predicted > left:
            log(f"kron{s}: skipped, predicted {predicted:.0f} s > {left:.0f} s left")
            record["points"].append({"graph": _name(s, factor), "scale": s, "skipped":
                                     f"time budget: predicted {predicted:.0f} s, {left:.0f} s left"})
            continue
        step = time.perf_counter()
        t0 = time.perf_counter()
        try:
            indptr, indices = graphs.kronecker_device(s, factor)
            cupy.cuda.Device().synchronize()
        except Exception as exc:  # record it and go on: a smaller scale may still fit
            cupy.get_default_memory_pool().free_all_blocks()
            record["points"].append({"graph": _name(s, factor), "scale": s, "skipped":
                                     f"generation failed: {type(exc).__name__}: {exc}"})
            log(f"kron{s}: generation failed: {exc}")
            continue
        gen_s = time.perf_counter() - t0  # sampled, deduplicated and copied to the host
        A = graphs._csr_from_arrays(indptr, indices, n)
        del indptr, indices
        cupy.get_default_memory_pool().free_all_blocks()
        m = A.nnz
        graph = Graph(pattern=A, directed=False)
        point = {"graph": _name(s, factor), "scale": s, "edge_factor": factor, "n": n, "nnz": m,
                 "generator": "cupy (device)",
                 "generate_seconds": gen_s, "index_dtype": A.indices.dtype.name,
                 "single_model_bytes": single_model(n, m),
                 "single_expected_bytes": _single_expected(n, m)}
        try:
            point["single"] = _measure_single(graph, repeats, num_sources)
        except Exception as exc:  # record the failure, go on with the other sizes
            point["single"] = {"error": f"{type(exc).__name__}: {exc}"}
        point["bytes_per_stored_edge"] = per_edge(n, m, point["single"].get("peak_pool_bytes"))
        cost["single"] = (time.perf_counter() - step) / m
        single = point["single"]
        log(f"{point['graph']}: n={n} nnz={m} gen {gen_s:.2f} s  single {single.get('kernel')} "
            f"{single.get('ms_per_source', float('nan')):.3f} ms/src peak "
            f"{single.get('peak_pool_bytes', 0) / 2**30:.3f} GiB (model "
            f"{point['single_model_bytes'] / 2**30:.3f}, itemized "
            f"{point['single_expected_bytes'] / 2**30:.3f})")
        left = budget_seconds - (time.perf_counter() - began)
        pairs = m * max(32, _lanes_now(n, m))
        predicted = cost.get("batched", 0.0) * pairs
        point["batched"], seconds = _within_budget(batched, "batched", predicted, left,
                                                   partial(_measure_batched, graph))
        if seconds is not None:
            cost["batched"] = seconds / pairs
        b = point["batched"]
        if "peak_pool_bytes" in b:
            b["bytes_per_stored_edge"] = b["peak_pool_bytes"] / m
            log(f"kron{s}: batched {b['kernel']} B={b['batch']} {b['sweep_seconds']:.2f} s "
                f"({b['seconds_per_source'] * 1e3:.3f} ms/src) peak "
                f"{b['peak_pool_bytes'] / 2**30:.2f} GiB (model {b['model_bytes'] / 2**30:.2f})")
        else:
            log(f"kron{s}: batched {b}")
        left = budget_seconds - (time.perf_counter() - began)
        predicted = cost.get("sampled", 0.0) * m
        point["sampled"], seconds = _within_budget(sampled, "k-sampled", predicted, left,
                                                   partial(_measure_sampled, A))
        if seconds is not None:
            cost["sampled"] = seconds / m
        log(f"{point['graph']}: k-sampled {point['sampled']}")
        left = budget_seconds - (time.perf_counter() - began)
        predicted = cost.get("approx", 0.0) * m
        point["approx"], seconds = _within_budget(approx, "approximate", predicted, left,
                                                  partial(_measure_approx, A))
        if seconds is not None:
            cost["approx"] = seconds / m
        a = point["approx"]
        if a.get("peak_pool_bytes"):
            a["bytes_per_stored_edge"] = a["peak_pool_bytes"] / m
        log(f"kron{s}: approximate (epsilon {APPROX_EPSILON}) "
            + (f"{a['seconds']:.2f} s, sampler {a['facts'].get('sampler')}, check "
               f"{a.get('guarantee_check')}" if "seconds" in a else str(a)))
        record["points"].append(point)
        if checkpoint is not None:
            checkpoint(record)
        del graph, A
    # the fit of stored edges a vertex against the scale: the Graph500 edge factor's points
    measured = [p for p in record["points"] if "nnz" in p and p.get("edge_factor", 48) == 48]
    record["points"].sort(key=lambda p: p["scale"])
    capacity = int(free) if "H100" in _device_name() else H100_BYTES - CONTEXT_BYTES
    record["capacity_source"] = ("free device memory at start (this H100)" if capacity == free
                                 else "H100 80 GB (81,559 MiB) less 1 GiB for the context")
    # (None without a measured Graph500 point: a run of other edge factors only)
    record["largest"] = largest_fitting(measured, capacity) if measured else None
    record["largest_this_device"] = largest_fitting(measured, int(free)) if measured else None
    return record


def _name(scale: int, factor: int) -> str:
    """``kron26``, or ``kron26-ef72`` for another edge factor than 48."""
    return f"kron{scale}" + ("" if factor == 48 else f"-ef{factor}")


def _lanes_now(n: int, m: int) -> int:
    """The batch the engine would choose now (for the time prediction)."""
    import cupy

    from turbobc.engines.gpu.memory import choose_lanes
    from turbobc._graph import index_dtype_for

    cupy.get_default_memory_pool().free_all_blocks()
    return choose_lanes(n, m, n, cupy.cuda.runtime.memGetInfo()[0],
                        index_bytes=index_dtype_for(n, m).itemsize)


def _device_name() -> str:
    import cupy

    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    return name.decode() if isinstance(name, bytes) else name
