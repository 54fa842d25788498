"""Benchmark graphs (docs/benchmarks.md#benchmark-graphs), generated with NumPy/SciPy on the host,
and Kronecker graphs on the GPU with CuPy when one is present.

Every generator returns a canonical symmetric scipy CSR pattern (float64 ones, no diagonal,
no duplicates) of an undirected graph. Names: ``myc<k>``, ``kron<s>``, ``sw<n>``, ``del<s>``,
``rgg<s>``, ``road<k>``, and real graphs by file name (``ego-Facebook`` is the shipped
facebook_combined.txt.gz).

Kronecker graphs from scale :data:`DEVICE_MIN_SCALE` up are sampled and deduplicated on the
device (:func:`kronecker_device`: the same definition, sort-based deduplication by buckets of
rows, so a billion-edge graph takes seconds and no CuPy call spans 2^31 elements: kron25 to
kron27, past 2^31 stored edges, come back as int64 host arrays); smaller ones keep the host
path, so every graph in the existing records (kron14 to kron18) is the same sample as before.
The device sample comes from CuPy's generator, so ``kron22`` from the device is a different
sample from ``kron22`` from the host, with the same distribution.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from turbobc import read_graph

__all__ = ["graph", "mycielskian", "kronecker", "kronecker_device", "kronecker_arrays",
           "kronecker_sizes", "CHUNK_EDGES", "BUCKET_KEYS",
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
        return _csr_from_arrays(indptr, indices, 2**scale)
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


CHUNK_EDGES = 2**30
"""Sampled edges per chunk of :func:`kronecker_arrays`: no array of the generation holds more,
so every CuPy call (random numbers, sorts, scans, searches) runs on fewer than 2^31 elements:
kron25 (1.6 billion sampled edges, 3.2 billion keys) failed with "OverflowError: value too
large to convert to int" when one sort spanned them all. Scales up to 24 (805 million sampled
edges) take one chunk, so their sample is the one of the earlier records."""

BUCKET_KEYS = 2**30
"""Keys (row · n + col, both directions of every sampled edge) one bucket of rows gathers and
sorts at most (a bucket that would hold more is split before any is sorted)."""

BUCKET_SLACK = 1.25
"""Buckets planned per :data:`BUCKET_KEYS` of expected keys: room for a bucket's rows to hold
more than their share (the vertices are permuted, so rows of high degree spread)."""


def kronecker_sizes(scale: int, edge_factor: int = 48, *, chunk_edges: int = CHUNK_EDGES,
                    bucket_keys: int = BUCKET_KEYS) -> dict:
    """The sizes and types :func:`kronecker_arrays` works with at ``scale``, computed without
    allocating anything: vertices n and sampled edges m, the vertex type of the sampled rows
    and columns, the key type and the largest key (row · n + col), the chunks, the buckets
    planned and the keys each expects, an upper bound of the stored edges (2 m) and the index
    type of the result (int64 once the stored edges may pass 2^31 - 64, whatever n), and the
    bytes of the result's index array at that bound."""
    from turbobc._graph import index_dtype_for

    n, m = 2**scale, edge_factor * 2**scale
    vertex = np.dtype(np.int32) if n <= 2**31 else np.dtype(np.int64)
    largest_key = (n - 1) * n + (n - 1)
    buckets = max(1, math.ceil(BUCKET_SLACK * 2 * m / bucket_keys))
    stored_bound = 2 * m
    index = index_dtype_for(n, stored_bound, bits="auto")
    return {"scale": scale, "n": n, "sampled_edges": m, "vertex_dtype": vertex.name,
            "vertex_max": n - 1, "key_dtype": "int64", "largest_key": largest_key,
            "key_fits": largest_key < 2**63, "chunks": math.ceil(m / chunk_edges),
            "chunk_edges": min(m, chunk_edges), "buckets": buckets,
            "rows_per_bucket": math.ceil(n / buckets),
            "keys_per_bucket": math.ceil(2 * m / buckets),
            "stored_edges_bound": stored_bound, "index_dtype": index.name,
            "index_bytes_bound": stored_bound * index.itemsize + (n + 1) * index.itemsize}


