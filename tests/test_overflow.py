"""Path counts past float64's range (1.8e308) against an exact big-integer Brandes."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
import turbobc.engines.graphblas as graphblas_engine
import turbobc.engines.cpu.engine as cpu_engine
import turbobc.engines.graphblas.sweep as graphblas_sweep
from oracles import exact_single_source_dependencies, networkx_bc


def grid(rows: int, cols: int) -> sp.csr_array:
    """The rows x cols grid graph, vertex (i, j) = i * cols + j."""
    return sp.csr_array(nx.to_scipy_sparse_array(nx.grid_2d_graph(rows, cols),
                                                 nodelist=[(i, j) for i in range(rows)
                                                           for j in range(cols)]))


@pytest.fixture(scope="module")
def grid600():
    A = grid(600, 600)
    sources = [0, 300]  # a corner and the middle of an edge: different scalings per row
    exact, largest = [], []
    for s in sources:
        delta, max_sigma = exact_single_source_dependencies(A.indptr, A.indices, s)
        exact.append(delta)
        largest.append(max_sigma)
    assert largest[0] > 10**358  # from the corner: C(1198, 599) ≈ 9.9e358, past float64
    assert largest[1] < 10**308  # from the edge's middle: within range, never rescaled
    return A, sources, sum(exact)


@pytest.mark.slow
def test_600x600_grid_past_float64_range(grid600, engine_config):
    engine, kernel = engine_config
    A, sources, exact = grid600
    got = turbobc.bc(A, sources=sources, normalized=False, engine=engine, kernel=kernel)
    assert np.isfinite(got).all()
    # undirected: the raw ordered-pair sums are halved
    np.testing.assert_allclose(got, exact / 2, rtol=1e-9, atol=1e-9)


@pytest.mark.slow
def test_plain_float64_would_overflow_here(grid600):
    """The reference is not vacuous: without rescaling the counts become inf and the
    dependencies NaN, as in the paper's code."""
    A, _, _ = grid600
    sigma = np.zeros(A.shape[0])
    sigma[0] = 1.0
    frontier, seen = sigma.copy(), sigma > 0
    with np.errstate(over="ignore", invalid="ignore"):
        while frontier.any():
            frontier = A.T @ frontier
            frontier[seen] = 0
            seen |= frontier != 0
            sigma += frontier
    assert np.isinf(sigma).any()


CPU_ENGINES = [pytest.param("graphblas", id="graphblas"), pytest.param("cpu", id="cpu"),
               pytest.param("cpu-alone", id="cpu-alone")]
"""The CPU engines whose count limits a test can lower: graphblas, and the cpu engine with
its 64-lane batches (which hand a source past the limit to the walks of one source) or
without them."""


def _lower_limits(monkeypatch, engine: str, rescale_exp: int, wide_exp: int | None = None):
    """Lower the engine's count limits (2^rescale_exp, and 2^wide_exp for the wide sweep);
    returns the engine name and the tuning knobs to run it with."""
    if engine == "graphblas":
        monkeypatch.setattr(graphblas_sweep, "RESCALE_ABOVE_EXP", rescale_exp)
        if wide_exp is not None:
            monkeypatch.setattr(graphblas_sweep, "WIDE_RANGE", 2.0**wide_exp)
        return "graphblas", {}
    monkeypatch.setattr(cpu_engine, "RESCALE_ABOVE_EXP", rescale_exp)
    if wide_exp is not None:
        monkeypatch.setattr(cpu_engine, "WIDE_BELOW_EXP", wide_exp)
    return "cpu", {"cpu_lanes": engine == "cpu"}


@pytest.mark.parametrize("engine", CPU_ENGINES)
def test_forced_rescaling_is_exact(monkeypatch, engine):
    """Scaling every level by powers of two (threshold lowered to 2**2) changes nothing:
    the whole batched grid equals networkx."""
    name, knobs = _lower_limits(monkeypatch, engine, 2)
    G = nx.grid_2d_graph(9, 11)
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    for endpoints in (False, True):
        expected = networkx_bc(G, selection="all", normalized=True, endpoints=endpoints)
        with turbobc.tuning(**knobs):
            got = turbobc.bc(A, endpoints=endpoints, engine=name)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------------------------
# Levels whose counts spread past per-level scaling: the exponent-per-vertex sweep (_wide)
# ---------------------------------------------------------------------------------------------

from graph_cases import GRAPH_CASES  # noqa: E402
from oracles import exact_brandes  # noqa: E402

import turbobc.engines.wide as wide_sweep  # noqa: E402
from turbobc.engines.protocol import Partial  # noqa: E402


