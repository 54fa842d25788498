"""The public entry point :func:`bc`."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import NamedTuple

import numpy as np

from turbobc._graph import reverse_edge_positions
from turbobc._progress import ForwardedProgress, source_progress
from turbobc._chains import ChainFolding, find_chains
from turbobc._reduce import FoldedTrees, component_sizes, endpoint_terms, fold_trees
from turbobc._rescale import rescale
from turbobc._run import engine_named, sweep_sources
from turbobc.engines.protocol import SlotWeightsDeclined
from turbobc._tuning import current as current_tuning
from turbobc._validation import check_guarantee, validate

__all__ = ["bc", "edge_bc", "run_bc", "run_edge_bc", "Result"]


def _run_approximate(A, *, epsilon, delta, sources, targets, k, seed, normalized, endpoints,
                     directed, engine, kernel, progress, memory_limit, weight,
                     client, edges=False) -> "Result":
    """:func:`run_bc` (or with ``edges``, :func:`run_edge_bc`) with ``epsilon``: sources, or
    shortest paths on the GPU, sampled until every value is within epsilon with probability
    1 − delta (turbobc/_approx.py, turbobc/_pairs.py). Edge BC samples sources."""
    from turbobc._approx import (FIRST_CHECKPOINT, approximate_pairs, approximate_raw,
                                 pilot_size, sample_limit)
    from turbobc._pairs import pair_sample_limit

    epsilon, delta = check_guarantee(epsilon, delta, k=k, sources=sources, targets=targets,
                                     normalized=normalized)
    call = validate(A, sources=None, k=None, seed=None, normalized=True, endpoints=endpoints,
                    directed=directed, engine=engine, kernel=kernel, progress=progress,
                    memory_limit=memory_limit, weight=weight, client=client, edges=edges)
    n = call.graph.n
    distinct = per_edge = None
    if edges:
        distinct = _distinct_edges(call.graph)
        per_edge = (distinct.positions.size, distinct.raw_of)
        if distinct.positions.size == 0:  # no edge to estimate
            return Result(_edge_matrix(call.graph, np.zeros(0)), {
                "engine": call.engine, "samples": 0, "bound": 0.0, "stopped_by": "exact"})
    elif n < 3:  # nothing lies between two others: exact and all zero
        return Result(np.zeros(n, dtype=np.float64), {"engine": call.engine, "samples": n,
                                                      "bound": 0.0, "stopped_by": "exact"})
    pairs = not edges and _samples_pairs(call, pair_sample_limit(n, call.endpoints, epsilon,
                                                                 delta))
    first = FIRST_CHECKPOINT
    if pairs:
        sample, facts_of, in_flight = _pair_sampler(call)
        first = max(first, in_flight)
    with contextlib.ExitStack() as stack:
        bar = call.progress
        if isinstance(bar, bool):  # the bar's length: the most samples the run may draw
            limit = (pair_sample_limit(n, call.endpoints, epsilon, delta) if pairs
                     else sample_limit(n, call.endpoints or edges, epsilon, delta,
                                       values=None if per_edge is None else per_edge[0]))
            bar = stack.enter_context(source_progress(limit + pilot_size(limit, first), bar,
                                                      call.engine))
        if pairs:
            try:
                values, facts = approximate_pairs(
                    call, epsilon, delta, seed,
                    lambda seed64, start, count: sample(seed64, start, count, bar),
                    first=first)
                return Result(values, dict(facts_of(), **facts))
            except ArithmeticError as error:  # path counts past float64: sample sources
                overflow = str(error)
                if bar is not None:
                    bar.reset()
        else:
            overflow = None
        if call.client is None:
            from turbobc._run import engine_named

            sweeper = stack.enter_context(engine_named(call.engine).open(call.problem))

            def sweep(chosen):
                return sweeper.run(chosen, bar)
        else:
            def sweep(chosen):
                return sweep_sources(call.problem, call.engine, chosen, progress=bar,
                                     client=call.client)[0]

        values, facts = approximate_raw(call, epsilon, delta, seed, sweep, edges=per_edge)
        if call.client is None:
            facts = dict(sweeper.facts, **facts)
        if overflow is not None:
            facts["pairs_declined"] = overflow
    _check_finite(values, call.engine)
    if edges:
        return Result(_edge_matrix(call.graph, values, distinct), facts)
    return Result(values, facts)


class _DistinctEdges(NamedTuple):
    """The graph's distinct edges, each undirected edge once as i -> j with i < j."""

    positions: np.ndarray  # in the pattern's entries
    reverse: np.ndarray | None  # undirected: the positions of j -> i; directed: None

    def raw_of(self, partial) -> np.ndarray:
        """Their raw sums from a sweep's sums (``partial.edge``, one per stored entry)."""
        return self.sums(partial.edge)

    def sums(self, edge: np.ndarray) -> np.ndarray:
        """Their raw sums from one sum per stored entry: an undirected edge is crossed both
        ways, so {i, j} gets the sums of i -> j and j -> i."""
        if self.reverse is None:
            return edge
        return edge[self.positions] + edge[self.reverse]


