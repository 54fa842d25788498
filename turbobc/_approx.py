"""Approximate BC with a guarantee: every normalized value within ε of the exact one with
probability at least 1 − δ (``turbobc.bc(A, epsilon=ε, delta=δ)``; docs/approximate.md).

A layer on the engine protocol (turbobc/engines/protocol.py), for any engine, weighted or
not, directed or not:

- **Samples.** Sources are taken without replacement in the order of a seeded random
  permutation π of the n vertices. After k of them, the estimate of the normalized BC of v is
  the mean of ``X_s(v) = n · scale · δ_s(v)`` over the k sources, where ``scale`` is
  networkx's normalization of the raw sums (turbobc/_rescale.py), so that the mean of X over
  all n sources is exactly the exact value; ``0 ≤ X_s(v) ≤ R`` (:func:`sample_range`).
  Edge BC (``turbobc.edge_bc(A, epsilon=ε)``) samples the same way, one X per distinct edge
  (:func:`approximate_raw`).
- **Stopping (adaptive).** At checkpoints k = k₀, 1.5k₀, 1.5²k₀, ... (:func:`checkpoints`;
  k₀ no fewer than :func:`radius_floor`, below which no radius can be within ε; after a pilot,
  a few finer steps from the length it predicts, :func:`aimed_checkpoints`) every vertex gets
  a Bernstein radius from its mean alone (:func:`bernstein_radius`); the first checkpoint
  whose largest radius is at most ε ends the run. Bernstein's inequality holds for
  sampling without replacement (Hoeffding 1963, Theorem 4: every bound from the moment
  generating function carries over), the population variance of X(v) is at most
  μ(v)(R − μ(v)), and a union bound over the n vertices and the J checkpoints spends δ/2.
- **Budgets per vertex (a pilot).** That δ/2 need not be split evenly: a small independent
  pilot sample (not part of the estimate) says which vertices have large BC, and they get
  most of it, as NetworKit's KADABRA does (:func:`allocate_log_terms`). The pilot doubles
  until it is a sixteenth of the run it predicts (:func:`pilot_then_budgets`). The vertices
  of small BC, whose radii are small anyway, get little; a quarter of the budget stays spread
  evenly, so no vertex's bound is worse than the even split's by more than ln 4.
- **Upper limit.** The fixed sample size of Hoeffding's inequality, ``k_H = ⌈R² ln(4n/δ) /
  (2ε²)⌉`` (the other δ/2), ends the run whatever the radii; when k_H ≥ n the exact sweep of all
  n sources costs no more, and the result is exact. When the pilot predicts that the radii
  reach ε only after :data:`EXACT_SHARE` (70%) of the n sources or more, the run sweeps all n
  at once after the pilot (exact, without the checkpoints' partial batches); likewise, when
  it predicts 70% or more of a second upper limit's fixed size (sampled paths: Riondato and
  Kornaropoulos's, from the vertex diameter), the run draws that size at once (:func:`at_once`).

Every sweep of a checkpoint runs the sources it adds (``Sweeper.run``) and the partial sums are
added in checkpoint order, so a seed gives the same samples whatever the batch size or engine.

**The run** (:func:`approximate`, for :func:`turbobc.run_bc` and :func:`turbobc.run_edge_bc`
with ``epsilon``): sampled sources are an adaptive schedule of the one loop
(:class:`SourceSampling`, turbobc/_run.py), which sweeps each checkpoint's new sources on its
executor, here or on Dask's workers, through the one sweeper it opens for the call. Sampled
shortest paths (turbobc/_pairs.py) are another algorithm, not a sweeper: on the GPU engine,
for unweighted graphs, when they are cheaper (:func:`_samples_pairs`), the pair sampler
(:func:`_pair_sampler`) draws them, and a run whose path counts pass float64 samples sources
instead.
"""

from __future__ import annotations

import contextlib
import math
import numbers

import numpy as np

from turbobc._edges import distinct_edges, edge_matrix
from turbobc._fold import raw_sums
from turbobc._pairs import (pair_factor, pair_sample_limit, pair_seed, rk_samples,
                            vertex_diameter_bound)
from turbobc._progress import source_progress
from turbobc._rescale import check_finite
from turbobc._run import Schedule, run_schedule
from turbobc._bernstein import bernstein_radius, largest_radius, radius_above
from turbobc._tuning import current as current_tuning

