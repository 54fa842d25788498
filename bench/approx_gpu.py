"""Approximate BC with a guarantee (issue 16): turbobc ``bc(epsilon=, delta=)`` against
NetworKit's KadabraBetweenness at the same ε and δ, in the same run.

For each graph and each ε (δ = 0.1): turbobc's run (engine ``--engine``, the GPU by default;
each sampler of ``--samplers``: "pairs", "sources" or "auto", ``Tuning.approx_sampler``) with
its samples, bound and what stopped it, and ``networkit.centrality.KadabraBetweenness(G, ε,
δ)`` on all threads (undirected, unweighted graphs: what KADABRA takes) in a child process
stopped after ``--kadabra-seconds`` (the record then says KADABRA took longer, a lower bound on
the ratio), both normalized like networkx; the largest difference between the two, and, on
graphs whose exact BC fits ``--max-seconds`` (estimated from a sweep of 256 sources, also the
per-source cost a sampled pair is compared with: ``pair_cost_in_sources``), the largest error
of each against the exact values. A source-sampling run whose Hoeffding size reaches n would be
exact BC and is skipped. Record ``approx``, rewritten after each row.

``--edges`` also times ``edge_bc(epsilon=)`` (fields ``edge_*``). With ``--kadabra-detach DIR`` KADABRA is started detached instead and collected by a later
call on the same machine (bench/kadabra_detached.py): for runs past a call's ten minutes.

Issue 49: where exact BC is affordable, turbobc's exact run is timed warm in the same call
(``exact_seconds``, ``turbobc_over_exact``: never slower than exact); ``--silvan BINARY`` also
runs SILVAN at each ε and ``--top-k K`` times ``turbobc.top_k`` against KADABRA's top-K
(bench/approx_peers.py).

Usage: python bench/approx_gpu.py [--graphs kron20 road1000 del20 ...] [--epsilons 0.01 0.001]
       [--samplers pairs sources] [--engine gpu] [--max-seconds 120] [--kadabra-seconds 300]
       [--out DIR] [--kadabra-detach DIR] [--silvan BINARY] [--top-k K]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from approx_peers import exact_seconds, silvan, top_k_rows, within  # noqa: E402
from exact_gpu import LABELS, cached_graph  # noqa: E402
from records import RESULTS, write_record  # noqa: E402

import turbobc  # noqa: E402
from turbobc._approx import hoeffding_samples, sample_range  # noqa: E402

DEFAULT_GRAPHS = ["kron20", "road1000", "del20", "ego-Twitter-undirected.mtx.gz"]
TARGET_SPEEDUP = 10.0  # issue 16: at least 10x NetworKit's KADABRA at the same ε and δ


def kadabra(A, epsilon: float, delta: float) -> tuple[float, np.ndarray, dict]:
    """Seconds and values (networkx's normalization) of NetworKit's KadabraBetweenness on the
    undirected pattern of ``A``, all threads."""
    import networkit as nk
    import scipy.sparse as sp

    upper = sp.triu(sp.csr_array(A) + sp.csr_array(A).T, k=1).tocoo()
    G = nk.GraphFromCoo((np.ones(upper.nnz), (upper.row.astype(np.uint64),
                                              upper.col.astype(np.uint64))),
                        n=A.shape[0], directed=False) if hasattr(nk, "GraphFromCoo") else None
    if G is None:
        G = nk.Graph(A.shape[0])
        for u, v in zip(upper.row.tolist(), upper.col.tolist()):
            G.addEdge(u, v)
    algo = nk.centrality.KadabraBetweenness(G, epsilon, delta)
    began = time.perf_counter()
    algo.run()
    seconds = time.perf_counter() - began
    # KADABRA's scores on an undirected graph come out twice networkx's normalized BC times
    # (n − 2) / n (power.mtx, ε = 0.002, 900,994 samples: after this scaling the sum of all
    # values is 1.012 times the exact sum, the 20 largest within 0.96 to 1.05 of theirs; the
    # largest error, 0.0104, is above ε: the record keeps KADABRA's error beside ours)
    n = A.shape[0]
    values = np.asarray(algo.scores()) * n / (2 * (n - 2))
    return seconds, values, {"networkit_threads": nk.getMaxNumberOfThreads(),
                             "kadabra_samples": int(algo.getNumberOfIterations())}


def kadabra_within(A, epsilon: float, delta: float, limit: float):
    """:func:`kadabra` in a child process stopped after ``limit`` seconds (bench/approx_peers.py's
    :func:`within`): its result, or None when it ran longer."""
    return within(kadabra, (A, epsilon, delta), limit)


def per_source_seconds(A, engine: str) -> float:
    """Seconds per source of exact BC, from a sweep of 256 sources (after a warm-up)."""
    sources = np.arange(min(256, A.shape[0]))
    turbobc.bc(A, sources=sources[:8], engine=engine)
    began = time.perf_counter()
    turbobc.bc(A, sources=sources, engine=engine)
    return (time.perf_counter() - began) / sources.size


def bench_graph(name: str, epsilons: list[float], delta: float, engine: str,
                max_seconds: float, samplers: list[str], kadabra_seconds: float,
                write, kadabra_detach: Path | None = None, edges: bool = False,
                silvan_binary: Path | None = None, top_k: int | None = None) -> list[dict]:
    A = cached_graph(name)
    n = A.shape[0]
    rows, reference, exact = [], None, None
    source_seconds = per_source_seconds(A, engine)
    if source_seconds * n <= max_seconds:
        exact, reference = exact_seconds(A, engine)  # the exact run, timed warm
    for epsilon in epsilons:
        k_result = s_result = None
        for sampler in samplers:
            row = {"graph": LABELS.get(name, name), "n": n, "nnz": int(A.nnz),
                   "epsilon": epsilon, "delta": delta, "engine": engine,
                   "sampler_asked": sampler, "exact_seconds_per_source": source_seconds,
                   "exact_estimate_seconds": source_seconds * n, "exact_seconds": exact,
                   "hoeffding_sources": hoeffding_samples(n, epsilon, delta,
                                                          sample_range(n, False))}
            if sampler == "sources" and row["hoeffding_sources"] >= n:
                # the run could reach every source, i.e. exact BC (kron20 at ε = 0.001 ran
                # into the exact run and the call's time limit: approx-20261123T2343Z-h100.log)
                row["skipped"] = "the sample could reach n: exact BC, timed in exact_gpu.py"
                rows.append(row)
                write(rows)
                continue
            with turbobc.tuning(approx_sampler=sampler):
                turbobc.run_bc(A, epsilon=0.5, delta=delta, seed=1, engine=engine)  # warm up
                began = time.perf_counter()
                result = turbobc.run_bc(A, epsilon=epsilon, delta=delta, seed=0,
                                        engine=engine)
                seconds = time.perf_counter() - began
            facts = result.facts
            row.update(turbobc_seconds=seconds, samples=facts["samples"],
                       pilot_samples=facts.get("pilot_samples", 0),
                       checkpoints=len(facts.get("checkpoints", [])), bound=facts["bound"],
                       stopped_by=facts["stopped_by"], sampler=facts.get("sampler"),
                       hoeffding_samples=facts.get("hoeffding_samples"),
                       seconds_per_sample=seconds / max(facts["samples"], 1),
                       exact_because=facts.get("exact_because"))
            if exact is not None:  # issue 49: never slower than the exact run
                row["turbobc_over_exact"] = seconds / exact
            if facts.get("sampler") == "pairs":
                row["pair_cost_in_sources"] = row["seconds_per_sample"] / source_seconds
            if edges:  # edge BC with the same guarantee (sources sampled), no peer to race
                turbobc.run_edge_bc(A, epsilon=0.5, delta=delta, seed=1, engine=engine)
                began = time.perf_counter()
                edge = turbobc.run_edge_bc(A, epsilon=epsilon, delta=delta, seed=0,
                                           engine=engine)
                row.update(edge_seconds=time.perf_counter() - began,
                           edge_samples=edge.facts["samples"],
                           edge_pilot_samples=edge.facts.get("pilot_samples", 0),
                           edge_bound=edge.facts["bound"],
                           edge_stopped_by=edge.facts["stopped_by"])
            if kadabra_detach is not None:  # KADABRA runs on past this call
                from kadabra_detached import start

                rows.append(dict(row, kadabra="detached"))
                path = write(rows)
                start(kadabra_detach / f"{name}-{epsilon:g}", name, row["graph"], epsilon,
                      delta, result.values, path)
                print(f"{row['graph']:22s} eps={epsilon:<6g} turbobc {seconds:8.2f} s "
                      f"({row['samples']} samples, {row['stopped_by']}); KADABRA detached",
                      flush=True)
                continue
            write(rows + [dict(row, kadabra="running")])  # kept if the call's time runs out
            if k_result is None:
                try:
                    k_result = kadabra_within(A, epsilon, delta, kadabra_seconds) or "timeout"
                except ImportError as exc:
                    k_result = f"not installed: {exc}"
            if isinstance(k_result, str) and k_result.startswith("not installed"):
                row["networkit"] = k_result
            elif k_result == "timeout":
                row.update(kadabra_seconds_above=kadabra_seconds,
                           kadabra_over_turbobc_at_least=kadabra_seconds / seconds)
            else:
                k_seconds, k_values, k_facts = k_result
                row.update(kadabra_seconds=k_seconds, **k_facts,
                           kadabra_over_turbobc=k_seconds / seconds,
                           target_met=bool(k_seconds / seconds >= TARGET_SPEEDUP),
                           max_diff_from_kadabra=float(np.max(np.abs(k_values
                                                                     - result.values))))
                if reference is not None:
                    row["kadabra_max_error"] = float(np.max(np.abs(k_values - reference)))
            if reference is not None:
                row["turbobc_max_error"] = float(np.max(np.abs(result.values - reference)))
            if silvan_binary is not None:
                s_result = s_result or silvan(silvan_binary, A, epsilon, delta, kadabra_seconds)
                row.update({key: value for key, value in s_result.items()
                            if key != "silvan_values"})
                if "silvan_seconds" in s_result:
                    row["silvan_over_turbobc"] = s_result["silvan_seconds"] / seconds
                    row["silvan_target_met"] = bool(row["silvan_over_turbobc"] >= TARGET_SPEEDUP)
                    if reference is not None:
                        row["silvan_max_error"] = float(np.max(np.abs(
                            s_result["silvan_values"] - reference)))
                elif "silvan_seconds_above" in s_result:
                    row["silvan_over_turbobc_at_least"] = kadabra_seconds / seconds
            if top_k:
                row.update(top_k_rows(A, top_k, epsilon, delta, engine, kadabra_seconds,
                                      reference))
            rows.append(row)
            write(rows)
            ratio = row.get("kadabra_over_turbobc", row.get("kadabra_over_turbobc_at_least"))
            print(f"{row['graph']:22s} eps={epsilon:<6g} {row['sampler']:7s} turbobc "
                  f"{seconds:8.2f} s ({row['samples']} samples, {row['stopped_by']}), KADABRA "
                  f"{row.get('kadabra_seconds', float('nan')):8.2f} s = x{ratio}; errors "
                  f"{row.get('turbobc_max_error', float('nan')):.2g} / "
                  f"{row.get('kadabra_max_error', float('nan')):.2g}", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=DEFAULT_GRAPHS)
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.01, 0.001])
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--engine", default="gpu")
    parser.add_argument("--samplers", nargs="+", default=["pairs"],
                        choices=["pairs", "sources", "auto"])
    parser.add_argument("--max-seconds", type=float, default=120.0,
                        help="largest estimated exact run timed as the reference")
    parser.add_argument("--kadabra-seconds", type=float, default=300.0,
                        help="KADABRA runs stop after this long (a lower bound is recorded)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--edges", action="store_true",
                        help="also time edge_bc(epsilon=) at each ε (sources sampled)")
    parser.add_argument("--kadabra-detach", type=Path, metavar="DIR",
                        help="start each KADABRA run detached, to be collected by a later "
                             "call (bench/kadabra_detached.py); give one graph and one ε: "
                             "two KADABRA runs at once would share the host's threads")
    parser.add_argument("--silvan", type=Path, metavar="BINARY",
                        help="also time SILVAN at each ε (its binary, built as "
                             "bench/approx_peers.py says), stopped after --kadabra-seconds")
    parser.add_argument("--top-k", type=int, metavar="K",
                        help="also time turbobc.top_k(A, K, epsilon=ε) against KADABRA's "
                             "top-K (KadabraBetweenness(ε, δ, K)) at each ε")
    args = parser.parse_args(argv)
    rows, record = [], [None]

    def write(graph_rows):
        record[0] = write_record("approx", {"rows": rows + graph_rows}, results=args.out,
                                 path=record[0])
        return record[0]

    for name in args.graphs:
        rows += bench_graph(name, args.epsilons, args.delta, args.engine, args.max_seconds,
                            args.samplers, args.kadabra_seconds, write, args.kadabra_detach,
                            args.edges, args.silvan, args.top_k)
    print(f"record: {record[0]}")


if __name__ == "__main__":
    main()