def grid_pattern(rows: int, cols: int, *, directed: bool = False) -> sp.csr_array:
    """The rows x cols grid, vertex (i, j) = i * cols + j; directed: arcs right and down only
    (from the corner (0, 0) every shortest path of the undirected grid is such a path)."""
    idx = np.arange(rows * cols).reshape(rows, cols)
    tail = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    head = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    if not directed:
        tail, head = np.concatenate([tail, head]), np.concatenate([head, tail])
    return sp.csr_array((np.ones(tail.size), (tail, head)), shape=(rows * cols, rows * cols))


def diamond_chain_beside_path(k: int, *, directed: bool = False) -> sp.csr_array:
    """From vertex 0: a chain of k diamonds (σ doubles at every joint, 2^k at the last) and,
    beside it, a plain path of 2k edges (σ = 1 at every depth); one last vertex t joins the
    two ends, so depth 2k holds σ = 2^k and σ = 1, and σ(t) = 2^k + 1."""
    arcs, joint, nxt = [], 0, 1
    for _ in range(k):
        left, right, after = nxt, nxt + 1, nxt + 2
        arcs += [(joint, left), (joint, right), (left, after), (right, after)]
        joint, nxt = after, nxt + 3
    end = 0
    for _ in range(2 * k):
        arcs.append((end, nxt))
        end, nxt = nxt, nxt + 1
    arcs += [(joint, nxt), (end, nxt)]
    n = nxt + 1
    tail, head = np.array(arcs).T
    if not directed:
        tail, head = np.concatenate([tail, head]), np.concatenate([head, tail])
    return sp.csr_array((np.ones(tail.size), (tail, head)), shape=(n, n))


def loop_free_pattern(G) -> sp.csr_array:
    """The CSR pattern of a networkx graph in ``list(G)`` order, self loops dropped."""
    coo = nx.to_scipy_sparse_array(G, nodelist=list(G), format="coo")
    keep = coo.row != coo.col
    n = len(G)
    return sp.csr_array((np.ones(keep.sum()), (coo.row[keep], coo.col[keep])), shape=(n, n))


def widest_level_spread(sigma: list, dist: list) -> int:
    """log2 of the largest ratio max σ / min σ within one BFS level (exact integers)."""
    by_level: dict = {}
    for count, d in zip(sigma, dist):
        if d >= 0:
            low, high = by_level.get(d, (count, count))
            by_level[d] = (min(low, count), max(high, count))
    return max(high.bit_length() - low.bit_length() for low, high in by_level.values())


def exact_raw(A: sp.csr_array, sources, *, directed: bool, endpoints: bool):
    """Raw ordered-pair sums over ``sources`` from the big-integer Brandes, with networkx's
    endpoint terms, and the widest level spread met."""
    raw, spread = np.zeros(A.shape[0]), 0
    for s in sources:
        delta, sigma, dist = exact_brandes(A.indptr, A.indices, s, directed=directed)
        raw += delta
        spread = max(spread, widest_level_spread(sigma, dist))
        if endpoints:
            reached = np.array(dist) > 0
            raw += reached
            raw[s] += reached.sum()
    return raw, spread


def _check_against_exact(A, sources, *, directed, endpoints, engine_config, expected_raw):
    engine, kernel = engine_config
    got = turbobc.bc(A, sources=sources, normalized=False, endpoints=endpoints,
                     directed=directed, engine=engine, kernel=kernel)
    assert np.isfinite(got).all()
    expected = expected_raw if directed else expected_raw / 2
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module", params=[(600, False), (1100, False), (2500, False),
                                        (1100, True), (3000, True)],
                ids=lambda p: f"k{p[0]}-{'directed' if p[1] else 'undirected'}")
