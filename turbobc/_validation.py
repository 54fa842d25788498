"""The one validation function: every argument of :func:`turbobc.bc` is checked here, first.

User mistakes raise builtin exceptions whose messages say what was expected,
what came, and where it helps, the fix. Which engine runs, and whether the one asked for can,
is each engine's :meth:`~turbobc.engines.protocol.Engine.can_serve` answer
(:func:`turbobc.engines.resolve_engine`), asked last, once the problem is known: the GPU being
absent raises :class:`turbobc.exceptions.GPUUnavailableError`.
"""

from __future__ import annotations

import dataclasses
import numbers
import random
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from spmv import check_kernel

from turbobc._engines import gpu_status
from turbobc._graph import (Graph, canonical_csr, index_dtype_for, reverse_edge_positions,
                            in_index_type)
from turbobc._memory import parse_memory_limit
from turbobc.engines import ENGINES, resolve_engine
from turbobc.engines.protocol import Problem

__all__ = ["Call", "check_guarantee", "validate"]


@dataclass(frozen=True)
class Call:
    """A validated call: everything an engine and the rescaling need."""

    graph: Graph
    sources: np.ndarray  # distinct int64 vertex ids to sweep from
    sampled: bool  # sources were sampled with k (networkx's source/non-source factors)
    normalized: bool
    endpoints: bool
    engine: str  # "gpu", "cpu" or "graphblas"; with a Dask client as given ("auto" too)
    kernel: str  # "auto" or a name in spmv.KERNELS
    progress: object  # True, False, or an object with update(n) (a tqdm bar, a recorder)
    memory_limit: int | None = None  # bytes (turbobc._memory.parse_memory_limit); None: automatic
    targets: np.ndarray | None = None  # distinct int64 vertex ids; None: every vertex
    edges: bool = False  # also per-edge sums (edge BC)
    client: object = None  # a dask.distributed.Client: the sweeps run on its workers

    @property
    def target_weight(self) -> np.ndarray | None:
        """τ of the accumulate step: [w ∈ targets], or None (every vertex a target)."""
        if self.targets is None:
            return None
        tau = np.zeros(self.graph.n, dtype=np.float64)
        tau[self.targets] = 1.0
        return tau

    @property
    def problem(self) -> Problem:
        """What the engine computes."""
        return Problem(self.graph, endpoints=self.endpoints, kernel=self.kernel,
                       memory_limit=self.memory_limit, target_weight=self.target_weight,
                       edges=self.edges,
                       split_non_targets=self.edges and self.targets is not None)


