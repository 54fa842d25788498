"""Variants of the frontiers family's kernel (spmv/kernels/frontiers.cu) on deep graphs, in one
run: each variant is the kernel compiled with its ``FRONTIER_*`` macros (``--variant
BATCH=4,MIN_BLOCKS=3,WARP_SPLIT=1``), swept on K random sources of del20, rgg20 and road1000
(the device loop, the run's ``sweep_seconds``, scaled by n / K) and exact on delaunay_n16, with
the graph relabeled in ``--order`` (``Tuning.frontier_order``). The record
(``frontier_variants``) has each variant's registers, local memory and seconds; the kept kernel
and what each tried variant gave are in docs/deep-graphs.md.

With ``--runs R`` the K sampled sources are K / R runs of R neighbours in the locality order
(each run starting at a multiple of R, as a whole run's blocks of ``GROUP`` sources take them:
the sources of a block share their reads only when they are neighbours), the same sources for
every variant, so a variant with ``GROUP=R`` is timed on the groups an exact run sweeps.

Usage: python bench/frontier_variants.py --variant BATCH=4,MIN_BLOCKS=3 --variant BATCH=1 [-k 4096]
       [--runs 4]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import graphs  # noqa: E402
from records import write_record  # noqa: E402

GRAPHS = ("del20", "rgg20", "road1000", "delaunay_n16.mtx.gz")


def main() -> int:
    import cupy

    import spmv._frontiers as frontiers
    import turbobc
    from turbobc._api import run_bc

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--order", default="rcm")
    parser.add_argument("-k", type=int, default=4096)
    parser.add_argument("--graphs", nargs="+", default=list(GRAPHS))
    parser.add_argument("--runs", type=int, default=1,
                        help="sampled sources as runs of this many neighbours in the order")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    loaded = {name: graphs.graph(name) for name in args.graphs}
    results, path = {}, None
    for text in args.variant or [""]:
        macros = dict(item.split("=") for item in text.split(",") if item)
        kernel = frontiers.kernel_for(np.int32, tuple(sorted(macros.items())))
        row = {"registers": kernel.num_regs, "local_bytes": kernel.local_size_bytes}
        with turbobc.tuning(gpu_family="frontiers", frontier_order=args.order,
                            frontier_kernel=macros or None):
            for name, A in loaded.items():
                n = A.shape[0]
                exact = n <= 2**17
                sources = None if exact else sampled_sources(A, args.k, args.runs, args.order)
                run_bc(A, engine="gpu", sources=None if exact else sources[:64])
                cupy.cuda.Device().synchronize()
                began = time.perf_counter()
                facts = run_bc(A, engine="gpu", sources=sources).facts
                cupy.cuda.Device().synchronize()
                row[name.split(".")[0]] = {
                    "wall": time.perf_counter() - began, "sweep": facts["sweep_seconds"],
                    "order": facts.get("order_seconds"), "blocks": facts.get("blocks"),
                    "scaled_sweep": facts["sweep_seconds"] * (1 if exact else n / args.k)}
        results[text or "default"] = row
        print(text or "default", row, flush=True)
        path = write_record("frontier_variants", {"order": args.order, "k": args.k,
                                                  "runs": args.runs, "variants": results},
                            args.out, path)
    return 0


def sampled_sources(A, k: int, runs: int, order: str) -> np.ndarray:
    """``k`` sources of ``A`` (a symmetric pattern): random ones, or with ``runs`` > 1 random
    runs of ``runs`` neighbours in the locality ``order`` (turbobc/engines/gpu/lanes_order.py),
    each starting at a multiple of ``runs``; ascending, the same for every variant."""
    rng = np.random.default_rng(0)
    n = A.shape[0]
    if runs <= 1:
        return np.sort(rng.choice(n, k, replace=False))
    import scipy.sparse as sp

    from turbobc._graph import Graph
    from turbobc.engines.gpu.lanes_order import locality_order

    pattern = sp.csr_array(A, dtype=np.float64)
    pattern.data[:] = 1.0
    rank, _, _ = locality_order(Graph(pattern=pattern, directed=False), order)
    perm = np.argsort(rank)
    firsts = rng.choice(n // runs, k // runs, replace=False) * runs
    return np.sort(perm[(firsts[:, None] + np.arange(runs)).ravel()])


if __name__ == "__main__":
    raise SystemExit(main())
