"""Helpers for the GPU engine tests: graphs as turbobc Graph objects, and the two oracles
(the graphblas engine's raw sums, and networkx's raw sums)."""

from __future__ import annotations

import contextlib

import networkx as nx
import numpy as np
import scipy.sparse as sp

from turbobc._graph import Graph


@contextlib.contextmanager
def pool_limited(size: int):
    """CuPy's default memory pool capped at ``size`` bytes for the block (the old cap back
    after it, whatever happens); yields the pool."""
    import cupy

    pool = cupy.get_default_memory_pool()
    old_limit = pool.get_limit()
    pool.set_limit(size=size)
    try:
        yield pool
    finally:
        pool.set_limit(size=old_limit)


def make_graph(A, directed: bool) -> Graph:
    """A canonical :class:`Graph` (pattern of ``A``, no diagonal; symmetrized when undirected)."""
    csr = sp.csr_array(A, dtype=np.float64)
    if not directed:
        csr = sp.csr_array(csr + csr.T)
    csr.setdiag(0)
    csr.eliminate_zeros()
    csr.sum_duplicates()
    csr.sort_indices()
    csr.data[:] = 1.0
    return Graph(pattern=csr, directed=directed)


def networkx_raw(graph: Graph, sources) -> np.ndarray:
    """Σ over ``sources`` of Brandes' δ_s(v) (ordered pairs, not halved), from networkx."""
    G = nx.from_scipy_sparse_array(graph.pattern,
                                   create_using=nx.DiGraph if graph.directed else nx.Graph)
    values = nx.betweenness_centrality_subset(G, list(map(int, sources)), list(G),
                                              normalized=False)
    raw = np.array([values[v] for v in range(graph.n)], dtype=np.float64)
    # networkx halves the subset sums of undirected graphs.
    return raw if graph.directed else 2 * raw


def graphblas_raw(graph: Graph, sources, endpoints: bool = False) -> np.ndarray:
    """The CPU engine's raw sums (the reference engine)."""
    from turbobc.engines.graphblas import accumulate

    return accumulate(graph, np.asarray(sources, dtype=np.int64), endpoints=endpoints,
                      progress=Counter())


def read_graph(name: str, directed: bool) -> Graph:
    """A graph shipped with the tests (``tests/data``, or the package's ego-Facebook) as a
    :class:`Graph`, read with ``turbobc.read_graph`` (symmetrized unless ``directed``)."""
    from data_files import load

    return make_graph(load(name, directed=directed), directed)


class Counter:
    """Stands in for the tqdm bar: counts update() calls."""

    def __init__(self):
        self.n = 0

    def update(self, k=1):
        self.n += k


_KNOBS = {"_batch": "batch", "_level_dtype": "level_dtype", "_index_dtype": "index_dtype",
          "_depth_cap": "depth_cap", "_path": "path"}
"""Test knobs of the GPU families, by their old underscore names -> the family's argument."""


def family_run(family_cls, on, sources, *, progress=None, facts=None, edge_raw=None,
               kernel="auto", endpoints=False, **kw) -> np.ndarray:
    """The raw vertex sums of ``sources`` swept by one GPU family (``family_cls``: SingleFamily,
    LanesFamily or LayersFamily of turbobc/engines/gpu/) through
    :func:`turbobc.engines.gpu.family.sweep_with`: ``on`` is a Graph or a DeviceResident; the
    edge sums are added into ``edge_raw`` when given (edge BC), the run's facts into ``facts``;
    other keywords are Problem fields (target_weight, source_weight, memory_limit,
    slot_weights) or the family's test arguments (batch, level_dtype, index_dtype, depth_cap,
    path, hops; the old underscore names are accepted)."""
    from turbobc.engines.gpu.family import sweep_with

    fields = {"target_weight", "source_weight", "memory_limit", "slot_weights"}
    problem = {key: value for key, value in kw.items() if key in fields}
    knobs = {_KNOBS.get(key, key): value for key, value in kw.items() if key not in fields}
    part, run_facts = sweep_with(family_cls, on, sources, progress=progress, knobs=knobs,
                                 kernel=kernel, endpoints=endpoints,
                                 edges=edge_raw is not None, **problem)
    if facts is not None:
        facts.update(run_facts)
    if edge_raw is not None:
        edge_raw += part.edge
    return part.vertex


def band_arrays(n: int, width: int, xp=np, chunk_rows: int | None = None):
    """CSR arrays (indptr, indices) of the band graph on n vertices, i ~ j for 0 < |i - j| <=
    ``width`` (no wrap around): sorted rows, symmetric, no self loops, 2 (w n - w (w + 1) / 2)
    stored edges for n > w. Built a chunk of rows at a time with the array module ``xp``
    (NumPy, or CuPy on the device; ``chunk_rows`` by default as many as make 2^26
    candidates), so no single operation spans 2^31 entries; int64
    pointers and indices. A graph just past 2^31 stored edges: n = 2^17 + 2^13, width = 2^13
    (2,214,584,320 stored edges, 16.5 GiB of int64 indices)."""
    rows = xp.arange(n, dtype=np.int64)
    lo = xp.maximum(rows - width, 0)
    hi = xp.minimum(rows + width, n - 1)
    degree = hi - lo  # the row's band less the diagonal
    indptr = xp.zeros(n + 1, dtype=np.int64)
    xp.cumsum(degree, out=indptr[1:])
    indices = xp.empty(int(indptr[-1]), dtype=np.int64)
    offsets = xp.arange(-width, width + 1, dtype=np.int64)
    offsets = offsets[offsets != 0]
    chunk_rows = chunk_rows or max(1, 2**26 // (2 * width))
    for first in range(0, n, chunk_rows):
        last = min(n, first + chunk_rows)
        block = rows[first:last, None] + offsets[None, :]        # rows x 2w candidates, sorted
        keep = (block >= 0) & (block < n)
        indices[int(indptr[first]):int(indptr[last])] = block[keep]  # row-major: rows in order
    return indptr, indices
