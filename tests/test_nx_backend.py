"""The networkx backend: dispatch, labels, declines, conversion once, and networkx's own
betweenness test modules run in networkx's backend test mode."""

from __future__ import annotations

import inspect
import json
import logging
import os
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import _turbobc_nx
import turbobc.nx._backend as backend
import turbobc.nx._convert as nx_graph
from turbobc.nx._backend import BackendInterface, TurboBCGraph, can_run, should_run

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
    assert nx.utils.backends.backends["turbobc"].load() is BackendInterface
    # one list: what networkx shows is what @implements registered, and nothing more
    assert list(info["functions"]) == list(_turbobc_nx.FUNCTIONS) == list(backend.IMPLEMENTED)
    assert set(backend.IMPLEMENTED) == {"betweenness_centrality",
                                        "betweenness_centrality_subset",
                                        "edge_betweenness_centrality",
                                        "edge_betweenness_centrality_subset"}
    for name, func in backend.IMPLEMENTED.items():
        assert getattr(BackendInterface, name) is func
        assert func.can_run is not backend._always  # every function has its own rule
        shown = info["functions"][name]
        assert shown["additional_docs"] == _turbobc_nx.FUNCTIONS[name]
        # the extra parameters shown are the function's keyword-only ones
        extra = [p.name for p in inspect.signature(func).parameters.values()
                 if p.kind is p.KEYWORD_ONLY]
        assert [p.split(" : ")[0] for p in shown["additional_parameters"]] == extra
    assert not hasattr(BackendInterface, "closeness_centrality")


def test_implements_keeps_the_list_and_the_rules_honest():
    def closeness_centrality(G):
        return {}

    with pytest.raises(ValueError, match="closeness_centrality is not listed in "
                                         "_turbobc_nx.FUNCTIONS"):
        backend.implements(closeness_centrality)
    assert "closeness_centrality" not in backend.IMPLEMENTED
    func = backend.IMPLEMENTED["betweenness_centrality"]
    with pytest.raises(TypeError, match="the rule for betweenness_centrality must take its "
                                        r"parameters \(G, k=None"):
        func._can_run(lambda G, k=None: True)
    assert func.can_run.__name__ == "_"  # the rule beside the function is still attached


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
def test_subset_with_any_targets(name, normalized):
    G = _graphs()[name]
    sources = list(G)[::3]
    for targets in (list(G) + ["not a node"],              # extra targets never matter
                    list(G)[1::2] + list(G)[1:2],          # a repeated target counts once
                    list(G)[:1]):
        ours = nx.betweenness_centrality_subset(G, sources, targets, normalized=normalized,
                                                backend="turbobc")
        _close(ours, nx.betweenness_centrality_subset(G, sources, targets,
                                                      normalized=normalized))
    empty = nx.betweenness_centrality_subset(G, [], list(G), backend="turbobc")
    assert empty == dict.fromkeys(G, 0.0)
    nowhere = nx.betweenness_centrality_subset(G, sources, ["not a node"], backend="turbobc")
    assert nowhere == dict.fromkeys(G, 0.0)


@pytest.mark.parametrize("name", [g for g in GRAPHS if "multi" not in g])
@pytest.mark.parametrize("normalized", [False, True])
def test_edge_betweenness_matches_networkx_with_labels(name, normalized):
    G = _graphs()[name]
    G.add_edges_from([(v, v) for v in list(G)[:1]])  # a self loop: networkx keys it at 0.0
    for ours, theirs in (
            (nx.edge_betweenness_centrality(G, normalized=normalized, backend="turbobc"),
             nx.edge_betweenness_centrality(G, normalized=normalized)),
            (nx.edge_betweenness_centrality(G, k=min(3, len(G)) or None, seed=random.Random(2),
                                            normalized=normalized, backend="turbobc"),
             nx.edge_betweenness_centrality(G, k=min(3, len(G)) or None, seed=random.Random(2),
                                            normalized=normalized)),
            (nx.edge_betweenness_centrality_subset(G, list(G)[::2], list(G),
                                                   normalized=normalized, backend="turbobc"),
             nx.edge_betweenness_centrality_subset(G, list(G)[::2], list(G),
                                                   normalized=normalized))):
        assert set(ours) == set(theirs)  # the keys of G.edges(), as networkx orients them
        for edge, value in theirs.items():
            assert ours[edge] == pytest.approx(value, rel=1e-12, abs=1e-14), edge
            assert type(ours[edge]) is float


