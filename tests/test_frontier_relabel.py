"""The frontiers family's relabeled graph (turbobc/engines/gpu/frontiers_relabel.py), built
with array code, on the CPU (NumPy as the array module): exactly the arrays of the SciPy
relabeling it replaced, on random directed and undirected patterns, with isolated vertices,
without edges, with one vertex and with int64 indices."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from turbobc._graph import Graph
from turbobc.engines.gpu.frontiers_relabel import (_row_major_order, inverse_permutation,
                                                   relabeled_csr)
from turbobc.engines.gpu.lanes_order import locality_order


def scipy_relabeled(pattern: sp.csr_array, rank: np.ndarray, index_dtype):
    """The SciPy relabeling ``_Labels`` ran on the host before (the reference): the entries'
    positions (one more, so that none is a stored zero) ride along ``A[perm][:, perm]``."""
    perm = np.argsort(rank, kind="stable")
    positions = sp.csr_array((np.arange(1, pattern.nnz + 1, dtype=np.int64), pattern.indices,
                              pattern.indptr), shape=pattern.shape)
    B = sp.csr_array(positions[perm][:, perm])
    B.sort_indices()
    return B.indptr.astype(index_dtype), B.indices.astype(index_dtype), B.data - 1


def random_pattern(n: int, density: float, directed: bool, seed: int, *, isolated: int = 0,
                   index_dtype=np.int32) -> sp.csr_array:
    """A canonical pattern (no diagonal; symmetric when undirected) of ``n`` vertices, the
    last ``isolated`` of them without edges, its index arrays in ``index_dtype``."""
    rng = np.random.default_rng(seed)
    core = n - isolated
    A = sp.random_array((core, core), density=density, rng=rng, format="csr")
    if not directed:
        A = A + A.T
    A = sp.block_diag([A, sp.csr_array((isolated, isolated))], format="csr") if isolated else A
    A = sp.csr_array(A, shape=(n, n))
    A.setdiag(0)
    A.eliminate_zeros()
    A.sort_indices()
    A.data[:] = 1.0
    return sp.csr_array((A.data, A.indices.astype(index_dtype), A.indptr.astype(index_dtype)),
                        shape=(n, n))


def assert_same_relabeling(pattern: sp.csr_array, rank: np.ndarray, index_dtype) -> None:
    got = relabeled_csr(np, pattern.indptr, pattern.indices, rank, index_dtype)
    want = scipy_relabeled(pattern, rank, index_dtype)
    for name, g, w in zip(("ptr", "idx", "edge_of"), got, want):
        assert g.dtype == w.dtype, name
        np.testing.assert_array_equal(g, w, err_msg=name)


CASES = [  # n, density, isolated
    (2, 0.5, 0), (5, 0.4, 0), (17, 0.2, 3), (40, 0.05, 10), (64, 0.1, 0), (200, 0.02, 50),
    (300, 0.01, 0), (513, 0.004, 13),
]


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
@pytest.mark.parametrize("n, density, isolated", CASES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_equals_the_scipy_relabeling(directed, n, density, isolated, index_dtype):
    """Random ranks and the locality orders' ranks, for both index types of the result."""
    for seed in range(4):
        pattern = random_pattern(n, density, directed, seed, isolated=isolated)
        rng = np.random.default_rng(100 + seed)
        assert_same_relabeling(pattern, rng.permutation(n).astype(np.int64), index_dtype)
    graph = Graph(pattern=pattern, directed=directed)
    for order in ("rcm", "bfs", "vertex"):
        assert_same_relabeling(pattern, locality_order(graph, order)[0], index_dtype)


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_int64_indices(directed):
    """A pattern with int64 row pointers and column indices, relabeled into either type."""
    pattern = random_pattern(150, 0.03, directed, 7, isolated=20, index_dtype=np.int64)
    assert pattern.indices.dtype == np.int64 and pattern.indptr.dtype == np.int64
    rank = np.random.default_rng(7).permutation(150).astype(np.int64)
    for index_dtype in (np.int64, np.int32):
        assert_same_relabeling(pattern, rank, index_dtype)
    ptr, idx, _ = relabeled_csr(np, pattern.indptr, pattern.indices, rank)
    assert ptr.dtype == idx.dtype == np.int64  # the default: the type of the indices


