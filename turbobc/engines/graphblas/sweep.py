"""The graphblas engine's traversal core: one batch's forward sweep (path counts, level by level,
kept in range by per-level scaling) and backward sweep (Brandes' accumulate step with τ, ω and
edge sums), over either walk (:class:`~turbobc.engines.graphblas.hops.HopWalk` or
:class:`~turbobc.engines.graphblas.dag.DagWalk`)."""

from __future__ import annotations

import numpy as np
from graphblas import Matrix, Vector, binary, dtypes, monoid, semiring, unary

from turbobc.engines.protocol import SlotCounts
from turbobc._scaling import OVERFLOW_EXP
from turbobc.engines.graphblas.linalg import _add_columns, _row_scaling
from turbobc.engines.protocol import Problem, SlotWeightsDeclined
from turbobc.engines.wide import WIDE_RANGE

__all__ = ["accumulate_batch", "accumulate_slots", "RESCALE_ABOVE_EXP"]

# A level whose largest count exceeds 2**RESCALE_ABOVE_EXP is scaled back to [0.5, 1): the
# kernels' limit too (spmv/kernels/ctl.cuh, mirrored in spmv/_ctl.py).
RESCALE_ABOVE_EXP = OVERFLOW_EXP


def accumulate_batch(walks, problem: Problem, batch: np.ndarray, raw: np.ndarray,
                      edge_sums=None) -> list:
    """Forward and backward sweep for one batch of sources; adds into ``raw``.

    ``walks`` is the graph's shortest-path structure (:class:`HopLevels` or
    :class:`ShortestPathDag`); the problem's target and source weights τ and ω weigh the
    accumulate step (spmv/kernels/accumulate.cuh; None: all ones); ``edge_sums`` (from
    ``walks.new_edge_sums()``, or None) also gets each stored edge's share of the dependencies
    (edge BC). Returns the sources whose counts left the range of per-level scaling (nothing
    of them was added: the batch is swept again without them); they need
    :mod:`turbobc.engines.wide`.
    """
    walk = walks.start(batch)
    levels, shifts, too_wide = _forward(walk, batch)
    if too_wide.any():
        del walk, levels, shifts
        if not too_wide.all():
            accumulate_batch(walks, problem, batch[~too_wide], raw, edge_sums)
        return batch[too_wide].tolist()
    omega = problem.source_weight
    weights = None if omega is None else np.asarray(omega, dtype=np.float64)[batch]
    _backward(walk, levels, shifts, raw, problem.target_weight, weights, edge_sums,
              problem.split_non_targets)
    if problem.endpoints:
        _add_endpoint_terms(walk.reached(), batch, raw, weights)
    return []


def accumulate_slots(walks, problem: Problem, index: int, slots: np.ndarray,
                      raw: np.ndarray, edge_sums=None) -> None:
    """:func:`accumulate_batch` for batch ``index`` of the problem's per-slot target weights
    (``Problem.slot_weights``): τ of slot b is own(b) · target_weight plus what the plan adds
    once the forward sweep is done; ω is folded into τ. ``edge_sums`` (edge BC) gets each
    DAG edge's term with the slot's τ."""
    plan = problem.slot_weights
    walk = walks.start(slots)
    levels, shifts, too_wide = _forward(walk, slots)
    if too_wide.any():
        raise SlotWeightsDeclined("path counts spread wider than per-level scaling holds")
    # a weighted walk's chains are measured in lengths: its distances, not its hop layers
    distances = walk.D.to_dense(fill_value=-1.0) if problem.weighted else None
    counts = _LevelCounts(levels, shifts, walk.n, distances)
    tau = problem.target_weight
    base = np.ones(walk.n) if tau is None else np.asarray(tau, dtype=np.float64)
    counts.tau = np.outer(plan.own_weights(index), base)
    add_credits = plan.add_target_weights(index, counts)
    _backward(walk, levels, shifts, raw, edge_sums=edge_sums, slot_tau=counts.tau)
    add_credits()


class _LevelCounts(SlotCounts):
    """A batch's levels and counts as dense B x n arrays, for per-slot target weights; for a
    weighted batch ``distances`` (B x n, -1 where not reached) stand for the levels."""

    def __init__(self, levels: list, shifts: list, n: int,
                 distances: np.ndarray | None = None):
        B = levels[0].nrows
        self.n = n
        self.level = np.full((B, n), -1, dtype=np.int64)
        self.sigma = np.zeros((B, n), dtype=np.float64)
        scaled = any(s is not None for s in shifts)
        self.exponent = np.zeros((B, n), dtype=np.int64) if scaled else None
        exponent = np.zeros(B, dtype=np.int64)  # Σ_{d' ≤ d} shift_d' of each row
        for d, level in enumerate(levels):
            rows, cols, vals = level.to_coo()
            self.level[rows, cols] = d
            self.sigma[rows, cols] = vals
            if scaled:
                if shifts[d] is not None:
                    exponent += shifts[d]
                self.exponent[rows, cols] = exponent[rows]
        if distances is not None:
            self.level = distances
        self.tau = None

    def levels(self, lanes):
        return self.level[lanes]

    def counts(self, lanes):
        return self.sigma[lanes], None if self.exponent is None else self.exponent[lanes]

    def at(self, lanes, vertices):
        sigma = self.sigma[lanes, vertices]
        if self.exponent is not None:
            sigma = np.ldexp(sigma, self.exponent[lanes, vertices].astype(np.int32))
        return self.level[lanes, vertices], sigma


