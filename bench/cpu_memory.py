"""Peak resident memory of exact BC on the CPU engine, batch by batch, before and after.

    python -m bench.cpu_memory                              # this tree: full email-Enron + subset
    python -m bench.cpu_memory --baseline be62225           # the same runs of that commit too
    python -m bench.cpu_memory --subset 4000 --no-full      # only the first 4,000 sources
    python -m bench.cpu_memory --mechanisms --no-full       # malloc_trim, arenas, gc compared
    python -m bench cpu_memory --baseline be62225           # as a suite of python -m bench

Each run is exact BC (``engine="graphblas"``, unnormalized) of email-Enron in a fresh Python
subprocess, so the peak resident set is that run's alone. The child imports turbobc from the
tree it is given (this checkout, or ``git archive`` of ``--baseline`` into a temporary
directory), passes ``turbobc.bc`` a recorder as ``progress=`` (an object with ``update(n)``,
advanced after every batch) that notes the resident set (VmRSS of /proc/self/status) then, and
samples VmRSS every 0.1 s from a thread; a tree whose ``bc`` takes only ``progress=True/False``
runs without the per-batch record. The mechanism runs set their knobs with ``turbobc.tuning``
and a ``memory_limit``: the child sets no attribute of a turbobc module. The parent reads the
child's peak (``ru_maxrss``) and CPU seconds from ``os.wait4``.

The record (``bench/results/cpu_memory-<UTC time>.json``) holds per tree and run: seconds
(wall, of the ``turbobc.bc`` call), the child's CPU seconds, peak RSS in bytes, batch size,
number of batches, RSS after each batch (flatness), and the largest relative difference of the
values from the baseline's (or, without a baseline, from nothing: ``null``). Memory is in bytes
(bench/records.py).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.records import RESULTS, write_record

__all__ = ["GRAPH", "run", "summary"]

GRAPH = Path(__file__).resolve().parents[2] / "shared" / "data" / "email-Enron.txt.gz"
"""The issue's graph: email-Enron, 36,692 vertices (read undirected, as the issue measured)."""

REPO = Path(__file__).resolve().parents[1]

SUBSET = 4000
"""Sources of the subset run (the first ones in vertex order): enough batches to show growth."""

MECHANISM_SOURCES = 3000
"""Sources of each mechanism run (``--mechanisms``): four batches of the old size, 914."""

OLD_BATCH = {"cpu_batch_cap": 2**25}
"""Knobs of every mechanism run: the old cap, 2^25 slots (914 sources of email-Enron)."""

OLD_BATCH_MEMORY_LIMIT = 2**40
"""``memory_limit`` of the mechanism runs: plan as if 1 TiB were free, so that the memory
model never lowers the batch below the old cap (the batch is the same on every machine)."""

NO_COLLECT = {"cpu_collect_above_slots": math.inf}
"""Knobs that turn the engine's ``gc.collect()`` after each batch off."""

MECHANISMS = {
    "none": (NO_COLLECT, {}, False),
    "malloc_trim(0) after each batch": (NO_COLLECT, {}, True),
    "MALLOC_ARENA_MAX=1": (NO_COLLECT, {"MALLOC_ARENA_MAX": "1"}, False),
    "MALLOC_MMAP_THRESHOLD_=131072": (NO_COLLECT, {"MALLOC_MMAP_THRESHOLD_": "131072"}, False),
    "gc.collect() after each batch": ({}, {}, False),
    "gc.collect() and malloc_trim(0)": ({}, {}, True),
}
"""Ways to keep the resident set flat, each run on this tree at the old batch size (label:
knobs for ``turbobc.tuning`` on top of :data:`OLD_BATCH`, environment variables, whether the
child calls glibc's ``malloc_trim(0)`` after each batch). The engine keeps ``gc.collect()``
(turbobc/engines/graphblas/memory.py)."""

_CHILD = r"""
import contextlib, ctypes, json, os, sys, threading, time
root, graph, subset, out, limit, knobs, trim = sys.argv[1:8]
sys.path.insert(0, root)
import numpy as np
import turbobc
knobs = json.loads(knobs)  # json reads Infinity as math.inf
trim = ctypes.CDLL("libc.so.6").malloc_trim if trim == "1" else None

def rss():
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024

began = time.perf_counter()
samples, batches = [], []

class Recorder:
    # bc(progress=...) advances it by the sources of each finished batch: note VmRSS then.
    def update(self, k):
        if trim is not None:
            trim(0)
        batches.append((int(k), rss()[0], time.perf_counter() - began))

A, _ = turbobc.read_graph(graph, directed=False)
sources = None if subset == "all" else list(range(int(subset)))
kwargs = {} if limit == "none" else {"memory_limit": int(limit)}
done = threading.Event()

def sample():
    while not done.wait(0.1):
        samples.append((time.perf_counter() - began, rss()[0]))

def run(progress):
    tuned = turbobc.tuning(**knobs) if knobs else contextlib.nullcontext()
    with tuned:
        start = time.perf_counter()
        values = turbobc.bc(A, engine="graphblas", sources=sources, normalized=False,
                            progress=progress, **kwargs)
        return values, time.perf_counter() - start

threading.Thread(target=sample, daemon=True).start()
rss_before = rss()[0]
try:
    values, seconds = run(Recorder())
except TypeError as exc:  # a tree whose bc takes progress=True/False only: no batch record
    if "progress" not in str(exc):
        raise
    batches = None
    values, seconds = run(False)
done.set()
np.save(os.path.join(out, "values.npy"), values)
with open(os.path.join(out, "run.json"), "w") as f:
    json.dump({"n": A.shape[0], "nnz": int(A.nnz), "seconds": seconds,
               "rss_before_bytes": rss_before, "vm_hwm_bytes": rss()[1],
               "batches": batches, "samples": samples}, f)
"""


