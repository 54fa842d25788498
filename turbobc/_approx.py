"""Approximate BC with a guarantee: every normalized value within ε of the exact one with
probability at least 1 − δ (``turbobc.bc(A, epsilon=ε, delta=δ)``; docs/approximate.md).

A layer on the engine protocol (turbobc/engines/protocol.py), for any engine, weighted or
not, directed or not:

- **Samples.** Sources are taken without replacement in the order of a seeded random
  permutation π of the n vertices. After k of them, the estimate of the normalized BC of v is
  the mean of ``X_s(v) = n · scale · δ_s(v)`` over the k sources, where ``scale`` is
  networkx's normalization of the raw sums (turbobc/_rescale.py), so that the mean of X over
  all n sources is exactly the exact value; ``0 ≤ X_s(v) ≤ R`` (:func:`sample_range`).
- **Stopping (adaptive).** At checkpoints k = k₀, 2k₀, 4k₀, ... (:func:`checkpoints`) every
  vertex gets a Bernstein radius from its mean alone (:func:`bernstein_radius`); the first
  checkpoint whose largest radius is at most ε ends the run. Bernstein's inequality holds for
  sampling without replacement (Hoeffding 1963, Theorem 4: every bound from the moment
  generating function carries over), the population variance of X(v) is at most
  μ(v)(R − μ(v)), and a union bound over the n vertices and the J checkpoints spends δ/2.
- **Upper limit.** The fixed sample size of Hoeffding's inequality, ``k_H = ⌈R² ln(4n/δ) /
  (2ε²)⌉`` (the other δ/2), ends the run whatever the radii; when k_H ≥ n the exact sweep of all
  n sources costs no more, and the result is exact.

Every sweep of a checkpoint runs the sources it adds (``Sweeper.run``) and the partial sums are
added in checkpoint order, so a seed gives the same samples whatever the batch size or engine.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from turbobc.engines.protocol import Partial

__all__ = ["FIRST_CHECKPOINT", "approximate_pairs", "approximate_raw", "bernstein_radius",
           "checkpoints", "hoeffding_samples", "largest_radius", "sample_limit", "sample_range",
           "scale_of", "until_within"]

FIRST_CHECKPOINT = 128
"""Sources of the first checkpoint k₀ (fewer when n is smaller)."""


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


def sample_limit(n: int, endpoints: bool, epsilon: float, delta: float) -> int:
    """The most sources a run may sweep: Hoeffding's k_H, or n (exact) when that is fewer."""
    return min(n, hoeffding_samples(n, epsilon, delta, sample_range(n, endpoints)))


def checkpoints(limit: int, first: int = FIRST_CHECKPOINT) -> list[int]:
    """k₀, 2k₀, 4k₀, ... below ``limit``, then ``limit``: the sample counts at which the
    radii are computed (all but the last; the last is the upper limit)."""
    points, k = [], max(1, min(first, limit))
    while k < limit:
        points.append(k)
        k *= 2
    return points + [limit]


def bernstein_radius(mean: np.ndarray, k: int, R: float, log_term: float,
                     iterations: int = 40) -> np.ndarray:
    r"""The radius r(v) such that ``|mean(v) − μ(v)| ≤ r(v)`` holds whenever Bernstein's bound
    does (``log_term`` = L = ln(2 / δ') for that bound's δ').

    Bernstein: with probability 1 − δ', ``|m − μ| ≤ t = a + sqrt(a² + 2 L σ² / k)`` with
    ``a = R L / (3k)`` (solving ``k t² = L (2 σ² + 2 R t / 3)``), and the variance of a value
    in [0, R] with mean μ is at most ``g(μ) = μ (R − μ)``. μ is unknown but lies within t of
    m, so t ≤ f(t) with ``f(x) = a + sqrt(a² + 2 L G(x) / k)``, G(x) the largest g on
    [m − x, m + x]. f grows with x but more slowly than x past its largest fixed point, so
    every such t is at most that fixed point, which the iteration x ← f(x) reaches from above
    (starting at f(∞), where G = R² / 4).
    """
    mean = np.clip(mean, 0.0, R)
    a = R * log_term / (3 * k)
    scale = 2 * log_term / k
    x = np.full(mean.shape, a + math.sqrt(a * a + scale * R * R / 4))
    half = R / 2
    for _ in range(iterations):
        low, high = mean - x, mean + x
        # the largest μ (R − μ) on [low, high]: at R/2 when inside, else at the nearer end
        nearest = np.clip(half, low, high)
        nearest = np.clip(nearest, 0.0, R)
        x = a + np.sqrt(a * a + scale * nearest * (R - nearest))
    return x


