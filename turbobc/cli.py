"""The ``turbobc`` command: betweenness centrality of a graph file, and facts about the file.

    turbobc bc FILE [options]      the most central vertices, with the ids the file uses
    turbobc info FILE [--json]     n, m, degrees, the scf metric, the kernel and device memory

Also runs as ``python -m turbobc.cli``. Reads what :func:`turbobc.read_graph` reads.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["main"]

_DESCRIPTION = """\
Betweenness centrality (BC) of a graph file, computed as sparse linear algebra on an NVIDIA
GPU (CuPy) or on the CPU (python-graphblas), with networkx's numbers.

Files: Matrix Market (.mtx), SNAP edge lists (.txt), CSV/TSV edge lists (.csv, .tsv) and
METIS/DIMACS10 (.graph), each optionally gzip'ed (.gz). Vertices are reported with the ids
the file uses (Matrix Market and METIS: the 1-based indices of the file).
"""

_EPILOG = """\
examples:
  turbobc info ca-GrQc.txt.gz                 size, degrees, kernel, memory
  turbobc bc ca-GrQc.txt.gz --top 5           exact BC, the 5 most central vertices
  turbobc bc wiki-Vote.txt.gz --directed -k 500 --seed 1 --progress
                                              estimate from 500 sampled sources
  turbobc bc road.mtx -o bc.csv               every vertex's BC into a CSV file

