"""The benchmark harness on the CPU: generators, peers, suites, records and the report.

The GPU measurements themselves (bench/memory.py, the single-source suite) run on a GPU
machine; here each suite is run the way a CPU-only machine runs it, which records why the GPU
parts were skipped.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from bench import graphs, memory, peers, report, suites

ROOT = Path(__file__).resolve().parents[1]


def test_sorted_canonical_arrays_match_the_scipy_canonical_form():
    rng = np.random.default_rng(3)
    n = 50
    rows, cols = rng.integers(0, n, 400), rng.integers(0, n, 400)  # loops and repeats too
    indptr, indices = graphs._canonical_arrays(np, rows.astype(np.int32),
                                               cols.astype(np.int32), n)
    expected = graphs._canonical(rows, cols, n)
    np.testing.assert_array_equal(indptr, expected.indptr)
    np.testing.assert_array_equal(indices, expected.indices)


def test_array_module_kronecker_is_canonical_with_host_like_density():
    indptr, indices = graphs.kronecker_arrays(np, 11)
    A = graphs._csr_from_arrays(indptr, indices, 2**11)
    assert A.diagonal().sum() == 0 and (A != A.T).nnz == 0
    B = sp.csr_array(A, copy=True)
    B.sum_duplicates()
    B.sort_indices()
    np.testing.assert_array_equal(B.indices, A.indices)  # sorted, no repeats
    host = graphs.kronecker(11, device=False)
    assert abs(A.nnz / host.nnz - 1) < 0.05  # same distribution, another sample


@pytest.mark.slow
def test_chunked_kronecker_is_the_canonical_form_of_its_sample():
    """kron25 to kron27's path (several chunks, many buckets, two passes) on the host at scale
    9: the same canonical pattern as SciPy's of the same sampled edges."""
    chunks = graphs._kronecker_chunks(np, 9, 48, 1, chunk_edges=997)
    assert len(chunks) == 25 and all(rows.dtype == np.int32 for rows, _ in chunks)
    rows = np.concatenate([r for r, _ in chunks])
    cols = np.concatenate([c for _, c in chunks])
    expected = graphs._canonical(rows, cols, 2**9)
    indptr, indices = graphs._bucketed_csr(np, chunks, 2**9, bucket_keys=1500)
    np.testing.assert_array_equal(indptr, expected.indptr)
    np.testing.assert_array_equal(indices, expected.indices)
    whole = graphs.kronecker_arrays(np, 9, chunk_edges=997, bucket_keys=1500)
    np.testing.assert_array_equal(whole[1], indices)


def test_one_chunk_is_the_sample_of_the_records():
    """Up to scale 24 (one chunk) the sample is the one the records were measured on: the
    draws in the same order, one sort of every key."""
    one = graphs.kronecker_arrays(np, 10)
    chunks = graphs._kronecker_chunks(np, 10, 48, 1, chunk_edges=2**30)
    assert len(chunks) == 1 and graphs.kronecker_sizes(24)["chunks"] == 1
    rows, cols = chunks[0]
    expected = graphs._canonical(rows, cols, 2**10)
    np.testing.assert_array_equal(one[0], expected.indptr)
    np.testing.assert_array_equal(one[1], expected.indices)


def test_kronecker_arrays_come_back_in_int64_past_the_limit(monkeypatch):
    """Past 2^31 - 64 stored edges both arrays are int64 (here the limit lowered to 100)."""
    import turbobc._graph

    small = graphs.kronecker_arrays(np, 8, chunk_edges=997, bucket_keys=1500)
    monkeypatch.setattr(turbobc._graph, "INT32_LIMIT", 100)
    indptr, indices = graphs.kronecker_arrays(np, 8, chunk_edges=997, bucket_keys=1500)
    assert indptr.dtype == np.int64 and indices.dtype == np.int64
    assert small[1].dtype == np.int32
    np.testing.assert_array_equal(indices, small[1])
    A = graphs._csr_from_arrays(indptr, indices, 2**8)
    assert A.indices.dtype == np.int64 and (A != A.T).nnz == 0