def largest_radius(mean: np.ndarray, k: int, R: float, log_term: float) -> float:
    """The largest of :func:`bernstein_radius` over ``mean``: the radius of the mean nearest
    R/2, whose variance bound G(x) is the largest at every x (so its fixed point is too). One
    value instead of n: on kron20 (n = 2^20) the radii of every vertex took 0.4 s per
    checkpoint."""
    clipped = np.clip(mean, 0.0, R)
    nearest = clipped[np.argmin(np.abs(clipped - R / 2))]
    return float(bernstein_radius(np.array([nearest]), k, R, log_term)[0])


def approximate_raw(call, epsilon: float, delta: float, seed, sweep) -> tuple[np.ndarray, dict]:
    """Normalized BC within ``epsilon`` with probability 1 − ``delta`` (module docstring).

    ``call``: the validated call (turbobc/_validation.py); ``sweep(sources)`` returns the raw
    sums (a Partial) of the given new sources on the call's engine. Returns the normalized
    values and the facts: ``samples``, ``bound`` (the largest radius reached, 0 when exact),
    ``stopped_by`` ("radius", "hoeffding" or "exact"), ``checkpoints``, ``hoeffding_samples``.
    """
    n = call.graph.n
    R = sample_range(n, call.endpoints)
    scale = scale_of(n, call.endpoints)
    order = _permutation(seed, n)
    total = [Partial.zeros(n)]

    def draw(done: int, k: int) -> np.ndarray:
        total[0] = total[0] + sweep(order[done:k])
        return total[0].vertex * (n * scale / k)

    limit = sample_limit(n, call.endpoints, epsilon, delta)
    mean, facts = until_within(epsilon, delta, n, R, limit, draw, exact_at=n)
    facts.update(hoeffding_samples=hoeffding_samples(n, epsilon, delta, R), sample_range=R,
                 sampler="sources")
    return mean, facts


def until_within(epsilon: float, delta: float, n: int, R: float, limit: int, draw, *,
                 factor: float = 1.0, exact_at: int | None = None) -> tuple[np.ndarray, dict]:
    """Draw samples up to the checkpoints of ``limit`` until every Bernstein radius is within
    ε (module docstring, "Stopping"); the loop both samplers share.

    ``draw(done, k)`` adds samples ``done .. k − 1`` and returns the mean of X over the k
    drawn (values in [0, R]); the estimate is ``factor`` times it, so a radius r of the mean
    is ``factor · r`` of the estimate. ``limit`` is Hoeffding's size (at which the run stops
    whatever the radii); ``exact_at``: the sample count at which the result is exact. Returns
    the estimate and the facts ``samples``, ``bound``, ``stopped_by``, ``checkpoints``,
    ``epsilon`` and ``delta``.
    """
    points = checkpoints(limit)
    bernstein = len(points) - 1  # the radii checked before the upper limit
    log_term = math.log(4 * n * max(bernstein, 1) / delta)  # δ' = δ / (2 n J), two-sided
    done, bound, stopped, mean = 0, math.inf, "hoeffding", None
    for index, k in enumerate(points):
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
    facts = {"samples": done, "bound": bound, "stopped_by": stopped,
             "checkpoints": points[:points.index(done) + 1], "epsilon": epsilon,
             "delta": delta}
    return factor * mean, facts


def approximate_pairs(call, epsilon: float, delta: float, seed, sample) -> tuple[np.ndarray,
                                                                                dict]:
    """Normalized BC within ``epsilon`` with probability 1 − ``delta`` from sampled shortest
    paths (turbobc/_pairs.py): X is 0 or 1 (R = 1), the estimate is c times its mean, and
    Hoeffding's size for pairs is the upper limit.

    ``sample(seed64, first, count)`` adds the counts of samples ``first .. first + count − 1``
    (uint64, one per vertex) to a running total and returns that total. Returns the values
    and the facts of :func:`until_within` with ``sampler = "pairs"``.
    """
    from turbobc._pairs import pair_factor, pair_sample_limit, pair_seed

    n = call.graph.n
    seed64 = pair_seed(seed)
    limit = pair_sample_limit(n, call.endpoints, epsilon, delta)

    def draw(done: int, k: int) -> np.ndarray:
        return sample(seed64, done, k - done).astype(np.float64) / k

    values, facts = until_within(epsilon, delta, n, 1.0, limit, draw,
                                 factor=pair_factor(n, call.endpoints))
    facts.update(hoeffding_samples=limit, sample_range=1.0, sampler="pairs")
    return values, facts


def _permutation(seed, n: int) -> np.ndarray:
    """The order the sources are drawn in: a permutation of the n vertices from ``seed``
    (None, an int or a numpy Generator)."""
    if seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool)):
        rng = np.random.default_rng(None if seed is None else int(seed))
    elif isinstance(seed, np.random.Generator):
        rng = seed
    else:
        raise TypeError("with epsilon, seed must be None, an int or a numpy.random.Generator; "
                        f"got {type(seed).__name__} {seed!r}")
    return rng.permutation(n).astype(np.int64)
