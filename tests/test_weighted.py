"""Weighted BC (``weight=``): turbobc.bc and turbobc.edge_bc equal networkx's Dijkstra-based
betweenness (networkx >= 3.6) with the same edge lengths, on both CPU engines: small exact tables,
the graph catalogue with integer and float lengths, thousands of generated graphs, networkx
inputs, errors, tree folding, per-level scaling and the wide sweep past float64's range."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
import turbobc.engines.cpu.engine as cpu_engine_module
import turbobc.engines.graphblas as graphblas_engine
import turbobc.engines.graphblas.sweep as graphblas_sweep
from graph_cases import GRAPH_CASES, with_lengths
from oracles import as_array, exact_brandes, networkx_bc
from test_edge_bc import _check as _edge_check
from turbobc._api import run_bc
from turbobc._graph import Graph
from turbobc._run import run_schedule
from turbobc.engines import engine_named, resolve_engine
from turbobc._validation import _weighted_graph
from turbobc.engines.protocol import Problem
from turbobc.engines.wide import accumulate_wide

CPU = {"engine": "graphblas"}
"""The graphblas engine, where the engine does not matter (validation) or only it has what
is tested (its memory model, its walks); elsewhere both CPU engines (``cpu_engine``)."""
KINDS = ("int3", "int100", "float")
"""Lengths of the generated cases: integers 1..3 (many ties), 1..100, uniform floats."""

KINDS_FIRST_CHECK = [kind if kind != "int100" else pytest.param(kind, marks=pytest.mark.slow)
                     for kind in KINDS]
"""KINDS for the whole catalogue: 1..100, between the other two, with the slow tests."""


def _lengths_matrix(n, triples, *, undirected=True):
    rows, cols, values = zip(*triples)
    if undirected:
        rows, cols, values = rows + cols, cols + rows, values + values
    return sp.csr_array((np.array(values, dtype=float), (rows, cols)), shape=(n, n))


# ---------------------------------------------------------------------------------------------
# Small exact tables
# ---------------------------------------------------------------------------------------------

EXACT = {
    # a path whose lengths differ: paths are unique, as unweighted (vertex 1: pairs (0, 2),
    # (0, 3); vertex 2: (0, 3), (1, 3))
    "path": (4, [(0, 1, 1.0), (1, 2, 2.0), (2, 3, 3.0)], [0, 2, 2, 0]),
    # a star: every pair of leaves crosses the centre, whatever the lengths (C(4, 2) pairs)
    "star": (5, [(0, 1, 1.0), (0, 2, 5.0), (0, 3, 0.5), (0, 4, 7.0)], [6, 0, 0, 0, 0]),
    # a 4-cycle with one long edge 3 - 0 (length 4): 0 and 3 talk through 1 and 2 (length 3)
    "cycle_long_edge": (4, [(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (3, 0, 4.0)],
                        [0.0, 2.0, 2.0, 0.0]),
    # a diamond 0 - {1, 2} - 3 with tied lengths 1 + 2 == 2 + 1: the pair (0, 3) splits
    # evenly between 1 and 2; the pair (1, 2) ties too: 1 - 0 - 2 (3) and 1 - 3 - 2 (3)
    "diamond_tie": (4, [(0, 1, 1.0), (1, 3, 2.0), (0, 2, 2.0), (2, 3, 1.0)],
                    [0.5, 0.5, 0.5, 0.5]),
    # the same diamond without the tie (2 - 3 of length 1.5): (0, 3) goes through 1 alone,
    # (1, 2) through 0 alone (3 < 3.5)
    "diamond_no_tie": (4, [(0, 1, 1.0), (1, 3, 2.0), (0, 2, 2.0), (2, 3, 1.5)],
                       [1.0, 1.0, 0.0, 0.0]),
    # float64 sums decide ties: 0.1 + 0.2 != 0.3, so the edge 0 - 3 (0.3) is the only shortest
    # 0-3 path, however close the two detours (0.30000000000000004); but 1 - 0 - 2 and
    # 1 - 3 - 2 (0.1 + 0.2 and 0.2 + 0.1) are the same float and tie
    "float_sums": (4, [(0, 1, 0.1), (1, 3, 0.2), (0, 2, 0.2), (2, 3, 0.1), (0, 3, 0.3)],
                   [0.5, 0.0, 0.0, 0.5]),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_tables(name, cpu_engine):
    n, triples, expected = EXACT[name]
    A = _lengths_matrix(n, triples)
    got = turbobc.bc(A, weight=True, normalized=False, engine=cpu_engine)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(triples)
    want = as_array(nx.betweenness_centrality(G, weight="weight", normalized=False), G)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    _edge_check(turbobc.edge_bc(A, weight=True, normalized=False, engine=cpu_engine), G,
                nx.edge_betweenness_centrality(G, weight="weight", normalized=False))


def test_lengths_change_the_answer(cpu_engine):
    """The same pattern without weight: the long edge counts as one hop."""
    n, triples, _ = EXACT["cycle_long_edge"]
    A = _lengths_matrix(n, triples)
    assert turbobc.bc(A, normalized=False, engine=cpu_engine).tolist() == [0.5, 0.5, 0.5, 0.5]


# ---------------------------------------------------------------------------------------------
# The graph catalogue with lengths
# ---------------------------------------------------------------------------------------------

CASES = sorted(GRAPH_CASES)


@pytest.mark.parametrize("kind", KINDS_FIRST_CHECK)
@pytest.mark.parametrize("name", CASES)
def test_vertex_bc_equals_networkx(name, kind, cpu_engine):
    G = with_lengths(GRAPH_CASES[name](), kind, seed=len(name))
    for normalized in (True, False):
        for endpoints in (False, True):
            want = networkx_bc(G, selection="all", normalized=normalized, endpoints=endpoints,
                               weight="weight")
            got = turbobc.bc(G, weight="weight", normalized=normalized, endpoints=endpoints,
                             engine=cpu_engine)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS_FIRST_CHECK)
@pytest.mark.parametrize("name", CASES)
def test_edge_bc_equals_networkx(name, kind, cpu_engine):
    G = with_lengths(GRAPH_CASES[name](), kind, seed=len(name) + 1)
    for normalized in (True, False):
        E = turbobc.edge_bc(G, weight="weight", normalized=normalized, engine=cpu_engine)
        _edge_check(E, G, nx.edge_betweenness_centrality(G, weight="weight",
                                                         normalized=normalized))


SELECTION_CASES = ["karate", "les_miserables", "grid_6x7", "grid_deep_2x40", "gnp_medium",
                   "two_components_isolated", "random_tree", "digraph_gnp", "dag",
                   "scale_free_directed", "digraph_sparse_unreachable", "directed_self_loops"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", SELECTION_CASES)
def test_sampled_and_chosen_sources_equal_networkx(name, kind, cpu_engine):
    G = with_lengths(GRAPH_CASES[name](), kind, seed=3)
    nodes = list(G)
    for endpoints in (False, True):
        for k in (2, len(G) // 2):
            want = networkx_bc(G, selection="k", k=k, seed=11, normalized=True,
                               endpoints=endpoints, weight="weight")
            got = turbobc.bc(G, k=k, seed=11, endpoints=endpoints, weight="weight",
                             engine=cpu_engine)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        sources = nodes[::3]
        for normalized in (True, False):
            want = networkx_bc(G, selection="sources", sources=sources, normalized=normalized,
                               endpoints=endpoints, weight="weight")
            got = turbobc.bc(G, sources=sources, normalized=normalized, endpoints=endpoints,
                             weight="weight", engine=cpu_engine)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    E = turbobc.edge_bc(G, k=5, seed=2, weight="weight", engine=cpu_engine)
    _edge_check(E, G, nx.edge_betweenness_centrality(G, k=5, seed=2, weight="weight"))


def _sources_and_targets(nodes: list, seed: int):
    """Three draws of (sources, targets): a third of the vertices as sources, and one target,
    a quarter of the vertices or all of them."""
    rng = np.random.default_rng(seed)
    for count in (1, max(1, len(nodes) // 4), len(nodes)):
        sources = rng.permutation(len(nodes))[:max(1, len(nodes) // 3)]
        targets = rng.permutation(len(nodes))[:count]
        yield [nodes[i] for i in sources], [nodes[i] for i in targets]


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", SELECTION_CASES)
def test_subsets_equal_networkx(name, kind, cpu_engine):
    """betweenness_centrality_subset and edge_betweenness_centrality_subset (a non-target's
    dependency in equal shares to its DAG parents, which may lie on several levels)."""
    G = with_lengths(GRAPH_CASES[name](), kind, seed=4)
    for sources, targets in _sources_and_targets(list(G), seed=len(name)):
        for normalized in (False, True):
            want = as_array(nx.betweenness_centrality_subset(
                G, sources, targets, normalized=normalized, weight="weight"), G)
            got = turbobc.bc(G, sources=sources, targets=targets, normalized=normalized,
                             weight="weight", engine=cpu_engine)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
            E = turbobc.edge_bc(G, sources=sources, targets=targets, normalized=normalized,
                                weight="weight", engine=cpu_engine)
            _edge_check(E, G, nx.edge_betweenness_centrality_subset(
                G, sources, targets, normalized=normalized, weight="weight"))


# ---------------------------------------------------------------------------------------------
# Thousands of generated graphs
# ---------------------------------------------------------------------------------------------

GENERATED = 2400
"""Generated graphs compared with networkx (in groups swept as one disjoint union)."""

GROUP = 200


def _generated(seed: int) -> nx.Graph:
    """A small random graph with lengths: 1 to 12 vertices, directed or not, sparse or dense,
    the lengths of kind ``seed % 3``."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    directed = bool(seed % 2)
    G = nx.gnp_random_graph(n, float(rng.uniform(0.1, 0.7)), seed=seed, directed=directed)
    return with_lengths(G, KINDS[seed // 2 % 3], seed=seed)


@pytest.mark.slow
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_thousands_of_generated_graphs(directed, cpu_engine):
    """2,400 graphs, each compared vertex by vertex and edge by edge with networkx (raw sums,
    with endpoints): a group of graphs is swept as one graph, its disjoint union, and each
    graph's share is checked on its own; the assert names the seed."""
    seeds = [s for s in range(2 * GENERATED) if s % 2 == int(directed)]
    mismatches = []
    for start in range(0, len(seeds), GROUP):
        graphs = [_generated(s) for s in seeds[start:start + GROUP]]
        union = nx.disjoint_union_all(graphs)
        got = turbobc.bc(union, weight="weight", normalized=False, endpoints=True,
                         engine=cpu_engine)
        edges = turbobc.edge_bc(union, weight="weight", normalized=False, engine=cpu_engine)
        offset = 0
        for seed, G in zip(seeds[start:start + GROUP], graphs):
            n = len(G)
            # within its own graph a vertex gets the same raw sum; endpoint terms count the
            # vertices reached, which stay within the graph too
            want = networkx_bc(G, selection="all", normalized=False, endpoints=True,
                               weight="weight")
            if not np.allclose(got[offset:offset + n], want, rtol=1e-9, atol=1e-12):
                mismatches.append(("vertex", seed))
            mine = edges[offset:offset + n][:, offset:offset + n]
            for (u, v), x in nx.edge_betweenness_centrality(
                    G, weight="weight", normalized=False).items():
                if u != v and not np.isclose(mine[u, v], x, rtol=1e-9, atol=1e-12):
                    mismatches.append(("edge", seed))
                    break
            offset += n
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:5]}"