def _tree(commit: str | None, workdir: Path) -> tuple[Path, str]:
    """The source tree to import turbobc from: this checkout, or ``commit`` extracted."""
    if commit is None:
        return REPO, "working tree"
    target = workdir / f"tree-{commit}"
    target.mkdir()
    archive = subprocess.run(["git", "archive", commit, "turbobc", "spmv"], cwd=REPO,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    full = subprocess.run(["git", "rev-parse", commit], cwd=REPO, capture_output=True,
                          text=True, check=True).stdout.strip()
    return target, full


def _child(root: Path, graph: Path, subset: int | None, limit: int | None,
           workdir: Path, env: dict | None = None, knobs: dict | None = None,
           trim: bool = False) -> tuple[dict, np.ndarray]:
    """One run in a fresh interpreter; its record and BC values. ``knobs`` are set with
    ``turbobc.tuning`` around the call; ``trim``: glibc's ``malloc_trim(0)`` after each batch."""
    out = Path(tempfile.mkdtemp(dir=workdir))
    argv = [sys.executable, "-c", _CHILD, str(root), str(graph),
            "all" if subset is None else str(subset), str(out),
            "none" if limit is None else str(limit), json.dumps(knobs or {}),
            "1" if trim else "0"]
    child_env = dict(os.environ, **(env or {}))
    child_env.pop("PYTHONPATH", None)
    with open(out / "stderr.txt", "w") as err:
        proc = subprocess.Popen(argv, cwd=str(out), stdout=err, stderr=err, env=child_env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"the child run failed ({proc.returncode}):\n"
                           + (out / "stderr.txt").read_text()[-3000:])
    record = json.loads((out / "run.json").read_text())
    record["peak_rss_bytes"] = usage.ru_maxrss * 1024  # Linux reports kilobytes
    # CPU seconds of the whole child (reading the graph included): steadier than wall time
    # when other work shares the machine.
    record["child_cpu_seconds"] = usage.ru_utime + usage.ru_stime
    batches = record.pop("batches")  # None: that tree's bc could not report batches
    sizes = [k for k, _, _ in batches or []]
    record["batch_size"] = (max(sizes) if sizes else 0) if batches is not None else None
    record["num_batches"] = len(sizes) if batches is not None else None
    record["rss_after_batch_bytes"] = [r for _, r, _ in batches or []]
    samples = record.pop("samples")
    step = max(1, len(samples) // 200)  # a timeline of at most about 200 points
    record["rss_timeline"] = [[round(t, 2), r] for t, r in samples[::step]]
    return record, np.load(out / "values.npy")


def _max_rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))) if a.size else 0.0


