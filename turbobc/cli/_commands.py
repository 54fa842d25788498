"""The commands: ``bc``, ``edge-bc``, ``info`` and ``warm-up``; the first three checked before
the graph is read (turbobc/cli/_checks.py), then read, computed and reported
(turbobc/cli/_output.py)."""

from __future__ import annotations

import contextlib
import os
import random
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from turbobc.cli._checks import (UsageError, check_before_reading, check_k, choose_engine,
                                 on_cluster)
from turbobc.cli._output import (label, note, print_top, print_top_edges, say,
                                 write_edges_csv, write_edges_json, write_vertices)

__all__ = ["bc", "edge_bc", "info", "warm_up"]


# --------------------------------------------------------------------------- bc

def bc(args) -> None:
    """``turbobc bc``: vertex BC, the top-N table, -o and --edges."""
    from turbobc._api import run_bc

    check_before_reading(args)
    engine = choose_engine(args)
    graph, sources, targets, matrix, order = _prepare(args)
    _cpu_note(args, engine)
    if args.updates is not None:  # BC kept current through the batches of a changes file
        from turbobc.cli._updates import run_updates

        run_updates(args, graph, _run_words(args, None, None)
                    + (", endpoints" if args.endpoints else ""))
        return
    if _top_k_serves(args, targets):
        _top_k(args, graph, matrix)
        return
    start = time.perf_counter()
    with _dask_client(args) as client:
        # the engines decide among themselves for --engine auto (weighted BC, for one, runs
        # where an engine serves it); the run's facts say which one ran
        result = run_bc(matrix, sources=sources, targets=targets, k=args.k, seed=args.seed,
                        normalized=not args.raw, endpoints=args.endpoints,
                        directed=graph.directed, engine=args.engine, kernel=args.kernel,
                        progress=args.progress, memory_limit=args.memory_limit,
                        weight=True if args.weight else None, client=client,
                        epsilon=args.epsilon, delta=args.delta)
    seconds = time.perf_counter() - start
    _first_use_note(result.facts)
    values = _in_vertex_order(result.values, order)
    if args.epsilon is not None:
        _say_approximate(result.facts, graph, args)
    say(f"betweenness centrality ({_run_words(args, sources, targets)}"
        f"{', endpoints' if args.endpoints else ''}) on {_engine_words(result.facts)} in "
        f"{seconds:.2f} s")
    if args.top:
        print_top(values, graph.labels, args.top)
    if args.output is not None:
        write_vertices(args.output, values, graph.labels,
                       dict(_run_record(graph, args), endpoints=args.endpoints))
        say(f"wrote {graph.n:,} values to {args.output}")
    if args.edges is not None:
        # edges go to the GPU only where its engine serves edge sums: auto unless --engine
        # pinned a CPU engine
        edges = _edge_run(args, graph, sources, targets, matrix, order,
                          args.engine if args.engine in ("cpu", "graphblas") else "auto")
        if args.epsilon is not None:
            _say_approximate(edges.facts, graph, args, "approximate edge BC")
        say(f"edge betweenness centrality ({_run_words(args, sources, targets)}) in "
            f"{edges.seconds:.2f} s")
        write_edges_csv(args.edges, edges, graph.labels)
        say(f"wrote {edges.values.size:,} edge values to {args.edges}")


def _first_use_note(facts: dict) -> None:
    """Say on stderr, in one line, what the run compiled at first use, if anything."""
    from turbobc._compiled import first_use_line

    line = first_use_line(facts)
    if line:
        note(line)


def _top_k_serves(args, targets) -> bool:
    """Whether ``bc --epsilon`` prints its table from ``turbobc.top_k`` (the most central
    vertices with their own guarantee, docs/approximate.md "Top-k"): with a table and no
    option that needs every value or that top_k does not take (-o, --edges, --weight,
    --endpoints, --targets, --kernel)."""
    return (args.epsilon is not None and args.top > 0 and args.output is None
            and args.edges is None and not args.weight and not args.endpoints
            and targets is None and args.kernel == "auto")


