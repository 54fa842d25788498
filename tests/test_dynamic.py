"""turbobc.DynamicBC: BC kept current under edge insertions and deletions (issue 50).

After every batch the values equal a fresh ``bc()`` of the changed graph and networkx's, on
every engine; the updates sweep only what the batch affects; a bad batch changes nothing;
approximate mode keeps its guarantee. ``Tuning.dynamic_recompute_share = inf`` keeps the
small graphs here on the update path (their batches touch too many sources to be worth it
otherwise); the recomputing path has its own tests.
"""

from __future__ import annotations

import doctest
import math

import networkx as nx
import numpy as np
import pytest

import turbobc
import turbobc._dynamic
from turbobc._dynamic_affected import affected_sources
from turbobc._dynamic_changes import BadChange, changed_graph, check_batch

ENGINES = ["graphblas", "cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
NEVER = math.inf


def _matrix(G, weight=None):
    return nx.to_scipy_sparse_array(G, nodelist=range(len(G)), weight=weight, format="csr")


def _expected(G, engine, *, normalized=True, endpoints=False, weight=None):
    """A fresh bc() of G and networkx's values, in vertex order."""
    fresh = turbobc.bc(_matrix(G, weight), engine=engine, normalized=normalized,
                       endpoints=endpoints, directed=G.is_directed(),
                       weight=True if weight else None)
    theirs = nx.betweenness_centrality(G, normalized=normalized, endpoints=endpoints,
                                       weight=weight)
    return fresh, np.array([theirs[v] for v in range(len(G))])


def _assert_exact(got, G, engine, **options):
    fresh, theirs = _expected(G, engine, **options)
    for want in (fresh, theirs):
        np.testing.assert_allclose(got, want, rtol=1e-12,
                                   atol=1e-12 * max(np.abs(want).max(initial=0.0), 1e-300))


def _random_batch(G, rng, inserts, deletes, length=None):
    """``inserts`` absent edges and ``deletes`` present ones of G, drawn by ``rng``."""
    edges = list(G.edges())
    absent = [(u, v) for u in G for v in G if u != v and not G.has_edge(u, v)
              and (G.is_directed() or u < v)]
    insert = [absent[i] for i in rng.choice(len(absent), min(inserts, len(absent)),
                                            replace=False)]
    delete = [edges[i] for i in rng.choice(len(edges), min(deletes, len(edges)),
                                           replace=False)]
    lengths = None if length is None else [length(rng) for _ in insert]
    return insert, delete, lengths


def _apply(G, insert, delete, lengths=None):
    G.remove_edges_from(delete)
    for k, (u, v) in enumerate(insert):
        G.add_edge(u, v, **({} if lengths is None else {"weight": lengths[k]}))


def _follow(G, engine, batches, *, weight=None, **options):
    """DynamicBC of G through ``batches`` (insert, delete, lengths), exact after each."""
    G = G.copy()
    with turbobc.tuning(dynamic_recompute_share=NEVER):
        dyn = turbobc.DynamicBC(_matrix(G, weight), engine=engine, directed=G.is_directed(),
                                weight=True if weight else None, **options)
        _assert_exact(dyn.values, G, engine, weight=weight, **options)
        for insert, delete, lengths in batches:
            values = dyn.update(insert=insert, delete=delete, lengths=lengths)
            _apply(G, insert, delete, lengths)
            _assert_exact(values, G, engine, weight=weight, **options)
            assert not dyn.facts["recomputed"], dyn.facts["reason"]
    return dyn, G


def _random_batches(G, seed, count, inserts=2, deletes=2, length=None):
    rng, H, batches = np.random.default_rng(seed), G.copy(), []
    for _ in range(count):
        batch = _random_batch(H, rng, inserts, deletes, length)
        _apply(H, *batch)
        batches.append(batch)
    return batches


# ------------------------------------------------------------------ exact, on the test grid

@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_interacting_changes_batch_after_batch(engine, directed):
    """Batches of two insertions and two deletions each, on one graph in a row."""
    G = nx.gnp_random_graph(40, 0.08, seed=3, directed=directed)
    dyn, _ = _follow(G, engine, _random_batches(G, 1, 8))
    assert dyn.facts["sources_swept"] == 2 * dyn.facts["affected_sources"] > 0


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("options", [{"endpoints": True}, {"normalized": False},
                                     {"endpoints": True, "normalized": False}],
                         ids=["endpoints", "raw", "raw-endpoints"])
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_endpoints_and_raw_values(engine, options, directed):
    G = nx.gnp_random_graph(30, 0.1, seed=4, directed=directed)
    _follow(G, engine, _random_batches(G, 2, 4), **options)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["int", "float"])
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_weighted(engine, kind, directed):
    """Integer lengths (exact sums: the cover of pairs) and float ones (every affected
    source), an edge deleted and inserted in one batch with a new length among them."""
    rng = np.random.default_rng(5)
    draw = ((lambda r: int(r.integers(1, 4))) if kind == "int"
            else (lambda r: float(r.uniform(0.1, 2.0))))
    G = nx.gnp_random_graph(30, 0.12, seed=6, directed=directed)
    for u, v in G.edges():
        G.edges[u, v]["weight"] = draw(rng)
    batches = _random_batches(G, 7, 4, length=draw)
    H = G.copy()
    for batch in batches:
        _apply(H, *batch)
    u, v = next(iter(H.edges()))
    batches.append(([(u, v)], [(u, v)], [H.edges[u, v]["weight"] + 1]))  # a new length
    _follow(G, engine, batches, weight="weight")