def kronecker_arrays(xp, scale: int, edge_factor: int = 48, seed: int = 1, *,
                     chunk_edges: int = CHUNK_EDGES, bucket_keys: int = BUCKET_KEYS):
    """Host CSR arrays (indptr, indices) of a Kronecker graph, computed with the array module
    ``xp`` (``cupy`` on the device, or ``numpy``: the same code, which is how it is tested on
    the CPU, with small chunks and buckets to take the same paths as kron25 to kron27).

    Sampling: for each of the ``scale`` bits, one uniform float32 decides the row bit
    (probability C + D = 0.24) and one the column bit (B / (A + B) or D / (C + D)); the
    m = edge_factor · 2^scale edges in chunks of at most ``chunk_edges`` (bit after bit within
    a chunk), then a random permutation of the vertices. Canonical form by buckets of rows
    (:func:`_bucketed_csr`): each bucket's keys row · n + col of both directions sorted and
    their repeats dropped, so rows come out sorted with sorted columns, and no array spans
    2^31 entries. Both arrays come back in :func:`turbobc._graph.index_dtype_for`'s type of
    the result (int64 past 2^31 - 64 stored edges).
    """
    chunks = _kronecker_chunks(xp, scale, edge_factor, seed, chunk_edges)
    return _bucketed_csr(xp, chunks, 2**scale, bucket_keys)


def _kronecker_chunks(xp, scale: int, edge_factor: int, seed: int, chunk_edges: int) -> list:
    """The sampled edges of :func:`kronecker_arrays`, permuted and without self loops: a list
    of (rows, cols) on ``xp``, one per chunk of at most ``chunk_edges`` sampled edges."""
    n, m = 2**scale, edge_factor * 2**scale
    a, b, c = 0.57, 0.19, 0.19
    ab, c_norm, a_norm = a + b, c / (1 - (a + b)), a / (a + b)
    rng = xp.random.default_rng(seed)
    vertex = np.int32 if n <= 2**31 else np.int64
    chunks = []
    for first in range(0, m, chunk_edges):
        size = min(chunk_edges, m - first)
        rows = xp.zeros(size, dtype=vertex)
        cols = xp.zeros(size, dtype=vertex)
        for bit in range(scale):
            ii = rng.random(size, dtype=np.float32) > ab
            threshold = xp.where(ii, np.float32(c_norm), np.float32(a_norm))
            jj = rng.random(size, dtype=np.float32) > threshold
            del threshold
            rows |= ii.astype(vertex) << bit
            cols |= jj.astype(vertex) << bit
            del ii, jj
        chunks.append((rows, cols))
    perm = xp.argsort(rng.random(n, dtype=np.float32)).astype(vertex)
    for i, (rows, cols) in enumerate(chunks):
        rows, cols = perm[rows], perm[cols]
        keep = rows != cols
        chunks[i] = (rows[keep], cols[keep])
        del rows, cols, keep
    return chunks