def _top_k(args, graph, matrix) -> None:
    """``bc --epsilon EPS --top K``: ``turbobc.top_k``'s K vertices (at most n), what it
    sampled and its guarantee, then the table."""
    from turbobc._topk import top_k
    from turbobc._validation import DEFAULT_DELTA

    top = min(args.top, graph.n)
    delta = DEFAULT_DELTA if args.delta is None else args.delta
    start = time.perf_counter()
    with _dask_client(args) as client:
        result = top_k(matrix, top, epsilon=args.epsilon, delta=delta, seed=args.seed,
                       directed=graph.directed, normalized=not args.raw, engine=args.engine,
                       client=client)
    seconds = time.perf_counter() - start
    facts = result.facts
    if facts["stopped_by"] == "exact":
        say(f"top {top}: exact values (every source swept: {facts.get('exact_because', '')})")
    else:
        drawn = ("shortest paths of pairs" if facts.get("sampler") == "pairs"
                 else f"sources of {graph.n:,}")
        pilot = (f" (after a pilot of {facts['pilot_samples']:,})"
                 if facts.get("pilot_samples") else "")
        ties = facts["ties"].size
        open_ = (f"; {ties:,} vertices within {2 * args.epsilon:g} of the boundary"
                 if ties else "")
        say(f"top {top} with a guarantee: {facts['samples']:,} sampled {drawn}{pilot}; with "
            f"probability {1 - delta:g} every vertex more than {2 * args.epsilon:g} above the "
            f"{_ordinal(top)} largest value is listed and none more than {2 * args.epsilon:g} below "
            f"it (stopped by {facts['stopped_by']}{open_})")
    say(f"top {top} by betweenness centrality ({_run_words(args, None, None)}) on "
        f"{_engine_words(facts)} in {seconds:.2f} s")
    values = np.full(graph.n, -np.inf)
    values[result.vertices] = result.values
    print_top(values, graph.labels, top)