# ---------------------------------------------------------------------------------------------
# networkx inputs
# ---------------------------------------------------------------------------------------------


def test_missing_attributes_are_one_as_in_networkx(cpu_engine):
    G = nx.karate_club_graph()
    rng = np.random.default_rng(1)
    for u, v in list(G.edges())[::2]:
        G[u][v]["length"] = int(rng.integers(2, 5))  # every other edge has none: 1
    want = as_array(nx.betweenness_centrality(G, weight="length"), G)
    np.testing.assert_allclose(turbobc.bc(G, weight="length", engine=cpu_engine), want, rtol=1e-9)
    # an attribute no edge has: every length 1, unweighted BC
    np.testing.assert_allclose(turbobc.bc(G, weight="nothing", engine=cpu_engine),
                               as_array(nx.betweenness_centrality(G), G), rtol=1e-12)


def test_labels_and_order_follow_list_of_G(cpu_engine):
    G = nx.relabel_nodes(with_lengths(GRAPH_CASES["les_miserables"](), "int3", seed=5),
                         lambda v: f"<{v}>")
    got = turbobc.bc(G, weight="weight", sources=list(G)[::5], normalized=False,
                     engine=cpu_engine)
    want = as_array(nx.betweenness_centrality_subset(G, list(G)[::5], list(G),
                                                     weight="weight"), G)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("directed", [False, True])
