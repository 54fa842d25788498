"""The ``turbobc`` command: betweenness centrality of a graph file, and facts about the file.

    turbobc bc FILE [options]      the most central vertices, with the ids the file uses
    turbobc edge-bc FILE [options] the most central edges
    turbobc info FILE [--json]     n, m, degrees, the scf metric, the kernel and device memory

Also runs as ``python -m turbobc.cli``. Reads what :func:`turbobc.read_graph` reads.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["main"]

_DESCRIPTION = """\
Betweenness centrality (BC) of a graph file, computed as sparse linear algebra on an NVIDIA
GPU (CuPy) or on the CPU (compiled with numba), with networkx's numbers.

Files: Matrix Market (.mtx), SNAP edge lists (.txt), CSV/TSV edge lists (.csv, .tsv),
METIS/DIMACS10 (.graph) and DIMACS 9 shortest-path files (.gr, road networks), each
optionally gzip'ed (.gz). Vertices are reported with the ids the file uses (Matrix Market,
METIS and DIMACS: the 1-based indices of the file). With --weight, the file's edge values
(a weighted Matrix Market file, the third column of an edge list, METIS edge weights, the
lengths of DIMACS arcs) are edge lengths: shortest paths are the lightest.
"""

_EPILOG = """\
examples:
  turbobc info ca-GrQc.txt.gz                 size, degrees, kernel, memory
  turbobc bc ca-GrQc.txt.gz --top 5           exact BC, the 5 most central vertices
  turbobc bc wiki-Vote.txt.gz --directed -k 500 --seed 1 --progress
                                              estimate from 500 sampled sources
  turbobc bc road.mtx -o bc.csv               every vertex's BC into a CSV file
  turbobc bc USA-road-d.NY.gr --weight -k 1000 --seed 1 --edges edges.csv
                                              weighted estimate, edge BC into a CSV file
  turbobc edge-bc ca-GrQc.txt.gz --top 5      edge BC, the 5 most central edges

Run 'turbobc bc --help', 'turbobc edge-bc --help' or 'turbobc info --help' for the options
of each command.