def validate(A, *, sources, k, seed, normalized, endpoints, directed, engine, kernel,
             progress, memory_limit=None, targets=None, edges=False, weight=None,
             client=None) -> Call:
    """Check and normalise the arguments of :func:`turbobc.bc`.

    ``weight`` (None, True or an edge attribute name) makes the graph weighted: its
    :attr:`~turbobc._graph.Graph.lengths` come from ``A``'s stored values or from the networkx
    attribute (:func:`_check_weight`).

    Returns
    -------
    Call
    """
    for name, value in (("normalized", normalized), ("endpoints", endpoints)):
        _require_bool(name, value)
    if not _is_bar(progress) and not isinstance(progress, (bool, np.bool_)):
        raise TypeError("progress must be True or False, or an object with an update(n) "
                        f"method such as a tqdm bar; got {type(progress).__name__} "
                        f"{progress!r}")
    if directed is not None:
        _require_bool("directed", directed)
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}; got {engine!r}")
    check_kernel(kernel)
    memory_limit = parse_memory_limit(memory_limit)

    weight = _check_weight(weight, _is_networkx_graph(A))
    matrix, labels, graph_directed = _as_csr(A, weight)
    if directed is None:
        directed = graph_directed
    # The symmetry test runs on the GPU when the sweeps may well run there: a choice of speed
    # only (the host test gives the same answer); which engine runs is decided below.
    on_device = engine not in ("cpu", "graphblas") and gpu_status()[0]
    if weight is None:
        graph = _pattern_graph(matrix, directed, on_device=on_device)
    else:
        graph = _weighted_graph(matrix, directed, on_device=on_device, labels=labels,
                                attribute=weight if isinstance(weight, str) else None)
    graph = _index_width(graph)

    if k is not None and sources is not None:
        raise ValueError("give either k (sample k sources) or sources (use exactly these), "
                         "not both")
    if sources is not None:
        chosen, sampled = _check_vertices("sources", sources, graph.n, labels), False
    elif k is not None:
        chosen, sampled = _sample_sources(k, seed, graph.n), True
    else:
        chosen, sampled = np.arange(graph.n, dtype=np.int64), False
    if sampled and len(chosen) == graph.n:
        sampled = False  # networkx treats k == n as k=None
    if targets is not None:
        # networkx.betweenness_centrality_subset: no sampling, no endpoint terms
        if k is not None:
            raise ValueError("targets= computes networkx's betweenness_centrality_subset, "
                             "which samples no sources; give sources (or none: every vertex) "
                             "instead of k")
        if endpoints:
            raise ValueError("targets= computes networkx's betweenness_centrality_subset, "
                             "which has no endpoint terms; use endpoints=False")
        targets = _check_vertices("targets", targets, graph.n, labels)

    call = Call(graph=graph, sources=chosen, sampled=sampled, normalized=bool(normalized),
                endpoints=bool(endpoints), engine=engine, kernel=kernel,
                progress=progress if _is_bar(progress) else bool(progress),
                memory_limit=memory_limit, targets=targets, edges=edges, client=client)
    if client is not None:
        # each Dask worker resolves the engine on its own machine (turbobc/_dask.py); here
        # only what no machine could serve is refused
        from turbobc._dask import check_client

        check_client(client)
        if engine in ("cpu", "graphblas"):
            resolve_engine(engine, call.problem)
        return call
    # Last, on the whole problem (targets and edges included) and before any sweep: the
    # engines say whether they can serve.
    return dataclasses.replace(call, engine=resolve_engine(engine, call.problem).name)


DEFAULT_DELTA = 0.1
"""δ when only ε is given (NetworKit's KadabraBetweenness uses the same by default)."""


def check_guarantee(epsilon, delta, *, k, sources, targets, normalized) -> tuple[float, float]:
    """ε and δ of an approximate call (``bc(A, epsilon=..., delta=...)``), checked: both in
    (0, 1), δ defaulting to :data:`DEFAULT_DELTA`, and none of the options the sample size
    would contradict."""
    if epsilon is None:
        raise ValueError("delta= states the confidence of the epsilon guarantee; give epsilon "
                         "too (bc(A, epsilon=0.01, delta=0.1))")
    delta = DEFAULT_DELTA if delta is None else delta
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a number in (0, 1); got {type(value).__name__} "
                            f"{value!r}")
        if not 0 < value < 1:
            raise ValueError(f"{name} must lie strictly between 0 and 1; got {value!r}")
    if k is not None or sources is not None:
        raise ValueError("epsilon chooses how many sources to sample from the guarantee it "
                         "must reach; give either epsilon (and delta) or k / sources, not "
                         "both")
    if targets is not None:
        raise ValueError("epsilon bounds the error of full betweenness centrality; targets= "
                         "(subset BC) is not sampled with a guarantee")
    if not normalized:
        raise ValueError("epsilon bounds the error of normalized values (each within epsilon "
                         "of the exact one); use normalized=True, or scale the result and "
                         "epsilon yourself")
    return float(epsilon), float(delta)