def test_multigraph_takes_the_shortest_parallel_edge(directed, cpu_engine):
    kind = nx.MultiDiGraph if directed else nx.MultiGraph
    G = kind()
    G.add_edge(0, 1, weight=5.0)
    G.add_edge(0, 1, weight=1.0)  # the one networkx's weight function uses
    G.add_edge(1, 2, weight=1.0)
    G.add_edge(0, 2, weight=2.0)
    G.add_edge(2, 3)  # no attribute: 1
    want = as_array(nx.betweenness_centrality(G, weight="weight", normalized=False), G)
    got = turbobc.bc(G, weight="weight", normalized=False, engine=cpu_engine)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    assert got[1] > 0  # 0 -> 1 -> 2 ties 0 -> 2 only with the short parallel edge


def test_edge_bc_keeps_the_pattern_of_a_weighted_matrix(cpu_engine):
    n, triples, _ = EXACT["diamond_no_tie"]
    A = _lengths_matrix(n, triples)
    E = turbobc.edge_bc(A, weight=True, normalized=False, engine=cpu_engine)
    assert (E.indptr == A.indptr).all() and (E.indices == A.indices).all()
    assert E[2, 3] == E[3, 2] == 1.0  # only the pair (2, 3) itself


def test_weight_false_is_unweighted(cpu_engine):
    G = with_lengths(GRAPH_CASES["karate"](), "int100", seed=1)
    A = nx.to_scipy_sparse_array(G, format="csr")
    np.testing.assert_array_equal(turbobc.bc(A, weight=False, engine=cpu_engine),
                                  turbobc.bc(A, engine=cpu_engine))


