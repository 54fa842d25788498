"""A person's first call against the tenth: every GPU family and the CPU engine, cold and warm.

Each case runs in three steps, each a fresh Python process with the same two cache folders
(``CUPY_CACHE_DIR`` and ``NUMBA_CACHE_DIR`` pointed at new empty folders per case, and
``TURBOBC_CACHE_DIR`` with them, where turbobc unpacks its shipped kernels):

1. **cold**: the caches empty, what a person meets on a fresh install: ``import turbobc``
   (timed), CuPy's own start for a GPU case (a first ``cupy.zeros(1)`` and a synchronize:
   the CUDA context; timed apart, not counted in the first call), the first call (timed), then
2. the **second** call in the same process (timed): the warm figure;
3. **cached**: a new process with the caches that step 1 wrote, its first call and second call.

Beside the seconds, each step records what compiled during its first call: the modules CuPy
compiled (the files its first call added to ``CUPY_CACHE_DIR``, each named by its first kernel:
CuPy's own elementwise and reduction kernels, ``cupy_*``, apart from turbobc's compiled through
NVRTC, whose names are C++-mangled), and numba's compiles (function and seconds: the CPU functions'
compiles at first use, timed by turbobc/_compiled.py), and whether the first call loaded
numba or python-graphblas. The run's facts (``family``, ``compile_seconds``) come from
:func:`turbobc.run_bc`.

The cases (:data:`CASES`): the GPU families lanes (ego-Facebook), frontiers (delaunay_n16),
layers (weighted road-luxembourg-osm, integer lengths 1..100), single (one source of
road-luxembourg-osm), approximate (ego-Facebook, epsilon = 0.01) and edge (edge BC of
ego-Facebook); the CPU engine on ego-Facebook, power and road-minnesota. GPU cases skip with
the reason where CuPy sees no device; each CPU case also times NetworKit's exact Betweenness
in a fresh process on the same cores (its import, first and second call: ``networkit``). The
issue's bars (:data:`BARS`) are checked in each row:
``extra_cold`` = first - second call of step 1, ``extra_cached`` = first call of step 3 -
second call of step 1; the CPU rows count ``import turbobc`` in too.

Run (from the repository root; graphs from bench/graphs.py's folders)::

    python bench/cold_start.py                       # every case
    python bench/cold_start.py --cases lanes cpu     # some

The record goes to ``bench/results/cold_start-<UTC time>.json`` (bench/records.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graphs  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

__all__ = ["CASES", "BARS", "case_graph", "measure_case", "check_bars", "main"]

CASES = {
    "lanes": {"graph": "ego-Facebook", "device": "gpu", "call": "bc", "kwargs": {}},
    "frontiers": {"graph": "delaunay_n16.mtx.gz", "device": "gpu", "call": "bc", "kwargs": {}},
    "layers": {"graph": "road-luxembourg-osm.mtx.gz", "lengths": True, "device": "gpu",
               "call": "bc", "kwargs": {"weight": True}},
    "single": {"graph": "road-luxembourg-osm.mtx.gz", "device": "gpu", "call": "bc",
               "kwargs": {"sources": [0]}},
    "approximate": {"graph": "ego-Facebook", "device": "gpu", "call": "bc",
                    "kwargs": {"epsilon": 0.01, "seed": 1}},
    "edge": {"graph": "ego-Facebook", "device": "gpu", "call": "edge_bc", "kwargs": {}},
    "cpu": {"graph": "ego-Facebook", "device": "cpu", "call": "bc", "kwargs": {}},
    "cpu-power": {"graph": "power.mtx", "device": "cpu", "call": "bc", "kwargs": {}},
    "cpu-road-minnesota": {"graph": "road-minnesota.mtx", "device": "cpu", "call": "bc",
                           "kwargs": {}},
}
"""Case -> its graph (a name of bench/graphs.py), the engine kind, the public call and its
arguments (``engine`` is added: "gpu" or "cpu")."""

BARS = {
    "gpu": {"extra_cold": 0.5, "extra_cached": 0.3},
    "cpu": {"extra_cold": 3.0, "extra_cached": 0.5},
}
"""The cold-start issue's bars, seconds more than the warm (second) call: GPU after CuPy's
own start; CPU with ``import turbobc`` counted in the cold figure."""

CHILD_TIMEOUT_S = 300

_CHILD = r"""
import json, os, re, sys, time
began = time.perf_counter()
import scipy.sparse as sp
import turbobc
import_seconds = time.perf_counter() - began
import numpy as np
path, device, call, kwargs = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
A = sp.csr_array(sp.load_npz(path))
events = {"nvrtc_turbobc": [], "nvrtc_cupy": [], "numba": []}
cupy_start_seconds = None
if device == "gpu":
    import cupy
    began = time.perf_counter()
    cupy.zeros(1)
    cupy.cuda.Device().synchronize()
    cupy_start_seconds = time.perf_counter() - began

    def cache_files():  # CuPy's cache files: one per module it compiled
        folder = os.environ["CUPY_CACHE_DIR"]
        return {f for f in os.listdir(folder)} if os.path.isdir(folder) else set()

    cached_before = cache_files()