def _require_bool(name: str, value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {type(value).__name__} {value!r}")


def _is_bar(progress) -> bool:
    """Whether ``progress`` is the caller's bar or recorder: an ``update(n)`` method (and not
    the ``update`` of a dict or set, which takes an iterable)."""
    return (callable(getattr(progress, "update", None))
            and not isinstance(progress, (bool, np.bool_, dict, set)))


def _is_networkx_graph(A) -> bool:
    return hasattr(A, "is_directed") and hasattr(A, "adj") and hasattr(A, "nodes")


def _check_weight(weight, networkx_input: bool):
    """``weight`` as validation uses it: None (unweighted), True (A's stored values are the
    lengths) or the name of a networkx edge attribute. ``False`` is None."""
    if weight is None or (isinstance(weight, (bool, np.bool_)) and not weight):
        return None
    if networkx_input:
        if isinstance(weight, str):
            return weight
        raise TypeError("for a networkx graph, weight names the edge attribute that holds the "
                        "lengths, as in networkx (e.g. weight='weight'); got "
                        f"{type(weight).__name__} {weight!r}")
    if isinstance(weight, (bool, np.bool_)):
        return True
    if isinstance(weight, str):
        raise TypeError(f"weight={weight!r} names an edge attribute, which only a networkx graph "
                        "has; for a matrix pass weight=True to use its stored values as lengths")
    raise TypeError("weight must be None (unweighted), True (A's stored values are edge "
                    "lengths) or, for a networkx graph, an edge attribute name; got "
                    f"{type(weight).__name__} {weight!r}")


def _as_csr(A, weight=None):
    """The user's matrix as CSR, the vertex labels (networkx input only) and the
    directedness it implies (None: infer from the pattern). For a networkx graph and an
    attribute name ``weight``, the matrix holds the edge lengths (:func:`_networkx_lengths`)."""
    if _is_networkx_graph(A):
        import networkx as nx  # only reached when the user passed a networkx graph

        labels = list(A)
        if not labels:  # networkx refuses to convert a graph without nodes
            return sp.csr_array((0, 0)), labels, bool(A.is_directed())
        if isinstance(weight, str):
            return _networkx_lengths(A, labels, weight), labels, bool(A.is_directed())
        matrix = nx.to_scipy_sparse_array(A, nodelist=labels, weight=None, format="csr")
        return matrix, labels, bool(A.is_directed())
    if isinstance(A, np.ndarray):
        _check_shape(A.shape)
        _check_dtype(A.dtype)
        return sp.csr_array(A), None, None
    if not sp.issparse(A):
        raise TypeError("A must be a scipy.sparse matrix or array (a 2-D numpy array or a "
                        f"networkx graph is converted); got {type(A).__module__}."
                        f"{type(A).__qualname__}")
    _check_shape(A.shape)
    _check_dtype(A.dtype)
    return sp.csr_array(A), None, None


def _check_shape(shape) -> None:
    if len(shape) != 2:
        raise ValueError(f"A must be 2-D; got {len(shape)}-D shape {tuple(shape)}")
    if shape[0] != shape[1]:
        raise ValueError(f"A must be square; got shape {tuple(shape)}")


def _check_dtype(dtype) -> None:
    if np.issubdtype(dtype, np.complexfloating):
        raise TypeError(f"A must have a real dtype (bool, integer or float); got {dtype}: "
                        "pass abs(A) or A.real if the pattern is what you mean")
    if not (np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.bool_)):
        raise TypeError(f"A must have a numeric dtype (bool, integer or float); got {dtype}")


def _networkx_lengths(G, labels: list, attribute: str) -> sp.csr_array:
    """G's edge lengths as a canonical CSR matrix in ``labels`` order, as networkx's weighted
    shortest paths read them: ``G.edges(data=attribute, default=1)`` (a missing attribute is
    1, as in ``networkx.to_scipy_sparse_array``), both directions of an undirected edge, and
    the smallest length over a multigraph's parallel edges (networkx's weight function).

    Raises
    ------
    TypeError
        A length that is not a real number (named with its edge).
    ValueError
        A length that is zero, negative, NaN or infinite (named with its edge): networkx's
        Dijkstra needs positive lengths (a zero-length edge makes it count some paths twice
        and others not at all; turbobc refuses rather than guess).
    """
    index = {node: i for i, node in enumerate(labels)}
    triples = [(index[u], index[v], value)
               for u, v, value in G.edges(data=attribute, default=1)]
    rows = np.fromiter((t[0] for t in triples), dtype=np.int64, count=len(triples))
    cols = np.fromiter((t[1] for t in triples), dtype=np.int64, count=len(triples))
    values = _real_lengths([t[2] for t in triples], rows, cols, labels, attribute)
    _check_lengths(rows, cols, values, labels=labels, attribute=attribute, zero_is_edge=True)
    if not G.is_directed():
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
        values = np.concatenate([values, values])
    loops = rows == cols  # never on a shortest path: dropped here as for every input
    rows, cols, values = rows[~loops], cols[~loops], values[~loops]
    return canonical_csr(rows, cols, len(labels), values)


