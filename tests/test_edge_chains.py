"""Edge BC with the sources inside chains folded into the chains' ends (turbobc._chains,
``ChainFolding(edges=True)``; docs/algorithm.md, "Folding chains") is exact: edge_bc() equals
networkx.edge_betweenness_centrality with the folding forced on paths, cycles with pendant
trees (loops), subdivided grids, random and complete graphs, parallel chains between the same
ends, chains beside a shorter way round, disconnected graphs, with and without tree folding,
normalized and not, unweighted and with exact lengths (integers with many ties, wide integers,
quarters), on every engine that folds (the GPU tests skip without a device); the folding did
run (facts); every stored entry, each way, equals the unfolded sweep's; a plan that declines
falls back to the unfolded sweep; and the GPU layers family's host code with a plan, its
kernels emulated in Python, gives the same edge sums on the CPU."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
from graph_cases import adjacency, shuffled, with_hanging_trees, with_lengths
from oracles import assert_edge_values
from test_chains import (EXACT_LENGTHS, GRAPHS, MANY_BATCHES, SEEDS, _subdivided,
                         random_chain_graph, random_weighted_chain_graph)

from turbobc._api import run_edge_bc
from turbobc._chains import ChainFolding, find_chains
from turbobc._edges import distinct_edges
from turbobc._fold import raw_edge_sums
from turbobc._graph import Graph
from turbobc._reduce import fold_trees
from turbobc._validation import validate
from turbobc.engines.protocol import Problem, slot_weights_reason


FORCED = dict(fold_chains=True, chain_min_share=0.0, chain_min_vertices=0)
"""The knobs that fold every chain of a small graph (turbobc/_tuning.py)."""

ENGINES = [pytest.param("graphblas", id="graphblas"), pytest.param("cpu", id="cpu"),
           pytest.param("gpu", id="gpu", marks=pytest.mark.gpu)]
"""Every engine that folds chains: the GPU's lanes family (unweighted) and layer kernels
(weighted) sum the ends' edges with the slots' target weights."""


def _cycle_with_pendant_trees() -> nx.Graph:
    """A cycle of 9 with a tree hanging off vertex 0 and a path off vertex 4: two loops'
    worth of chains once the trees fold (or, unfolded, chains ending at the pendant
    paths' vertices)."""
    G = nx.cycle_graph(9)
    nx.add_path(G, [0, 9, 10, 11])
    G.add_edge(9, 12)
    nx.add_path(G, [4, 13, 14])
    return G


def _parallel_chains() -> nx.Graph:
    """Between 0 and 1: three chains of 3 edges (tied), one of 2 and one of 5, and a
    triangle at each end so that both ends have other neighbours."""
    G = nx.Graph([(0, 20), (20, 21), (21, 0), (1, 22), (22, 23), (23, 1)])
    nxt = 2
    for inner in (2, 2, 2, 1, 4):
        nx.add_path(G, [0] + list(range(nxt, nxt + inner)) + [1])
        nxt += inner
    return G


EDGE_GRAPHS = dict(GRAPHS, **{
    # a path: one chain between its two ends of degree 1 (folds with tree folding off)
    "path": lambda: nx.path_graph(11),
    "cycle_with_pendant_trees": _cycle_with_pendant_trees,
    "parallel_chains": _parallel_chains,
    "subdivided_grid_trees": lambda: shuffled(with_hanging_trees(
        _subdivided(nx.grid_2d_graph(4, 5), 0.7, 3, seed=40), 12, seed=41), 42),
})


UNFOLDED_TREES = ("path", "cycle_with_pendant_trees")
"""Graphs whose chains are there only while their trees are: with the trees folded a path is
one vertex and a cycle with trees a cycle, whose vertices lie on no chain (no end)."""


def _graph(G) -> Graph:
    return Graph(pattern=sp.csr_array(adjacency(G), dtype=np.float64), directed=False)


def _inner_vertices(G, trees: bool) -> int:
    """Vertices inside chains of what the sweeps run on: the core left once the trees are
    folded (when at least Tuning.fold_min_share = 5% of the vertices fold), or the graph."""
    graph = _graph(G)
    folded = fold_trees(graph, min_folded=max(1, int(np.ceil(0.05 * graph.n)))) if trees \
        else None
    return int(find_chains(graph if folded is None else folded.core).inner.size)


def _edge_run(G, engine, *, normalized=False, weight=None, **knobs):
    """run_edge_bc of G with the knobs, and networkx's edge BC of it."""
    with turbobc.tuning(**knobs):
        result = run_edge_bc(adjacency(G), normalized=normalized, engine=engine, weight=weight)
    want = nx.edge_betweenness_centrality(G, normalized=normalized,
                                          weight="weight" if weight else None)
    return result, want


def _entry_sums(G, engine, weight=None, **knobs) -> tuple[np.ndarray, dict]:
    """The raw edge sums of every vertex of G as a source, one per stored entry (each way of
    an undirected edge), and the facts."""
    call = validate(adjacency(G), sources=None, k=None, seed=None, normalized=False,
                    endpoints=False, directed=None, engine=engine, kernel="auto",
                    progress=False, memory_limit=None, targets=None, edges=True,
                    weight=weight, client=None)
    with turbobc.tuning(**knobs):
        return raw_edge_sums(call)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(EDGE_GRAPHS))
