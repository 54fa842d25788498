"""The width of the near-far phases of the GPU's weighted distances (issue 13), timed.

For each ``GRAPH:K`` (integer lengths 1..100 from ``exact_gpu.with_random_lengths``, K random
sources), weighted BC through the GPU engine's protocol with
``Tuning.gpu_near_far_width`` = None (one phase), 0.5, 1, 2, 4 and 8 mean
edge lengths: total and distance seconds, rounds, batch, and the largest relative difference
of the values from the one-phase run (the distances are equal; the sums differ by the order
of the sweep's atomic adds).

Usage: python bench/weighted_nearfar.py GRAPH:K ... [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from exact_gpu import LABELS, cached_graph, with_random_lengths  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

from turbobc.engines import engine_named  # noqa: E402
from turbobc._tuning import tuning  # noqa: E402
from turbobc._validation import _weighted_graph  # noqa: E402
from turbobc.engines.protocol import Problem  # noqa: E402

WIDTHS = (None, 0.5, 1, 2, 4, 8)


def bench(name: str, k: int) -> list[dict]:
    graph = _weighted_graph(with_random_lengths(cached_graph(name), 0), False)
    rng = np.random.default_rng(0)
    sources = np.sort(rng.choice(graph.n, size=min(graph.n, k), replace=False)).astype(np.int64)
    rows, reference = [], None
    for width in WIDTHS:
        with tuning(gpu_near_far_width=width), \
                engine_named("gpu").open(Problem(graph)) as sweeper:
            sweeper.run(sources[:64])  # compile and warm up
            began = time.perf_counter()
            values = sweeper.run(sources).vertex
            seconds = time.perf_counter() - began
            facts = dict(sweeper.facts)
        reference = values if reference is None else reference
        row = {"graph": LABELS.get(name, name), "n": graph.n, "sources": int(sources.size),
               "width": width, "seconds": seconds,
               "distance_seconds": facts.get("distance_seconds"),
               "rounds": facts.get("rounds"), "batch": facts.get("batch"),
               "max_rel_diff": float(np.max(np.abs(values - reference)
                                            / np.maximum(np.abs(reference), 1e-300)))}
        print(row, flush=True)
        rows.append(row)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="+", help="GRAPH:K")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows = []
    for item in args.graphs:
        name, k = item.rsplit(":", 1)
        rows += bench(name, int(k))
    print("record:", write_record("weighted_nearfar", {"rows": rows}, results=args.out))


if __name__ == "__main__":
    main()
