"""Whether a pattern is symmetric decides whether a graph is undirected (``directed=None``), so
the device's test must agree with the host's on every pattern: the two graphs a fuzz found
judged asymmetric on the GPU (issue 31), a property over random patterns, and networkx's
undirected values through ``directed=None`` on every undirected graph of the engine grid."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
import turbobc._validation as validation
from graph_cases import GRAPH_CASES, adjacency

FUZZ_SEEDS = (416477, 268722)  # nx.gnp_random_graph(33, 0.06, seed): row 0 and others empty


def _canonical(A) -> sp.csr_array:
    """The canonical pattern validation hands the symmetry test (sorted, no duplicates, no
    diagonal, ones)."""
    return validation._pattern_graph(sp.csr_array(A), True).pattern


def _host_missing(pattern: sp.csr_array) -> int:
    """Stored edges whose reverse is not stored, counted by scipy (the independent oracle)."""
    return int(((pattern - pattern.T) > 0).count_nonzero())


def random_pattern(rng: np.random.Generator) -> sp.csr_array:
    """A random canonical pattern: 1 to 10,000 vertices, some isolated (empty first and last
    rows among them), undirected or directed, symmetric with one arc dropped or added."""
    n = int(rng.choice([1, 2, 3, 31, 32, 33, 63, 65, 97, 1000, 4097, 10_000]))
    density = float(rng.choice([0.0, 0.5, 2.0, 6.0])) / max(n, 1)
    m = rng.binomial(n * n, min(density, 1.0)) if n > 1 else 0
    rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
    isolated = rng.random(n) < rng.choice([0.0, 0.1, 0.5])
    isolated[[0, n - 1]] |= rng.random(2) < 0.5  # empty first or last rows
    keep = ~(isolated[rows] | isolated[cols])
    rows, cols = rows[keep], cols[keep]
    kind = rng.choice(["undirected", "directed", "one arc dropped", "one arc added"])
    if kind != "directed":
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
    A = _canonical(sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n)))
    if kind == "one arc dropped" and A.nnz:
        k = int(rng.integers(A.nnz))
        A = A.tolil()
        A[np.searchsorted(A.tocsr().indptr, k, side="right") - 1, A.tocsr().indices[k]] = 0
        A = _canonical(A.tocsr())
    elif kind == "one arc added" and n > 1:
        i, j = rng.choice(n, 2, replace=False)
        A = _canonical(A + sp.csr_array(([1.0], ([i], [j])), shape=(n, n)))
    return A


def test_random_patterns_cover_the_cases():
    """The generator reaches what the property needs: empty first and last rows, n not a
    multiple of 32, symmetric and asymmetric patterns."""
    rng = np.random.default_rng(0)
    patterns = [random_pattern(rng) for _ in range(300)]
    degrees = [np.diff(A.indptr) for A in patterns if A.shape[0] > 1]
    assert any(d[0] == 0 and A.nnz for d, A in zip(degrees, patterns[1:]))
    assert any(d[-1] == 0 for d in degrees)
    assert any(A.shape[0] % 32 for A in patterns)
    missing = [_host_missing(A) for A in patterns]
    assert sum(m == 0 for m in missing) > 50 and sum(m > 0 for m in missing) > 50


def test_has_reverse_against_scipy():
    rng = np.random.default_rng(1)
    for _ in range(40):
        A = random_pattern(rng)
        if not A.nnz:
            continue
        expected = (A.T.tocsr()[A.nonzero()] > 0) if A.nnz else np.zeros(0, bool)
        positions = np.arange(A.nnz)
        np.testing.assert_array_equal(validation._has_reverse(A, positions),
                                      np.asarray(expected).ravel())


def test_a_device_answer_the_host_contradicts_is_not_used(monkeypatch):
    """A wrong count from the device (either way) never decides the direction: the host's
    check of its witness or sample refuses it, and the caller tests on the host."""
    cupy = pytest.importorskip("cupy")
    import spmv._launch

    monkeypatch.setattr(cupy, "asarray", lambda a: a)
    undirected = _canonical(sp.csr_array(nx.to_scipy_sparse_array(nx.path_graph(5))))
    directed = _canonical(sp.csr_array(([1.0], ([0], [1])), shape=(3, 3)))
    monkeypatch.setattr(spmv._launch, "missing_reverse", lambda *a: (3, 0))
    assert validation._missing_reverse_on_device(undirected) is None
    monkeypatch.setattr(spmv._launch, "missing_reverse", lambda *a: (0, -1))
    assert validation._missing_reverse_on_device(directed) is None
    # the direction then comes from the host
    assert not validation._with_direction(undirected, None, on_device=True).directed
    assert validation._with_direction(directed, None, on_device=True).directed


@pytest.mark.gpu
def test_device_count_equals_host_count_on_random_patterns():
    import cupy

    from spmv._launch import missing_reverse
    from turbobc._graph import index_dtype_for

    rng = np.random.default_rng(31)
    for trial in range(400):
        A = random_pattern(rng)
        n, nnz = A.shape[0], A.nnz
        for dtype in (np.dtype(np.int32), np.dtype(np.int64), index_dtype_for(n, nnz)):
            count, first = missing_reverse(cupy.asarray(A.indptr.astype(dtype)),
                                           cupy.asarray(A.indices.astype(dtype)), n, nnz)
            expected = _host_missing(A)
            assert count == expected, (trial, n, nnz, dtype)
            lacking = np.flatnonzero(~validation._has_reverse(A, np.arange(nnz)))
            assert first == (lacking[0] if lacking.size else -1)
        device = validation._with_direction(A, None, on_device=True)
        host = validation._with_direction(A, None, on_device=False)
        assert device.directed == host.directed == (expected > 0)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", FUZZ_SEEDS)
def test_fuzz_graphs_are_undirected_on_the_gpu(seed):
    """The reproducer of issue 31: networkx's values on the GPU, for a networkx graph and its
    scipy matrix, vertex and edge BC, sources and targets, with and without lengths."""
    G = nx.gnp_random_graph(33, 0.06, seed=seed)
    A = nx.to_scipy_sparse_array(G, format="csr")
    expected = nx.betweenness_centrality(G)
    for given in (G, A):
        np.testing.assert_allclose(turbobc.bc(given, engine="gpu"), list(expected.values()),
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(turbobc.bc(given, engine="gpu", normalized=False),
                                   list(nx.betweenness_centrality(G, normalized=False).values()),
                                   rtol=1e-12, atol=1e-15)
    edges = nx.edge_betweenness_centrality(G, normalized=False)
    got = turbobc.edge_bc(A, engine="gpu", normalized=False)
    for (u, v), value in edges.items():
        assert got[u, v] == pytest.approx(value, rel=1e-12)
    sources, targets = [1, 3, 5, 7, 9], [2, 4, 6, 8, 10, 12]
    subset = nx.betweenness_centrality_subset(G, sources, targets, normalized=False)
    np.testing.assert_allclose(turbobc.bc(A, engine="gpu", sources=sources, targets=targets,
                                          normalized=False),
                               list(subset.values()), rtol=1e-12, atol=1e-15)
    weighted = G.copy()
    for k, (u, v) in enumerate(weighted.edges):
        weighted[u][v]["weight"] = 1 + k % 3
    np.testing.assert_allclose(turbobc.bc(weighted, engine="gpu", weight="weight"),
                               list(nx.betweenness_centrality(weighted, weight="weight").values()),
                               rtol=1e-12, atol=1e-15)


UNDIRECTED = sorted(name for name, make in GRAPH_CASES.items() if not make().is_directed())


@pytest.mark.parametrize("name", UNDIRECTED)
def test_directed_none_gives_undirected_values(name, engine_config):
    """A scipy matrix with ``directed=None``: its symmetric pattern is an undirected graph, on
    every engine of the grid (unnormalized values differ by 2 from the digraph's)."""
    engine, kernel = engine_config
    G = nx.Graph(GRAPH_CASES[name]())
    G.remove_edges_from(nx.selfloop_edges(G))
    A = adjacency(G)
    expected = list(nx.betweenness_centrality(G, normalized=False).values())
    np.testing.assert_allclose(turbobc.bc(A, engine=engine, kernel=kernel, normalized=False),
                               expected, rtol=1e-12, atol=1e-12)