def test_all_equal_weights_are_served():
    G = nx.les_miserables_graph()
    nx.set_edge_attributes(G, 2.5, "w")
    ours = nx.betweenness_centrality(G, weight="w", backend="turbobc")
    _close(ours, nx.betweenness_centrality(G, weight="w"))
    H = nx.path_graph(5)  # no attribute at all: networkx's default weight 1 everywhere
    _close(nx.betweenness_centrality(H, weight="weight", backend="turbobc"),
           nx.betweenness_centrality(H, weight="weight"))
    ours = nx.betweenness_centrality_subset(G, ["Valjean", "Javert"], list(G), weight="w",
                                            backend="turbobc")
    _close(ours, nx.betweenness_centrality_subset(G, ["Valjean", "Javert"], list(G),
                                                  weight="w"))


def test_parallel_edges_weigh_their_smallest_weight():
    """networkx's shortest paths in a multigraph use the lightest parallel edge: heavier
    parallel edges leave every path at weight 1 (swept unweighted); a lighter one makes the
    weights differ, and the call is still served, as a weighted sweep."""
    G = nx.MultiGraph(nx.cycle_graph(7))
    G.add_edges_from([(0, 1, {"weight": 5}), (3, 4, {"weight": 2.5}), (2, 2)])
    converted = backend.convert_from_nx(G, edge_attrs={"weight": 1})
    assert backend._lengths(converted, "weight") is None  # all lightest weights are 1
    ours = nx.betweenness_centrality(G, weight="weight", backend="turbobc")
    _close(ours, nx.betweenness_centrality(G, weight="weight"))
    G.add_edge(5, 6, weight=0.5)
    converted = backend.convert_from_nx(G, edge_attrs={"weight": 1})
    assert sorted(set(backend._lengths(converted, "weight").tolist())) == [0.5, 1.0]
    assert _reason("betweenness_centrality", converted, weight="weight") is True
    ours = nx.betweenness_centrality(G, weight="weight", backend="turbobc")
    _close(ours, nx.betweenness_centrality(G, weight="weight"))


def _positive_weighted_graphs():
    """Graphs whose weights differ and are valid lengths: ints with ties, floats, missing
    attributes (networkx's default 1), parallel edges of different weights, directions."""
    directed = nx.gnp_random_graph(35, 0.12, seed=8, directed=True)
    for i, (u, v) in enumerate(directed.edges):
        if i % 4:
            directed[u][v]["weight"] = float(1 + i % 3)
    floats = nx.relabel_nodes(nx.karate_club_graph(), {v: f"m{v}" for v in range(34)})
    for i, (u, v) in enumerate(floats.edges):
        floats[u][v]["weight"] = 0.25 + (i * 37 % 11) / 8
    multi = nx.MultiGraph(nx.cycle_graph(9))
    multi.add_weighted_edges_from([(0, 1, 3), (0, 1, 0.5), (4, 5, 2), (2, 6, 1), (3, 3, 4)])
    multidi = nx.MultiDiGraph(nx.gnp_random_graph(20, 0.2, seed=5, directed=True))
    multidi.add_weighted_edges_from([(u, v, 0.5 + u % 3)
                                     for u, v in list(multidi.edges())[::3]])
    disconnected = nx.disjoint_union(nx.les_miserables_graph(), nx.path_graph(4))
    return {"les-miserables": nx.les_miserables_graph(), "directed": directed,
            "floats": floats, "multigraph": multi, "multidigraph": multidi,
            "disconnected": disconnected}