@pytest.mark.parametrize("n", [0, 1, 6])
def test_no_edges(n):
    """The empty graph (no vertex), one vertex, and vertices without edges."""
    pattern = sp.csr_array((np.ones(0), np.zeros(0, np.int32), np.zeros(n + 1, np.int32)),
                           shape=(n, n))
    rank = np.arange(n, dtype=np.int64)[::-1].copy()
    assert_same_relabeling(pattern, rank, np.int32)
    ptr, idx, edge_of = relabeled_csr(np, pattern.indptr, pattern.indices, rank)
    assert ptr.tolist() == [0] * (n + 1) and idx.size == edge_of.size == 0


def test_inverse_permutation_is_the_stable_argsort():
    rank = np.random.default_rng(2).permutation(1000).astype(np.int64)
    np.testing.assert_array_equal(inverse_permutation(np, rank), np.argsort(rank, kind="stable"))
    assert inverse_permutation(np, np.zeros(0, np.int64)).size == 0


def test_two_key_sort_past_int64_keys():
    """Past n * n = 2^63 the row-major keys would overflow: the two-key sort gives the same
    order (here for row and column values that the int64 keys still hold)."""
    rng = np.random.default_rng(5)
    rows = np.sort(rng.integers(0, 50, 400))
    cols = rng.permutation(400).astype(np.int64)
    wide = _row_major_order(np, rows, cols, 2**32)  # 2^64 > 2^63: two keys
    np.testing.assert_array_equal(wide, _row_major_order(np, rows, cols, 400))
    np.testing.assert_array_equal(wide, np.lexsort((cols, rows)))


@pytest.mark.parametrize("long_rows", [False, True])
def test_the_host_relabels_when_the_device_is_full(monkeypatch, long_rows):
    """``_relabeled`` (turbobc/engines/gpu/frontiers.py) relabels on the host, and uploads,
    when the device runs out of memory for the temporaries, of the kernel's pass (short
    rows) or of CuPy's sort (rows past RELABEL_SORT_MAX_DEGREE): the same arrays."""
    import sys
    import types

    from turbobc.engines.gpu import frontiers

    class OutOfMemory(Exception):
        pass

    def full(*args, **kwargs):
        raise OutOfMemory("out of memory allocating the relabeled indices")

    device = types.SimpleNamespace(
        asarray=np.asarray, empty=full,
        cuda=types.SimpleNamespace(memory=types.SimpleNamespace(OutOfMemoryError=OutOfMemory)))
    on = []

    def relabel(xp, *args):
        on.append(xp)
        if xp is device:
            raise OutOfMemory("out of memory allocating the keys")
        return relabeled_csr(xp, *args)

    monkeypatch.setitem(sys.modules, "cupy", device)
    monkeypatch.setattr(frontiers, "relabeled_csr", relabel)
    if long_rows:
        monkeypatch.setattr(frontiers, "RELABEL_SORT_MAX_DEGREE", 1)
    pattern = random_pattern(90, 0.05, False, 3, isolated=9)
    rank = np.random.default_rng(3).permutation(90).astype(np.int64)
    got = frontiers._relabeled(pattern, rank, rank, np.dtype(np.int32))
    assert on == ([device, np] if long_rows else [np])
    for g, w in zip(got, scipy_relabeled(pattern, rank, np.int32)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.gpu
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("long_rows", [False, True])
@pytest.mark.parametrize("directed", [False, True])
def test_the_device_relabels_as_scipy_does(index_dtype, long_rows, directed, monkeypatch):
    """On the GPU, spmv/kernels/relabel.cu's pass (rows sorted by insertion, a thread a row)
    and CuPy's sort (rows past RELABEL_SORT_MAX_DEGREE) give SciPy's arrays; and the blocks'
    sums come back in the graph's ids."""
    import cupy

    from spmv._relabel import block_sums
    from turbobc.engines.gpu import frontiers

    if long_rows:
        monkeypatch.setattr(frontiers, "RELABEL_SORT_MAX_DEGREE", 2)
    for seed, (n, isolated) in enumerate([(300, 20), (1, 0), (50, 50)]):
        pattern = random_pattern(n, 0.04, directed, seed, isolated=isolated,
                                 index_dtype=index_dtype)
        rank = np.random.default_rng(seed).permutation(n).astype(np.int64)
        got = frontiers._relabeled(pattern, rank, cupy.asarray(rank), np.dtype(index_dtype))
        for g, w in zip(got, scipy_relabeled(pattern, rank, index_dtype)):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g.get(), w)
        rows = np.random.default_rng(seed).random((3, n))
        out = cupy.empty(n)
        block_sums(cupy.asarray(rows), 3, n, cupy.asarray(rank), out)
        np.testing.assert_allclose(out.get(), rows.sum(axis=0)[rank], rtol=1e-15)
