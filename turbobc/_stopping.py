"""The stopping machinery of approximate BC (turbobc/_approx.py, docs/approximate.md "When to
stop"), shared by ``bc(A, epsilon=)`` and ``top_k`` (turbobc/_topk.py), by both samplers:

- the checkpoints at which the radii are computed (:func:`checkpoints`, from
  :func:`radius_floor`; after a pilot, :func:`aimed_checkpoints`);
- the pilot and each vertex's share of the failure budget (:func:`pilot_then_budgets`,
  :func:`allocate_log_terms`);
- the loop (:func:`until_within`): draw to the next checkpoint, ask the run's goal whether it
  is reached (:class:`WithinEpsilon`: every Bernstein radius within ε; top-k: the k most
  central separated, turbobc/_topk.py), and ask the exact rule (turbobc/_exact_rule.py)
  whether the exact sweep would cost less than the samples still needed.
"""

from __future__ import annotations

import math

import numpy as np

from turbobc._bernstein import largest_radius
from turbobc._exact_rule import ExactCheaper, at_once

__all__ = ["AIM_GROWTH", "AIM_STEPS", "CHECKPOINT_GROWTH", "EVEN_SHARE", "FIRST_CHECKPOINT",
           "PILOT_SHARE", "WithinEpsilon", "aimed_checkpoints", "allocate_log_terms",
           "samples_to_reach", "decreasing_root",
           "checkpoint_log_term", "checkpoints", "pilot_size", "pilot_then_budgets",
           "radius_floor", "until_within"]

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

AIMED_SHARE = 0.5
"""With a pilot, the share of the Bernstein checkpoints' failure budget (δ/4 over the vertices,
one side each) given to the first checkpoint at or past the pilot's predicted length, where the
run is aimed to stop; the other checkpoints share the rest evenly (:func:`until_within`)."""

EVEN_SHARE = 0.25
"""The share of the Bernstein budget spread evenly over the n vertices whatever the pilot
says (:func:`allocate_log_terms`)."""


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
    ``points`` more than one :data:`AIM_GROWTH` step below it, then :data:`AIM_STEPS` steps
    of :data:`AIM_GROWTH` from it, then :data:`CHECKPOINT_GROWTH` up to the same limit;
    ``points`` itself when that would check more than ``most`` radii (the budgets counted
    ``most``). Chosen from the pilot's samples alone, which are independent of the run's, so
    the guarantee holds. Where growth 1.5 passes the radii's crossing it overshoots by a
    quarter on average: ca-GrQc's pairs at ε = 0.01 crossed between 7,622 and 11,433
    samples."""
    limit, start = points[-1], math.ceil(predicted)
    # (a checkpoint within one aimed step below the prediction would cost a draw, which
    # waits for its slowest thread, for a few samples: power at ε = 0.1 drew 432, then 444)
    aimed = [k for k in points[:-1] if k * AIM_GROWTH < start]
    k, steps = max(start, aimed[-1] + 1 if aimed else 1), 0
    while k < limit:
        aimed.append(k)
        steps += 1
        growth = AIM_GROWTH if steps <= AIM_STEPS else CHECKPOINT_GROWTH
        k = max(k + 1, math.ceil(k * growth))
    aimed.append(limit)
    return aimed if len(aimed) - 1 <= most else points


def checkpoint_log_term(log_term, k: int, aimed_at: int | None, aimed_shift: float):
    """The budgets L(v) of the checkpoint at ``k`` samples (:func:`until_within`): the aimed
    checkpoint's ``log_term``, every other's ``aimed_shift`` higher (:data:`AIMED_SHARE`)."""
    return log_term if k == aimed_at or not aimed_shift else log_term + aimed_shift


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


def pilot_then_budgets(pilot, limit: int, first: int, epsilon: float, R: float,
                       budget: float, after_step=None, target=None
                       ) -> tuple[np.ndarray, int, float]:
    """Draw the pilot, ``first`` samples then doubling, until it is 1 / PILOT_SHARE of the
    run its budgets predict (or reaches :func:`pilot_size`, or ``after_step`` says stop);
    return the budgets (one log term per vertex, :func:`allocate_log_terms`), the pilot's
    samples and the run's predicted samples.

    ``pilot(done, k)`` adds pilot samples ``done .. k − 1`` and returns the mean over the k.
    The pilot's size depends on the pilot's samples alone, so the run's samples stay
    independent of the budgets. ``after_step(size, predicted)``, when given, sees each step's
    prediction and returns True to end the pilot there (the exact rule has chosen the exact
    sweep). ``target(pilot_mean)``: the run's goal's radii wanted per vertex, as a function of
    a vertex's pilot mean (:meth:`WithinEpsilon.targets`).
    """
    most = pilot_size(limit, first)
    done, size = 0, min(first, most)
    while True:
        mean = pilot(done, size)
        done = size
        wanted = None if target is None else target(mean)
        log_term, predicted = _allocation(mean, size, epsilon, R, budget, wanted)
        if after_step is not None and after_step(size, predicted):
            return log_term, size, predicted
        if size >= most or size * PILOT_SHARE >= predicted:
            return log_term, size, predicted
        size = min(2 * size, most)


def allocate_log_terms(pilot: np.ndarray, pilot_samples: int, epsilon: float, R: float,
                       budget: float, wanted=None) -> np.ndarray:
    r"""One Bernstein log term L(v) per vertex, with ``Σ_v exp(−L(v)) ≤ budget``, from the
    means of an independent pilot sample (values in [0, R]; ``epsilon``: the radius wanted, in
    the units of the mean; ``wanted``, when given, a function of a pilot mean giving the
    radius wanted at a vertex of that mean instead, as top-k wants, turbobc/_topk.py).

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
    return _allocation(pilot, pilot_samples, epsilon, R, budget, wanted)[0]


