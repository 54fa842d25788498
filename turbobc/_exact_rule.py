"""Never slower than exact: the one rule by which an approximate run (``bc(A, epsilon=)``,
``top_k``) finishes by the exact sweep instead of sampling on (docs/approximate.md, "Never
slower than exact"), for every engine and both samplers.

Costs are counted in the engine's **waves**: a wave is the sources its sweeper sweeps at once
(``planned_batch``: the cpu engine's threads times 64 lanes, the GPU's batch), and a draw of k
sources costs ⌈k / wave⌉ of them, however few sources the last one holds (the threads, or the
device, wait for it). A sampled shortest path costs κ of a source of a full wave (``Tuning.
pair_switch_in_sources`` on the GPU, ``cpu_pair_switch_in_sources`` on the cpu engine). Where
the executor does not say its wave (Dask, the graphblas engine) a wave is one source.

- **Before sampling** (:meth:`ExactRule.before`): exact when the n sources are at most
  :data:`EXACT_WAVES` waves (never where the executor does not say its wave) and the most samples the run may draw (its upper limit) cost at
  least those waves: a pilot and the first checkpoints would cost about what the exact sweep
  does.
- **While sampling** (:meth:`ExactRule.during`, after each step of the pilot and after each
  checkpoint whose radii are not yet within ε): exact when :data:`EXACT_SHARE` of the exact
  sweep's cost (all of it, for shortest paths: :attr:`ExactRule.share`) is at most what the
  draws still needed cost, through the run's checkpoints up to the samples the pilot (or the
  last checkpoint's means, :func:`turbobc._stopping.samples_to_reach`) predicts.

The exact sweep from scratch is the one ``bc`` runs: where the trees hanging off the graph and
the chains inside it fold (turbobc/_fold.py), it sweeps only the sources left
(``folding``; road-luxembourg-osm: 9,343 of its 114,599 vertices, so its sampled paths at
ε = 0.005, 4.7 s on an H200, had been taken over an exact run of 1.45 s). The folding is
worked out only where it may decide: when the draws cost at least the sweep of its floor, a
count of the sources no folding can remove (:func:`turbobc._fold.ExactPlan.floor`).

The rule decides from counts (the samples predicted, the engine's waves), never from timings:
a seed gives the same run on the same machine whatever else runs there.
"""

from __future__ import annotations

import math

__all__ = ["EXACT_SHARE", "EXACT_WAVES", "ExactCheaper", "ExactRule", "at_once",
           "exact_in_few_waves"]

EXACT_WAVES = 4
"""Before sampling, the exact sweep is taken when the n sources are at most this many of the
engine's waves (and the run's upper limit reaches their cost): a pilot or a checkpoint costs a
wave however few sources it holds (ego-Facebook, ε = 0.01, 16 threads of 64 lanes: n = 4,039 is
four waves; the pilot of 128 sources on two threads was a fifth of the run)."""

EXACT_SHARE = 0.7
"""While sampling, the exact sweep is taken when this share of its cost is at most the cost of
the draws still needed: the prediction falls short of the crossing by up to a quarter, and each
checkpoint waits for its slowest thread (:meth:`ExactRule.during`; also the draw at once of an
upper limit's fixed size, :func:`at_once`)."""


class ExactCheaper(Exception):
    """Raised when the rule chooses the exact sweep before any of the run's own samples: the
    caller computes exact BC as ``bc`` does (trees and chains folded). ``reason`` says why,
    ``pilot_samples`` how many pilot samples had been drawn."""

    def __init__(self, reason: str, pilot_samples: int = 0):
        super().__init__(reason)
        self.reason, self.pilot_samples = reason, pilot_samples


def at_once(predicted: float, size: float | None) -> bool:
    """Whether a run the pilot predicts at ``predicted`` samples should draw ``size`` at once
    (an upper limit's fixed size) instead of checkpoints: when it predicts at least
    :data:`EXACT_SHARE` of it, the checkpoints between would save less than they cost."""
    return size is not None and predicted >= EXACT_SHARE * size


def exact_in_few_waves(n: int, planned_batch) -> bool:
    """Whether all ``n`` sources are at most :data:`EXACT_WAVES` of the engine's waves
    (``planned_batch(k)``: what the sweeper sweeps at once; None, as on Dask: False)."""
    if planned_batch is None:
        return False
    return n <= EXACT_WAVES * max(1, int(planned_batch(n)))


