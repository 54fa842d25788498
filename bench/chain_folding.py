"""Exact BC with the sources inside chains of degree-2 vertices folded into the chains' ends
(``Tuning.fold_chains``, turbobc/_chains.py) against the same call without it, on the GPU
and on the CPU engine, with NetworKit's exact Betweenness on all of the host's cores beside
the CPU runs (issue 12: deep graphs, road networks above all).

For each graph (undirected, unweighted; trees folded as ``turbobc.bc`` does): on each engine
asked for (``--engines``; the GPU when CuPy sees one), ``turbobc.bc`` end to end with the
folding and without it, after an untimed warm-up (compilation), best of ``--repeats`` runs;
the largest relative difference between the two results; the run's chain facts (sources
folded, chains, seconds of the plan, of the target weights and of the host credits). On the
CPU, NetworKit's exact ``Betweenness`` on the same cores (best of two) unless ``--no-networkit``;
ratios are NetworKit seconds / turbobc seconds (above 1: turbobc faster). Record
``chain_folding``.

Usage: python bench/chain_folding.py [GRAPH ...] [--engines gpu graphblas] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from cpu_threads import _networkit_seconds  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

from turbobc._api import run_bc  # noqa: E402
from turbobc._engines import gpu_status  # noqa: E402
from turbobc._tuning import tuning  # noqa: E402

DEFAULT_GRAPHS = ["road-luxembourg-osm.mtx.gz", "road-minnesota.mtx", "power.mtx",
                  "ca-GrQc.txt.gz", "ego-Facebook"]
CPU_MAX_N = 20_000  # the CPU engine and NetworKit run on graphs up to this size


def _timed(A, engine: str, repeats: int, run=run_bc, **knobs):
    """Best of ``repeats`` runs of ``run(A, engine=engine)`` (exact BC by default) under the
    tuning ``knobs``, after one untimed run, and that run's result."""
    def once():
        if engine == "gpu":
            import cupy

            cupy.cuda.Device().synchronize()
        began = time.perf_counter()
        with tuning(**knobs):
            result = run(A, engine=engine)
        return time.perf_counter() - began, result

    once()
    return min((once() for _ in range(repeats)), key=lambda item: item[0])


def bench(name: str, A, engine: str, repeats: int, networkit: bool) -> dict:
    n = A.shape[0]
    folded_s, folded = _timed(A, engine, repeats)
    plain_s, plain = _timed(A, engine, repeats, fold_chains=False)
    scale = np.maximum(np.abs(plain.values), 1e-300)
    row = {"graph": name.split(".")[0],
           "engine": engine, "n": n, "nnz": int(A.nnz), "seconds": folded_s,
           "unfolded_seconds": plain_s, "speedup": plain_s / folded_s,
           "max_rel_diff": float(np.max(np.abs(folded.values - plain.values) / scale)),
           "chain_folded": folded.facts.get("chain_folded", 0),
           "chains": folded.facts.get("chains", 0), "tree_folded": folded.facts.get("folded"),
           "chain_seconds": folded.facts.get("chain_seconds"),
           "sweep_seconds": folded.facts.get("sweep_seconds"),
           "unfolded_sweep_seconds": plain.facts.get("sweep_seconds"),
           "batch": folded.facts.get("batch"), "batches": folded.facts.get("batches"),
           "depth": folded.facts.get("depth")}
    if engine == "graphblas" and networkit:
        cores = os.cpu_count()
        row.update(cores=cores, networkit_seconds=_networkit_seconds(A, cores))
        row["networkit_over_turbobc"] = row["networkit_seconds"] / folded_s
        row["networkit_over_unfolded"] = row["networkit_seconds"] / plain_s
    print(f"{row['graph']:26s} {engine:9s} n={n:7d} folded {row['chain_folded']:6d} in "
          f"{row['chains']:5d} chains: {folded_s:8.3f} s, unfolded {plain_s:8.3f} s "
          f"(x{row['speedup']:.2f}); max rel diff {row['max_rel_diff']:.2g}"
          + (f"; NetworKit / turbobc {row['networkit_over_turbobc']:.2f} (unfolded "
             f"{row['networkit_over_unfolded']:.2f})" if "networkit_seconds" in row else ""),
          flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*", default=DEFAULT_GRAPHS)
    parser.add_argument("--engines", nargs="+", default=["gpu", "graphblas"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-networkit", dest="networkit", action="store_false")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    engines = [e for e in args.engines if e != "gpu" or gpu_status()[0]]
    rows, record = [], None
    for name in args.graphs:
        A = graphs.graph(name)
        for engine in engines:
            if engine == "graphblas" and A.shape[0] > CPU_MAX_N:
                continue
            rows.append(bench(name, A, engine, args.repeats, args.networkit))
            record = write_record("chain_folding", {"rows": rows}, results=args.out,
                                  path=record)
    print(f"record: {record}")


if __name__ == "__main__":
    main()
