"""The k most central vertices with a guarantee: :func:`top_k` (docs/approximate.md, "Top-k").

The same samples, schedule, pilot, upper limits and exact rule as ``bc(A, epsilon=)``
(turbobc/_approx.py, turbobc/_stopping.py, turbobc/_exact_rule.py); only the goal differs
(:class:`Separated`): the run stops as soon as the k vertices of the largest estimates are
separated from the others by their Bernstein intervals, or every vertex whose side of that
boundary the intervals leave open is within ε.

**The guarantee.** With probability at least 1 − δ, writing θ for the k-th largest exact
value: every vertex whose value exceeds θ + 2ε is in the set, and none whose value is below
θ − 2ε is. *Proof.* Let E be the event that every value lies in its interval at every
checkpoint, ``|m(v) − μ(v)| ≤ r(v)`` (Bernstein, a union bound over the vertices, both sides
and the J checkpoints: δ/2), or, at an upper limit, within ε (Hoeffding's or Riondato and
Kornaropoulos's sample size: the other δ/2); E has probability at least 1 − δ. Let S be the k
largest estimates, ``a`` the largest upper end ``m + r`` outside S and ``b`` the smallest
lower end ``m − r`` inside. The run stops when every vertex v of S has ``m(v) − r(v) ≥ a`` or
``r(v) ≤ ε``, and every vertex u outside has ``m(u) + r(u) ≤ b`` or ``r(u) ≤ ε``. On E:

- if some u outside S had ``μ(u) > θ + 2ε``, every v in S would have ``μ(v) > θ`` (either
  ``μ(v) ≥ m(v) − r(v) ≥ a ≥ μ(u)``; or ``r(v) ≤ ε`` and, u being within ε or below b,
  ``m(v) ≥ m(u) > θ + ε``, or ``μ(v) ≥ b ≥ μ(u)``), so k + 1 vertices would lie above the
  k-th largest value θ;
- if some v in S had ``μ(v) < θ − 2ε``, some w outside S has ``μ(w) ≥ θ`` (S holds at most
  k − 1 of the k vertices at θ or above, v not being one), and either ``μ(v) ≥ a ≥ μ(w)``, or
  ``m(v) ≤ μ(v) + ε < θ − ε`` while ``m(w) ≥ θ − ε`` (w within ε) or ``μ(w) ≤ b ≤ μ(v)``:
  each contradicts the choice of S or of w.

When the intervals separate (``a ≤ b``) S is, on E, a set of k most central vertices, ties
apart. The vertices whose side stayed open (within ε of the boundary) are reported in the
facts (``ties``).
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from turbobc._approx import approximate, scale_of
from turbobc._bernstein import bernstein_radius, radius_above
from turbobc._pairs import pair_factor
from turbobc._rescale import rescale
from turbobc._stopping import samples_to_reach
from turbobc._validation import check_guarantee, validate

__all__ = ["Separated", "TopK", "top_k", "top_set"]


class TopK(NamedTuple):
    """What :func:`top_k` returns.

    Attributes
    ----------
    vertices : numpy.ndarray
        int64, the k vertices, most central first (equal estimates: the smaller id first).
    values : numpy.ndarray
        float64, their estimates (exact values when ``facts["stopped_by"] == "exact"``).
    facts : dict
        What the run did: ``samples``, ``pilot_samples``, ``stopped_by``, ``bound``,
        ``lower`` and ``upper`` (the returned vertices' intervals), ``ties``, ... (see
        :func:`top_k`).
    """

    vertices: np.ndarray
    values: np.ndarray
    facts: dict


def top_set(values: np.ndarray, k: int) -> np.ndarray:
    """The k largest of ``values``, largest first, equal values by smaller index first: one
    partition and a sort of the k, not a sort of all n."""
    n = values.size
    if k >= n:
        return np.lexsort((np.arange(n), -values))
    kth = np.partition(values, n - k)[n - k]
    above = np.flatnonzero(values > kth)
    chosen = np.concatenate([above, np.flatnonzero(values == kth)[:k - above.size]])
    return chosen[np.lexsort((chosen, -values[chosen]))]


class _State(NamedTuple):
    """The intervals of one checkpoint (in the units of the mean), the set and its boundary."""

    radius: np.ndarray
    inside: np.ndarray
    unsettled: np.ndarray
    theta: float


def _state(mean: np.ndarray, radius: np.ndarray, k: int) -> _State:
    """S, the k largest means, and the vertices whose side of the boundary the intervals leave
    open: in S with ``m − r`` below the largest ``m + r`` outside, or outside with ``m + r``
    above the smallest ``m − r`` inside (module docstring)."""
    inside = np.zeros(mean.size, dtype=bool)
    inside[top_set(mean, k)] = True
    low, high = mean - radius, mean + radius
    if inside.all():
        return _State(radius, inside, np.zeros(mean.size, dtype=bool), -np.inf)
    a, b = high[~inside].max(), low[inside].min()
    unsettled = np.where(inside, low < a, high > b)
    theta = (mean[inside].min() + mean[~inside].max()) / 2
    return _State(radius, inside, unsettled, float(theta))


class Separated:
    """The goal of :func:`top_k` for :func:`turbobc._stopping.until_within`: the k largest
    means separated, or every vertex whose side stays open within ε (module docstring).
    :attr:`state` keeps the last checkpoint's intervals."""

    def __init__(self, k: int):
        self.k = k
        self.state: _State | None = None

    def floor_epsilon(self, epsilon: float) -> None:
        """No floor: a separation may come before any radius is within ε."""
        return None

    def least_after_pilot(self, predicted: float) -> float:
        """No floor before the pilot, so after it the checkpoints start at half its
        prediction (ca-GrQc's top 10 at ε = 0.01 had checked 9 radii below it)."""
        return predicted / 2

    def targets(self, epsilon: float):
        """The radius each vertex needs, from the pilot: half its distance to the pilot's
        boundary (the midpoint of its k-th and (k + 1)-th means), at least ε. The vertices
        far from the boundary then get little of the failure budget, those near it most."""
        def from_pilot(pilot: np.ndarray):
            if self.k >= pilot.size:
                return lambda means: np.full(np.shape(means), np.inf)
            theta = _state(pilot, np.zeros(pilot.size), self.k).theta
            return lambda means: np.maximum(epsilon, np.abs(means - theta) / 2)

        return from_pilot

    def check(self, mean: np.ndarray, samples: int, R: float, log_term, epsilon: float
              ) -> tuple[bool, float, float, str]:
        """Whether the checkpoint's intervals reach the goal (:meth:`turbobc._stopping.
        WithinEpsilon.check`'s answer): "separated" when no vertex's side stays open, else
        "radius" once every open one is within ε. The closed-form radii (``radius_above``,
        at least the Bernstein radii) serve the vertices they settle; the others get theirs."""
        L = np.broadcast_to(np.asarray(log_term, dtype=np.float64), mean.shape)
        radius = radius_above(mean, samples, R, L)
        inside = np.zeros(mean.size, dtype=bool)
        inside[top_set(mean, self.k)] = True
        near = inside.copy()
        if not inside.all():
            near |= mean + radius > (mean - radius)[inside].min()
        radius[near] = bernstein_radius(mean[near], samples, R, L[near])
        self.state = state = _state(mean, radius, self.k)
        open_ = state.unsettled
        bound = float(radius[open_].max()) if open_.any() else 0.0
        name = "radius" if open_.any() else "separated"
        if bound <= epsilon:
            return True, bound, samples, name
        short = open_ & (radius > epsilon)
        wanted = np.maximum(epsilon, np.abs(mean[short] - state.theta) / 2)
        need = float(samples_to_reach(mean[short], R, L[short], wanted).max())
        return False, bound, need, name

    def at_limit(self, mean: np.ndarray, epsilon: float) -> None:
        """At an upper limit every value is within ε."""
        self.state = _state(mean, np.full(mean.size, epsilon), self.k)