def test_asymmetric_lengths_infer_a_directed_graph(cpu_engine):
    """A symmetric pattern whose two lengths of an edge differ is a directed graph."""
    A = _lengths_matrix(3, [(0, 1, 1.0), (1, 2, 1.0), (0, 2, 1.0)])
    A[0, 2] = 5.0  # 0 -> 2 is long, 2 -> 0 is short
    G = nx.DiGraph()
    for i, j in zip(*A.nonzero()):
        G.add_edge(int(i), int(j), weight=float(A[i, j]))
    want = as_array(nx.betweenness_centrality(G, weight="weight", normalized=False), G)
    got = turbobc.bc(A, weight=True, normalized=False, engine=cpu_engine)
    np.testing.assert_allclose(got, want[np.argsort(list(G))], rtol=0, atol=1e-15)
    assert _weighted_graph(A, None).directed


def test_duplicates_are_summed_and_zeros_are_no_edge():
    coo = sp.coo_array((np.array([1.0, 2.0, 3.0, 3.0, 0.0, 0.0]),
                        (np.array([0, 0, 1, 1, 0, 2]), np.array([1, 1, 0, 0, 2, 0]))),
                       shape=(3, 3))
    graph = _weighted_graph(coo.tocsr(), None)
    assert graph.pattern.nnz == 2 and graph.lengths.tolist() == [3.0, 6.0] and graph.directed


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf, -np.inf])
def test_bad_length_names_the_entry(bad):
    A = _lengths_matrix(4, [(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0)])
    A[1, 2] = bad
    with pytest.raises(ValueError, match=rf"A\[1, 2\] = {bad!r}".replace("(", r"\(")):
        turbobc.bc(A, weight=True, **CPU)