@pytest.mark.parametrize("trees", [True, False], ids=["trees", "no-trees"])
@pytest.mark.parametrize("normalized", [True, False])
def test_chain_folded_edge_bc_equals_networkx(engine, name, trees, normalized):
    """Every graph class, with the trees folded first (the chains of the core, every vertex
    weighted by its trees) or not (the chains of the graph as it is)."""
    G = EDGE_GRAPHS[name]()
    result, want = _edge_run(G, engine, normalized=normalized, fold_trees=trees, **FORCED)
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-12)
    assert result.facts.get("chain_folded", 0) == _inner_vertices(G, trees)
    if result.facts.get("chain_folded", 0):
        assert result.facts["chains"] > 0 and "credits" in result.facts["chain_seconds"]


def test_trees_and_chains_compose(cpu_engine):
    """Trees fold, then the core's chains: the facts say both, and the values are
    networkx's (FoldedTrees.expand_edges after the chains' edge credits)."""
    G = EDGE_GRAPHS["chains_with_trees"]()
    result, want = _edge_run(G, cpu_engine, **FORCED)
    assert result.facts["folded"] > 0 and result.facts["chain_folded"] > 0
    assert result.facts["core_vertices"] < len(G)
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("weight", [None, True], ids=["hops", "int3"])
@pytest.mark.parametrize("name", ["loops_and_parallels", "cycle_with_chord", "theta",
                                  "chains_with_trees", "parallel_chains", "path",
                                  "cycle_with_pendant_trees"])
def test_every_entry_equals_the_unfolded_sweep(cpu_engine, name, weight):
    """Not only the distinct edges: each stored entry (each way of an edge) gets the pairs
    that cross it its way, as the unfolded sweep gives it (the pairs that go round a chain
    from b to a add to τ_b(a), the chain's own edges are credited each way)."""
    G = EDGE_GRAPHS[name]()
    if weight:
        G = with_lengths(G, "int3", seed=3)
    folded, facts = _entry_sums(G, cpu_engine, weight, fold_trees=name not in UNFOLDED_TREES,
                                **FORCED)
    plain, _ = _entry_sums(G, cpu_engine, weight, fold_chains=False)
    assert facts["chain_folded"] > 0
    np.testing.assert_allclose(folded, plain, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_chain_graphs_equal_networkx(seed, cpu_engine):
    """Random graphs, connected or not, with chains of 1 to 8 inner vertices and trees."""
    G = random_chain_graph(seed)
    result, want = _edge_run(G, cpu_engine, **FORCED)
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-9)
    assert result.facts.get("chain_folded", 0) == _inner_vertices(G, True)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(EDGE_GRAPHS))