def _distinct_edges(graph) -> _DistinctEdges:
    pattern = graph.pattern
    if graph.directed:
        return _DistinctEdges(np.arange(pattern.nnz, dtype=np.int64), None)
    rows = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(pattern.indptr))
    positions = np.flatnonzero(rows < pattern.indices)
    return _DistinctEdges(positions, reverse_edge_positions(pattern)[positions])


def _edge_matrix(graph, values: np.ndarray, edges: _DistinctEdges | None = None):
    """The n x n csr_array with the graph's pattern holding ``values``: one per stored edge,
    or one per distinct edge of ``edges``, an undirected edge's value then stored at (i, j)
    and (j, i)."""
    import scipy.sparse as sp

    pattern = graph.pattern
    if edges is not None and edges.reverse is not None:
        full = np.zeros(pattern.nnz, dtype=np.float64)
        full[edges.positions] = values
        full[edges.reverse] = values
        values = full
    return sp.csr_array((values, pattern.indices.copy(), pattern.indptr.copy()),
                        shape=pattern.shape)


def _samples_pairs(call, pair_limit: int) -> bool:
    """Whether an approximate run samples shortest paths (turbobc/_pairs.py) rather than
    sources: ``Tuning.approx_sampler`` ("auto": on the GPU or the cpu engine, for unweighted
    graphs, without Dask, unless Hoeffding's size for pairs costs about n source sweeps or
    more, ``Tuning.pair_cost_in_sources`` or ``cpu_pair_cost_in_sources`` each)."""
    knobs = current_tuning()
    choice = knobs.approx_sampler
    if choice not in ("auto", "sources", "pairs"):
        raise ValueError("Tuning.approx_sampler must be 'auto', 'sources' or 'pairs'; got "
                         f"{choice!r}")
    if choice == "pairs":
        if call.graph.weighted or call.client is not None:
            raise ValueError("approx_sampler='pairs' samples shortest paths in hops on this "
                             "process: it takes neither weight nor client")
        return True
    cost = {"gpu": knobs.pair_cost_in_sources, "cpu": knobs.cpu_pair_cost_in_sources}
    return (choice == "auto" and call.engine in cost and not call.graph.weighted
            and call.client is None
            and pair_limit * cost[call.engine] < call.graph.n)


def _pair_sampler(call):
    """``sample(seed, first, count, bar)`` for :func:`turbobc._approx.approximate_pairs` on
    the call's engine (the GPU kernel, the cpu engine's compiled sampler, or for the graphblas
    engine the host reference of turbobc/_pairs.py), a function giving the run's engine
    facts, and the samples in flight at once (the first checkpoint's least size)."""
    graph = call.graph
    if call.engine == "gpu":
        from turbobc.engines.gpu.pairs import PairSampler

        sampler = PairSampler(graph, endpoints=call.endpoints)
        return sampler, lambda: {"engine": "gpu", "pair_blocks": sampler.blocks,
                                 "path_counts_inexact": bool(sampler.status & 1)}, sampler.blocks
    if call.engine == "cpu":
        from turbobc.engines.cpu.memory import compute_threads
        from turbobc.engines.cpu.pairs import CpuPairSampler

        threads = compute_threads()
        sampler = CpuPairSampler(graph, endpoints=call.endpoints, threads=threads)
        return sampler, lambda: {"engine": "cpu", "threads": threads}, 1
    from turbobc._pairs import reference_counts

    total = np.zeros(graph.n, dtype=np.uint64)

    def sample(seed, first, count, bar):
        total[:] += reference_counts(graph.pattern, graph.directed, seed, first, count,
                                     endpoints=call.endpoints)
        if bar is not None:
            bar.update(count)
        return total

    return sample, lambda: {"engine": call.engine}, 1


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
        A shown ``tqdm`` bar makes the CPU engine pace its batches (about
        two updates a second), as ``True`` does; any other object gets the
        engine's own batches.
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