@pytest.mark.parametrize("scale", [25, 26, 27])
def test_kronecker_sizes_past_two_to_the_31_do_not_overflow(scale):
    """kron25 to kron27, sized without allocating: every array of the generation below 2^31
    entries, the vertices in int32, the keys in int64, the result in int64."""
    sizes = graphs.kronecker_sizes(scale)
    n, m = 2**scale, 48 * 2**scale
    assert sizes["n"] == n and sizes["sampled_edges"] == m > 2**31 // 2
    assert sizes["vertex_dtype"] == "int32" and sizes["vertex_max"] < 2**31 - 1
    assert (1 << (scale - 1)) < 2**31  # the highest bit a sampled row or column sets in int32
    assert sizes["key_fits"] and sizes["largest_key"] == n * n - 1
    assert sizes["chunks"] == -(-m // graphs.CHUNK_EDGES) >= 2
    assert sizes["chunk_edges"] <= graphs.CHUNK_EDGES < 2**31
    assert sizes["keys_per_bucket"] <= graphs.BUCKET_KEYS < 2**31
    assert sizes["stored_edges_bound"] > 2**31 and sizes["index_dtype"] == "int64"
    assert sizes["index_bytes_bound"] == 8 * (2 * m + n + 1)
    assert graphs.kronecker_sizes(22)["index_dtype"] == "int32"


def test_kronecker_without_a_device_is_the_host_sample():
    a, b = graphs.kronecker(10), graphs.kronecker(10, device=False)
    assert (a != b).nnz == 0


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["turbobc-graphblas", "networkit", "networkx"])
def test_every_cpu_peer_gives_networkx_normalized_values_or_says_why_not(engine):
    G = nx.les_miserables_graph()
    A = nx.to_scipy_sparse_array(G, format="csr", weight=None)
    ok, reason = peers.available(engine)
    if not ok:
        assert engine == "networkit" and "pip install '.[bench]'" in reason
        return
    out = peers.run(engine, A)
    expected = nx.betweenness_centrality(G)
    np.testing.assert_allclose(out["values"], [expected[v] for v in G], rtol=1e-12,
                               atol=1e-15)
    assert out["seconds"] > 0


def test_networkit_raw_scores_are_ordered_pair_sums():
    # a path 0-1-2: vertex 1 lies on the pair (0, 2), counted (0, 2) and (2, 0)
    raw = np.array([0.0, 2.0, 0.0])
    np.testing.assert_array_equal(peers.networkit_to_networkx(raw, normalized=False),
                                  [0.0, 1.0, 0.0])
    assert peers.max_rel_diff(np.array([1.0, 2.0]), np.array([1.0, 4.0])) == 0.5


@pytest.mark.slow
def test_compare_suite_records_agreement_ratios_and_skips():
    record = suites.compare(["karate", "delaunay_n10.mtx"], log=lambda _: None,
                            max_pairs={"networkx": 1e9})
    assert [g["graph"] for g in record["graphs"]] == ["karate", "delaunay_n10.mtx"]
    for g in record["graphs"]:
        ours = g["engines"]["turbobc-graphblas"]
        assert ours["max_rel_diff"] == 0 and ours["ratio"] >= 1
        for engine, rec in g["engines"].items():
            if "seconds" in rec:
                assert rec["max_rel_diff"] < 1e-12, engine
                assert rec["gteps"] == pytest.approx(g["n"] * g["nnz"] / rec["seconds"] / 1e9)
            else:
                assert rec["skipped"] == record["engines"][engine]["skipped"]
    capped = suites.compare(["karate"], engines=("networkx",), max_pairs={"networkx": 10},
                            log=lambda _: None)
    assert "above this engine's cap" in capped["graphs"][0]["engines"]["networkx"]["skipped"]


def test_memory_suite_without_a_gpu_writes_the_model_rows(monkeypatch):
    # no usable GPU on any host: on a GPU machine the suite would measure instead
    monkeypatch.setattr(graphs, "device_present", lambda: False)
    record = memory.run(scales=[8, 10], log=lambda _: None)
    assert record["skipped"].startswith("no usable GPU")
    for p in record["points"]:
        assert p["single_model_bytes"] == 4 * p["nnz"] + 48 * p["n"]
        assert p["single_expected_bytes"] <= p["single_model_bytes"]
    largest = record["largest"]["single_source"]
    assert largest["single_expected_bytes"] <= record["largest"]["capacity_bytes"]


def test_largest_fitting_stops_at_the_first_scale_over_capacity():
    points = [{"scale": s, "n": 2**s, "nnz": 40 * 2**s} for s in (10, 12)]
    n, m = 2**20, 40 * 2**20
    exact = memory._single_expected(n, m)
    assert memory.largest_fitting(points, exact)["single_source"]["scale"] == 20
    assert memory.largest_fitting(points, exact - 1)["single_source"]["scale"] == 19


def test_single_source_suite_says_why_it_is_skipped_without_a_gpu():
    ok, reason = peers.available("turbobc-gpu")
    record = suites.single_source(["karate"], log=lambda _: None) if not ok else None
    if not ok:
        assert record["skipped"] == reason and record["graphs"] == []
    else:  # on a GPU machine the suite measures instead
        assert reason == ""


