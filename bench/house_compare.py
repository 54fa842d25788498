"""Two trees of turbobc, one GPU, one run: end-to-end seconds of the same calls, side by side.

A restructure must not make a call slower. Each tree (``--tree LABEL=DIR``, e.g. the commit
before a change and the working tree) is imported in a process of its own (``PYTHONPATH=DIR``)
that times, through the public API only:

- exact BC, ``turbobc.bc(A, engine="gpu")``, on ego-Facebook, myc14, kron18, delaunay_n16 and
  road-luxembourg-osm;
- weighted BC (integer lengths 1..100, both directions of an edge alike, seed 0) on
  ego-Facebook, delaunay_n16 and road-luxembourg-osm;
- approximate BC, ``epsilon=0.01, delta=0.1, seed=0``, on the same three;
- the CPU engine's exact BC, ``turbobc.bc(A, engine="cpu")``, on ego-Facebook, power,
  road-minnesota and ca-GrQc, and its weighted BC on ego-Facebook (rows ``cpu ...``: the
  cold-start issue moved the engine from numba's parallel loops to threads over functions
  compiled ahead);

each after an untimed warm-up call (compiles the kernels), the median of 5 runs (3 past 2 s,
2 past 10 s). The trees take turns: the whole list runs ``--rounds`` times per tree, in the
order before, after, after, before, before, after, ... (each round reverses the one before),
and a row keeps each tree's median over its rounds, so that a slow drift of the host's or
the device's speed falls on both alike (alternating before, after, before, after put the
after tree later on every turn: call 7's weighted road-luxembourg-osm samples rose by 0.8 s
from the first round to the last, 2.05 to 2.88 s, across both trees). The record
(``house_compare``) has a row per call with both trees' seconds and ``after / before``.

``--single-source GRAPH ...``: in each turn the tree's own single-source suite
(bench/single_source.py, CUDA events around each kernel) on those graphs too, a row per graph
and kernel (``single GRAPH KERNEL``, its median ms per source as seconds); ``--only-single``:
those rows alone. The turns make a 0.08 ms kernel comparable: call 11 timed the trees once
each, before then after, beside the GPU suite on the other GPUs, and ego-Facebook's sccooc
row read 1.18 while the same kernel under ``auto`` read 1.01.

``--profile``: the last round also runs each call under cProfile, and the row keeps each tree's
top functions by own and cumulative time (where a slower row's time goes).

Usage: python bench/house_compare.py --tree before=.before --tree after=. [--out DIR]
       [--only WORD ...] [--rounds R] [--profile] [--single-source GRAPH ... [--only-single]]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

EXACT = ("ego-Facebook", "myc14", "kron18", "delaunay_n16.mtx.gz", "road-luxembourg-osm.mtx.gz")
WEIGHTED = ("ego-Facebook", "delaunay_n16.mtx.gz", "road-luxembourg-osm.mtx.gz")
APPROX = WEIGHTED
CPU = ("ego-Facebook", "power.mtx", "road-minnesota.mtx", "ca-GrQc.txt.gz")
EPSILON, DELTA = 0.01, 0.1


def _label(name: str) -> str:
    return name.split(".")[0]


def _tree_commit(label: str, tree: str) -> str:
    """What the record names a tree by: ``COMMIT_<LABEL>`` from the environment, else the
    tree's ``COMMIT`` file (a copy of an older commit keeps its name there), else its folder."""
    named = os.environ.get(f"COMMIT_{label.upper()}")
    if named:
        return named
    stamp = Path(tree) / "COMMIT"
    return stamp.read_text().strip() if stamp.is_file() else tree


def _timed(call) -> tuple[float, list]:
    """The median seconds of ``call`` after one untimed warm-up, and every sample."""
    call()
    samples = []
    while True:
        began = time.perf_counter()
        call()
        samples.append(time.perf_counter() - began)
        last = samples[-1]
        wanted = 2 if last > 10 else 3 if last > 2 else 5
        if len(samples) >= wanted:
            return statistics.median(samples), samples


PROFILE_CALLS, PROFILE_TOP = 3, 30


