"""The main job on a real graph shipped with turbobc: exact BC of SNAP ego-Facebook.

    python -m turbobc.demo [--engine auto|gpu|cpu|graphblas] [--top 10] [--progress]

Prints the engine used (and the GPU, if any), the time, and the most central vertices; on
stderr, one line when the run compiled something at first use (a fresh install whose
functions were not compiled ahead: ``turbobc warm-up``).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from turbobc._api import run_bc
from turbobc._compiled import first_use_line
from turbobc._config import config
from turbobc._engines import cpu_fallback_note
from turbobc.datasets import load_ego_facebook


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m turbobc.demo",
        description="Exact betweenness centrality of SNAP ego-Facebook (4,039 vertices, "
                    "88,234 edges), shipped inside turbobc.")
    parser.add_argument("--engine", default="auto", choices=["auto", "gpu", "cpu", "graphblas"],
                        help="auto: the GPU when CuPy sees one, else the CPU (default)")
    parser.add_argument("--top", type=int, default=10, help="how many vertices to list")
    parser.add_argument("--progress", action="store_true", help="show a progress bar")
    args = parser.parse_args(argv)

    A = load_ego_facebook()
    info = config()
    engine = args.engine if args.engine != "auto" else info["default_engine"]
    where = {"gpu": info["gpu"], "cpu": "CPU, numba", "graphblas": "CPU, python-graphblas"}[engine]
    print(f"ego-Facebook: n = {A.shape[0]:,} vertices, m = {A.nnz // 2:,} undirected edges")
    print(f"engine: {engine} ({where})")
    if args.engine == "auto" and engine == "cpu":
        print(cpu_fallback_note())
    start = time.perf_counter()
    result = run_bc(A, engine=engine, progress=args.progress)
    seconds = time.perf_counter() - start
    values = result.values
    line = first_use_line(result.facts)
    if line:
        print(line, file=sys.stderr)
    print(f"exact betweenness centrality (normalized) in {seconds:.2f} s")
    order = np.argsort(-values, kind="stable")[:args.top]
    print(f"\n{'rank':>4}  {'vertex':>6}  {'betweenness':>12}")
    for rank, v in enumerate(order, start=1):
        print(f"{rank:>4}  {v:>6}  {values[v]:>12.6f}")


if __name__ == "__main__":
    main()
