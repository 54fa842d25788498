"""``python -m bench SUITE [...]``: run named benchmark suites, or ``report``.

    python -m bench cpu-small                 # small graphs, every engine here, ratios
    python -m bench exact                     # exact-BC graphs (docs/benchmarks.md)
    python -m bench single-source             # every GPU kernel per source (GPU only)
    python -m bench memory --budget 300       # peak device memory up to 1e9 stored edges
    python -m bench cpu_memory --baseline REV # CPU engine resident memory, email-Enron
    python -m bench all                       # the four above
    python -m bench report [--write]          # markdown of the records (docs/results.md)

Each suite writes ``<out>/<suite>-<UTC time>.json`` (bench/records.py: environment, commit,
units) and the markdown summary beside it (``.md``), and prints the summary.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench import cpu_memory
from bench.records import RESULTS, write_record
from bench.report import RESULTS_PAGE, results_markdown, summary, write_results_page
from bench.suites import SUITES, timed

ALL = ("cpu-small", "exact", "single-source", "memory")


def _max_pairs(text: str) -> dict:
    engine, _, cap = text.partition("=")
    return {engine: float(cap)}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("suite", choices=sorted(SUITES) + ["all", "report"])
    p.add_argument("--graphs", nargs="+", default=None,
                   help="graph names (bench/graphs.py) instead of the suite's own")
    p.add_argument("--scales", nargs="+", default=None,
                   help="memory: Kronecker scales instead of the default ones; SCALE or "
                        "SCALE:EDGE_FACTOR (48 by default), e.g. 26:72")
    p.add_argument("--budget", type=float, default=300.0,
                   help="memory: seconds the suite may take (sizes predicted to overrun are "
                        "skipped with the reason)")
    p.add_argument("--max-pairs", type=_max_pairs, action="append", default=[],
                   metavar="ENGINE=N", help="cap on n·nnz for an engine, e.g. networkx=1e9")
    p.add_argument("--baseline", default=None, metavar="COMMIT",
                   help="cpu_memory: also measure this commit's code (the 'before')")
    p.add_argument("--mechanisms", action="store_true",
                   help="cpu_memory: compare gc.collect, malloc_trim and malloc arenas")
    p.add_argument("--repeats", type=int, default=1,
                   help="cpu-small and exact: runs of each engine per graph, median kept")
    p.add_argument("--out", type=Path, default=RESULTS, help="where records go")
    p.add_argument("--write", action="store_true",
                   help="report: write the results page instead of printing it")
    p.add_argument("--page", type=Path, default=RESULTS_PAGE,
                   help="report --write: the page to write (default: docs/results.md)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    args.max_pairs = {k: v for d in args.max_pairs for k, v in d.items()}
    if args.suite == "report":
        if args.write:
            write_results_page(args.page, results=args.out)
            print(f"{args.page}: written from the records in {args.out}")
        else:
            print(results_markdown(args.out))
        return 0
    for suite in ALL if args.suite == "all" else (args.suite,):
        print(f"== {suite}", flush=True)
        record = timed(suite, args, log=lambda line: print(line, flush=True))
        path = write_record(suite, record, args.out, path=record.pop("_path", None))
        loaded = json.loads(path.read_text())  # with the environment write_record adds
        text = cpu_memory.summary(loaded) if suite == "cpu_memory" else summary(loaded)
        path.with_suffix(".md").write_text(text)
        print(f"\n{text}\nrecord: {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