def _real_lengths(raw: list, rows, cols, labels, attribute) -> np.ndarray:
    """Edge attribute values as float64; the first one that is not a real number raises."""
    array = np.asarray(raw) if raw else np.zeros(0)
    if array.ndim == 1 and array.dtype.kind in "biuf":
        return array.astype(np.float64)
    out = np.empty(len(raw), dtype=np.float64)
    for i, value in enumerate(raw):
        if not isinstance(value, (numbers.Real, np.bool_)):
            raise TypeError(f"edge ({labels[rows[i]]!r}, {labels[cols[i]]!r}) has "
                            f"{attribute}={value!r}, not a real number: edge lengths must be "
                            "positive numbers")
        try:
            out[i] = float(value)
        except OverflowError:  # an int beyond float64: an infinite length
            out[i] = np.inf
    return out


def _check_lengths(rows, cols, values, *, labels=None, attribute=None,
                   zero_is_edge=False) -> None:
    """Every length must be positive and finite: the first entry that is not raises a
    ValueError naming it, (i, j, value) or, for a networkx graph, its edge and attribute. A
    stored zero of a matrix is no edge (``zero_is_edge`` False) and passes."""
    bad = ~np.isfinite(values) | (values < 0)
    if zero_is_edge:
        bad |= values == 0
    if not bad.any():
        return
    first = int(np.flatnonzero(bad)[0])
    i, j, value = int(rows[first]), int(cols[first]), float(values[first])
    count = f"{int(bad.sum())} such length{'s' if bad.sum() > 1 else ''}"
    if labels is None:
        where = f"A[{i}, {j}] = {value!r}"
        fix = ("stored zeros are no edge; drop or fix the others, e.g. "
               "A.data[(A.data < 0) | ~numpy.isfinite(A.data)] = 1")
    else:
        where = f"edge ({labels[i]!r}, {labels[j]!r}) has {attribute}={value!r}"
        fix = ("networkx's Dijkstra counts paths through a zero-length edge inconsistently; "
               "remove such edges or give them a positive length")
    raise ValueError(f"weighted BC needs positive, finite edge lengths, but {where} "
                     f"({count}); {fix}")


def _weighted_graph(matrix: sp.csr_array, directed: bool | None, *, on_device: bool = False,
                    labels=None, attribute=None) -> Graph:
    """The Graph of a weighted call: :func:`_pattern_graph` of the matrix plus its stored
    values as :attr:`~turbobc._graph.Graph.lengths`.

    Duplicate entries of ``matrix`` are summed first (the matrix scipy means), then every
    stored nonzero must be positive and finite (:func:`_check_lengths`). A symmetric pattern
    whose two lengths of an edge differ is a directed graph when ``directed`` is None, and an
    error with ``directed=False``.
    """
    matrix = sp.csr_array(matrix, dtype=np.float64, copy=not matrix.has_canonical_format)
    if not matrix.has_canonical_format:
        matrix.sum_duplicates()
    rows, keep = _kept_entries(matrix)
    _check_lengths(rows, matrix.indices, matrix.data, labels=labels, attribute=attribute)
    if (not directed and keep.all()
            and _is_symmetric(matrix.indptr, matrix.indices, matrix.data)):
        # The common undirected case: pattern and lengths symmetric, tested in one compare.
        pattern = sp.csr_array((np.ones(keep.size), matrix.indices, matrix.indptr),
                               shape=matrix.shape)
        return Graph(pattern=pattern, directed=False,
                     lengths=np.array(matrix.data, dtype=np.float64))  # a copy: A may change
    graph = _pattern_graph(matrix, directed, on_device=on_device)
    lengths = np.ascontiguousarray(matrix.data[keep], dtype=np.float64)
    if not graph.directed:
        mirrored = lengths[reverse_edge_positions(graph.pattern)]
        differ = np.flatnonzero(lengths != mirrored)
        if differ.size and directed is None:
            return Graph(pattern=graph.pattern, directed=True, lengths=lengths)
        if differ.size:
            k = int(differ[0])
            i = int(np.searchsorted(graph.pattern.indptr, k, side="right") - 1)
            j = int(graph.pattern.indices[k])
            a, b = float(lengths[k]), float(mirrored[k])
            name = (f"({i}, {j}) has length {a!r} but ({j}, {i}) has {b!r}" if labels is None
                    else f"({labels[i]!r}, {labels[j]!r}) has length {a!r} but "
                         f"({labels[j]!r}, {labels[i]!r}) has {b!r}")
            raise ValueError(f"directed=False but the edge {name} ({differ.size // 2} edges "
                             "differ): an undirected edge has one length; pass directed=True, "
                             "or make A symmetric, e.g. A = A.minimum(A.T)")
    return Graph(pattern=graph.pattern, directed=graph.directed, lengths=lengths)


