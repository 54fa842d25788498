"""The weights of the accumulate step are data: the target weight τ in
δ(v) = Σ_w σ(v)/σ(w) · (τ(w) + δ(w)) and the source weight ω that multiplies every term a
source adds. Every engine and kernel takes them (spmv/kernels/accumulate.cuh); all ones
gives exactly what no weight gives, τ = [w ∈ T] gives networkx's
betweenness_centrality_subset, and ω gives the ω-weighted sum of single-source sweeps."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from graph_cases import GRAPH_CASES
from turbobc._graph import Graph
from turbobc._run import run_schedule
from turbobc.engines import engine_named
from turbobc.engines.protocol import Problem
from turbobc.engines.wide import accumulate_wide

# the deep grid (80 levels, the longest here on the CPU) runs with the slow tests
CASES = ["karate", "les_miserables", "grid_6x7",
         pytest.param("grid_deep_2x40", marks=pytest.mark.slow), "barbell", "random_tree",
         "gnp_sparse_isolated", "two_components_isolated", "self_loops", "digraph_gnp",
         "digraph_sparse_unreachable", "dag", "scale_free_directed", "directed_self_loops"]


def _graph(name):
    G = GRAPH_CASES[name]()
    A = sp.csr_array(nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr"))
    A.setdiag(0)  # the pattern turbobc sweeps: no self-loops, no stored zeros
    A.eliminate_zeros()
    A.data[:] = 1.0
    return G, Graph(pattern=A, directed=G.is_directed())


def _subset_oracle(G, sources, targets):
    """Raw Σ_{s∈S} Σ_{t∈T} σ_st(v)/σ_st from networkx (which halves it when undirected)."""
    nodes = list(G)
    bc = nx.betweenness_centrality_subset(G, [nodes[s] for s in sources],
                                          [nodes[t] for t in targets], normalized=False)
    scale = 1.0 if G.is_directed() else 2.0
    return np.array([bc[v] * scale for v in nodes])


def _raw(engine, kernel, graph, sources, tau, omega=None, endpoints=False):
    problem = Problem(graph, kernel=kernel, target_weight=tau, source_weight=omega,
                      endpoints=endpoints)
    total, _ = run_schedule(problem, engine_named(engine), [np.asarray(sources)])
    return total.vertex


@pytest.mark.parametrize("name", CASES)
def test_all_ones_is_no_weight(engine_config, name):
    engine, kernel = engine_config
    G, graph = _graph(name)
    sources = np.arange(graph.n)
    for endpoints in (False, True):
        plain = _raw(engine, kernel, graph, sources, None, endpoints=endpoints)
        ones = _raw(engine, kernel, graph, sources, np.ones(graph.n), np.ones(graph.n),
                    endpoints=endpoints)
        if engine == "gpu":
            # the batched kernels add lanes with atomics in no fixed order, and the
            # frontiers' blocks take the sources in no fixed order (each block sums its own
            # row), so two GPU runs of the same problem may differ in the last bits
            # (measured: 1 ulp, H100; 4.03 eps on a 2 x 40 grid's frontiers, H200)
            np.testing.assert_allclose(ones, plain, rtol=8 * np.finfo(float).eps, atol=0)
        else:
            np.testing.assert_array_equal(ones, plain)


@pytest.mark.parametrize("name", CASES)
def test_indicator_weight_is_networkx_subset_betweenness(engine_config, name):
    engine, kernel = engine_config
    G, graph = _graph(name)
    rng = np.random.default_rng(len(name))
    n = graph.n
    for num_sources in (1, max(2, n // 3), n):  # one source (the single family on the GPU)
        sources = rng.choice(n, size=num_sources, replace=False)
        targets = rng.choice(n, size=max(1, n // 4), replace=False)
        tau = np.zeros(n)
        tau[targets] = 1.0
        got = _raw(engine, kernel, graph, sources, tau)
        want = _subset_oracle(G, sources, targets)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name}: {num_sources} sources")


def _single_source_oracle(G, s):
    """Raw δ_s from networkx: the subset BC of the one source s against every target."""
    return _subset_oracle(G, [s], range(G.number_of_nodes()))


@pytest.mark.parametrize("name", CASES)
def test_source_weight_scales_each_sources_terms(engine_config, name):
    engine, kernel = engine_config
    G, graph = _graph(name)
    n = graph.n
    rng = np.random.default_rng(7 + len(name))
    omega = rng.integers(1, 6, size=n).astype(np.float64)  # vertex counts, as reductions use
    for num_sources in (1, n):
        sources = rng.choice(n, size=num_sources, replace=False)
        want = sum(omega[s] * _single_source_oracle(G, s) for s in sources)
        got = _raw(engine, kernel, graph, sources, None, omega)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name}: {num_sources} sources")
        # with endpoints: the same as ω-weighting each source's own run
        with_ends = _raw(engine, kernel, graph, sources, None, omega, endpoints=True)
        each = sum(omega[s] * _raw("graphblas", "auto", graph, [s], None, endpoints=True)
                   for s in sources)
        np.testing.assert_allclose(with_ends, each, rtol=1e-12, atol=1e-12)


def test_fractional_weights_are_linear(cpu_engine):
    """τ = a τ1 + b τ2 gives a · δ(τ1) + b · δ(τ2): the step is linear in τ."""
    G, graph = _graph("les_miserables")
    rng = np.random.default_rng(3)
    tau1, tau2 = rng.random(graph.n), rng.random(graph.n)
    sources = np.arange(graph.n)
    both = _raw(cpu_engine, "auto", graph, sources, 0.25 * tau1 + 3.0 * tau2)
    each = (0.25 * _raw(cpu_engine, "auto", graph, sources, tau1)
            + 3.0 * _raw(cpu_engine, "auto", graph, sources, tau2))
    np.testing.assert_allclose(both, each, rtol=1e-11)
    assert np.abs(both).max() > 0


@pytest.mark.parametrize("name", ["karate", "grid_6x7", "digraph_gnp", "dag"])
def test_wide_sweep_takes_the_same_weights(name):
    """The exponent-per-vertex sweep (turbobc.engines.wide) applies τ and ω as the engines
    do."""
    G, graph = _graph(name)
    rng = np.random.default_rng(1)
    tau = (rng.random(graph.n) < 0.3).astype(np.float64)
    sources = np.arange(graph.n)
    raw = np.zeros(graph.n)
    pattern = graph.pattern
    accumulate_wide(np, pattern.indptr, pattern.indices, graph.n, sources, raw,
                    endpoints=False, target_weight=tau)
    np.testing.assert_allclose(raw, _subset_oracle(G, sources, np.flatnonzero(tau)),
                               rtol=1e-12, atol=1e-12)
    omega = rng.integers(1, 4, size=graph.n).astype(np.float64)
    for endpoints in (False, True):
        raw = np.zeros(graph.n)
        accumulate_wide(np, pattern.indptr, pattern.indices, graph.n, sources, raw,
                        endpoints=endpoints, target_weight=tau, source_weight=omega)
        want = _raw("graphblas", "auto", graph, sources, tau, omega, endpoints=endpoints)
        np.testing.assert_allclose(raw, want, rtol=1e-12, atol=1e-12)