def test_differing_undirected_lengths_name_the_edge():
    A = _lengths_matrix(3, [(0, 1, 1.0), (1, 2, 1.0)])
    A[2, 1] = 4.0
    with pytest.raises(ValueError, match=r"\(1, 2\) has length 1.0 but \(2, 1\) has 4.0"):
        turbobc.bc(A, weight=True, directed=False, **CPU)


@pytest.mark.parametrize("bad", [0, -2, float("nan"), float("inf")])
def test_bad_networkx_attribute_names_the_edge(bad):
    G = nx.path_graph(["a", "b", "c"])
    G["b"]["c"]["w"] = bad
    with pytest.raises(ValueError, match=r"edge \('b', 'c'\) has w="):
        turbobc.bc(G, weight="w", **CPU)


def test_non_numeric_attribute_is_a_type_error():
    G = nx.path_graph(3)
    G[0][1]["w"] = "far"
    with pytest.raises(TypeError, match=r"edge \(0, 1\) has w='far'"):
        turbobc.bc(G, weight="w", **CPU)


def test_weight_kinds():
    A = _lengths_matrix(3, [(0, 1, 1.0), (1, 2, 1.0)])
    with pytest.raises(TypeError, match="only a networkx graph"):
        turbobc.bc(A, weight="weight", **CPU)
    with pytest.raises(TypeError, match="names the edge attribute"):
        turbobc.bc(nx.path_graph(3), weight=True, **CPU)
    with pytest.raises(TypeError, match="weight must be"):
        turbobc.bc(A, weight=1.5, **CPU)


@pytest.mark.slow
def test_lengths_that_vanish_in_a_sum_raise(cpu_engine):
    """1 next to 2^60: 2^60 + 1 == 2^60 in float64, so the DAG would hold an edge between two
    vertices at the same distance (networkx's counts depend on its pop order there)."""
    A = _lengths_matrix(3, [(0, 1, 2.0**60), (1, 2, 1.0), (0, 2, 2.0**60)])
    with pytest.raises(ValueError, match="vanishes next to the distance"):
        turbobc.bc(A, weight=True, engine=cpu_engine)


# ---------------------------------------------------------------------------------------------
# Engines, folding, memory
# ---------------------------------------------------------------------------------------------


def test_problem_exposes_the_weights_and_auto_runs_them_on_the_cpu():
    A = _lengths_matrix(3, [(0, 1, 1.0), (1, 2, 2.0)])
    graph = _weighted_graph(A, None)
    problem = Problem(graph)
    assert problem.weighted and graph.weighted
    assert not Problem(Graph(pattern=graph.pattern, directed=False)).weighted
    assert engine_named("graphblas").can_serve(problem) is None
    assert engine_named("cpu").can_serve(problem) is None
    if engine_named("gpu").can_serve(Problem(Graph(pattern=graph.pattern,
                                                   directed=False))) is not None:
        # no GPU here: auto is the cpu engine
        assert resolve_engine("auto", problem).name == "cpu"
        assert run_bc(A, weight=True).facts["engine"] == "cpu"


