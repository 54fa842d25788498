"""First-call time of ``turbobc.bc`` on the GPU with an empty kernel cache, per kernel and family.

For each kernel name (``"auto"`` and every name in ``spmv.KERNELS``) and each family, a fresh
Python process with an empty CuPy kernel cache (``CUPY_CACHE_DIR`` a new temporary folder,
``CUPY_CACHE_IN_MEMORY`` unset) imports turbobc, creates the CUDA context, then times

- its first ``turbobc.bc(A, engine="gpu", kernel=k, sources=S)``: NVRTC compiles every kernel
  the call launches (turbobc's and CuPy's own), and modules such as cupyx's sparse load;
- the same call again in the same process (warm).

The families: ``single`` (``sources=[0]``: the single-source kernels) and ``batched`` (every
source: the batched kernels). ``one_time_seconds`` = first - second: what a user waits once
per process. ``cache_files`` counts what the run left in the cache folder (one file per
compiled module). The graph is small (:func:`small_graph`, the same for every process), so the
sweeps take milliseconds and the first call is mostly compiling. ``--jobs N`` runs N processes
at a time (each compiles on its own core; the record keeps N); ``--max-seconds`` bounds the
whole run.

The children import only the public API (``turbobc.bc``; the parent reads ``spmv.KERNELS``),
so this file measures an older tree too: with that tree first on ``PYTHONPATH``::

    PYTHONPATH=<older tree> python bench/compile_time.py --out DIR --label before
    PYTHONPATH=$PWD python bench/compile_time.py --out DIR --label after

(bench/gpu_check.sh does both when ``BEFORE_DIR`` is set). The record goes to
``DIR/compile_time-<UTC time>.json`` (bench/records.py: machine, versions, commit).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["FAMILIES", "small_graph", "measure", "run", "build_record", "summary"]

FAMILIES = {"single": "[0]", "batched": "null"}
"""Family -> the ``sources`` argument of its calls (JSON): one source, or all (None)."""

GRAPH_N, GRAPH_DEGREE, GRAPH_SEED = 4096, 8, 0
"""The graph of every run: :func:`small_graph` ``(n, degree, seed)``."""

CHILD_TIMEOUT_S = 150
"""A child that takes longer is stopped and its row records the timeout."""

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import scipy.sparse as sp
import turbobc
import_seconds = time.perf_counter() - t0
graph_path, kernel, sources = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
A = sp.csr_array(sp.load_npz(graph_path))
import cupy
t0 = time.perf_counter()
cupy.empty(1)  # creates the CUDA context: an allocation, no kernel
cupy.cuda.Device().synchronize()
context_seconds = time.perf_counter() - t0
seconds = []
for _ in range(2):
    t0 = time.perf_counter()
    values = turbobc.bc(A, engine="gpu", kernel=kernel, sources=sources)  # numpy: synchronized
    seconds.append(time.perf_counter() - t0)
print(json.dumps({"import_seconds": import_seconds, "context_seconds": context_seconds,
                  "first_seconds": seconds[0], "second_seconds": seconds[1],
                  "turbobc_path": str(turbobc.__file__), "checksum": float(values.sum())}))
"""


def small_graph(n: int = GRAPH_N, degree: int = GRAPH_DEGREE, seed: int = GRAPH_SEED):
    """An undirected random graph on ``n`` vertices, about ``degree`` neighbours each, with a
    ring through all of them (connected): canonical CSR, float64 ones."""
    rng = np.random.default_rng(seed)
    extra = n * degree // 2 - n
    rows = np.concatenate([np.arange(n), rng.integers(0, n, max(extra, 0))])
    cols = np.concatenate([(np.arange(n) + 1) % n, rng.integers(0, n, max(extra, 0))])
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    A = sp.csr_array((np.ones(2 * rows.size), (np.concatenate([rows, cols]),
                                                np.concatenate([cols, rows]))), shape=(n, n))
    A.sum_duplicates()
    A.data[:] = 1.0
    return A


def measure(graph_path: Path, kernel: str, family: str, workdir: Path,
            timeout: float = CHILD_TIMEOUT_S) -> dict:
    """One fresh process with an empty kernel cache: its timings (:data:`_CHILD`), or
    ``error`` with the end of its output."""
    cache = Path(tempfile.mkdtemp(prefix=f"cupy-cache-{kernel}-{family}-", dir=workdir))
    env = dict(os.environ, CUPY_CACHE_DIR=str(cache))
    env.pop("CUPY_CACHE_IN_MEMORY", None)
    began = time.perf_counter()
    try:
        # cwd: the empty cache folder, so that `python -c` (which puts its cwd first on
        # sys.path) imports turbobc from PYTHONPATH, never from a checkout it was started in
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(graph_path), kernel,
                               FAMILIES[family]], cwd=str(cache), env=env,
                              capture_output=True, text=True, timeout=timeout)
        out = proc.stdout.strip().splitlines()
        row = (json.loads(out[-1]) if proc.returncode == 0 and out else
               {"error": f"exit {proc.returncode}: {(proc.stdout + proc.stderr)[-2000:]}"})
    except subprocess.TimeoutExpired:
        row = {"error": f"timed out after {timeout} s"}
    row["child_seconds"] = time.perf_counter() - began
    files = [f for f in cache.rglob("*") if f.is_file()]
    row["cache_files"] = len(files)
    row["cache_bytes"] = sum(f.stat().st_size for f in files)
    return row