__all__ = ["AIM_GROWTH", "AIM_STEPS", "CHECKPOINT_GROWTH", "EVEN_SHARE", "EXACT_SHARE",
           "EXACT_WAVES", "FIRST_CHECKPOINT", "PILOT_SHARE", "at_once", "exact_in_few_waves",
           "PairsCostMore", "SourceSampling", "aimed_checkpoints", "allocate_log_terms",
           "approximate", "approximate_pairs", "approximate_raw", "bernstein_radius",
           "checkpoints", "hoeffding_samples", "largest_radius", "pilot_size",
           "pilot_then_budgets", "radius_above", "radius_floor", "sample_limit", "sample_range",
           "scale_of", "until_within"]

FIRST_CHECKPOINT = 128
"""Sources of the first checkpoint k₀ (fewer when n is smaller)."""

CHECKPOINT_GROWTH = 1.5
"""Each checkpoint's sample count over the one before (:func:`checkpoints`)."""

AIM_GROWTH = 1.2
"""The growth of the :data:`AIM_STEPS` checkpoints from the pilot's predicted length on
(:func:`aimed_checkpoints`)."""

AIM_STEPS = 4
"""Checkpoints of growth :data:`AIM_GROWTH` from the predicted length, before
:data:`CHECKPOINT_GROWTH` again."""

PILOT_SHARE = 16
"""The pilot stops doubling at 1 / PILOT_SHARE of the samples it predicts the run takes, or
of the upper limit (:func:`pilot_then_budgets`)."""

EVEN_SHARE = 0.25
"""The share of the Bernstein budget spread evenly over the n vertices whatever the pilot
says (:func:`allocate_log_terms`)."""

EXACT_WAVES = 4
"""When Hoeffding's size reaches n and the n sources are at most this many of the engine's
waves (``planned_batch``), the run sweeps all n at once, no pilot: a pilot or a checkpoint
costs a wave however few sources it holds (ego-Facebook, ε = 0.01, 16 threads of 64 lanes:
n = 4,039 is four waves; the pilot of 128 sources on two threads was a fifth of the run)."""

EXACT_SHARE = 0.7
"""When the pilot predicts a run of at least this share of the samples at which the result is
exact (n sources), the run sweeps them at once and is exact (:func:`until_within`): the
checkpoints between would save less than they cost."""


def scale_of(n: int, endpoints: bool) -> float:
    """networkx's normalization of the raw sums Σ_s δ_s(v) of exact BC (every source, directed
    or not): ``1 / (N (N − 1))`` with ``N = n`` when endpoints count, else ``n − 1``
    (turbobc/_rescale.py)."""
    N = n if endpoints else n - 1
    return 1.0 / (N * (N - 1))


def sample_range(n: int, endpoints: bool) -> float:
    """R, the largest value of ``X_s(v) = n · scale · δ_s(v)``: a source's term at a vertex is
    at most n − 2 (the targets other than s and v), n − 1 with the endpoint terms."""
    return n * scale_of(n, endpoints) * ((n - 1) if endpoints else (n - 2))


def hoeffding_samples(n: int, epsilon: float, delta: float, R: float) -> int:
    """k_H = ⌈R² ln(4n/δ) / (2ε²)⌉: Hoeffding's sample size for every vertex within ε, with
    probability 1 − δ/2 (a union bound over the n vertices, both sides)."""
    return math.ceil(R * R * math.log(4 * n / delta) / (2 * epsilon * epsilon))


def sample_limit(n: int, endpoints: bool, epsilon: float, delta: float, *,
                 values: int | None = None) -> int:
    """The most sources a run may sweep: Hoeffding's k_H, or n (exact) when that is fewer.
    ``values``: how many values the guarantee covers (the union bound), n unless given (the
    distinct edges of edge BC, whose scale and range are those of ``endpoints=True``)."""
    covered = n if values is None else values
    return min(n, hoeffding_samples(covered, epsilon, delta, sample_range(n, endpoints)))


def checkpoints(limit: int, first: int = FIRST_CHECKPOINT,
                growth: float | None = None) -> list[int]:
    """k₀, g k₀, g² k₀, ... (rounded up) below ``limit``, then ``limit``: the sample counts at
    which the radii are computed (all but the last; the last is the upper limit). g is
    :data:`CHECKPOINT_GROWTH` unless ``growth`` says otherwise."""
    growth = CHECKPOINT_GROWTH if growth is None else growth
    points, k = [], max(1, min(first, limit))
    while k < limit:
        points.append(k)
        k = max(k + 1, math.ceil(k * growth))
    return points + [limit]