Run 'turbobc bc --help' or 'turbobc info --help' for the options of each command.
"""

_FORMAT_HELP = ("file format: mtx, snap, csv, tsv or metis (default: from the suffix, "
                "before any .gz)")


def _add_graph_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the graph file")
    parser.add_argument("--format", choices=["mtx", "snap", "csv", "tsv", "metis"],
                        help=_FORMAT_HELP)
    direction = parser.add_mutually_exclusive_group()
    direction.add_argument("--directed", dest="directed", action="store_true", default=None,
                           help="read each line or entry u v as an arc u -> v")
    direction.add_argument("--undirected", dest="directed", action="store_false",
                           help="read every edge as undirected (symmetrize)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="turbobc", description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    from . import __version__

    parser.add_argument("--version", action="version", version=f"turbobc {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    bc = commands.add_parser(
        "bc", help="betweenness centrality of every vertex; prints the most central",
        description="Compute betweenness centrality and print the most central vertices "
                    "with the ids the file uses. Default: exact, normalized like networkx "
                    "(divided by the number of pairs, (n-1)(n-2)), endpoints not counted. "
                    "Direction: Matrix Market says it in its header (general = directed); "
                    "edge lists and METIS are read as undirected unless --directed.")
    _add_graph_options(bc)
    sampling = bc.add_mutually_exclusive_group()
    sampling.add_argument("-k", type=int, metavar="K",
                          help="estimate BC from K randomly sampled sources (faster on big "
                               "graphs; networkx's estimator and scaling)")
    sampling.add_argument("--sources", metavar="SFILE",
                          help="use exactly the sources listed in SFILE (vertex ids as in "
                               "FILE, separated by white space or new lines; # comments); "
                               "the result is their contribution")
    bc.add_argument("--seed", type=int, metavar="S",
                    help="random seed for -k (the same seed samples the same sources as "
                         "networkx)")
    bc.add_argument("--raw", action="store_true",
                    help="unnormalized: path counts summed (halved for undirected graphs)")
    bc.add_argument("--endpoints", action="store_true",
                    help="count the two ends of each path as lying on it")
    bc.add_argument("--engine", default="auto", choices=["auto", "gpu", "graphblas"],
                    help="auto (default): the GPU when CuPy sees one, else the CPU "
                         "(python-graphblas)")
    bc.add_argument("--kernel", default="auto", choices=["auto", "sccsc", "sccooc", "vecsc"],
                    help="GPU SpMV kernel; auto chooses by the scf metric (see 'turbobc "
                         "info')")
    bc.add_argument("--top", type=int, default=10, metavar="N",
                    help="print the N most central vertices (default 10; 0: none)")
    bc.add_argument("-o", "--output", metavar="OUT",
                    help="write every vertex's BC to OUT: .csv (vertex,betweenness), .json "
                         "(ids and values) or .npy (values only, in vertex order)")
    bc.add_argument("--progress", action="store_true",
                    help="show a progress bar (sources done, time left) on stderr")

    info = commands.add_parser(
        "info", help="n, m, degrees, the scf metric, the kernel and device memory",
        description="Print the size of the graph (n vertices, m edges: arcs if directed, "
                    "each undirected edge once; self loops and repeated lines ignored), "
                    "degree statistics (out-degree if directed), the scf metric, the GPU "
                    "kernel that kernel='auto' would choose and the estimated device memory "
                    "of a single-source run.")
    _add_graph_options(info)
    info.add_argument("--json", action="store_true", help="print one JSON object instead")
    return parser


def main(argv=None) -> int:
    """Run the ``turbobc`` command; returns the exit status (0 ok, 1 error, 2 usage)."""
    args = _parser().parse_args(argv)
    from .exceptions import TurboBCError

    try:
        if args.command == "bc":
            _bc(args)
        else:
            _info(args)
    except (ValueError, TypeError, FileNotFoundError, MemoryError, TurboBCError) as exc:
        print(f"turbobc {args.command}: error: {exc}", file=sys.stderr)
        return 1
    return 0


def _load(args):
    from ._io import load

    return load(args.file, format=args.format, directed=args.directed)


def _label(value):
    return value.item() if isinstance(value, np.generic) else value


# --------------------------------------------------------------------------- bc

def _bc(args) -> None:
    from ._api import bc
    from ._engines import gpu_status

    if args.output is not None and Path(args.output).suffix.lower() not in (".csv", ".json",
                                                                             ".npy"):
        raise ValueError(f"-o must end in .csv, .json or .npy; got {args.output!r}")
    if args.top < 0:
        raise ValueError(f"--top must be 0 or more; got {args.top}")
    graph = _load(args)
    sources = None if args.sources is None else _read_sources(args.sources, graph.labels)
    engine = args.engine
    if engine == "auto":
        engine = "gpu" if args.kernel != "auto" or gpu_status()[0] else "graphblas"
    kind = "directed" if graph.directed else "undirected"
    print(f"{args.file}: n = {graph.n:,} vertices, m = {graph.m:,} {kind} edges")
    start = time.perf_counter()
    values = bc(graph.matrix, sources=sources, k=args.k, seed=args.seed,
                normalized=not args.raw, endpoints=args.endpoints, directed=graph.directed,
                engine=args.engine, kernel=args.kernel, progress=args.progress)
    seconds = time.perf_counter() - start
    what = ("exact" if sources is None and args.k is None else
            f"{len(sources)} given sources" if sources is not None else
            f"{args.k} sampled sources")
    scale = "raw" if args.raw else "normalized"
    print(f"betweenness centrality ({what}, {scale}"
          f"{', endpoints' if args.endpoints else ''}) on engine {engine} in {seconds:.2f} s")
    if args.top:
        _print_top(values, graph.labels, args.top)
    if args.output is not None:
        _write(args.output, values, graph, args)
        print(f"wrote {graph.n:,} values to {args.output}")


def _read_sources(path: str, labels: np.ndarray) -> list[int]:
    integer_labels = labels.dtype.kind in "iu"
    position = {_label(v): i for i, v in enumerate(labels)}
    chosen = []
    with open(path, encoding="utf-8") as fh:
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
                chosen.append(position[key])
    if not chosen:
        raise ValueError(f"{path}: no source vertex listed")
    return chosen


def _print_top(values: np.ndarray, labels: np.ndarray, top: int) -> None:
    order = np.argsort(-values, kind="stable")[:top]
    names = [str(_label(labels[v])) for v in order]
    width = max([6] + [len(s) for s in names])
    print(f"\n{'rank':>4}  {'vertex':>{width}}  {'betweenness':>14}")
    for rank, (v, name) in enumerate(zip(order, names), start=1):
        print(f"{rank:>4}  {name:>{width}}  {values[v]:>14.8g}")


def _write(path: str, values: np.ndarray, graph, args) -> None:
    suffix = Path(path).suffix.lower()
    if suffix == ".npy":
        np.save(path, values)
        return
    labels = [_label(v) for v in graph.labels]
    if suffix == ".csv":
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["vertex", "betweenness"])
            writer.writerows(zip(labels, map(repr, values.tolist())))
        return
    record = {"file": str(args.file), "n": graph.n, "m": graph.m, "directed": graph.directed,
              "normalized": not args.raw, "endpoints": args.endpoints, "k": args.k,
              "seed": args.seed, "vertices": labels, "betweenness": values.tolist()}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(record, fh)


# --------------------------------------------------------------------------- info

def _info(args) -> None:
    import spmv

    graph = _load(args)
    degree = np.diff(graph.matrix.indptr)
    stats = spmv.stats_host(graph.matrix, graph.directed)
    nnz = graph.matrix.nnz
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
        "device_memory_bytes": 4 * nnz + 48 * graph.n,
        "device_memory_model": "single source: 4 bytes per stored entry + 48 bytes per "
                               "vertex (float64 values, int32 indices)",
    }
    if args.json:
        print(json.dumps(record))
        return
    deg = record["degree"]
    if graph.directed:
        edges = f"{graph.m:,} arcs"
    else:
        edges = f"{graph.m:,} undirected edges (each counted once; {nnz:,} stored entries)"
    print(f"file:           {args.file} ({graph.format})")
    print(f"vertices (n):   {graph.n:,}")
    print(f"edges (m):      {edges}")
    print(f"directed:       {'yes' if graph.directed else 'no'}")
    print(f"self loops:     {graph.self_loops:,} (ignored)")
    print(f"degree:         min {deg['min']:,}, mean {deg['mean']:.3f}, max {deg['max']:,}"
          f"{' (out-degree)' if graph.directed else ''}")
    print(f"isolated:       {record['isolated_vertices']:,} vertices without edges")
    print(f"scf:            {stats.scf:.4g} (mean deg(u)*deg(v) over stored edges / mean "
          "degree squared; 1 for regular graphs)")
    print(f"kernel (auto):  {record['kernel']}")
    print(f"device memory:  {_human(record['device_memory_bytes'])} for a single-source run "
          f"(model 4m + 48n bytes, float64, with m = {nnz:,} stored entries)")


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


if __name__ == "__main__":
    sys.exit(main())
