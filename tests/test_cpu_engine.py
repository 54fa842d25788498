"""What only the compiled CPU engine has (turbobc/engines/cpu/): its two ways of sweeping
(64-source lanes and sources alone) agree, its sums do not depend on the threads, its memory
plan and errors, its knobs, its pair sampler against the host reference, and its facts. The
oracle grid (tests/conftest.py: ``cpu``, ``cpu-alone``) checks it against networkx."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
from graph_cases import GRAPH_CASES
from turbobc._api import run_bc
from turbobc._graph import Graph
from turbobc._pairs import PathCountOverflow, reference_counts
from turbobc.engines import engine_named, resolve_engine
from turbobc.engines.cpu import memory
from turbobc.engines.cpu.engine import breadth_first_rank
from turbobc.engines.cpu.pair_sampler import CpuPairSampler
from turbobc.engines.cpu.threads import compute_threads
from turbobc.engines.protocol import Problem


def _pattern(G) -> sp.csr_array:
    A = sp.csr_array(nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr"))
    A.setdiag(0)
    A.eliminate_zeros()
    A.data[:] = 1.0
    A.sort_indices()
    return A


@pytest.mark.parametrize("name", ["karate", "les_miserables", "grid_6x7", "digraph_gnp",
                                  "two_components_isolated", "scale_free_directed"])
def test_lanes_and_sources_alone_agree(name):
    """The 64-lane batches and the walks of one source give the same sums, with τ, ω and
    endpoint terms (the folded trees' weights), over sources in any order."""
    G = GRAPH_CASES[name]()
    A = _pattern(G)
    graph = Graph(pattern=A, directed=G.is_directed())
    rng = np.random.default_rng(len(name))
    tau, omega = rng.random(graph.n), rng.integers(1, 4, graph.n).astype(float)
    sources = rng.permutation(graph.n)[: max(1, 2 * graph.n // 3)]
    for endpoints in (False, True):
        problem = Problem(graph, endpoints=endpoints, target_weight=tau, source_weight=omega)
        sums = []
        for lanes in (True, False):
            with turbobc.tuning(cpu_lanes=lanes), engine_named("cpu").open(problem) as sweeper:
                sums.append(sweeper.run(sources).vertex)
        np.testing.assert_allclose(sums[0], sums[1], rtol=1e-12, atol=1e-12)
        assert np.abs(sums[0]).max() > 0


def test_lanes_serve_shallow_graphs_only():
    """"auto" takes lanes on a shallow graph and sources alone on a deep one; edge sums and
    lengths always walk sources alone."""
    def lanes_taken(A, **kwargs) -> bool:
        return run_bc(A, engine="cpu", **kwargs).facts["lanes"]

    shallow = nx.to_scipy_sparse_array(nx.karate_club_graph(), format="csr")
    deep = nx.to_scipy_sparse_array(nx.cycle_graph(120), format="csr")  # depth 60
    assert lanes_taken(shallow) and not lanes_taken(deep)
    with turbobc.tuning(cpu_lanes_max_depth=100):
        assert lanes_taken(deep)
    assert not lanes_taken(shallow, weight=True)
    assert not turbobc.run_edge_bc(shallow, engine="cpu").facts.get("lanes")
    with turbobc.tuning(cpu_lanes=False):
        assert not lanes_taken(shallow)
    # a run of fewer sources than Tuning.cpu_lanes_min_sources walks them alone
    assert not lanes_taken(shallow, sources=list(range(15)))
    assert lanes_taken(shallow, sources=list(range(16)))
    with turbobc.tuning(cpu_lanes_min_sources=1):
        assert lanes_taken(shallow, sources=[0])


@pytest.mark.parametrize("bad", ["yes", 2, None])
def test_bad_lanes_knob_is_refused(bad):
    A = nx.to_scipy_sparse_array(nx.karate_club_graph(), format="csr")
    with turbobc.tuning(cpu_lanes=bad):
        with pytest.raises(ValueError, match="^Tuning.cpu_lanes must be True, False or "
                                             f"'auto'; got {bad!r}$"):
            turbobc.bc(A, engine="cpu")


def test_breadth_first_rank_and_depth():
    """Every vertex ranked once, each component from its least vertex; the depth is the
    deepest level of that order."""
    A = _pattern(nx.disjoint_union(nx.path_graph(5), nx.star_graph(3)))
    rank, depth = breadth_first_rank(A.indptr.astype(np.int64), A.indices)
    assert sorted(rank.tolist()) == list(range(9)) and depth == 4
    assert rank[:5].tolist() == [0, 1, 2, 3, 4] and rank[5] == 5


@pytest.mark.parametrize("kind", ["unweighted", "weighted", "edges"])
def test_sums_do_not_depend_on_the_threads(kind):
    """Chunks add their sums in chunk order: one thread and every thread give the same bits."""
    G = nx.gnp_random_graph(300, 0.03, seed=4)
    rng = np.random.default_rng(1)
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.integers(1, 6))
    A = nx.to_scipy_sparse_array(G, format="csr")
    call = {"unweighted": lambda: turbobc.bc(A, engine="cpu"),
            "weighted": lambda: turbobc.bc(A, weight=True, engine="cpu"),
            "edges": lambda: turbobc.edge_bc(A, engine="cpu").toarray()}[kind]
    with turbobc.tuning(cpu_threads=1):
        one = call()
    with turbobc.tuning(cpu_threads=3):
        np.testing.assert_array_equal(call(), one)


def test_memory_plan_and_its_error():
    """The chunks in flight follow the budget; a budget below one chunk raises before any
    work, saying what one chunk needs."""
    G = nx.gnp_random_graph(200, 0.05, seed=2)
    A = nx.to_scipy_sparse_array(G, format="csr")
    graph = Graph(pattern=sp.csr_array(A), directed=False)
    fixed = memory.fixed_bytes(graph, False)
    one = memory.chunk_bytes(graph, 4, False)
    assert one == memory.BYTES_PER_VERTEX * 200
    assert memory.plan_chunks(graph, 4, 2, 200, fixed + 3 * one) == 3
    assert memory.plan_chunks(graph, 4, 2, 200, 10**12) == memory.CHUNKS_PER_THREAD * 2
    assert memory.plan_chunks(graph, 4, 64, 10, 10**12) == 3  # no more than the sources
    need = fixed + one
    with pytest.raises(MemoryError, match=r"^the cpu engine needs about .* for one chunk of "
                                          r"sources \(n=200, \d+ stored edges: .* for the "
                                          r"graph and the sums, .* per chunk in flight\), but "
                                          r"memory_limit is .*; raise memory_limit$"):
        memory.plan_chunks(graph, 4, 2, 200, need - 1)
    with turbobc.tuning(fold_trees=False):
        with pytest.raises(MemoryError, match="the cpu engine needs about"):
            turbobc.bc(A, engine="cpu", memory_limit=need - 1)
        small = run_bc(A, engine="cpu", memory_limit=need)
    want = nx.betweenness_centrality(G)
    np.testing.assert_allclose(small.values, [want[v] for v in G], rtol=1e-12, atol=1e-15)


def test_slot_capacity_and_its_error():
    graph = Graph(pattern=_pattern(nx.cycle_graph(50)), directed=False)
    per_slot = memory.SLOT_BYTES_PER_VERTEX * 50
    fixed = memory.fixed_bytes(graph, False)
    assert memory.slot_capacity(graph, fixed + 7 * per_slot) == 7
    with pytest.raises(MemoryError, match=r"^the cpu engine needs about .* for one slot of "
                                          r"chain folding \(n=50: 64 bytes per vertex and "
                                          r"slot\), but memory_limit is"):
        memory.slot_capacity(graph, fixed + per_slot - 1)


def test_kernel_is_refused_and_auto_picks_cpu():
    A = nx.to_scipy_sparse_array(nx.karate_club_graph(), format="csr")
    graph = Graph(pattern=sp.csr_array(A), directed=False)
    assert engine_named("cpu").can_serve(Problem(graph, kernel="vecsc")) == (
        "kernel='vecsc' names a GPU kernel; the cpu engine takes kernel='auto'")
    with pytest.raises(ValueError, match="^engine='cpu' cannot run this: kernel='vecsc' names "
                                         "a GPU kernel; the cpu engine takes kernel='auto'; "
                                         "pass engine='gpu' or 'auto' instead$"):
        turbobc.bc(A, engine="cpu", kernel="vecsc")
    if engine_named("gpu").can_serve(Problem(graph)) is not None:
        assert resolve_engine("auto", Problem(graph)).name == "cpu"


def test_facts_of_a_run():
    A = nx.to_scipy_sparse_array(nx.karate_club_graph(), format="csr")
    facts = run_bc(A, engine="cpu").facts
    assert facts["engine"] == "cpu" and facts["threads"] == compute_threads()
    assert facts["lanes"] and facts["wide_sources"] == 0 and facts["rounds"] >= 1


@pytest.mark.parametrize("name", ["karate", "grid_6x7", "digraph_gnp", "two_components_isolated",
                                  "dag", "scale_free_directed"])
@pytest.mark.parametrize("endpoints", [False, True])
def test_pair_sampler_equals_the_host_reference(name, endpoints):
    """The compiled sampler draws the same pairs and paths as turbobc._pairs.reference_counts,
    sample for sample, whatever the blocks."""
    G = GRAPH_CASES[name]()
    A = _pattern(G)
    graph = Graph(pattern=A, directed=G.is_directed())
    want = reference_counts(A, graph.directed, 77, 5, 300, endpoints=endpoints)
    for threads in (1, 3):
        sampler = CpuPairSampler(graph, endpoints=endpoints, threads=threads)
        got = sampler(77, 5, 100) + 0  # a copy: the running total grows
        np.testing.assert_array_equal(sampler(77, 105, 200), want)
        assert got.sum() <= want.sum()


def test_pair_sampler_overflow_names_the_sample():
    """2,200 diamonds: a pair at the two ends meets in the middle past 1,024 doublings on each
    side; the sampler raises as the reference does, naming the sample and its root."""
    from test_pairs import _diamond_chain, _far_sample

    A = _diamond_chain(2200)
    graph = Graph(pattern=_pattern(nx.from_scipy_sparse_array(A)), directed=False)
    sample = _far_sample(graph.n, 0, 3 * 2150)
    with pytest.raises(PathCountOverflow) as reference:
        reference_counts(graph.pattern, False, 0, sample, 1)
    sampler = CpuPairSampler(graph, threads=2)
    with pytest.raises(PathCountOverflow, match=f"^{reference.value}$"):
        sampler(0, sample, 1)


def test_approximate_runs_sample_pairs_on_the_cpu():
    """``epsilon=`` on the cpu engine samples shortest paths (its compiled sampler) on an
    unweighted graph where Hoeffding's size for pairs is small, and the guarantee holds."""
    G = nx.barabasi_albert_graph(3000, 3, seed=2)
    A = nx.to_scipy_sparse_array(G, format="csr")
    exact = turbobc.bc(A, engine="cpu")
    result = run_bc(A, epsilon=0.05, seed=1, engine="cpu")
    assert result.facts["sampler"] == "pairs" and result.facts["engine"] == "cpu"
    assert np.max(np.abs(result.values - exact)) <= 0.05
    again = run_bc(A, epsilon=0.05, seed=1, engine="cpu")
    np.testing.assert_array_equal(again.values, result.values)
