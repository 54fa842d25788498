"""Benchmark graphs (docs/benchmarks.md#benchmark-graphs), generated with NumPy/SciPy on the host,
and Kronecker graphs on the GPU with CuPy when one is present.

Every generator returns a canonical symmetric scipy CSR pattern (float64 ones, no diagonal,
no duplicates) of an undirected graph. Names: ``myc<k>``, ``kron<s>``, ``sw<n>``, ``del<s>``,
``rgg<s>``, ``road<k>``, and real graphs by file name (``ego-Facebook`` is the shipped
facebook_combined.txt.gz).

Kronecker graphs from scale :data:`DEVICE_MIN_SCALE` up are sampled and deduplicated on the
device (:func:`kronecker_device`: the same definition, sort-based deduplication, so a
billion-edge graph takes seconds); smaller ones keep the host path, so every graph in the
existing records (kron14 to kron18) is the same sample as before. The device sample comes
from CuPy's generator, so ``kron22`` from the device is a different sample from ``kron22``
from the host, with the same distribution.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from turbobc import read_graph

__all__ = ["graph", "mycielskian", "kronecker", "kronecker_device", "kronecker_arrays",
           "watts_strogatz", "delaunay", "rgg", "road", "read_file", "DATA_DIRS",
           "DEVICE_MIN_SCALE", "device_present"]

ROOT = Path(__file__).resolve().parents[1]
DATA_DIRS = (ROOT / ".gpudata", ROOT / "tests" / "data", ROOT.parent / "shared" / "data",
             ROOT / "turbobc" / "data")
"""Where real graph files are looked for, in order."""


def _canonical(rows, cols, n) -> sp.csr_array:
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    A = sp.coo_array((np.ones(2 * rows.size), (np.concatenate([rows, cols]),
                                               np.concatenate([cols, rows]))), shape=(n, n))
    A = sp.csr_array(A)
    A.sum_duplicates()
    A.data[:] = 1.0
    A.sort_indices()
    return A


def mycielskian(k: int) -> sp.csr_array:
    """M2 = K2, M(k+1) = [[A, A, 0], [A, 0, 1], [0, 1ᵀ, 0]] (SuiteSparse mycielskian<k>)."""
    A = sp.csr_array(np.array([[0.0, 1.0], [1.0, 0.0]]))
    for _ in range(k - 2):
        n = A.shape[0]
        ones = sp.csr_array(np.ones((n, 1)))
        A = sp.csr_array(sp.block_array([[A, A, None], [A, None, ones],
                                         [None, ones.T, None]], format="csr"))
    A.sum_duplicates()
    A.data[:] = 1.0
    A.sort_indices()
    return A


DEVICE_MIN_SCALE = 20
"""Kronecker graphs of this scale and up are generated on the GPU when one is present."""


def device_present() -> bool:
    """Whether CuPy sees a usable CUDA device (turbobc's own test of it)."""
    from turbobc._engines import gpu_status

    return gpu_status()[0]


def kronecker(scale: int, edge_factor: int = 48, seed: int = 1, *,
              device: bool | None = None) -> sp.csr_array:
    """Graph500 Kronecker: A, B, C = 0.57, 0.19, 0.19, 2^scale vertices, edge_factor·2^scale
    sampled edges, random vertex permutation, symmetrized, no self loops or duplicates.

    ``device=None`` samples on the GPU (:func:`kronecker_device`) when one is present and
    ``scale >= DEVICE_MIN_SCALE``, else on the host; ``True`` or ``False`` forces either."""
    if device is None:
        device = scale >= DEVICE_MIN_SCALE and device_present()
    if device:
        indptr, indices = kronecker_device(scale, edge_factor, seed)
        return _csr_from_arrays(indptr.get(), indices.get(), 2**scale)
    rng = np.random.default_rng(seed)
    n, m = 2**scale, edge_factor * 2**scale
    a, b, c = 0.57, 0.19, 0.19
    ab, c_norm, a_norm = a + b, c / (1 - (a + b)), a / (a + b)
    rows = np.zeros(m, dtype=np.int64)
    cols = np.zeros(m, dtype=np.int64)
    for bit in range(scale):
        ii = rng.random(m) > ab
        jj = rng.random(m) > np.where(ii, c_norm, a_norm)
        rows |= ii.astype(np.int64) << bit
        cols |= jj.astype(np.int64) << bit
    perm = rng.permutation(n)
    return _canonical(perm[rows], perm[cols], n)


def kronecker_arrays(xp, scale: int, edge_factor: int = 48, seed: int = 1):
    """CSR arrays (indptr, indices) of a Kronecker graph, computed with the array module ``xp``
    (``cupy`` on the device, or ``numpy``: the same code, which is how it is tested on the CPU).

    Sampling: for each of the ``scale`` bits, one uniform float32 decides the row bit
    (probability C + D = 0.24) and one the column bit (B / (A + B) or D / (C + D)); then a
    random permutation of the vertices. Canonical form by sorting the keys row·n + col of both
    directions and dropping repeats, so rows come out sorted with sorted columns.
    """
    n, m = 2**scale, edge_factor * 2**scale
    a, b, c = 0.57, 0.19, 0.19
    ab, c_norm, a_norm = a + b, c / (1 - (a + b)), a / (a + b)
    rng = xp.random.default_rng(seed)
    index = np.int32 if n < 2**31 else np.int64
    rows = xp.zeros(m, dtype=index)
    cols = xp.zeros(m, dtype=index)
    for bit in range(scale):
        ii = rng.random(m, dtype=np.float32) > ab
        threshold = xp.where(ii, np.float32(c_norm), np.float32(a_norm))
        jj = rng.random(m, dtype=np.float32) > threshold
        del threshold
        rows |= ii.astype(index) << bit
        cols |= jj.astype(index) << bit
        del ii, jj
    perm = xp.argsort(rng.random(n, dtype=np.float32)).astype(index)
    rows, cols = perm[rows], perm[cols]
    del perm
    return _canonical_arrays(xp, rows, cols, n)


def _canonical_arrays(xp, rows, cols, n: int):
    """Sorted, duplicate-free CSR arrays of the symmetrized pattern without self loops."""
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    del keep
    keys = xp.empty(2 * rows.size, dtype=np.int64)
    keys[: rows.size] = rows.astype(np.int64) * n + cols
    keys[rows.size:] = cols.astype(np.int64) * n + rows
    del rows, cols
    keys.sort()
    if keys.size:
        first = xp.empty(keys.size, dtype=bool)
        first[0] = True
        xp.not_equal(keys[1:], keys[:-1], out=first[1:])
        keys = keys[first]
        del first
    nnz = int(keys.size)
    index = np.int32 if max(n, nnz) < 2**31 - 1 else np.int64
    indices = (keys % n).astype(index)
    row_of = keys // n
    del keys
    indptr = xp.searchsorted(row_of, xp.arange(n + 1, dtype=np.int64)).astype(index)
    return indptr, indices


def kronecker_device(scale: int, edge_factor: int = 48, seed: int = 1):
    """:func:`kronecker_arrays` on the GPU: CuPy arrays (indptr, indices); the pool's blocks
    of the generation are freed before returning."""
    import cupy

    indptr, indices = kronecker_arrays(cupy, scale, edge_factor, seed)
    cupy.get_default_memory_pool().free_all_blocks()
    return indptr, indices


def _csr_from_arrays(indptr: np.ndarray, indices: np.ndarray, n: int) -> sp.csr_array:
    """A canonical scipy CSR pattern (float64 ones) around sorted, duplicate-free arrays."""
    A = sp.csr_array((np.ones(indices.size), indices, indptr), shape=(n, n))
    A.has_sorted_indices = True
    A.has_canonical_format = True
    return A


def watts_strogatz(n: int, k: int = 10, p: float = 0.1, seed: int = 1) -> sp.csr_array:
    """Ring of n vertices each joined to its k nearest, each edge rewired with probability p
    (networkx.watts_strogatz_graph)."""
    import networkx as nx

    G = nx.watts_strogatz_graph(n, k, p, seed=seed)
    edges = np.array(G.edges(), dtype=np.int64).reshape(-1, 2)
    return _canonical(edges[:, 0], edges[:, 1], n)


def delaunay(scale: int, seed: int = 1) -> sp.csr_array:
    """Delaunay triangulation of 2^scale uniform random points in the unit square."""
    from scipy.spatial import Delaunay

    n = 2**scale
    tri = Delaunay(np.random.default_rng(seed).random((n, 2))).simplices
    rows = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 2]])
    cols = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 0]])
    return _canonical(rows, cols, n)


