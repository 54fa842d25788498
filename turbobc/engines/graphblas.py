"""The CPU engine and the reference: Algorithm 1 in python-graphblas, many sources at once.

A batch of B sources is processed together; every per-source vector of the
paper becomes a B x n matrix with one row per source (LAGraph's layout,
docs/algorithm.md, "Many sources per sweep"). In row form the paper's products read

    paper (one source, column vectors)      here (B sources, row vectors)
    f<¬σ> = Aᵀ f                            F<¬Σ> = F A
    t = A u                                 T<S_{d-1}> = U Aᵀ

Both products use the plus-first semiring: the sum over neighbours of the
left operand's values; the values of A never matter, only its pattern.

Path counts are kept overflow-safe per level (see :func:`_keep_in_range`):
each level's counts σ_d are stored as σ̂_d = σ_d / 2^E_d with an integer
exponent E_d per source, so the algorithm stays correct far past 1e308 while
graphs whose counts fit in float64 never scale at all. A source one of whose
levels spreads wider than :data:`turbobc.engines.wide.WIDE_RANGE` (the small counts
would underflow) is taken out of its batch and swept by :mod:`turbobc.engines.wide`,
which keeps an exponent per (source, vertex).

Memory. A batch of B sources holds its levels (16 bytes per stored count; a level denser than
:data:`PULL_ABOVE_DENSITY` is a bitmap, 9 bytes per slot), the visited bitmap and the
temporaries of one level: up to :data:`BYTES_PER_SLOT` bytes per (source, vertex) slot.
:func:`batch_size_for` plans each batch for that many bytes within ``memory_limit``, or within
``Tuning.cpu_memory_fraction`` of the memory available (the lower of MemAvailable and the room under
the cgroup limit, :func:`turbobc._memory.available_memory`), and caps it at
``Tuning.cpu_batch_cap`` slots, past which batches sweep hardly faster but peak higher. The
resident set grew with every batch (email-Enron, 914 sources a batch: 2.2, 4.2, 5.8 GiB after
the first three, a 12.8 GiB peak over the whole run; the issue saw 15 GB) not from allocator
fragmentation but because every python-graphblas Matrix is in a reference cycle
(``Matrix.ss._parent``) and is freed only by Python's cyclic garbage collector, which seldom
runs here (few Python objects are made). So each batch ends with ``gc.collect()`` (20 ms): the
resident set returns to its start after every batch and the peak is that of one batch. Measured
alternatives (``python -m bench cpu_memory --mechanisms``,
bench/results/cpu_memory-20261123T144734Z.json; email-Enron, 3,000 sources, B = 914; peak /
resident after each batch, GiB): none 6.35 / 2.22 4.19 5.85 6.29; glibc ``malloc_trim(0)``
after each batch 5.30 / 2.13 4.10 1.85 2.33 (the memory is still referenced);
``MALLOC_ARENA_MAX=1`` 6.36 / 2.22 4.18 5.84 6.29; ``MALLOC_MMAP_THRESHOLD_=131072`` 4.37 /
2.13 2.12 3.82 4.30; ``gc.collect()`` 2.36 / 0.18 0.23 0.18 0.18 (kept); ``gc.collect()`` and
``malloc_trim(0)`` 2.35 / 0.15 0.15 0.15 0.15 (not kept: 30 MiB less, a glibc-only call).
Collecting more often within a batch does not lower its peak (2.34 GiB either way): the peak is
live data.
"""

from __future__ import annotations

import gc
import time

import numpy as np
from graphblas import Matrix, Vector, binary, dtypes, monoid, semiring, unary

from spmv._ctl import OVERFLOW_EXP

from turbobc._graph import Graph
from turbobc.engines.protocol import Engine, Partial, Problem, Sweeper
from turbobc._memory import available_memory, format_bytes
from turbobc._progress import paced_batches
from turbobc._tuning import current as current_tuning
from turbobc.engines.wide import WIDE_BATCH_ENTRIES, WIDE_RANGE, accumulate_wide

__all__ = ["accumulate", "batch_size_for", "GraphblasEngine", "GraphblasSweeper"]