def _index_width(graph: Graph) -> Graph:
    """``graph`` with its pattern's arrays in the index type of
    :func:`~turbobc._graph.index_dtype_for` (int32 below 2^31 − 64 vertices and stored
    entries, int64 past it or under ``Tuning.index_bits=64``): the same graph when they
    already are."""
    pattern = graph.pattern
    indptr = in_index_type(pattern.indptr, graph.n, graph.nnz)
    indices = in_index_type(pattern.indices, graph.n, graph.nnz)
    if indptr is pattern.indptr and indices is pattern.indices:
        return graph
    wide = sp.csr_array((pattern.data, indices, indptr), shape=pattern.shape)
    wide.has_canonical_format = True  # the same entries, in the same order
    return dataclasses.replace(graph, pattern=wide)


def _kept_entries(matrix: sp.csr_array):
    """The row of every stored entry, and which entries the pattern keeps: nonzero, off the
    diagonal."""
    n = matrix.shape[0]
    rows = np.repeat(np.arange(n, dtype=matrix.indices.dtype), np.diff(matrix.indptr))
    return rows, (matrix.data != 0) & (rows != matrix.indices)


def _pattern_graph(matrix: sp.csr_array, directed: bool | None, *,
                   on_device: bool = False) -> Graph:
    """Canonical pattern: nonzero entries only, duplicates once, no self loops.

    Work is O(n + m) array passes; a CSR input that is already canonical (sorted, duplicate
    free) is filtered in place of being re-sorted. ``on_device``: test symmetry on the GPU.
    """
    n = matrix.shape[0]
    rows, keep = _kept_entries(matrix)
    if np.issubdtype(matrix.dtype, np.floating):
        bad = ~np.isfinite(matrix.data)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise ValueError(f"A contains {int(bad.sum())} NaN or infinite value(s), the first "
                             f"at ({rows[first]}, {matrix.indices[first]}); BC ignores values "
                             "but these usually mean a bug upstream: replace them, e.g. "
                             "A.data[~numpy.isfinite(A.data)] = 1")
    if matrix.has_canonical_format and keep.all():
        # The common case: nothing to drop, the structure already is the pattern.
        pattern = sp.csr_array((_ones(keep.size), matrix.indices, matrix.indptr),
                               shape=(n, n))
        return _with_direction(pattern, directed, on_device)
    rows, cols = rows[keep], matrix.indices[keep]
    if matrix.has_canonical_format:
        # Still sorted and duplicate free after dropping entries: only the row pointers change.
        indptr = np.zeros(n + 1, dtype=matrix.indptr.dtype)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        pattern = sp.csr_array((np.ones(cols.size), cols.copy(), indptr), shape=(n, n))
    else:
        pattern = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
        pattern.sum_duplicates()
        pattern.data[:] = 1.0
    return _with_direction(pattern, directed, on_device)


ONES_VIEW_FROM = 2**31
"""From this many stored edges a pattern's float64 ones are a read-only view of one value (0
bytes instead of 8 a stored edge, 17 GB at 2^31): nothing writes a Graph's pattern."""


def _ones(size: int) -> np.ndarray:
    """``size`` float64 ones: an array, or from :data:`ONES_VIEW_FROM` a read-only view."""
    if size >= ONES_VIEW_FROM:
        return np.broadcast_to(np.float64(1.0), (size,))
    return np.ones(size)