@pytest.mark.parametrize("name", list(_positive_weighted_graphs()))
@pytest.mark.parametrize("normalized", [True, False])
def test_weighted_betweenness_matches_networkx(name, normalized):
    G = _positive_weighted_graphs()[name]
    for kwargs in ({}, {"endpoints": True}, {"k": 5, "seed": 3}):
        ours = nx.betweenness_centrality(G, weight="weight", normalized=normalized,
                                         backend="turbobc", **kwargs)
        _close(ours, nx.betweenness_centrality(G, weight="weight", normalized=normalized,
                                               **kwargs))
    sources, targets = list(G)[::3], list(G)[1::4]
    ours = nx.betweenness_centrality_subset(G, sources, targets, normalized=normalized,
                                            weight="weight", backend="turbobc")
    _close(ours, nx.betweenness_centrality_subset(G, sources, targets, normalized=normalized,
                                                  weight="weight"))


@pytest.mark.parametrize("name", list(_positive_weighted_graphs()))
def test_weighted_edge_betweenness_matches_networkx(name):
    G = _positive_weighted_graphs()[name]
    sources, targets = list(G)[::2], list(G)[1::3]
    for ours, theirs in (
            (nx.edge_betweenness_centrality(G, weight="weight", backend="turbobc"),
             nx.edge_betweenness_centrality(G, weight="weight")),
            (nx.edge_betweenness_centrality(G, k=4, seed=random.Random(7), weight="weight",
                                            normalized=False, backend="turbobc"),
             nx.edge_betweenness_centrality(G, k=4, seed=random.Random(7), weight="weight",
                                            normalized=False)),
            (nx.edge_betweenness_centrality_subset(G, sources, targets, weight="weight",
                                                   backend="turbobc"),
             nx.edge_betweenness_centrality_subset(G, sources, targets, weight="weight"))):
        _close(ours, theirs)  # the same keys, in the same order (G.edges(keys=True) order)


@pytest.mark.parametrize("weight", [None, "weight"])
def test_multigraph_edge_bc_is_keyed_by_parallel_edge(weight):
    """networkx keys a multigraph's edge BC by (u, v, key) and shares a pair's value among its
    parallel edges of the smallest weight (among all of them without a weight); a self loop
    and the heavier parallel edges get 0.0."""
    G = nx.MultiGraph(nx.path_graph(5))
    G.add_edges_from([(0, 1, {"weight": 3}), (2, 3), (2, 3, {"weight": 0.5}), (3, 3),
                      (1, 2, "b", {"weight": 1})])
    ours = nx.edge_betweenness_centrality(G, weight=weight, normalized=False,
                                          backend="turbobc")
    theirs = nx.edge_betweenness_centrality(G, weight=weight, normalized=False)
    _close(ours, theirs)
    assert (1, 2, "b") in ours and ours[(3, 3, 0)] == 0.0
    if weight is not None:  # (2, 3, 2) is the lightest of three: it carries the pair alone
        assert ours[(2, 3, 0)] == ours[(2, 3, 1)] == 0.0 and ours[(2, 3, 2)] == 6.0
    else:
        assert ours[(2, 3, 0)] == ours[(2, 3, 1)] == ours[(2, 3, 2)] == 2.0


def test_converted_multigraph_keeps_its_parallel_edges():
    G = nx.MultiDiGraph([(0, 1, {"w": 3}), (0, 1, {"w": 2}), (1, 2), (2, 0, {"w": 5})])
    G.add_edge(1, 2, key="x", w=9)
    converted = backend.convert_from_nx(G, edge_attrs={"w": 1})
    parallel = converted.parallel
    assert parallel.counts.tolist() == [2, 2, 1]  # entries 0->1, 1->2, 2->0
    assert parallel.keys == [0, 1, 0, "x", 0]
    assert parallel.values["w"].tolist() == [3.0, 2.0, 1.0, 9.0, 5.0]
    assert parallel.entry.tolist() == [0, 0, 1, 1, 2]
    assert converted.edge_values["w"].tolist() == [2.0, 1.0, 5.0]
    assert backend.convert_from_nx(nx.path_graph(3)).parallel is None


def _weighted_graphs():
    directed = nx.gnp_random_graph(30, 0.1, seed=4, directed=True)
    for i, (u, v) in enumerate(directed.edges):
        if i % 3:
            directed[u][v]["w"] = float(i)  # every third edge has no "w": the default
    multi = nx.MultiDiGraph([(0, 1, {"w": 3}), (0, 1, {"w": 2}), (1, 2), (2, 0, {"w": -1}),
                             (1, 1, {"w": 7})])
    return {"les-miserables": (nx.les_miserables_graph(), "weight"), "directed": (directed, "w"),
            "multidigraph": (multi, "w")}


