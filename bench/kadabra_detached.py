"""NetworKit's KADABRA run past one device call: started detached (its own process session),
collected by a later call on the same machine (issue 16's ε = 0.001 rows on deep graphs, where
KADABRA takes longer than the ten minutes a call may last).

``bench/approx_gpu.py --kadabra-detach DIR`` times turbobc first, saves its values and the
record's path in ``DIR``, and starts ``python bench/kadabra_detached.py run DIR`` with
``start_new_session`` (the device keeps such a process running between calls while the machine
is held). The run writes ``DIR/started.json`` (wall clock), then KADABRA's seconds, facts and
values (``DIR/kadabra.json``, ``DIR/kadabra.npy``). Nothing else should load the CPUs while it
runs: it is timed on all the host's threads, as in the same-process rows.

``python bench/kadabra_detached.py collect DIR [--wait SECONDS] [--out FOLDER]`` waits up to
``SECONDS`` for the result and writes it into the record's row (``kadabra_seconds`` and the
ratio, or, still running, ``kadabra_seconds_above`` = the time since it started: a lower bound
of the ratio), copying the record to ``FOLDER`` (the call's $OUT).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

TARGET_SPEEDUP = 10.0  # issue 16, as bench/approx_gpu.py


def start(folder: Path, graph: str, label: str, epsilon: float, delta: float,
          turbobc_values: np.ndarray, record: Path) -> None:
    """Save what the collector needs and start the detached KADABRA run: ``graph`` the name
    bench/graphs.py builds, ``label`` the record row's, whose ``kadabra`` is "detached"."""
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "turbobc.npy", turbobc_values)
    (folder / "job.json").write_text(json.dumps({
        "graph": graph, "label": label, "epsilon": epsilon, "delta": delta,
        "record": str(record)}))
    with open(folder / "kadabra.log", "w") as log:
        subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "run", str(folder)],
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def run(folder: Path) -> None:
    from approx_gpu import kadabra
    from exact_gpu import cached_graph

    job = json.loads((folder / "job.json").read_text())
    A = cached_graph(job["graph"])
    (folder / "started.json").write_text(json.dumps({"wall": time.time()}))
    seconds, values, facts = kadabra(A, job["epsilon"], job["delta"])
    np.save(folder / "kadabra.npy", values)
    (folder / "kadabra.json").write_text(json.dumps(dict(facts, kadabra_seconds=seconds)))


def collect(folder: Path, wait: float, out: Path | None) -> dict:
    job = json.loads((folder / "job.json").read_text())
    deadline = time.time() + wait
    while not (folder / "kadabra.json").exists() and time.time() < deadline:
        time.sleep(2)
    record_path = Path(job["record"])
    record = json.loads(record_path.read_text())
    # the row approx_gpu.py marked, or an earlier collect updated (it may be collected again)
    row = next(row for row in record["rows"] if row["graph"] == job["label"]
               and row["epsilon"] == job["epsilon"]
               and (row.get("kadabra") == "detached" or row.get("kadabra_detached")))
    turbobc_seconds = row["turbobc_seconds"]
    row.pop("kadabra", None)
    if (folder / "kadabra.json").exists():
        result = json.loads((folder / "kadabra.json").read_text())
        k_values = np.load(folder / "kadabra.npy")
        ours = np.load(folder / "turbobc.npy")
        ratio = result["kadabra_seconds"] / turbobc_seconds
        row.update(result, kadabra_over_turbobc=ratio, target_met=bool(ratio >= TARGET_SPEEDUP),
                   max_diff_from_kadabra=float(np.max(np.abs(k_values - ours))),
                   kadabra_detached=True)
    else:
        started = json.loads((folder / "started.json").read_text())["wall"]
        above = time.time() - started
        row.update(kadabra_seconds_above=above,
                   kadabra_over_turbobc_at_least=above / turbobc_seconds,
                   kadabra_detached=True)
    record_path.write_text(json.dumps(record, indent=2) + "\n")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(record_path, out / record_path.name)
    print(json.dumps({key: row.get(key) for key in (
        "graph", "epsilon", "turbobc_seconds", "samples", "kadabra_seconds",
        "kadabra_seconds_above", "kadabra_over_turbobc", "kadabra_over_turbobc_at_least",
        "kadabra_samples")}))
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run")
    run_parser.add_argument("folder", type=Path)
    collect_parser = commands.add_parser("collect")
    collect_parser.add_argument("folder", type=Path)
    collect_parser.add_argument("--wait", type=float, default=0.0)
    collect_parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.folder)
    else:
        collect(args.folder, args.wait, args.out)


if __name__ == "__main__":
    main()
