"""Variants of the frontiers family's kernel (spmv/kernels/frontiers.cu) on deep graphs, in one
run: each variant is the kernel compiled with its ``FRONTIER_*`` macros (``--variant
BATCH=4,MIN_BLOCKS=3,WARP_SPLIT=1``), swept on K random sources of del20, rgg20 and road1000
(the device loop, the run's ``sweep_seconds``, scaled by n / K) and exact on delaunay_n16, with
the graph relabeled in ``--order`` (``Tuning.frontier_order``). The record
(``frontier_variants``) has each variant's registers, local memory and seconds; the kept kernel
and what each tried variant gave are in docs/deep-graphs.md.

Usage: python bench/frontier_variants.py --variant BATCH=4,MIN_BLOCKS=3 --variant BATCH=1 [-k 4096]
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
                sources = None if exact else np.sort(
                    np.random.default_rng(0).choice(n, args.k, replace=False))
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
                                                  "variants": results}, args.out, path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