@pytest.mark.parametrize("name", list(_weighted_graphs()))
def test_converted_weights_are_aligned_with_the_pattern(name):
    G, attr = _weighted_graphs()[name]
    converted = backend.convert_from_nx(G, edge_attrs={attr: 4})
    values, pattern = converted.edge_values[attr], converted.pattern
    assert values.dtype == np.float64 and values.shape == pattern.indices.shape

    def lightest(u, v):
        parallel = G[u][v].values() if G.is_multigraph() else [G[u][v]]
        return min(d.get(attr, 4) for d in parallel)

    rows = np.repeat(np.arange(len(G)), np.diff(pattern.indptr))
    for i, j, value in zip(rows, pattern.indices, values):
        assert value == lightest(converted.nodes[i], converted.nodes[j])
    assert backend.convert_from_nx(G).edge_values == {}  # only what networkx asks for
    assert repr(converted).endswith(f", edge attributes=['{attr}'])")
    back = backend.convert_to_nx(converted)  # the kept attribute comes back on each edge
    assert back.number_of_edges() == len(set(G.edges()))
    for u, v, value in back.edges(data=attr):
        assert value == lightest(u, v)


def test_weights_that_are_not_real_numbers_become_nan():
    G = nx.path_graph(6)  # each edge is stored twice: (u, v) and (v, u)
    for (u, v), w in zip(G.edges, ["2", None, 1j, [1, 2], 10**400]):
        G[u][v]["w"] = w
    converted = backend.convert_from_nx(G, edge_attrs={"w": 1})
    values = converted.edge_values["w"]
    assert np.isnan(values).sum() == 8 and np.isposinf(values).sum() == 2
    assert _reason("betweenness_centrality", converted, weight="w") == (
        "edge weights 'w' are not all real numbers")
    with pytest.raises(TypeError):  # networkx cannot add them either
        nx.betweenness_centrality(G, weight="w")


def _reason(name, *args, **kwargs):
    return can_run(name, args, kwargs)