def rgg(scale: int, seed: int = 1) -> sp.csr_array:
    """2^scale uniform points, edges between points closer than 0.55·sqrt(ln n / n)."""
    from scipy.spatial import cKDTree

    n = 2**scale
    pts = np.random.default_rng(seed).random((n, 2))
    pairs = cKDTree(pts).query_pairs(0.55 * np.sqrt(np.log(n) / n), output_type="ndarray")
    return _canonical(pairs[:, 0], pairs[:, 1], n)


def road(k: int, drop: float = 0.12, seed: int = 1) -> sp.csr_array:
    """k x k grid, a fraction ``drop`` of the edges removed at random, largest component."""
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(seed)
    ids = np.arange(k * k).reshape(k, k)
    rows = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    cols = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    keep = rng.random(rows.size) >= drop
    A = _canonical(rows[keep], cols[keep], k * k)
    _, labels = connected_components(A, directed=False)
    big = np.flatnonzero(labels == np.bincount(labels).argmax())
    return sp.csr_array(A[big][:, big])


def read_file(name: str, directed: bool = False) -> sp.csr_array:
    """A real graph file (Matrix Market or SNAP edge list, through ``turbobc.read_graph``),
    symmetrized unless ``directed``."""
    path = next((d / name for d in DATA_DIRS if (d / name).is_file()), None)
    if path is None:
        raise FileNotFoundError(f"{name} not found in {[str(d) for d in DATA_DIRS]}")
    return read_graph(path, directed=directed)[0]


def graph(name: str) -> sp.csr_array:
    """A benchmark graph by name: myc16, kron18, sw100000, del16, rgg16, road340,
    ego-Facebook, karate (Zachary's, from networkx), or a file name."""
    if name == "ego-Facebook":
        return read_file("facebook_combined.txt.gz")
    if name == "karate":
        import networkx as nx

        edges = np.array(nx.karate_club_graph().edges(), dtype=np.int64)
        return _canonical(edges[:, 0], edges[:, 1], 34)
    match = re.fullmatch(r"(myc|kron|sw|del|rgg|road)(\d+)", name)
    if match is None:
        return read_file(name)
    kind, size = match.group(1), int(match.group(2))
    return {"myc": mycielskian, "kron": kronecker, "sw": watts_strogatz, "del": delaunay,
            "rgg": rgg, "road": road}[kind](size)