run = {"bc": turbobc.run_bc, "edge_bc": turbobc.run_edge_bc}[call]
kwargs["engine"] = device
seconds, facts = [], None
for i in range(2):
    began = time.perf_counter()
    result = run(A, **kwargs)
    seconds.append(time.perf_counter() - began)
    if i == 0:
        facts = {key: value for key, value in result.facts.items()
                 if isinstance(value, (int, float, str, bool)) or value is None}
        if device == "gpu":  # what CuPy compiled for this call: its new cache files, named
            folder = os.environ["CUPY_CACHE_DIR"]
            for name in sorted(cache_files() - cached_before):
                data = open(os.path.join(folder, name), "rb").read()
                found = re.search(rb"(cupy_\w+|_Z\w+)", data)
                kind = ("nvrtc_cupy" if found and found.group(1).startswith(b"cupy_")
                        else "nvrtc_turbobc")
                events[kind].append([found.group(1).decode() if found else name, 0.0])
        try:  # numba's compiles at first use, timed by turbobc (an older tree has no log)
            from turbobc._compiled import compile_log
        except ImportError:
            compile_log = list
        events["numba"] = [[name + ("" if compiled else " (cache)"), seconds]
                           for name, _, seconds, compiled in compile_log()]
        first_events = json.loads(json.dumps(events))
        loaded = {name: name in sys.modules for name in ("numba", "graphblas")}
print(json.dumps({"import_seconds": import_seconds, "cupy_start_seconds": cupy_start_seconds,
                  "loaded_by_first_call": loaded,
                  "first_seconds": seconds[0], "second_seconds": seconds[1],
                  "events": first_events, "facts": facts,
                  "checksum": float(abs(result.values).sum())}))
"""


def case_graph(name: str) -> sp.csr_array:
    """The graph of case ``name`` as the child reads it (lengths where the case asks)."""
    case = CASES[name]
    A = graphs.graph(case["graph"])
    if case.get("lengths"):
        from exact_gpu import with_random_lengths

        A = with_random_lengths(A)
    return sp.csr_array(A)


_NETWORKIT = r"""
import json, sys, time
began = time.perf_counter()
import networkit as nk
import scipy.sparse as sp
import_seconds = time.perf_counter() - began
A = sp.coo_matrix(sp.triu(sp.load_npz(sys.argv[1]), k=1))
G = nk.Graph(A.shape[0], weighted=False, directed=False)
for u, v in zip(A.row.tolist(), A.col.tolist()):
    G.addEdge(u, v)
seconds = []
for _ in range(2):
    began = time.perf_counter()
    nk.centrality.Betweenness(G, normalized=True).run()
    seconds.append(time.perf_counter() - began)
print(json.dumps({"import_seconds": import_seconds, "first_seconds": seconds[0],
                  "second_seconds": seconds[1], "threads": nk.getMaxNumberOfThreads()}))
"""


def networkit_first_call(graph_path: Path, timeout: float = CHILD_TIMEOUT_S) -> dict | None:
    """NetworKit's exact Betweenness of the same undirected graph in a fresh process on the
    same cores: its import, first and second call (None where networkit is not installed)."""
    try:
        proc = subprocess.run([sys.executable, "-c", _NETWORKIT, str(graph_path)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    if proc.returncode != 0:
        if "No module named 'networkit'" in proc.stderr:
            return None
        return {"error": proc.stderr[-1000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _child(graph_path: Path, case: dict, caches: Path, timeout: float) -> dict:
    """One fresh process with the case's cache folders: its measurements, or ``error``."""
    env = dict(os.environ, CUPY_CACHE_DIR=str(caches / "cupy"),
               NUMBA_CACHE_DIR=str(caches / "numba"), TURBOBC_CACHE_DIR=str(caches / "turbobc"))
    env.pop("CUPY_CACHE_IN_MEMORY", None)
    began = time.perf_counter()
    try:
        # cwd: the cache folder, so that `python -c` imports turbobc from PYTHONPATH
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(graph_path), case["device"],
                               case["call"], json.dumps(case["kwargs"])], cwd=str(caches),
                              env=env, capture_output=True, text=True, timeout=timeout)
        out = proc.stdout.strip().splitlines()
        row = (json.loads(out[-1]) if proc.returncode == 0 and out else
               {"error": f"exit {proc.returncode}: {(proc.stdout + proc.stderr)[-2000:]}"})
        row["stderr_tail"] = proc.stderr.strip().splitlines()[-3:]
    except subprocess.TimeoutExpired:
        row = {"error": f"timed out after {timeout} s"}
    row["child_seconds"] = time.perf_counter() - began
    return row


