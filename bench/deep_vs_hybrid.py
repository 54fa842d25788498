"""Deep graphs on one GPU: turbobc's GPU families beside hybrid_BC, McLaughlin & Bader's 2014 code
(its public repository, built as docs/deep-graphs.md says; never committed), in one run.

For each graph: hybrid_BC (``--hybrid PATH``, or $TURBOBC_HYBRID_BC), its own GPU timer ("Time
for GPU Algorithm": allocations, copies and the kernel; file parsing excluded), exact on graphs
of at most 2^17 vertices; on larger ones on K = ``--hybrid-sources`` and K / 4 random sources,
the two times fitted as a + b K and the exact run estimated as a + b n (its fixed cost counted
once). Then turbobc, ``turbobc._api.run_bc(A, engine="gpu")`` end to end (validation on the host
included: the stricter side), once per family of ``--families`` (``Tuning.gpu_family``), exact
on the small graphs and on K = ``--sources`` random sources on the large ones, after an untimed
warm-up (the same exact call, or 64 of the sources): the exact run estimated as the call's
fixed part (its wall time less the device loop, ``sweep_seconds``: validation, ordering,
uploads) plus the device loop scaled by n / K. The record (``deep_vs_hybrid``) has a row per graph and
family: graph, device, n, nnz, sources, exact, turbobc_seconds, hybrid_bc_seconds, family,
and ``hybrid_over_turbobc`` (above 1: turbobc is faster).

Usage: python bench/deep_vs_hybrid.py --hybrid .peers/hybrid_bc [--graphs del20 ...]
       [--families lanes frontiers] [--sources 4096] [--hybrid-sources 1024] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import graphs  # noqa: E402
from records import write_record  # noqa: E402

GRAPHS = ("delaunay_n16.mtx.gz", "del20", "rgg20", "road1000", "road-luxembourg-osm.mtx.gz")
EXACT_UP_TO = 2**17
"""Graphs of at most this many vertices run exact (every source) on both sides."""


def write_metis(A, path: Path) -> None:
    """The graph in the METIS format hybrid_BC reads (``.graph``: n and m, then each vertex's
    neighbours, 1-based, a line each)."""
    n = A.shape[0]
    with open(path, "w") as out:
        out.write(f"{n} {A.nnz // 2}\n")
        ptr, idx = A.indptr, A.indices + 1
        for v in range(n):
            out.write(" ".join(map(str, idx[ptr[v]:ptr[v + 1]].tolist())) + "\n")


def hybrid_seconds(binary: Path, path: Path, k: int | None) -> float:
    """hybrid_BC's own GPU time ("Time for GPU Algorithm") of ``path``, on k random sources or
    all."""
    cmd = [str(binary), "-i", str(path)] + ([] if k is None else ["-k", str(k)])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    found = re.search(r"Time for GPU Algorithm: ([0-9.eE+-]+) s", out)
    if found is None:
        raise RuntimeError(f"hybrid_BC printed no time: {out[-500:]}")
    return float(found.group(1))


def turbobc_seconds(A, family: str, sources) -> tuple[float, dict]:
    """End-to-end seconds of ``run_bc`` on ``sources`` (None: exact BC) with the family."""
    import cupy

    import turbobc
    from turbobc._api import run_bc

    with turbobc.tuning(gpu_family=family):
        # the warm-up compiles what the timed call runs: an exact call's folding kernels too
        run_bc(A, engine="gpu", sources=None if sources is None else sources[:64])
        cupy.cuda.Device().synchronize()
        began = time.perf_counter()
        result = run_bc(A, engine="gpu", sources=sources)
        cupy.cuda.Device().synchronize()
        return time.perf_counter() - began, result.facts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hybrid", type=Path, default=os.environ.get("TURBOBC_HYBRID_BC"))
    parser.add_argument("--graphs", nargs="+", default=list(GRAPHS))
    parser.add_argument("--families", nargs="+", default=["lanes", "frontiers"])
    parser.add_argument("--sources", type=int, default=4096)
    parser.add_argument("--hybrid-sources", type=int, default=1024)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    from turbobc._engines import gpu_status

    device = gpu_status()[1]
    rows, path = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.graphs:
            A = graphs.graph(name)
            n, nnz = A.shape[0], int(A.nnz)
            exact = n <= EXACT_UP_TO
            label = Path(name).name.split(".")[0]
            hybrid = None
            if args.hybrid is not None:
                file = Path(tmp) / f"{label}.graph"
                write_metis(A, file)
                if exact:
                    hybrid = hybrid_seconds(args.hybrid, file, None)
                else:  # a + b K at two K: the fixed cost once, the per-source cost n times
                    k2 = min(n, args.hybrid_sources)
                    k1 = max(1, k2 // 4)
                    t1, t2 = (hybrid_seconds(args.hybrid, file, k) for k in (k1, k2))
                    per_source = (t2 - t1) / (k2 - k1)
                    hybrid = t1 - per_source * k1 + per_source * n
            k = n if exact else min(n, args.sources)
            sources = None if exact else np.sort(
                np.random.default_rng(0).choice(n, k, replace=False))
            for family in args.families:
                seconds, facts = turbobc_seconds(A, family, sources)
                loop = facts.get("sweep_seconds", seconds) if not exact else seconds
                estimate = seconds - loop + loop * n / k
                row = {"graph": label, "device": device, "n": n, "nnz": nnz, "sources": k,
                       "exact": exact, "turbobc_seconds": estimate,
                       "hybrid_bc_seconds": hybrid, "family": facts.get("family", family),
                       "family_asked": family, "measured_seconds": seconds,
                       "hybrid_over_turbobc": None if hybrid is None else hybrid / estimate,
                       "facts": {key: value for key, value in facts.items()
                                 if isinstance(value, (int, float, str, bool))}}
                rows.append(row)
                print(f"{label:22s} {family:10s} turbobc {row['turbobc_seconds']:10.2f} s  "
                      f"hybrid_BC {hybrid if hybrid is not None else float('nan'):10.2f} s  "
                      f"ratio {row['hybrid_over_turbobc'] or float('nan'):6.2f}"
                      f"  ({'exact' if exact else f'{k} sources'})", flush=True)
                path = write_record("deep_vs_hybrid", {"rows": rows}, args.out, path)
    print(f"record: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