def _profiled(call) -> dict:
    """Where ``call``'s time goes: cProfile over :data:`PROFILE_CALLS` calls, the
    :data:`PROFILE_TOP` functions by own time and by cumulative time (``[function, calls,
    own seconds, cumulative seconds]``, per call), to set the two trees' side by side."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(PROFILE_CALLS):
        call()
    profile.disable()
    stats = pstats.Stats(profile).stats
    rows = [[f"{Path(file).name}:{line}({name})", calls / PROFILE_CALLS, own / PROFILE_CALLS,
             cumulative / PROFILE_CALLS]
            for (file, line, name), (_, calls, own, cumulative, _) in stats.items()]
    return {"own": sorted(rows, key=lambda r: -r[2])[:PROFILE_TOP],
            "cumulative": sorted(rows, key=lambda r: -r[3])[:PROFILE_TOP]}


def measure(only: list[str] | None = None, profile: bool = False) -> dict:
    """The rows of this process's turbobc (the child's side); ``only``: the calls whose names
    contain one of these words (every call when None); ``profile``: each row also says where
    the time goes (:func:`_profiled`)."""
    import cupy
    import numpy as np
    import scipy.sparse as sp

    import graphs
    import turbobc

    def synced(fn):
        def call():
            fn()
            cupy.cuda.Device().synchronize()
        return call

    rows = {}
    loaded = {}

    def graph(name):
        if name not in loaded:
            loaded[name] = graphs.graph(name)
        return loaded[name]

    def wanted(call: str) -> bool:
        return only is None or any(word in call for word in only)

    profiles = {}

    def timed(key, call, facts_of=None):
        rows[key] = _timed(call)
        if profile:
            profiles[key] = _profiled(call)
            if facts_of is not None:  # the run's own facts: family, batch, phases' seconds
                _, facts = facts_of()
                profiles[key]["facts"] = {k: v for k, v in facts.items()
                                          if isinstance(v, (int, float, str, bool))}

    def weighted(A):
        """A's pattern with integer lengths 1..100 (seed 0), both directions alike."""
        upper = sp.triu(sp.csr_array(A), k=1, format="coo")
        lengths = np.random.default_rng(0).integers(1, 101, upper.nnz).astype(np.float64)
        W = sp.coo_array((lengths, (upper.row, upper.col)), shape=A.shape)
        return sp.csr_array(W + W.T)

    from turbobc._api import run_bc

    for name in EXACT:
        if not wanted(f"exact {_label(name)}"):
            continue
        A = graph(name)
        timed(f"exact {_label(name)}", synced(lambda: turbobc.bc(A, engine="gpu")),
              lambda: run_bc(A, engine="gpu"))
    for name in WEIGHTED:
        if not wanted(f"weighted {_label(name)}"):
            continue
        W = weighted(graph(name))
        timed(f"weighted {_label(name)}", synced(lambda: turbobc.bc(W, weight=True, engine="gpu")),
              lambda: run_bc(W, weight=True, engine="gpu"))
    for name in APPROX:
        if not wanted(f"approx {_label(name)} eps={EPSILON}"):
            continue
        A = graph(name)
        timed(f"approx {_label(name)} eps={EPSILON}", synced(
            lambda: turbobc.bc(A, epsilon=EPSILON, delta=DELTA, seed=0, engine="gpu")),
            lambda: run_bc(A, epsilon=EPSILON, delta=DELTA, seed=0, engine="gpu"))
    for name in CPU:
        if wanted(f"cpu {_label(name)}"):
            A = graph(name)
            timed(f"cpu {_label(name)}", lambda: turbobc.bc(A, engine="cpu"),
                  lambda: run_bc(A, engine="cpu"))
    if wanted("cpu weighted ego-Facebook"):
        W = weighted(graph("ego-Facebook"))
        timed("cpu weighted ego-Facebook", lambda: turbobc.bc(W, weight=True, engine="cpu"),
              lambda: run_bc(W, weight=True, engine="cpu"))
    return {key: {"seconds": value[0], "samples": value[1], "profile": profiles.get(key)}
            for key, value in rows.items()}