def run_bc(A, *, sources=None, targets=None, k=None, seed=None, normalized=True,
           endpoints=False, directed=None, engine="auto", kernel="auto", progress=False,
           memory_limit=None, weight=None, client=None, epsilon=None, delta=None) -> Result:
    """:func:`bc` with the facts of the run. Same parameters, errors and values.

    validate → :class:`~turbobc.engines.protocol.Problem` → engine → the one loop
    (:func:`turbobc._run.run_schedule`) → non-finite check → rescale. With ``epsilon``, the
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
    raw, facts = _raw_sums(call)
    _check_finite(raw, call.engine)
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
        return Result(_edge_matrix(graph, np.zeros(0)), {"engine": call.engine})
    edge, facts = _raw_edge_sums(call)
    distinct = _distinct_edges(graph)
    raw = distinct.sums(edge)
    _check_finite(raw, call.engine)
    # networkx rescales edge BC with endpoints=True: every edge of a path counts
    values = rescale(raw, normalized=call.normalized, directed=graph.directed,
                     endpoints=True, sampled_sources=call.sources if call.sampled else None,
                     n=graph.n)
    return Result(_edge_matrix(graph, values, distinct), facts)


def _raw_sums(call) -> tuple[np.ndarray, dict]:
    """The raw sums of the call's sources and the facts of the run: over the graph as it
    is, or, for exact BC of an undirected graph, over the core left once the trees hanging
    off it are folded (turbobc/_reduce.py) and with the sources inside its chains folded into
    the chains' ends (turbobc/_chains.py), expanded back."""
    every_source = _every_source(call)
    folded = _tree_folding(call) if every_source else None
    core = call.graph if folded is None else folded.core
    weight = None if folded is None else folded.weight
    problem = dataclasses.replace(call.problem, graph=core, endpoints=False,
                                  target_weight=weight, source_weight=weight)
    chains = _chain_folding(call, problem) if every_source else None
    if folded is None and chains is None:
        total, facts = sweep_sources(call.problem, call.engine, call.sources,
                                     progress=call.progress, client=call.client)
        return total.vertex, dict(facts, folded=0)
    # the call's problem on the core: every vertex weighted by what it stands for; the
    # endpoint terms come back in closed form (FoldedTrees.expand)
    with _folded_progress(call, core) as bar:
        core_raw, facts = _sweep_core(call, problem, chains, bar)
    if folded is None:
        facts = dict(facts, folded=0)
        raw = core_raw
        if call.endpoints:
            raw = raw + endpoint_terms(component_sizes(call.graph))
        return raw, facts
    return folded.expand(core_raw, endpoints=call.endpoints), _folded_facts(facts, folded)


@contextlib.contextmanager
def _folded_progress(call, core):
    """The progress of a folded run, for the sweeps of ``core``: it counts every vertex of
    the graph, the swept ones as they go and the folded ones at the end; a MemoryError
    names the core."""
    with contextlib.ExitStack() as stack:
        bar = call.progress
        if isinstance(bar, bool):
            bar = stack.enter_context(source_progress(call.graph.n, bar, call.engine))
        try:
            yield bar
        except MemoryError as exc:
            raise MemoryError(f"{exc} (that is the core left after folding the "
                              f"{call.graph.n - core.n} vertices of the trees hanging off "
                              f"this graph of n={call.graph.n})") from None
        if call.graph.n > core.n:
            bar.update(call.graph.n - core.n)


def _folded_facts(facts: dict, folded: FoldedTrees) -> dict:
    """The facts of a run over the core, with what the folding of its trees did."""
    return dict(facts, folded=folded.folded, core_vertices=folded.core.n,
                fold_seconds=folded.seconds)


def _every_source(call) -> bool:
    """Whether the call is exact BC with every vertex a source and a target: what the exact
    reductions (turbobc/_reduce.py, turbobc/_chains.py) fold."""
    return not call.sampled and call.targets is None and len(call.sources) == call.graph.n


def _tree_folding(call) -> FoldedTrees | None:
    """The trees hanging off the call's graph folded (turbobc/_reduce.py), or None: off
    (``Tuning.fold_trees``), a directed graph, fewer folded vertices than
    ``Tuning.fold_min_share`` of them, or a weighted graph whose sums of lengths are not
    exact (``Graph.length_scale``)."""
    knobs = current_tuning()
    if not knobs.fold_trees or call.graph.directed:
        return None
    # a weighted graph only when every path sum is exact (Graph.length_scale): the
    # reductions move sources along paths, networkx sums lengths from the source
    if call.graph.weighted and call.graph.length_scale is None:
        return None
    # too little to fold is not worth what the weighted sweeps cost: then only the
    # peeling runs (ego-Facebook, 75 of 4,039 vertices: 1 ms instead of 8)
    return fold_trees(call.graph,
                      min_folded=max(1, math.ceil(knobs.fold_min_share * call.graph.n)))