def aimed_checkpoints(points: list[int], predicted: float, most: int) -> list[int]:
    """The checkpoints of a run whose pilot predicts it takes ``predicted`` samples: those of
    ``points`` below it, then :data:`AIM_STEPS` steps of :data:`AIM_GROWTH` from it, then
    :data:`CHECKPOINT_GROWTH` up to the same limit; ``points`` itself when that would check
    more than ``most`` radii (the budgets counted ``most``). Chosen from the pilot's samples
    alone, which are independent of the run's, so the guarantee holds. Where growth 1.5
    passes the radii's crossing it overshoots by a quarter on average: ca-GrQc's pairs at
    ε = 0.01 crossed between 7,622 and 11,433 samples."""
    limit, start = points[-1], math.ceil(predicted)
    aimed = [k for k in points[:-1] if k < start]
    k, steps = max(start, aimed[-1] + 1 if aimed else 1), 0
    while k < limit:
        aimed.append(k)
        steps += 1
        growth = AIM_GROWTH if steps <= AIM_STEPS else CHECKPOINT_GROWTH
        k = max(k + 1, math.ceil(k * growth))
    aimed.append(limit)
    return aimed if len(aimed) - 1 <= most else points


def radius_floor(n: int, budget: float, epsilon: float, R: float) -> int:
    """The fewest samples at which the largest radius of n means can be within ``epsilon``
    (in the units of the mean) when ``Σ_v exp(−L(v)) ≤ budget``: some vertex has ``L ≥
    ln(n / budget)`` (else the sum would exceed the budget), and every radius of
    :func:`bernstein_radius` is at least ``2a = 2RL / (3k)``. A count of samples alone, so
    checkpoints chosen from it keep the run's guarantee."""
    return math.ceil(2 * R * math.log(n / budget) / (3 * epsilon))