@pytest.mark.parametrize("engine", ENGINES)
def test_interacting_insertions_need_the_distances_after_the_batch(engine):
    """docs/dynamic.md's example: two inserted edges on one new shortest path through a
    vertex nobody reached; from distances before the batch the cover would be {b} alone."""
    G = nx.path_graph(12)       # s = 0 .. a = 4, the long way 4 .. 8 = c, c .. t = 11
    G.add_node(12)              # b, alone
    dyn, _ = _follow(G, engine, [([(4, 12), (12, 8)], [], None)])
    assert dyn.facts["affected_sources"] > 1


@pytest.mark.parametrize("engine", ENGINES)
def test_disconnecting_deletions_isolated_vertices_and_merging_insertions(engine):
    """A barbell's bridge deleted (two components), an endpoint isolated, the isolated
    vertices joined, then the components merged again elsewhere."""
    G = nx.barbell_graph(5, 2)           # 0..4 and 7..11 cliques, path 4 - 5 - 6 - 7
    G.add_nodes_from([12, 13])           # isolated
    batches = [([], [(5, 6)], None),     # disconnects the two bells
               ([], [(4, 5)], None),     # vertex 5 isolated
               ([(12, 13)], [], None),   # two isolated vertices joined
               ([(13, 0), (12, 11)], [], None),   # the components merged through 12 - 13
               ([(5, 6)], [(12, 13)], None)]
    _follow(G, engine, batches)
    _follow(G, engine, batches, endpoints=True)
    D = G.to_directed()
    _follow(D, engine, [([(12, 13), (13, 12)], [(5, 6), (6, 5)], None),
                        ([(6, 5)], [(12, 13)], None)])


def test_many_batches_in_a_row(cpu_engine):
    """Forty batches on one object: the rounding of the updates stays within 1e-12."""
    G = nx.connected_watts_strogatz_graph(40, 4, 0.2, seed=8)
    _follow(G, cpu_engine, _random_batches(G, 9, 40, inserts=1, deletes=1))


def test_a_networkx_graph_and_its_labels(cpu_engine):
    """A networkx graph is taken as bc() takes it; updates name vertices by their position
    in list(G)."""
    G = nx.florentine_families_graph()
    names = list(G)
    with turbobc.tuning(dynamic_recompute_share=NEVER):
        dyn = turbobc.DynamicBC(G, engine=cpu_engine)
        dyn.update(delete=[(names.index("Medici"), names.index("Barbadori"))])
    G.remove_edge("Medici", "Barbadori")
    theirs = nx.betweenness_centrality(G)
    np.testing.assert_allclose(dyn.values, [theirs[v] for v in names], rtol=1e-12,
                               atol=1e-14)


# ------------------------------------------------------------------ work in proportion

def test_a_local_insertion_sweeps_the_cover_of_its_pairs():
    """Path 0 - ... - 9 and the chord 0 - 2: only pairs with 0 at one end change, so only
    source 0 is swept again (with every other target counted twice)."""
    G = nx.path_graph(10)
    dyn = turbobc.DynamicBC(_matrix(G), engine="graphblas")
    graph = dyn._sums.call.graph
    batch = check_batch(graph.pattern, False, False, [(0, 2)], None, None)
    touched = affected_sources(graph, changed_graph(graph, batch), batch)
    assert touched.sources.tolist() == [0] and touched.searches == 2
    assert touched.target_weight.tolist() == [1.0] + [2.0] * 9
    every = affected_sources(graph, changed_graph(graph, batch), batch, every_source=True)
    assert every.sources.tolist() == [0, 2, 3, 4, 5, 6, 7, 8, 9]  # their DAGs all change