exit status: 0 done; 1 the file or the computation failed (malformed line, missing file, no
GPU for --engine gpu, out of memory); 2 the command cannot run as given (options, an output
path that cannot be written, an empty graph file).
"""

_OUTPUT_HELP = """\
write every vertex's BC to OUT, by suffix: .csv: a header line 'label,bc', then one line
per vertex in the order of the graph (label as in FILE, quoted by CSV rules when needed;
bc in scientific notation with 17 significant digits, printf '%%.16e', which reads back to
the same float64: 0.0000000000000000e+00, 4.8051770561007832e-01; '\\n' line ends); .json:
one object with the options, "vertices" (labels) and "betweenness" (values); .npy: the
values only, in vertex order (numpy.load). The directory must exist and be writable; this
is checked before the computation starts"""

_EDGES_CSV_HELP = ("a header line 'src,dst,bc', then one line per edge (src and dst as in "
                   "FILE, an undirected edge once, in the order of the graph; bc as in the "
                   "vertex CSV, '%%.16e')")

_CSV_VALUE_FORMAT = "%.16e"
"""Every value of the CSV output: 17 significant digits, exact round trip, one width."""

_EDGES_CSV_HEADER = ["src", "dst", "bc"]
"""The header of every edge CSV (``bc --edges``, ``edge-bc -o .csv``)."""

_FORMATS = ["mtx", "snap", "csv", "tsv", "metis", "gr"]

_FORMAT_HELP = ("file format: mtx, snap, csv, tsv, metis or gr (default: from the suffix, "
                "before any .gz)")

_WEIGHT_HELP = ("read the file's edge values as edge lengths (weighted shortest paths): a "
                "Matrix Market 'real' or 'integer' file's values, the third column of an "
                "edge list, METIS edge weights, DIMACS arc lengths; every length must be a "
                "positive finite number; an edge listed twice keeps its smaller length. "
                "Without --weight the values are not read: every edge has length 1")


def _add_graph_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the graph file")
    parser.add_argument("--format", choices=_FORMATS, help=_FORMAT_HELP)
    direction = parser.add_mutually_exclusive_group()
    direction.add_argument("--directed", dest="directed", action="store_true", default=None,
                           help="read each line or entry u v as an arc u -> v (default: what "
                                "the file says: a Matrix Market header, a SNAP '# Directed "
                                "graph' / '# Undirected graph' first line, DIMACS arcs; else "
                                "undirected)")
    direction.add_argument("--undirected", dest="directed", action="store_false",
                           help="read every edge as undirected (symmetrize), whatever the "
                                "file's header says")


def _add_guarantee_options(sampling, parser: argparse.ArgumentParser, what: str) -> None:
    """--epsilon (in the group exclusive with -k and --sources) and --delta."""
    sampling.add_argument("--epsilon", type=float, metavar="EPS",
                          help=f"approximate {what} with a guarantee: every normalized value "
                               "within EPS of the exact one with probability 1 - DELTA; "
                               "sources (or shortest paths) are sampled until the bound is "
                               "reached (docs/approximate.md)")
    parser.add_argument("--delta", type=float, metavar="DELTA",
                        help="with --epsilon: the probability the guarantee may fail "
                             "(default 0.1)")


def _add_cluster_options(parser: argparse.ArgumentParser) -> None:
    cluster = parser.add_mutually_exclusive_group()
    cluster.add_argument("--scheduler", metavar="ADDRESS",
                         help="run the sweeps on the workers of this Dask scheduler (e.g. "
                              "tcp://host:8786); each worker uses its GPU, else its CPUs "
                              "(docs/scale-out.md; pip install 'turbobc[dask]')")
    cluster.add_argument("--gpus", type=int, metavar="N",
                         help="start a local Dask cluster of N workers, one per GPU, and run "
                              "on it")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="turbobc", description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    from turbobc import __version__

    parser.add_argument("--version", action="version", version=f"turbobc {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    bc = commands.add_parser(
        "bc", help="betweenness centrality of every vertex; prints the most central",
        description="Compute betweenness centrality and print the most central vertices "
                    "with the ids the file uses. Default: exact, normalized like networkx "
                    "(divided by the number of pairs, (n-1)(n-2)), endpoints not counted. "
                    "Direction: Matrix Market says it in its header (general = directed), "
                    "so does a SNAP edge list whose first line is '# Directed graph' or "
                    "'# Undirected graph'; other edge lists and METIS are read as undirected; "
                    "--directed or --undirected overrides. With -k, sources are sampled "
                    "from the vertices in the order the file first names them, as networkx "
                    "samples from nx.read_edgelist(FILE): the same -k and --seed pick the "
                    "same vertices. --weight reads the file's edge values as lengths "
                    "(networkx's weight='weight'); --edges also writes edge BC.")
    _add_graph_options(bc)
    sampling = bc.add_mutually_exclusive_group()
    sampling.add_argument("-k", type=int, metavar="K",
                          help="estimate BC from K randomly sampled sources (faster on big "
                               "graphs; networkx's estimator and scaling)")
    sampling.add_argument("--sources", metavar="SFILE",
                          help="use exactly the sources listed in SFILE (vertex ids as in "
                               "FILE, separated by white space or new lines; # comments); "
                               "the result is their contribution")
    bc.add_argument("--targets", metavar="TFILE",
                    help="count only paths that end at the vertices listed in TFILE (same "
                         "format as SFILE): networkx's betweenness_centrality_subset; not "
                         "with -k or --endpoints")
    _add_guarantee_options(sampling, bc, "BC")
    bc.add_argument("--seed", type=int, metavar="S",
                    help="random seed for -k or --epsilon (with -k the same seed samples the "
                         "same vertices as networkx on the graph read by nx.read_edgelist)")
    bc.add_argument("--weight", action="store_true", help=_WEIGHT_HELP)
    bc.add_argument("--raw", action="store_true",
                    help="unnormalized: path counts summed (halved for undirected graphs)")
    bc.add_argument("--endpoints", action="store_true",
                    help="count the two ends of each path as lying on it")
    bc.add_argument("--engine", default="auto", choices=["auto", "gpu", "cpu", "graphblas"],
                    help="auto (default): the GPU when CuPy sees one, else the CPU engine "
                         "(cpu, compiled with numba); graphblas: the python-graphblas "
                         "reference")
    bc.add_argument("--kernel", default="auto", choices=["auto", "sccsc", "sccooc", "vecsc"],
                    help="GPU SpMV kernel; auto chooses by the scf metric (see 'turbobc "
                         "info')")
    bc.add_argument("--top", type=int, default=10, metavar="N",
                    help="print the N most central vertices (default 10; 0: none)")
    bc.add_argument("-o", "--output", metavar="OUT", help=_OUTPUT_HELP)
    bc.add_argument("--edges", metavar="EDGES.csv",
                    help="also compute edge BC (networkx's edge_betweenness_centrality, or "
                         "its _subset with --targets; same sources, -k sample and --weight; "
                         "--endpoints does not apply to edges) and write it to EDGES.csv: "
                         + _EDGES_CSV_HELP + "; a second sweep over the sources, with its "
                         "own progress bar; checked before the computation starts")
    bc.add_argument("--memory-limit", metavar="SIZE",
                    help="memory the run may use, in bytes or with a unit (e.g. 4GB, "
                         "512MiB): host memory on the CPU engine, device memory on the GPU; "
                         "default: sized from what is available")
    bc.add_argument("--progress", action="store_true",
                    help="show a progress bar on stderr (sources done, time left) once the "
                         "run has taken a second")
    _add_cluster_options(bc)

    edge = commands.add_parser(
        "edge-bc", help="edge betweenness centrality; prints the most central edges",
        description="Compute edge betweenness centrality (networkx's "
                    "edge_betweenness_centrality: exact, normalized by n(n-1) by default) "
                    "and print the most central edges with the ids the file uses. "
                    "Direction, -k and --seed as for 'turbobc bc'. Edge subset BC "
                    "(--targets) runs on the CPU engine.")
    _add_graph_options(edge)
    edge_sampling = edge.add_mutually_exclusive_group()
    edge_sampling.add_argument("-k", type=int, metavar="K",
                               help="estimate from K randomly sampled sources")
    edge_sampling.add_argument("--sources", metavar="SFILE",
                               help="use exactly the sources listed in SFILE")
    _add_guarantee_options(edge_sampling, edge, "edge BC")
    edge.add_argument("--targets", metavar="TFILE",
                      help="count only paths that end at the vertices listed in TFILE: "
                           "networkx's edge_betweenness_centrality_subset; not with -k")
    edge.add_argument("--seed", type=int, metavar="S", help="random seed for -k or --epsilon")
    edge.add_argument("--weight", action="store_true", help=_WEIGHT_HELP)
    edge.add_argument("--raw", action="store_true",
                      help="unnormalized: path counts summed (halved for undirected graphs)")
    edge.add_argument("--top", type=int, default=10, metavar="N",
                      help="print the N most central edges (default 10; 0: none)")
    edge.add_argument("-o", "--output", metavar="OUT",
                      help="write every edge's value to OUT: .csv (" + _EDGES_CSV_HELP
                           + "; the format of 'turbobc bc --edges') or .json (the options, "
                           "\"edges\" and \"betweenness\"); checked before the computation "
                           "starts")
    edge.add_argument("--memory-limit", metavar="SIZE",
                      help="host memory the run may use (e.g. 4GB, 512MiB)")
    edge.add_argument("--progress", action="store_true",
                      help="show a progress bar on stderr once the run has taken a second")
    edge.add_argument("--engine", default="auto", choices=["auto", "gpu", "cpu", "graphblas"],
                      help="auto (default): the GPU when one is usable and serves the run, "
                           "else the CPU engine (cpu); graphblas: the python-graphblas "
                           "reference")
    _add_cluster_options(edge)
    edge.set_defaults(kernel="auto", endpoints=False, edges=None)

    info = commands.add_parser(
        "info", help="n, m, degrees, the scf metric, the kernel and device memory",
        description="Print the size of the graph (n vertices, m edges: arcs if directed, "
                    "each undirected edge once; self loops and repeated lines ignored), "
                    "degree statistics (out-degree if directed), the scf metric, the GPU "
                    "kernel that kernel='auto' would choose and the estimated device memory "
                    "of a single-source run.")
    _add_graph_options(info)
    info.set_defaults(weight=False)
    info.add_argument("--json", action="store_true", help="print one JSON object instead")
    return parser


class UsageError(ValueError):
    """The command cannot run as given (exit status 2): options, output path, empty graph."""


def main(argv=None) -> int:
    """Run the ``turbobc`` command; returns the exit status (0 ok, 1 error, 2 usage)."""
    args = _parser().parse_args(argv)
    from turbobc.io._readers import EmptyGraphFileError
    from turbobc.exceptions import TurboBCError

    try:
        if args.command == "bc":
            _bc(args)
        elif args.command == "edge-bc":
            _edge_bc(args)
        else:
            _info(args)
    except (UsageError, EmptyGraphFileError) as exc:
        print(f"turbobc {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, MemoryError, TurboBCError) as exc:
        print(f"turbobc {args.command}: error: {exc}", file=sys.stderr)
        return 1
    return 0


def _load(args):
    """The graph file; an empty one is a usage error."""
    from turbobc.io._readers import load

    try:
        graph = load(args.file, format=args.format, directed=args.directed,
                     weighted=args.weight)
    except ValueError as exc:  # the reader's words for the option are the API's
        raise type(exc)(str(exc).replace("weighted=True", "--weight")) from None
    if graph.n == 0:
        raise UsageError(f"{args.file} holds no graph: no vertex and no edge (the file is "
                         "empty, or has only comments and blank lines)")
    return graph


def _label(value):
    return value.item() if isinstance(value, np.generic) else value


def _header_note(graph, args) -> str:
    """' (as the file's header says; ...)' when an edge list's header set the direction, and
    ' (DIMACS arcs; ...)' for a .gr file read as it is."""
    if args.directed is None and graph.format == "gr":
        return " (DIMACS arcs; --undirected to read each arc as an undirected edge)"
    if args.directed is not None or graph.header_directed is None or graph.format == "mtx":
        return ""
    flag = "--undirected" if graph.directed else "--directed"
    return f" (as the file's header says; {flag} to override)"


# --------------------------------------------------------------------------- bc

def _bc(args) -> None:
    from turbobc._api import run_bc

    _check_options(args)
    engine = _engine(args)
    graph, sources, targets, matrix, order = _prepare(args)
    if (args.engine == "auto" and args.kernel == "auto" and engine == "cpu"
            and not _on_cluster(args)):
        from turbobc._engines import cpu_fallback_note

        print(cpu_fallback_note())
    start = time.perf_counter()
    with _memory_limit_in_command_words(), _dask_client(args) as client:
        # the engines decide among themselves for --engine auto (weighted BC, for one, runs
        # where an engine serves it); the run's facts say which one ran
        result = run_bc(matrix, sources=sources, targets=targets, k=args.k, seed=args.seed,
                        normalized=not args.raw, endpoints=args.endpoints,
                        directed=graph.directed, engine=args.engine, kernel=args.kernel,
                        progress=args.progress, memory_limit=args.memory_limit,
                        weight=True if args.weight else None, client=client,
                        epsilon=args.epsilon, delta=args.delta)
    seconds = time.perf_counter() - start
    values = _in_vertex_order(result.values, order)
    if args.epsilon is not None:
        _print_approximate(result.facts, graph, args)
    print(f"betweenness centrality ({_run_words(args, sources, targets)}"
          f"{', endpoints' if args.endpoints else ''}) on {_engine_words(result.facts)} in "
          f"{seconds:.2f} s")
    if args.top:
        _print_top(values, graph.labels, args.top)
    if args.output is not None:
        _write(args.output, values, graph, args)
        print(f"wrote {graph.n:,} values to {args.output}")
    if args.edges is not None:
        # edges go to the GPU only where its engine serves edge sums: auto unless --engine
        # pinned a CPU engine
        edges = _edge_run(args, graph, sources, targets, matrix, order,
                          args.engine if args.engine in ("cpu", "graphblas") else "auto")
        if args.epsilon is not None:
            _print_approximate(edges.facts, graph, args, "approximate edge BC")
        print(f"edge betweenness centrality ({_run_words(args, sources, targets)}) in "
              f"{edges.seconds:.2f} s")
        _write_edges_csv(args.edges, edges, graph)
        print(f"wrote {edges.values.size:,} edge values to {args.edges}")


def _print_approximate(facts: dict, graph, args, what: str = "approximate") -> None:
    """What an --epsilon run sampled and the bound it reached."""
    from turbobc._validation import DEFAULT_DELTA

    drawn = ("shortest paths of pairs" if facts.get("sampler") == "pairs"
             else f"sources of {graph.n:,}")
    pilot = (f" (after a pilot of {facts['pilot_samples']:,})"
             if facts.get("pilot_samples") else "")
    print(f"{what}: {facts['samples']:,} sampled {drawn}{pilot}, every value "
          f"within {facts['bound']:.3g} of the exact one with probability "
          f"{1 - (args.delta if args.delta is not None else DEFAULT_DELTA):g} "
          f"(stopped by {facts['stopped_by']})")


def _prepare(args):
    """The graph (its size printed), the sources and targets read from their files, and the
    matrix -k samples from with its order (:func:`_sampling_order`). With -k, --edges and no
    --seed, a seed is drawn here so that vertex and edge BC sample the same sources."""
    graph = _load(args)
    _check_k(args.k, graph.n)
    sources = None if args.sources is None else _read_sources(args.sources, graph.labels)
    targets = None if args.targets is None else _read_sources(args.targets, graph.labels,
                                                               "target")
    kind = "directed" if graph.directed else "undirected"
    weighted = ", edge lengths from the file" if graph.weighted else ""
    print(f"{args.file}: n = {graph.n:,} vertices, m = {graph.m:,} {kind} edges{weighted}"
          f"{_header_note(graph, args)}")
    if args.k is not None and args.edges is not None and args.seed is None:
        args.seed = random.SystemRandom().randrange(2**32)
    matrix, order = _sampling_order(graph, args.k)
    return graph, sources, targets, matrix, order


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
def _memory_limit_in_command_words():
    """A MemoryError names the option, --memory-limit, not the argument memory_limit."""
    try:
        yield
    except MemoryError as exc:
        raise MemoryError(str(exc).replace("memory_limit", "--memory-limit")) from None


def _check_options(args) -> None:
    """Everything that can be checked before reading the graph, in the command's words."""
    if args.top < 0:
        raise UsageError(f"--top must be 0 or more; got {args.top}")
    epsilon = getattr(args, "epsilon", None)
    if args.seed is not None and args.k is None and epsilon is None:
        raise UsageError(f"--seed {args.seed} needs -k K or --epsilon: it seeds the sampling "
                         "of sources (exact BC and --sources draw nothing)")
    if getattr(args, "delta", None) is not None and epsilon is None:
        raise UsageError("--delta is the confidence of --epsilon's guarantee; give --epsilon "
                         "too")
    if epsilon is not None and args.targets is not None:
        raise UsageError("--epsilon bounds the error of full BC; --targets is not sampled "
                         "with a guarantee")
    if epsilon is not None and args.raw:
        raise UsageError("--epsilon bounds the error of normalized values; leave out --raw")
    if args.kernel != "auto" and args.engine in ("cpu", "graphblas"):
        raise UsageError(f"--kernel {args.kernel} is a GPU kernel; it needs --engine gpu or "
                         f"auto, not --engine {args.engine}")
    if args.memory_limit is not None:
        from turbobc._memory import parse_memory_limit

        try:
            args.memory_limit = parse_memory_limit(args.memory_limit)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"--memory-limit {args.memory_limit}: "
                             f"{str(exc).replace('memory_limit', 'the size')}") from None
    if args.sources is not None and not Path(args.sources).is_file():
        raise UsageError(f"--sources {args.sources}: no such file")
    if args.targets is not None:
        if not Path(args.targets).is_file():
            raise UsageError(f"--targets {args.targets}: no such file")
        if args.command == "edge-bc" and args.k is not None:
            raise UsageError("--targets computes networkx's edge_betweenness_centrality_subset, "
                             "which has no -k")
        if args.k is not None or args.endpoints:
            raise UsageError("--targets computes networkx's betweenness_centrality_subset, "
                             "which has no -k and no --endpoints")
    if args.output is not None:
        _check_output(args.output, (".csv", ".json") if args.command == "edge-bc"
                      else (".csv", ".json", ".npy"))
    if args.edges is not None:
        _check_output(args.edges, (".csv",), "--edges")
        if args.output is not None and Path(args.edges).resolve() == Path(
                args.output).resolve():
            raise UsageError(f"--edges {args.edges} and -o {args.output} name the same file")