def _summarized(events: dict) -> dict:
    """Counts and seconds of a step's compile events, with the slowest names."""
    out = {}
    for key in ("nvrtc_turbobc", "nvrtc_cupy", "numba"):
        items = events.get(key, [])
        out[key] = {"count": len(items), "seconds": sum(s for _, s in items),
                    "slowest": sorted(items, key=lambda item: -item[1])[:40]}
    return out


def measure_case(name: str, workdir: Path, timeout: float = CHILD_TIMEOUT_S) -> dict:
    """Steps 1-3 of case ``name`` (module docstring): the row of the record."""
    case = CASES[name]
    row = {"case": name, "graph": case["graph"], "device": case["device"], "call": case["call"],
           "kwargs": case["kwargs"]}
    if case["device"] == "gpu" and not graphs.device_present():
        return dict(row, skipped="no CUDA device seen by CuPy")
    A = case_graph(name)
    row.update(n=int(A.shape[0]), nnz=int(A.nnz))
    caches = Path(tempfile.mkdtemp(prefix=f"cold-{name}-", dir=workdir))
    graph_path = caches / "graph.npz"
    sp.save_npz(graph_path, sp.csr_matrix(A))
    for step in ("cold", "cached"):
        raw = _child(graph_path, case, caches, timeout)
        if "events" in raw:
            raw["events"] = _summarized(raw["events"])
        row[step] = raw
    if case["device"] == "cpu":  # the peer, its first call in a fresh process too
        peer = networkit_first_call(graph_path, timeout)
        if peer is not None:
            row["networkit"] = peer
    return dict(row, **check_bars(row))


def check_bars(row: dict) -> dict:
    """The row's extra seconds over the warm call and whether each meets its bar."""
    cold, cached = row.get("cold", {}), row.get("cached", {})
    if "error" in cold or "error" in cached or "first_seconds" not in cold:
        return {}
    warm = cold["second_seconds"]
    extra_cold = cold["first_seconds"] - warm
    if row["device"] == "cpu":
        extra_cold += cold["import_seconds"]
    extra_cached = cached["first_seconds"] - warm
    bars = BARS[row["device"]]
    return {"warm_seconds": warm, "extra_cold": extra_cold, "extra_cached": extra_cached,
            "meets_cold": extra_cold <= bars["extra_cold"],
            "meets_cached": extra_cached <= bars["extra_cached"]}


def _line(row: dict) -> str:
    if "skipped" in row:
        return f"{row['case']:20s} skipped: {row['skipped']}"
    cold, cached = row["cold"], row["cached"]
    if "extra_cold" not in row:
        error = cold.get("error") or cached.get("error") or "?"
        return f"{row['case']:20s} FAILED: {error[-300:]}"
    ev = cold["events"]
    return (f"{row['case']:20s} import {cold['import_seconds']:5.2f}  start "
            f"{(cold['cupy_start_seconds'] or 0):5.2f}  first {cold['first_seconds']:6.2f}  "
            f"second {row['warm_seconds']:6.3f}  cached {cached['first_seconds']:6.3f}  "
            f"extra {row['extra_cold']:5.2f}/{row['extra_cached']:5.2f} "
            f"({'ok' if row['meets_cold'] else 'over'}/{'ok' if row['meets_cached'] else 'over'})"
            f"  nvrtc ours {ev['nvrtc_turbobc']['count']} {ev['nvrtc_turbobc']['seconds']:.2f} s,"
            f" cupy {ev['nvrtc_cupy']['count']} {ev['nvrtc_cupy']['seconds']:.2f} s, numba "
            f"{ev['numba']['count']} {ev['numba']['seconds']:.2f} s"
            + (f"; NetworKit first {row['networkit']['first_seconds']:.3f} s"
               if "first_seconds" in row.get("networkit", {}) else ""))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of the record (default bench/results)")
    parser.add_argument("--label", default="", help="e.g. before / after")
    args = parser.parse_args(argv)
    rows = []
    began = time.perf_counter()
    path = None
    with tempfile.TemporaryDirectory(prefix="cold_start-") as tmp:
        for name in args.cases:
            row = measure_case(name, Path(tmp))
            print(_line(row), flush=True)
            rows.append(row)
            # rewritten after every case: a run cut by its time limit keeps what it measured
            record = {"label": args.label, "bars": BARS, "rows": rows,
                      "wall_seconds": time.perf_counter() - began,
                      "numba_threads": os.environ.get("NUMBA_NUM_THREADS")}
            path = write_record("cold_start", record, results=args.out or RESULTS, path=path)
    print(f"record: {path}")


if __name__ == "__main__":
    main()