# A level whose largest count exceeds 2**RESCALE_ABOVE_EXP is scaled back to [0.5, 1): the
# kernels' limit too (spmv/kernels/ctl.cuh, mirrored in spmv/_ctl.py).
RESCALE_ABOVE_EXP = OVERFLOW_EXP

BYTES_PER_SLOT = 160
"""Bytes one (source, vertex) slot of a batch may take at the peak of its sweep: the levels
(16 bytes per stored count, 9 per slot for a level dense enough to be a bitmap), the visited
bitmap and the temporaries of one level. Measured peaks (one batch of 400 random sources,
resident set above the start): p2p-Gnutella31 10.5, cit-HepPh 22.1, road-luxembourg 23.3,
delaunay_n16 50.4, as-caida 64.5, ca-GrQc 65.8, email-Enron 68, ego-Facebook 73.3, and 117
and 153 on layered graphs built so that every level is just dense enough to be a bitmap."""

# A frontier denser than this (entries / (B n)) is pulled rather than pushed: it is handed to
# the product as a bitmap, which lets SuiteSparse use its dot-product method (LAGraph's switch).
# Forward sweeps alone, B = n, two cores, seconds at 0.05 / 0.2 / never a bitmap: ca-GrQc core
# 1.50 / 1.15 / 0.95, power core 1.60 / 1.15 / 1.15, ego-Facebook 1.22 / 1.17 / 1.41,
# wiki-Vote as undirected core 1.76 / 1.81 / 2.42, as20000102 core 0.71 / 0.67 / 0.83: deep
# graphs' mid-size frontiers were pulled too early (one-off script, not a record).
PULL_ABOVE_DENSITY = 0.2


def fixed_bytes(n: int, m: int, directed: bool) -> int:
    """Bytes of a run that do not depend on the batch: the GraphBLAS copy of the pattern
    (8-byte row pointers and column indices; Aᵀ too for directed graphs) and the sums."""
    return (8 * (n + 1) + 8 * m) * (2 if directed else 1) + 8 * n