def _ordinal(k: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def _cpu_note(args, engine: str) -> None:
    """Say on stderr that the CPU engine runs because no GPU was found (--engine auto)."""
    if (args.engine == "auto" and args.kernel == "auto" and engine == "cpu"
            and not on_cluster(args)):
        from turbobc._engines import cpu_fallback_note

        note(cpu_fallback_note())


def _say_approximate(facts: dict, graph, args, what: str = "approximate") -> None:
    """What an --epsilon run sampled and the bound it reached; or that the values are exact,
    where the sample the bound needs would have been no smaller than the graph."""
    from turbobc._validation import DEFAULT_DELTA

    if facts["stopped_by"] == "exact":
        say(f"{what}: exact values (the bound needs no fewer samples than sweeping every "
            f"source of the {graph.n:,}, so every source was swept)")
        return
    drawn = ("shortest paths of pairs" if facts.get("sampler") == "pairs"
             else f"sources of {graph.n:,}")
    pilot = (f" (after a pilot of {facts['pilot_samples']:,})"
             if facts.get("pilot_samples") else "")
    say(f"{what}: {facts['samples']:,} sampled {drawn}{pilot}, every value "
        f"within {facts['bound']:.3g} of the exact one with probability "
        f"{1 - (args.delta if args.delta is not None else DEFAULT_DELTA):g} "
        f"(stopped by {facts['stopped_by']})")


def _load(args):
    """The graph file; an empty one is a data error."""
    from turbobc.io._readers import load

    graph = load(args.file, format=args.format, directed=args.directed, weighted=args.weight)
    if graph.n == 0:
        raise ValueError(f"{args.file}: holds no graph: no vertex and no edge (the file is "
                         "empty, or has only comments and blank lines)")
    return graph


def _prepare(args):
    """The graph (its size said), the sources and targets read from their files, and the
    matrix -k samples from with its order (:func:`_sampling_order`). With -k, --edges and no
    --seed, a seed is drawn here so that vertex and edge BC sample the same sources."""
    graph = _load(args)
    check_k(args.k, graph.n)
    sources = None if args.sources is None else _read_sources(args.sources, graph.labels)
    targets = None if args.targets is None else _read_sources(args.targets, graph.labels,
                                                               "target")
    kind = "directed" if graph.directed else "undirected"
    weighted = ", edge lengths from the file" if graph.weighted else ""
    say(f"{args.file}: n = {graph.n:,} vertices, m = {graph.m:,} {kind} edges{weighted}"
        f"{_header_note(graph, args)}")
    if args.k is not None and args.edges is not None and args.seed is None:
        args.seed = random.SystemRandom().randrange(2**32)
    matrix, order = _sampling_order(graph, args.k)
    return graph, sources, targets, matrix, order


def _header_note(graph, args) -> str:
    """' (as the file's header says; ...)' when an edge list's header set the direction, and
    ' (DIMACS arcs; ...)' for a .gr file read as it is."""
    if args.directed is None and graph.format == "gr":
        return " (DIMACS arcs; --undirected to read each arc as an undirected edge)"
    if args.directed is not None or graph.header_directed is None or graph.format == "mtx":
        return ""
    flag = "--undirected" if graph.directed else "--directed"
    return f" (as the file's header says; {flag} to override)"


def _run_words(args, sources, targets) -> str:
    """'exact, normalized', '3 given sources, 2 given targets, raw, weighted', ..."""
    kind = (f"epsilon {args.epsilon:g}" if getattr(args, "epsilon", None) is not None
            else _run_kind(sources, targets, args.k))
    words = [kind, "raw" if args.raw else "normalized"]
    if args.weight:
        words.append("weighted")
    return ", ".join(words)


def _run_kind(sources, targets, k) -> str:
    """'exact', 'N given sources' or 'K sampled sources', and the given targets."""
    what = ("exact" if sources is None and k is None else
            f"{len(sources)} given sources" if sources is not None else
            f"{k} sampled sources")
    return what if targets is None else f"{what}, {len(targets)} given targets"


@contextlib.contextmanager
def _dask_client(args):
    """A Dask client for --scheduler ADDRESS or --gpus N (a local cluster, one worker per
    GPU, closed at the end), else None."""
    if not on_cluster(args):
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler and --gpus need Dask: pip install 'turbobc[dask]'") \
            from None
    with _dask_logging(args.debug):
        if args.scheduler:
            with Client(args.scheduler) as client:
                yield client
            return
        from turbobc._dask import local_gpu_cluster

        with local_gpu_cluster(args.gpus) as cluster, Client(cluster) as client:
            yield client


@contextlib.contextmanager
def _dask_logging(debug: bool):
    """Dask's own INFO logging (a worker's start and stop: ~40 lines a run) kept quiet unless
    --debug, or DASK_LOGGING__DISTRIBUTED, asks for it: Dask reads that variable when it is
    imported, here and in the worker processes a local cluster starts."""
    if debug or "DASK_LOGGING__DISTRIBUTED" in os.environ:
        yield
        return
    os.environ["DASK_LOGGING__DISTRIBUTED"] = "warning"
    try:
        yield
    finally:
        del os.environ["DASK_LOGGING__DISTRIBUTED"]


def _engine_words(facts: dict) -> str:
    """'engine gpu', or for a Dask run the engines its workers used."""
    if facts.get("engine") != "dask":
        return f"engine {facts.get('engine')}"
    return (f"{facts.get('workers_used')} Dask worker(s), engine "
            f"{'+'.join(facts.get('worker_engines', []))}, {facts.get('chunks')} chunks")


def _sampling_order(graph, k):
    """The matrix -k samples from, in file order (networkx's nx.read_edgelist node order),
    and that order (None when it is the vertex order already)."""
    order = graph.file_order
    if k is None or np.array_equal(order, np.arange(graph.n)):
        return graph.matrix, None
    permuted = graph.matrix[order][:, order]
    permuted.sort_indices()
    return permuted, order


def _in_vertex_order(values: np.ndarray, order) -> np.ndarray:
    """Values computed on the file-order matrix, back in vertex order."""
    if order is None:
        return values
    result = np.empty_like(values)
    result[order] = values
    return result


def _read_sources(path: str, labels: np.ndarray, kind: str = "source") -> list[int]:
    """The vertices listed in ``path`` (sources, or targets with ``kind="target"``), as
    indices into ``labels``."""
    integer_labels = labels.dtype.kind in "iu"
    position = {label(v): i for i, v in enumerate(labels)}
    chosen, first_line = [], {}
    with open(path, encoding="utf-8-sig") as fh:  # -sig: a byte-order mark is skipped
        for number, line in enumerate(fh, start=1):
            for token in line.split("#", 1)[0].split():
                key = token
                if integer_labels:
                    try:
                        key = int(token)
                    except ValueError:
                        raise ValueError(f"{path}, line {number}: vertex ids of this graph "
                                         f"are integers; got {token!r}") from None
                if key not in position:
                    raise ValueError(f"{path}, line {number}: vertex {token!r} is not in the "
                                     "graph")
                if key in first_line:
                    raise ValueError(f"{path}, line {number}: vertex {token!r} is listed "
                                     f"twice (first on line {first_line[key]})")
                first_line[key] = number
                chosen.append(position[key])
    if not chosen:
        raise ValueError(f"{path}: no {kind} vertex listed")
    return chosen


def _run_record(graph, args) -> dict:
    """The graph and the options of a JSON output; epsilon and delta when given."""
    record = {"file": str(args.file), "n": graph.n, "m": graph.m, "directed": graph.directed,
              "weighted": graph.weighted, "normalized": not args.raw, "k": args.k,
              "seed": args.seed}
    if args.epsilon is not None:
        from turbobc._validation import DEFAULT_DELTA

        record.update(epsilon=args.epsilon,
                      delta=args.delta if args.delta is not None else DEFAULT_DELTA)
    return record


# --------------------------------------------------------------------------- edge-bc

class _Edges(NamedTuple):
    """Edge BC as the commands report it: vertex indices in vertex order, sorted, an
    undirected edge once as (smaller index, larger)."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    seconds: float
    facts: dict


def edge_bc(args) -> None:
    """``turbobc edge-bc``: edge BC, the top-N table and -o."""
    check_before_reading(args)
    engine = choose_engine(args)
    graph, sources, targets, matrix, order = _prepare(args)
    _cpu_note(args, engine)
    edges = _edge_run(args, graph, sources, targets, matrix, order, args.engine)
    if args.epsilon is not None:
        _say_approximate(edges.facts, graph, args)
    say(f"edge betweenness centrality ({_run_words(args, sources, targets)}) in "
        f"{edges.seconds:.2f} s")
    if args.top:
        print_top_edges(edges, graph.labels, graph.directed, args.top)
    if args.output is not None:
        if Path(args.output).suffix.lower() == ".csv":
            write_edges_csv(args.output, edges, graph.labels)
        else:
            write_edges_json(args.output, edges, graph.labels, _run_record(graph, args))
        say(f"wrote {edges.values.size:,} edge values to {args.output}")


def _edge_run(args, graph, sources, targets, matrix, order, engine: str) -> _Edges:
    """Edge BC of the run the options describe, on ``matrix`` (in sampling order)."""
    from turbobc._api import run_edge_bc

    start = time.perf_counter()
    with _dask_client(args) as client:
        result = run_edge_bc(matrix, sources=sources, targets=targets, k=args.k,
                             seed=args.seed, normalized=not args.raw,
                             directed=graph.directed, engine=engine, progress=args.progress,
                             memory_limit=args.memory_limit,
                             weight=True if args.weight else None, client=client,
                             epsilon=args.epsilon, delta=args.delta)
    seconds = time.perf_counter() - start
    _first_use_note(result.facts)
    E = result.values.tocoo()
    rows, cols, values = E.row.astype(np.int64), E.col.astype(np.int64), E.data
    if order is not None:  # computed on the file-order matrix: back to vertex order
        rows, cols = order[rows], order[cols]
    if not graph.directed:  # each undirected edge once, as (smaller index, larger)
        once = rows < cols
        rows, cols, values = rows[once], cols[once], values[once]
    ordered = np.lexsort((cols, rows))
    return _Edges(rows[ordered], cols[ordered], values[ordered], seconds, result.facts)


# --------------------------------------------------------------------------- info

def info(args) -> None:
    """``turbobc info``: size, degrees, scf, the kernel auto picks, device memory."""
    import json

    import spmv

    check_before_reading(args)
    graph = _load(args)
    degree = np.diff(graph.matrix.indptr)
    stats = spmv.stats_host(graph.matrix, graph.directed)
    nnz = graph.matrix.nnz
    from turbobc._graph import single_index_types
    from turbobc.engines.gpu.memory import single_model

    # int32 indices, and int64 pointers past 2^31 - 64 stored entries (int64 both past that
    # many vertices)
    index, pointers = single_index_types(graph.n, nnz)
    b, p = index.itemsize, pointers.itemsize
    record = {
        "file": str(args.file), "format": graph.format, "n": graph.n, "m": graph.m,
        "directed": graph.directed, "stored_entries": nnz, "self_loops": graph.self_loops,
        "degree": {"kind": "out" if graph.directed else "undirected",
                   "min": int(degree.min()) if graph.n else 0,
                   "mean": nnz / graph.n if graph.n else 0.0,
                   "max": int(degree.max()) if graph.n else 0},
        "isolated_vertices": _isolated(graph),
        "scf": stats.scf,
        "kernel": spmv.select(stats),
        "device_memory_bytes": single_model(graph.n, nnz, index, pointers),
        "device_memory_model": f"single source: {b} bytes per stored entry + {40 + b + p} "
                               f"bytes per vertex (float64 values, {index.name} indices, "
                               f"{pointers.name} pointers)",
    }
    if args.json:
        say(json.dumps(record))
        return
    deg = record["degree"]
    if graph.directed:
        edges = f"{graph.m:,} arcs"
    else:
        edges = f"{graph.m:,} undirected edges (each counted once; {nnz:,} stored entries)"
    say(f"file:           {args.file} ({graph.format})")
    say(f"vertices (n):   {graph.n:,}")
    say(f"edges (m):      {edges}")
    say(f"directed:       {'yes' if graph.directed else 'no'}{_header_note(graph, args)}")
    say(f"self loops:     {graph.self_loops:,} (ignored)")
    say(f"degree:         min {deg['min']:,}, mean {deg['mean']:.3f}, max {deg['max']:,}"
        f"{' (out-degree)' if graph.directed else ''}")
    say(f"isolated:       {record['isolated_vertices']:,} vertices without edges")
    say(f"scf:            {stats.scf:.4g} (mean deg(u)*deg(v) over stored edges / mean "
        "degree squared; 1 for regular graphs)")
    say(f"kernel (auto):  {record['kernel']}")
    say(f"device memory:  {_human(record['device_memory_bytes'])} for a single-source run "
        f"(model {b}m + {40 + 2 * b}n bytes, float64"
        f"{'' if b == 4 else ', int64 indices'}, with m = {nnz:,} stored entries)")


def _isolated(graph) -> int:
    pattern = graph.matrix
    touched = (np.diff(pattern.indptr) > 0) | (np.bincount(pattern.indices,
                                                           minlength=graph.n) > 0)
    return int(graph.n - np.count_nonzero(touched))


def _human(size: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


# --------------------------------------------------------------------------- warm-up

def warm_up(args) -> None:
    """``turbobc warm-up``: everything a first call compiles, compiled now (turbobc/_warm.py),
    and what each step did."""
    import json

    from turbobc._warm import warm_up as warm

    report = warm(args.engine)
    if args.json:
        say(json.dumps(report, indent=1, default=str))
        return
    cpu = report.get("cpu_functions")
    if cpu is not None:
        say(f"CPU functions: {cpu['functions']} {cpu['source']}, {cpu['seconds']:.2f} s")
    gpu = report.get("gpu_kernels")
    if gpu is not None:
        say(f"GPU kernels: {gpu['instantiations']} instantiations ready, "
            f"{gpu['compiled_through_nvrtc']} compiled through NVRTC, {gpu['seconds']:.2f} s")
    sweeps = report["sweeps"]
    say(f"small problems swept on {', '.join(sweeps['engines'])} (CuPy's own kernels on each "
        f"family's path), {sweeps['seconds']:.2f} s")
    say(f"warm-up done in {report['seconds']:.2f} s: later processes start with these compiled")