def decreasing_root(f, low: float, up: float, *, xtol: float, rtol: float) -> float:
    """The least x of [low, up] found with f(x) <= 0, within ``xtol + rtol x`` of the root of
    a decreasing f with f(low) > 0 >= f(up): regula falsi with the Illinois step (the end
    that stays has its value halved), about ten evaluations where bisection takes sixty, a
    millisecond of a 10 ms run on 16 threads. (SciPy's brentq did this; importing
    scipy.optimize cost a first call 0.26 s on the H200 host, 0.8 s on 2 cores.)"""
    f_low, f_up = f(low), f(up)
    kept = 0  # which end stayed last: -1 low, 1 up
    for _ in range(200):
        if up - low <= xtol + rtol * abs(up) or f_up == 0:
            break
        x = up - f_up * (up - low) / (f_up - f_low)
        if not low < x < up:
            x = 0.5 * (low + up)
        fx = f(x)
        if fx > 0:
            low, f_low = x, fx
            if kept == 1:
                f_up /= 2
            kept = 1
        else:
            up, f_up = x, fx
            if kept == -1:
                f_low /= 2
            kept = -1
    return up


def _allocation(pilot: np.ndarray, pilot_samples: int, epsilon: float, R: float,
                budget: float, wanted=None) -> tuple[np.ndarray, float]:
    """:func:`allocate_log_terms` and the k at which its budgets put every vertex's radius at
    ε (or at what ``wanted`` says: the run's predicted length)."""
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
    radius = epsilon if wanted is None else np.maximum(wanted(mean), epsilon)
    # σ²(v) bounded at the pilot's mean plus two standard errors plus the radius, as the
    # stopping rule's radius bounds it over [m − r, m + r] at its crossing (bernstein_radius's G)
    high = np.minimum(mean + 2 * np.sqrt(mean * R / pilot_samples) + 2 * R / pilot_samples
                      + radius, R / 2)
    rate = radius * radius / (2 * high * (R - high) + 2 * R * radius / 3)

    def excess(k: float) -> float:  # ln Σ_v exp(−k c(v)) − ln(spread), stable in k
        exponents = -k * rate
        top = exponents.max()
        return top + math.log((many * np.exp(exponents - top)).sum()) - math.log(spread)

    low, up = 0.0, 1.0
    while excess(up) > 0:
        low, up = up, 2 * up
    # the root of the decreasing excess between low and up, taken where the excess is at
    # most 0 (the upper end of the bracket)
    up = decreasing_root(excess, low, up, xtol=1e-12 * up, rtol=1e-14)
    adaptive = up * rate + excess(up)  # excess ≤ 0: the rest of the budget shared out
    return np.minimum(adaptive, even)[vertex_of], up


def samples_to_reach(mean: np.ndarray, R: float, log_term, radius) -> np.ndarray:
    """The samples at which each vertex's Bernstein radius would be ``radius`` if its mean
    stayed where it is: ``k = L (2 G + 2 R r / 3) / r²`` (Bernstein's radius solved for k),
    G the largest variance ``μ (R − μ)`` within r of the mean, as the radius takes it at its
    crossing (:func:`turbobc._bernstein.bernstein_radius`). A prediction for the exact rule,
    no part of the guarantee."""
    mean = np.clip(mean, 0.0, R)
    nearest = np.clip(R / 2, mean - radius, mean + radius)
    variance = nearest * (R - nearest)
    return log_term * (2 * variance + 2 * R * radius / 3) / (radius * radius)