def run(*, baseline: str | None = None, subset: int | None = SUBSET, full: bool = True,
        graph: Path = GRAPH, memory_limit: int | None = None, env: dict | None = None,
        mechanisms: int | None = None, log=print) -> dict:
    """Run the subset and/or full exact-BC measurements for this tree (and ``baseline``).

    Parameters
    ----------
    baseline : str, optional
        A commit whose code is measured first, in the same way (the "before").
    subset : int, optional
        Also run the first ``subset`` sources (None: no subset run).
    full : bool
        Run exact BC from every vertex.
    graph : pathlib.Path
        The graph file (email-Enron by default).
    memory_limit : int, optional
        Passed to ``turbobc.bc`` in this tree's runs (not to the baseline's).
    env : dict, optional
        Extra environment variables for the children (e.g. ``MALLOC_ARENA_MAX``).
    mechanisms : int, optional
        Also run each of :data:`MECHANISMS` on this tree with this many sources.

    Returns
    -------
    dict
        ``trees``: per tree (``before``/``after``) its commit and ``runs`` keyed by
        ``subset-<k>`` / ``full``; ``max_rel_diff`` per run between after and before.
    """
    if not graph.exists():
        return {"skipped": f"{graph} is not present", "trees": {}}
    kinds = ([f"subset-{subset}"] if subset else []) + (["full"] if full else [])
    trees, values = {}, {}
    with tempfile.TemporaryDirectory(prefix="cpu_memory-") as tmp:
        workdir = Path(tmp)
        for label, commit in (("before", baseline), ("after", None)):
            if label == "before" and baseline is None:
                continue
            root, name = _tree(commit, workdir)
            trees[label] = {"tree": name, "runs": {}}
            if label == "after" and mechanisms:
                trees[label]["mechanisms"] = {}
                for mech, (knobs, extra, trim) in MECHANISMS.items():
                    rec, _ = _child(root, graph, mechanisms, OLD_BATCH_MEMORY_LIMIT, workdir,
                                    dict(env or {}, **extra), dict(OLD_BATCH, **knobs), trim)
                    rec["sources"] = mechanisms
                    trees[label]["mechanisms"][mech] = rec
                    log(f"{mech:34s} {rec['seconds']:7.1f} s  peak RSS "
                        f"{rec['peak_rss_bytes'] / 2**30:5.2f} GiB  RSS after batches (GiB): "
                        + " ".join(f"{r / 2**30:.2f}" for r in rec["rss_after_batch_bytes"]))
            for kind in kinds:
                k = None if kind == "full" else subset
                rec, vals = _child(root, graph, k, memory_limit if label == "after" else None,
                                   workdir, env)
                trees[label]["runs"][kind] = rec
                values[label, kind] = vals
                log(f"{label:6s} {kind:12s} {rec['seconds']:8.1f} s  peak RSS "
                    f"{rec['peak_rss_bytes'] / 2**30:6.2f} GiB  batch {rec['batch_size']} x "
                    f"{rec['num_batches']}  RSS after batches (GiB): "
                    + " ".join(f"{r / 2**30:.2f}" for r in rec["rss_after_batch_bytes"][:12])
                    + (" ..." if len(rec["rss_after_batch_bytes"]) > 12 else ""))
    diffs = {kind: (_max_rel_diff(values["after", kind], values["before", kind])
                    if ("before", kind) in values else None) for kind in kinds}
    for kind, diff in diffs.items():
        if diff is not None:
            log(f"{kind}: max relative difference after vs before {diff:.2e}")
    first = next(iter(trees.values()))["runs"]
    any_run = next(iter(first.values()))
    return {"graph": graph.name, "n": any_run["n"], "nnz": any_run["nnz"],
            "memory_limit": memory_limit, "child_env": env or {}, "trees": trees,
            "max_rel_diff": diffs}


def _or_dash(value) -> str:
    return "-" if value is None else str(value)


def summary(record: dict) -> str:
    """Markdown table of a record: one row per tree and run."""
    head = (f"### cpu_memory: exact BC of {record.get('graph')} on the graphblas engine\n\n")
    if record.get("skipped"):
        return head + f"Skipped: {record['skipped']}.\n"
    rows = ["| tree | run | seconds | peak RSS GiB | batch | batches | RSS first/last batch GiB"
            " | max rel diff |", "|---|---|---|---|---|---|---|---|"]
    for label, tree in record["trees"].items():
        for kind, rec in tree["runs"].items():
            after = rec["rss_after_batch_bytes"]
            diff = record["max_rel_diff"].get(kind) if label == "after" else None
            rows.append(f"| {label} ({tree['tree'][:10]}) | {kind} | {rec['seconds']:.1f} | "
                        f"{rec['peak_rss_bytes'] / 2**30:.2f} | {_or_dash(rec['batch_size'])} | "
                        f"{_or_dash(rec['num_batches'])} | "
                        + (f"{after[0] / 2**30:.2f} / {after[-1] / 2**30:.2f}" if after else "-")
                        + " | "
                        f"{'-' if diff is None else f'{diff:.1e}'} |")
    mech = record["trees"].get("after", {}).get("mechanisms")
    if mech:
        rows += ["", "| mechanism (after tree, old batch size) | sources | seconds | peak RSS GiB "
                 "| RSS after each batch GiB |", "|---|---|---|---|---|"]
        for name, rec in mech.items():
            rows.append(f"| {name} | {rec['sources']} | {rec['seconds']:.1f} | "
                        f"{rec['peak_rss_bytes'] / 2**30:.2f} | "
                        + " ".join(f"{r / 2**30:.2f}" for r in rec["rss_after_batch_bytes"])
                        + " |")
    return head + "\n".join(rows) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=None, help="commit measured as 'before'")
    parser.add_argument("--subset", type=int, default=SUBSET,
                        help="sources of the subset run (0: none)")
    parser.add_argument("--no-full", action="store_true", help="skip the full exact run")
    parser.add_argument("--memory-limit", type=int, default=None,
                        help="memory_limit= for this tree's runs, in bytes")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="environment variable for the child runs")
    parser.add_argument("--mechanisms", type=int, nargs="?", const=MECHANISM_SOURCES,
                        default=None, metavar="SOURCES",
                        help="also compare the ways to keep memory flat (MECHANISMS), each on "
                             f"this many sources (default {MECHANISM_SOURCES})")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.env)
    start = time.perf_counter()
    record = run(baseline=args.baseline, subset=args.subset or None, full=not args.no_full,
                 memory_limit=args.memory_limit, env=env, mechanisms=args.mechanisms)
    record["suite"] = "cpu_memory"
    record["wall_seconds"] = time.perf_counter() - start
    path = write_record("cpu_memory", record, args.results)
    text = summary(record)
    path.with_suffix(".md").write_text(text)
    print(f"\n{text}\nrecord: {path}")


if __name__ == "__main__":
    main()
