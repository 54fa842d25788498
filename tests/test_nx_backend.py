"""The networkx backend: dispatch, labels, declines, conversion once, and networkx's own
betweenness test modules run in networkx's backend test mode."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import networkx as nx
import pytest

import turbobc._nx_backend as backend
from turbobc._nx_backend import BackendInterface, TurboBCGraph, can_run, should_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def quiet_cache():
    """networkx warns (a note, by design) each time it reuses a cached conversion; this suite
    turns warnings into errors, so tests that call twice on one graph silence that note."""
    nx.config.warnings_to_ignore.add("cache")
    yield
    nx.config.warnings_to_ignore.discard("cache")


@pytest.fixture
def priority():
    """Automatic dispatch to turbobc with fallback to networkx, restored afterwards."""
    old_algos, old_fallback = list(nx.config.backend_priority.algos), nx.config.fallback_to_nx
    nx.config.backend_priority.algos = ["turbobc"]
    nx.config.fallback_to_nx = True
    yield
    nx.config.backend_priority.algos = old_algos
    nx.config.fallback_to_nx = old_fallback


def _close(ours: dict, theirs: dict):
    assert list(ours) == list(theirs)  # same nodes, same order
    for v in theirs:
        assert ours[v] == pytest.approx(theirs[v], rel=1e-12, abs=1e-14), v
        assert type(ours[v]) is float


def test_entry_points_are_registered():
    assert "turbobc" in nx.utils.backends.backends
    info = nx.utils.backends.backend_info["turbobc"]
    assert info["backend_name"] == "turbobc"
    assert set(info["functions"]) == {"betweenness_centrality",
                                      "betweenness_centrality_subset"}
    assert nx.utils.backends.backends["turbobc"].load() is BackendInterface
    assert not hasattr(BackendInterface, "edge_betweenness_centrality")


def _graphs():
    directed = nx.gnp_random_graph(40, 0.08, seed=3, directed=True)
    directed = nx.relabel_nodes(directed, {i: (i % 7, f"n{i}") for i in directed})
    multi = nx.MultiGraph(nx.path_graph(6))
    multi.add_edges_from([(0, 1), (2, 3), (3, 3)])  # parallel edges and a self loop
    disconnected = nx.disjoint_union(nx.cycle_graph(5), nx.star_graph(4))
    disconnected.add_node("lonely")
    return {"karate": nx.karate_club_graph(), "florentine": nx.florentine_families_graph(),
            "directed-tuples": directed, "multigraph": multi, "disconnected": disconnected,
            "empty": nx.Graph(), "one-node": nx.empty_graph(1),
            "multidigraph": nx.MultiDiGraph([(0, 1), (0, 1), (1, 2), (2, 0), (2, 3)])}


GRAPHS = list(_graphs())  # names; each test builds fresh graphs (no cached conversions)


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("normalized, endpoints", [(True, False), (False, True)])
def test_betweenness_matches_networkx_with_labels(name, normalized, endpoints):
    G = _graphs()[name]
    ours = nx.betweenness_centrality(G, normalized=normalized, endpoints=endpoints,
                                     backend="turbobc")
    theirs = nx.betweenness_centrality(G, normalized=normalized, endpoints=endpoints)
    _close(ours, theirs)


@pytest.mark.parametrize("name", ["karate", "directed-tuples", "disconnected"])
def test_sampled_sources_match_networkx(name):
    G = _graphs()[name]
    for k, seed in ((5, 1), (len(G) - 1, 42), (len(G), 7)):
        ours = nx.betweenness_centrality(G, k=k, seed=seed, backend="turbobc")
        theirs = nx.betweenness_centrality(G, k=k, seed=seed)
        _close(ours, theirs)
    # a random.Random instance is consumed as networkx consumes it
    ours = nx.betweenness_centrality(G, k=4, seed=random.Random(5), backend="turbobc")
    _close(ours, nx.betweenness_centrality(G, k=4, seed=random.Random(5)))


@pytest.mark.parametrize("name", ["florentine", "directed-tuples", "multigraph"])
@pytest.mark.parametrize("normalized", [False, True])
def test_subset_with_every_node_a_target(name, normalized):
    G = _graphs()[name]
    sources = list(G)[::3]
    targets = list(G) + ["not a node"]  # extra targets never matter
    ours = nx.betweenness_centrality_subset(G, sources, targets, normalized=normalized,
                                            backend="turbobc")
    _close(ours, nx.betweenness_centrality_subset(G, sources, targets, normalized=normalized))
    empty = nx.betweenness_centrality_subset(G, [], list(G), backend="turbobc")
    assert empty == dict.fromkeys(G, 0.0)


def test_all_equal_weights_are_served():
    G = nx.les_miserables_graph()
    nx.set_edge_attributes(G, 2.5, "w")
    ours = nx.betweenness_centrality(G, weight="w", backend="turbobc")
    _close(ours, nx.betweenness_centrality(G, weight="w"))
    H = nx.path_graph(5)  # no attribute at all: networkx's default weight 1 everywhere
    _close(nx.betweenness_centrality(H, weight="weight", backend="turbobc"),
           nx.betweenness_centrality(H, weight="weight"))


def _reason(name, *args, **kwargs):
    return can_run(name, args, kwargs)


def test_can_run_reasons():
    G = nx.les_miserables_graph()  # weighted: co-occurrence counts differ between edges
    assert _reason("betweenness_centrality", G) is True
    assert _reason("betweenness_centrality", G, weight="weight").startswith(
        "edge weights 'weight' differ (")
    assert _reason("betweenness_centrality", G, weight=lambda u, v, d: 1) == (
        "a weight function is not supported (turbobc BC is unweighted)")
    zero = nx.path_graph(3)
    nx.set_edge_attributes(zero, 0, "w")
    assert _reason("betweenness_centrality", zero, weight="w") == (
        "edge weights 'w' are all 0; only a positive finite common weight gives the "
        "unweighted shortest paths")
    assert _reason("betweenness_centrality", G, k=0, seed=random.Random(1)) == (
        "k must be an integer in 1..n = 77 for turbobc; got 0")
    assert _reason("betweenness_centrality", G, k=78, seed=random.Random(1)).endswith("got 78")
    assert _reason("betweenness_centrality", G, k=3, seed=object()).startswith(
        "seed of type object cannot reproduce")
    P = nx.path_graph(4)
    assert _reason("betweenness_centrality_subset", P, [0], [3]) == (
        "3 node(s) are not targets; turbobc computes all-targets subset BC only")
    assert _reason("betweenness_centrality_subset", P, [0, 0], list(P)) == (
        "source 0 is repeated (networkx counts it twice)")
    assert _reason("betweenness_centrality_subset", P, [9], list(P)) == (
        "source 9 is not a node of the graph")
    assert _reason("betweenness_centrality_subset", P, iter([0]), list(P)) == (
        "sources and targets must be collections, not one-shot iterators")
    assert _reason("betweenness_centrality_subset", P, [[0]], list(P)) == (
        "source [0] is not a node of the graph")
    assert _reason("betweenness_centrality_subset", P, [0], [[0]]).startswith(
        "sources and targets must hold hashable nodes: ")
    assert _reason("edge_betweenness_centrality", P) == (
        "turbobc does not implement edge_betweenness_centrality")
    assert _reason("betweenness_centrality", P, bogus=1).startswith(
        "the arguments do not match betweenness_centrality")
    converted = backend.convert_from_nx(P)
    assert _reason("betweenness_centrality", converted, weight="weight") == (
        "weights are not kept in a turbobc graph (turbobc BC is unweighted)")


def test_explicit_backend_declines_with_not_implemented():
    G = nx.les_miserables_graph()
    with pytest.raises(NotImplementedError, match="not implemented by 'turbobc' backend for "
                                                  "the given arguments"):
        nx.betweenness_centrality(G, weight="weight", backend="turbobc")
    with pytest.raises(NotImplementedError, match="not implemented by 'turbobc'"):
        nx.betweenness_centrality_subset(G, ["Valjean"], ["Javert"], backend="turbobc")


def test_declined_calls_fall_back_to_networkx(priority):
    G = nx.les_miserables_graph()
    expected = nx.betweenness_centrality(G, weight="weight", backend="networkx")
    assert nx.betweenness_centrality(G, weight="weight") == expected
    expected = nx.betweenness_centrality_subset(G, ["Valjean"], ["Javert", "Cosette"],
                                                backend="networkx")
    assert nx.betweenness_centrality_subset(G, ["Valjean"], ["Javert", "Cosette"]) == expected


def test_should_run_leaves_tiny_graphs_to_networkx(priority):
    small, large = nx.path_graph(backend.SHOULD_RUN_MIN_NODES - 1), nx.path_graph(
        backend.SHOULD_RUN_MIN_NODES)
    assert should_run("betweenness_centrality", (small,), {}).startswith(
        f"the graph has {len(small)} nodes")
    assert should_run("betweenness_centrality", (), {"G": large}) is True
    nx.betweenness_centrality(small)
    nx.betweenness_centrality(large)
    # networkx caches a conversion on the graph only when a backend ran
    assert "turbobc" not in small.__networkx_cache__.get("backends", {})
    assert "turbobc" in large.__networkx_cache__["backends"]


def test_graph_is_converted_once(monkeypatch):
    made = []

    class Counting(TurboBCGraph):
        def __init__(self, *args, **kwargs):
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(backend, "TurboBCGraph", Counting)
    G = nx.karate_club_graph()
    first = nx.betweenness_centrality(G, backend="turbobc")
    again = nx.betweenness_centrality(G, k=5, seed=1, backend="turbobc")
    subset = nx.betweenness_centrality_subset(G, [0, 1], list(G), backend="turbobc")
    assert len(made) == 1
    assert first.keys() == again.keys() == subset.keys()
    G.add_edge(0, 33)  # mutation clears networkx's cache: converted again
    nx.betweenness_centrality(G, backend="turbobc")
    assert len(made) == 2


def test_converted_graph_and_extra_parameters():
    G = _graphs()["directed-tuples"]
    converted = backend.convert_from_nx(G)
    assert converted.__networkx_backend__ == "turbobc"
    assert converted.is_directed() and not converted.is_multigraph()
    assert list(converted) == list(G) and len(converted) == len(G)
    assert (3, "n3") in converted and "x" not in converted and [1] not in converted
    assert repr(converted) == f"TurboBCGraph(directed, n=40, stored edges={G.size()})"
    # a converted graph goes straight in, and turbobc's own parameters pass through
    ours = nx.betweenness_centrality(converted, backend="turbobc", engine="graphblas")
    _close(ours, nx.betweenness_centrality(G))
    back = backend.convert_to_nx(converted)
    assert list(back) == list(G) and set(back.edges) == set(G.edges)
    assert backend.convert_to_nx({"a": 1.0}) == {"a": 1.0}
    multi = backend.convert_to_nx(backend.convert_from_nx(_graphs()["multigraph"]))
    assert multi.is_multigraph()
    assert set(multi.edges()) == set(_graphs()["multigraph"].edges())  # parallel edges once


# --------------------------------------------------------------------------- networkx's tests

PROBE = textwrap.dedent('''
    """pytest plugin: records, per test, which calls turbobc served and which it declined."""
    import json, os
    import turbobc._nx_backend as backend

    calls, current = {}, [None]
    can_run = backend.BackendInterface.can_run

    def spy(name, args, kwargs):
        answer = can_run(name, args, kwargs)
        calls.setdefault(current[0], []).append(
            [name, "served" if answer is True else "declined: " + str(answer)])
        return answer

    backend.BackendInterface.can_run = staticmethod(spy)

    def pytest_runtest_setup(item):
        current[0] = item.nodeid

    def pytest_runtest_logreport(report):
        if report.when == "call" or report.outcome != "passed":
            calls.setdefault(report.nodeid, [])
            outcomes[report.nodeid] = report.outcome

    outcomes = {}

    def pytest_sessionfinish(session):
        with open(os.environ["TURBOBC_PROBE_OUT"], "w") as fh:
            json.dump({"calls": calls, "outcomes": outcomes}, fh)
''')

NX_MODULES = ["networkx.algorithms.centrality.tests.test_betweenness_centrality",
              "networkx.algorithms.centrality.tests.test_betweenness_centrality_subset"]


def _run_networkx_tests(tmp_path, *, fallback: bool):
    (tmp_path / "turbobc_probe.py").write_text(PROBE)
    out = tmp_path / "probe.json"
    env = dict(os.environ, NETWORKX_TEST_BACKEND="turbobc", TURBOBC_PROBE_OUT=str(out),
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    env.pop("NETWORKX_FALLBACK_TO_NX", None)
    if fallback:
        env["NETWORKX_FALLBACK_TO_NX"] = "True"
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-p", "turbobc_probe", "-rxXfE", "--pyargs", *NX_MODULES],
                            capture_output=True, text=True, cwd=tmp_path, env=env)
    record = json.loads(out.read_text())
    return result, record["calls"], record["outcomes"]


def _classify(calls):
    served, declined, untouched = {}, {}, []
    for test, made in calls.items():
        reasons = sorted({c[1][len("declined: "):] for c in made if c[1] != "served"})
        if reasons:
            declined[test] = reasons
        elif made:
            served[test] = made
        else:
            untouched.append(test)
    return served, declined, untouched


def test_networkx_betweenness_tests_with_fallback(tmp_path):
    """networkx's own betweenness tests, every call dispatched to turbobc, declined ones
    falling back to networkx: all pass; the served/declined split is pinned."""
    result, calls, outcomes = _run_networkx_tests(tmp_path, fallback=True)
    assert result.returncode == 0, result.stdout[-3000:]
    assert set(outcomes.values()) == {"passed"}
    served, declined, untouched = _classify(calls)
    # Declined: networkx's own k errors, weights that differ, targets that are not all nodes.
    assert {t.split("::", 1)[1]: r for t, r in declined.items()
            if "test_k_out_of_bounds" in t} == {
        "TestBetweennessCentrality::test_k_out_of_bounds_raises": [
            "k must be an integer in 1..n = 4 for turbobc; got -1",
            "k must be an integer in 1..n = 4 for turbobc; got 0",
            "k must be an integer in 1..n = 4 for turbobc; got 5"]}
    weighted = sorted(t.rsplit("::", 1)[1] for t in declined
                      if "TestWeightedBetweennessCentrality" in t)
    assert weighted == ["test_G", "test_G2", "test_G3", "test_G4", "test_les_miserables_graph"]
    subset = sorted(t.rsplit("::", 1)[1] for t in declined
                    if "TestSubsetBetweennessCentrality" in t)
    assert len(subset) == 11 and "test_weighted_graph" in subset
    for test, reasons in declined.items():
        for reason in reasons:
            assert re.fullmatch(r"k must be an integer in 1\.\.n = 4 for turbobc; got -?\d+|"
                                r"edge weights 'weight' differ \(\d+ and \d+\); turbobc BC is "
                                r"unweighted and serves only all-equal weights|"
                                r"\d+ node\(s\) are not targets; turbobc computes all-targets "
                                r"subset BC only", reason), (test, reason)
    assert len(declined) == 1 + len(weighted) + len(subset)
    # Never reaching turbobc: edge betweenness, which turbobc does not register.
    assert untouched and all("Edge" in t for t in untouched)
    assert len(served) + len(declined) + len(untouched) == len(outcomes)
    counts = (len(served), len(declined), len(untouched))
    print(f"networkx {nx.__version__} betweenness tests: {counts[0]} served by turbobc, "
          f"{counts[1]} declined (fell back), {counts[2]} edge BC (not registered), 0 failed")
    if nx.__version__.startswith("3.6."):
        assert counts == (55, 17, 26)
    else:  # a newer networkx may add tests; none of today's may stop being served
        assert counts[0] >= 55


def test_networkx_betweenness_tests_without_fallback(tmp_path):
    """Without fallback, a declined call makes networkx xfail the test; nothing fails."""
    result, calls, outcomes = _run_networkx_tests(tmp_path, fallback=False)
    assert result.returncode == 0, result.stdout[-3000:]
    served, declined, untouched = _classify(calls)
    assert "failed" not in outcomes.values()
    passed = {t for t, o in outcomes.items() if o == "passed"}
    xfail_reasons = dict(re.findall(r"^XFAIL (\S+) - (.*)$", result.stdout, flags=re.M))
    assert set(outcomes) == passed | set(xfail_reasons)
    assert passed <= set(served)
    for test, reason in xfail_reasons.items():
        if test in declined:
            assert reason.endswith("not implemented by turbobc with the given arguments")
        else:  # edge betweenness (alone, or after BC calls turbobc served)
            assert re.fullmatch(r"'edge_betweenness_centrality(_subset)?' not implemented by "
                                r"turbobc", reason), reason
    assert set(declined) | set(untouched) <= set(xfail_reasons)


def test_importing_networkx_does_not_import_turbobc():
    """networkx reads backend_info at import; that entry point lives in a module that
    imports nothing, so registering turbobc costs `import networkx` no time."""
    import subprocess
    import sys

    code = ("import sys, networkx; "
            "print('turbobc' in networkx.utils.backends.backend_info, 'turbobc' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "False"]
