"""Exact tables for tiny graphs (worked out by hand), edge cases of the contract, and the
normalization function against networkx's own."""

from __future__ import annotations

from contextlib import nullcontext

import inspect
import math
import random

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from networkx.algorithms.centrality.betweenness import _rescale as nx_rescale

import turbobc
from turbobc._rescale import rescale


def _undirected(n, edges):
    rows = [u for u, v in edges] + [v for u, v in edges]
    cols = [v for u, v in edges] + [u for u, v in edges]
    return sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(n, n))


def _directed(n, edges):
    rows, cols = zip(*edges)
    return sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(n, n))


PATH4 = _undirected(4, [(0, 1), (1, 2), (2, 3)])
STAR5 = _undirected(5, [(0, 1), (0, 2), (0, 3), (0, 4)])
CYCLE4 = _undirected(4, [(0, 1), (1, 2), (2, 3), (3, 0)])
DIAMOND = _undirected(4, [(0, 1), (0, 2), (1, 3), (2, 3)])
PATH3 = _undirected(3, [(0, 1), (1, 2)])
DIPATH3 = _directed(3, [(0, 1), (1, 2)])
K2 = _undirected(2, [(0, 1)])

# (matrix, keyword arguments, expected), every value counted by hand from the definition:
# unnormalized undirected BC counts unordered pairs {s, t} with the fraction of their
# shortest paths through v; normalized divides by (n-1)(n-2)/2 (undirected) or
# (n-1)(n-2) (directed); with endpoints, n(n-1)/2 resp. n(n-1).
EXACT_TABLES = {
    "path4": (PATH4, {"normalized": False}, [0, 2, 2, 0]),
    "path4_normalized": (PATH4, {}, [0, 2 / 3, 2 / 3, 0]),
    "star5_center": (STAR5, {"normalized": False}, [6, 0, 0, 0, 0]),
    "star5_normalized": (STAR5, {}, [1, 0, 0, 0, 0]),
    "cycle4_split_paths": (CYCLE4, {"normalized": False}, [0.5, 0.5, 0.5, 0.5]),
    "diamond": (DIAMOND, {"normalized": False}, [0.5, 0.5, 0.5, 0.5]),
    "directed_path3": (DIPATH3, {"normalized": False}, [0, 1, 0]),
    "directed_path3_normalized": (DIPATH3, {}, [0, 0.5, 0]),
    "path3_endpoints": (PATH3, {"normalized": False, "endpoints": True}, [2, 3, 2]),
    "path3_endpoints_normalized": (PATH3, {"endpoints": True}, [2 / 3, 1, 2 / 3]),
    "k2_endpoints": (K2, {"endpoints": True}, [1, 1]),
    "k2": (K2, {}, [0, 0]),
    "path4_sources_0": (PATH4, {"sources": [0], "normalized": False}, [0, 1, 0.5, 0]),
}


@pytest.mark.parametrize("name", sorted(EXACT_TABLES))
def test_exact_tables(name, engine_config):
    engine, kernel = engine_config
    A, kwargs, expected = EXACT_TABLES[name]
    got = turbobc.bc(A, engine=engine, kernel=kernel, **kwargs)
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-15)


def test_input_cleaning_self_loops_duplicates_and_stored_zeros(engine_config):
    """Self loops, repeated entries, explicit zeros and arbitrary values leave path 0-1-2."""
    engine, kernel = engine_config
    rows = [0, 1, 1, 2, 0, 1, 1, 0, 2]
    cols = [1, 0, 2, 1, 1, 1, 2, 2, 0]
    vals = [5, -1, 2, 7, 3, 9, 0.5, 0, 0]  # (0,1) twice, a self loop at 1, (0,2)/(2,0) stored 0
    A = sp.coo_array((vals, (rows, cols)), shape=(3, 3))
    got = turbobc.bc(A, normalized=False, engine=engine, kernel=kernel)
    np.testing.assert_array_equal(got, [0.0, 1.0, 0.0])


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dok", "bsr", "dia"])
@pytest.mark.parametrize("kind", ["array", "matrix"])
def test_every_scipy_format_and_kind(fmt, kind):
    A = nx.to_scipy_sparse_array(nx.karate_club_graph(), format="csr")
    expected = turbobc.bc(A, engine="graphblas")
    B = sp.csr_matrix(A) if kind == "matrix" else A
    np.testing.assert_array_equal(turbobc.bc(B.asformat(fmt), engine="graphblas"), expected)


@pytest.mark.parametrize("dtype", [bool, np.int8, np.int64, np.uint16, np.float32, np.float64])
def test_value_dtypes_are_ignored(dtype):
    A = PATH4.astype(dtype)
    np.testing.assert_allclose(turbobc.bc(A, engine="graphblas"), [0, 2 / 3, 2 / 3, 0])


def test_dense_numpy_input_is_converted():
    np.testing.assert_allclose(turbobc.bc(PATH4.toarray(), engine="graphblas"),
                               [0, 2 / 3, 2 / 3, 0])


@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("endpoints", [False, True])
@pytest.mark.parametrize("normalized", [False, True])
def test_tiny_graphs_follow_networkx(n, endpoints, normalized):
    for G in (nx.empty_graph(n), nx.complete_graph(n), nx.complete_graph(n, nx.DiGraph)):
        A = (nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr") if n
             else sp.csr_array((0, 0)))
        got = turbobc.bc(A, normalized=normalized, endpoints=endpoints, engine="graphblas",
                         directed=G.is_directed())
        expected = nx.betweenness_centrality(G, normalized=normalized, endpoints=endpoints)
        assert got.dtype == np.float64 and got.shape == (n,)
        np.testing.assert_array_equal(got, [expected[v] for v in G])


