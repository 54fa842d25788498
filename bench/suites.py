"""The named suites of ``python -m bench``: each returns one JSON-able record.

- ``cpu-small``: exact BC of small graphs by every engine that runs here (turbobc GPU when a
  device is present, turbobc graphblas, NetworKit when installed, networkx), agreement
  (max relative difference from turbobc graphblas) and time ratios, in one run.
- ``exact``: the same on the exact-BC graphs of docs/benchmarks.md, with caps on n·nnz per
  engine so a slow peer is skipped with the reason instead of running for hours.
- ``single-source``: every GPU kernel and ``auto`` per source (bench/single_source.py's
  measurement) on the single-source graphs of docs/benchmarks.md; GPU only.
- ``memory``: peak device memory against the models up to a billion stored edges
  (bench/memory.py); without a GPU, the model rows only.
- ``cpu_memory``: peak and per-batch resident memory of exact BC of email-Enron on the CPU
  engine, each run in a subprocess (bench/cpu_memory.py); ``--baseline COMMIT`` measures that
  commit's code in the same run, ``--mechanisms`` compares the ways to keep memory flat.

A suite that cannot measure something on this machine says so in the record (``skipped``
with the reason) rather than leaving it out silently.
"""

from __future__ import annotations

import statistics
import time

from bench import graphs, peers
from bench.records import gteps

__all__ = ["SUITES", "compare", "single_source", "memory", "cpu_memory"]

CPU_SMALL_GRAPHS = ("karate", "delaunay_n10.mtx", "email-Eu-core.txt.gz", "power.mtx",
                    "ca-GrQc.txt.gz")
EXACT_GRAPHS = ("ego-Facebook", "myc14", "delaunay_n16.mtx.gz", "road-luxembourg-osm.mtx.gz")
SINGLE_SOURCE_GRAPHS = ("myc16", "kron18", "sw100000", "del16", "road340", "ego-Facebook")

MAX_PAIRS = {"turbobc-gpu": 1e13, "turbobc-graphblas": 5e10,
             "turbobc-graphblas-unfolded": 5e10, "networkit": 5e10, "networkx": 4e7}
"""Largest n·nnz (sources × stored edges) each engine is asked to run exactly: networkx
spends about 1e-7 s per (source, edge) on wide graphs and up to 1e-6 on deep ones, so 4e7
is 4 to 40 s; above the cap the record says
the engine was skipped and why."""


def _warm_up(engine: str) -> None:
    """Load libraries and compile kernels outside the timed calls."""
    peers.run(engine, graphs.graph("karate"))


def compare(graph_names, *, engines=peers.ENGINES, max_pairs=None, repeats=1,
            log=print) -> dict:
    """Exact BC of each graph by each engine; agreement and time ratios.

    Before the engines run on a graph, one untimed single-source call readies the matrix
    (scipy caches its canonical-format check on the object), so that the first engine timed
    does not pay for the others. With ``repeats`` > 1 each engine runs that many times in
    turn (engine after engine, round after round) and its median is kept (``seconds_all``
    lists them).

    Returns
    -------
    dict
        ``engines``: availability per engine (``skipped`` reason where it cannot run);
        ``graphs``: per graph n, nnz, and per engine seconds, GTEPS (n·nnz / t),
        ``max_rel_diff`` from turbobc graphblas, and ``ratio`` = seconds / seconds of the
        fastest turbobc engine (above 1: slower than turbobc), or ``skipped`` with a reason.
    """
    caps = dict(MAX_PAIRS, **(max_pairs or {}))
    status = {}
    for engine in engines:
        ok, reason = peers.available(engine)
        status[engine] = {"available": ok} if ok else {"available": False, "skipped": reason}
        if ok:
            _warm_up(engine)
    rows = []
    for name in graph_names:
        A = graphs.graph(name)
        n, nnz = A.shape[0], A.nnz
        row = {"graph": name, "n": n, "nnz": nnz, "repeats": repeats, "engines": {}}
        values = {}
        import turbobc

        turbobc.bc(A, sources=[0], engine="graphblas", directed=False)  # ready A, untimed
        runnable = []
        for engine in engines:
            if not status[engine]["available"]:
                row["engines"][engine] = {"skipped": status[engine]["skipped"]}
            elif n * nnz > caps[engine]:
                row["engines"][engine] = {"skipped": f"n·nnz = {n * nnz:.3g} is above this "
                                          f"engine's cap {caps[engine]:.3g} (--max-pairs)"}
            else:
                runnable.append(engine)
        times = {engine: [] for engine in runnable}
        for _ in range(repeats if runnable else 0):
            for engine in runnable:
                out = peers.run(engine, A)
                values[engine] = out.pop("values")
                times[engine].append(out["seconds"])
                row["engines"][engine] = out
        for engine in runnable:
            out = row["engines"][engine]
            out["seconds_all"] = times[engine]
            out["seconds"] = statistics.median(times[engine])
            out["gteps"] = gteps(n, nnz, out["seconds"])
        reference = values.get("turbobc-graphblas")
        ours = [row["engines"][e]["seconds"] for e in ("turbobc-gpu", "turbobc-graphblas")
                if e in values]
        best = min(ours) if ours else None
        for engine, vals in values.items():
            rec = row["engines"][engine]
            if reference is not None:
                rec["max_rel_diff"] = peers.max_rel_diff(vals, reference)
            if best:
                rec["ratio"] = rec["seconds"] / best
        rows.append(row)
        log(_row_line(row))
    return {"suite": "compare", "engines": status, "graphs": rows}


