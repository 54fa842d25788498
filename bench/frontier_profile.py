"""Where the frontiers family's time goes on a deep graph, level by level, on a loaded device.

The kernel built with ``FRONTIER_PROFILE=1`` (spmv/kernels/frontiers.cu) has block 0 record its
first source's levels (clock64 cycles, the level's vertices and their out-edges, forward and
backward) while every other block sweeps its own sources as usual. For each graph, K random
sources are swept twice, first by the plain kernel (the run's ``sweep_seconds``: the sources'
time, unperturbed), then by the profiling build, from which the record keeps:

- per source: depth, cycles and microseconds (SM clock of the device), forward and backward
  shares; per level: vertices, out-edges, microseconds (mean, median, 90th percentile) and
  edges per microsecond of one block;
- the device's whole rate: edges traversed per second (twice the edges a source reaches, the
  forward and backward sweeps, times the sources, over the plain sweep's seconds), and the DRAM
  bandwidth that rate implies under :data:`SECTORS_PER_EDGE` (each edge's random reads and
  atomics on the per-source rows, a 32-byte sector each when nothing is cached), against
  the device's peak;
- the same sources' rate with fewer blocks in flight (``--blocks-per-sm``), which tells
  latency-bound (time per source stays, rate falls with the blocks) from bandwidth-bound
  (time per source falls as blocks leave).

``--variant BATCH=4,MIN_BLOCKS=3`` profiles a compile-time variant of the kernel (its
FRONTIER_* macros, in every run above).

Usage: python bench/frontier_profile.py [--graphs delaunay_n16.mtx.gz road1000 del20] [-k 2048]
       [--blocks-per-sm 1 2] [--variant BATCH=4] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from exact_gpu import LABELS, cached_graph  # noqa: E402
from records import write_record  # noqa: E402

GRAPHS = ("delaunay_n16.mtx.gz", "road1000", "del20")

SECTORS_PER_EDGE = 6
"""32-byte sectors a traversed edge touches in the per-source rows when none is cached: the
forward sweep reads L(w) and then claims it (atomicCAS) and adds to σ̂(w) (atomicAdd), the
backward sweep reads L(w), σ̂(w) and t(w); the CSR's heads are read in order and not counted."""

PEAK_BYTES_PER_SECOND = {"H100": 3.35e12, "H200": 4.8e12}
"""HBM bandwidth of the devices this runs on (NVIDIA's data sheets, SXM parts)."""


