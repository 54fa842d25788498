"""The GPU's frontiers family (turbobc.engines.gpu.frontiers: a source per thread block, its
frontier a queue) on what is its own: many launches of few blocks, progress per launch, its
rows kept and cleared between sources, int64 indices, τ, ω, endpoints and edge sums against
the CPU engine, the counts past float64 and the sources handed to the exponent sweep, and the
choice of blocks (a pure function, on the CPU).

The networkx grid (tests/conftest.py ENGINE_CONFIGS, ``gpu-frontiers``) runs the family on every
graph case of tests/test_vs_networkx.py, tests/test_overflow.py and the other grid users.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import turbobc
from gpu_helpers import Counter, family_run, make_graph
from test_gpu_edge_bc import mixed_depths_graph
from turbobc._api import run_bc
from turbobc._run import run_schedule
from turbobc.engines import engine_named
from turbobc.engines.gpu.memory import (choose_frontier_blocks, frontier_block_bytes,
                                        frontiers_bytes)
from turbobc.engines.protocol import Problem

gpu = pytest.mark.gpu
DIRECTED = pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])


def cpu_sums(graph, sources, **problem):
    """The CPU engine's raw vertex and edge sums (the reference engine)."""
    total, _ = run_schedule(Problem(graph, edges=True, **problem), engine_named("graphblas"),
                            [np.asarray(sources, dtype=np.int64)])
    return total