def test_can_run_reasons():
    G = nx.les_miserables_graph()  # weighted: co-occurrence counts differ between edges
    assert _reason("betweenness_centrality", G) is True
    # before conversion the weights are not looked at: the call checks the converted array
    assert _reason("betweenness_centrality", G, weight="weight") is True
    weighted = backend.convert_from_nx(G, edge_attrs={"weight": 1})
    assert _reason("betweenness_centrality", weighted, weight="weight") is True
    assert _reason("betweenness_centrality_subset", weighted, ["Valjean"], list(G),
                   weight="weight") is True
    assert _reason("edge_betweenness_centrality", weighted, weight="weight") is True
    assert _reason("betweenness_centrality", G, weight=lambda u, v, d: 1) == (
        "a weight function is not supported (turbobc reads weights from an edge attribute: "
        "pass its name)")
    zero = nx.path_graph(3)
    nx.set_edge_attributes(zero, 0, "w")
    zero[1][2]["w"] = 4
    assert _reason("betweenness_centrality", backend.convert_from_nx(
        zero, edge_attrs={"w": 1}), weight="w") == (
        "edge weights 'w' include 0.0; turbobc's edge lengths must be positive (networkx has "
        "its own rules for zero and negative weights)")
    nx.set_edge_attributes(zero, -2, "w")
    assert _reason("edge_betweenness_centrality", backend.convert_from_nx(
        zero, edge_attrs={"w": 1}), weight="w").startswith("edge weights 'w' include -2.0;")
    nx.set_edge_attributes(zero, 1e308, "w")
    assert _reason("betweenness_centrality", backend.convert_from_nx(
        zero, edge_attrs={"w": 1}), weight="w") == (
        "edge weights 'w' reach 1e+308; a path of them could pass the float64 range")
    assert _reason("betweenness_centrality", G, k=0, seed=random.Random(1)) == (
        "k must be an integer in 1..n = 77 for turbobc; got 0")
    assert _reason("betweenness_centrality", G, k=78, seed=random.Random(1)).endswith("got 78")
    assert _reason("betweenness_centrality", G, k=3, seed=object()).startswith(
        "seed of type object cannot reproduce")
    P = nx.path_graph(4)
    assert _reason("betweenness_centrality_subset", P, [0], [3]) is True  # any targets
    assert _reason("betweenness_centrality_subset", P, [0], [3, 3, "not a node"]) is True
    assert _reason("betweenness_centrality_subset", P, [0, 0], list(P)) is True  # twice
    assert _reason("betweenness_centrality_subset", P, [9], list(P)) == (
        "source 9 is not a node of the graph")
    assert _reason("betweenness_centrality_subset", P, iter([0]), list(P)) == (
        "sources and targets must be collections, not one-shot iterators")
    assert _reason("betweenness_centrality_subset", P, [[0]], list(P)) == (
        "source [0] is not a node of the graph")
    assert _reason("betweenness_centrality_subset", P, [0], [[0]]).startswith(
        "sources and targets must hold hashable nodes: ")
    assert _reason("closeness_centrality", P) == (
        "turbobc does not implement closeness_centrality")
    assert _reason("edge_betweenness_centrality", P) is True
    assert _reason("edge_betweenness_centrality", nx.MultiGraph(P)) is True  # keyed edges
    assert _reason("edge_betweenness_centrality_subset", P, [0], list(P)) is True
    assert _reason("edge_betweenness_centrality_subset", P, [0], [3]) is True
    assert _reason("betweenness_centrality", P, bogus=1).startswith(
        "the arguments do not match betweenness_centrality")
    converted = backend.convert_from_nx(P)
    assert _reason("betweenness_centrality", converted, weight="weight") == (
        "edge attribute 'weight' was not kept when the graph was converted (convert with "
        "edge_attrs={'weight': 1})")
    assert _reason("betweenness_centrality", backend.convert_from_nx(
        P, edge_attrs={"weight": 1}), weight="weight") is True


def test_declines_are_logged_at_info_with_the_reason(caplog):
    caplog.set_level(logging.INFO, logger="turbobc.nx")
    P = nx.path_graph(4)
    assert _reason("betweenness_centrality", P, k=9, seed=random.Random(1)) is not True
    nx.set_edge_attributes(P, 0, "w")
    with pytest.raises(NotImplementedError):  # declined by the call, on the converted weights
        nx.betweenness_centrality(P, weight="w", backend="turbobc")
    assert _reason("betweenness_centrality", P) is True  # served calls log nothing
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("turbobc.nx", logging.INFO, "turbobc declines betweenness_centrality: k must be an "
                                     "integer in 1..n = 4 for turbobc; got 9"),
        ("turbobc.nx", logging.INFO, "turbobc declines betweenness_centrality: edge weights "
                                     "'w' include 0.0; turbobc's edge lengths must be positive "
                                     "(networkx has its own rules for zero and negative "
                                     "weights)")]


class _Sized:
    """Only a length: a rule that walked the graph's edges would fail on it."""

    def __len__(self):
        return 60


def test_rules_do_not_walk_the_edges_of_a_networkx_graph():
    assert _reason("betweenness_centrality", _Sized(), weight="weight") is True
    assert _reason("betweenness_centrality", _Sized(), k=60, weight="w") is True


def _zero_weighted():
    """les_miserables with one edge of weight 0: networkx's own rules, declined by turbobc."""
    G = nx.les_miserables_graph()
    G["Valjean"]["Javert"]["weight"] = 0
    return G


ZERO_REASON = ("edge weights 'weight' include 0.0; turbobc's edge lengths must be positive "
               "(networkx has its own rules for zero and negative weights)")