def _percentile(values, q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else 0.0


def _levels(rows: list, clock_hz: float) -> dict:
    """Summary of ``[cycles, vertices, edges]`` per level."""
    if not rows:
        return {"levels": 0}
    cycles = np.array([r[0] for r in rows], dtype=np.float64)
    vertices = np.array([r[1] for r in rows], dtype=np.float64)
    edges = np.array([r[2] for r in rows], dtype=np.float64)
    micro = cycles / clock_hz * 1e6
    return {"levels": len(rows), "microseconds": float(micro.sum()),
            "microseconds_per_level": {"mean": float(micro.mean()),
                                       "median": float(np.median(micro)),
                                       "p90": _percentile(micro, 90)},
            "vertices_per_level": {"mean": float(vertices.mean()),
                                   "median": float(np.median(vertices)),
                                   "max": float(vertices.max())},
            "edges_per_level": {"mean": float(edges.mean()), "max": float(edges.max())},
            "edges_per_microsecond": float(edges.sum() / max(micro.sum(), 1e-9))}


def profile_graph(name: str, A, k: int, blocks_per_sm: list[int], peak: float | None,
                  clock_hz: float, macros: dict | None = None) -> dict:
    import cupy

    import turbobc
    from turbobc._api import run_bc

    n, m = A.shape[0], A.nnz
    sources = np.sort(np.random.default_rng(0).choice(n, min(k, n), replace=False))
    macros = dict(macros or {})
    row = {"graph": LABELS.get(name, name), "n": n, "nnz": m, "sources": int(sources.size),
           "variant": macros}
    with turbobc.tuning(gpu_family="frontiers", frontier_kernel=macros or None):
        run_bc(A, engine="gpu", sources=sources[:64])  # compile, relabel
        cupy.cuda.Device().synchronize()
        facts = run_bc(A, engine="gpu", sources=sources).facts
    sweep = facts["sweep_seconds"]
    row.update(blocks=facts.get("blocks"), sweep_seconds=sweep,
               seconds_per_source=sweep / sources.size,
               estimate_all_sources_seconds=sweep * n / sources.size)
    with turbobc.tuning(gpu_family="frontiers", frontier_kernel={**macros, "PROFILE": 1}):
        profiled = run_bc(A, engine="gpu", sources=sources).facts
    levels = profiled["level_profile"]
    forward, backward = levels["forward"], levels["backward"]
    reached_edges = sum(r[2] for r in forward)
    source_seconds = levels["cycles"] / clock_hz
    row["block0_source"] = {
        "source": levels["source"], "depth": levels["depth"], "seconds": source_seconds,
        "reached_edges": reached_edges,
        "forward": _levels(forward, clock_hz), "backward": _levels(backward[1:], clock_hz),
        "profiled_sweep_seconds": profiled["sweep_seconds"]}
    # the whole device: every source of the run traverses about the edges block 0's did
    edges_per_second = 2 * reached_edges * sources.size / sweep
    row["device"] = {"edges_per_second": edges_per_second,
                     "sectors_per_edge": SECTORS_PER_EDGE,
                     "implied_bytes_per_second": edges_per_second * SECTORS_PER_EDGE * 32,
                     "peak_bytes_per_second": peak,
                     "implied_share_of_peak": (None if peak is None else
                                               edges_per_second * SECTORS_PER_EDGE * 32 / peak),
                     "blocks_in_flight": facts.get("blocks"),
                     "per_block_source_seconds": sweep * facts.get("blocks", 1) / sources.size}
    row["fewer_blocks"] = []
    for bps in blocks_per_sm:
        with turbobc.tuning(gpu_family="frontiers", frontier_blocks_per_sm=bps,
                            frontier_kernel=macros or None):
            run_bc(A, engine="gpu", sources=sources[:64])
            cupy.cuda.Device().synchronize()
            less = run_bc(A, engine="gpu", sources=sources).facts
        row["fewer_blocks"].append({
            "blocks_per_sm": bps, "blocks": less.get("blocks"),
            "sweep_seconds": less["sweep_seconds"],
            "per_block_source_seconds": less["sweep_seconds"] * less.get("blocks", 1)
            / sources.size})
    b = row["block0_source"]
    print(f"{row['graph']:14s} n={n} K={sources.size} blocks={row['blocks']}: "
          f"{row['seconds_per_source'] * 1e6:.1f} us/source (all sources "
          f"≈ {row['estimate_all_sources_seconds']:.1f} s); block 0: depth {b['depth']}, "
          f"{b['seconds'] * 1e3:.2f} ms/source, forward "
          f"{b['forward']['microseconds_per_level']['median']:.2f} us/level "
          f"({b['forward']['vertices_per_level']['mean']:.0f} vertices, "
          f"{b['forward']['edges_per_level']['mean']:.0f} edges), backward "
          f"{b['backward'].get('microseconds_per_level', {}).get('median', 0):.2f} us/level; "
          f"device {edges_per_second / 1e9:.2f} G edges/s ≈ "
          f"{row['device']['implied_bytes_per_second'] / 1e12:.2f} TB/s at "
          f"{SECTORS_PER_EDGE} sectors an edge; fewer blocks "
          + ", ".join(f"{f['blocks']}: {f['per_block_source_seconds'] * 1e3:.2f} ms/source "
                      f"a block" for f in row["fewer_blocks"]), flush=True)
    return row


def main() -> int:
    import cupy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=list(GRAPHS))
    parser.add_argument("-k", type=int, default=2048)
    parser.add_argument("--blocks-per-sm", nargs="*", type=int, default=[1, 2])
    parser.add_argument("--variant", default="", help="FRONTIER_* macros: BATCH=4,MIN_BLOCKS=3")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    macros = dict(item.split("=") for item in args.variant.split(",") if item)
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    clock_hz = props["clockRate"] * 1e3
    peak = next((v for key, v in PEAK_BYTES_PER_SECOND.items() if key in name), None)
    rows, path = [], None
    for graph in args.graphs:
        began = time.perf_counter()
        A = cached_graph(graph)
        print(f"{graph}: loaded in {time.perf_counter() - began:.1f} s", flush=True)
        rows.append(profile_graph(graph, A, args.k, args.blocks_per_sm, peak, clock_hz,
                                  macros))
        path = write_record("frontier_profile", {
            "device": name, "sm_clock_hz": clock_hz, "k": args.k,
            "sectors_per_edge": SECTORS_PER_EDGE, "rows": rows}, results=args.out, path=path)
    print(f"record: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
