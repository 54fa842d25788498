"""Weighted BC on the GPU with its distances found a source per block in shared memory
(``Tuning.gpu_block_distances``, ``bcl_block_distances`` of spmv/kernels/distances.cu) against
the rounds over the whole batch, on graphs small enough for the blocks (issue 13's ≤ 3x target
on ego-Facebook).

For each graph: integer lengths uniform in 1..100 (the two directions of an undirected edge
alike, bench/exact_gpu.py ``with_random_lengths``), exact weighted BC end to end
(``turbobc.bc(weight=True, engine="gpu")``, trees folded as a user's call does) with the blocks
and with the rounds, and unweighted exact BC of the same graph; each after an untimed warm-up,
the median of ``--repeats`` runs. Records the seconds, the distances' seconds of the weighted
runs, weighted / unweighted ratios, and the largest relative difference between the two
weighted results. Record ``weighted_distances``.

``--widths`` also times the blocks with each near-far width (``gpu_block_near_far_width``).

Usage: python bench/weighted_distances.py [GRAPH ...] [--repeats 5] [--widths 1 4 none]
       [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from exact_gpu import with_random_lengths  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

from turbobc._api import run_bc  # noqa: E402
from turbobc._tuning import tuning  # noqa: E402

DEFAULT_GRAPHS = ["ego-Facebook", "road-minnesota.mtx", "power.mtx", "ca-GrQc.txt.gz",
                  "wiki-Vote.txt.gz", "delaunay_n14.mtx.gz"]


def _median_run(A, repeats: int, **kwargs):
    """(median seconds, result of the median run, every run's seconds) of
    ``run_bc(A, engine="gpu", **kwargs)`` after a warm-up (for an even ``repeats``, the upper
    of the two middle runs)."""
    import cupy

    run_bc(A, engine="gpu", **kwargs)
    runs = []
    for _ in range(repeats):
        cupy.cuda.Device().synchronize()
        began = time.perf_counter()
        result = run_bc(A, engine="gpu", **kwargs)
        cupy.cuda.Device().synchronize()
        runs.append((time.perf_counter() - began, result))
    runs.sort(key=lambda item: item[0])
    return runs[len(runs) // 2][0], runs[len(runs) // 2][1], [item[0] for item in runs]


def bench(name: str, repeats: int, widths=()) -> dict:
    A = graphs.graph(name)
    L = with_random_lengths(A)
    row = {"graph": name, "n": A.shape[0], "nnz": int(A.nnz), "lengths": "integers 1..100",
           "repeats": repeats}
    row["unweighted_seconds"], _, row["unweighted_seconds_all"] = _median_run(A, repeats)
    values = {}
    for label, per_block in (("blocks", True), ("rounds", False)):
        with tuning(gpu_block_distances=per_block):
            seconds, result, every = _median_run(L, repeats, weight=True)
        values[label] = result.values
        row.update({f"{label}_seconds": seconds, f"{label}_seconds_all": every,
                    f"{label}_distance_seconds": result.facts.get("distance_seconds"),
                    f"{label}_layer_seconds": result.facts.get("layer_seconds"),
                    f"{label}_rounds": result.facts.get("rounds"),
                    f"{label}_over_unweighted": seconds / row["unweighted_seconds"]})
    scale = np.maximum(np.abs(values["rounds"]), 1e-300)
    row["max_rel_diff"] = float(np.max(np.abs(values["blocks"] - values["rounds"]) / scale))
    row["rounds_over_blocks"] = row["rounds_seconds"] / row["blocks_seconds"]
    for width in widths:  # the blocks' near-far width (Tuning.gpu_block_near_far_width)
        with tuning(gpu_block_distances=True, gpu_block_near_far_width=width):
            seconds, result, _ = _median_run(L, repeats, weight=True)
        row.setdefault("block_width_seconds", {})[str(width)] = seconds
        row.setdefault("block_width_max_rel_diff", {})[str(width)] = float(
            np.max(np.abs(result.values - values["rounds"]) / scale))
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graphs", nargs="*", default=DEFAULT_GRAPHS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--widths", nargs="*", default=[],
                        help="also time the blocks with each near-far width (mean lengths; "
                             "'none': one phase)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows, path = [], None
    for name in args.graphs:
        widths = [None if w.lower() == "none" else float(w) for w in args.widths]
        row = bench(name, args.repeats, widths)
        rows.append(row)
        print(f"{name:22s} n={row['n']:7d} unweighted {row['unweighted_seconds']:.4f} s; "
              f"weighted: blocks {row['blocks_seconds']:.4f} s (distances "
              f"{row['blocks_distance_seconds'] or 0.0:.4f}, "
              f"x{row['blocks_over_unweighted']:.2f}), rounds {row['rounds_seconds']:.4f} s "
              f"(distances {row['rounds_distance_seconds'] or 0.0:.4f}, "
              f"x{row['rounds_over_unweighted']:.2f}); "
              f"max rel diff {row['max_rel_diff']:.2g}; widths "
              f"{ {w: round(t, 4) for w, t in row.get('block_width_seconds', {}).items()} }",
              flush=True)
        path = write_record("weighted_distances", {"rows": rows}, results=args.out, path=path)
    print(f"record: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