def _check_output(output: str, suffixes, flag: str = "-o") -> None:
    """``flag`` (-o, --edges) names one of ``suffixes`` in an existing, writable directory
    (before any computing)."""
    path = Path(output)
    if path.suffix.lower() not in suffixes:
        names = suffixes[0] if len(suffixes) == 1 else (", ".join(suffixes[:-1]) + " or "
                                                        + suffixes[-1])
        raise UsageError(f"{flag} must end in {names}; got {output!r}")
    folder = path.parent
    if not folder.is_dir():
        raise UsageError(f"{flag} {output}: the directory {str(folder)!r} does not exist")
    if path.is_dir():
        raise UsageError(f"{flag} {output}: is a directory")
    writable = os.access(path, os.W_OK) if path.exists() else os.access(folder, os.W_OK)
    if not writable:
        raise UsageError(f"{flag} {output}: cannot write there (permission denied)")


def _on_cluster(args) -> bool:
    return bool(getattr(args, "scheduler", None)) or getattr(args, "gpus", None) is not None


@contextlib.contextmanager
def _dask_client(args):
    """A Dask client for --scheduler ADDRESS or --gpus N (a local cluster, one worker per
    GPU, closed at the end), else None."""
    if not _on_cluster(args):
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler and --gpus need Dask: pip install 'turbobc[dask]'") \
            from None
    if args.scheduler:
        with Client(args.scheduler) as client:
            yield client
        return
    if args.gpus < 1:
        raise UsageError(f"--gpus must be at least 1; got {args.gpus}")
    from turbobc._dask import local_gpu_cluster

    with local_gpu_cluster(args.gpus) as cluster, Client(cluster) as client:
        yield client


