"""The public entry points: :func:`bc`, :func:`edge_bc`, and :func:`run_bc` and
:func:`run_edge_bc`, which return the facts of the run as well (:class:`Result`).

Each validates its arguments (turbobc/_validation.py) and hands the validated call down: an
exact run to the folding (turbobc/_fold.py), an approximate one (``epsilon``) to
turbobc/_approx.py, both of which sweep through the one loop (turbobc/_run.py); then it
refuses non-finite sums and rescales (turbobc/_rescale.py).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from turbobc._approx import approximate
from turbobc._compiled import compiled_since, first_use_mark
from turbobc._edges import distinct_edges, edge_matrix
from turbobc._fold import raw_edge_sums, raw_sums
from turbobc._rescale import check_finite, rescale
from turbobc._validation import check_guarantee, validate

__all__ = ["bc", "edge_bc", "run_bc", "run_edge_bc", "Result"]


def bc(A, *, sources=None, targets=None, k=None, seed=None, normalized=True,
       endpoints=False, directed=None, engine="auto", kernel="auto", progress=False,
       memory_limit=None, weight=None, client=None, epsilon=None,
       delta=None) -> np.ndarray:
    r"""Betweenness centrality of every vertex of the graph with adjacency matrix ``A``.

    .. math::

        c_B(v) = \sum_{s, t \in V} \frac{\sigma(s, t \mid v)}{\sigma(s, t)}

    where :math:`\sigma(s, t)` is the number of shortest s-t paths and
    :math:`\sigma(s, t \mid v)` the number of those passing through v
    (``v`` not an endpoint unless ``endpoints=True``). Values equal
    ``networkx.betweenness_centrality`` (networkx >= 3.6) on the same graph,
    with the same ``weight``.

    Parameters
    ----------
    A : scipy.sparse matrix or array, shape (n, n)
        ``A[i, j] != 0`` means an edge i -> j. Values are ignored (unless
        ``weight=True``), explicit zeros are not edges, duplicates count once
        and self loops are dropped.
        A 2-D ``numpy.ndarray`` is converted with ``scipy.sparse.csr_array``; a
        networkx graph is converted with ``networkx.to_scipy_sparse_array`` in
        ``list(G)`` order, which is then the order of the result, and its
        ``is_directed()`` is the default for ``directed``.
    sources : sequence of int, optional
        Use exactly these (distinct) sources: the result is their contribution,
        as ``networkx.betweenness_centrality_subset(G, sources, list(G))``,
        normalized like full BC when ``normalized=True``. For a networkx graph
        these are node labels.
    targets : sequence of int, optional
        Count only the shortest paths that end in these (distinct) vertices:
        ``networkx.betweenness_centrality_subset(G, sources, targets)`` with
        ``sources`` (default: every vertex) and the same ``normalized``
        (networkx's own default there is ``normalized=False``). Not with ``k``
        or ``endpoints=True`` (networkx's subset BC has neither). Each
        target is a weight of 1 in the backward step (docs/algorithm.md).
    k : int, optional
        Sample ``k`` distinct sources (1 <= k <= n) and scale the estimate as
        networkx does. ``k == n`` is exact BC.
    seed : None, int, random.Random, numpy.random.RandomState or numpy.random.Generator, optional
        Random state for ``k``, as networkx's ``seed``: the same ``seed`` samples
        the same sources as networkx. ``None`` draws from Python's global
        ``random``; an int seeds a new ``random.Random``; a NumPy
        ``RandomState`` or ``Generator`` is wrapped the way networkx wraps it
        (``networkx.utils.create_py_random_state``, so it needs networkx
        installed) and is advanced by the draw.
    normalized : bool, default True
        Divide by the number of pairs that can pass through a vertex,
        ``(n - 1)(n - 2)`` (``n (n - 1)`` with endpoints); otherwise
        undirected values are halved (unordered pairs).
    endpoints : bool, default False
        Count the endpoints of each path as lying on it.
    directed : bool, optional
        ``None`` infers it from the pattern: symmetric means undirected.
        ``True`` treats a symmetric pattern as a directed graph with both arcs.
    engine : {"auto", "gpu", "cpu", "graphblas"}, default "auto"
        "auto" uses the GPU when CuPy sees a device, else the CPU engine
        "cpu" (compiled with numba, docs/cpu-engine.md); "graphblas" is the
        python-graphblas reference, the paper's linear algebra line by line.
    kernel : {"auto", "sccsc", "sccooc", "vecsc"}, default "auto"
        SpMV kernel of the GPU engine; naming one requires the GPU. With one
        source: thread per vertex (sccsc), thread per stored edge (sccooc),
        warp per vertex (vecsc), "auto" chooses by the scf metric. With more
        sources each runs its batched generalization, B sources per sweep:
        thread per (vertex, source) dense pull (sccsc), warp per (stored edge,
        32 sources) with atomics (sccooc), warp per (vertex, 32 sources) with
        frontier push/pull (vecsc); "auto" picks sccsc for one small batch on
        a shallow graph and vecsc otherwise (``spmv._batched.select_batched``).
    progress : bool or object with an ``update(n)`` method, default False
        True shows a progress bar (sources done, time left) on stderr. An
        object with an ``update(n)`` method, such as a ``tqdm`` bar of your own
        or a recorder, is advanced by ``n`` as each batch of ``n`` sources is
        done (the updates add up to the number of sources) and is not closed.
        The engines sweep the same batches with a bar as without; a shown bar
        is redrawn every second, so its time moves during a long batch.
    memory_limit : int or str, optional
        Most memory the run may take: bytes as an int, or a string with a
        unit, ``"4GB"``, ``"512MiB"`` (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB).
        The CPU engine sizes its batches to fit it (host memory); the GPU
        engines size their batches from the lower of it and the free device
        memory. ``None`` (default): from the memory available (CPU: half of
        the lower of MemAvailable and the room under the cgroup limit; GPU:
        free device memory).
    weight : None, True or str, optional
        ``None`` (default): every edge has length 1 (shortest paths in hops).
        ``True``: ``A``'s stored values are the edge lengths (duplicate entries
        summed, stored zeros still no edge), and shortest paths are the
        shortest by total length, as networkx's ``weight=`` (Dijkstra): two
        paths are equally short when their float64 sums are equal. For a
        networkx graph, the name of the edge attribute holding the lengths,
        as in networkx: an edge without it has length 1, a multigraph's pair
        takes its shortest parallel edge. Lengths must be positive and
        finite. ``directed=None`` reads a symmetric pattern whose two lengths
        of an edge differ as directed. Both engines compute it (the GPU:
        Bellman–Ford distances per batch, then the shortest-path DAG by layers).
    client : dask.distributed.Client, optional
        Sweep on the workers of this Dask cluster (``LocalCUDACluster`` with one
        worker per GPU, a ``LocalCluster``, a remote scheduler, or a mix): the
        graph goes to each worker once, the sources are cut into chunks handed
        to workers as they free up (a dead worker's chunks run elsewhere), and
        the partial sums are added in chunk order, so the result is the same
        for any number of workers. Each worker resolves ``engine`` on its own
        machine (``"auto"``: its GPU, else the CPU engine). Needs
        ``pip install turbobc[dask]``; see docs/scale-out.md.

    Returns
    -------
    numpy.ndarray
        float64, length n: the centrality of vertex i at position i.

    Raises
    ------
    TypeError
        ``A`` is not a sparse matrix, array or networkx graph; complex or
        non-numeric dtype; a flag that is not a bool (``progress``: nor an
        object with an ``update`` method); a non-integer ``k`` or source; a
        ``seed`` of an unknown kind; a ``weight`` that is not None, True or
        (networkx graph only) a string; an edge attribute that is not a real
        number.
    ValueError
        ``A`` not 2-D or not square; NaN or infinite values; ``sources`` out of
        range or repeated; ``k`` outside [1, n]; both ``k`` and ``sources``;
        ``directed=False`` on an asymmetric pattern; unknown ``engine`` or
        ``kernel``, or a kernel with a CPU engine; a ``memory_limit``
        that is not a number with a known unit, or below 1 byte; with
        ``weight``, a negative, NaN or infinite length (the message names the
        entry, (i, j, value), or the networkx edge), a zero attribute of a
        networkx edge, the two lengths of an edge differing with
        ``directed=False`` (named (i, j, a, b)), or lengths spanning so wide a
        range that one vanishes in a float64 sum.
    turbobc.exceptions.GPUUnavailableError
        ``engine="gpu"`` or a named kernel without a usable GPU.
    MemoryError
        Not even one source fits in ``memory_limit`` (or in the memory
        available), or the device ran out of memory; the message gives the
        bytes needed and the limit.
    OverflowError
        A sum came out non-finite (a quantity beyond float64 with per-vertex
        exponents; no known graph does this).

    Warns
    -----
    RuntimeWarning
        ``k=1`` with ``endpoints=False``: the sampled source's value is NaN, as
        networkx returns it (its 1/(k - 1) source factor is 0/0).

    Notes
    -----
    Brandes' algorithm in linear algebra: each BFS level is a masked sparse
    matrix product (forward sweep, path counts σ), and a backward sweep of the
    transposed products accumulates dependencies δ. Work is O(|sources| · m).
    The CPU engine sweeps a batch of sources at once as B x n sparse matrices,
    planning for 160 bytes per (source, vertex) pair of a batch (10 to 73
    measured on real graphs), at most 2^24 pairs a batch; its resident
    memory returns to where it started after every batch.
    The GPU engine sweeps many sources at once as n x B blocks (about 18
    bytes per vertex and source of a batch; B from free device memory).
    Path counts are float64 rescaled by powers of two per BFS level, so
    counts far beyond 1e308 (deep grids, meshes, roads) still give correct BC.
    A source one of whose levels spreads its counts over more than a factor
    2^896 (a 1100 x 1100 grid from a corner, a long chain of diamonds beside a
    plain path) is detected during its sweep and swept again with a binary
    exponent per vertex (``turbobc.engines.wide``), on the same device: the result
    is exact to float64 rounding of every ratio σ_v/σ_w for any range of
    counts. The result is never NaN or infinite except where networkx's own
    scaling gives NaN (``k=1``, which also warns); a non-finite sum raises
    ``OverflowError``.

    Weighted BC (``weight``) computes the distances of a batch of sources by
    frontier Bellman–Ford in the min-plus semiring, marks the stored edges on
    a shortest path, d(v) + len(v, w) == d(w), in a B x m mask, and sweeps
    that DAG by its hop layers with the same accumulate step
    (docs/algorithm.md, "Weighted BC"); it plans for 24 more bytes per
    (source, stored edge) pair of a batch.

    Examples
    --------
    A path 0 - 1 - 2: only the middle vertex lies between others.

    >>> import scipy.sparse as sp, turbobc
    >>> A = sp.csr_array(([1, 1, 1, 1], ([0, 1, 1, 2], [1, 0, 2, 1])), shape=(3, 3))
    >>> turbobc.bc(A, engine="graphblas").tolist()
    [0.0, 1.0, 0.0]
    >>> turbobc.bc(A, normalized=False, engine="graphblas").tolist()
    [0.0, 1.0, 0.0]

    With lengths: a triangle whose edge 0 - 2 (length 3) is longer than the way through 1.

    >>> W = sp.csr_array([[0, 1, 3], [1, 0, 1], [3, 1, 0]])
    >>> turbobc.bc(W, weight=True, normalized=False, engine="graphblas").tolist()
    [0.0, 1.0, 0.0]
    """
    return run_bc(A, sources=sources, targets=targets, k=k, seed=seed, normalized=normalized,
                  endpoints=endpoints, directed=directed, engine=engine, kernel=kernel,
                  progress=progress, memory_limit=memory_limit, weight=weight,
                  client=client, epsilon=epsilon, delta=delta).values


class Result(NamedTuple):
    """What :func:`run_bc` returns: the values of :func:`bc` and the facts of the run
    (engine, kernel family, batch, depth, peak bytes, seconds) for benchmarks and tests."""

    values: np.ndarray
    facts: dict


def _with_compile_facts(run):
    """``run`` (a run_* entry point) with ``compile_seconds`` and ``compiled`` in the facts:
    what this call compiled at first use (CPU functions, CUDA kernels), apart from the
    sweep."""

    @functools.wraps(run)
    def counted(*args, **kwargs):
        mark = first_use_mark()
        result = run(*args, **kwargs)
        seconds, names = compiled_since(mark)
        result.facts["compile_seconds"] = seconds
        result.facts["compiled"] = names
        return result

    return counted


@_with_compile_facts
def run_bc(A, *, sources=None, targets=None, k=None, seed=None, normalized=True,
           endpoints=False, directed=None, engine="auto", kernel="auto", progress=False,
           memory_limit=None, weight=None, client=None, epsilon=None, delta=None) -> Result:
    """:func:`bc` with the facts of the run. Same parameters, errors and values.

    validate → :class:`~turbobc.engines.protocol.Problem` → fold (turbobc/_fold.py) → the one
    loop (:func:`turbobc._run.run_schedule`) → non-finite check → rescale. With ``epsilon``, the
    facts say what the sampling did: ``samples`` (sources swept), ``bound`` (the largest
    radius reached: every value within it of the exact one with probability 1 − δ; 0 when
    exact), ``stopped_by`` ("radius", "hoeffding" or "exact"), ``checkpoints`` and
    ``hoeffding_samples`` (turbobc/_approx.py).

    Examples
    --------
    >>> import turbobc
    >>> A = turbobc.load_ego_facebook()
    >>> result = turbobc.run_bc(A, epsilon=0.05, delta=0.1, seed=0, engine="graphblas")
    >>> result.facts["samples"] < A.shape[0], result.facts["bound"] <= 0.05
    (True, True)
    """
    if epsilon is not None or delta is not None:
        return _run_approximate(A, epsilon=epsilon, delta=delta, sources=sources,
                                targets=targets, k=k, seed=seed, normalized=normalized,
                                endpoints=endpoints, directed=directed, engine=engine,
                                kernel=kernel, progress=progress, memory_limit=memory_limit,
                                weight=weight, client=client)
    call = validate(A, sources=sources, k=k, seed=seed, normalized=normalized,
                    endpoints=endpoints, directed=directed, engine=engine, kernel=kernel,
                    progress=progress, memory_limit=memory_limit, targets=targets,
                    weight=weight, client=client)
    graph = call.graph
    if graph.n == 0:
        return Result(np.zeros(0, dtype=np.float64), {"engine": call.engine})
    raw, facts = raw_sums(call)
    check_finite(raw, call.engine)
    values = rescale(raw, normalized=call.normalized, directed=graph.directed,
                     endpoints=call.endpoints,
                     sampled_sources=call.sources if call.sampled else None)
    return Result(values, facts)


def edge_bc(A, *, k=None, seed=None, sources=None, targets=None, normalized=True,
            directed=None, engine="auto", progress=False, memory_limit=None, weight=None,
            client=None, epsilon=None, delta=None):
    r"""Edge betweenness centrality: for every stored edge i -> j of ``A``, the share of
    shortest paths through it.

    .. math::

        c_B(e) = \sum_{s, t \in V} \frac{\sigma(s, t \mid e)}{\sigma(s, t)}

    Equal to ``networkx.edge_betweenness_centrality`` (networkx >= 3.6) on the same graph,
    with its normalization and ``k`` scaling, and with ``sources`` and ``targets`` to
    ``networkx.edge_betweenness_centrality_subset(G, sources, targets)`` (sources default to
    every vertex, targets too), with the same ``weight``. networkx's edge subset BC hands a
    non-target's dependency to its shortest-path parents in equal shares; so does this (on the
    CPU engine).

    Parameters
    ----------
    A : scipy.sparse matrix or array, numpy.ndarray or networkx graph
        As for :func:`bc`.
    k, seed, sources, targets, normalized, directed, memory_limit, progress, weight, client :
        As for :func:`bc` (no ``endpoints``: networkx counts every edge of a path;
        ``targets`` not with ``k``). With ``weight=True`` the result keeps ``A``'s cleaned
        pattern (the values are BC, not lengths).
    engine : {"auto", "gpu", "cpu", "graphblas"}, default "auto"
        As for :func:`bc`: the GPU engine sums the edges in its batched kernels (one
        accumulator policy beside the vertex sums); edge subset BC (``targets``) runs on the
        CPU engines, the cpu engine when ``"auto"``.
    epsilon, delta : float, optional
        As for :func:`bc`: every normalized edge value within ``epsilon`` of the exact one
        with probability at least 1 − ``delta`` (default 0.1), sources sampled until then
        (docs/approximate.md); :func:`run_edge_bc` says how many.

    Returns
    -------
    scipy.sparse.csr_array
        n x n float64 with the pattern of ``A`` after the clean-up of :func:`bc` (no self
        loops, no stored zeros): entry (i, j) is the BC of edge i -> j. An undirected graph
        holds the same value at (i, j) and (j, i). For a networkx graph, rows and columns
        follow ``list(G)``.

    Raises
    ------
    TypeError, ValueError, MemoryError, OverflowError
        As :func:`bc`.
    turbobc.exceptions.GPUUnavailableError
        ``engine="gpu"`` without a usable GPU, or with ``targets`` (edge subset BC runs on
        the CPU engine).

    Examples
    --------
    A path 0 - 1 - 2: each edge lies on the paths between its ends and the far vertex.

    >>> import scipy.sparse as sp, turbobc
    >>> A = sp.csr_array(([1, 1, 1, 1], ([0, 1, 1, 2], [1, 0, 2, 1])), shape=(3, 3))
    >>> turbobc.edge_bc(A, normalized=False).toarray().tolist()
    [[0.0, 2.0, 0.0], [2.0, 0.0, 2.0], [0.0, 2.0, 0.0]]
    """
    return run_edge_bc(A, k=k, seed=seed, sources=sources, targets=targets,
                       normalized=normalized, directed=directed, engine=engine,
                       progress=progress, memory_limit=memory_limit, weight=weight,
                       client=client, epsilon=epsilon, delta=delta).values


@_with_compile_facts
def run_edge_bc(A, *, k=None, seed=None, sources=None, targets=None, normalized=True,
                directed=None, engine="auto", progress=False, memory_limit=None, weight=None,
                client=None, epsilon=None, delta=None) -> "Result":
    """:func:`edge_bc` with the facts of the run (as :func:`run_bc`: with ``epsilon``,
    ``samples``, ``bound``, ``stopped_by``, ...). Same parameters, errors and values.

    Examples
    --------
    >>> import turbobc
    >>> A = turbobc.load_ego_facebook()
    >>> result = turbobc.run_edge_bc(A, epsilon=0.05, seed=0, engine="graphblas")
    >>> result.facts["samples"] < A.shape[0], result.facts["bound"] <= 0.05
    (True, True)
    """
    if epsilon is not None or delta is not None:
        return _run_approximate(A, epsilon=epsilon, delta=delta, sources=sources,
                                targets=targets, k=k, seed=seed, normalized=normalized,
                                endpoints=False, directed=directed, engine=engine,
                                kernel="auto", progress=progress, memory_limit=memory_limit,
                                weight=weight, client=client, edges=True)
    call = validate(A, sources=sources, k=k, seed=seed, normalized=normalized,
                    endpoints=False, directed=directed, engine=engine, kernel="auto",
                    progress=progress, memory_limit=memory_limit, targets=targets, edges=True,
                    weight=weight, client=client)
    graph = call.graph
    if graph.n == 0:
        return Result(edge_matrix(graph, np.zeros(0)), {"engine": call.engine})
    edge, facts = raw_edge_sums(call)
    distinct = distinct_edges(graph)
    raw = distinct.sums(edge)
    check_finite(raw, call.engine)
    # networkx rescales edge BC with endpoints=True: every edge of a path counts
    values = rescale(raw, normalized=call.normalized, directed=graph.directed,
                     endpoints=True, sampled_sources=call.sources if call.sampled else None,
                     n=graph.n)
    return Result(edge_matrix(graph, values, distinct), facts)


def _run_approximate(A, *, epsilon, delta, sources, targets, k, seed, normalized, endpoints,
                     directed, engine, kernel, progress, memory_limit, weight, client,
                     edges=False) -> Result:
    """:func:`run_bc` (or with ``edges``, :func:`run_edge_bc`) with ``epsilon``: the guarantee
    and the arguments checked, then sources, or shortest paths on the GPU, sampled until every
    value is within epsilon with probability 1 − delta (turbobc/_approx.py)."""
    epsilon, delta = check_guarantee(epsilon, delta, k=k, sources=sources, targets=targets,
                                     normalized=normalized)
    call = validate(A, sources=None, k=None, seed=None, normalized=True, endpoints=endpoints,
                    directed=directed, engine=engine, kernel=kernel, progress=progress,
                    memory_limit=memory_limit, weight=weight, client=client, edges=edges)
    return Result(*approximate(call, epsilon, delta, seed))