def test_sources_the_batch_does_not_touch_are_not_swept():
    """An edge between two vertices at the same distance from every other source changes
    nothing for those: here a triangle's third side, seen from the far end of a path."""
    G = nx.path_graph(6)
    G.add_edge(0, 6)                       # 1 and 6 both neighbours of 0
    with turbobc.tuning(dynamic_recompute_share=NEVER):
        dyn = turbobc.DynamicBC(_matrix(G), engine="graphblas")
        dyn.update(insert=[(1, 6)])
    G.add_edge(1, 6)
    _assert_exact(dyn.values, G, "graphblas")
    assert dyn.facts["affected_sources"] == 1  # 6 alone (or 1 alone): d(s, 1) = d(s, 6) else


def test_an_edge_on_no_shortest_path_sweeps_nothing():
    W = nx.Graph([(0, 1, {"weight": 1}), (1, 2, {"weight": 1}), (0, 2, {"weight": 5})])
    dyn = turbobc.DynamicBC(_matrix(W, "weight"), weight=True, engine="graphblas",
                            normalized=False)
    before = dyn.values
    assert dyn.update(delete=[(0, 2)]).tolist() == before.tolist() == [0.0, 1.0, 0.0]
    assert dyn.facts["affected_sources"] == dyn.facts["sources_swept"] == 0
    assert dyn.facts["reason"] == "no source's shortest paths change"


def test_a_batch_that_touches_most_sources_is_recomputed_and_says_so(cpu_engine):
    G = nx.gnp_random_graph(40, 0.1, seed=10)
    dyn = turbobc.DynamicBC(_matrix(G), engine=cpu_engine)
    insert, delete, _ = _random_batch(G, np.random.default_rng(11), 6, 6)
    values = dyn.update(insert=insert, delete=delete)
    _apply(G, insert, delete)
    _assert_exact(values, G, cpu_engine)
    assert dyn.facts["recomputed"]
    assert dyn.facts["reason"].startswith("recomputed: the batch touches ")
    with turbobc.tuning(dynamic_recompute_share=0.5):
        insert, delete, _ = _random_batch(G, np.random.default_rng(12), 20, 20)
        dyn.update(insert=insert, delete=delete)
    assert dyn.facts["reason"].startswith("recomputed: 40 changed edges, two distance "
                                          "searches each, cost about as much as a fresh bc()")


def test_the_rounding_of_many_updates_is_refreshed(monkeypatch):
    """When the rounding the updates may have gathered could pass 1e-13 of a value, the sums
    are recomputed (here with a rounding unit made large to reach that at once)."""
    import turbobc._dynamic_exact as exact

    G = nx.karate_club_graph()
    monkeypatch.setattr(exact, "DRIFT", (1e-10, 1e-13, 1e-14))
    with turbobc.tuning(dynamic_recompute_share=NEVER):
        dyn = turbobc.DynamicBC(_matrix(G), engine="graphblas")
        values = dyn.update(insert=[(0, 9)])
    G.add_edge(0, 9)
    _assert_exact(values, G, "graphblas")
    assert dyn.facts["recomputed"]
    assert dyn.facts["reason"] == ("refreshed: the rounding of the updates so far could pass "
                                   "1e-13 of a value; recomputed")


def test_an_empty_batch_changes_nothing():
    dyn = turbobc.DynamicBC(_matrix(nx.path_graph(4)), engine="graphblas")
    assert dyn.update().tolist() == dyn.values.tolist()
    assert dyn.facts["reason"] == "an empty batch: nothing changed"
    assert dyn.facts["sources_swept"] == 0


# ------------------------------------------------------------------ the surface