class WithinEpsilon:
    """The goal of ``bc(A, epsilon=)``: every Bernstein radius within ε (``stopped_by =
    "radius"``). A goal answers :func:`until_within`'s three questions; top-k's is
    ``turbobc._topk.Separated``."""

    def floor_epsilon(self, epsilon: float) -> float | None:
        """The largest radius that can end the run: no checkpoint before
        :func:`radius_floor`'s count of it (None: no floor)."""
        return epsilon

    def targets(self, epsilon: float):
        """The radius wanted at each vertex, as a function of its pilot mean (None: ε at
        every vertex), for :func:`allocate_log_terms`."""
        return None

    def least_after_pilot(self, predicted: float) -> float:
        """The least checkpoint kept after a pilot that predicts ``predicted`` samples (the
        floor already dropped those below it: 0)."""
        return 0

    def check(self, mean: np.ndarray, k: int, R: float, log_term, epsilon: float
              ) -> tuple[bool, float, float, str]:
        """Whether the radii of the means of ``k`` samples reach the goal: (reached, the
        bound to report, the samples the goal predicts it needs, what stopped the run)."""
        bound = largest_radius(mean, k, R, log_term)
        if bound <= epsilon:
            return True, bound, k, "radius"
        return False, bound, float(samples_to_reach(mean, R, log_term, epsilon).max()), "radius"

    def at_limit(self, mean: np.ndarray, epsilon: float) -> None:
        """The run stopped at an upper limit, where every value is within ``epsilon``."""