def test_command_writes_a_record_and_its_summary(tmp_path):
    out = subprocess.run([sys.executable, "-m", "bench", "cpu-small", "--graphs", "karate",
                          "--out", str(tmp_path)], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout
    [path] = tmp_path.glob("cpu-small-*.json")
    record = json.loads(path.read_text())
    assert record["benchmark"] == "cpu-small" and record["environment"]["commit"]
    summary = path.with_suffix(".md").read_text()
    assert "| karate | 34 | 156 | turbobc-graphblas |" in summary and summary in out


def test_report_covers_every_committed_record_and_writes_the_whole_page(tmp_path):
    text = report.results_markdown()
    records = report.load_records()
    single = {r["_file"] for r in records if r.get("benchmark", "").startswith("single_source")}
    assert text.startswith("# Results\n")
    assert any(name in text for name in single)
    page = tmp_path / "results.md"
    page.write_text("# old\n\nhand-typed\n")
    first = report.write_results_page(page)
    assert page.read_text() == first == text and "hand-typed" not in first
    assert report.write_results_page(page) == first


def test_committed_results_page_is_what_the_records_give():
    """docs/results.md is generated: it changes only with the records in bench/results/."""
    assert report.RESULTS_PAGE == ROOT / "docs" / "results.md"
    assert report.RESULTS_PAGE.read_text() == report.results_markdown(), (
        "docs/results.md differs from the records: run `python -m bench report --write`")


def test_report_command_prints_the_page_or_writes_it(tmp_path):
    def command(*args):
        return subprocess.run([sys.executable, "-m", "bench", "report", *args],
                              capture_output=True, text=True, check=True, cwd=ROOT).stdout

    printed = command()
    assert printed == report.results_markdown() + "\n"
    page = tmp_path / "results.md"
    assert command("--write", "--page", str(page)).startswith(f"{page}: written from")
    assert page.read_text() + "\n" == printed


def test_cold_start_rows_from_fake_children(tmp_path, monkeypatch):
    """bench/cold_start.py builds each case's row from its two children (faked: no GPU, no
    fresh processes here): the seconds over the warm call, the bars met, the compile events
    summed; the record is rewritten as cases finish."""
    from bench import cold_start

    steps = []

    def fake(graph_path, case, caches, timeout):
        steps.append(case["device"])
        first = 0.9 if len(steps) % 2 else 0.3  # cold, then cached
        return {"import_seconds": 0.7, "cupy_start_seconds": None, "first_seconds": first,
                "second_seconds": 0.2, "facts": {"engine": "cpu"},
                "events": {"nvrtc_turbobc": [], "nvrtc_cupy": [["cupy_copy @ x.py:1", 0.1]],
                           "numba": [["sweep_chunk", 0.4], ["bfs (cache)", 0.05]]}}

    monkeypatch.setattr(cold_start, "_child", fake)
    monkeypatch.setattr(cold_start, "case_graph", lambda name: sp.identity(5, format="csr"))
    monkeypatch.setattr(cold_start, "networkit_first_call", lambda path, timeout: {
        "import_seconds": 0.3, "first_seconds": 0.15, "second_seconds": 0.1, "threads": 2})
    row = cold_start.measure_case("cpu", tmp_path)
    assert steps == ["cpu", "cpu"] and row["networkit"]["first_seconds"] == 0.15
    assert row["extra_cold"] == pytest.approx(0.7 + 0.9 - 0.2)  # import counted on the CPU
    assert row["extra_cached"] == pytest.approx(0.1)
    assert row["meets_cold"] and row["meets_cached"]
    events = row["cold"]["events"]
    assert events["numba"]["count"] == 2 and events["numba"]["seconds"] == pytest.approx(0.45)
    assert events["nvrtc_cupy"]["slowest"] == [["cupy_copy @ x.py:1", 0.1]]
    assert "ok/ok" in cold_start._line(row) and "NetworKit first 0.150 s" in cold_start._line(row)
    bars = cold_start.check_bars(dict(row, device="gpu", cold=dict(row["cold"],
                                                                   first_seconds=1.0)))
    assert bars["extra_cold"] == pytest.approx(0.8) and not bars["meets_cold"]
    assert cold_start.check_bars({"device": "gpu", "cold": {"error": "boom"}}) == {}


def test_cold_start_cases_cover_every_family_and_the_cpu():
    from bench import cold_start

    assert {c["device"] for c in cold_start.CASES.values()} == {"gpu", "cpu"}
    assert set(cold_start.CASES) >= {"lanes", "frontiers", "layers", "single", "approximate",
                                     "edge", "cpu"}
    assert cold_start.CASES["layers"]["kwargs"] == {"weight": True}
    assert cold_start.BARS == {"gpu": {"extra_cold": 0.5, "extra_cached": 0.3},
                               "cpu": {"extra_cold": 3.0, "extra_cached": 0.5}}


def test_memory_models_per_stored_edge_in_every_index_type():
    n, m = 2**25, 3_000_000_000  # kron25's size: int64 pointers by size, int32 indices
    row = memory.per_edge(n, m, measured=30 * m)
    assert (row["index_dtype"], row["position_dtype"]) == ("int32", "int64")
    assert row["measured"] == 30
    assert row["model_int32"] == pytest.approx(4 + 48 * n / m)
    assert row["model_int64"] == pytest.approx(8 + 56 * n / m)
    assert row["model_split"] == pytest.approx(4 + 52 * n / m)
    assert memory.single_model(n, m) == 4 * m + 52 * n
    assert memory.single_model(n, m, np.int64) == 8 * m + 56 * n
    assert memory.single_model(2**20, 10**8) == 4 * 10**8 + 48 * 2**20
    assert memory.per_edge(2**20, 10**8)["index_dtype"] == "int32"
    assert memory.per_edge(2**20, 10**8)["position_dtype"] == "int32"
    assert memory.scale_spec("26") == (26, 48) and memory.scale_spec("26:72") == (26, 72)


def test_house_compare_names_a_tree_by_its_commit_file(tmp_path, monkeypatch):
    from bench import house_compare

    monkeypatch.delenv("COMMIT_BEFORE", raising=False)
    (tmp_path / "COMMIT").write_text("5c041bc\n")
    assert house_compare._tree_commit("before", str(tmp_path)) == "5c041bc"
    assert house_compare._tree_commit("before", str(tmp_path / "none")) == str(tmp_path / "none")
    monkeypatch.setenv("COMMIT_BEFORE", "abc1234")
    assert house_compare._tree_commit("before", str(tmp_path)) == "abc1234"


def test_report_keeps_the_before_after_rows_of_the_latest_gpu():
    """The latest GPU comparison's rows (each on that GPU), and the CPU-only comparisons'."""
    text = report.results_markdown()
    section = text.split("## Before and after a restructure")[1].split("\n## ")[0]
    records = [r for r in report.load_records() if r.get("benchmark") == "house_compare"
               and "ratio" in r["rows"][0]]
    on_gpu = [r for r in records if r["environment"].get("gpu")]
    on_cpu = [r for r in records if not r["environment"].get("gpu")]
    for record in [on_gpu[-1], *on_cpu[-1:]]:
        for row in record["rows"]:
            assert f"| {row['call']} |" in section and f"{row['ratio']:.3f}" in section
    devices = {report._device(on_gpu[-1])} | {report._device(r) for r in on_cpu}
    assert all(any(device in line for device in devices) for line in section.splitlines()
               if line.startswith("| ") and "call" not in line)


def test_silvan_row_from_a_stand_in_binary(tmp_path):
    """bench/approx_peers.py's SILVAN row: the edge list it writes, the samples it parses, its
    values scaled to networkx's normalization (x n / (n − 2)), and a run past the limit."""
    sys.path.insert(0, str(ROOT / "bench"))
    import approx_peers

    fake = tmp_path / "silvan"
    fake.write_text("#!/bin/sh\n# -o OUT EPS DELTA GRAPH\n"
                    "test \"$3\" = 0.25 || exit 3\n"
                    "test \"$(wc -l < \"$5\")\" -eq 3 || exit 4\n"
                    "printf '0,0.0\\n1,0.5\\n2,0.25\\n' > \"$2\"\n"
                    "echo num_samples: 1234\n")
    fake.chmod(0o755)
    A = sp.csr_array(nx.to_scipy_sparse_array(nx.path_graph(4)))
    row = approx_peers.silvan(fake, A, 0.25, 0.1, limit=30)
    assert row["silvan_samples"] == 1234 and row["silvan_seconds"] > 0
    np.testing.assert_allclose(row["silvan_values"], [0.0, 1.0, 0.5, 0.0])
    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\nsleep 5\n")
    slow.chmod(0o755)
    assert approx_peers.silvan(slow, A, 0.25, 0.1, limit=0.5) == {"silvan_seconds_above": 0.5}
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\necho broken >&2\nexit 1\n")
    failing.chmod(0o755)
    assert approx_peers.silvan(failing, A, 0.25, 0.1, limit=30) == {"silvan_error": "broken\n"}


def test_top_k_guarantee_check_of_the_bench():
    sys.path.insert(0, str(ROOT / "bench"))
    from topk_cpu import keeps_top_k

    exact = np.array([0.5, 0.3, 0.29, 0.1, 0.0])
    assert keeps_top_k([0, 1], exact, 2, 0.01) and keeps_top_k([0, 2], exact, 2, 0.01)
    assert not keeps_top_k([0, 3], exact, 2, 0.01)  # 0.1 is below θ − 2ε = 0.28
    assert not keeps_top_k([1, 2], exact, 2, 0.01)  # 0.5, above θ + 2ε, left out
    assert not keeps_top_k([0], exact, 2, 0.01)  # not k vertices
