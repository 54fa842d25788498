"""Everything the ``turbobc`` command checks before it reads the graph: the options and their
combinations, the input files' existence, the output paths, the GPUs asked for. A failure is a
:class:`UsageError` (exit status 2), in the command's words (:func:`in_command_words`)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from turbobc import _engines

__all__ = ["UsageError", "check_before_reading", "check_k", "choose_engine", "in_command_words",
           "on_cluster"]


class UsageError(ValueError):
    """The command cannot run as given (exit status 2): an option or a combination of them,
    an input file that does not exist, an output path that cannot be written, a GPU that is
    not there, -k beyond the graph."""


def _api_to_flags() -> list[tuple[str, str]]:
    from turbobc.io._readers import FORMATS

    return [("weighted=True", "--weight"),
            ("memory_limit", "--memory-limit"),
            ("format='csv' or 'tsv'", "--format csv or --format tsv"),
            (f"pass format= one of {', '.join(map(repr, FORMATS))}",
             f"give --format {', '.join(FORMATS[:-1])} or {FORMATS[-1]}")]


def in_command_words(message: str) -> str:
    """A message of the Python API (a reader's, the memory limit's) with the options spelled
    as the command spells them: ``--weight`` for ``weighted=True``, ``--format csv`` for
    ``format='csv'``, ``--memory-limit`` for ``memory_limit``."""
    for api, flag in _api_to_flags():
        message = message.replace(api, flag)
    return message


def on_cluster(args) -> bool:
    """Whether the run goes to Dask (--scheduler or --gpus)."""
    return bool(getattr(args, "scheduler", None)) or getattr(args, "gpus", None) is not None


def check_before_reading(args) -> None:
    """Every check that needs no more than the command line and the file system."""
    _check_graph_file(args)
    if args.command == "info":
        return
    _check_options(args)
    _check_input_files(args)
    _check_outputs(args)
    _check_gpus(args)


def _check_graph_file(args) -> None:
    from turbobc.io._readers import format_of

    path = Path(args.file)
    if not path.exists():
        raise UsageError(f"{args.file}: no such graph file")
    if path.is_dir():
        raise UsageError(f"{args.file}: is a directory, not a graph file")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{args.file}: cannot read the graph file (permission denied)")
    try:
        format_of(path, args.format)
    except ValueError as exc:
        raise UsageError(in_command_words(str(exc))) from None


def _check_options(args) -> None:
    from turbobc._validation import check_guarantee

    if args.top < 0:
        raise UsageError(f"--top must be 0 or more; got {args.top}")
    if args.k is not None and args.k < 1:
        raise UsageError(f"-k must be between 1 and the number of vertices; got {args.k}")
    epsilon = getattr(args, "epsilon", None)
    if args.seed is not None and args.k is None and epsilon is None:
        raise UsageError(f"--seed {args.seed} needs -k K or --epsilon: it seeds the sampling "
                         "of sources (exact BC and --sources draw nothing)")
    if getattr(args, "delta", None) is not None and epsilon is None:
        raise UsageError("--delta is the confidence of --epsilon's guarantee; give --epsilon "
                         "too")
    if epsilon is not None:
        try:  # the API's rule for epsilon and delta: each strictly between 0 and 1
            check_guarantee(epsilon, args.delta, k=None, sources=None, targets=None,
                            normalized=True)
        except ValueError as exc:
            raise UsageError(re.sub(r"^(epsilon|delta) ", r"--\1 ", str(exc))) from None
        if args.targets is not None:
            raise UsageError("--epsilon bounds the error of full BC; --targets is not sampled "
                             "with a guarantee")
        if args.raw:
            raise UsageError("--epsilon bounds the error of normalized values; leave out "
                             "--raw")
    if args.kernel != "auto" and args.engine in ("cpu", "graphblas"):
        raise UsageError(f"--kernel {args.kernel} is a GPU kernel; it needs --engine gpu or "
                         f"auto, not --engine {args.engine}")
    if args.targets is not None:
        if args.command == "edge-bc" and args.k is not None:
            raise UsageError("--targets computes networkx's edge_betweenness_centrality_"
                             "subset, which has no -k")
        if args.k is not None or args.endpoints:
            raise UsageError("--targets computes networkx's betweenness_centrality_subset, "
                             "which has no -k and no --endpoints")
    if getattr(args, "updates", None) is not None:
        clash = [flag for flag, given in (
            ("-k", args.k is not None), ("--sources", args.sources is not None),
            ("--targets", args.targets is not None), ("--edges", args.edges is not None),
            ("--kernel", args.kernel != "auto"), ("--memory-limit", args.memory_limit is not None),
            ("--scheduler", bool(getattr(args, "scheduler", None))),
            ("--gpus", getattr(args, "gpus", None) is not None)) if given]
        if clash:
            raise UsageError(f"--updates keeps BC of every source current (exact, or "
                             f"--epsilon's estimate) on this machine; it does not take "
                             f"{clash[0]}")
    if args.memory_limit is not None:
        from turbobc._memory import parse_memory_limit

        try:
            args.memory_limit = parse_memory_limit(args.memory_limit)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"--memory-limit {args.memory_limit}: "
                             f"{str(exc).replace('memory_limit', 'the size')}") from None


def _check_input_files(args) -> None:
    for flag, name in (("--sources", args.sources), ("--targets", args.targets),
                       ("--updates", getattr(args, "updates", None))):
        if name is not None and not Path(name).is_file():
            raise UsageError(f"{flag} {name}: no such file")


def _check_outputs(args) -> None:
    if args.output is not None:
        check_output(args.output, (".csv", ".json") if args.command == "edge-bc"
                     else (".csv", ".json", ".npy"), args.file)
    if args.edges is not None:
        check_output(args.edges, (".csv",), args.file, "--edges")
        if args.output is not None and Path(args.edges).resolve() == Path(
                args.output).resolve():
            raise UsageError(f"--edges {args.edges} and -o {args.output} name the same file")


def check_output(output: str, suffixes, graph_file: str, flag: str = "-o") -> None:
    """``flag`` (-o, --edges) names one of ``suffixes``, not the graph file, in a directory
    where a file can be created: checked by creating one (and removing it)."""
    path = Path(output)
    if path.suffix.lower() not in suffixes:
        names = suffixes[0] if len(suffixes) == 1 else (", ".join(suffixes[:-1]) + " or "
                                                        + suffixes[-1])
        raise UsageError(f"{flag} must end in {names}; got {output!r}")
    folder = path.parent
    for above in (folder, *folder.parents):  # the nearest one that exists
        if above.exists():
            if not above.is_dir():
                raise UsageError(f"{flag} {output}: {str(above)!r} is a file, not a directory")
            break
    if not folder.is_dir():
        raise UsageError(f"{flag} {output}: the directory {str(folder)!r} does not exist")
    if path.is_dir():
        raise UsageError(f"{flag} {output}: is a directory")
    if path.exists() and path.resolve() == Path(graph_file).resolve():
        raise UsageError(f"{flag} {output}: is the graph file; the output would overwrite it")
    writable = os.access(path, os.W_OK) if path.exists() else os.access(folder, os.W_OK)
    if not writable:
        raise UsageError(f"{flag} {output}: cannot write there (permission denied)")
    probe = folder / f".{path.name}.{os.getpid()}.probe"
    try:
        with open(probe, "x"):
            pass
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"{flag} {output}: cannot create a file in {str(folder)!r} (the "
                         f"system says: {exc.strerror})") from None


def _check_gpus(args) -> None:
    gpus = getattr(args, "gpus", None)
    if gpus is None:
        return
    if gpus < 1:
        raise UsageError(f"--gpus must be at least 1; got {gpus}")
    found = _engines.gpu_count()
    if gpus > found:
        raise UsageError(f"--gpus {gpus} asks for {gpus} GPUs; this machine has {found}: "
                         f"{_engines.gpu_status()[1]}")


def choose_engine(args) -> str:
    """The engine that will run: "gpu", "cpu" or "graphblas" (the one asked for, or where it
    is left to the workers of a Dask cluster, "auto"); a GPU asked for that is not there is a
    usage error."""
    if args.engine in ("cpu", "graphblas"):
        return args.engine
    if on_cluster(args):
        return args.engine  # each Dask worker resolves it on its own machine
    usable, reason = _engines.gpu_status()
    if args.engine == "gpu" or args.kernel != "auto":
        if not usable:
            asked = "--engine gpu" if args.engine == "gpu" else f"--kernel {args.kernel}"
            raise UsageError(f"{asked} needs a usable CUDA device, and none was found "
                             f"({reason}); run with --engine cpu (or leave out "
                             f"--engine and --kernel) to use {_engines.CPU_ENGINE}")
        return "gpu"
    return "gpu" if usable else "cpu"


def check_k(k, n: int) -> None:
    """-k against the number of vertices (once the graph is read)."""
    if k is not None and not 1 <= k <= n:
        raise UsageError(f"-k must be between 1 and the number of vertices, {n:,}; got {k}")