def _with_trees(seed: int, kind: str) -> nx.Graph:
    rng = np.random.default_rng(seed)
    G = nx.convert_node_labels_to_integers(nx.connected_watts_strogatz_graph(40, 4, 0.3,
                                                                             seed=seed))
    for _ in range(40):
        new = G.number_of_nodes()
        G.add_edge(new, int(rng.integers(0, new)))
    return with_lengths(G, kind, seed=seed)


@pytest.mark.parametrize("kind", KINDS)
def test_tree_folding_keeps_the_lengths(kind, cpu_engine):
    """Exact BC of an undirected graph with pendant trees folds them (the core keeps its
    edges' lengths) when its sums of lengths are exact (integers; not the floats): equal to
    networkx and to the unfolded sweep."""
    G = _with_trees(7, kind)
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    for endpoints in (False, True):
        folded = run_bc(A, weight=True, endpoints=endpoints, engine=cpu_engine)
        assert (folded.facts["folded"] >= 40) == (kind != "float")
        with turbobc.tuning(fold_trees=False):
            plain = run_bc(A, weight=True, endpoints=endpoints, engine=cpu_engine)
        assert plain.facts["folded"] == 0
        want = networkx_bc(G, selection="all", normalized=True, endpoints=endpoints,
                           weight="weight")
        np.testing.assert_allclose(folded.values, want, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(plain.values, want, rtol=1e-9, atol=1e-12)


def inexact_tie_graph() -> nx.Graph:
    """A graph whose float64 sums tie from a leaf but not from the vertex it hangs from:
    from a, a-x-t is 0.1 + 0.2 = 0.30000000000000004 > 0.3 (a-t); from the leaf s (1 from
    a), (1 + 0.1) + 0.2 == 1 + 0.3 == 1.3: networkx counts both paths from s."""
    G = nx.Graph()
    G.add_weighted_edges_from([("s", "a", 1.0), ("a", "x", 0.1), ("x", "t", 0.2),
                               ("a", "t", 0.3), ("t", "u", 1.0), ("a", "v", 1.0),
                               ("v", "u", 1.0)])
    return G


def test_lengths_with_inexact_sums_are_not_folded(cpu_engine):
    """Folding the leaf s into a would sweep from a, where the tie s sees is none: such a
    graph is swept as it is (Graph.length_scale is None), and x's BC is networkx's."""
    G = inexact_tie_graph()
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    got = run_bc(A, weight=True, normalized=False, engine=cpu_engine)
    want = nx.betweenness_centrality(G, weight="weight", normalized=False)
    assert got.facts["folded"] == 0
    np.testing.assert_allclose(got.values, as_array(want, G), rtol=1e-12, atol=1e-12)
    assert want["x"] == 1.25  # the tie from s: half of s's paths to t cross x


@pytest.mark.parametrize("lengths, scale", [([1.0, 2.0, 100.0], 1.0), ([0.5, 1.25], 4.0),
                                            ([0.1, 0.2], None), ([3.0, 2.0**51], 1.0),
                                            ([2.0**51, 2.0**51], None), ([1e-300], None)])
def test_exact_length_scale(lengths, scale):
    """The power of two that makes every length an integer, while the total stays below
    2^52; None when there is none."""
    from turbobc._graph import exact_length_scale

    assert exact_length_scale(np.array(lengths)) == scale


def test_memory_limit_sizes_weighted_batches_per_edge():
    G = with_lengths(nx.gnp_random_graph(60, 0.1, seed=2), "float", seed=2)
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    n, m = A.shape[0], A.nnz
    per_source = graphblas_engine.BYTES_PER_SLOT * n + graphblas_engine.BYTES_PER_EDGE_SLOT * m
    limit = graphblas_engine.fixed_bytes(n, m, False, True) + 5 * per_source + per_source // 2
    # one batch at a time: "auto" sweeps several at once from 8 GraphBLAS threads up, each
    # with its share of the budget (batches of 1 on 16 cores)
    with turbobc.tuning(fold_trees=False, cpu_concurrent_batches=1):
        got = run_bc(A, weight=True, memory_limit=limit, **CPU)
    assert (got.facts["batch"], got.facts["batches"]) == (5, 12)
    np.testing.assert_allclose(got.values, as_array(nx.betweenness_centrality(G, weight="weight"),
                                                    G), rtol=1e-9, atol=1e-12)
    with pytest.raises(MemoryError, match="per stored edge and source"):
        turbobc.bc(A, weight=True, memory_limit=per_source // 2, **CPU)


# ---------------------------------------------------------------------------------------------
# Counts past float64: per-level scaling and the wide sweep
# ---------------------------------------------------------------------------------------------


def _grid_with_lengths(rows: int, cols: int, across: int, down: int) -> sp.csr_array:
    """The rows x cols grid, vertex (i, j) = i cols + j, edges along a row of length
    ``across`` and along a column of length ``down``: from a corner every monotone path is
    shortest, C(i + j, i) of them to (i, j), whatever the two lengths."""
    idx = np.arange(rows * cols).reshape(rows, cols)
    tail = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    head = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    length = np.concatenate([np.full(rows * (cols - 1), across, dtype=float),
                             np.full((rows - 1) * cols, down, dtype=float)])
    tail, head = np.concatenate([tail, head]), np.concatenate([head, tail])
    return sp.csr_array((np.concatenate([length, length]), (tail, head)),
                        shape=(rows * cols,) * 2)


def _exact_raw(A: sp.csr_array, sources, *, directed=False):
    raw, largest = np.zeros(A.shape[0]), 0
    for s in sources:
        delta, sigma, _ = exact_brandes(A.indptr, A.indices, s, directed=directed,
                                        lengths=A.data)
        raw += delta
        largest = max(largest, max(sigma))
    return raw, largest


@pytest.mark.slow
@pytest.mark.parametrize("across, down", [(1, 1), (1, 3)])
def test_deep_grid_past_float64_range(across, down, cpu_engine):
    """A 540 x 540 grid from a corner: C(1078, 539) ≈ 2^1073 > 1.8e308 shortest paths to the
    far corner, per-level scaling keeps them, equal to the exact big-integer Brandes."""
    A = _grid_with_lengths(540, 540, across, down)
    sources = [0]
    raw, largest = _exact_raw(A, sources)
    assert largest > 10**308  # the reference is not vacuous
    got = run_bc(A, weight=True, sources=sources, normalized=False, engine=cpu_engine)
    assert got.facts["wide_sources"] == 0
    np.testing.assert_allclose(got.values, raw / 2, rtol=1e-9, atol=1e-9)


def _diamond_chain_beside_path(k: int) -> sp.csr_array:
    """From vertex 0: k diamonds with sides of lengths 2 + 4 and 4 + 2 (σ doubles at every
    joint: 2^k at the last) beside a plain path of 2k edges of length 3 (σ = 1), both of
    length 6k; one last vertex joins their ends by edges of length 2. The hop layer 2k holds
    σ = 2^k and σ = 1: wider than per-level scaling holds once k > 896."""
    triples, joint, nxt = [], 0, 1
    for _ in range(k):
        left, right, after = nxt, nxt + 1, nxt + 2
        triples += [(joint, left, 2), (left, after, 4), (joint, right, 4), (right, after, 2)]
        joint, nxt = after, nxt + 3
    end = 0
    for _ in range(2 * k):
        triples.append((end, nxt, 3))
        end, nxt = nxt, nxt + 1
    triples += [(joint, nxt, 2), (end, nxt, 2)]
    return _lengths_matrix(nxt + 1, triples)


@pytest.mark.slow
@pytest.mark.parametrize("k", [300, 1100])
def test_diamond_chain_beside_path(k, cpu_engine):
    """σ = 2^k next to σ = 1 in one hop layer: k = 1100 goes through the wide sweep with the
    DAG test (engines/wide.py), k = 300 through per-level scaling; both exact."""
    A = _diamond_chain_beside_path(k)
    n = A.shape[0]
    sources = [0, 3 * (k // 2), 3 * k + k, n - 1]
    raw, largest = _exact_raw(A, sources)
    got = run_bc(A, weight=True, sources=sources, normalized=False, engine=cpu_engine)
    assert got.facts["wide_sources"] == (2 if k > 896 else 0)  # the chain's start and t
    np.testing.assert_allclose(got.values, raw / 2, rtol=1e-9, atol=1e-9)
    assert largest >= 2**k


@pytest.mark.parametrize("wide", [False, True], ids=["rescaled", "wide"])
@pytest.mark.parametrize("name", ["grid_6x7", "les_miserables", "grid_deep_2x40",
                                  "digraph_dense", "gnp_medium"])
@pytest.mark.slow
def test_forced_scaling_and_wide_sweep_equal_networkx(monkeypatch, name, wide, cpu_engine):
    """Every level scaled (threshold 2^2) and, with ``wide``, nearly every source through the
    wide sweep (limit 2^2): vertex, edge and subset BC still equal networkx."""
    if cpu_engine == "graphblas":
        monkeypatch.setattr(graphblas_sweep, "RESCALE_ABOVE_EXP", 2)
        if wide:
            monkeypatch.setattr(graphblas_sweep, "WIDE_RANGE", 4.0)
    else:
        monkeypatch.setattr(cpu_engine_module, "RESCALE_ABOVE_EXP", 2)
        if wide:
            monkeypatch.setattr(cpu_engine_module, "WIDE_BELOW_EXP", 2)
    CPU = {"engine": cpu_engine}
    G = with_lengths(GRAPH_CASES[name](), "int3", seed=9)
    for endpoints in (False, True):
        want = networkx_bc(G, selection="all", normalized=True, endpoints=endpoints,
                           weight="weight")
        got = run_bc(G, weight="weight", endpoints=endpoints, **CPU)
        np.testing.assert_allclose(got.values, want, rtol=1e-9, atol=1e-12)
    assert (got.facts["wide_sources"] > 0) == wide
    _edge_check(turbobc.edge_bc(G, weight="weight", **CPU), G,
                nx.edge_betweenness_centrality(G, weight="weight"))
    nodes = list(G)
    sources, targets = nodes[::2], nodes[1::3]
    _edge_check(turbobc.edge_bc(G, sources=sources, targets=targets, weight="weight",
                                normalized=False, **CPU),
                G, nx.edge_betweenness_centrality_subset(G, sources, targets, weight="weight"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", CASES)
def test_wide_sweep_with_the_dag_test_equals_the_engine(name, kind):
    """The exponent-per-vertex sweep alone (NumPy), given the lengths and the engine's
    distances, adds the same vertex and edge sums as the graphblas engine."""
    G = with_lengths(GRAPH_CASES[name](), kind, seed=len(name) + 2)
    graph = _weighted_graph(nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr"),
                            G.is_directed())
    sources = np.arange(graph.n)
    want, _ = run_schedule(Problem(graph, edges=True, endpoints=True),
                           engine_named("graphblas"), [sources])
    walks = graphblas_engine.ShortestPathDag(graph)
    raw, edges = np.zeros(graph.n), np.zeros(graph.nnz)
    accumulate_wide(np, graph.pattern.indptr, graph.pattern.indices, graph.n, sources, raw,
                    endpoints=True, edge_raw=edges, batch_entries=max(1, 3 * graph.n),
                    **walks.wide_arguments())
    np.testing.assert_allclose(raw, want.vertex, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(edges, want.edge, rtol=1e-12, atol=1e-12)