def _forward(walk, batch: np.ndarray):
    """Multi-source path counting, level by level of the shortest-path DAG.

    Level d holds the vertices whose longest DAG path from the source has d edges: for
    unweighted BC the BFS levels, for weighted BC the DAG's hop layers (Kahn's order). Returns
    the per-level count matrices ``levels[d]`` (B x n, pattern = the vertices of level d of
    each source, values σ̂_d), the per-level exponent shifts (None where the level was not
    scaled) and a boolean per source: its counts spread too wide.
    """
    B, n = len(batch), walk.n
    rows = np.arange(B, dtype=np.int64)
    # f = e_s, σ = e_s, S(s) = 0: depth 0 is the source itself with one path.
    frontier = Matrix.from_coo(rows, batch, 1.0, nrows=B, ncols=n)
    levels, shifts = [frontier], [None]
    too_wide = np.zeros(B, dtype=bool)
    while True:
        nxt = walk.next_level(frontier)
        if nxt.nvals == 0:
            break
        shift = _keep_in_range(nxt, too_wide)
        if shift is not None:
            walk.level_scaled(np.ldexp(1.0, -shift))
        levels.append(nxt)
        shifts.append(shift)
        frontier = nxt
    return levels, shifts, too_wide


def _backward(walk, levels: list, shifts: list, raw: np.ndarray,
              tau: np.ndarray | None = None, row_weights: np.ndarray | None = None,
              edge_sums=None, split_non_targets: bool = False,
              slot_tau: np.ndarray | None = None) -> None:
    """Brandes' dependency accumulation from the deepest level up to depth 1; row b's δ
    counts ``row_weights[b]`` times (the weight of its source; None: once). With
    ``edge_sums``, every edge v -> w of the shortest-path DAG also gets its term
    σ(v)/σ(w) · (τ(w) + δ(w)), down to the source's own edges (level 1).

    ``walk`` hands each finished level's u to the parents (:meth:`HopWalk.children_sums`
    and :meth:`DagWalk.children_sums`): from the next level only for BFS levels, from every
    deeper level for a weighted DAG.

    ``split_non_targets`` (τ in {0, 1}, with ``edge_sums``) is networkx's edge subset BC: a
    target w hands each parent σ(v)/σ(w) · (1 + δ(w)), a non-target δ(w) / |P(w)|, an equal
    share whatever the path counts. ``slot_tau`` (B x n) is a target weight per slot instead
    of ``tau``."""
    delta = None  # δ of the child level d, pattern within S_d
    last = 1 if edge_sums is not None else 2  # level 1 only feeds the source (and its edges)
    for d in range(len(levels) - 1, last - 1, -1):
        sigma_child, sigma_parent = levels[d], levels[d - 1]
        # u<S == d> = (τ + δ) ./ σ   (the accumulate step: spmv/kernels/accumulate.cuh)
        u = _target_weights(sigma_child, tau, slot_tau)
        share = None  # split_non_targets: q = (1 − τ) δ ./ |P|, each parent's equal share
        if delta is not None and split_non_targets:
            # u = τ (1 + δ) ./ σ ; q<S == d> = (1 − τ) δ ./ |P|  (|P|: the DAG parents)
            parents = walk.parent_counts(sigma_child, sigma_parent)
            rest = sigma_child.apply(unary.one).new()
            rest(binary.minus) << u                     # 1 − τ on the level
            share = rest.ewise_mult(delta, binary.times).new()
            share << share.ewise_mult(parents, binary.truediv)
            u(binary.plus) << u.ewise_mult(delta, binary.times)
        elif delta is not None:
            u(binary.plus) << delta
        u << u.ewise_mult(sigma_child, binary.truediv)
        walk.finish_level(u, share)
        if shifts[d] is not None:
            # σ_{d-1} / σ_d = σ̂_{d-1} / σ̂_d · 2^-shift_d
            walk.scale_finished(np.ldexp(1.0, -shifts[d]))
        if edge_sums is not None:
            # each DAG edge v -> w out of level d − 1: σ(v)/σ(w) (τ(w) + δ(w)) = σ̂(v) u(w)
            walk.add_edge_terms(edge_sums, sigma_parent, row_weights)
        if d == 1:
            break  # the source's δ is not needed
        # t<S == d-1> : u summed over the children w of each parent v
        t = walk.children_sums(sigma_parent)
        # δ<S == d-1> = t .* σ   (each vertex's δ is complete once its children are done)
        delta = t.ewise_mult(sigma_parent, binary.times).new()
        if share is not None:  # δ<S == d-1> += the equal shares of the non-target children
            delta(binary.plus) << walk.children_shares(sigma_parent)
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


def _target_weights(level: Matrix, tau: np.ndarray | None,
                    slot_tau: np.ndarray | None = None) -> Matrix:
    """τ(w) at every entry (b, w) of ``level``: the target weight of the accumulate step,
    all ones when ``tau`` is None (every vertex a target, weight 1); ``slot_tau[b, w]`` when
    the weights depend on the slot."""
    if slot_tau is not None:
        rows, cols, _ = level.to_coo(values=False)
        return Matrix.from_coo(rows, cols, slot_tau[rows, cols], nrows=level.nrows,
                               ncols=level.ncols)
    ones = level.apply(unary.one).new()
    if tau is None:
        return ones
    # column w scaled by τ(w): ones · diag(τ)
    weights = Vector.from_dense(np.asarray(tau, dtype=np.float64)).diag()
    return ones.mxm(weights, semiring.any_times).new()


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
