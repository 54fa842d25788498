"""The Bernstein radii of approximate BC (turbobc/_approx.py, "Stopping"): how far a mean of
k samples in [0, R] may lie from its expectation, per vertex, and the largest of them at a
checkpoint, without visiting every vertex. Imports nothing of turbobc but the compiled
functions' registry (turbobc/_compiled.py), and that when a radius is computed."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["bernstein_radius", "largest_radius", "radius_above"]


def bernstein_radius(mean: np.ndarray, k: int, R: float, log_term: float,
                     iterations: int = 40) -> np.ndarray:
    r"""The radius r(v) such that ``|mean(v) − μ(v)| ≤ r(v)`` holds whenever Bernstein's bound
    does (``log_term`` = L = ln(2 / δ') for that bound's δ', one value or one per mean).

    Bernstein: with probability 1 − δ', ``|m − μ| ≤ t = a + sqrt(a² + 2 L σ² / k)`` with
    ``a = R L / (3k)`` (solving ``k t² = L (2 σ² + 2 R t / 3)``), and the variance of a value
    in [0, R] with mean μ is at most ``g(μ) = μ (R − μ)``. μ is unknown but lies within t of
    m, so t ≤ f(t) with ``f(x) = a + sqrt(a² + 2 L G(x) / k)``, G(x) the largest g on
    [m − x, m + x]. f grows with x but more slowly than x past its largest fixed point, so
    every such t is at most that fixed point, which the iteration x ← f(x) reaches from above
    (starting at f(∞), where G = R² / 4).
    """
    mean = np.ascontiguousarray(mean, dtype=np.float64)
    log_term = np.broadcast_to(np.asarray(log_term, dtype=np.float64), mean.shape)
    radii = np.empty(mean.shape, dtype=np.float64)
    # each mean's iteration, compiled: 40 rounds of NumPy calls over the means cost more than
    # the cpu engine's samples of a checkpoint, and over one mean about 2.5 ms
    from turbobc._compiled import entry

    entry("bernstein_radii")(mean.reshape(-1), np.ascontiguousarray(log_term).reshape(-1),
                             float(k), float(R), int(iterations), radii.reshape(-1))
    return radii


def _radii_loop(mean, log_term, k, R, iterations, out):
    half = R / 2
    for i in range(mean.size):
        m = min(max(mean[i], 0.0), R)
        a = R * log_term[i] / (3 * k)
        scale = 2 * log_term[i] / k
        x = a + math.sqrt(a * a + scale * R * R / 4)
        for _ in range(iterations):
            # the largest μ (R − μ) on [m − x, m + x]: at R/2 when inside, else the nearer end
            nearest = min(max(half, m - x), m + x)
            nearest = min(max(nearest, 0.0), R)
            x = a + math.sqrt(a * a + scale * nearest * (R - nearest))
        out[i] = x


def radius_above(mean: np.ndarray, k: int, R: float, log_term) -> np.ndarray:
    r"""A closed-form upper bound on :func:`bernstein_radius`, one pass over ``mean``.

    With the variance bound ``μ (R − μ) ≤ R μ ≤ R (m + x)``, the fixed-point map f of
    :func:`bernstein_radius` is at most ``h(x) = a + sqrt(a² + s R (m + x))`` (s = 2L/k), so
    its largest fixed point is at most the root of ``x = h(x)``:
    ``x = (2a + sR + sqrt((2a + sR)² + 4 s R m)) / 2``; and at most f(∞) as well.
    """
    mean = np.clip(mean, 0.0, R)
    a = R * np.asarray(log_term, dtype=np.float64) / (3 * k)
    s = 2 * np.asarray(log_term, dtype=np.float64) / k
    b = 2 * a + s * R
    root = (b + np.sqrt(b * b + 4 * s * R * mean)) / 2
    return np.minimum(root, a + np.sqrt(a * a + s * R * R / 4))


def largest_radius(mean: np.ndarray, k: int, R: float, log_term) -> float:
    """The largest of :func:`bernstein_radius` over ``mean``, ``log_term`` one L for all or one
    per vertex.

    Among means of one L, the largest radius is that of the mean nearest R/2, whose variance
    bound G(x) is the largest at every x (so its fixed point is too): one value instead of n
    (on kron20, n = 2^20, the radii of every vertex took 0.4 s per checkpoint). With one L per
    vertex: so for the vertices of the largest L (after :func:`allocate_log_terms`, most of
    them: the even share's), then the exact radius of each other vertex whose
    :func:`radius_above` exceeds the largest so far (few: the vertices of large BC).
    """
    clipped = np.clip(mean, 0.0, R)

    def of_one_log_term(means: np.ndarray, L: float) -> float:
        nearest = means[np.argmin(np.abs(means - R / 2))]
        return float(bernstein_radius(np.array([nearest]), k, R, float(L))[0])

    if np.ndim(log_term) == 0:
        return of_one_log_term(clipped, log_term)
    top = log_term.max()
    shared = log_term == top
    largest = of_one_log_term(clipped[shared], float(top))
    others = np.flatnonzero(~shared)
    rivals = others[radius_above(clipped[others], k, R, log_term[others]) > largest]
    if rivals.size:
        largest = max(largest, float(bernstein_radius(clipped[rivals], k, R,
                                                      log_term[rivals]).max()))
    return largest