def _bucketed_csr(xp, chunks: list, n: int, bucket_keys: int = BUCKET_KEYS):
    """Sorted, duplicate-free host CSR arrays of the symmetrized pattern of the edges
    ``chunks`` hold ((rows, cols) on ``xp``, no self loops), a bucket of rows at a time.

    The rows are cut into buckets of equal ranges, as many as keep each bucket's keys (both
    directions of its edges) at most ``bucket_keys``, counted first; then two passes: the
    first sorts each bucket's keys and counts each row's distinct columns (the row pointers,
    int64, and the stored edges), the second sorts them again and writes the columns into
    the one host array of the result. The host holds the result alone: no list of pieces."""
    from turbobc._graph import index_dtype_for

    total = 2 * sum(int(rows.size) for rows, _ in chunks)
    buckets = max(1, math.ceil(BUCKET_SLACK * total / bucket_keys))
    while True:
        span = -(-n // buckets)  # rows per bucket
        counts = np.zeros(buckets, dtype=np.int64)
        for rows, cols in chunks:
            for ends in (rows, cols):
                counts += _host(xp, xp.bincount(ends // np.int64(span), minlength=buckets))
        if counts.max(initial=0) <= max(bucket_keys, 1) or span == 1:
            break
        buckets *= 2
    row_counts = np.zeros(n, dtype=np.int64)
    for bucket in range(buckets):
        lo, hi = bucket * span, min(n, (bucket + 1) * span)
        if lo >= hi:
            continue
        keys = _bucket_keys(xp, chunks, n, bucket, span)
        row_counts[lo:hi] = _host(xp, xp.bincount(keys // n - lo, minlength=hi - lo))
        del keys
    nnz = int(row_counts.sum())
    dtype = index_dtype_for(n, nnz, bits="auto")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(row_counts, out=indptr[1:])
    del row_counts
    indices = np.empty(nnz, dtype=dtype)
    for bucket in range(buckets):
        lo, hi = bucket * span, min(n, (bucket + 1) * span)
        if lo >= hi:
            continue
        keys = _bucket_keys(xp, chunks, n, bucket, span)
        indices[indptr[lo]:indptr[hi]] = _host(xp, (keys % n).astype(dtype))
        del keys
    return indptr.astype(dtype, copy=False), indices


def _bucket_keys(xp, chunks: list, n: int, bucket: int, span: int):
    """The distinct keys row · n + col (int64, sorted) of the edges of ``chunks`` whose row,
    in either direction, lies in ``bucket`` (rows bucket · span to (bucket + 1) · span)."""
    parts = []
    for rows, cols in chunks:
        lo, hi = np.int64(bucket * span), np.int64((bucket + 1) * span)
        for tails, heads in ((rows, cols), (cols, rows)):
            mine = (tails >= lo) & (tails < hi)
            parts.append(tails[mine].astype(np.int64) * n + heads[mine])
            del mine
    keys = xp.concatenate(parts) if parts else xp.zeros(0, dtype=np.int64)
    del parts
    keys.sort()
    if keys.size:
        first = xp.empty(keys.size, dtype=bool)
        first[0] = True
        xp.not_equal(keys[1:], keys[:-1], out=first[1:])
        keys = keys[first]
    return keys


def _host(xp, array) -> np.ndarray:
    """``array`` (on ``xp``) as a NumPy array."""
    return array if xp is np else array.get()


def _canonical_arrays(xp, rows, cols, n: int):
    """Sorted, duplicate-free host CSR arrays of the symmetrized pattern of (rows, cols)
    without self loops (:func:`_bucketed_csr` of one chunk)."""
    keep = rows != cols
    return _bucketed_csr(xp, [(rows[keep], cols[keep])], n)


def kronecker_device(scale: int, edge_factor: int = 48, seed: int = 1):
    """:func:`kronecker_arrays` sampled and made canonical on the GPU: host arrays (indptr,
    indices); the pool's blocks of the generation are freed before returning."""
    import cupy

    try:
        return kronecker_arrays(cupy, scale, edge_factor, seed)
    finally:
        cupy.get_default_memory_pool().free_all_blocks()


ONES_VIEW_FROM = 2**31
"""From this many stored edges, :func:`_csr_from_arrays` gives the pattern's float64 ones as a
read-only view of one value (0 bytes instead of 8 per stored edge: kron26's 6 billion stored
edges would take 48 GB more of host memory); the engines read the pattern's index arrays."""


def _csr_from_arrays(indptr: np.ndarray, indices: np.ndarray, n: int) -> sp.csr_array:
    """A canonical scipy CSR pattern (float64 ones) around sorted, duplicate-free arrays (the
    ones a read-only view from :data:`ONES_VIEW_FROM` stored edges)."""
    ones = (np.broadcast_to(np.float64(1.0), indices.shape) if indices.size >= ONES_VIEW_FROM
            else np.ones(indices.size))
    A = sp.csr_array((ones, indices, indptr), shape=(n, n))
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