def _row_line(row: dict) -> str:
    parts = []
    for engine, rec in row["engines"].items():
        if "seconds" in rec:
            parts.append(f"{engine} {rec['seconds']:.3f} s (x{rec.get('ratio', float('nan')):.2f},"
                         f" diff {rec.get('max_rel_diff', float('nan')):.1e})")
        else:
            parts.append(f"{engine} skipped")
    return f"{row['graph']:28s} n={row['n']:8d} nnz={row['nnz']:10d}  " + "; ".join(parts)


def single_source(graph_names=SINGLE_SOURCE_GRAPHS, *, repeats: int = 7, num_sources: int = 4,
                  log=print) -> dict:
    """Every GPU kernel and ``auto`` per source (bench/single_source.py's measurement)."""
    ok, reason = peers.available("turbobc-gpu")
    if not ok:
        return {"suite": "single-source", "skipped": reason, "graphs": []}
    from bench import single_source as ss

    rows = []
    for name in graph_names:
        rows.append(ss.bench_graph(name, repeats, num_sources, None))
        auto = rows[-1]["kernels"]["auto"]
        log(f"{name:14s} auto -> {auto['kernel']:7s} {auto['ms_per_source']:8.3f} ms/src "
            f"{auto['mteps']:9.1f} MTEPS; best {rows[-1]['best_kernel']} "
            f"{rows[-1]['best_ms']:.3f} ms")
    return {"suite": "single-source", "skipped": None, "graphs": rows}


def memory(*, scales=None, budget_seconds: float = 300.0, log=print, out=None) -> dict:
    """Peak device memory against the models (bench/memory.py); with ``out``, the record so
    far is written there after each measured point, and the record names that file
    (``_path``) so that the final write replaces it."""
    from bench import memory as mem
    from bench.records import write_record

    written = []

    def checkpoint(record: dict) -> None:
        written[:] = [write_record("memory", dict(record, suite="memory"), out,
                                   path=written[0] if written else None)]

    record = mem.run(scales=scales, budget_seconds=budget_seconds, log=log,
                     checkpoint=None if out is None else checkpoint)
    if written:
        record["_path"] = written[0]
    return record


def cpu_memory(*, baseline: str | None = None, mechanisms: bool = False, log=print) -> dict:
    """Resident memory of exact BC of email-Enron on the CPU engine (bench/cpu_memory.py)."""
    from bench import cpu_memory as cm

    return cm.run(baseline=baseline, mechanisms=cm.MECHANISM_SOURCES if mechanisms else None,
                  log=log)


SUITES = {
    "cpu-small": lambda args, log: compare(args.graphs or CPU_SMALL_GRAPHS,
                                           max_pairs=args.max_pairs, repeats=args.repeats,
                                           log=log),
    "exact": lambda args, log: compare(args.graphs or EXACT_GRAPHS, max_pairs=args.max_pairs,
                                       repeats=args.repeats, log=log),
    "single-source": lambda args, log: single_source(args.graphs or SINGLE_SOURCE_GRAPHS,
                                                     log=log),
    "memory": lambda args, log: memory(scales=args.scales, budget_seconds=args.budget,
                                       log=log, out=args.out),
    "cpu_memory": lambda args, log: cpu_memory(baseline=args.baseline,
                                               mechanisms=args.mechanisms, log=log),
}
"""Suite name -> function of the parsed arguments and a log function."""


def timed(suite: str, args, log=print) -> dict:
    """Run one suite; the record gets the suite's name and wall seconds."""
    start = time.perf_counter()
    record = SUITES[suite](args, log)
    record["suite"] = suite
    record["wall_seconds"] = time.perf_counter() - start
    return record
