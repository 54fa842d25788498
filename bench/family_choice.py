"""Which GPU family ``"auto"`` takes, against every family forced, on one GPU: the record
``family_choice`` (docs/deep-graphs.md, "Choosing the family").

For each graph, ``turbobc._api.run_bc(A, engine="gpu")`` end to end (validation, folding,
orders and uploads included) once with ``Tuning.gpu_family="auto"`` and once with each family
of ``--families`` forced, exact (every source; trees and chains folded as a call folds them),
or on K random sources (``--sources GRAPH:K``, the same sources for every family) where the
exact run would take minutes. Every kernel is loaded before the first timed call (an untimed
exact call on a small road network, which folds trees and chains, per family), and each
graph's first call (it caches the matrix's own checks and grows the device's memory pool:
an exact call up to 2^17 vertices) is untimed; the families are then called in rounds, each
round in another order (``"auto"`` was timed first after the untimed call and came out up to
20% slower than the same family forced: family_choice-20261129T092813Z), up to three rounds
while the fastest call took under ``--repeat-below`` seconds (:data:`SHORT_ROUNDS` while it
took under :data:`SHORT_CALL`), and each family's fastest call is kept. A family forced over
:data:`OUT_OF_RACE` times the fastest call is not called again (it cannot be the best;
road-luxembourg-osm's lanes at 2.7 s once stopped the rounds after one, and a single call of
``"auto"`` came out 1.16x the same family forced: family_choice-20261129T115110Z).

The record has a row per graph: graph, device, n, nnz, sources, exact, auto_family,
auto_seconds, best_family, best_forced_seconds, seconds_by_family, auto_over_best (at most
1.1 is the goal), and per family the facts a cost model reads (family, batches, depth,
folded sources, sweep seconds; the auto call's ``family_costs``: every family's prediction
and its inputs, which bench/family_rates.py fits the rates to).

Usage: python bench/family_choice.py [--graphs NAME ...] [--families lanes frontiers]
       [--sources del20:4096 ...] [--repeat-below 2.0] [--out DIR]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import graphs  # noqa: E402
from records import write_record  # noqa: E402

GRAPHS = (
    # meshes
    "delaunay_n12.mtx", "delaunay_n13.mtx", "delaunay_n14.mtx.gz", "delaunay_n15.mtx.gz",
    "delaunay_n16.mtx.gz", "4elt.mtx.gz", "wing.mtx.gz", "del16", "rgg16",
    # roads and grids
    "road-luxembourg-osm.mtx.gz", "road-minnesota.mtx", "road340", "power.mtx",
    # social, collaboration, internet
    "facebook_combined.txt.gz", "ca-GrQc.txt.gz", "astro-ph.mtx.gz", "CA-CondMat.txt.gz",
    "email-Enron.txt.gz", "PGPgiantcompo.mtx", "as20000102.txt", "ego-Twitter-undirected.mtx.gz",
    "myc14",
)
"""The graphs of the bench that run exact in seconds (``--graphs`` adds the public road
networks of ``.gpudata/roads`` and the 2^20 graphs with ``--sources``)."""

WARM_EXACT_UP_TO = 2**17
"""Graphs of at most this many vertices get an untimed exact call first (the pool's growth
to the run's rows took road-luxembourg-osm's first exact call 0.77 s against 0.66 s); larger
ones an untimed call of 64 sources."""

SHORT_CALL, SHORT_ROUNDS = 0.5, 5
"""Calls this short (seconds) get this many rounds: CA-CondMat's lanes took 0.116 s forced and
0.133 s as "auto"'s choice, the fastest of three each (family_choice-20261129T121408Z)."""

OUT_OF_RACE = 1.5
"""A forced family this many times slower than the fastest call sits out the later rounds."""

FACT_KEYS = ("family", "kernel", "batches", "batch", "blocks", "depth", "phased",
             "chain_folded", "folded", "sweep_seconds", "launches", "order_seconds",
             "family_costs")