@pytest.mark.parametrize("kind", sorted(EXACT_LENGTHS))
def test_weighted_chain_folded_edge_bc_equals_networkx(engine, name, kind):
    """Weighted chains fold by lengths (positions along the chain, classes by the doubled
    positions): equal to networkx's weighted edge BC, and the folding did run."""
    G = EXACT_LENGTHS[kind](EDGE_GRAPHS[name](), 7)
    trees = name not in UNFOLDED_TREES
    result, want = _edge_run(G, engine, weight=True, fold_trees=trees, **FORCED)
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-12)
    assert result.facts["chain_folded"] == _inner_vertices(G, trees) > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_random_weighted_chain_graphs_equal_networkx(seed, cpu_engine):
    """Random graphs with chains and trees, lengths of every exact kind."""
    G = random_weighted_chain_graph(seed)
    result, want = _edge_run(G, cpu_engine, weight=True, **FORCED)
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-9)
    assert result.facts.get("chain_folded", 0) == _inner_vertices(G, True)


def test_inexact_lengths_are_not_folded(cpu_engine):
    """Lengths whose float64 sums are not exact (0.1, 0.2, ...) are swept as they are."""
    G = with_lengths(EDGE_GRAPHS["subdivided_k5"](), "float", seed=1)
    result, want = _edge_run(G, cpu_engine, weight=True, **FORCED)
    assert "chain_folded" not in result.facts
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("knob", [{"fold_chains": False}, {"chain_min_share": 0.99},
                                  {"fold_chains": "auto"}])  # auto: the GPU, large graphs
def test_folding_off_gives_the_same(knob, cpu_engine):
    G = EDGE_GRAPHS["chains_with_trees"]()
    with turbobc.tuning(**FORCED):
        folded = run_edge_bc(adjacency(G), engine=cpu_engine)
    with turbobc.tuning(**knob):
        plain = run_edge_bc(adjacency(G), engine=cpu_engine)
    assert folded.facts["chain_folded"] > 0 and "chain_folded" not in plain.facts
    np.testing.assert_allclose(folded.values.toarray(), plain.values.toarray(), rtol=1e-12,
                               atol=1e-12)


def test_small_batches_take_helper_slots(cpu_engine):
    """Batches of a few slots: most chains have an end in another batch (a helper slot,
    whose edge sums carry only the chain's terms)."""
    G = EDGE_GRAPHS["subdivided_gnm"]()
    result, want = _edge_run(G, cpu_engine, normalized=True,
                             cpu_batch_cap=8 * len(G), **FORCED)
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-12)
    assert result.facts["batches"] > 3


def test_a_declined_plan_sweeps_unfolded(cpu_engine):
    """Batches of one slot cannot hold a source and the other end of its chains: the plan
    declines and the edge sums are swept unfolded, with the same values."""
    G = EDGE_GRAPHS["subdivided_k5"]()
    result, want = _edge_run(G, cpu_engine, cpu_batch_cap=len(G), **FORCED)
    assert "chain_folded" not in result.facts
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-12)


def test_slot_weights_serve_edge_sums():
    """The protocol's rule: per-slot target weights serve vertex and edge sums, not
    endpoints nor networkx's edge subset rule."""
    G = EDGE_GRAPHS["theta"]()
    graph = _graph(G)
    plan = ChainFolding(graph, np.ones(graph.n), find_chains(graph), edges=True)
    assert slot_weights_reason(Problem(graph, edges=True, slot_weights=plan)) is None
    assert slot_weights_reason(Problem(graph, slot_weights=plan)) is None
    for refused in ({"endpoints": True}, {"edges": True, "split_non_targets": True}):
        reason = slot_weights_reason(Problem(graph, slot_weights=plan, **refused))
        assert reason == ("per-slot target weights serve vertex and edge sums without "
                          "endpoints or networkx's edge subset rule")


def test_vertex_plans_credit_no_edges():
    """A vertex plan's edge credit is zero; an edge plan's vertex credit stays zero."""
    G = EDGE_GRAPHS["subdivided_k5"]()
    graph = _graph(G)
    for edges in (False, True):
        plan = ChainFolding(graph, np.ones(graph.n), find_chains(graph), edges=edges)
        assert plan.edges is edges and plan.edge_credit().shape == (graph.nnz,)
        assert not plan.edge_credit().any() and not plan.credit.any()


# ---- the GPU layers family's host code, its kernels emulated (runs on the CPU) ----------------

@pytest.mark.parametrize("kind", ["int3", "int100", "quarters"])
@pytest.mark.parametrize("name, capacity", [("subdivided_gnm", 10), ("subdivided_gnm", 64),
                                            ("loops_and_parallels", 3),
                                            ("loops_and_parallels", 64)])