@gpu
@DIRECTED
@pytest.mark.parametrize("blocks", [1, 3, None])
def test_blocks_and_launches_equal_the_cpu_engine(directed, blocks):
    """Few blocks (many launches of 16 sources a block) or the most that fit; τ, ω, endpoints
    and edge sums; progress counts every source once."""
    from turbobc.engines.gpu.frontiers import FrontiersFamily

    graph = mixed_depths_graph(directed)
    rng = np.random.default_rng(3)
    tau = rng.integers(0, 3, graph.n).astype(np.float64)
    omega = rng.uniform(0.5, 2.0, graph.n)
    sources = np.arange(graph.n)
    want = cpu_sums(graph, sources, endpoints=True, target_weight=tau, source_weight=omega)
    edge, facts, bar = np.zeros(graph.nnz), {}, Counter()
    got = family_run(FrontiersFamily, graph, sources, endpoints=True, target_weight=tau,
                     source_weight=omega, edge_raw=edge, facts=facts, progress=bar,
                     blocks=blocks)
    np.testing.assert_allclose(got, want.vertex, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(edge, want.edge, rtol=1e-12, atol=1e-10)
    assert bar.n == graph.n and facts["family"] == "frontiers"
    if blocks is not None:
        assert facts["blocks"] == blocks
        assert facts["launches"] == -(-graph.n // (16 * blocks))


@gpu
def test_rows_are_kept_clean_and_reused():
    """A second run on one resident object reuses the rows (the first left them cleared: level
    -1 and σ̂ 0; t is written before it is read, so it is left as it was) and copies nothing of
    the graph; the sums of two halves are those of the whole."""
    from turbobc.engines.gpu.frontiers import FrontiersFamily
    from turbobc.engines.gpu.resident import DeviceResident

    graph = mixed_depths_graph(False)
    halves = [np.arange(0, graph.n, 2), np.arange(1, graph.n, 2)]
    with DeviceResident(graph) as resident:
        parts, facts = [], []
        for half in halves:
            run = {}
            parts.append(family_run(FrontiersFamily, resident, half, facts=run))
            facts.append(run)
        rows = resident.workspace("frontiers").rows
        assert rows is not None
        assert bool((rows.level == -1).all()) and not rows.sigma.any()
    assert facts[1]["resident_reused"] and not facts[0]["resident_reused"]
    whole = cpu_sums(graph, np.arange(graph.n)).vertex
    np.testing.assert_allclose(parts[0] + parts[1], whole, rtol=1e-12, atol=1e-10)


@gpu
@DIRECTED
def test_int64_indices(directed):
    from turbobc.engines.gpu.frontiers import FrontiersFamily

    graph = mixed_depths_graph(directed)
    sources = np.arange(0, graph.n, 3)
    facts = {}
    got = family_run(FrontiersFamily, graph, sources, endpoints=True, facts=facts,
                     index_dtype=np.int64)
    assert facts["index_dtype"] == "int64"
    np.testing.assert_allclose(got, cpu_sums(graph, sources, endpoints=True).vertex,
                               rtol=1e-12, atol=1e-10)


@gpu
def test_counts_past_float64_and_too_wide_sources():
    """A 600 x 600 grid from its corner (counts to 1e358: scaled per level) and a chain of
    1,800 diamonds beside a plain path (from vertex 0, the level scaled a second time, near
    hop 2,050, holds 2^1025 and 1: wider than per-level scaling holds, so the exponent sweep
    takes that source), equal to the CPU engine."""
    from turbobc.engines.gpu.frontiers import FrontiersFamily

    grid = make_graph(nx.to_scipy_sparse_array(nx.grid_2d_graph(600, 600)), directed=False)
    facts = {}
    got = family_run(FrontiersFamily, grid, np.array([0, 300]), facts=facts)
    want = cpu_sums(grid, np.array([0, 300])).vertex
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    assert facts["wide_sources"] == 0
    G = nx.Graph()
    joint, nxt = 0, 1
    for _ in range(1800):  # diamonds: σ doubles at every joint
        G.add_edges_from([(joint, nxt), (joint, nxt + 1), (nxt, nxt + 2), (nxt + 1, nxt + 2)])
        joint, nxt = nxt + 2, nxt + 3
    end = 0
    for _ in range(3600):  # a plain path of the same length: σ = 1
        G.add_edge(end, nxt)
        end, nxt = nxt, nxt + 1
    G.add_edges_from([(joint, nxt), (end, nxt)])
    chain = make_graph(nx.to_scipy_sparse_array(G, nodelist=sorted(G)), directed=False)
    facts = {}
    got = family_run(FrontiersFamily, chain, np.array([0, 5]), facts=facts)
    assert facts["wide_sources"] >= 1  # source 0 at least
    np.testing.assert_allclose(got, cpu_sums(chain, np.array([0, 5])).vertex, rtol=1e-9,
                               atol=1e-9)


@gpu
def test_the_engine_says_why_it_chose_the_family():
    A = nx.to_scipy_sparse_array(nx.grid_2d_graph(20, 30), format="csr")
    with turbobc.tuning(gpu_family="frontiers"):
        result = run_bc(A, engine="gpu", normalized=False)
    assert result.facts["family"] == "frontiers"
    assert "gpu_family" in result.facts["family_reason"]
    np.testing.assert_allclose(result.values, turbobc.bc(A, engine="graphblas",
                                                         normalized=False),
                               rtol=1e-12, atol=1e-10)


# ---- CPU: the relabeling and the blocks' memory ---------------------------------------------

@pytest.mark.parametrize("order", ["rcm", "bfs", "vertex"])
@pytest.mark.parametrize("directed", [False, True])
def test_relabeled_pattern_and_entry_positions(monkeypatch, order, directed):
    """The relabeled graph is P A Pᵀ (entry (rank i, rank j) for every edge i -> j, rows
    sorted), and each of its entries knows its position in A's own order."""
    import sys

    from turbobc.engines.gpu import frontiers

    monkeypatch.setitem(sys.modules, "cupy", np)
    G = nx.gnp_random_graph(60, 0.08, seed=4, directed=directed)
    graph = make_graph(nx.to_scipy_sparse_array(G), directed)
    labels = frontiers._Labels(graph, np.int32, order)
    A, rank = graph.pattern, labels.rank
    assert sorted(rank) == list(range(graph.n)) and (labels.perm[rank] == np.arange(graph.n)).all()
    rows = np.repeat(np.arange(graph.n), np.diff(A.indptr))
    new_rows = np.repeat(np.arange(graph.n), np.diff(labels.ptr))
    edge_of = labels.edge_of
    np.testing.assert_array_equal(new_rows, rank[rows[edge_of]])
    np.testing.assert_array_equal(labels.idx, rank[A.indices[edge_of]])
    assert sorted(edge_of) == list(range(A.nnz))
    for v in range(graph.n):  # rows sorted
        row = labels.idx[labels.ptr[v]:labels.ptr[v + 1]]
        assert (np.diff(row) > 0).all()


# ---- CPU: the blocks' memory ---------------------------------------------------------------

@pytest.mark.parametrize("n, m", [(2**16, 400_000), (2**20, 6_300_000), (10, 0)])
@pytest.mark.parametrize("free", [2**28, 2**34, 80 * 2**30])
def test_choose_frontier_blocks_fits(n, m, free):
    most = 1056
    blocks = choose_frontier_blocks(n, m, 10**6, free, most, memory_fraction=0.8)
    assert 0 <= blocks <= most
    if blocks:
        assert frontiers_bytes(n, m, blocks=blocks, index_bytes=4) <= 0.8 * free
    if blocks < most:  # one block more would not fit
        assert frontiers_bytes(n, m, blocks=blocks + 1, index_bytes=4) + 1024 > 0.8 * free
    assert choose_frontier_blocks(n, m, 5, free, most) <= 5
    assert choose_frontier_blocks(n, m, 0, free, most) == 0


def test_frontier_block_bytes_counts_every_row():
    n = 1000
    assert frontier_block_bytes(n, 4) == n * (4 + 8 + 8 + 8 + 4) + (n + 2) * (4 + 4)
    # a phased run's slot: its τ row and its cumulative shifts too
    assert frontier_block_bytes(n, 4, True) == frontier_block_bytes(n, 4) + 8 * n + 4 * (n + 2)
    assert frontiers_bytes(n, 50, blocks=3, index_bytes=4, target_rows=True) == (
        frontiers_bytes(n, 50, blocks=0, index_bytes=4) + 3 * frontier_block_bytes(n, 4, True))
    free = 2**26
    plain = choose_frontier_blocks(n, 50, 10**6, free, 10**6)
    phased = choose_frontier_blocks(n, 50, 10**6, free, 10**6, target_rows=True)
    assert 0 < phased < plain
    graph = 4 * (n + 51) + 8 * 50 + 16 * n  # relabeled CSR, entry positions, labels
    assert frontiers_bytes(n, 50, blocks=2, index_bytes=4, edges=True) == (
        graph + 8 * n + 16 * 50 + 2 * frontier_block_bytes(n, 4))


def test_auto_takes_the_family_predicted_cheaper():
    """``gpu_family="auto"`` (the default) sweeps many sources of a deep graph a source per
    block and of a large shallow one 32 a warp, as the predicted seconds say
    (turbobc/engines/gpu/family_costs.py), and says why; a dense graph takes the lanes with
    no prediction; one source stays single; with the frontiers' rates made a thousand times
    dearer the deep graph takes the lanes."""
    import dataclasses

    from turbobc.engines.gpu import engine
    from turbobc.engines.gpu.engine import choose_family, family_costs
    from turbobc.engines.gpu.family_costs import RATES, predicted_seconds

    deep = make_graph(nx.to_scipy_sparse_array(nx.grid_2d_graph(15, 30)), directed=False)
    shallow = make_graph(nx.to_scipy_sparse_array(nx.random_regular_graph(10, 4000, seed=1)),
                         directed=False)
    dense = make_graph(nx.to_scipy_sparse_array(nx.complete_graph(40)), directed=False)
    assert deep.depth_estimate >= 20 > shallow.depth_estimate
    family, reason = choose_family(Problem(deep), 100)
    assert family.name == "frontiers" and "predicted cheapest" in reason
    costs = family_costs(Problem(deep), 100)
    assert 0 < costs["frontiers"] < costs["lanes"]
    assert choose_family(Problem(deep, edges=True), 100)[0].name == "frontiers"
    assert choose_family(Problem(deep), 1)[0].name == "single"
    assert family_costs(Problem(deep), 1) is None
    costs = family_costs(Problem(shallow), shallow.n)
    assert costs["lanes"] < costs["frontiers"]
    family, reason = choose_family(Problem(shallow), shallow.n)
    assert family.name == "lanes" and reason.startswith("predicted cheapest (lanes")
    assert family_costs(Problem(dense), 40) is None
    assert choose_family(Problem(dense), 40)[0].name == "lanes"
    with turbobc.tuning(gpu_family="lanes"):
        assert choose_family(Problem(deep), 100)[0].name == "lanes"
    dearer = dataclasses.replace(RATES, frontier_level=RATES.frontier_level * 1e3,
                                 frontier_vertex=RATES.frontier_vertex * 1e3)
    original = engine.predicted_seconds
    engine.predicted_seconds = lambda *args: predicted_seconds(*args, rates=dearer)
    try:
        assert choose_family(Problem(deep), 100)[0].name == "lanes"
    finally:
        engine.predicted_seconds = original


def test_predicted_seconds_follow_the_work():
    """The predictions grow with the sources, the depth and the edges, and the lanes' batch
    levels are paid once a batch of 16,384 sources."""
    from turbobc.engines.gpu.family_costs import LANES_BATCH, RATES, predicted_seconds

    base = predicted_seconds(1000, 10_000, 60_000, 50)
    for more in (predicted_seconds(2000, 10_000, 60_000, 50),
                 predicted_seconds(1000, 10_000, 60_000, 100),
                 predicted_seconds(1000, 10_000, 120_000, 50)):
        assert all(more[f] > base[f] for f in base)
    one, two = (predicted_seconds(k, 10, 0, 7)["lanes"] for k in (LANES_BATCH, LANES_BATCH + 1))
    assert two == 2 * one == 2 * 7 * RATES.lanes_batch_level


def test_folded_chains_of_deep_graphs_take_the_frontiers():
    """Per-slot target weights (folded chains) of a deep graph go to the frontiers family's
    phased run on "auto" and when it is asked for, to the lanes when they are asked for or
    no prediction is made (one source); the layers family is refused them (the call then
    sweeps unfolded)."""
    from turbobc._chains import ChainFolding, find_chains
    from turbobc.engines.gpu.engine import GpuEngine, choose_family

    graph = make_graph(nx.to_scipy_sparse_array(nx.grid_2d_graph(3, 60)), directed=False)
    plan = ChainFolding(graph, np.ones(graph.n), find_chains(graph))
    assert plan.folded > 0  # the grid's corners
    deep = Problem(graph, slot_weights=plan)
    family, reason = choose_family(deep, 100)
    assert family.name == "frontiers" and "predicted cheapest" in reason
    with turbobc.tuning(gpu_family="frontiers"):
        assert choose_family(deep, 100)[0].name == "frontiers"
    with turbobc.tuning(gpu_family="lanes"):
        assert choose_family(deep, 100)[0].name == "lanes"
    assert choose_family(deep, 1)[0].name == "lanes"
    with turbobc.tuning(gpu_family="layers"):
        assert "layers family" in GpuEngine().can_serve(deep)


def test_depth_estimate():
    """The eccentricity of the vertex of largest degree: a path from its middle, a grid from
    a border vertex of degree 3 ... checked against networkx."""
    for G in (nx.path_graph(11), nx.grid_2d_graph(7, 9), nx.karate_club_graph(),
              nx.gnp_random_graph(80, 0.05, seed=1, directed=True)):
        directed = G.is_directed()
        A = nx.to_scipy_sparse_array(G, nodelist=list(G))
        graph = make_graph(A, directed)
        hub = list(G)[int(np.argmax(graph.out_degree))]
        want = max(nx.single_source_shortest_path_length(G, hub).values())
        assert graph.depth_estimate == want
    assert make_graph(nx.to_scipy_sparse_array(nx.empty_graph(3)), False).depth_estimate == 0


@gpu
def test_the_profile_build_records_the_levels_of_its_source():
    """Tuning.frontier_kernel = {"PROFILE": 1} (bench/frontier_profile.py): block 0's record
    is its first source's breadth-first levels (vertices and their out-edges per
    level, forward and backward) and the sums are those of the plain kernel (to the last
    bits that the atomics leave to chance). Block 0 takes whichever source is left when it
    starts (an atomic counter: on a device other processes share, block 1 may start first),
    and the record names it."""
    import scipy.sparse.csgraph as csgraph

    G = nx.grid_2d_graph(9, 13)
    A = nx.to_scipy_sparse_array(G, format="csr")
    # two sources (one would run on the single family)
    sources = [40, 100]
    with turbobc.tuning(gpu_family="frontiers"):
        plain = run_bc(A, engine="gpu", sources=sources)
    with turbobc.tuning(gpu_family="frontiers", frontier_kernel={"PROFILE": 1}):
        profiled = run_bc(A, engine="gpu", sources=sources)
    assert profiled.facts["family"] == "frontiers", profiled.facts
    # (σ̂ is summed with atomics: the order, so the last bit, may differ from run to run)
    np.testing.assert_allclose(profiled.values, plain.values, rtol=1e-12, atol=0)
    levels = profiled.facts["level_profile"]
    source = levels["source"]
    assert source in sources, levels
    depth_of = csgraph.shortest_path(A, indices=source, unweighted=True).astype(int)
    degree = np.diff(A.indptr)
    depth = int(depth_of.max())
    assert levels["depth"] == depth and levels["cycles"] > 0
    want = [[int((depth_of == d).sum()), int(degree[depth_of == d].sum())]
            for d in range(depth + 1)]
    assert [row[1:] for row in levels["forward"]] == want
    assert [row[1:] for row in levels["backward"][1:]] == want[1:depth]
    assert all(row[0] > 0 for row in levels["forward"])