def timed_call(A, family: str, sources) -> tuple[float, dict]:
    """The seconds and facts of one end-to-end call with ``Tuning.gpu_family=family``."""
    import cupy

    import turbobc
    from turbobc._api import run_bc

    with turbobc.tuning(gpu_family=family):
        cupy.cuda.Device().synchronize()
        began = time.perf_counter()
        result = run_bc(A, engine="gpu", sources=sources)
        cupy.cuda.Device().synchronize()
        return time.perf_counter() - began, result.facts


def fastest_calls(A, families: list[str], sources, repeat_below: float) -> tuple[dict, dict]:
    """The fastest seconds of each family's calls and the facts of that call, in rounds of one
    call each, every round in another order (a rotation: the family timed first in one round
    is timed last in the next), up to three rounds while the fastest call took under
    ``repeat_below`` seconds (:data:`SHORT_ROUNDS` under :data:`SHORT_CALL`); a forced family
    :data:`OUT_OF_RACE` times slower than the fastest call sits out the later rounds ("auto"
    never does) and keeps its one call's seconds, which may include compiling what only it
    needs in the process (ego-Facebook's frontiers: CuPy's sort, 3.8 s once,
    family_choice-20261129T122112Z)."""
    best, facts = {family: float("inf") for family in families}, {}
    for turn in range(SHORT_ROUNDS):
        fastest = min(best.values())
        if turn >= 3 and fastest >= SHORT_CALL:
            break
        racing = [family for family in families
                  if family == "auto" or best[family] <= OUT_OF_RACE * fastest]
        order = racing[turn % len(racing):] + racing[:turn % len(racing)]
        for family in order:
            seconds, got = timed_call(A, family, sources)
            if seconds < best[family]:
                best[family], facts[family] = seconds, got
        if min(best.values()) >= repeat_below:
            break
    return best, facts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=list(GRAPHS))
    parser.add_argument("--families", nargs="+", default=["lanes", "frontiers"])
    parser.add_argument("--sources", nargs="*", default=[],
                        help="GRAPH:K, K random sources for that graph instead of exact")
    parser.add_argument("--repeat-below", type=float, default=2.0)
    parser.add_argument("--warm-graph", default="road-minnesota.mtx")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    from turbobc._engines import gpu_status

    device = gpu_status()[1]
    sampled = {name: int(k) for name, k in (item.rsplit(":", 1) for item in args.sources)}
    warm = graphs.graph(args.warm_graph)
    families = ["auto", *args.families]
    for family in families:  # every kernel loaded before the timed calls
        timed_call(warm, family, None)
    rows, path = [], None
    for name in args.graphs:
        A = graphs.graph(name)
        n, nnz = A.shape[0], int(A.nnz)
        k = sampled.get(name)
        sources = None if k is None else np.sort(
            np.random.default_rng(0).choice(n, min(k, n), replace=False))
        # untimed first: the matrix's own checks (sorted indices, ...) are cached on it by its
        # first call, and the device's memory pool grows to what the run holds
        exact_warm = sources is None and n <= WARM_EXACT_UP_TO
        timed_call(A, "auto", None if exact_warm else (
            np.arange(min(64, n)) if sources is None else sources[:64]))
        seconds, got = fastest_calls(A, families, sources, args.repeat_below)
        facts = {family: {key: value for key, value in got[family].items() if key in FACT_KEYS}
                 for family in families}
        forced = {family: seconds[family] for family in args.families}
        best = min(forced, key=forced.get)
        label = re.sub(r"\.(mtx|txt)(\.gz)?$", "", Path(name).name)
        row = {"graph": label, "device": device, "n": n, "nnz": nnz,
               "sources": n if k is None else int(sources.size), "exact": k is None,
               "auto_family": facts["auto"].get("family"), "auto_seconds": seconds["auto"],
               "best_family": best, "best_forced_seconds": forced[best],
               "seconds_by_family": forced, "auto_over_best": seconds["auto"] / forced[best],
               "facts_by_family": facts}
        rows.append(row)
        print(f"{label:28s} auto={row['auto_family']:9s} {seconds['auto']:8.3f} s  "
              + "  ".join(f"{f} {s:8.3f}" for f, s in forced.items())
              + f"  auto/best {row['auto_over_best']:.2f}", flush=True)
        path = write_record("family_choice", {"rows": rows}, args.out, path)
    print(f"record: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