def until_within(epsilon: float, delta: float, n: int, R: float, limit: int, draw, *,
                 factor: float = 1.0, exact_at: int | None = None, pilot=None,
                 first: int = FIRST_CHECKPOINT, second_limit=None, rule=None, goal=None,
                 fold_exact: bool = False,
                 keep: dict | None = None) -> tuple[np.ndarray, dict]:
    """Draw samples up to the checkpoints of ``limit`` until the goal is reached (every
    Bernstein radius within ε unless ``goal`` says otherwise; module docstring); the loop
    both samplers share. ``n``: how many values the guarantee covers (vertices, or the
    distinct edges of edge BC).

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
    cheap lower bound of it), and ``name`` is then ``stopped_by``. ``rule``: the exact rule
    (:class:`turbobc._exact_rule.ExactRule`), asked after each pilot step and each
    checkpoint short of the goal; when it chooses the exact sweep the run draws up to
    ``exact_at``, or raises :class:`~turbobc._exact_rule.ExactCheaper` where there is no
    ``exact_at`` or, with ``fold_exact``, none of the run's samples is drawn yet (the caller
    then sweeps every source as ``bc`` does). ``goal``: :class:`WithinEpsilon` unless given.
    ``keep``: a dict that receives the checkpoints (``points``), how many of them check radii
    (``bernstein``) and the budgets (``log_term``: the aimed checkpoint's, ``aimed_at``;
    every other checkpoint's are ``aimed_shift`` higher).
    Returns the estimate and the facts ``samples``, ``pilot_samples``, ``bound``,
    ``stopped_by``, ``checkpoints``, ``epsilon``, ``delta`` (and ``exact_because`` when the
    rule chose the exact sweep).
    """
    goal = WithinEpsilon() if goal is None else goal
    floor_epsilon = goal.floor_epsilon(epsilon / factor)
    # no radius is within ε before radius_floor's count: the checkpoints start there (fewer
    # checkpoints J, so a larger budget each; ca-GrQc's pairs at ε = 0.01 checked 6 radii
    # below it, each a draw that waits for its slowest thread)
    floor = 0 if floor_epsilon is None else radius_floor(
        n, delta / (4 * max(len(checkpoints(limit, first)) - 1, 1)), floor_epsilon, R)
    points = checkpoints(limit, max(first, floor))
    bernstein = len(points) - 1  # the radii checked before the upper limit
    # the radii a run may check: with a pilot, its aimed checkpoints may add AIM_STEPS
    most = bernstein + (AIM_STEPS if pilot is not None else 0)
    # Σ_v 2 exp(−L(v)) over the J checkpoints within δ/2: Σ_v exp(−L(v)) ≤ δ / (4J) each,
    # or with a pilot AIMED_SHARE · δ/4 at the checkpoint it aims at and the rest spread
    budget = delta / (4 * max(most, 1))
    piloted, second, log_term = 0, None, math.log(n / budget)
    aimed_at, aimed_shift = None, 0.0  # the aimed checkpoint; the others' L(v) above its
    few = PILOT_SHARE * FIRST_CHECKPOINT  # a draw this small costs about a pilot's steps
    exact_because = None

    def to_exact(reason: str, done: int) -> list[int]:
        # the exact sweep: the rest of the sources (their sums add up to the exact ones), or
        # the caller's folded sweep when nothing of the run is drawn yet
        if exact_at is None or (fold_exact and done == 0):
            raise ExactCheaper(reason, piloted)
        return [exact_at]

    if second_limit is not None and second_limit[1] <= few:
        second = second_limit[2]()  # (its searches were due at the checkpoint past few)
    if second is not None and second <= few and second < limit:
        # the other upper limit's size at once, no pilot: at most `few` samples in one draw
        # (ca-GrQc's pairs at ε = 0.05: 1,601 in one draw, where a pilot and 7 checkpoints
        # drew 1,586 in 8, each waiting for its slowest thread)
        if rule is not None:
            exact_because = rule.during(0, second, [second], stage="pilot")
        points = to_exact(exact_because, 0) if exact_because else [second]
    elif pilot is not None and pilot_size(limit, first) > 0 and bernstein > 0:
        def after_step(size: int, predicted: float) -> bool:
            nonlocal exact_because, piloted
            if rule is not None:
                piloted = size
                exact_because = rule.during(0, predicted,
                                            aimed_checkpoints(points, predicted, most),
                                            stage="pilot")
            return exact_because is not None

        aimed_budget = AIMED_SHARE * delta / 4
        log_term, piloted, predicted = pilot_then_budgets(
            pilot, limit, first, epsilon / factor, R, aimed_budget, after_step,
            goal.targets(epsilon / factor))
        # every other checkpoint: (1 − AIMED_SHARE) δ / (4 · most), L(v) that much higher
        aimed_shift = math.log(aimed_budget * most / ((1 - AIMED_SHARE) * delta / 4))
        if exact_because is not None:
            points = to_exact(exact_because, 0)
        elif second_limit is not None and predicted >= second_limit[1]:
            # the other upper limit's fixed size at once, when the radii would reach ε only
            # near it (ego-Facebook's pairs at ε = 0.05: 1,201 samples in one draw, where 7
            # checkpoints each waited for their slowest thread)
            second = second_limit[2]() if second is None else second
            if second < limit and at_once(predicted, second):
                points = [second]
        if len(points) > 1:
            # (a goal without a floor skips the checkpoints far below the prediction: chosen
            # from the pilot alone, they keep the guarantee)
            least = goal.least_after_pilot(predicted)
            points = aimed_checkpoints([k for k in points[:-1] if k >= least] + points[-1:],
                                       predicted, most)
            bernstein = len(points) - 1
        aimed_at = next((k for k in points[:-1] if k >= predicted), None)
    # else log_term stays even: δ' = δ / (2 n J), two-sided
    done, bound, stopped, mean, index = 0, math.inf, "hoeffding", None, 0
    while index < len(points):
        k = points[index]
        if second_limit is not None and k >= second_limit[1] and k != exact_at:
            second = second_limit[2]() if second is None else second
            if second <= k:  # the other upper limit comes first (or now): the run ends there
                mean, done = draw(done, second), second
                bound, stopped = epsilon, second_limit[0]
                goal.at_limit(mean, epsilon / factor)
                points = points[:index] + [second]
                break
        mean = draw(done, k)
        done = k
        if k == exact_at:
            bound, stopped = 0.0, "exact"
            break
        if index < bernstein and k != points[-1]:
            met, radius, need, name = goal.check(
                mean, k, R, checkpoint_log_term(log_term, k, aimed_at, aimed_shift),
                epsilon / factor)
            bound = factor * radius
            if met:
                stopped = name
                break
            if aimed_shift and aimed_at is not None and k < aimed_at:
                # the length still needed, as the aimed checkpoint ahead (its larger share)
                # would see it
                need = goal.check(mean, k, R, log_term, epsilon / factor)[2]
            reason = None if rule is None else rule.during(
                k, need, points[index + 1:], stage="radius")
            if reason is not None:
                exact_because = reason
                points = points[:index + 1] + to_exact(reason, k)
        else:
            bound = epsilon  # Hoeffding's guarantee at the upper limit
            goal.at_limit(mean, epsilon / factor)
        index += 1
    if keep is not None:
        keep.update(points=points, bernstein=bernstein, log_term=log_term, aimed_at=aimed_at,
                    aimed_shift=aimed_shift)
    facts = {"samples": done, "pilot_samples": piloted, "bound": bound, "stopped_by": stopped,
             "checkpoints": points[:points.index(done) + 1], "epsilon": epsilon,
             "delta": delta}
    if stopped == "exact":
        facts["exact_because"] = exact_because or (
            f"the upper limit reaches the {exact_at:,} sources: every one swept")
    return factor * mean, facts