def run(kernels, families=tuple(FAMILIES), *, jobs: int = 1, max_seconds: float | None = None,
        measure_one=measure, log=print, clock=time.perf_counter) -> list[dict]:
    """Measure every (kernel, family) in a fresh process; the raw rows, in that order.

    ``jobs``: processes at a time (each compiles on its own CPU core; 1 leaves the machine
    to one first call). ``max_seconds``: no process starts past it and each gets at most
    what is left (its row then says so). ``measure_one(graph_path, kernel, family, workdir,
    timeout) -> dict`` (tests pass a fake)."""
    began = clock()
    tasks = [(kernel, family) for kernel in kernels for family in families]
    with tempfile.TemporaryDirectory(prefix="compile_time-") as tmp:
        workdir = Path(tmp)
        graph_path = workdir / "graph.npz"
        sp.save_npz(graph_path, sp.csr_matrix(small_graph()))

        def one(task):
            kernel, family = task
            left = CHILD_TIMEOUT_S if max_seconds is None else max_seconds - (clock() - began)
            if left <= 1:
                return {"kernel": kernel, "family": family,
                        "error": f"not run: past the {max_seconds} s budget"}
            raw = measure_one(graph_path, kernel, family, workdir, min(CHILD_TIMEOUT_S, left))
            if "error" in raw:
                log(f"{kernel:7s} {family:8s} FAILED: {raw['error'][-400:]}")
            else:
                log(f"{kernel:7s} {family:8s} first {raw['first_seconds']:7.2f} s  second "
                    f"{raw['second_seconds']:7.3f} s  context {raw['context_seconds']:5.2f} s"
                    f"  import {raw['import_seconds']:5.2f} s  {raw['cache_files']} cached "
                    "file(s)")
            return dict(raw, kernel=kernel, family=family)

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(one, tasks))


def build_record(rows: list[dict], *, label: str = "", graph: dict | None = None) -> dict:
    """The record of a run: one row per (kernel, family) with ``one_time_seconds`` (first -
    second call), plus per family the largest first call and the sum of one-time seconds."""
    out = []
    for raw in rows:
        row = {"kernel": raw["kernel"], "family": raw["family"],
               "sources": FAMILIES.get(raw["family"], "?")}
        for key in ("first_seconds", "second_seconds", "import_seconds", "context_seconds",
                    "child_seconds", "cache_files", "cache_bytes", "turbobc_path", "checksum",
                    "error"):
            if key in raw:
                row[key] = raw[key]
        if "error" not in raw:
            row["one_time_seconds"] = raw["first_seconds"] - raw["second_seconds"]
        out.append(row)
    families = {}
    for family in dict.fromkeys(r["family"] for r in out):
        done = [r for r in out if r["family"] == family and "error" not in r]
        families[family] = {
            "kernels": len(done),
            "failed": sum(1 for r in out if r["family"] == family and "error" in r),
            "max_first_seconds": max((r["first_seconds"] for r in done), default=None),
            "sum_one_time_seconds": sum(r["one_time_seconds"] for r in done)}
    paths = {r["turbobc_path"] for r in out if "turbobc_path" in r}
    return {"label": label, "turbobc_path": sorted(paths)[0] if len(paths) == 1 else sorted(paths),
            "graph": graph or {}, "cache": "CUPY_CACHE_DIR empty per process, "
            "CUPY_CACHE_IN_MEMORY unset", "rows": out, "families": families}


def summary(record: dict) -> str:
    """A plain-text table of a record."""
    label = f" ({record['label']})" if record.get("label") else ""
    lines = [f"compile_time{label}: first and second turbobc.bc(A, "
             f"engine='gpu') per process, empty kernel cache ({record.get('turbobc_path')})",
             f"{'kernel':8s}{'family':9s}{'first s':>9s}{'second s':>10s}{'one-time s':>12s}"
             f"{'cached':>8s}"]
    for r in record["rows"]:
        if "error" in r:
            last = (r["error"].strip().splitlines() or [""])[-1]
            lines.append(f"{r['kernel']:8s}{r['family']:9s}  FAILED: {last[:100]}")
        else:
            lines.append(f"{r['kernel']:8s}{r['family']:9s}{r['first_seconds']:9.2f}"
                         f"{r['second_seconds']:10.3f}{r['one_time_seconds']:12.2f}"
                         f"{r['cache_files']:8d}")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of the record (default bench/results)")
    parser.add_argument("--label", default="", help="e.g. before / after")
    parser.add_argument("--kernels", nargs="*", default=None,
                        help="default: auto and every name in spmv.KERNELS")
    parser.add_argument("--families", nargs="*", default=list(FAMILIES), choices=list(FAMILIES))
    parser.add_argument("--jobs", type=int, default=1,
                        help="processes at a time (default 1: one first call on the machine)")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="time budget of all processes (the rest are recorded as not run)")
    args = parser.parse_args(argv)
    if args.kernels is None:
        import spmv  # the tree under test's, from PYTHONPATH

        args.kernels = ["auto", *spmv.KERNELS]
    began = time.perf_counter()
    rows = run(args.kernels, args.families, jobs=args.jobs, max_seconds=args.max_seconds)
    A = small_graph()
    record = build_record(rows, label=args.label,
                          graph={"name": f"random-{GRAPH_N}-{GRAPH_DEGREE}-{GRAPH_SEED}",
                                 "n": A.shape[0], "nnz": int(A.nnz)})
    record["jobs"] = args.jobs
    record["wall_seconds"] = time.perf_counter() - began
    print(summary(record), flush=True)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from records import RESULTS, write_record

    path = write_record("compile_time", record, results=args.out or RESULTS)
    print(f"record: {path}")


if __name__ == "__main__":
    main()
