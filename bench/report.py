"""Markdown from the JSON records: one suite's summary, and the results page docs/results.md.

``python -m bench report`` prints :func:`results_markdown` of bench/results/ and, with
``--write``, writes it to docs/results.md (:func:`write_results_page`). Only the records are
read: nothing is timed here, and nothing on the page is typed by hand.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from bench.records import RESULTS, gteps, mteps

__all__ = ["load_records", "summary", "results_markdown", "write_results_page", "RESULTS_PAGE"]

RESULTS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "results.md"
"""The page :func:`write_results_page` writes; the README links it."""

HEADING = "# Results"


def load_records(results: Path = RESULTS) -> list[dict]:
    """Every JSON record in ``results``, each with its file name under ``"_file"``, sorted by
    (UTC stamp, file name)."""
    records = []
    for path in sorted(Path(results).glob("*.json")):
        record = json.loads(path.read_text())
        record["_file"] = path.name
        records.append(record)
    return sorted(records, key=lambda r: (r.get("utc", ""), r["_file"]))


def _device(record: dict) -> str:
    env = record.get("environment") or record.get("env") or {}
    if env.get("gpu"):
        return env["gpu"].replace("NVIDIA ", "")
    cpu = env.get("cpu", "CPU")
    return f"{cpu} ({env['cpu_count']} cores)" if env.get("cpu_count") else cpu


def _mib(x) -> str:
    return "-" if x is None else f"{x / 2**20:,.1f}"


def _gib(x) -> str:
    return "-" if x is None else f"{x / 2**30:.4g}"


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _compare_table(record: dict) -> str:
    engines = list(record["engines"])
    rows = []
    for g in record["graphs"]:
        for engine in engines:
            rec = g["engines"].get(engine, {})
            if "seconds" not in rec:
                continue
            rows.append([g["graph"], f"{g['n']:,}", f"{g['nnz']:,}", engine,
                         f"{rec['seconds']:.4g}", f"{rec['gteps']:.3g}",
                         f"{rec['ratio']:.3g}" if "ratio" in rec else "-",
                         f"{rec['max_rel_diff']:.1e}" if "max_rel_diff" in rec else "-"])
    skipped = sorted({f"{e}: {s['skipped']}" for e, s in record["engines"].items()
                      if not s["available"]})
    text = _table(["graph", "n", "stored edges", "engine", "seconds", "GTEPS",
                   "time / turbobc's", "max rel diff vs graphblas"], rows)
    if skipped:
        text += "\n\nSkipped on this machine: " + "; ".join(skipped) + "."
    return text


def _memory_points_section(records) -> list[str]:
    """Every Kronecker graph measured on a device, its latest point across the memory
    records: the index types, single-source peak against the model and bytes a stored edge,
    k-sampled and approximate seconds."""
    latest = {}  # graph -> {"single" | "sampled" | "approx": (record, point)}, each the latest
    for r in records:
        if r.get("suite") != "memory":
            continue
        for p in r.get("points", []):
            steps = latest.setdefault(p["graph"], {})
            if p.get("single", {}).get("peak_pool_bytes"):
                steps["single"] = (r, p)
            if "seconds_per_source" in p.get("sampled", {}):
                steps["sampled"] = (r, p)
            if "seconds" in p.get("approx", {}):
                steps["approx"] = (r, p)
    latest = {g: steps for g, steps in latest.items() if "single" in steps}
    if not latest:
        return []
    rows = []
    for graph, steps in sorted(latest.items(), key=lambda item: item[1]["single"][1]["nnz"]):
        r, p = steps["single"]
        s = p["single"]
        k = steps["sampled"][1]["sampled"] if "sampled" in steps else {}
        a = steps["approx"][1]["approx"] if "approx" in steps else {}
        files = ", ".join(dict.fromkeys(record["_file"] for record, _ in steps.values()))
        types = s.get("index_dtype", p.get("index_dtype", "-"))
        if s.get("position_dtype") and s["position_dtype"] != types:
            types += f" + {s['position_dtype']} pointers"
        rows.append([_device(r), graph, f"{p['n']:,}", f"{p['nnz']:,}", types,
                     _gib(s["peak_pool_bytes"]), _gib(s.get("model_bytes")),
                     f"{s['peak_pool_bytes'] / p['nnz']:.2f}", f"{s['ms_per_source']:.1f}",
                     f"{k['seconds_per_source']:.2f} (k = {k['k']}, {k.get('family')})"
                     if "seconds_per_source" in k else "-",
                     f"{a['seconds']:.1f}" if "seconds" in a else "-", files])
    header = ["device", "graph", "n", "stored edges", "index types", "single peak GiB",
              "model GiB", "bytes / stored edge", "single ms/source",
              "k-sampled s/source", "approx ε = 0.01 s", "records"]
    note = ("The latest measurement of each graph across the memory records (bench/memory.py): "
            "one source's peak CuPy pool bytes against the model b m + (40 + b + p) n; "
            "k-sampled and approximate runs through the public path, validation included.")
    return [f"## Memory footprint, every Kronecker graph measured", "", note, "",
            _table(header, rows), ""]


def _memory_table(record: dict) -> str:
    rows = []
    for p in record["points"]:
        if "nnz" not in p:
            rows.append([p["graph"], "-", "-", p.get("skipped", "-"), "", "", "", "", "", ""])
            continue
        s, b = p.get("single", {}), p.get("batched", {})
        rows.append([p["graph"], f"{p['n']:,}", f"{p['nnz']:,}",
                     _gib(s.get("peak_pool_bytes")), _gib(p["single_model_bytes"]),
                     f"{s['ms_per_source']:.3f}" if "ms_per_source" in s else "-",
                     b.get("batch", "-"), _gib(b.get("peak_pool_bytes")),
                     _gib(b.get("model_bytes")),
                     f"{b['seconds_per_source'] * 1e3:.3f}" if "seconds_per_source" in b else "-"])
    text = _table(["graph", "n", "stored edges", "single peak GiB", "model GiB",
                   "single ms/source", "batch", "batched peak GiB", "batched model GiB",
                   "batched ms/source"], rows)
    largest = record.get("largest") or {}
    if largest.get("single_source"):
        one, many = largest["single_source"], largest.get("batched") or {}
        text += (f"\n\nBy the models, on {_gib(largest['capacity_bytes'])} GiB "
                 f"({record.get('capacity_source', '')}): the largest Kronecker graph whose "
                 f"single-source run fits is kron{one['scale']} (n = {one['n']:,}, about "
                 f"{one['nnz_estimated']:,} stored edges, {_gib(one['single_expected_bytes'])} "
                 f"GiB)")
        if many:
            text += (f"; the largest that still runs batched is kron{many['scale']} "
                     f"({many['batch_lanes']} sources per batch)")
        text += ". Edges per vertex past the measured scales are extrapolated linearly."
    if record.get("skipped"):
        text += f"\n\nMeasurements skipped: {record['skipped']}."
    return text


def _single_source_rows(record: dict, device: str) -> list[list]:
    rows = []
    for g in record["graphs"]:
        auto = g["kernels"]["auto"]
        paper = g.get("paper_ms")
        rows.append([device, g["graph"], f"{g['n']:,}", f"{g['nnz']:,}", auto["kernel"],
                     f"{auto['ms_per_source']:.3f}", f"{mteps(g['nnz'], auto['ms_per_source'] / 1e3):,.0f}",
                     _mib(auto.get("peak_pool_bytes")), _mib(auto.get("model_bytes")),
                     f"{paper / auto['ms_per_source']:.1f}x" if paper else "-"])
    return rows


def summary(record: dict) -> str:
    """Markdown summary of one record written by ``python -m bench``."""
    suite = record.get("suite")
    head = f"### {suite} on {_device(record)}\n\n"
    if suite in ("cpu-small", "exact"):
        return head + _compare_table(record) + "\n"
    if suite == "memory":
        return head + _memory_table(record) + "\n"
    if suite == "single-source":
        if record.get("skipped"):
            return head + f"Skipped: {record['skipped']}.\n"
        return head + _table(_SS_HEADER, _single_source_rows(record, _device(record))) + "\n"
    raise ValueError(f"no summary for suite {suite!r}")


_SS_HEADER = ["GPU", "graph", "n", "stored edges", "auto kernel", "ms/source", "MTEPS",
              "peak MiB", "4m + 48n MiB", "vs paper code"]


def _latest(records: list[dict], keep) -> list[dict]:
    """The last record per device among those ``keep`` accepts."""
    chosen = {}
    for r in records:
        if keep(r):
            chosen[_device(r)] = r
    return list(chosen.values())


def _latest_section(records, kind, title, note, header, row, where=None,
                    keep=None) -> list[str]:
    """The page's lines for the latest record of benchmark ``kind`` (or, with ``keep``,
    the latest one ``keep`` accepts): a heading naming its file, ``note``, and a table of
    ``row(where(record), row)`` per row of the record (``where``: the device column, default
    :func:`_device`)."""
    chosen = [r for r in records
              if (keep(r) if keep is not None else r.get("benchmark") == kind)]
    if not chosen:
        return []
    r = chosen[-1]
    where = where or _device
    return [f"## {title} [{r['_file']}]", "", note, "",
            _table(header, [row(where(r), g) for g in r["rows"]]), ""]


def _latest_rows_section(records, kind, title, note, header, row, keep=None,
                         key=lambda g: (g["graph"], g.get("engine")),
                         order=None) -> list[str]:
    """As :func:`_latest_section`, with each graph's row from the latest record that has it,
    per device and engine (``key``: what tells rows apart besides the device; a record of a
    few graphs does not hide the others, nor one device's or engine's record another's), in
    the order first recorded (or by ``order(row)``); a last column names the file."""
    chosen = [r for r in records
              if (keep(r) if keep is not None else r.get("benchmark") == kind)]
    if not chosen:
        return []
    latest = {}
    for r in chosen:
        for g in r["rows"]:
            latest[(_device(r),) + tuple(key(g))] = (r, g)
    items = latest.items() if order is None else sorted(latest.items(),
                                                         key=lambda item: order(item[1][1]))
    rows = [row(wanted[0], g) + [r["_file"]] for wanted, (r, g) in items]
    return [f"## {title}", "", note, "", _table(header + ["record"], rows), ""]


def _nan(value, form: str) -> str:
    return format(float("nan") if value is None else value, form)


def _or_dash(value, form: str) -> str:
    return "-" if value is None else format(value, form)


def _weighted_row(device, g) -> list:
    best = "weighted_" + g["best_path"]
    return [device, g["graph"], f"{g['sources']:,}", f"{g['unweighted_seconds']:.3f}",
            f"{g[best + '_seconds']:.3f}", f"{g['ratio']:.1f}x",
            # 0 rounds: found a source per block, whose time the records of 2026-11-25 did
            # not wait for (counted in the in-degree phase instead)
            f"{g[best + '_distance_seconds']:.3f}" if g[best + "_rounds"] else "per block",
            g[best + "_rounds"],
            _nan(g.get("turbobc_exact_estimate_seconds"), ".1f"),
            _nan(g.get("networkit_exact_estimate_seconds"), ".1f"),
            g.get("networkit_threads", "-"),
            _nan(g.get("networkit_over_turbobc"), ".1f") + "x",
            _or_dash(g.get("turbobc_unweighted_exact_seconds"), ".2f"),
            _or_dash(g.get("turbobc_weighted_exact_seconds"), ".2f"),
            _or_dash(g.get("exact_weighted_over_unweighted"), ".2f"),
            _or_dash(g.get("networkit_over_turbobc_exact"), ".1f")]


def _host(record: dict) -> str:
    """The CPU a record ran on, with its cores (the GPU host's too)."""
    env = record.get("environment") or {}
    return f"{env.get('cpu', 'CPU')} ({env.get('cpu_count', '?')} cores)"


def _edge_folding_row(device, g) -> list:
    # the chain-folded columns: records from issue 33's fourth item on (dashes before)
    chains = g.get("edge_chain_folded")
    return [device, g["graph"], g["engine"], f"{g['n']:,}", f"{g['vertex_seconds']:.3f}",
            f"{g['edge_folded_seconds']:.3f}", f"{g['edge_unfolded_seconds']:.3f}",
            f"{g['edge_folded']:,}", f"{g['edge_over_vertex']:.2f}",
            f"{g['edge_unfolded_over_vertex']:.2f}",
            f"{g['max_rel_diff_folded_vs_unfolded']:.1e}",
            _or_dash(g.get("vertex_chains_seconds"), ".3f"),
            _or_dash(g.get("edge_chains_seconds"), ".3f"),
            "-" if chains is None else f"{chains:,}",
            _or_dash(g.get("edge_chains_over_vertex_chains"), ".2f"),
            _or_dash(g.get("max_rel_diff_chains_vs_unfolded"), ".1e")]


def _cpu_weighted_row(host, g) -> list:
    return [host, g["graph"], g["threads"], f"{g['ratio_vertex']:.2f}",
            f"{g['ratio_vertex_weighted']:.2f}", f"{g['ratio_edge']:.2f}",
            f"{g['ratio_edge_weighted']:.2f}", f"{g['edge_over_vertex']:.2f}",
            f"{g['weighted_over_unweighted']:.2f}"]


def _cpu_threads_row(host, g) -> list:
    settings = [k[len("turbobc_"):-len("_seconds")] for k in g
                if k.startswith("turbobc_") and k.endswith("_seconds")]
    return ([host, g["graph"], f"{g['n']:,}", f"{g['networkit_seconds']:.3f}"]
            + [f"{g[f'turbobc_{s}_seconds']:.3f}" for s in settings]
            + [f"{g['ratio_1']:.2f}", f"{g['ratio_auto']:.2f}"])


def _chain_row(record, g) -> list:
    where = _device(record) if g["engine"] == "gpu" else _host(record)
    ratio = g.get("networkit_over_turbobc")
    return [where, g["engine"], g["graph"], f"{g['n']:,}", f"{g['chain_folded']:,}",
            f"{g['chains']:,}", f"{g['seconds']:.3f}", f"{g['unfolded_seconds']:.3f}",
            f"{g['speedup']:.2f}x", "-" if ratio is None else f"{ratio:.2f}",
            "-" if ratio is None else f"{g['networkit_over_unfolded']:.2f}",
            f"{g['max_rel_diff']:.1e}"]


def _chain_sections(records: list[dict]) -> list[str]:
    """The two latest chain-folding records (turbobc/_chains.py): the knob's defaults come
    from both."""
    chosen = [r for r in records if r.get("benchmark") == "chain_folding"][-2:]
    lines = []
    for r in chosen:
        lines += [f"## Exact BC with chains folded [{r['_file']}]", "",
                  "`turbobc.bc` end to end with the sources inside chains of degree-2 "
                  "vertices folded into the chains' ends (the knobs of the record's commit: "
                  f"{r.get('environment', {}).get('commit', '?')}; `Tuning.fold_chains` was "
                  "True before e39ea86, `\"auto\"` since: the GPU engine, cores of 16,384 "
                  "vertices and more) and with `fold_chains=False`, best of three; "
                  "NetworKit's exact Betweenness on the host's cores beside the CPU engine "
                  "(bench/chain_folding.py). Sources folded 0: not folded there.", "",
                  _table(["where", "engine", "graph", "n", "sources folded", "chains",
                          "folded s", "unfolded s", "speedup", "NetworKit / turbobc",
                          "NetworKit / unfolded", "max rel diff"],
                         [_chain_row(r, g) for g in r["rows"]]), ""]
    return lines


def _families_row(device, g) -> list:
    return [device, g["graph"], f"{g['sources']:,}", f"{g['lanes_seconds']:.3f}",
            f"{g['queue_seconds']:.3f}", f"{g['queue_over_lanes']:.2f}x",
            _or_dash(g.get("lanes_exact_seconds"), ".2f"),
            _or_dash(g.get("queue_exact_seconds"), ".2f"), f"{g['max_rel_diff']:.1e}"]


def _sampled_row(device, g) -> list:
    estimate = g.get("exact_estimate_seconds")
    return [device, g["graph"], f"{g['n']:,}", f"{g['nnz']:,}", f"{g['k']:,}",
            f"{g['seconds']:.2f}", f"{g['batch']:,} x {g['batches']}", g["depth"],
            _or_dash(estimate, ",.0f")]


def _blocks_row(device, g) -> list:
    return [device, g["graph"], f"{g['n']:,}", f"{g['unweighted_seconds']:.4f}",
            f"{g['blocks_seconds']:.4f}", f"{g['blocks_over_unweighted']:.2f}x",
            f"{g['rounds_seconds']:.4f}", f"{g['rounds_over_unweighted']:.2f}x",
            f"{g['max_rel_diff']:.1e}"]


def _cold_start_rows(records: list[dict]) -> list[str]:
    """Every cold_start record's rows, oldest first: a person's first call against the
    tenth, per record (its label and commit) and case."""
    chosen = [r for r in records if r.get("benchmark") == "cold_start"]
    if not chosen:
        return []
    rows = []
    for r in chosen:
        for g in r["rows"]:
            if "extra_cold" not in g:
                continue
            cold, cached = g["cold"], g["cached"]
            rows.append([_device(r) if g["device"] == "gpu" else _host(r),
                         r.get("label") or "", g["case"], _graph_name(g["graph"]),
                         f"{cold['import_seconds']:.2f}", f"{cold['first_seconds']:.3f}",
                         f"{cached['first_seconds']:.3f}", f"{g['warm_seconds']:.3f}",
                         f"{g['extra_cold']:.2f}", f"{g['extra_cached']:.2f}",
                         "yes" if g["meets_cold"] and g["meets_cached"] else "no",
                         _or_dash(g.get("networkit", {}).get("first_seconds"), ".3f"),
                         r["_file"]])
    return ["## A person's first call against the tenth", "",
            "bench/cold_start.py: each case in a fresh process with empty CuPy and numba caches "
            "(cold), then in a new process with the caches written (cached), then the second "
            "call of the first process (warm). GPU seconds after CuPy's own start; the CPU's "
            "cold figure counts `import turbobc` in. Bars (the cold-start issue): GPU at most "
            "0.5 s more than warm cold and 0.3 s cached; CPU 3 s and 0.5 s. NetworKit: its "
            "exact Betweenness as a fresh process's first call, on the same cores.", "",
            _table(["where", "label", "case", "graph", "import s", "cold first s",
                    "cached first s", "warm s", "cold - warm", "cached - warm", "bars met",
                    "NetworKit first s", "record"], rows), ""]


def _graph_name(name: str) -> str:
    return name.split(".")[0]


def _house_row(device, g) -> list:
    """A before/after row of bench/house_compare.py: each tree's median (ms a source for
    the single-source rows, seconds for the end-to-end calls) and after / before."""
    scale, unit = (1e3, "ms") if g["call"].startswith("single ") else (1.0, "s")
    return [device, g["call"], f"{g['before_seconds'] * scale:.4f} {unit}",
            f"{g['after_seconds'] * scale:.4f} {unit}", f"{g['ratio']:.3f}"]


def _dask_row(device, g) -> list:
    def seconds(key):
        return "-" if g.get(key) is None else f"{g[key]:.2f}"

    folded = ("-" if g.get("folded") is None
              else f"{g['folded']:,} / {g.get('chain_folded') or 0:,}")
    return [device, g["graph"], "all (exact)" if g["exact"] else f"{g['sources']:,}",
            g["workers"], f"{g['seconds']:.2f}", f"{g['speedup']:.2f}x", seconds("local_seconds"),
            g["chunks"], f"{g['first_chunk_seconds']:.2f}", seconds("start_seconds"),
            seconds("local_start_seconds"),
            f"{statistics.median(g['chunk_seconds']):.2f}", f"{g['overhead_seconds']:.2f}",
            folded]


def _dask_cluster(record: dict) -> str:
    """'gpu' or 'cpu': the cluster of a dask_scaling record (dask_scaling_cpu: older CPU
    records)."""
    if record.get("benchmark") == "dask_scaling_cpu":
        return "cpu"
    return record.get("cluster", "gpu") if record.get("benchmark") == "dask_scaling" else ""



def _exact_rows(records: list[dict]) -> list[list]:
    """The exact-BC table's rows: the latest row of each (GPU, graph) over ``records``."""
    latest: dict = {}
    for r in records:
        for g in r["graphs"]:
            latest[(_device(r), g["graph"])] = (r, g)
    rows = []
    for (device, _), (r, g) in latest.items():
        ratio = g.get("edge_ratio")
        rows.append([device, g["graph"], f"{g['n']:,}", f"{g['nnz']:,}", f"{g['seconds']:.3f}",
                     f"{gteps(g['n'], g['nnz'], g['seconds']):.2f}",
                     _gib(g.get("peak_pool_bytes")),
                     "estimate from %d sources" % g["sources"] if g.get("extrapolated")
                     else "exact", g.get("target_seconds", "-"),
                     "-" if ratio is None else f"{ratio:.2f}x", r["_file"]])
    return rows


def _approx_rows(records: list[dict]) -> list[list]:
    """The approximate-BC table's rows: the latest row of each (GPU, graph, ε, sampler) over
    ``records`` (bench/approx_gpu.py), KADABRA's time a lower bound where it was stopped."""
    latest: dict = {}
    for r in records:
        for g in r["rows"]:
            if "turbobc_seconds" in g:
                latest[(_device(r), g["graph"], g["epsilon"], g.get("sampler"))] = (r, g)
    rows = []
    for (device, graph, epsilon, sampler), (r, g) in latest.items():
        if "kadabra_seconds" in g:
            kadabra, ratio = f"{g['kadabra_seconds']:.2f}", f"{g['kadabra_over_turbobc']:.1f}x"
        elif "kadabra_seconds_above" in g:
            kadabra = f"> {g['kadabra_seconds_above']:.0f}"
            ratio = f"≥ {g['kadabra_over_turbobc_at_least']:.1f}x"
        else:
            kadabra, ratio = "-", "-"
        rows.append([device, graph, f"{g['nnz']:,}", f"{epsilon:g}", sampler,
                     f"{g['samples']:,} + {g.get('pilot_samples', 0):,}", g["stopped_by"],
                     f"{g['turbobc_seconds']:.2f}", kadabra,
                     f"{g['kadabra_samples']:,}" if "kadabra_samples" in g else "-", ratio,
                     _or_dash(g.get("turbobc_max_error"), ".2g"),
                     _or_dash(g.get("kadabra_max_error"), ".2g"), r["_file"]])
    return rows


def results_markdown(results: Path = RESULTS) -> str:
    """The results page, from the latest record of each kind and device in ``results``."""
    records = load_records(results)
    parts = [HEADING, "",
             "Generated by `python -m bench report --write` from the JSON records in "
             "`bench/results/` (file names in brackets); nothing here is typed by hand. "
             "Single-source MTEPS = stored edges / time; exact-BC GTEPS = n · stored edges / "
             "time; memory is peak CuPy pool bytes (bench/records.py). How the benchmarks "
             "measure, and the graphs they run: [benchmarks.md](benchmarks.md).", ""]
    single = _latest(records, lambda r: r.get("benchmark", "").startswith("single_source")
                     or (r.get("suite") == "single-source" and not r.get("skipped")))
    if single:
        rows = []
        for r in single:
            rows += _single_source_rows(r, f"{_device(r)} [{r['_file']}]")
        parts += ["## One source (auto kernel, median ms per source; ratio to the paper's "
                  "code on the H200)", "", _table(_SS_HEADER, rows), ""]
    # the plain suite's records only: labelled ones (exact_gpu_before_*, _after_*) are
    # comparisons of a few graphs, kept for the notes that cite them
    exact = [r for r in records if r.get("benchmark") == "exact_gpu"
             and r["_file"].startswith("exact_gpu-")]
    if exact:
        parts += ["## Exact BC on the GPU (latest row per GPU and graph)", "",
                  _table(["GPU", "graph", "n", "stored edges", "seconds", "GTEPS", "peak GiB",
                          "run", "target s", "edge/vertex", "record"], _exact_rows(exact)), ""]
    approx = [r for r in records if r.get("benchmark") == "approx"
              and r["_file"].startswith("approx-")]
    if approx:
        parts += ["## Approximate BC against NetworKit's KADABRA, δ = 0.1 (latest row per GPU, "
                  "graph and ε)", "",
                  "turbobc `bc(A, epsilon=ε, delta=0.1)` (samples: the run's + the pilot's) "
                  "and `networkit.centrality.KadabraBetweenness(G, ε, 0.1)` on all the host's "
                  "threads, in the same run; KADABRA stopped after a time limit gives a lower "
                  "bound on the ratio. Largest errors against exact BC where it was computed "
                  "(bench/approx_gpu.py, docs/approximate.md).", "",
                  _table(["GPU", "graph", "stored edges", "ε", "sampler", "samples",
                          "stopped by", "turbobc s", "KADABRA s", "KADABRA samples",
                          "KADABRA / turbobc", "turbobc max error", "KADABRA max error",
                          "record"], _approx_rows(approx)), ""]
    parts += _latest_rows_section(
        records, "weighted_gpu", "Weighted BC on the GPU, lengths 1..100",
        "Random sources, the same for both runs; the exact-run estimates scale by n / sources "
        "(NetworKit's from `EstimateBetweenness` on all threads, bench/exact_gpu.py).",
        ["GPU", "graph", "sources", "unweighted s", "weighted s", "ratio", "distance s",
         "rounds", "exact est. s", "NetworKit est. s", "NetworKit threads",
         "NetworKit / turbobc", "whole graph unweighted s", "whole graph weighted s",
         "whole graph ratio", "NetworKit / whole graph"], _weighted_row)
    parts += _latest_rows_section(
        records, "family_choice", "The GPU family \"auto\" takes, against each forced",
        "Exact BC end to end, the fastest of each family's calls (bench/family_choice.py; "
        "docs/deep-graphs.md, \"Choosing the family\"): \"auto\" within 10% of the best "
        "forced family is the goal.",
        ["GPU", "graph", "n", "auto took", "auto s", "lanes s", "frontiers s", "best",
         "auto / best"],
        lambda device, g: [device, g["graph"], g["n"], g["auto_family"],
                           f"{g['auto_seconds']:.3f}",
                           f"{g['seconds_by_family'].get('lanes', float('nan')):.3f}",
                           f"{g['seconds_by_family'].get('frontiers', float('nan')):.3f}",
                           g["best_family"], f"{g['auto_over_best']:.2f}"],
        key=lambda g: (g["graph"],))
    parts += _latest_rows_section(
        records, "edge_folding", "Exact edge BC with the trees folded",
        "Whole graphs, end to end, best of the record's repeats: vertex BC (trees, and on the "
        "GPU chains, folded), edge BC with the trees folded and without "
        "(`Tuning.fold_trees=False`) on the same engine (bench/edge_folding.py); from "
        "issue 33's fourth item on, vertex and edge BC with chains folded too "
        "(`Tuning.fold_chains=True`; chain sources: the sources folded into chains' ends, "
        "dashes in earlier records).",
        ["device", "graph", "engine", "n", "vertex s", "edge s", "edge unfolded s",
         "folded", "edge / vertex", "unfolded edge / vertex", "max diff / largest",
         "vertex chains s", "edge chains s", "chain sources", "edge / vertex, chains",
         "chains max diff / largest"],
        _edge_folding_row)
    parts += _latest_section(
        records, "cpu_weighted", "Weighted and edge BC on the CPU engine against NetworKit",
        "ego-Facebook, lengths 1..100, the same cores; NetworKit seconds / turbobc seconds "
        "(above 1: turbobc faster), medians of the record's repeats (bench/cpu_weighted.py).",
        ["CPU", "graph", "threads", "vertex", "weighted", "edge", "weighted edge",
         "edge / vertex (turbobc)", "weighted / unweighted (turbobc)"], _cpu_weighted_row,
        where=_host)
    parts += _chain_sections(records)
    parts += _latest_section(
        records, "cpu_threads", "The CPU engine on many cores: concurrent batches",
        "Exact BC (`turbobc.bc(engine=\"graphblas\")`, trees folded) with 1, 2, 4, 8 and "
        "`\"auto\"` batches at once (`Tuning.cpu_concurrent_batches`), NetworKit's "
        "Betweenness on the same cores; best of two (bench/cpu_threads.py).",
        ["CPU", "graph", "n", "NetworKit s", "1 s", "2 s", "4 s", "8 s", "auto s",
         "NetworKit / 1", "NetworKit / auto"], _cpu_threads_row, where=_host)
    parts += _latest_section(
        records, "gpu_families", "The GPU's two families for unweighted BC",
        "The batched kernels (a warp per vertex and 32 sources) against the layers family "
        "(`Tuning.gpu_family=\"layers\"`, then named \"queue\": a thread per source and vertex "
        "of each level), the "
        "same sources (the first in locality order), then exact runs where they fit "
        "(docs/deep-graphs.md).",
        ["GPU", "graph", "sources", "batched s", "queue s", "queue / batched",
         "exact batched s", "exact queue s", "max rel diff"], _families_row)
    parts += _latest_section(
        records, "sampled_gpu", "k-sampled BC on million-vertex graphs: exact-run estimates",
        "`turbobc.bc(A, engine=\"gpu\", k=k, seed=1)` end to end; the exact-run estimate "
        "scales the seconds by n / k (issue 12's 2^20-vertex rows; docs/deep-graphs.md).",
        ["GPU", "graph", "n", "stored edges", "k", "seconds", "batch x batches", "depth",
         "exact estimate s"], _sampled_row)
    parts += _latest_rows_section(
        records, "weighted_distances",
        "Weighted BC with the distances a source per block, small graphs",
        "Lengths 1..100, whole graph end to end, median of 5: the distances a source per block "
        "in shared memory (`Tuning.gpu_block_distances`) against rounds over the batch, and "
        "each against unweighted BC (bench/weighted_distances.py).",
        ["GPU", "graph", "n", "unweighted s", "blocks s", "blocks / unweighted", "rounds s",
         "rounds / unweighted", "max rel diff"], _blocks_row)
    dask_note = ("Overhead = wall seconds − the busiest worker's chunk seconds (validation, the "
                 "graph's one transfer per worker, scheduling). Without Dask: the same call on "
                 "one device of the machine. First chunk: from the call to the first finished "
                 "chunk; start: that less the chunk's own sweep, beside the call without Dask's "
                 "(its seconds less its sweep). Folded: vertices in trees / sources inside "
                 "chains (docs/scale-out.md).")
    dask_header = ["device", "graph", "sources", "workers", "seconds", "speedup",
                   "without Dask s", "chunks", "first chunk s", "start s",
                   "start without Dask s", "median chunk s", "overhead s", "folded"]
    parts += _latest_rows_section(records, "dask_scaling",
                                  "Scale-out through Dask, one worker per GPU", dask_note
                                  + " Each graph's rows come from the latest record that has "
                                  "them (speedups within one record).", dask_header,
                                  _dask_row, keep=lambda r: _dask_cluster(r) == "gpu",
                                  key=lambda g: (g["graph"], g["workers"]),
                                  order=lambda g: (g["graph"], g["workers"]))
    parts += _latest_section(records, "dask_scaling_cpu",
                             "Scale-out through Dask, CPU LocalCluster, workers sharing the "
                             "cores", dask_note, dask_header, _dask_row,
                             keep=lambda r: _dask_cluster(r) == "cpu")
    compared = [r for r in records
                if r.get("benchmark") == "house_compare" and "ratio" in r["rows"][0]]
    # the comparisons on the GPU of the latest GPU one, and those run on a CPU alone (by the
    # records' identity)
    on_gpu = [r for r in compared if (r.get("environment") or {}).get("gpu")]
    on_last_gpu = {id(r) for r in on_gpu if _device(r) == _device(on_gpu[-1])} | {
        id(r) for r in compared if not (r.get("environment") or {}).get("gpu")}
    parts += _latest_rows_section(
        records, "house_compare", "Before and after a restructure, one GPU, trees in turns",
        "bench/house_compare.py: two trees of turbobc on one GPU in one run, each imported in "
        "its own process, taking turns (before, after, after, before, ...); single-source "
        "rows are each kernel's median per source (CUDA events), the others end-to-end calls "
        "of the public API. The before tree is 5c041bc, the commit before issue 32 (its copy "
        "`.before`, named by its COMMIT file in records from 826a634 on); the after tree is "
        "the record's commit. Latest row per call on the GPU of the latest GPU comparison, and "
        "per call on a CPU alone (the cpu engine's rows); above 1.03 the after tree is slower "
        "by more than issue 32 allows.",
        ["device", "call", "before", "after", "after / before"],
        _house_row, keep=lambda r: id(r) in on_last_gpu,
        key=lambda g: (g["call"],))
    parts += _cold_start_rows(records)
    parts += _memory_points_section(records)
    for suite, title in (("exact", "Exact BC, every engine in one run"),
                         ("cpu-small", "Exact BC on small graphs, every engine in one run"),
                         ("memory", "Memory footprint (Kronecker graphs), the latest run")):
        for r in _latest(records, lambda r, s=suite: r.get("suite") == s):
            body = _compare_table(r) if suite != "memory" else _memory_table(r)
            parts += [f"## {title}: {_device(r)} [{r['_file']}]", "", body, ""]
    cpu = [r for r in records if r.get("benchmark", "").startswith("cpu_exact")]
    if cpu:
        r = cpu[-1]
        parts += [f"## CPU engine against networkx [{r['_file']}]", "",
                  _table(["CPU", "graph", "turbobc graphblas s", "networkx s", "ratio",
                          "max rel diff"],
                         [[_device(r), r["graph"], f"{r['turbobc_graphblas_seconds']:.3f}",
                           f"{r['networkx_seconds']:.2f}", f"{r['speedup_vs_networkx']:.1f}x",
                           f"{r['max_rel_difference']:.1e}"]]), ""]
    return "\n".join(parts).rstrip() + "\n"


def write_results_page(page: Path = RESULTS_PAGE, results: Path = RESULTS) -> str:
    """Write :func:`results_markdown` of ``results`` to ``page`` (the whole page); returns it."""
    text = results_markdown(results)
    Path(page).write_text(text, encoding="utf-8")
    return text
