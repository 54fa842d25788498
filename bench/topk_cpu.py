"""Issue 49 on the CPU: the exact run, approximate BC at ε and ``top_k(A, K, epsilon=ε)`` on the
cpu engine, against NetworKit's ``KadabraBetweenness(ε, δ, K)`` top-K, all on the same threads,
warm, alternating (median of ``--repeats``), in one record ``topk_cpu``.

Per graph (δ = 0.1): ``run_bc(A, engine="cpu")`` (exact: trees folded, as ``bc`` does),
``run_bc(A, epsilon=ε, seed=r)``, ``top_k(A, K, epsilon=ε, seed=r)`` and KADABRA's top-K
(bench/approx_gpu.py's graph, ``networkit.setNumberOfThreads(--threads)``), each repeat r
alternating the four so that all see the same load on a shared machine. Each approximate row
is checked against the exact values: the largest error of bc(epsilon=), and for each top-K
(ours and KADABRA's) whether it keeps the top-K guarantee (no vertex above θ + 2ε left out,
none below θ − 2ε taken in, θ the K-th largest exact value). The bars of issue 49: approximate
within 1.2 x exact + 0.05 s; top_k no slower than KADABRA's top-K.

Usage: python bench/topk_cpu.py [--graphs ego-Facebook power.mtx ca-GrQc.txt.gz]
       [--epsilon 0.01] [--k 10] [--threads 2] [--repeats 7] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

import turbobc  # noqa: E402

GRAPHS = ["ego-Facebook", "power.mtx", "ca-GrQc.txt.gz"]


def networkit_graph(A):
    """The undirected pattern of ``A`` as a NetworKit graph."""
    import networkit as nk
    import scipy.sparse as sp

    upper = sp.triu(sp.csr_array(A) + sp.csr_array(A).T, k=1).tocoo()
    return nk.GraphFromCoo((np.ones(upper.nnz), (upper.row.astype(np.uint64),
                                                 upper.col.astype(np.uint64))),
                           n=A.shape[0], directed=False)


def kadabra_top(G, epsilon: float, delta: float, k: int) -> tuple[float, np.ndarray, int]:
    """Seconds of ``KadabraBetweenness(G, ε, δ, k=k).run()``, its top-k vertices and its
    samples."""
    import networkit as nk

    algo = nk.centrality.KadabraBetweenness(G, epsilon, delta, k=k)
    began = time.perf_counter()
    algo.run()
    seconds = time.perf_counter() - began
    return seconds, np.asarray(algo.topkNodesList()[:k], dtype=np.int64), int(
        algo.getNumberOfIterations())


def keeps_top_k(vertices, exact: np.ndarray, k: int, epsilon: float) -> bool:
    """Whether ``vertices`` keep the top-k guarantee against ``exact``: every vertex above
    θ + 2ε in, none below θ − 2ε (θ the k-th largest exact value)."""
    theta = np.sort(exact)[-k]
    inside = np.zeros(exact.size, dtype=bool)
    inside[np.asarray(vertices, dtype=np.int64)] = True
    return bool(inside.sum() == k and not (exact[~inside] > theta + 2 * epsilon).any()
                and not (exact[inside] < theta - 2 * epsilon).any())


def _facts(facts: dict) -> dict:
    keep = ("samples", "pilot_samples", "sampler", "stopped_by", "bound", "exact_because",
            "pairs_declined")
    return {key: facts[key] for key in keep if key in facts}


def graph_row(name: str, epsilon: float, delta: float, k: int, repeats: int,
              threads: int) -> dict:
    A = graphs.graph(name)
    G = networkit_graph(A)
    exact = turbobc.bc(A, engine="cpu")  # and the compile (or the cache's load)
    turbobc.run_bc(A, epsilon=0.3, delta=delta, seed=1, engine="cpu")
    turbobc.top_k(A, k, epsilon=0.3, delta=delta, seed=1, engine="cpu")
    kadabra_top(G, 0.3, delta, k)
    times = {"exact": [], "approx": [], "top_k": [], "kadabra_top_k": []}
    approx_errors, top_kept, kadabra_kept, kadabra_samples = [], [], [], []
    approx = top = None
    for r in range(repeats):
        began = time.perf_counter()
        turbobc.run_bc(A, engine="cpu")
        times["exact"].append(time.perf_counter() - began)
        began = time.perf_counter()
        approx = turbobc.run_bc(A, epsilon=epsilon, delta=delta, seed=r, engine="cpu")
        times["approx"].append(time.perf_counter() - began)
        began = time.perf_counter()
        top = turbobc.top_k(A, k, epsilon=epsilon, delta=delta, seed=r, engine="cpu")
        times["top_k"].append(time.perf_counter() - began)
        seconds, vertices, samples = kadabra_top(G, epsilon, delta, k)
        times["kadabra_top_k"].append(seconds)
        approx_errors.append(float(np.max(np.abs(approx.values - exact))))
        top_kept.append(keeps_top_k(top.vertices, exact, k, epsilon))
        kadabra_kept.append(keeps_top_k(vertices, exact, k, epsilon))
        kadabra_samples.append(samples)
    median = {key: statistics.median(values) for key, values in times.items()}
    row = {"graph": name, "n": A.shape[0], "nnz": int(A.nnz), "threads": threads,
           "epsilon": epsilon, "delta": delta, "k": k, "repeats": repeats,
           **{f"{key}_seconds": value for key, value in median.items()},
           **{f"{key}_seconds_all": value for key, value in times.items()},
           "approx_facts": _facts(approx.facts), "top_k_facts": _facts(top.facts),
           "top_k_ties": int(top.facts["ties"].size),
           "approx_max_error": max(approx_errors), "top_k_kept": all(top_kept),
           "kadabra_top_k_kept": all(kadabra_kept), "kadabra_samples": kadabra_samples,
           "load_average": [round(x, 2) for x in os.getloadavg()]}
    row["approx_bar_seconds"] = 1.2 * median["exact"] + 0.05
    row["approx_met"] = median["approx"] <= row["approx_bar_seconds"]
    row["top_k_over_kadabra"] = median["top_k"] / median["kadabra_top_k"]
    row["top_k_met"] = median["top_k"] <= median["kadabra_top_k"]
    print(f"{name:16s} exact {median['exact']:.3f} s  approx {median['approx']:.3f} s "
          f"({'met' if row['approx_met'] else 'NOT met'}: bar {row['approx_bar_seconds']:.3f}; "
          f"{approx.facts['stopped_by']})  top_k {median['top_k']:.3f} s "
          f"({top.facts['stopped_by']}, {top.facts['samples']} samples)  KADABRA top-{k} "
          f"{median['kadabra_top_k']:.3f} s ({'met' if row['top_k_met'] else 'NOT met'}); "
          f"load {row['load_average'][0]}", flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=GRAPHS)
    parser.add_argument("--epsilon", type=float, default=0.01)
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    import networkit as nk
    import numba

    nk.setNumberOfThreads(args.threads)
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    record, path = {"threads": args.threads, "repeats": args.repeats, "rows": []}, None
    for name in args.graphs:
        record["rows"].append(graph_row(name, args.epsilon, args.delta, args.k, args.repeats,
                                        args.threads))
        path = write_record("topk_cpu", record, results=args.out, path=path)
    print("record:", path)


if __name__ == "__main__":
    main()
