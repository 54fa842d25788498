"""``turbobc.DynamicBC``'s updates against recomputing on the same engine and against
NetworKit's ``DynBetweenness`` (issue 50; docs/dynamic.md).

For each graph (undirected, bench/graphs.py), on one engine:

- ``recompute``: ``turbobc.bc(A, engine=E)`` end to end, the median of ``--recomputes`` runs
  and of a fresh ``bc()`` of the changed graph right after every update (which also checks
  the update's values: ``max_rel_diff``, relative to the largest value; and gives each
  update's ``over_recompute_beside``, its seconds over that recompute's, which a shared
  machine's load moves less than a ratio of medians);
- ``initial``: ``DynamicBC(A, engine=E)``;
- three kinds of single-edge updates, ``--updates`` of each, every one undone right after
  (untimed) so that each starts from the graph read: ``local_insertion`` (u and v two hops
  apart: two neighbours of a vertex that are not adjacent), ``deletion`` (an edge of the
  graph) and ``random_insertion`` (two vertices drawn at random, not adjacent): the seconds
  of each ``update`` (median and all), the sources it swept again (on both graphs
  together), whether it recomputed, its reason;
- NetworKit's ``DynBetweenness`` on ``--threads`` threads: ``run()`` once, then the same
  insertions (``G.addEdge``, then ``update(GraphEvent(EDGE_ADDITION, u, v, 1))``; it takes
  insertions only, so they accumulate), median seconds per update. It keeps all-pairs
  distances and path counts, 16 n² bytes at least: it is skipped, saying so, when that passes
  half the memory available. Deletions have no NetworKit row (``DynBetweenness`` refuses
  them); its static ``Betweenness`` is timed instead where n · stored edges is below
  ``--static-pairs``.

Ratios: recompute seconds / update median (above 1: the update is faster), NetworKit update
median / turbobc update median. ``goals`` restates issue 50's targets for each row.

Usage:

    python bench/dynamic.py --engine cpu --graphs power.mtx ego-Facebook road-minnesota.mtx
    # the GPU record: an H200 host, NetworKit on 16 threads of it; one graph per call fits
    # the ten minutes of a device call (each call writes its own record)
    python bench/dynamic.py --engine gpu --threads 16 --graphs road-luxembourg-osm.mtx.gz \
        delaunay_n16.mtx.gz kron18 ego-Twitter-undirected.mtx.gz power.mtx ego-Facebook

Writes ``bench/results/dynamic-<UTC time>.json`` (bench/records.py), rewritten after each
row so that a run cut short keeps what it finished.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

import turbobc  # noqa: E402

KINDS = ("local_insertion", "deletion", "random_insertion")
GOALS = {"local_insertion": "update at least 10x faster than recomputing on the GPU, and 10x "
                            "NetworKit's DynBetweenness; on the CPU engine at most half a "
                            "fresh bc() on power",
         "deletion": "update at least 10x faster than recomputing on the GPU",
         "random_insertion": "never slower than recomputing + 10%"}
NETWORKIT_BYTES_PER_PAIR = 16
"""DynBetweenness keeps a distance and a path count (8 bytes each) per ordered pair."""


def _networkit():
    with warnings.catch_warnings():  # networkit imports IPython's deprecated display module
        warnings.simplefilter("ignore", DeprecationWarning)
        import networkit

    return networkit


def _available_bytes() -> int:
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _adjacent(A, u: int, v: int) -> bool:
    row = A.indices[A.indptr[u]:A.indptr[u + 1]]
    return bool(np.any(row == v))


def draw_edges(A, kind: str, count: int, rng) -> list[tuple[int, int]]:
    """``count`` single-edge changes of ``kind`` on the undirected graph ``A``."""
    n, degree, picked = A.shape[0], np.diff(A.indptr), []
    while len(picked) < count:
        if kind == "local_insertion":
            w = int(rng.integers(n))
            if degree[w] < 2:
                continue
            u, v = (int(x) for x in rng.choice(A.indices[A.indptr[w]:A.indptr[w + 1]], 2,
                                              replace=False))
            if _adjacent(A, u, v):
                continue
        elif kind == "deletion":
            e = int(rng.integers(A.nnz))
            u = int(np.searchsorted(A.indptr, e, side="right") - 1)
            v = int(A.indices[e])
        else:
            u, v = (int(x) for x in rng.integers(n, size=2))
            if u == v or _adjacent(A, u, v):
                continue
        picked.append((min(u, v), max(u, v)))
    return picked


def _rel_diff(ours: np.ndarray, theirs: np.ndarray) -> float:
    scale = float(np.abs(theirs).max()) if theirs.size else 0.0
    return float(np.abs(ours - theirs).max() / scale) if scale else 0.0


def _timed_bc(A, engine: str) -> tuple[float, np.ndarray]:
    began = time.perf_counter()
    values = turbobc.bc(A, engine=engine)
    return time.perf_counter() - began, values


def turbobc_rows(name: str, A, engine: str, updates: int, recomputes: int, seed: int,
                 row: dict) -> dict:
    """The recompute, initial and update figures of one graph (into ``row``); returns the
    drawn changes per kind."""
    _timed_bc(A, engine)  # the first call (compile, or the numba cache's load) apart
    recompute = [_timed_bc(A, engine)[0] for _ in range(recomputes)]
    began = time.perf_counter()
    dyn = turbobc.DynamicBC(A, engine=engine)
    row.update(initial_seconds=time.perf_counter() - began,
               initial_reason=dyn.facts["reason"])
    rng = np.random.default_rng(seed)
    drawn = {}
    for kind in KINDS:
        edges = drawn[kind] = draw_edges(A, kind, updates, rng)
        seconds, swept, recomputed, reasons, beside, diffs = [], [], [], [], [], []
        for u, v in edges:
            change = {"insert": [(u, v)]} if kind != "deletion" else {"delete": [(u, v)]}
            began = time.perf_counter()
            values = dyn.update(**change)
            seconds.append(time.perf_counter() - began)
            facts = dyn.facts
            swept.append(facts["sources_swept"])
            recomputed.append(bool(facts["recomputed"]))
            reasons.append(facts["reason"])
            # a fresh bc() of the changed graph right after: the recompute beside this update
            # (a shared machine's load moves both alike) and the check of its values
            fresh_seconds, fresh = _timed_bc(dyn.graph, engine)
            beside.append(fresh_seconds)
            diffs.append(_rel_diff(values, fresh))
            undo = {"delete": [(u, v)]} if kind != "deletion" else {"insert": [(u, v)]}
            dyn.update(**undo)
        recompute += beside
        over = [a / b for a, b in zip(seconds, beside)]
        row[kind] = {"edges": edges, "seconds_all": seconds,
                     "seconds": statistics.median(seconds), "seconds_max": max(seconds),
                     "seconds_mean": statistics.fmean(seconds),
                     "recompute_seconds_beside": beside, "over_recompute_beside": over,
                     "slowest_over_recompute": max(over), "max_rel_diff": max(diffs),
                     "sources_swept": swept, "recomputed": recomputed, "reasons": reasons,
                     "goal": GOALS[kind]}
        print(f"  {kind:17s} median {row[kind]['seconds']:.4f} s, max "
              f"{row[kind]['seconds_max']:.4f} s, swept {swept}", flush=True)
    row.update(recompute_seconds=statistics.median(recompute), recompute_seconds_all=recompute)
    for kind in KINDS:
        row[kind]["recompute_over_update"] = row["recompute_seconds"] / row[kind]["seconds"]
    row["random_insertion"]["met"] = row["random_insertion"]["slowest_over_recompute"] <= 1.1
    # the CPU engine's goal (power): a local insertion costs at most half a fresh bc() on
    # average; the GPU's: ten times faster than recomputing
    local = row["local_insertion"]
    local["met"] = (local["seconds_mean"] <= row["recompute_seconds"] / 2 if engine == "cpu"
                    else local["recompute_over_update"] >= 10)
    if engine != "cpu":
        row["deletion"]["met"] = row["deletion"]["recompute_over_update"] >= 10
    row["final_max_rel_diff"] = _rel_diff(dyn.values, turbobc.bc(A, engine=engine))
    return drawn


def networkit_rows(A, drawn: dict, threads: int, static_pairs: float, row: dict) -> None:
    """NetworKit's DynBetweenness on the same insertions (into ``row``), and its static
    Betweenness where it fits ``static_pairs``."""
    nk = _networkit()
    nk.setNumberOfThreads(threads)
    n = A.shape[0]
    upper = sp.triu(A, k=1, format="coo")

    def graph():
        G = nk.Graph(n, weighted=False, directed=False)
        G.addEdges((upper.row.astype(np.uint64), upper.col.astype(np.uint64)))
        return G

    row["networkit_threads"] = nk.getMaxNumberOfThreads()
    if n * A.nnz <= static_pairs:
        G = graph()
        began = time.perf_counter()
        nk.centrality.Betweenness(G, normalized=True).run()
        row["networkit_static_seconds"] = time.perf_counter() - began
    else:
        row["networkit_static_skipped"] = f"n * stored edges = {n * A.nnz:.3g} > --static-pairs"
    need = NETWORKIT_BYTES_PER_PAIR * n * n
    if need > _available_bytes() / 2:
        row["networkit_dynamic_skipped"] = (
            f"DynBetweenness keeps all-pairs distances and path counts: at least "
            f"{need / 2**30:.1f} GiB for n = {n:,}, over half the "
            f"{_available_bytes() / 2**30:.1f} GiB available")
        print(f"  networkit: {row['networkit_dynamic_skipped']}", flush=True)
        return
    G = graph()
    algo = nk.centrality.DynBetweenness(G)
    began = time.perf_counter()
    algo.run()
    row["networkit_initial_seconds"] = time.perf_counter() - began
    for kind in ("local_insertion", "random_insertion"):
        seconds = []
        for u, v in drawn[kind]:
            if G.hasEdge(u, v):
                continue
            G.addEdge(u, v)
            event = nk.dynamics.GraphEvent(nk.dynamics.GraphEventType.EDGE_ADDITION, u, v, 1.0)
            began = time.perf_counter()
            algo.update(event)
            seconds.append(time.perf_counter() - began)
        ours = row[kind]["seconds"]
        row[kind].update(networkit_seconds_all=seconds,
                         networkit_seconds=statistics.median(seconds),
                         networkit_over_update=statistics.median(seconds) / ours)
        print(f"  networkit {kind:17s} median {row[kind]['networkit_seconds']:.4f} s "
              f"(x{row[kind]['networkit_over_update']:.3g} turbobc's)", flush=True)
    row["deletion"]["networkit"] = "DynBetweenness takes edge insertions only"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+",
                        default=["power.mtx", "ego-Facebook", "road-minnesota.mtx"])
    parser.add_argument("--engine", default="cpu", choices=["cpu", "gpu", "graphblas", "auto"])
    parser.add_argument("--updates", type=int, default=7, help="updates of each kind")
    parser.add_argument("--recomputes", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="NetworKit's threads (and the cpu engine's)")
    parser.add_argument("--static-pairs", type=float, default=5e10,
                        help="time NetworKit's static Betweenness where n * stored edges is "
                             "at most this")
    parser.add_argument("--no-networkit", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    import numba

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    record = {"engine": args.engine, "threads": args.threads, "updates": args.updates,
              "recomputes": args.recomputes, "seed": args.seed, "rows": []}
    path = None
    for name in args.graphs:
        A = graphs.graph(name)
        row = {"graph": name, "n": A.shape[0], "nnz": int(A.nnz), "engine": args.engine}
        print(f"{name}: n = {row['n']:,}, {row['nnz']:,} stored edges", flush=True)
        record["rows"].append(row)
        drawn = turbobc_rows(name, A, args.engine, args.updates, args.recomputes, args.seed,
                             row)
        print(f"  recompute {row['recompute_seconds']:.4f} s, initial "
              f"{row['initial_seconds']:.4f} s", flush=True)
        path = write_record("dynamic", record, results=args.out, path=path)
        if not args.no_networkit:
            networkit_rows(A, drawn, args.threads, args.static_pairs, row)
        row["load_average"] = [round(x, 2) for x in os.getloadavg()]
        path = write_record("dynamic", record, results=args.out, path=path)
    print("record:", path)


if __name__ == "__main__":
    main()
