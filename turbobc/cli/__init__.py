"""The ``turbobc`` command: betweenness centrality of a graph file, and facts about the file.

    turbobc bc FILE [options]      the most central vertices, with the ids the file uses
    turbobc edge-bc FILE [options] the most central edges
    turbobc info FILE [--json]     n, m, degrees, the scf metric, the kernel and device memory
    turbobc warm-up [--json]       compile everything a first call would, ahead

Also runs as ``python -m turbobc.cli``. Reads what :func:`turbobc.read_graph` reads. The
package's modules: ``_parser`` (options, help, the exit-status rule), ``_checks`` (what is
checked before the graph is read), ``_commands`` (the three commands), ``_output`` (stdout,
stderr, tables and output files). Here: :func:`main`, which turns every way a run can end
into one exit status and at most one line on stderr (docs/cli.md).
"""

from __future__ import annotations

import sys
import traceback

from turbobc.cli._checks import UsageError, in_command_words
from turbobc.cli._parser import EXIT_RULE, build_parser

__all__ = ["EXIT_RULE", "UsageError", "main"]

EXIT_DONE, EXIT_DATA_ERROR, EXIT_USAGE_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130
"""The exit statuses of :data:`EXIT_RULE` (argparse's own usage errors exit 2 too)."""


def main(argv=None) -> int:
    """Run the ``turbobc`` command; returns the exit status (:data:`EXIT_RULE`)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit:  # --help, --version or an argparse usage error: printed already
        _flush_stdout()
        raise
    from turbobc.cli._commands import bc, edge_bc, info, warm_up
    from turbobc.exceptions import TurboBCError

    command = {"bc": bc, "edge-bc": edge_bc, "info": info, "warm-up": warm_up}[args.command]
    try:
        command(args)
    except UsageError as exc:
        return _error(args, exc, EXIT_USAGE_ERROR)
    except (ValueError, TypeError, OSError, MemoryError, TurboBCError) as exc:
        return _error(args, exc, EXIT_DATA_ERROR)
    except KeyboardInterrupt:
        if args.debug:
            traceback.print_exc()
        print(f"turbobc {args.command}: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug: said in one line, the traceback with --debug
        return _error(args, exc, EXIT_DATA_ERROR,
                      f"internal error ({type(exc).__name__}: {exc}); run again with --debug "
                      "for the traceback, and report it")
    _flush_stdout()
    return EXIT_DONE


def _error(args, exc: BaseException, status: int, message: str | None = None) -> int:
    """Say what went wrong on stderr, in one line (the traceback before it with --debug)."""
    if args.debug:
        traceback.print_exception(exc)
    print(f"turbobc {args.command}: error: {in_command_words(message or str(exc))}",
          file=sys.stderr, flush=True)
    return status


def _flush_stdout() -> None:
    from turbobc.cli._output import flush

    flush()