def _engine_words(facts: dict) -> str:
    """'engine gpu', or for a Dask run the engines its workers used."""
    if facts.get("engine") != "dask":
        return f"engine {facts.get('engine')}"
    return (f"{facts.get('workers_used')} Dask worker(s), engine "
            f"{'+'.join(facts.get('worker_engines', []))}, {facts.get('chunks')} chunks")


def _engine(args) -> str:
    """The engine that will run, or the reason the one asked for cannot."""
    from turbobc._engines import CPU_ENGINE, gpu_status

    if args.engine in ("cpu", "graphblas"):
        return args.engine
    if _on_cluster(args):
        return args.engine  # each Dask worker resolves it on its own machine
    usable, reason = gpu_status()
    if args.engine == "gpu" or args.kernel != "auto":
        if not usable:
            asked = "--engine gpu" if args.engine == "gpu" else f"--kernel {args.kernel}"
            raise ValueError(f"{asked} needs a usable CUDA device, and none was found "
                             f"({reason}); run with --engine cpu (or leave out "
                             f"--engine and --kernel) to use {CPU_ENGINE}")
        return "gpu"
    return "gpu" if usable else "cpu"


def _check_k(k, n: int) -> None:
    if k is not None and not 1 <= k <= n:
        raise UsageError(f"-k must be between 1 and the number of vertices, {n:,}; got {k}")


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
    position = {_label(v): i for i, v in enumerate(labels)}
    chosen, first_line = [], {}
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
                if key in first_line:
                    raise ValueError(f"{path}, line {number}: vertex {token!r} is listed "
                                     f"twice (first on line {first_line[key]})")
                first_line[key] = number
                chosen.append(position[key])
    if not chosen:
        raise ValueError(f"{path}: no {kind} vertex listed")
    return chosen