def test_explicit_backend_declines_with_not_implemented():
    G = _zero_weighted()
    # weights are declined by the call, on the converted array: the reason is the cause
    for call in (lambda: nx.betweenness_centrality(G, weight="weight", backend="turbobc"),
                 lambda: nx.betweenness_centrality_subset(G, ["Valjean"], list(G),
                                                          weight="weight", backend="turbobc"),
                 lambda: nx.edge_betweenness_centrality(G, weight="weight", backend="turbobc")):
        with pytest.raises(NotImplementedError, match="'turbobc' backend raised "
                                                      "NotImplementedError when calling") as err:
            call()
        assert str(err.value.__cause__) == ZERO_REASON
    with pytest.raises(NotImplementedError, match="not implemented by 'turbobc' backend for "
                                                  "the given arguments"):
        nx.betweenness_centrality(G, weight=lambda u, v, d: 1, backend="turbobc")
    with pytest.raises(NotImplementedError, match="not implemented by 'turbobc'"):
        nx.betweenness_centrality_subset(G, ["Valjean", "nobody"], ["Javert"],
                                         backend="turbobc")


def test_declined_calls_fall_back_to_networkx(priority):
    G = _zero_weighted()
    expected = nx.betweenness_centrality(G, weight="weight", backend="networkx")
    assert nx.betweenness_centrality(G, weight="weight") == expected
    expected = nx.betweenness_centrality_subset(G, ["Valjean", "Myriel"], ["Javert", "Cosette"],
                                                weight="weight", backend="networkx")
    assert nx.betweenness_centrality_subset(G, ["Valjean", "Myriel"], ["Javert", "Cosette"],
                                            weight="weight") == expected


@pytest.mark.parametrize("weight", [None, "weight"])
@pytest.mark.parametrize("normalized", [False, True])
def test_a_repeated_source_counts_once_per_listing(weight, normalized):
    """networkx sweeps a source as often as it is listed; so does turbobc (one sweep per
    number of listings, scaled)."""
    G = nx.les_miserables_graph()
    sources = ["Valjean", "Valjean", "Javert", "Marius", "Marius", "Marius", "Cosette"]
    targets = list(G)[::3]
    ours = nx.betweenness_centrality_subset(G, sources, targets, normalized=normalized,
                                            weight=weight, backend="turbobc")
    _close(ours, nx.betweenness_centrality_subset(G, sources, targets, normalized=normalized,
                                                  weight=weight))
    ours = nx.edge_betweenness_centrality_subset(G, sources, targets, normalized=normalized,
                                                 weight=weight, backend="turbobc")
    _close(ours, nx.edge_betweenness_centrality_subset(G, sources, targets,
                                                       normalized=normalized, weight=weight))
    assert backend._source_groups({v: i for i, v in enumerate(G)}, sources) == {
        2: [list(G).index("Valjean")], 1: [list(G).index("Javert"), list(G).index("Cosette")],
        3: [list(G).index("Marius")]}


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


def _count_conversions(monkeypatch) -> list:
    """A list that gets the kept edge attributes of each graph converted from now on."""
    made = []

    class Counting(TurboBCGraph):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(list(self.edge_values))

    monkeypatch.setattr(nx_graph, "TurboBCGraph", Counting)
    return made


def test_graph_is_converted_once(monkeypatch):
    made = _count_conversions(monkeypatch)
    G = nx.karate_club_graph()
    first = nx.betweenness_centrality(G, backend="turbobc")
    again = nx.betweenness_centrality(G, k=5, seed=1, backend="turbobc")
    subset = nx.betweenness_centrality_subset(G, [0, 1], list(G), backend="turbobc")
    assert len(made) == 1
    assert first.keys() == again.keys() == subset.keys()
    G.add_edge(0, 33)  # mutation clears networkx's cache: converted again
    nx.betweenness_centrality(G, backend="turbobc")
    assert len(made) == 2