def diamond_case(request):
    k, directed = request.param
    A = diamond_chain_beside_path(k, directed=directed)
    n = A.shape[0]
    # the chain's start, a joint half way, the path's middle and the last vertex
    sources = [0, 3 * (k // 2), 3 * k + k, n - 1]
    expected = {ep: exact_raw(A, sources, directed=directed, endpoints=ep)
                for ep in (False, True)}
    return k, directed, A, sources, expected


@pytest.mark.slow
@pytest.mark.parametrize("endpoints", [False, True], ids=["plain", "endpoints"])
def test_diamond_chain_beside_path(diamond_case, endpoints, engine_config):
    """σ = 2^k and σ = 1 in one level, k up to 3000 (2^3000 is far past float64) next to
    sources whose counts stay small: the batch reruns without the wide ones."""
    k, directed, A, sources, expected = diamond_case
    raw, spread = expected[endpoints]
    assert spread == k  # the reference is not vacuous: one level spans 2^k
    _check_against_exact(A, sources, directed=directed, endpoints=endpoints,
                         engine_config=engine_config, expected_raw=raw)


@pytest.fixture(scope="module", params=[(1100, 1100, False, (0,)), (1000, 1000, True, (0, 1))],
                ids=["1100x1100-undirected-corner", "1000x1000-directed-two-sources"])
def deep_grid(request):
    rows, cols, directed, sources = request.param
    A = grid_pattern(rows, cols, directed=directed)
    raw, spread = exact_raw(A, sources, directed=directed, endpoints=False)
    return A, directed, list(sources), raw, spread


@pytest.mark.slow
def test_deep_grid_from_a_corner(deep_grid, engine_config):
    """A 1100 x 1100 grid from a corner: counts up to about 10^660, and 1 on the border of
    the same level; a directed 1000 x 1000 grid from two corner-side sources."""
    A, directed, sources, raw, spread = deep_grid
    assert spread > 896  # past what per-level scaling holds
    _check_against_exact(A, sources, directed=directed, endpoints=False,
                         engine_config=engine_config, expected_raw=raw)


def wide_sums(xp, A: sp.csr_array, *, endpoints: bool, batch_entries: int):
    """Raw sums of every source from the exponent-per-vertex sweep alone, on ``xp``."""
    n = A.shape[0]
    raw = xp.zeros(n)
    wide_sweep.accumulate_wide(xp, xp.asarray(A.indptr), xp.asarray(A.indices), n,
                               np.arange(n), raw, endpoints=endpoints,
                               batch_entries=batch_entries)
    return raw


@pytest.mark.parametrize("name", sorted(GRAPH_CASES))
def test_wide_sweep_equals_networkx(name):
    """The exponent-per-vertex sweep alone (NumPy), every source, on every graph class of
    the oracle grid, in small batches: networkx's unnormalized sums, endpoints or not."""
    G = GRAPH_CASES[name]()
    n = len(G)
    A = loop_free_pattern(G)
    for endpoints in (False, True):
        raw = wide_sums(np, A, endpoints=endpoints, batch_entries=max(1, 3 * n))
        expected = networkx_bc(G, selection="all", normalized=False, endpoints=endpoints)
        scale = 1.0 if G.is_directed() else 0.5
        np.testing.assert_allclose(raw * scale, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("engine", CPU_ENGINES)
@pytest.mark.parametrize("directed", [False, True])
def test_forced_wide_path_equals_networkx(monkeypatch, directed, engine):
    """With the wide limit lowered to 2^2 (and levels scaled above 2^2) nearly every source
    of a CPU engine goes through the wide sweep: all, sampled and chosen sources still equal
    networkx."""
    name, knobs = _lower_limits(monkeypatch, engine, 2, wide_exp=2)
    G = nx.grid_2d_graph(9, 11)
    if directed:
        G = nx.gnp_random_graph(80, 0.06, seed=5, directed=True)
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    for endpoints in (False, True):
        expected = networkx_bc(G, selection="all", normalized=True, endpoints=endpoints)
        with turbobc.tuning(**knobs):
            got = turbobc.bc(A, endpoints=endpoints, engine=name)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
        expected = networkx_bc(G, selection="k", k=17, seed=3, normalized=False,
                               endpoints=endpoints)
        with turbobc.tuning(**knobs):
            got = turbobc.bc(A, k=17, seed=3, normalized=False, endpoints=endpoints,
                             engine=name)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.gpu
def test_wide_sweep_on_the_device_equals_numpy():
    """The same exponent-per-vertex code on CuPy gives NumPy's sums (to rounding)."""
    import cupy

    for name in ("karate", "grid_6x7", "digraph_gnp", "two_components_isolated"):
        G = GRAPH_CASES[name]()
        n = len(G)
        A = loop_free_pattern(G)
        for endpoints in (False, True):
            host = wide_sums(np, A, endpoints=endpoints, batch_entries=2 * n)
            device = wide_sums(cupy, A, endpoints=endpoints, batch_entries=2 * n)
            np.testing.assert_allclose(device.get(), host, rtol=1e-13, atol=1e-13)


def test_non_finite_sum_raises(monkeypatch):
    """A non-finite raw sum is refused with an error that says so, never returned."""
    def broken(self, sources, progress=None):
        raw = np.zeros(self.problem.graph.n)
        raw[1] = np.inf
        return Partial(vertex=raw, sources=len(sources))

    monkeypatch.setattr(graphblas_engine.GraphblasSweeper, "run", broken)
    with pytest.raises(OverflowError, match="non-finite betweenness sums .* vertex 1"):
        turbobc.bc(grid(3, 3), engine="graphblas")