def _print_top(values: np.ndarray, labels: np.ndarray, top: int) -> None:
    order = np.argsort(-values, kind="stable")[:top]
    names = [str(_label(labels[v])) for v in order]
    width = max([6] + [len(s) for s in names])
    print(f"\n{'rank':>4}  {'vertex':>{width}}  {'betweenness':>14}")
    for rank, (v, name) in enumerate(zip(order, names), start=1):
        print(f"{rank:>4}  {name:>{width}}  {values[v]:>14.8g}")


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


def _write(path: str, values: np.ndarray, graph, args) -> None:
    suffix = Path(path).suffix.lower()
    if suffix == ".npy":
        np.save(path, values)
        return
    labels = [_label(v) for v in graph.labels]
    if suffix == ".csv":
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["label", "bc"])
            writer.writerows(zip(labels, (_CSV_VALUE_FORMAT % x for x in values.tolist())))
        return
    record = dict(_run_record(graph, args), endpoints=args.endpoints, vertices=labels,
                  betweenness=values.tolist())
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(record, fh)


# --------------------------------------------------------------------------- edge-bc

class _Edges(NamedTuple):
    """Edge BC as the commands report it: vertex indices in vertex order, sorted, an
    undirected edge once as (smaller index, larger)."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    seconds: float
    facts: dict


def _edge_bc(args) -> None:
    _check_options(args)
    graph, sources, targets, matrix, order = _prepare(args)
    edges = _edge_run(args, graph, sources, targets, matrix, order, args.engine)
    if args.epsilon is not None:
        _print_approximate(edges.facts, graph, args)
    print(f"edge betweenness centrality ({_run_words(args, sources, targets)}) in "
          f"{edges.seconds:.2f} s")
    if args.top:
        _print_top_edges(edges, graph, args.top)
    if args.output is not None:
        if Path(args.output).suffix.lower() == ".csv":
            _write_edges_csv(args.output, edges, graph)
        else:
            _write_edges_json(args.output, edges, graph, args)
        print(f"wrote {edges.values.size:,} edge values to {args.output}")


def _edge_run(args, graph, sources, targets, matrix, order, engine: str) -> _Edges:
    """Edge BC of the run the options describe, on ``matrix`` (in sampling order)."""
    from turbobc._api import run_edge_bc

    start = time.perf_counter()
    with _memory_limit_in_command_words(), _dask_client(args) as client:
        result = run_edge_bc(matrix, sources=sources, targets=targets, k=args.k,
                             seed=args.seed, normalized=not args.raw,
                             directed=graph.directed, engine=engine, progress=args.progress,
                             memory_limit=args.memory_limit,
                             weight=True if args.weight else None, client=client,
                             epsilon=args.epsilon, delta=args.delta)
    seconds = time.perf_counter() - start
    E = result.values.tocoo()
    rows, cols, values = E.row.astype(np.int64), E.col.astype(np.int64), E.data
    if order is not None:  # computed on the file-order matrix: back to vertex order
        rows, cols = order[rows], order[cols]
    if not graph.directed:  # each undirected edge once, as (smaller index, larger)
        once = rows < cols
        rows, cols, values = rows[once], cols[once], values[once]
    ordered = np.lexsort((cols, rows))
    return _Edges(rows[ordered], cols[ordered], values[ordered], seconds, result.facts)


def _print_top_edges(edges: _Edges, graph, top: int) -> None:
    best = np.argsort(-edges.values, kind="stable")[:top]
    ends = [(str(_label(graph.labels[edges.rows[e]])), str(_label(graph.labels[edges.cols[e]])))
            for e in best]
    width = max([6] + [len(a) for a, _ in ends] + [len(b) for _, b in ends])
    arrow = "->" if graph.directed else "--"
    print(f"\n{'rank':>4}  {'edge':>{2 * width + 4}}  {'betweenness':>14}")
    for rank, (e, (a, b)) in enumerate(zip(best, ends), start=1):
        print(f"{rank:>4}  {a:>{width}} {arrow} {b:<{width}}  {edges.values[e]:>14.8g}")


def _edge_labels(edges: _Edges, graph) -> list[list]:
    """[[src label, dst label], ...] with the ids the file uses."""
    labels = [_label(v) for v in graph.labels]
    return [[labels[i], labels[j]] for i, j in zip(edges.rows.tolist(), edges.cols.tolist())]


def _write_edges_csv(path: str, edges: _Edges, graph) -> None:
    """The edge CSV of ``bc --edges`` and ``edge-bc -o .csv``: 'src,dst,bc', '%.16e'."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(_EDGES_CSV_HEADER)
        writer.writerows([a, b, _CSV_VALUE_FORMAT % x]
                         for (a, b), x in zip(_edge_labels(edges, graph),
                                              edges.values.tolist()))


def _write_edges_json(path: str, edges: _Edges, graph, args) -> None:
    record = dict(_run_record(graph, args), edges=_edge_labels(edges, graph),
                  betweenness=edges.values.tolist())
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
    print(f"directed:       {'yes' if graph.directed else 'no'}{_header_note(graph, args)}")
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