def pilot_size(limit: int, first: int = FIRST_CHECKPOINT) -> int:
    """The most samples the pilot of a run of at most ``limit`` may draw: ``limit //
    PILOT_SHARE``, at least ``first`` (the run's first checkpoint), or none where that first
    checkpoint is the limit."""
    if limit <= first:
        return 0
    return max(first, limit // PILOT_SHARE)


def at_once(predicted: float, size: float | None) -> bool:
    """Whether a run the pilot predicts at ``predicted`` samples should draw ``size`` at once
    (the exact sweep of n sources, or an upper limit's fixed size) instead of checkpoints:
    when it predicts at least :data:`EXACT_SHARE` of it, the checkpoints between would save
    less than they cost."""
    return size is not None and predicted >= EXACT_SHARE * size


def exact_in_few_waves(n: int, planned_batch) -> bool:
    """Whether all ``n`` sources are at most :data:`EXACT_WAVES` of the engine's waves
    (``planned_batch(k)``: what the sweeper sweeps at once; None, as on Dask: False)."""
    if planned_batch is None:
        return False
    return n <= EXACT_WAVES * max(1, int(planned_batch(n)))


def pilot_then_budgets(pilot, limit: int, first: int, epsilon: float, R: float,
                       budget: float, exact_at: int | None = None, after_step=None
                       ) -> tuple[np.ndarray, int, float]:
    """Draw the pilot, ``first`` samples then doubling, until it is 1 / PILOT_SHARE of the
    run its budgets predict (or reaches :func:`pilot_size`, or predicts at least
    :data:`EXACT_SHARE` of ``exact_at``); return the budgets (one log term per vertex,
    :func:`allocate_log_terms`), the pilot's samples and the run's predicted samples.

    ``pilot(done, k)`` adds pilot samples ``done .. k − 1`` and returns the mean over the k.
    The pilot's size depends on the pilot's samples alone, so the run's samples stay
    independent of the budgets. ``after_step(predicted)``, when given, sees each step's
    prediction (it may raise to end the run, :class:`PairsCostMore`).
    """
    most = pilot_size(limit, first)
    done, size = 0, min(first, most)
    while True:
        mean = pilot(done, size)
        done = size
        log_term, predicted = _allocation(mean, size, epsilon, R, budget)
        if after_step is not None:
            after_step(predicted)
        if size >= most or size * PILOT_SHARE >= predicted or at_once(predicted, exact_at):
            return log_term, size, predicted
        size = min(2 * size, most)


def allocate_log_terms(pilot: np.ndarray, pilot_samples: int, epsilon: float, R: float,
                       budget: float) -> np.ndarray:
    r"""One Bernstein log term L(v) per vertex, with ``Σ_v exp(−L(v)) ≤ budget``, from the
    means of an independent pilot sample (values in [0, R]; ``epsilon``: the radius wanted, in
    the units of the mean).

    A vertex whose variance is σ²(v) reaches radius ε after about ``k = L(v) · c(v)⁻¹``
    samples, ``c(v) = ε² / (2σ²(v) + 2Rε/3)`` (Bernstein). With ``L(v) = k c(v)`` every
    vertex reaches ε at the same k, and the smallest k with ``Σ exp(−k c(v))`` within the
    budget is found by bisection; what is left of the budget at that k lowers every L(v)
    alike. σ²(v) is taken at the pilot's mean plus two of its standard errors, so that the
    pilot's underestimates cost little, plus ε, as the stopping radius bounds it at its
    crossing (:func:`bernstein_radius`'s G over [m − ε, m + ε]). A share :data:`EVEN_SHARE`
    of the budget stays even (``L = ln(n / (EVEN_SHARE · budget))``), and each vertex keeps
    the smaller of its two L: the sum of the exp(−L) is at most the sum of both parts, the
    budget.
    """
    return _allocation(pilot, pilot_samples, epsilon, R, budget)[0]


def _allocation(pilot: np.ndarray, pilot_samples: int, epsilon: float, R: float,
                budget: float) -> tuple[np.ndarray, float]:
    """:func:`allocate_log_terms` and the k at which its budgets put every vertex's radius at
    ε (the run's predicted length)."""
    n = pilot.size
    even = math.log(n / (EVEN_SHARE * budget))
    spread = (1 - EVEN_SHARE) * budget
    # the pilot's distinct means (a few thousand at most: counts over the pilot's samples);
    # the zeros, most vertices of a large graph, apart, so that only the rest is sorted
    clipped = np.clip(pilot, 0.0, R)
    seen = np.flatnonzero(clipped)
    mean, seen_of, many = np.unique(clipped[seen], return_inverse=True, return_counts=True)
    mean = np.concatenate(([0.0], mean))
    many = np.concatenate(([n - seen.size], many))
    vertex_of = np.zeros(n, dtype=np.int64)
    vertex_of[seen] = seen_of.reshape(-1) + 1
    # σ²(v) bounded at the pilot's mean plus two standard errors plus ε, as the stopping
    # rule's radius bounds it over [m − ε, m + ε] at its crossing (bernstein_radius's G)
    high = np.minimum(mean + 2 * np.sqrt(mean * R / pilot_samples) + 2 * R / pilot_samples
                      + epsilon, R / 2)
    rate = epsilon * epsilon / (2 * high * (R - high) + 2 * R * epsilon / 3)

    def excess(k: float) -> float:  # ln Σ_v exp(−k c(v)) − ln(spread), stable in k
        exponents = -k * rate
        top = exponents.max()
        return top + math.log((many * np.exp(exponents - top)).sum()) - math.log(spread)

    low, up = 0.0, 1.0
    while excess(up) > 0:
        low, up = up, 2 * up
    # the root of the decreasing excess between low and up (Brent's method: about ten
    # evaluations where bisection took sixty, a millisecond of a 10 ms run on 16
    # threads), taken just above it where the excess is at most 0 (else up stays)
    from scipy.optimize import brentq

    root = brentq(excess, low, up, xtol=1e-12 * up, rtol=1e-14) * (1 + 4e-12)
    if root < up and excess(root) <= 0:
        up = root
    adaptive = up * rate + excess(up)  # excess ≤ 0: the rest of the budget shared out
    return np.minimum(adaptive, even)[vertex_of], up


def approximate_raw(call, epsilon: float, delta: float, seed, sweep, *,
                    edges=None, keep: dict | None = None) -> tuple[np.ndarray, dict]:
    """Normalized BC within ``epsilon`` with probability 1 − ``delta`` (module docstring).

    ``call``: the validated call (turbobc/_validation.py); ``sweep(sources)`` returns the raw
    sums (a Partial) of the given new sources on the call's engine. ``edges``: None for vertex
    BC, or ``(count, raw_of)`` for edge BC: ``count`` distinct edges (each undirected edge
    once), whose raw sums ``raw_of(partial)`` gives. networkx scales edge sums as vertex sums
    with endpoints, ``1 / (n (n − 1))``, and a source's term on an edge is at most n − 1
    (the targets beyond it), so ``X_s(e) = n δ_s(e) / (n (n − 1))`` lies in [0, 1]: the scale
    and range of ``endpoints=True``, with the union bound over the ``count`` edges.

    Returns the normalized values (one per vertex, or per distinct edge) and the facts:
    ``samples``, ``pilot_samples``, ``bound`` (the largest radius reached, 0 when exact),
    ``stopped_by`` ("radius", "hoeffding" or "exact"), ``checkpoints``,
    ``hoeffding_samples``. The pilot's sources are the first of a second permutation drawn
    after the run's own. ``keep``: a dict that receives the run's ``order``, the raw sums
    of its samples (``raw``) and :func:`until_within`'s state (turbobc/_dynamic_sampled.py
    carries a run on as its graph changes).
    """
    n = call.graph.n
    endpoints = call.endpoints if edges is None else True
    count, raw_of = (n, lambda partial: partial.vertex) if edges is None else edges
    R = sample_range(n, endpoints)
    scale = scale_of(n, endpoints)
    rng = _generator(seed)
    order = rng.permutation(n).astype(np.int64)  # the run's; the pilot's is drawn after it
    draw = _running_mean(sweep, lambda: order, raw_of, n * scale, keep)
    if keep is not None:
        keep["order"] = order
    pilot = _running_mean(sweep, lambda: rng.permutation(n).astype(np.int64), raw_of,
                          n * scale)

    limit = sample_limit(n, endpoints, epsilon, delta, values=count)
    # all n sources at once, without a pilot, when they are a few of the engine's waves
    exact_now = n <= limit and exact_in_few_waves(n, getattr(sweep, "planned_batch", None))
    mean, facts = until_within(epsilon, delta, count, R, limit, draw, exact_at=n, pilot=pilot,
                               exact_now=exact_now, keep=keep)
    facts.update(hoeffding_samples=hoeffding_samples(count, epsilon, delta, R), sample_range=R,
                 sampler="sources")
    return mean, facts


def _running_mean(sweep, order_of, raw_of, factor: float, keep: dict | None = None):
    """``mean(done, k)`` for :func:`until_within`: sweeps sources ``done .. k − 1`` of the
    order ``order_of()`` gives (made at the first call) into a running total (a Partial) and
    returns the mean of ``X = factor · raw`` over the k, ``raw_of(total)`` the raw sums (also
    ``keep["raw"]`` when ``keep`` is a dict)."""
    order, total = [], []

    def mean(done: int, k: int) -> np.ndarray:
        if not order:
            order.append(order_of())
        part = sweep(order[0][done:k])
        total[:] = [part if not total else total[0] + part]
        if keep is not None:
            keep["raw"] = raw_of(total[0])
        return raw_of(total[0]) * (factor / k)

    return mean


def until_within(epsilon: float, delta: float, n: int, R: float, limit: int, draw, *,
                 factor: float = 1.0, exact_at: int | None = None, pilot=None,
                 first: int = FIRST_CHECKPOINT, second_limit=None,
                 after_pilot=None, exact_now: bool = False,
                 keep: dict | None = None) -> tuple[np.ndarray, dict]:
    """Draw samples up to the checkpoints of ``limit`` until every Bernstein radius is within
    ε (module docstring, "Stopping"); the loop both samplers share. ``n``: how many values
    the guarantee covers (vertices, or the distinct edges of edge BC).

    ``draw(done, k)`` adds samples ``done .. k − 1`` and returns the mean of X over the k
    drawn (values in [0, R]); the estimate is ``factor`` times it, so a radius r of the mean
    is ``factor · r`` of the estimate. ``limit`` is Hoeffding's size (at which the run stops
    whatever the radii); ``exact_at``: the sample count at which the result is exact.
    ``pilot(done, k)``: like ``draw``, over samples independent of those ``draw`` takes,
    from which each vertex gets its share of the failure budget
    (:func:`pilot_then_budgets`); without it the share is even. ``first``: the pilot's first
    step and the least first checkpoint (a GPU sampler's samples in flight; the checkpoints
    start at :func:`radius_floor` when that is more). ``second_limit``: ``(name, floor,
    size)``, another upper limit that holds with the same δ/2 as Hoeffding's (the run stops
    at the smaller): ``size()`` gives it, called only once a checkpoint passes ``floor`` (a
    cheap lower bound of it), and ``name`` is then ``stopped_by``. ``after_pilot(predicted)``:
    called with the samples each step of the pilot predicts the run takes, before the run's
    own (it may raise :class:`PairsCostMore` to end the run there). ``exact_now``: sweep the
    ``exact_at`` samples at once, without pilot or checkpoints, when ``limit`` reaches them
    (:func:`exact_in_few_waves`). ``keep``: a dict that receives the checkpoints
    (``points``), how many of them check radii (``bernstein``) and the budgets (``log_term``).
    Returns the estimate and
    the facts ``samples``, ``pilot_samples``, ``bound``, ``stopped_by``, ``checkpoints``,
    ``epsilon`` and ``delta``.
    """
    # no radius is within ε before radius_floor's count: the checkpoints start there (fewer
    # checkpoints J, so a larger budget each; ca-GrQc's pairs at ε = 0.01 checked 6 radii
    # below it, each a draw that waits for its slowest thread)
    floor = radius_floor(n, delta / (4 * max(len(checkpoints(limit, first)) - 1, 1)),
                         epsilon / factor, R)
    points = checkpoints(limit, max(first, floor))
    bernstein = len(points) - 1  # the radii checked before the upper limit
    # the radii a run may check: with a pilot, its aimed checkpoints may add AIM_STEPS
    most = bernstein + (AIM_STEPS if pilot is not None else 0)
    # Σ_v 2 exp(−L(v)) over the J checkpoints within δ/2: Σ_v exp(−L(v)) ≤ δ / (4J)
    budget = delta / (4 * max(most, 1))
    piloted, second, log_term = 0, None, math.log(n / budget)
    few = PILOT_SHARE * FIRST_CHECKPOINT  # a draw this small costs about a pilot's steps
    if second_limit is not None and second_limit[1] <= few:
        second = second_limit[2]()  # (its searches were due at the checkpoint past few)
    if exact_now and exact_at is not None and exact_at <= limit:
        points = [exact_at]  # all at once, no pilot (approximate_raw: a few waves)
    elif second is not None and second <= few and second < limit:
        # the other upper limit's size at once, no pilot: at most `few` samples in one draw
        # (ca-GrQc's pairs at ε = 0.05: 1,601 in one draw, where a pilot and 7 checkpoints
        # drew 1,586 in 8, each waiting for its slowest thread)
        if after_pilot is not None:
            after_pilot(second)  # (the cpu engine: every source when that costs less)
        points = [second]
    elif pilot is not None and pilot_size(limit, first) > 0 and bernstein > 0:
        log_term, piloted, predicted = pilot_then_budgets(pilot, limit, first,
                                                          epsilon / factor, R, budget, exact_at,
                                                          after_pilot)
        if exact_at is not None and exact_at <= limit and at_once(predicted, exact_at):
            points = [exact_at]  # all n sources at once: exact, and cheaper than checkpoints
        elif second_limit is not None and predicted >= second_limit[1]:
            # the other upper limit's fixed size at once, when the radii would reach ε only
            # near it (ego-Facebook's pairs at ε = 0.05: 1,201 samples in one draw, where 7
            # checkpoints each waited for their slowest thread)
            second = second_limit[2]() if second is None else second
            if second < limit and at_once(predicted, second):
                points = [second]
        if len(points) > 1:
            points = aimed_checkpoints(points, predicted, most)
            bernstein = len(points) - 1
    # else log_term stays even: δ' = δ / (2 n J), two-sided
    done, bound, stopped, mean = 0, math.inf, "hoeffding", None
    for index, k in enumerate(points):
        if second_limit is not None and k >= second_limit[1]:
            second = second_limit[2]() if second is None else second
            if second <= k:  # the other upper limit comes first (or now): the run ends there
                mean, done = draw(done, second), second
                bound, stopped = epsilon, second_limit[0]
                points = points[:index] + [second]
                break
        mean = draw(done, k)
        done = k
        if k == exact_at:
            bound, stopped = 0.0, "exact"
            break
        if index < bernstein:
            bound = factor * largest_radius(mean, k, R, log_term)
            if bound <= epsilon:
                stopped = "radius"
                break
        else:
            bound = epsilon  # Hoeffding's guarantee at the upper limit
    if keep is not None:
        keep.update(points=points, bernstein=bernstein, log_term=log_term)
    facts = {"samples": done, "pilot_samples": piloted, "bound": bound, "stopped_by": stopped,
             "checkpoints": points[:points.index(done) + 1], "epsilon": epsilon,
             "delta": delta}
    return factor * mean, facts


def approximate_pairs(call, epsilon: float, delta: float, seed, sample,
                      first: int = FIRST_CHECKPOINT,
                      after_pilot=None) -> tuple[np.ndarray, dict]:
    """Normalized BC within ``epsilon`` with probability 1 − ``delta`` from sampled shortest
    paths (turbobc/_pairs.py): X is 0 or 1 (R = 1), the estimate is c times its mean, and
    Hoeffding's size for pairs is the upper limit.

    ``sample(seed64, first, count)`` adds the counts of samples ``first .. first + count − 1``
    (uint64, one per vertex) to a running total and returns that total. The run's samples are
    numbered from 0, the pilot's from the upper limit on (numbers the run never reaches);
    ``first``: the first checkpoint, ``after_pilot``: the hook after the pilot
    (:func:`until_within`). Returns the values and the facts of :func:`until_within` with
    ``sampler = "pairs"``.
    """
    n = call.graph.n
    seed64 = pair_seed(seed)
    limit = pair_sample_limit(n, call.endpoints, epsilon, delta)
    before = [np.zeros(n, dtype=np.uint64)]  # the running total before the run's samples

    def pilot(done: int, k: int) -> np.ndarray:
        before[0] = np.array(sample(seed64, limit + done, k - done), dtype=np.uint64)
        return before[0].astype(np.float64) / k

    def draw(done: int, k: int) -> np.ndarray:
        total = np.asarray(sample(seed64, done, k - done), dtype=np.uint64)
        return (total - before[0]).astype(np.float64) / k

    c = pair_factor(n, call.endpoints)
    second = None
    if not call.endpoints:
        # Riondato and Kornaropoulos's size, with the same δ/2, once a checkpoint passes its
        # smallest value (a vertex diameter of 3): the diameter bound is one or two searches
        # of the graph, needless where the radii stop the run first
        def rk_size() -> float:
            diameter = vertex_diameter_bound(call.graph.pattern, call.graph.directed)
            return math.inf if diameter is None else rk_samples(diameter, epsilon / c,
                                                                delta / 2)

        second = ("riondato-kornaropoulos", rk_samples(3, epsilon / c, delta / 2), rk_size)
    values, facts = until_within(epsilon, delta, n, 1.0, limit, draw, factor=c, pilot=pilot,
                                 first=first, second_limit=second, after_pilot=after_pilot)
    facts.update(hoeffding_samples=limit, sample_range=1.0, sampler="pairs")
    return values, facts


class PairsCostMore(Exception):
    """Raised after the pairs' pilot when sweeping every source costs less (the message says
    why): the run sweeps all n sources at once and is exact."""


def _pairs_or_sources(call):
    """The hook after the pairs' pilot (:func:`until_within`'s ``after_pilot``) on the cpu
    engine: the sampled paths the pilot predicts, each about
    ``Tuning.cpu_pair_switch_in_sources`` of a source's sweep, against the n sources of the
    exact sweep; None on the other engines."""
    if call.engine != "cpu":
        return None
    share, n = current_tuning().cpu_pair_switch_in_sources, call.graph.n

    def after_pilot(predicted: float) -> None:
        if predicted * share >= n:
            raise PairsCostMore(f"the pilot predicts {predicted:,.0f} sampled paths, about "
                                f"{predicted * share:,.0f} sources' sweeps at "
                                f"Tuning.cpu_pair_switch_in_sources = {share}: the sources "
                                f"({n:,}) cost less")

    return after_pilot


# ---- the run ----------------------------------------------------------------------------

def approximate(call, epsilon: float, delta: float, seed) -> tuple:
    """The values and facts of an approximate run (module docstring, "The run"): normalized
    BC within ``epsilon`` with probability 1 − ``delta``, one value per vertex, or for edge
    BC (``call.edges``) the n x n matrix of :func:`turbobc._edges.edge_matrix`.

    ``call``: the validated call (turbobc/_validation.py), ``epsilon`` and ``delta`` checked
    (:func:`turbobc._validation.check_guarantee`). The facts are the sweeper's (or the pair
    sampler's) and :func:`until_within`'s, with ``pairs_declined`` (the reason) when sampled
    paths gave way to sampled sources.

    Raises
    ------
    OverflowError
        A sum came out non-finite (:func:`turbobc._rescale.check_finite`).
    """
    n = call.graph.n
    distinct = per_edge = None
    if call.edges:
        distinct = distinct_edges(call.graph)
        per_edge = (distinct.positions.size, distinct.raw_of)
        if distinct.positions.size == 0:  # no edge to estimate
            return edge_matrix(call.graph, np.zeros(0)), {
                "engine": call.engine, "samples": 0, "bound": 0.0, "stopped_by": "exact"}
    elif n < 3:  # nothing lies between two others: exact and all zero
        return np.zeros(n, dtype=np.float64), {"engine": call.engine, "samples": n,
                                               "bound": 0.0, "stopped_by": "exact"}
    pairs = not call.edges and _samples_pairs(call, pair_sample_limit(n, call.endpoints,
                                                                      epsilon, delta))
    first = FIRST_CHECKPOINT
    if pairs:
        sample, facts_of, in_flight = _pair_sampler(call)
        first = max(first, in_flight)
    with contextlib.ExitStack() as stack:
        bar = call.progress
        if isinstance(bar, bool):  # the bar's length: the most samples the run may draw
            limit = (pair_sample_limit(n, call.endpoints, epsilon, delta) if pairs
                     else sample_limit(n, call.endpoints or call.edges, epsilon, delta,
                                       values=None if per_edge is None else per_edge[0]))
            bar = stack.enter_context(source_progress(limit + pilot_size(limit, first), bar,
                                                      call.engine))
        overflow = exact = None
        if pairs:
            try:
                values, facts = approximate_pairs(
                    call, epsilon, delta, seed,
                    lambda seed64, start, count: sample(seed64, start, count, bar),
                    first=first, after_pilot=_pairs_or_sources(call))
                return values, dict(facts_of(), **facts)
            except ArithmeticError as error:  # path counts past float64: sample sources
                overflow = str(error)
            except PairsCostMore as error:  # the pilot's verdict: every source, exact
                overflow = exact = str(error)
            if bar is not None:
                bar.reset()
        if exact is not None:  # exact BC as bc() computes it, trees and chains folded
            raw, facts = raw_sums(call)
            values = raw * scale_of(n, call.endpoints)
            facts = dict(facts, samples=n, pilot_samples=0, bound=0.0, stopped_by="exact",
                         checkpoints=[n], epsilon=epsilon, delta=delta, sampler="sources")
        else:
            schedule = SourceSampling(call, epsilon, delta, seed, edges=per_edge)
            _, facts = run_schedule(call.problem, call.engine, schedule, progress=bar,
                                    client=call.client)
            values, facts = schedule.values, dict(facts, **schedule.facts)
        if overflow is not None:
            facts["pairs_declined"] = overflow
    check_finite(values, call.engine)
    if call.edges:
        return edge_matrix(call.graph, values, distinct), facts
    return values, facts


class SourceSampling(Schedule):
    """Sampled sources as an adaptive schedule of the one loop (turbobc/_run.py): each
    checkpoint's new sources (and the pilot's) are one source set, handed until the stopping
    rule says stop (:func:`approximate_raw`, with the loop's ``sweep``).

    Attributes
    ----------
    most : int
        The most sources the run may sweep: Hoeffding's limit and the pilot's.
    values, facts : numpy.ndarray, dict
        What :func:`approximate_raw` returned, once :meth:`drive` is done (and its ``keep``,
        when given: the run's state).
    """

    def __init__(self, call, epsilon: float, delta: float, seed, *, edges=None, keep=None):
        self.call, self.epsilon, self.delta, self.seed, self.edges = (call, epsilon, delta,
                                                                      seed, edges)
        self.keep = keep
        n = call.graph.n
        limit = sample_limit(n, call.endpoints or edges is not None, epsilon, delta,
                             values=None if edges is None else edges[0])
        self.most = limit + pilot_size(limit)
        self.values = self.facts = None

    def drive(self, sweep) -> None:
        self.values, self.facts = approximate_raw(self.call, self.epsilon, self.delta,
                                                  self.seed, sweep, edges=self.edges,
                                                  keep=self.keep)


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
    """``sample(seed, first, count, bar)`` for :func:`approximate_pairs` on the call's engine
    (the GPU kernel, the cpu engine's compiled sampler, or for the graphblas engine the host
    reference of turbobc/_pairs.py), a function giving the run's engine facts, and the samples
    in flight at once (the first checkpoint's least size)."""
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
    from turbobc._pairs import reference_counts  # at each run: tests replace the module's

    total = np.zeros(graph.n, dtype=np.uint64)

    def sample(seed, first, count, bar):
        total[:] += reference_counts(graph.pattern, graph.directed, seed, first, count,
                                     endpoints=call.endpoints)
        if bar is not None:
            bar.update(count)
        return total

    return sample, lambda: {"engine": call.engine}, 1


def _generator(seed) -> np.random.Generator:
    """The generator of the sources' order (a permutation of the n vertices, then the
    pilot's) from ``seed``: None, an int or a numpy Generator."""
    if seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool)):
        return np.random.default_rng(None if seed is None else int(seed))
    if isinstance(seed, np.random.Generator):
        return seed
    raise TypeError("with epsilon, seed must be None, an int or a numpy.random.Generator; "
                    f"got {type(seed).__name__} {seed!r}")