def _tree_env(tree: Path) -> dict:
    """This process's environment with ``tree`` first on PYTHONPATH: the tree's turbobc."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tree)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


def _child(tree: Path, only: list[str] | None, profile: bool = False) -> dict:
    env = _tree_env(tree)
    out = subprocess.run([sys.executable, __file__, "--child"]
                         + ([] if only is None else ["--only", *only])
                         + (["--profile"] if profile else []), env=env, cwd=tree,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{tree}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _single(tree: Path, graphs: list[str]) -> dict:
    """The tree's own single-source suite on ``graphs``: {"single GRAPH KERNEL": {"seconds":
    median ms per source / 1000, "samples": each source's median, in seconds}}."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "single_source.json"
        done = subprocess.run([sys.executable, "bench/single_source.py", "--out", str(out),
                               "--graphs", *graphs], env=_tree_env(tree), cwd=tree,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{tree}: {done.stderr[-2000:]}")
        record = json.loads(out.read_text())
    return {f"single {g['graph']} {kernel}": {"seconds": row["ms_per_source"] / 1e3,
                                              "samples": [ms / 1e3 for ms in
                                                          row["ms_per_source_each"]],
                                              "profile": None}
            for g in record["graphs"] for kernel, row in g["kernels"].items()}


def _record(args, trees: dict, runs: dict) -> dict:
    """The record of the turns so far: a row per call that every tree has run, with each
    tree's median over its rounds and ``after / before``."""
    labels = list(trees)
    done = [runs[label] for label in labels]
    rows = []
    for key in (done[0][0] if all(done) else {}):
        row = {"call": key}
        for label in labels:
            row[f"{label}_seconds"] = statistics.median(r[key]["seconds"] for r in runs[label])
            row[f"{label}_samples"] = [s for r in runs[label] for s in r[key]["samples"]]
        if len(labels) == 2:
            row["ratio"] = row[f"{labels[1]}_seconds"] / row[f"{labels[0]}_seconds"]
        for label in labels:
            if runs[label][-1][key].get("profile"):
                row[f"{label}_profile"] = runs[label][-1][key]["profile"]
        rows.append(row)
    return {"trees": {label: _tree_commit(label, tree) for label, tree in trees.items()},
            "rounds": min(len(r) for r in runs.values()), "only": args.only,
            "single_source": args.single_source, "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--only", nargs="+", default=None,
                        help="only the calls whose names contain one of these words")
    parser.add_argument("--profile", action="store_true",
                        help="the last round also profiles each call (cProfile): the record's "
                             "rows say where each tree's time goes")
    parser.add_argument("--single-source", nargs="+", default=None, metavar="GRAPH",
                        help="each tree's single-source suite on these graphs too, in the "
                             "same turns")
    parser.add_argument("--only-single", action="store_true",
                        help="the single-source rows alone")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.only, args.profile)))
        return 0
    from records import write_record

    trees = dict(item.split("=", 1) for item in args.tree)
    runs: dict = {label: [] for label in trees}
    path = None
    for round_ in range(args.rounds):
        turn = list(trees.items())
        for label, tree in (turn if round_ % 2 == 0 else turn[::-1]):
            last = round_ == args.rounds - 1
            tree_path = Path(tree).resolve()
            run = ({} if args.only_single else
                   _child(tree_path, args.only, args.profile and last))
            if args.single_source:
                run.update(_single(tree_path, args.single_source))
            runs[label].append(run)
            print(f"round {round_ + 1}: {label} done", flush=True)
            # rewritten after every turn: a run cut by its time limit keeps its rounds
            path = write_record("house_compare", _record(args, trees, runs), args.out, path=path)
    for row in _record(args, trees, runs)["rows"]:
        labels = list(trees)
        scale, unit = (1e3, "ms") if row["call"].startswith("single ") else (1.0, "s")
        print(f"{row['call']:45s} " + "  ".join(
                  f"{label} {row[f'{label}_seconds'] * scale:9.4f} {unit}" for label in labels)
              + (f"  {labels[1]} / {labels[0]} {row['ratio']:.3f}" if "ratio" in row else ""))
    print(f"record: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