def test_the_graph_facts_and_repr_follow_the_updates():
    W = nx.Graph([(0, 1, {"weight": 2.0}), (1, 2, {"weight": 3.0})])
    dyn = turbobc.DynamicBC(_matrix(W, "weight"), weight=True, engine="graphblas")
    dyn.update(insert=[(0, 2)], delete=[(1, 2)], lengths=[4.5])
    assert dyn.graph.toarray().tolist() == [[0, 2, 4.5], [2, 0, 0], [4.5, 0, 0]]
    graph = dyn.graph
    graph.data[:] = 7.0                        # a copy: the state does not move
    assert dyn.graph.toarray()[0, 1] == 2.0
    assert (dyn.facts["inserted"], dyn.facts["deleted"]) == (1, 1)
    assert dyn.facts["seconds"] > 0 and dyn.facts["engine"] == "graphblas"
    assert repr(dyn) == "DynamicBC(n=3, undirected, 4 stored edges, engine='graphblas')"
    assert dyn.n == 3 and not dyn.directed


def test_a_directed_graph_stays_directed_when_its_pattern_turns_symmetric():
    D = nx.DiGraph([(0, 1), (1, 2)])
    dyn = turbobc.DynamicBC(_matrix(D), engine="graphblas", normalized=False)
    dyn.update(insert=[(1, 0), (2, 1)])
    assert dyn.directed and dyn.values.tolist() == [0.0, 2.0, 0.0]  # ordered pairs