class ExactRule:
    """When the exact sweep of ``n`` sources costs less than the samples still needed.

    Parameters
    ----------
    n : int
        The sources of the exact sweep.
    pair_cost : float, optional
        κ, a sample's cost in sources of a full wave, when the samples are shortest paths;
        None when they are sources (each draw costs its waves).
    wave : callable, optional
        ``planned_batch(k)``: the sources the engine sweeps at once in a run of k (its wave);
        None where the executor does not say (a wave is then one source). Settable: the
        sources' schedule learns it when the loop opens its sweeper.
    engine : str
        The engine's name, for the reasons.
    folding : optional
        What the exact sweep from scratch folds (:class:`turbobc._fold.ExactPlan`): its
        ``floor``, sources no folding removes (cheap), and ``swept_sources()``, the sources
        it sweeps once the trees and chains fold as ``bc`` folds them (a search of the
        graph). None: all n.
    """

    def __init__(self, n: int, *, pair_cost: float | None = None, wave=None,
                 engine: str = "", folding=None):
        self.n, self.pair_cost, self.wave, self.engine = n, pair_cost, wave, engine
        self.folding, self._swept = folding, None

    def fresh_sources(self, sampled: float, share: float = 1.0) -> int:
        """The sources of the exact sweep from scratch when the draws cost ``sampled`` waves
        and the exact sweep wins at ``share`` of its cost: the folded count, worked out once
        where it may decide (the draws cost at least ``share`` of the sweep of the folding's
        floor), all n otherwise."""
        if self.folding is None:
            return self.n
        if self._swept is None:
            if sampled < share * self.waves(self.folding.floor):
                return self.n  # no folding makes the exact sweep cheaper than the draws
            self._swept = int(self.folding.swept_sources())
        return self._swept

    @property
    def share(self) -> float:
        """The share of the exact sweep's cost the draws still needed must reach:
        :data:`EXACT_SHARE` for sources (partial waves, the overshoot past the crossing), 1
        for shortest paths (κ, measured on the graph where a path costs the most of the
        three, carries the margin: on ca-GrQc a path costs 0.02 of a source's sweep, not
        0.2, and the pilot's first step predicted 18,634 paths where 8,900 sufficed)."""
        return EXACT_SHARE if self.pair_cost is None else 1.0

    def batch(self, k: int) -> int:
        """The engine's wave in a run of ``k`` sources (1 where it does not say)."""
        return 1 if self.wave is None or k <= 0 else max(1, int(self.wave(k)))

    def waves(self, k: int) -> int:
        """The waves a draw of ``k`` sources costs: ⌈k / wave⌉, the wave of a run of all n
        (a smaller run's own plan may be smaller: the cpu engine's sources alone come in
        chunks of a 64th of them, 16 sources a round on 2 threads for a draw of 100, where
        the cost is the sources a thread sweeps)."""
        return 0 if k <= 0 else -(-k // self.batch(self.n))

    def cost(self, done: int, draws) -> float:
        """The waves of drawing up to each of ``draws`` (increasing sample counts) in turn,
        from ``done`` samples: each draw's waves (sources), or κ times the samples over a full
        wave of the exact sweep (shortest paths)."""
        draws = [k for k in draws if k > done]
        if not draws:
            return 0.0
        if self.pair_cost is not None:
            return self.pair_cost * (draws[-1] - done) / self.batch(self.n)
        return float(sum(self.waves(b - a) for a, b in zip([done] + draws[:-1], draws)))

    def exact_sources(self, done: int, sampled: float, share: float = 1.0) -> int:
        """The sources the exact sweep sweeps after ``done`` samples whose remaining draws
        cost ``sampled``: the n − done the sources' schedule has not swept (its partial sums
        add up to the exact ones), or, from scratch (sampled paths, or no source swept yet),
        :meth:`fresh_sources`."""
        if self.pair_cost is None and done > 0:
            return self.n - done
        return self.fresh_sources(sampled, share)

    def exact_cost(self, done: int) -> int:
        """The waves of the exact sweep after ``done`` samples, unfolded unless the folding
        was worked out already (:meth:`exact_sources`)."""
        return self.waves(self.exact_sources(done, 0.0))

    def _swept_text(self, sources: int, done: int = 0) -> str:
        """The exact sweep's sources in words: those left, and of how many when folded."""
        if sources < self.n and (self.pair_cost is not None or done == 0):
            return f"{sources:,} sources left of {self.n:,} once trees and chains fold"
        return f"{sources:,} sources left"

    def _units(self, cost: float) -> str:
        if self.wave is None:
            return f"{cost:,.0f} sources' sweeps"
        return f"{cost:,.1f} waves of {self.batch(self.n):,} sources"

    def before(self, upper: int) -> str | None:
        """Why the run sweeps every source before sampling (None: it samples), ``upper`` the
        most samples it may draw."""
        sampled = self.cost(0, [upper])
        sources = self.exact_sources(0, sampled)
        exact = self.waves(sources)
        if not exact_in_few_waves(sources, self.wave) or sampled < exact:
            return None
        what = "sampled paths" if self.pair_cost is not None else "sources"
        folded = (f" left of {self.n:,} once trees and chains fold" if sources < self.n
                  else "")
        return (f"before sampling: the {sources:,} sources{folded} are {exact} of the "
                f"{self.engine} engine's waves (at most EXACT_WAVES = {EXACT_WAVES}), and the "
                f"run may draw {upper:,} {what}, {self._units(sampled)}")

    def during(self, done: int, need: float, points, *, stage: str) -> str | None:
        """Why the run finishes by the exact sweep after ``done`` of its samples (None: it
        samples on), when it predicts it needs ``need`` samples and would draw at the
        checkpoints ``points`` (increasing; the last one the upper limit, where it stops
        anyway). ``stage`` names the prediction for the reason: "pilot" or "radius"."""
        later = [k for k in points if k > done]
        if not later:
            return None
        need = min(max(float(need), later[0]), later[-1])
        draws = [k for k in later if k < need] + [next(k for k in later if k >= need)]
        sampled = self.cost(done, draws)
        sources = self.exact_sources(done, sampled, self.share)
        exact = self.waves(sources)
        if self.share * exact > sampled:
            return None
        what = "sampled paths" if self.pair_cost is not None else "sources"
        by = ("the pilot predicts" if stage == "pilot"
              else f"at {done:,} samples the largest radius predicts")
        kappa = (f" (κ = {self.pair_cost:g} of a source's sweep)"
                 if self.pair_cost is not None else "")
        return (f"{by} {math.ceil(need):,} {what}, {len(draws)} draws costing "
                f"{self._units(sampled)}{kappa}; the exact sweep of the "
                f"{self._swept_text(sources, done)} costs "
                f"{self._units(exact)}" + (f" (EXACT_SHARE = {EXACT_SHARE})" if self.share < 1 else ""))