def _raw_edge_sums(call) -> tuple[np.ndarray, dict]:
    """The raw edge sums of the call's sources, one per stored entry of the graph, and the
    facts of the run: over the graph as it is, or, for exact BC of an undirected graph, over
    the core left once its trees are folded, expanded back (``FoldedTrees.expand_edges``)."""
    folded = _tree_folding(call) if _every_source(call) else None
    if folded is None:
        total, facts = sweep_sources(call.problem, call.engine, call.sources,
                                     progress=call.progress, client=call.client)
        return total.edge, dict(facts, folded=0)
    core = folded.core
    problem = dataclasses.replace(call.problem, graph=core, target_weight=folded.weight,
                                  source_weight=folded.weight)
    with _folded_progress(call, core) as bar:
        total, facts = sweep_sources(problem, call.engine, np.arange(core.n), progress=bar,
                                     client=call.client)
    return folded.expand_edges(total.edge, call.graph.pattern), _folded_facts(facts, folded)


def _chain_folding(call, problem):
    """The folding of the sources inside the core's chains (turbobc/_chains.py), or None:
    off (``Tuning.fold_chains``; ``"auto"``: on the GPU engine, for cores of at least
    ``Tuning.chain_min_vertices``), a directed graph, a weighted one whose sums of lengths
    are not exact (``Graph.length_scale``), a Dask run, an engine that does not serve
    per-slot target weights, or fewer folded sources than ``Tuning.chain_min_share`` of the
    vertices."""
    knobs = current_tuning()
    graph = problem.graph
    if knobs.fold_chains not in (True, False, "auto"):
        raise ValueError(f"Tuning.fold_chains must be True, False or 'auto'; got "
                         f"{knobs.fold_chains!r}")
    if (not knobs.fold_chains or graph.directed or problem.edges
            or call.client is not None):
        return None
    if knobs.fold_chains == "auto" and (call.engine != "gpu"
                                        or graph.n < knobs.chain_min_vertices):
        return None
    if np.count_nonzero(graph.out_degree == 2) < knobs.chain_min_share * call.graph.n:
        return None
    if graph.weighted and graph.length_scale is None:
        return None
    chains = find_chains(graph)
    chains = chains.select(chains.inner_count + 1 <= knobs.chain_max_length)
    if chains.inner.size < max(1, knobs.chain_min_share * call.graph.n):
        return None
    weight = problem.target_weight
    plan = ChainFolding(graph, np.ones(graph.n) if weight is None else weight, chains)
    served = dataclasses.replace(problem, slot_weights=plan, source_weight=None)
    if engine_named(call.engine).can_serve(served) is not None:
        return None
    return plan


def _sweep_core(call, problem, chains, bar) -> tuple[np.ndarray, dict]:
    """Raw sums of the core's every vertex as a source: swept, or, with ``chains``, the
    chains' ends swept with per-slot target weights plus the chains' closed-form terms (and
    swept as they are if the engine declines midway)."""
    core = problem.graph
    if chains is not None:
        served = dataclasses.replace(problem, slot_weights=chains, source_weight=None)
        shown_before = getattr(bar, "n", None)  # a tqdm bar's count
        # a caller's own progress object: counted, so that a declined attempt's sources are
        # not reported twice
        attempt = bar if shown_before is not None else ForwardedProgress(bar)
        try:
            total, facts = sweep_sources(served, call.engine, chains.sources, progress=attempt)
        except SlotWeightsDeclined:
            if shown_before is not None:  # the unfolded sweep counts every source again
                bar.n = shown_before
                bar.refresh()
            else:
                bar = ForwardedProgress(bar, already=attempt.done)
        else:
            bar.update(chains.folded)
            return total.vertex + chains.credit, dict(
                facts, chain_folded=chains.folded, chains=chains.chains.count,
                chain_seconds={"plan": chains.seconds["plan"],
                               "target_weights": chains.seconds["target_weights"],
                               "credits": chains.seconds["credits"]})
    total, facts = sweep_sources(problem, call.engine, np.arange(core.n), progress=bar,
                                 client=call.client)
    return total.vertex, facts


def _check_finite(raw: np.ndarray, engine: str) -> None:
    """Refuse to return a non-finite sum: networkx's only NaN comes from its own rescaling.

    Every raw sum is at most (number of sources) x n, so a non-finite one means a count the
    engines could not represent; say so instead of returning it.
    """
    bad = np.flatnonzero(~np.isfinite(raw))
    if bad.size:
        raise OverflowError(
            f"the {engine} engine produced {bad.size} non-finite betweenness sums (first at "
            f"vertex {bad[0]}): some quantity of this graph is beyond what turbobc can "
            f"represent in float64 with per-vertex exponents; please report the graph")