def batch_size_for(n: int, num_sources: int, *, m: int = 0, directed: bool = False,
                   memory_limit: int | None = None, available: int | None = None) -> int:
    """Sources per batch: what the memory budget holds, at most ``Tuning.cpu_batch_cap`` slots.

    Parameters
    ----------
    n, num_sources : int
        Vertices, and sources still to sweep.
    m : int
        Stored edges of the pattern.
    directed : bool
        Directed graphs keep Aᵀ too.
    memory_limit : int, optional
        The user's ``memory_limit`` in bytes: the whole run (:func:`fixed_bytes` plus
        :data:`BYTES_PER_SLOT` per source and vertex) must fit in it.
    available : int, optional
        Available memory in bytes; default :func:`turbobc._memory.available_memory`. Without
        ``memory_limit`` the batches plan for ``Tuning.cpu_memory_fraction`` of it.

    Returns
    -------
    int
        At least 1 (0 when there is no source).

    Raises
    ------
    MemoryError
        Not even one source fits in ``memory_limit`` (or, without it, in the available
        memory); the message gives the estimate and the limit.
    """
    if num_sources == 0:
        return 0
    knobs = current_tuning()
    fixed = fixed_bytes(n, m, directed)
    per_source = BYTES_PER_SLOT * max(n, 1)
    if memory_limit is not None:
        budget = ceiling = memory_limit
        what = f"memory_limit is {format_bytes(memory_limit)}"
        fix = "raise memory_limit"
    else:
        ceiling = available_memory() if available is None else available
        budget = int(knobs.cpu_memory_fraction * ceiling)
        what = (f"only {format_bytes(ceiling)} of memory is available (MemAvailable, or the "
                "room under the cgroup limit)")
        fix = "free memory, or pass a larger memory_limit to try anyway"
    if fixed + per_source > ceiling:
        raise MemoryError(
            f"the CPU engine needs about {format_bytes(fixed + per_source)} for one source "
            f"(n={n}, {m} stored edges: {format_bytes(fixed)} for the graph and "
            f"{BYTES_PER_SLOT} bytes per vertex and source), but {what}; {fix}")
    fits = max(1, (budget - fixed) // per_source)
    return int(max(1, min(num_sources, knobs.cpu_batch_cap // max(n, 1), fits)))


def accumulate(graph: Graph, sources: np.ndarray, *, endpoints: bool, progress,
               memory_limit: int | None = None) -> np.ndarray:
    """Raw betweenness sums over ordered pairs from the given sources.

    Parameters
    ----------
    graph : turbobc._graph.Graph
        The validated adjacency pattern.
    sources : numpy.ndarray
        Distinct int64 vertex ids.
    endpoints : bool
        Add networkx's endpoint terms: +1 to each vertex reached from s (other
        than s) and (reached - 1) to s.
    progress : tqdm.tqdm
        Advanced by the number of sources of each finished batch (batches are paced
        to about half a second while the bar is shown, see ``_progress.paced_batches``).
    memory_limit : int, optional
        Bytes the run may use (:func:`batch_size_for`); default: sized from the memory
        available.

    Returns
    -------
    numpy.ndarray
        ``raw[v] = Σ_{s ≠ v} δ_s(v)`` (+ endpoint terms), not halved, not normalized.

    Raises
    ------
    MemoryError
        Not even one source fits (:func:`batch_size_for`); raised before any work.
    """
    with GraphblasSweeper(Problem(graph, endpoints=endpoints,
                                  memory_limit=memory_limit)) as sweeper:
        return sweeper.run(sources, progress).vertex


class GraphblasEngine(Engine):
    """The CPU engine: python-graphblas (SuiteSparse:GraphBLAS), many sources per batch."""

    name = "graphblas"

    def can_serve(self, problem: Problem) -> str | None:
        if problem.kernel != "auto":
            return (f"kernel={problem.kernel!r} names a GPU kernel; the graphblas engine "
                    "takes kernel='auto'")
        return None

    def open(self, problem: Problem) -> "GraphblasSweeper":
        return GraphblasSweeper(problem)


class GraphblasSweeper(Sweeper):
    """A, and Aᵀ for directed graphs, as GraphBLAS matrices, kept across :meth:`run` calls."""

    def __init__(self, problem: Problem):
        super().__init__(problem)
        graph = problem.graph
        self.A = Matrix.from_csr(graph.pattern.indptr, graph.pattern.indices, True,
                                 nrows=graph.n, ncols=graph.n)
        # The backward product needs Aᵀ: the same matrix for undirected graphs, else built once.
        self.AT = self.A if not graph.directed else self.A.T.new()

    def run(self, sources: np.ndarray, progress=None) -> Partial:
        """Raw sums of ``sources``, in batches sized by :func:`batch_size_for`; raises
        ``MemoryError`` before any work when not even one source fits."""
        graph, endpoints = self.problem.graph, self.problem.endpoints
        tau, omega = self.problem.target_weight, self.problem.source_weight
        sources = np.asarray(sources, dtype=np.int64)
        raw = np.zeros(graph.n, dtype=np.float64)
        # per-edge sums E (pattern within A's) when the problem asks for them
        edge_sums = Matrix(dtypes.FP64, graph.n, graph.n) if self.problem.edges else None
        edge_raw = np.zeros(graph.nnz, dtype=np.float64) if self.problem.edges else None
        if len(sources) == 0:
            return Partial(vertex=raw, sources=0, edge=edge_raw)
        began = time.perf_counter()
        step = batch_size_for(graph.n, len(sources), m=graph.nnz, directed=graph.directed,
                              memory_limit=self.problem.memory_limit)
        wide, batches = [], 0
        collect_above = current_tuning().cpu_collect_above_slots
        # While a progress bar is shown, batches are paced to update it about twice a second.
        for start, stop in paced_batches(len(sources), step, progress):
            batch = sources[start:stop]
            wide_here = _accumulate_batch(self.A, self.AT, batch, raw, endpoints, tau, omega,
                                          edge_sums, self.problem.split_non_targets)
            wide.extend(wide_here)
            batches += 1
            if len(batch) * graph.n >= collect_above:
                # python-graphblas objects are freed by the cyclic collector only (Matrix.ss
                # refers back to its Matrix): collect the batch's matrices now, so the next
                # batch reuses their memory instead of stacking on it (docstring, "Memory").
                gc.collect()
            if progress is not None:
                progress.update(len(batch) - len(wide_here))
        if wide:
            # Sources whose levels span more than per-level scaling holds: per-vertex
            # exponents, in batches no larger than this engine's (fewer bytes per slot).
            pattern = graph.pattern
            accumulate_wide(np, pattern.indptr, pattern.indices, graph.n, np.array(wide), raw,
                            endpoints=endpoints, progress=progress, target_weight=tau,
                            source_weight=omega, edge_raw=edge_raw,
                            split_non_targets=self.problem.split_non_targets,
                            batch_entries=min(WIDE_BATCH_ENTRIES, step * graph.n))
        if edge_sums is not None:
            edge_raw += _aligned_with_pattern(edge_sums, graph.pattern)
        self.facts.update(engine="graphblas", batch=step, batches=batches,
                          wide_sources=len(wide), sweep_seconds=time.perf_counter() - began)
        return Partial(vertex=raw, sources=len(sources), edge=edge_raw)

    def close(self) -> None:
        self.A = self.AT = None


def _accumulate_batch(A: Matrix, AT: Matrix, batch: np.ndarray, raw: np.ndarray,
                      endpoints: bool, tau: np.ndarray | None = None,
                      omega: np.ndarray | None = None,
                      edge_sums: Matrix | None = None,
                      split_non_targets: bool = False) -> list:
    """Forward and backward sweep for one batch of sources; adds into ``raw``.

    ``tau`` and ``omega`` are the per-vertex target and source weights of the accumulate
    step (spmv/kernels/accumulate.cuh; None: all ones); ``edge_sums`` (n x n, or None)
    also gets each stored edge's share of the dependencies (edge BC). Returns
    the sources whose counts left the range of per-level scaling (nothing of them was added:
    the batch is swept again without them); they need :mod:`turbobc.engines.wide`.
    """
    levels, shifts, visited, too_wide = _forward(A, batch)
    if too_wide.any():
        del levels, shifts, visited
        if not too_wide.all():
            _accumulate_batch(A, AT, batch[~too_wide], raw, endpoints, tau, omega, edge_sums,
                              split_non_targets)
        return batch[too_wide].tolist()
    weights = None if omega is None else np.asarray(omega, dtype=np.float64)[batch]
    _backward(AT, levels, shifts, raw, tau, weights, A if edge_sums is not None else None,
              edge_sums, split_non_targets)
    if endpoints:
        _add_endpoint_terms(visited, batch, raw, weights)
    return []


def _forward(A: Matrix, batch: np.ndarray):
    """Multi-source BFS with path counting.

    Returns the per-level count matrices ``levels[d]`` (B x n, pattern = the
    vertices at depth d from each source, values σ̂_d), the per-level exponent
    shifts (None where the level was not scaled), the pattern of all
    discovered vertices, and a boolean per source: its counts spread too wide.
    """
    B, n = len(batch), A.nrows
    rows = np.arange(B, dtype=np.int64)
    # f = e_s, σ = e_s, S(s) = 0: depth 0 is the source itself with one path.
    frontier = Matrix.from_coo(rows, batch, 1.0, nrows=B, ncols=n)
    visited = Matrix.from_coo(rows, batch, True, nrows=B, ncols=n)
    visited.ss.config["sparsity_control"] = {"bitmap"}  # a dense mask, tested everywhere
    levels, shifts = [frontier], [None]
    too_wide = np.zeros(B, dtype=bool)
    while True:
        if frontier.nvals > PULL_ABOVE_DENSITY * B * n:
            frontier.ss.config["sparsity_control"] = {"bitmap"}
        # f<¬σ> = Aᵀ f : paths into the undiscovered vertices, summed over the frontier.
        nxt = Matrix(dtypes.FP64, B, n)
        nxt(~visited.S, replace=True) << frontier.mxm(A, semiring.plus_first)
        if nxt.nvals == 0:
            break
        shift = _keep_in_range(nxt, too_wide)
        # σ += f ; S<f> = d : the level joins the discovered set (its counts stay in `levels`).
        visited(nxt.S) << True
        levels.append(nxt)
        shifts.append(shift)
        frontier = nxt
    return levels, shifts, visited, too_wide


def _backward(AT: Matrix, levels: list, shifts: list, raw: np.ndarray,
              tau: np.ndarray | None = None, row_weights: np.ndarray | None = None,
              A: Matrix | None = None, edge_sums: Matrix | None = None,
              split_non_targets: bool = False) -> None:
    """Brandes' dependency accumulation from the deepest level up to depth 1; row b's δ
    counts ``row_weights[b]`` times (the weight of its source; None: once). With
    ``edge_sums``, every edge v -> w of the shortest-path DAG also gets its term
    σ(v)/σ(w) · (τ(w) + δ(w)), down to the source's own edges (level 1).

    ``split_non_targets`` (τ in {0, 1}, with ``edge_sums``) is networkx's edge subset BC: a
    target w hands each parent σ(v)/σ(w) · (1 + δ(w)), a non-target δ(w) / |P(w)|, an equal
    share whatever the path counts."""
    B, n = levels[0].nrows, levels[0].ncols
    delta = None  # δ of the child level d, pattern within S_d
    last = 1 if edge_sums is not None else 2  # level 1 only feeds the source (and its edges)
    for d in range(len(levels) - 1, last - 1, -1):
        sigma_child, sigma_parent = levels[d], levels[d - 1]
        # u<S == d> = (τ + δ) ./ σ   (the accumulate step: spmv/kernels/accumulate.cuh)
        u = _target_weights(sigma_child, tau)
        share = None  # split_non_targets: q = (1 − τ) δ ./ |P|, each parent's equal share
        if delta is not None and split_non_targets:
            # u = τ (1 + δ) ./ σ ; q<S == d> = (1 − τ) δ ./ (parents at d − 1 per child)
            parents = Matrix(dtypes.FP64, B, n)
            parents(sigma_child.S) << sigma_parent.apply(unary.one).mxm(A, semiring.plus_times)
            rest = sigma_child.apply(unary.one).new()
            rest(binary.minus) << u                     # 1 − τ on the level
            share = rest.ewise_mult(delta, binary.times).new()
            share << share.ewise_mult(parents, binary.truediv)
            u(binary.plus) << u.ewise_mult(delta, binary.times)
        elif delta is not None:
            u(binary.plus) << delta
        u << u.ewise_mult(sigma_child, binary.truediv)
        if shifts[d] is not None:
            # σ_{d-1} / σ_d = σ̂_{d-1} / σ̂_d · 2^-shift_d
            u << _row_scaling(np.ldexp(1.0, -shifts[d])).mxm(u, semiring.any_times)
        if edge_sums is not None:
            # E<A> += ω-weighted σ̂_{d-1}ᵀ u : the term σ(v)/σ(w) (τ(w) + δ(w)) of each DAG
            # edge v -> w (v at d − 1, w at d), summed over the batch's sources
            parent = sigma_parent if row_weights is None else _row_scaling(row_weights).mxm(
                sigma_parent, semiring.any_times).new()
            edge_sums(accum=binary.plus, mask=A.S) << parent.T.mxm(u, semiring.plus_times)
            if share is not None:  # E<A> += ω-weighted pattern(σ̂_{d-1})ᵀ q
                ones = sigma_parent.apply(unary.one).new()
                if row_weights is not None:
                    ones = _row_scaling(row_weights).mxm(ones, semiring.any_times).new()
                edge_sums(accum=binary.plus, mask=A.S) << ones.T.mxm(share,
                                                                     semiring.plus_times)
        if d == 1:
            break  # the source's δ is not needed
        # t<S == d-1> = A u : sum over the children w of each parent v.
        t = Matrix(dtypes.FP64, B, n)
        t(sigma_parent.S, replace=True) << u.mxm(AT, semiring.plus_first)
        # δ<S == d-1> = t .* σ   (each vertex's δ is complete once its children are done)
        delta = t.ewise_mult(sigma_parent, binary.times).new()
        if share is not None:  # δ<S == d-1> += A q : the equal shares of the non-targets
            t(sigma_parent.S, replace=True) << share.mxm(AT, semiring.plus_first)
            delta(binary.plus) << t
        # bc += ω δ ; sources sit at depth 0 and are never reached by this loop.
        _add_columns(delta, raw, row_weights)


def _keep_in_range(level: Matrix, too_wide: np.ndarray) -> np.ndarray | None:
    """Scale rows whose largest count exceeds 2^RESCALE_ABOVE_EXP back to [0.5, 1).

    The scaling multiplies by a power of two, which is exact in floating point,
    so results are bit-identical to unscaled arithmetic wherever that does not
    overflow. Returns the per-row exponent shift, or None when nothing was scaled.
    Rows whose smallest count falls below 1 / WIDE_RANGE once scaled are marked in
    ``too_wide`` (only a scaled level can newly fall there: an unscaled count is
    at least its smallest parent).
    """
    largest = level.reduce_scalar(monoid.max).new().value
    if largest is None or largest <= np.ldexp(1.0, RESCALE_ABOVE_EXP):
        return None
    row_max = level.reduce_rowwise(monoid.max).new()
    idx, vals = row_max.to_coo()
    shift = np.zeros(level.nrows, dtype=np.int64)
    big = vals > np.ldexp(1.0, RESCALE_ABOVE_EXP)
    shift[idx[big]] = np.frexp(vals[big])[1]
    level << _row_scaling(np.ldexp(1.0, -shift)).mxm(level, semiring.any_times)
    min_idx, smallest = level.reduce_rowwise(monoid.min).new().to_coo()
    too_wide[min_idx[smallest < 1.0 / WIDE_RANGE]] = True
    return shift


def _target_weights(level: Matrix, tau: np.ndarray | None) -> Matrix:
    """τ(w) at every entry (b, w) of ``level``: the target weight of the accumulate step,
    all ones when ``tau`` is None (every vertex a target, weight 1)."""
    ones = level.apply(unary.one).new()
    if tau is None:
        return ones
    # column w scaled by τ(w): ones · diag(τ)
    weights = Vector.from_dense(np.asarray(tau, dtype=np.float64)).diag()
    return ones.mxm(weights, semiring.any_times).new()


def _row_scaling(factors: np.ndarray) -> Matrix:
    """diag(factors) as a B x B matrix."""
    return Vector.from_coo(np.arange(len(factors)), factors, size=len(factors)).diag()


def _aligned_with_pattern(E: Matrix, pattern) -> np.ndarray:
    """The values of E (pattern within ``pattern``'s) as an array aligned with
    ``pattern.indices`` (zero where E has no entry)."""
    n = pattern.shape[0]
    rows, cols, vals = E.to_coo()
    keys = np.repeat(np.arange(n, dtype=np.int64), np.diff(pattern.indptr)) * n \
        + pattern.indices.astype(np.int64)
    out = np.zeros(pattern.nnz, dtype=np.float64)
    out[np.searchsorted(keys, rows.astype(np.int64) * n + cols)] = vals
    return out


def _add_columns(M: Matrix, raw: np.ndarray, row_weights: np.ndarray | None = None) -> None:
    """raw += the column sums of M, row b counted ``row_weights[b]`` times (ωᵀ M) when given."""
    if row_weights is None:
        sums = M.reduce_columnwise(monoid.plus).new()
    else:
        sums = Vector.from_dense(row_weights).vxm(M, semiring.plus_times).new()
    idx, vals = sums.to_coo()
    raw[idx] += vals


def _add_endpoint_terms(visited: Matrix, batch: np.ndarray, raw: np.ndarray,
                        row_weights: np.ndarray | None = None) -> None:
    """networkx's endpoint terms from the reach pattern R = pattern(σ).

    bc += colsum(R) - e_S  (every reached vertex but the source gets +1), and
    bc[s] += rowsum_s(R) - 1  (the source gets the number of others it reaches); with
    ``row_weights`` ω, every term of row b counts ω_b times.
    """
    reaches = visited.reduce_rowwise(monoid.plus[dtypes.INT64]).new().to_dense(fill_value=0)
    if row_weights is None:
        reached_by = visited.reduce_columnwise(monoid.plus[dtypes.INT64]).new()
        idx, counts = reached_by.to_coo()
        raw[idx] += counts
        raw[batch] += reaches - 2
        return
    # colsum(diag(ω) R)
    weighted = Vector.from_dense(row_weights).vxm(visited, semiring.plus_times).new()
    idx, counts = weighted.to_coo()
    raw[idx] += counts
    raw[batch] += row_weights * (reaches - 2)