def test_weights_are_read_once(monkeypatch, priority):
    """A weighted call converts the graph with its weights once; later calls, served or
    declined, decide from the cached array (no walk over the edges)."""
    made = _count_conversions(monkeypatch)
    G = nx.les_miserables_graph()  # weights differ: a weighted sweep each call
    expected = nx.betweenness_centrality(G, weight="weight", backend="networkx")
    for _ in range(3):
        _close(nx.betweenness_centrality(G, weight="weight"), expected)
    assert made == [["weight"]]
    zero = _zero_weighted()  # declined: networkx runs every call, converted once
    expected = nx.betweenness_centrality(zero, weight="weight", backend="networkx")
    for _ in range(3):
        assert nx.betweenness_centrality(zero, weight="weight") == expected
    assert made == [["weight"]] * 2
    equal = nx.les_miserables_graph()
    nx.set_edge_attributes(equal, 3, "weight")
    expected = nx.betweenness_centrality(equal, weight="weight", backend="networkx")
    for _ in range(3):  # served unweighted, and the unweighted call reuses the conversion
        _close(nx.betweenness_centrality(equal, weight="weight"), expected)
    _close(nx.betweenness_centrality(equal), expected)
    assert made == [["weight"]] * 3


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
    """pytest plugin: records, per test, which calls turbobc served and which it declined
    (by its rule, or by the call itself on the converted weights)."""
    import json, os
    import turbobc.nx._backend as backend

    calls, current = {}, [None]
    can_run = backend.BackendInterface.can_run

    def record(name, answer):
        calls.setdefault(current[0], []).append([name, answer])

    def spy(name, args, kwargs):
        answer = can_run(name, args, kwargs)
        if answer is not True:
            record(name, "declined: " + str(answer))
        return answer

    def watch(name, func):
        def call(*args, **kwargs):
            answer = "served"
            try:
                return func(*args, **kwargs)
            except NotImplementedError as exc:
                answer = "declined: " + str(exc)
                raise
            finally:
                record(name, answer)
        return call

    backend.BackendInterface.can_run = staticmethod(spy)
    for name, func in backend.IMPLEMENTED.items():
        setattr(backend.BackendInterface, name, staticmethod(watch(name, func)))

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


@pytest.mark.slow
def test_networkx_betweenness_tests_with_fallback(tmp_path):
    """networkx's own betweenness tests, every call dispatched to turbobc, declined ones
    falling back to networkx: all pass; the served/declined split is pinned."""
    result, calls, outcomes = _run_networkx_tests(tmp_path, fallback=True)
    assert result.returncode == 0, result.stdout[-3000:]
    assert set(outcomes.values()) == {"passed"}
    served, declined, untouched = _classify(calls)
    # Declined: only networkx's own k errors; weighted, multigraph and subset tests are served
    assert {t.split("::", 1)[1]: r for t, r in declined.items()} == {
        "TestBetweennessCentrality::test_k_out_of_bounds_raises": [
            "k must be an integer in 1..n = 4 for turbobc; got -1",
            "k must be an integer in 1..n = 4 for turbobc; got 0",
            "k must be an integer in 1..n = 4 for turbobc; got 5"]}
    # the tests turbobc declined before it took weights: weights that differ, multigraph edge
    # BC (keyed by parallel edge)
    once_declined = {f"TestWeightedBetweennessCentrality::{name}" for name in (
        "test_G", "test_G2", "test_G3", "test_G4", "test_les_miserables_graph")}
    once_declined |= {f"TestWeightedEdgeBetweennessCentrality::{name}" for name in (
        "test_weighted_graph", "test_normalized_weighted_graph", "test_weighted_multigraph",
        "test_normalized_weighted_multigraph")}
    once_declined |= {f"{cls}::test_weighted_graph" for cls in (
        "TestSubsetBetweennessCentrality", "TestEdgeSubsetBetweennessCentrality")}
    served_names = {t.split("::", 1)[1] for t in served}
    assert once_declined <= served_names, once_declined - served_names
    assert not untouched  # every betweenness function of networkx is registered
    assert len(served) + len(declined) == len(outcomes)
    counts = (len(served), len(declined))
    print(f"networkx {nx.__version__} betweenness tests: {counts[0]} served by turbobc, "
          f"{counts[1]} declined (fell back), 0 failed")
    if nx.__version__.startswith("3.6."):
        assert counts == (97, 1)
    else:  # a newer networkx may add tests; none of today's may stop being served
        assert counts[0] >= 97


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
        if test in declined:  # by a rule (networkx's words) or by the call (the reason)
            assert (reason.endswith("not implemented by turbobc with the given arguments")
                    or reason in declined[test]), (test, reason)
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