def test_signature_mirrors_networkx():
    ours = inspect.signature(turbobc.bc).parameters
    theirs = inspect.signature(nx.betweenness_centrality).parameters
    for name in ("k", "normalized", "endpoints", "seed", "weight"):
        assert ours[name].default == theirs[name].default, name
        assert ours[name].kind is inspect.Parameter.KEYWORD_ONLY
    assert list(ours)[1:] == ["sources", "targets", "k", "seed", "normalized", "endpoints",
                              "directed", "engine", "kernel", "progress", "memory_limit",
                              "weight", "client", "epsilon", "delta"]
    subset = inspect.signature(nx.betweenness_centrality_subset).parameters
    assert list(subset)[1:3] == ["sources", "targets"]  # networkx's names for the subset


def test_seed_forms_sample_like_networkx():
    G = nx.gnp_random_graph(30, 0.15, seed=2)
    A = nx.to_scipy_sparse_array(G, format="csr")
    expected = nx.betweenness_centrality(G, k=7, seed=random.Random(5))
    np.testing.assert_allclose(turbobc.bc(A, k=7, seed=random.Random(5), engine="graphblas"),
                               [expected[v] for v in G], rtol=1e-12)
    state = random.getstate()
    expected = nx.betweenness_centrality(G, k=7, seed=None)
    random.setstate(state)
    np.testing.assert_allclose(turbobc.bc(A, k=7, engine="graphblas"),
                               [expected[v] for v in G], rtol=1e-12)
    expected = nx.betweenness_centrality(G, k=7, seed=np.random.RandomState(3))
    np.testing.assert_allclose(turbobc.bc(A, k=7, seed=np.random.RandomState(3),
                                          engine="graphblas"),
                               [expected[v] for v in G], rtol=1e-12)


def test_k_equal_n_is_exact_and_draws_nothing():
    A = nx.to_scipy_sparse_array(nx.petersen_graph(), format="csr")
    rng = random.Random(1)
    before = rng.getstate()
    np.testing.assert_array_equal(turbobc.bc(A, k=10, seed=rng, engine="graphblas"),
                                  turbobc.bc(A, engine="graphblas"))
    assert rng.getstate() == before


def test_sources_partition_adds_up_to_exact():
    A = nx.to_scipy_sparse_array(nx.les_miserables_graph(), format="csr")
    n = A.shape[0]
    parts = [turbobc.bc(A, sources=range(start, n, 4), normalized=False, engine="graphblas")
             for start in range(4)]
    # (atol: exact BC folds chain sources; a sum that cancels to 0 there is 1e-15 here)
    np.testing.assert_allclose(sum(parts), turbobc.bc(A, normalized=False, engine="graphblas"),
                               rtol=1e-12, atol=1e-12)


def test_progress_bar_counts_sources(capsys, monkeypatch):
    from turbobc import _progress

    A = nx.to_scipy_sparse_array(nx.karate_club_graph(), format="csr")
    turbobc.bc(A, progress=True, engine="graphblas")
    assert capsys.readouterr().err == ""  # a quick run: the bar waits a second, then ends
    monkeypatch.setattr(_progress, "DELAY_SECONDS", 0.0)
    turbobc.bc(A, progress=True, engine="graphblas")
    err = capsys.readouterr().err
    assert "34/34" in err and "src" in err


def test_no_progress_output_by_default(capsys):
    turbobc.bc(PATH4, engine="graphblas")
    assert capsys.readouterr().err == ""


# ---- the normalization function against networkx's _rescale --------------------------------

RESCALE_SIZES = [(n, k) for n in (1, 2, 3, 4, 17) for k in (None, 1, 2, n - 1)
                 if k is None or 1 <= k <= n]


@pytest.mark.parametrize(("n", "k"), RESCALE_SIZES)
@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("endpoints", [False, True])
def test_rescale_equals_networkx(n, k, normalized, directed, endpoints):
    raw = np.random.default_rng(n).random(n) * 10
    sampled = None if k is None else np.random.default_rng(k).choice(n, size=k, replace=False)
    expected = nx_rescale(dict(enumerate(raw.tolist())), n, normalized=normalized,
                          directed=directed, endpoints=endpoints,
                          sampled_nodes=None if sampled is None else sampled.tolist())
    # networkx's 0/0 for the source when k = 1 (and there are pairs to scale): we warn why
    nan_source = k == 1 and not endpoints and n - 1 >= 2
    with pytest.warns(RuntimeWarning, match="k=1") if nan_source else nullcontext():
        got = rescale(raw, normalized=normalized, directed=directed, endpoints=endpoints,
                      sampled_sources=sampled)
    np.testing.assert_array_equal(got, [expected[i] for i in range(n)])


def test_rescale_does_not_modify_its_input():
    raw = np.arange(5.0)
    rescale(raw, normalized=True, directed=False, endpoints=False)
    np.testing.assert_array_equal(raw, np.arange(5.0))


def test_rescale_k1_source_is_nan():
    with pytest.warns(RuntimeWarning, match=r"k=1 .* NaN, as networkx returns it"):
        got = rescale(np.ones(5), normalized=True, directed=True, endpoints=False,
                      sampled_sources=np.array([2]))
    assert math.isnan(got[2]) and np.isfinite(np.delete(got, 2)).all()