def test_docstring_example():
    result = doctest.testmod(turbobc._dynamic, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_the_signature_follows_bc():
    import inspect

    ours = inspect.signature(turbobc.DynamicBC).parameters
    theirs = inspect.signature(turbobc.bc).parameters
    for name in ("directed", "normalized", "endpoints", "weight", "epsilon", "seed", "engine"):
        assert ours[name].default == theirs[name].default, name
    assert ours["delta"].default == 0.1


# ------------------------------------------------------------------ bad updates

BAD_UPDATES = [
    (dict(insert=[(0, 1)]), BadChange, r"^insert: edge \(0, 1\) already exists$"),
    (dict(delete=[(0, 2)]), BadChange, r"^delete: edge \(0, 2\) does not exist$"),
    (dict(insert=[(0, 9)]), BadChange, r"^insert: vertex 9 of change 0, \(0, 9\), is not a "
                                       r"vertex of this graph \(indices 0 to 4\)$"),
    (dict(delete=[(-1, 2)]), BadChange, r"^delete: vertex -1 of change 0"),
    (dict(insert=[(3, 3)]), BadChange, r"^insert: \(3, 3\) is a self loop, which no shortest "
                                       r"path takes \(BC ignores self loops\)$"),
    (dict(insert=[(0, 2), (2, 0)]), BadChange,
     r"^insert: edge \(0, 2\) appears twice in the batch \(as \(2, 0\)\)$"),
    (dict(delete=[(0, 1), (0, 1)]), BadChange,
     r"^delete: edge \(0, 1\) appears twice in the batch$"),
    (dict(insert=[(0, 2)], lengths=[1.0]), BadChange,
     r"^lengths= gives the lengths of the edges inserted into a weighted graph"),
    (dict(insert=(0, 2)), TypeError, r"^insert: change 0 must be a pair \(u, v\) of integer "
                                     r"vertex indices; got 0$"),
    (dict(insert=[(0, 2.5)]), TypeError, r"^insert: change 0 must be a pair"),
    (dict(delete=5), TypeError, r"^delete must be a sequence of \(u, v\) pairs of vertex "
                                r"indices; got int 5$"),
]


@pytest.mark.parametrize("change, error, message", BAD_UPDATES)
def test_a_bad_update_is_refused_and_changes_nothing(change, error, message):
    dyn = turbobc.DynamicBC(_matrix(nx.path_graph(5)), engine="graphblas")
    dyn.update(insert=[(0, 4)])
    state = (dyn.values, dyn.facts, dyn.graph.toarray())
    with pytest.raises(error, match=message) as caught:
        dyn.update(**change)
    assert isinstance(caught.value, (ValueError, TypeError))  # builtin classes for mistakes
    np.testing.assert_array_equal(dyn.values, state[0])
    assert dyn.facts == state[1]
    np.testing.assert_array_equal(dyn.graph.toarray(), state[2])


BAD_LENGTHS = [
    (dict(insert=[(0, 2)]), BadChange, r"^lengths: the graph is weighted; give one length per "
                                       r"inserted edge"),
    (dict(insert=[(0, 2)], lengths=[1.0, 2.0]), BadChange,
     r"^lengths: 2 lengths for 1 inserted edges; give one per inserted edge"),
    (dict(insert=[(0, 2)], lengths=[-1.0]), BadChange,
     r"^lengths: edge \(0, 2\) has length -1.0; lengths must be positive and finite$"),
    (dict(insert=[(0, 2)], lengths=[math.nan]), BadChange, r"has length nan"),
    (dict(insert=[(0, 2)], lengths=["3"]), TypeError,
     r"^lengths: the length of \(0, 2\) must be a number; got str '3'$"),
    (dict(insert=[(0, 2)], lengths=3.0), TypeError,
     r"^lengths must be a sequence of numbers; got float 3.0$"),
]


@pytest.mark.parametrize("change, error, message", BAD_LENGTHS)
def test_bad_lengths_are_refused(change, error, message):
    W = nx.path_graph(4)
    nx.set_edge_attributes(W, 2.0, "weight")
    dyn = turbobc.DynamicBC(_matrix(W, "weight"), weight=True, engine="graphblas")
    values = dyn.values
    with pytest.raises(error, match=message):
        dyn.update(**change)
    np.testing.assert_array_equal(dyn.values, values)


def test_bad_constructor_arguments():
    A = _matrix(nx.path_graph(4))
    with pytest.raises(ValueError, match=r"^delta= states the confidence of the epsilon "
                                         r"guarantee; give epsilon too"):
        turbobc.DynamicBC(A, delta=0.2)
    with pytest.raises(ValueError, match="^epsilon bounds the error of normalized values"):
        turbobc.DynamicBC(A, epsilon=0.1, normalized=False)
    with pytest.raises(ValueError, match="^engine must be one of"):
        turbobc.DynamicBC(A, engine="tpu")


def test_a_bad_change_names_its_list_and_place():
    dyn = turbobc.DynamicBC(_matrix(nx.path_graph(5)), engine="graphblas")
    with pytest.raises(BadChange) as caught:
        dyn.update(insert=[(0, 2), (0, 3), (1, 2)])
    assert (caught.value.kind, caught.value.position) == ("insert", 2)


# ------------------------------------------------------------------ approximate mode

def _sample_values(dyn, G, engine):
    """What a fresh sampling with the same k sources gives on G."""
    k = dyn.facts["samples"]
    sources = dyn._sums.order[:k].tolist()
    return turbobc.bc(_matrix(G), sources=sources, engine=engine) * len(G) / k


@pytest.mark.parametrize("engine", ENGINES)
def test_approximate_mode_keeps_its_sample_and_its_bound(engine, sampling_only):
    """Three components: changes inside the first touch about a third of the samples."""
    G = nx.disjoint_union_all([nx.barabasi_albert_graph(200, 2, seed=s) for s in (13, 14, 15)])
    dyn = turbobc.DynamicBC(_matrix(G), epsilon=0.1, seed=1, engine=engine)
    assert dyn.facts["samples"] < len(G) and dyn.facts["bound"] <= 0.1
    rng = np.random.default_rng(14)
    # random changes (most sampled sources touched), then changes inside the first component
    first = G.subgraph(range(200))
    batches = [_random_batch(G, rng, 2, 2)[:2]] + [_random_batch(first, rng, 1, 1)[:2]
                                                    for _ in range(2)]
    for insert, delete in batches:
        before = dyn.facts["samples"]
        values = dyn.update(insert=insert, delete=delete)
        _apply(G, insert, delete)
        np.testing.assert_allclose(values, _sample_values(dyn, G, engine), rtol=1e-11,
                                   atol=1e-14)
        exact = turbobc.bc(_matrix(G), engine=engine)
        assert np.abs(values - exact).max() <= dyn.facts["bound"] <= 0.1
        swept, resampled = dyn.facts["sources_swept"] - dyn.facts["drawn"], dyn.facts["resampled"]
        assert 0 < resampled <= before
        # the touched samples before and after, or all of them once where that costs less
        assert swept == (2 * resampled if 2 * resampled < before else before)
    assert swept == 2 * resampled  # a change inside one component touches fewer


def test_approximate_mode_draws_more_samples_when_the_bound_needs_them(monkeypatch,
                                                                      sampling_only):
    """A radius over ε after a batch: the next checkpoints' sources are swept on the new
    graph, as a fresh sampling with the same seed would have."""
    import turbobc._dynamic_sampled as sampled

    G = nx.barabasi_albert_graph(600, 2, seed=13)
    dyn = turbobc.DynamicBC(_matrix(G), epsilon=0.1, seed=1, engine="cpu")
    before = dyn.facts["samples"]
    real, calls = sampled.largest_radius, []

    def once_too_wide(*args):
        calls.append(1)
        return 1.0 if len(calls) == 1 else real(*args)

    monkeypatch.setattr(sampled, "largest_radius", once_too_wide)
    values = dyn.update(insert=[(0, 599)])
    G.add_edge(0, 599)
    assert dyn.facts["samples"] > before and dyn.facts["drawn"] == dyn.facts["samples"] - before
    assert dyn.facts["reason"].endswith("more sampled on the new graph for the bound")
    np.testing.assert_allclose(values, _sample_values(dyn, G, "cpu"), rtol=1e-11, atol=1e-14)


def test_approximate_mode_on_small_graphs_is_exact(cpu_engine):
    """Where Hoeffding's size passes n every source is sampled: the values stay exact."""
    G = nx.gnp_random_graph(30, 0.1, seed=15)
    dyn = turbobc.DynamicBC(_matrix(G), epsilon=0.1, seed=2, engine=cpu_engine,
                            endpoints=True)
    assert dyn.facts["stopped_by"] == "exact"
    for insert, delete, _ in _random_batches(G, 16, 3):
        values = dyn.update(insert=insert, delete=delete)
        _apply(G, insert, delete)
        _assert_exact(values, G, cpu_engine, endpoints=True)
        assert dyn.facts["stopped_by"] == "exact" and dyn.facts["bound"] == 0.0
    tiny = turbobc.DynamicBC(_matrix(nx.path_graph(2)), epsilon=0.1)
    assert tiny.update(delete=[(0, 1)]).tolist() == [0.0, 0.0]


def test_approximate_mode_sweeps_every_source_when_the_exact_rule_prefers_it(monkeypatch):
    """600 vertices at ε = 0.08 (Hoeffding's size 790), every n a few waves (EXACT_WAVES
    raised, as on a host of many threads): the exact rule (turbobc/_exact_rule.py) chooses every source before sampling,
    the run keeps them as its sample, and the updates stay exact."""
    monkeypatch.setattr("turbobc._exact_rule.EXACT_WAVES", 10**6)
    G = nx.disjoint_union_all([nx.barabasi_albert_graph(200, 2, seed=s) for s in (13, 14, 15)])
    dyn = turbobc.DynamicBC(_matrix(G), epsilon=0.08, seed=1, engine="cpu")
    assert dyn.facts["samples"] == len(G) and dyn.facts["stopped_by"] == "exact"
    _assert_exact(dyn.values, G, "cpu")
    rng = np.random.default_rng(14)
    for _ in range(2):
        insert, delete = _random_batch(G, rng, 1, 1)[:2]
        values = dyn.update(insert=insert, delete=delete)
        _apply(G, insert, delete)
        _assert_exact(values, G, "cpu")
        assert dyn.facts["stopped_by"] == "exact" and dyn.facts["bound"] == 0.0


def test_the_page_example_runs(capsys):
    """docs/dynamic.md's example runs and checks itself against networkx."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "dynamic.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    exec(compile(block, "docs/dynamic.md", "exec"), {})
    assert capsys.readouterr().out.startswith(("swept ", "recomputed: "))


def test_the_benchmark_runs_and_writes_its_record(tmp_path):
    """bench/dynamic.py on karate, one update of each kind: the record has every figure,
    each update checked against a fresh bc() beside it; NetworKit's columns where it is
    installed (the bench extra), none without it (--no-networkit, as the test extra has it
    not)."""
    import importlib.util
    import json

    import numba

    from bench import dynamic

    with_networkit = importlib.util.find_spec("networkit") is not None
    threads = str(numba.get_num_threads())  # as they are: the script sets numba's
    dynamic.main(["--graphs", "karate", "--engine", "graphblas", "--updates", "1",
                  "--recomputes", "1", "--threads", threads, "--out", str(tmp_path)]
                 + ([] if with_networkit else ["--no-networkit"]))
    [path] = tmp_path.glob("dynamic-*.json")
    (row,) = json.loads(path.read_text())["rows"]
    assert row["graph"] == "karate" and row["recompute_seconds"] > 0
    for kind in dynamic.KINDS:
        assert row[kind]["max_rel_diff"] < 1e-12 and len(row[kind]["seconds_all"]) == 1
    if with_networkit:
        assert row["local_insertion"]["networkit_seconds"] > 0
        assert row["deletion"]["networkit"] == "DynBetweenness takes edge insertions only"
    else:
        assert all("networkit_seconds" not in row[kind] for kind in dynamic.KINDS)