def _with_direction(pattern: sp.csr_array, directed: bool | None, on_device: bool) -> Graph:
    """The Graph of a canonical pattern, directed as asked or as its symmetry says."""
    if directed:
        return Graph(pattern=pattern, directed=True)  # symmetric or not: nothing to test
    missing = _missing_reverse_on_device(pattern) if on_device else None
    if missing is None:  # on the host; the edges that lack their reverse counted only to report
        missing = 0 if _is_symmetric(pattern.indptr, pattern.indices, True) else None
    if missing == 0:
        return Graph(pattern=pattern, directed=False)
    if directed is None:
        return Graph(pattern=pattern, directed=True)
    if missing is None:
        missing = _count_asymmetric(pattern)
    raise ValueError("directed=False but the pattern of A is not symmetric "
                     f"({missing} edges lack their reverse); pass directed=True, or symmetrize "
                     "first: A = A + A.T")


SMALL_TRANSPOSE = 2**22
"""Stored entries below which :func:`_is_symmetric` transposes a pattern with SciPy (one pass,
about 2 ms for ego-Facebook's 176,468) rather than SuiteSparse (about 6 ms there: building
and comparing GraphBLAS matrices; multithreaded, so faster on large graphs)."""


def _is_symmetric(indptr: np.ndarray, indices: np.ndarray, values) -> bool:
    """Whether the CSR matrix (indptr, indices, values), rows sorted, equals its transpose
    (``values``: an array, or True for the pattern): equal in- and out-degrees first (one
    pass), then the transpose compared (values exactly): SciPy's for a pattern of fewer than
    :data:`SMALL_TRANSPOSE` entries, else SuiteSparse's multithreaded one (imported only then:
    python-graphblas loads numba, half a second of a first call)."""
    n = indptr.size - 1
    if not _degrees_match(indptr, indices, n):
        return False
    if indices.size < SMALL_TRANSPOSE:
        # equal degrees: the transpose has the same row pointers, so compare the indices
        # (and the values, exactly)
        data = np.ones(indices.size, dtype=np.bool_) if values is True else values
        matrix = sp.csr_array((data, indices, indptr), shape=(n, n))
        transposed = matrix.T.tocsr()  # SciPy's transpose gives sorted rows
        return bool(np.array_equal(transposed.indices, indices)
                    and (values is True or np.array_equal(transposed.data, values)))
    from graphblas import Matrix

    M = Matrix.from_csr(indptr, indices, values, nrows=n, ncols=n)
    return M.isequal(M.T)


def _degrees_match(indptr, indices, n: int) -> bool:
    """Whether every vertex has as many stored in-edges as out-edges: a symmetric pattern
    must."""
    return bool((np.diff(indptr) == np.bincount(indices, minlength=n)).all())


def _missing_reverse_on_device(pattern: sp.csr_array) -> int | None:
    """How many stored edges i -> j of a canonical pattern lack their reverse j -> i, counted on
    the GPU (``spmv``'s ``missing_reverse`` kernel: a binary search of row j for every stored
    edge; no transpose, no memory beyond the pattern), or None to test on the host instead.

    The device's answer decides the direction of the graph only once the host agrees with it
    (:func:`_has_reverse`): a count above zero comes with a witness edge, whose reverse the host
    looks up; a count of zero is checked on a fixed sample of edges. None when the host
    contradicts it, or when it cannot run there (not enough device memory, a CUDA error).

    It replaced a test through cuSPARSE's transpose (``cusparseCsr2cscEx2`` behind cupyx's
    ``M.T.tocsr()``), which on an H200 with cuSPARSE 12.6.3 (CUDA 13.0) wrote one row index one
    past the last (33 for 32) for some 33-vertex patterns, and marked the result sorted: those
    valid undirected graphs were judged asymmetric, and silently taken as directed.
    """
    import cupy

    from spmv._launch import missing_reverse

    n, nnz = pattern.shape[0], pattern.nnz
    if nnz == 0:
        return 0
    dtype = index_dtype_for(n, nnz)
    try:
        missing, witness = missing_reverse(cupy.asarray(pattern.indptr.astype(dtype, copy=False)),
                                           cupy.asarray(pattern.indices.astype(dtype, copy=False)),
                                           n, nnz)
    except (cupy.cuda.memory.OutOfMemoryError, cupy.cuda.runtime.CUDARuntimeError):
        return None
    if missing:
        agrees = not _has_reverse(pattern, np.array([witness]))[0]
    else:
        sample = np.random.default_rng(0).integers(0, nnz, size=min(nnz, 1024))
        agrees = bool(_has_reverse(pattern, sample).all())
    return missing if agrees else None


