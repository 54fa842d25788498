"""Approximate BC kept current by :class:`turbobc.DynamicBC` (``epsilon=``): a sample of
sources carried from graph to graph (docs/dynamic.md, "Approximate mode").

The first computation is ``bc(A, epsilon=ε, delta=δ)``'s sampling of sources
(turbobc/_approx.py: a seeded permutation π of the vertices, a pilot that shares out the
failure budget, checkpoints k₀ < k₁ < ... with Bernstein radii, Hoeffding's size as the upper
limit), kept: π, the k sources swept, their raw sums and the checkpoints with their budgets.

After a batch, the sampled sources whose shortest-path DAG it can change
(turbobc/_dynamic_affected.py) are swept again before and after it (one run on the twin
graph), so the raw sums are those of the same k sources on the new graph. The radii are then
checked on the new sums at the same checkpoint; where they pass ε the next checkpoints' new
sources of π are swept on the new graph, as the first run would have, up to Hoeffding's size
(or every source: exact). The checkpoints and budgets were fixed before the run's samples and
independently of them, so the union bound of the first run covers every checkpoint on any
graph: after every batch each value is within the bound reported (at most ε) with
probability at least 1 − δ, for a batch chosen without looking at the sample.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from turbobc._approx import SourceSampling, largest_radius, sample_range, scale_of
from turbobc._dynamic_affected import affected_sources
from turbobc._dynamic_exact import scalar_facts, sweep_twice
from turbobc._rescale import check_finite
from turbobc._run import Schedule, run_schedule
from turbobc._stopping import checkpoint_log_term

__all__ = ["SampledSums"]


@dataclasses.dataclass(frozen=True)
class SampledSums:
    """The raw sums of the first ``samples`` sources of ``order`` on ``call.graph``, and the
    run's stopping state.

    Attributes
    ----------
    call : turbobc._validation.Call
        The validated call of the current graph.
    epsilon, delta : float
    order : numpy.ndarray
        π: the sources in the order they are sampled.
    samples : int
        k: the sources of π swept so far.
    raw : numpy.ndarray
        Σ δ_s over the k sources (endpoint terms included when asked for).
    stop : dict
        ``points`` (the checkpoints), ``bernstein`` (how many check radii), ``log_term`` (the
        budgets), from turbobc/_approx.py ``until_within``.
    bound, stopped_by : float, str
        The radius reached (0 when exact) and what stopped the sampling.
    """

    call: object
    epsilon: float
    delta: float
    order: np.ndarray
    samples: int
    raw: np.ndarray
    stop: dict
    bound: float
    stopped_by: str

    @classmethod
    def start(cls, call, epsilon: float, delta: float, seed) -> tuple["SampledSums", dict]:
        """Sample sources until every radius is within ``epsilon`` (turbobc/_approx.py)."""
        began = time.perf_counter()
        keep = {}
        schedule = SourceSampling(call, epsilon, delta, seed, keep=keep)
        _, run = run_schedule(call.problem, call.engine, schedule)
        facts = schedule.facts
        sums = cls(call, epsilon, delta, keep["order"], facts["samples"], keep["raw"],
                   {key: keep[key] for key in ("points", "bernstein", "log_term",
                                               "aimed_at", "aimed_shift")},
                   facts["bound"], facts["stopped_by"])
        check_finite(sums.raw, call.engine)
        return sums, {"engine": call.engine, "recomputed": True, "samples": sums.samples,
                      "pilot_samples": facts["pilot_samples"], "bound": sums.bound,
                      "stopped_by": sums.stopped_by,
                      "sources_swept": sums.samples + facts["pilot_samples"],
                      "sweep_seconds": time.perf_counter() - began,
                      "reason": "sampled from scratch", "run": scalar_facts(run)}

    def values(self, *, normalized: bool, endpoints: bool) -> np.ndarray:
        """The estimate: the mean of ``X_s = n · scale · δ_s`` over the k sources."""
        n = self.call.graph.n
        if self.samples == 0:
            return np.zeros(n)
        return self.raw * (n * scale_of(n, endpoints) / self.samples)

    def update(self, after, batch) -> tuple["SampledSums", dict]:
        """The sums after ``batch``, whose graph is ``after``: the affected samples swept
        again, then more samples where the radii need them; and the facts."""
        call = dataclasses.replace(self.call, graph=after)
        n, k = after.n, self.samples
        sampled = self.order[:k]
        facts = {"engine": call.engine, "recomputed": False, "searches": 0,
                 "search_seconds": 0.0}
        began = time.perf_counter()
        if 2 * len(batch) < k:
            touched = affected_sources(self.call.graph, after, batch, every_source=True)
            hit = sampled[np.isin(sampled, touched.sources)]
            facts.update(searches=touched.searches, affected_sources=touched.sources.size,
                         search_seconds=time.perf_counter() - began)
        else:  # the searches would cost about as much as sweeping the sample
            hit = sampled
        began = time.perf_counter()
        if 2 * hit.size >= k:  # sweeping them twice costs more than the k once
            total, run = run_schedule(call.problem, call.engine, [sampled])
            raw, swept = total.vertex, k
            reason = f"swept the {k:,} sampled sources again on the new graph"
        elif hit.size:
            old, new, run = sweep_twice(self.call, after, hit)
            # Σ_K δ_s(G') = Σ_K δ_s(G) − Σ_{hit} δ_s(G) + Σ_{hit} δ_s(G'), K the sample
            raw, swept = np.maximum((self.raw - old) + new, 0.0), 2 * hit.size
            reason = (f"swept {hit.size:,} of the {k:,} sampled sources again, before and "
                      "after the batch: those whose shortest paths it can change")
        else:
            raw, swept, run = self.raw, 0, {}
            reason = "no sampled source's shortest paths change"
        sums = dataclasses.replace(self, call=call, raw=raw)
        sums, drawn = sums._settle()
        check_finite(sums.raw, call.engine)
        if drawn:
            reason += f"; {drawn:,} more sampled on the new graph for the bound"
        facts.update(samples=sums.samples, bound=sums.bound, stopped_by=sums.stopped_by,
                     resampled=int(hit.size), drawn=drawn, sources_swept=swept + drawn,
                     sweep_seconds=time.perf_counter() - began, reason=reason,
                     run=scalar_facts(run))
        return sums, facts

    def _settle(self) -> tuple["SampledSums", int]:
        """The stopping rule carried on from the current checkpoint on the current graph
        (turbobc/_approx.py ``until_within``'s loop): the sums as they are when their radii
        pass, else with the next checkpoints' sources swept. Returns the sums and how many
        sources it drew."""
        verdict = self._verdict(self.samples, self.raw)
        if verdict is not None:
            return dataclasses.replace(self, bound=verdict[0], stopped_by=verdict[1]), 0
        schedule = _MoreSamples(self)
        run_schedule(self.call.problem, self.call.engine, schedule)
        return schedule.result, schedule.result.samples - self.samples

    def _verdict(self, k: int, raw: np.ndarray):
        """(bound, stopped_by) when k samples with sums ``raw`` end the run, else None."""
        n = self.call.graph.n
        index = self.stop["points"].index(k)
        if k == n:
            return 0.0, "exact"
        if index >= self.stop["bernstein"]:
            return self.epsilon, "hoeffding"  # Hoeffding's size: the guarantee whatever
        endpoints = self.call.endpoints
        mean = raw * (n * scale_of(n, endpoints) / k)
        log_term = checkpoint_log_term(self.stop["log_term"], k, self.stop["aimed_at"],
                                       self.stop["aimed_shift"])
        bound = largest_radius(mean, k, sample_range(n, endpoints), log_term)
        return (bound, "radius") if bound <= self.epsilon else None


class _MoreSamples(Schedule):
    """The next checkpoints' sources of π, swept on the current graph until the stopping rule
    says stop (:meth:`SampledSums._verdict`); ``result`` holds the sums then."""

    def __init__(self, sums: SampledSums):
        self.sums, self.result = sums, None
        self.most = sums.stop["points"][-1] - sums.samples

    def drive(self, sweep) -> None:
        sums = self.sums
        k, raw = sums.samples, sums.raw
        points = sums.stop["points"]
        for following in points[points.index(k) + 1:]:
            raw = raw + sweep(sums.order[k:following]).vertex
            k = following
            verdict = sums._verdict(k, raw)
            if verdict is not None:
                break
        self.result = dataclasses.replace(sums, samples=k, raw=raw, bound=verdict[0],
                                          stopped_by=verdict[1])