def top_k(A, k, *, epsilon=0.01, delta=0.1, seed=None, directed=None, normalized=True,
          engine="auto", client=None) -> TopK:
    r"""The ``k`` most central vertices of ``A`` with a guarantee: with probability at least
    ``1 − delta``, every vertex whose betweenness exceeds the k-th largest, θ, by more than
    ``2 epsilon`` is among them, and none whose betweenness is below ``θ − 2 epsilon`` is.

    Betweenness as :func:`turbobc.bc` computes it (networkx's normalization). Sources, or on
    the GPU and the cpu engine shortest paths, are sampled as ``bc(A, epsilon=, delta=)``
    samples them (docs/approximate.md), until the intervals of the k largest estimates
    separate from the others', or every vertex whose side of that boundary stays open is
    within ``epsilon`` of its estimate; or exactly, every source swept, where that costs
    less (turbobc/_exact_rule.py). The proof is in turbobc/_topk.py and docs/approximate.md
    ("Top-k").

    Parameters
    ----------
    A : scipy.sparse matrix or array, numpy.ndarray or networkx graph
        As for :func:`turbobc.bc` (unweighted; for a networkx graph the vertices returned are
        positions in ``list(G)``).
    k : int
        How many vertices, 1 <= k <= n.
    epsilon, delta : float, default 0.01 and 0.1
        In (0, 1): the width of the guarantee (2 epsilon on each side of θ) and its failure
        probability.
    seed : None, int or numpy.random.Generator, optional
        Fixes the samples, as for ``bc(A, epsilon=)``.
    directed : bool, optional
        As for :func:`turbobc.bc`.
    normalized : bool, default True
        With False the values (and the intervals) are networkx's unnormalized ones; the
        guarantee's epsilon stays in normalized units.
    engine : {"auto", "gpu", "cpu", "graphblas"}, default "auto"
    client : dask.distributed.Client, optional
        As for :func:`turbobc.bc`.

    Returns
    -------
    TopK
        ``vertices`` (int64, most central first), ``values`` (their estimates) and ``facts``:
        ``samples``, ``pilot_samples``, ``sampler``, ``checkpoints``, ``stopped_by``
        ("separated": the intervals apart; "radius": every open side within ε; "hoeffding"
        or "riondato-kornaropoulos": an upper limit, every value within ε; "exact", with
        ``exact_because``), ``bound`` (the largest radius of a vertex whose side stayed open,
        0 when none did), ``lower`` and ``upper`` (the intervals of the k vertices),
        ``ties`` (int64: the vertices, in or out of the set, whose side stayed open, most
        central first: within 2 epsilon of the boundary; for an exact run, the vertices of
        the k-th value when it is shared across the boundary), ``k``, ``epsilon``, ``delta``.

    Raises
    ------
    TypeError
        ``k`` not an int; ``epsilon`` or ``delta`` not a number; as :func:`turbobc.bc`.
    ValueError
        ``k`` outside [1, n]; ``epsilon`` or ``delta`` outside (0, 1); as :func:`turbobc.bc`.

    Notes
    -----
    The failure budget goes mostly to the vertices near the boundary (a pilot's distances to
    it), so the most central vertices, whose BC varies most from sample to sample, need not
    be estimated within epsilon: on ego-Facebook at epsilon 0.01 the top ten separate long
    before every value is within epsilon.

    Examples
    --------
    Zachary's karate club: 34 sources cost less than any sample, so the run is exact.

    >>> import networkx as nx, turbobc
    >>> result = turbobc.top_k(nx.karate_club_graph(), 3, epsilon=0.05, engine="graphblas")
    >>> result.vertices.tolist(), result.facts["stopped_by"]
    ([0, 33, 32], 'exact')
    """
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an int, the number of vertices wanted; got "
                        f"{type(k).__name__} {k!r}")
    if epsilon is None:
        raise ValueError("top_k needs epsilon, a number in (0, 1): the guarantee's width")
    epsilon, delta = check_guarantee(epsilon, delta, k=None, sources=None, targets=None,
                                     normalized=True)
    call = validate(A, sources=None, k=None, seed=None, normalized=normalized,
                    endpoints=False, directed=directed, engine=engine, kernel="auto",
                    progress=False, client=client)
    n, k = call.graph.n, int(k)
    if not 1 <= k <= n:
        raise ValueError(f"k must lie in [1, n] = [1, {n}]; got {k}")
    goal = Separated(k)
    values, facts = approximate(call, epsilon, delta, seed, goal=goal)
    factor = pair_factor(n, False) if facts.get("sampler") == "pairs" else 1.0
    if facts["stopped_by"] == "exact" or goal.state is None:  # exact, or n < 3
        state = _state(values, np.zeros(n), k)
        kth = values[top_set(values, k)[-1]]
        shared = k < n and bool((values[~state.inside] == kth).any())
        ties = np.flatnonzero(values == kth) if shared else np.zeros(0, dtype=np.int64)
    else:
        state = goal.state
        ties = np.flatnonzero(state.unsettled)
    vertices = top_set(values, k).astype(np.int64)
    radius = factor * state.radius
    lower, upper = np.maximum(values - radius, 0.0), values + radius
    ties = ties[np.lexsort((ties, -values[ties]))].astype(np.int64)
    if not normalized:  # networkx's unnormalized scale: the raw sums, halved if undirected
        unit = rescale(np.full(n, 1.0 / scale_of(n, False)), normalized=False,
                       directed=call.graph.directed, endpoints=False)[0] if n >= 3 else 1.0
        values, lower, upper = values * unit, lower * unit, upper * unit
    facts = dict(facts, k=k, ties=ties, lower=lower[vertices], upper=upper[vertices])
    return TopK(vertices, values[vertices], facts)