def _has_reverse(pattern: sp.csr_array, positions: np.ndarray) -> np.ndarray:
    """For each stored entry position k of a canonical pattern (the edge i -> j), whether j -> i
    is stored too: a binary search of row j on the host, all positions at once."""
    indptr, indices = pattern.indptr, pattern.indices
    positions = np.asarray(positions, dtype=np.int64)
    rows = np.searchsorted(indptr, positions, side="right") - 1    # i of each entry
    heads = indices[positions].astype(np.int64)                   # j
    lo, hi = indptr[heads].astype(np.int64), indptr[heads + 1].astype(np.int64)
    while True:  # the first place in row j whose column is not below i
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        below = active & (indices[np.minimum(mid, indices.size - 1)] < rows)
        lo = np.where(below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)
    end = indptr[heads + 1]
    return (lo < end) & (indices[np.minimum(lo, max(indices.size - 1, 0))] == rows)


def _count_asymmetric(pattern: sp.csr_array) -> int:
    return int(((pattern - pattern.T) > 0).count_nonzero())  # u->v stored, v->u not


def _check_vertices(name: str, vertices, n: int, labels) -> np.ndarray:
    """``sources`` or ``targets``: distinct vertex indices (node labels for a networkx graph)."""
    if isinstance(vertices, (str, bytes)) or not np.iterable(vertices):
        raise TypeError(f"{name} must be a sequence of vertex indices; got "
                        f"{type(vertices).__name__} {vertices!r}")
    items = list(vertices)
    if not items:
        kind = "source vertex" if name == "sources" else "target vertex"
        raise ValueError(f"{name} is empty; name at least one {kind} ({name}=None uses every "
                         "vertex)")
    if labels is not None:
        position = {label: i for i, label in enumerate(labels)}
        missing = [s for s in items if s not in position]
        if missing:
            raise ValueError(f"{name} must be nodes of the graph; {missing[0]!r} is not")
        items = [position[s] for s in items]
    for i, s in enumerate(items):
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, numbers.Integral):
            raise TypeError(f"{name} must hold integer vertex indices; got "
                            f"{type(s).__name__} {s!r} at position {i}")
    chosen = np.asarray(items, dtype=np.int64).reshape(-1)
    out_of_range = (chosen < 0) | (chosen >= n)
    if out_of_range.any():
        i = int(np.flatnonzero(out_of_range)[0])
        raise ValueError(f"{name} must be vertex indices in [0, {n}); got {chosen[i]} at "
                         f"position {i}")
    values, counts = np.unique(chosen, return_counts=True)
    if (counts > 1).any():
        j = int(np.flatnonzero(counts > 1)[0])
        raise ValueError(f"{name} must be distinct; vertex {values[j]} appears {counts[j]} "
                         "times")
    return chosen


def _sample_sources(k, seed, n: int) -> np.ndarray:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer or None; got {type(k).__name__} {k!r}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of vertices n = {n}; got {k}")
    if k == n:
        return np.arange(n, dtype=np.int64)  # networkx does not draw from the seed here
    rng = _python_random(seed)
    return np.asarray(rng.sample(range(n), int(k)), dtype=np.int64)


def _python_random(seed) -> random.Random:
    """The random.Random instance networkx's ``@py_random_state`` would use for ``seed``."""
    if seed is None:
        return random._inst  # networkx samples from the global Random when seed is None
    if isinstance(seed, random.Random):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)):
        return random.Random(int(seed))
    if isinstance(seed, (np.random.RandomState, np.random.Generator)):
        try:
            from networkx.utils import create_py_random_state
        except ImportError:
            raise TypeError("a numpy seed needs networkx installed to reproduce networkx's "
                            "sampling; pass an int or a random.Random instead") from None
        return create_py_random_state(seed)
    raise TypeError(f"seed must be None, an int, a random.Random, or a NumPy RandomState or "
                    f"Generator; got {type(seed).__name__} {seed!r}")