def test_layer_kernel_host_code_folds_chains_for_edges(monkeypatch, name, kind, capacity):
    """sweep_dag with an edge plan (per-slot τ in bcl_backward's edge terms, helper slots,
    the pairs that go round both ways) with NumPy for CuPy and Python for the kernels
    (tests/test_gpu_weighted.py): the folded sweep's edge sums plus the chains' edge credits
    equal networkx's weighted edge BC, in small batches and in one."""
    from test_gpu_weighted import _emulate_layer_kernels, _emulated_rounds, _graph_of, _host

    from turbobc.engines.gpu import layers_sweep

    G = EXACT_LENGTHS[kind](EDGE_GRAPHS[name](), 5)
    graph = _graph_of(G)
    plan = ChainFolding(graph, np.ones(graph.n), find_chains(graph), edges=True)
    _emulate_layer_kernels(monkeypatch)
    A = graph.pattern
    bc, edge = _host(np.zeros(graph.n)), _host(np.zeros(graph.nnz))
    batches = plan.batches(capacity)
    wide = layers_sweep.sweep_dag(
        _host(A.indptr), _host(A.indices), _host(graph.lengths), graph.n, plan.sources, bc,
        edge, False, (None, None), capacity,
        lambda chunk: _host(_emulated_rounds(graph, chunk)), None, plan=plan, batches=batches)
    assert wide.size == 0 and plan.folded > 0
    assert (len(batches) > 1) == (capacity < plan.sources.size)
    distinct = distinct_edges(graph)
    got = distinct.sums(np.asarray(edge) + plan.edge_credit()) / 2  # unordered pairs
    want = nx.edge_betweenness_centrality(G, weight="weight", normalized=False)
    nodes = list(G)
    rows = np.repeat(np.arange(graph.n), np.diff(A.indptr))[distinct.positions]
    cols = A.indices[distinct.positions]
    expected = [want.get((nodes[i], nodes[j]), want.get((nodes[j], nodes[i])))
                for i, j in zip(rows.tolist(), cols.tolist())]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-9)


# ---- slow and GPU ------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(MANY_BATCHES))
@pytest.mark.parametrize("weight", [None, True], ids=["hops", "int3"])
def test_many_batches(engine, name, weight):
    """Graphs of 85 to 149 sources left after folding, in batches of 32 slots: most chains
    have an end in another batch."""
    G = MANY_BATCHES[name]()
    if weight:
        G = with_lengths(G, "int3", seed=3)
    result, want = _edge_run(G, engine, weight=weight, max_batch=32, layers_max_batch=32,
                             cpu_batch_cap=32 * len(G), gpu_family="lanes", **FORCED)
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-9)
    assert result.facts["chain_folded"] > 0 and result.facts["batches"] > 2


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_counts_past_float64_scaling(engine):
    """A chain of 540 diamonds beside a path of 1,080 edges (tests/test_overflow.py): counts
    pass 2^512, so levels are scaled and the tie shares read σ through the exponents, on
    the ends' edge sums too. Folded equals unfolded."""
    from test_overflow import diamond_chain_beside_path

    A = diamond_chain_beside_path(540)
    with turbobc.tuning(chain_max_length=4096, **FORCED):
        folded = run_edge_bc(A, normalized=False, engine=engine)
    with turbobc.tuning(fold_chains=False):
        plain = run_edge_bc(A, normalized=False, engine=engine)
    assert folded.facts["chain_folded"] > 1000
    np.testing.assert_allclose(folded.values.toarray(), plain.values.toarray(), rtol=1e-12,
                               atol=1e-9)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["subdivided_gnm", "loops_and_parallels", "chains_with_trees"])
