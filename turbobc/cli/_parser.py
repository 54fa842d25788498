"""The ``turbobc`` command's words: its options, their help, and the exit-status rule."""

from __future__ import annotations

import argparse

__all__ = ["EXIT_RULE", "build_parser"]

EXIT_RULE = """\
exit status and output:
  0    done; also when whoever reads the output closes it early ('| head'): the run
       goes on quietly and still writes its files
  1    a data error: the graph file, or a --sources or --targets file, is malformed,
       empty or claims more than it holds (the message names the file and the line);
       or the run failed (out of memory, a GPU error)
  2    a usage error: an option, a combination of options, an input file that does not
       exist, an output path that cannot be written, a GPU asked for (--engine gpu,
       --kernel, --gpus N) that this machine does not have; found before the graph is
       read, except -k against the number of vertices, found before any computing
  130  interrupted (Ctrl-C): one line on stderr, no output file left behind
Results (the graph read, what was computed, the table, the files written) go to stdout;
notes (no GPU found), progress bars and errors go to stderr. An error is one line,
'turbobc COMMAND: error: ...'; --debug adds the traceback and Dask's own logging.
"""

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
  turbobc bc power.mtx --updates changes.csv --top 3
                                              BC kept current through batches of changes
  turbobc edge-bc ca-GrQc.txt.gz --top 5      edge BC, the 5 most central edges
  turbobc warm-up                             compile everything ahead (container images)

Run 'turbobc bc --help', 'turbobc edge-bc --help', 'turbobc info --help' or
'turbobc warm-up --help' for the options of each command.
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
    parser.add_argument("--debug", action="store_true",
                        help="on an error, print the traceback too; show Dask's own logging "
                             "(with --scheduler or --gpus)")
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
                              "on it (N at most the GPUs this machine has)")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``turbobc`` and its commands bc, edge-bc, info and warm-up."""
    parser = argparse.ArgumentParser(
        prog="turbobc", description=_DESCRIPTION, epilog=_EPILOG + "\n" + EXIT_RULE,
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
    bc.add_argument("--updates", metavar="CHANGES",
                    help="keep BC current through the edge changes listed in CHANGES: one a "
                         "line, '+,u,v' (insert u - v) or '-,u,v' (delete it), with --weight "
                         "'+,u,v,length'; blank lines separate batches; after each batch the "
                         "top vertices are printed, -o writes the values after the last "
                         "(turbobc.DynamicBC, docs/dynamic.md); exact, or with --epsilon the "
                         "guarantee after every batch; not with -k, --sources, --targets, "
                         "--edges, --kernel, --memory-limit, --scheduler or --gpus")
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
    edge.set_defaults(kernel="auto", endpoints=False, edges=None, updates=None)

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

    warm = commands.add_parser(
        "warm-up", help="compile everything a first call would compile, ahead",
        description="Load or compile, once, everything a first call compiles: the CPU "
                    "functions (shipped with the install, else compiled by numba into its "
                    "disk cache), the GPU kernels where CuPy sees a device (shipped "
                    "binaries, else NVRTC into CuPy's disk cache), and CuPy's own kernels on "
                    "every GPU family's path (a small graph swept once by each). For "
                    "container images and clusters: later processes start with them "
                    "compiled. Dask workers run the same (turbobc._dask.warm_up).")
    warm.add_argument("--engine", default="auto", choices=["auto", "gpu", "cpu", "graphblas"],
                      help="auto: the CPU functions, and the GPU's when CuPy sees one")
    warm.add_argument("--json", action="store_true", help="print the report as JSON")
    warm.add_argument("--debug", action="store_true", help="on an error, print the traceback")
    return parser