def test_gpu_lanes_sum_edges_with_slot_weights(name):
    """The GPU's lanes family (unweighted chains): the EdgeSums kernels in both phases of a
    per-slot batch, the facts saying so."""
    G = EDGE_GRAPHS[name]()
    result, want = _edge_run(G, "gpu", gpu_family="lanes", **FORCED)
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-12)
    assert result.facts["chain_folded"] > 0 and result.facts["family"] == "lanes"
    assert result.facts["edge_sums"] is True


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(MANY_BATCHES))
def test_gpu_weighted_edges_in_batches_of_24_slots(monkeypatch, name):
    """Weighted chains on the GPU's layer kernels in batches of 24 slots (forced): equal to
    networkx's weighted edge BC."""
    from turbobc.engines.gpu import layers

    monkeypatch.setattr(layers, "choose_layers_batch", lambda *args, **kwargs: 24)
    G = with_lengths(MANY_BATCHES[name](), "int3", seed=3)
    result, want = _edge_run(G, "gpu", weight=True, **FORCED)
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-9)
    assert result.facts["chain_folded"] > 0 and result.facts["batches"] > 2


def test_auto_folds_edge_bc_where_it_folds_vertex_bc(monkeypatch):
    """Tuning.fold_chains="auto" plans the chains of edge BC as of vertex BC: for sweeps on
    GPUs of cores of at least Tuning.chain_min_vertices (here made small), not on the CPU."""
    from turbobc import _fold

    A = adjacency(EDGE_GRAPHS["subdivided_grid"]())
    for edges in (False, True):
        call = validate(A, sources=None, k=None, seed=None, normalized=False,
                        endpoints=False, directed=None, engine="cpu", kernel="auto",
                        progress=False, memory_limit=None, targets=None, edges=edges,
                        weight=None, client=None)
        with turbobc.tuning(chain_min_vertices=0, chain_min_share=0.0):
            assert _fold._folding(call)[3] is None  # the CPU: not on "auto"
            monkeypatch.setattr(_fold, "_sweeps_on_gpus", lambda call: True)
            plan = _fold._folding(call)[3]
            monkeypatch.undo()
        assert plan is not None and plan.edges == edges


@pytest.mark.gpu
def test_gpu_auto_folds_edge_bc_of_a_large_core():
    """On the GPU, "auto" folds the chains of edge BC on a core past chain_min_vertices (a
    subdivided grid of 20,200 vertices): networkx's values, the unfolded run's to 1e-12."""
    G = nx.grid_2d_graph(30, 30)
    H = nx.Graph()
    for k, (u, v) in enumerate(G.edges()):  # every edge a chain of 25 inner vertices
        path = [u] + [("inner", k, i) for i in range(24)] + [v]
        nx.add_path(H, path)
    H = nx.convert_node_labels_to_integers(H)
    assert H.number_of_nodes() >= 16384
    A = adjacency(H)
    folded = run_edge_bc(A, normalized=False, engine="gpu")
    with turbobc.tuning(fold_chains=False):
        plain = run_edge_bc(A, normalized=False, engine="gpu")
    assert folded.facts["chain_folded"] > 16000 and "chain_folded" not in plain.facts
    np.testing.assert_allclose(folded.values.toarray(), plain.values.toarray(), rtol=1e-12,
                               atol=1e-9)


@pytest.mark.gpu
def test_gpu_layers_without_slot_weights_declines():
    """Unweighted per-slot weights run on the lanes and frontiers families: with
    Tuning.gpu_family asking for the layers the plan is declined (can_serve's reason) and the
    edge sums are swept unfolded, with networkx's values."""
    G = EDGE_GRAPHS["subdivided_gnm"]()
    result, want = _edge_run(G, "gpu", gpu_family="layers", **FORCED)
    assert "chain_folded" not in result.facts
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["subdivided_gnm", "loops_and_parallels", "chains_with_trees",
                                  "parallel_chains"])
@pytest.mark.parametrize("slots", [None, 16])
def test_gpu_frontiers_sum_edges_with_slot_weights(monkeypatch, name, slots):
    """The GPU's frontiers family (unweighted chains): the edge sums of a phased run take
    each slot's τ row, in one batch or in batches of 16 slots."""
    from turbobc.engines.gpu.frontiers import FrontiersFamily

    if slots is not None:
        monkeypatch.setattr(FrontiersFamily, "_blocks", lambda self, *args: slots)
    G = EDGE_GRAPHS[name]()
    result, want = _edge_run(G, "gpu", gpu_family="frontiers", **FORCED)
    assert_edge_values(result.values, G, want, rtol=1e-12, atol=1e-12)
    assert result.facts["chain_folded"] > 0 and result.facts["family"] == "frontiers"
    assert result.facts["phased"] is True and result.facts["edge_sums"] is True
