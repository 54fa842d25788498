"""Exact BC kept current by :class:`turbobc.DynamicBC`: the raw sums, updated by linearity.

BC is a sum over sources, ``c = Σ_s δ_s``. A batch changes the terms of the sources (on an
undirected graph, of the pairs) it affects (turbobc/_dynamic_affected.py), so with X those
sources and τ their targets' weights::

    c' = c − Σ_{s ∈ X} δ_s^τ(G) + Σ_{s ∈ X} δ_s^τ(G')

The two sums come from one run of the engine on the twin graph ``[[A, 0], [0, A']]``
(:func:`sweep_twice`, turbobc/_dynamic_changes.py ``twin_graph``): the sources s and s + n,
through the one loop (turbobc/_run.py), on any engine and with the GPU's families as
``bc()`` chooses them. A batch whose sources would cost about as much as a fresh ``bc()``
(by their count, and by the seconds per source the largest update so far took: a few
scattered sources sweep slower than a whole graph's, whose batches share their levels, and
a fresh run folds trees and chains) is recomputed through the folding (turbobc/_fold.py),
and so is one after which the rounding of the additions could exceed what a fresh ``bc()``
would be compared with (:data:`DRIFT`).

On an undirected graph the sums kept are the dependencies alone; networkx's endpoint terms,
2 (|C(v)| − 1) for v in a component C, are added in closed form when values are asked for.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from turbobc._dynamic_affected import affected_sources
from turbobc._dynamic_changes import twin_graph
from turbobc._fold import raw_sums
from turbobc._reduce import component_sizes, endpoint_terms
from turbobc._rescale import check_finite, rescale
from turbobc._run import run_schedule
from turbobc._tuning import current as current_tuning

__all__ = ["DRIFT", "ExactSums", "LEARN_FROM", "scalar_facts", "sweep_twice"]

LEARN_FROM = 64
"""The fewest sources of a twin sweep whose seconds a source predict a larger one's: fewer
are dominated by what a run costs whatever its size."""

DRIFT = (2.0**-52, 1e-13, 1e-14)
"""Rounding: (unit, relative, floor). Each update adds ``unit · (c(v) + old(v) + new(v) +
c'(v))`` to an estimate of the rounding each raw sum has gathered (what the two additions
and the two sweeps' own sums can lose); when an estimate passes ``relative · c'(v) + floor ·
max c'``, the sums are recomputed. Sums within their estimate of 0 are 0."""


@dataclasses.dataclass(frozen=True)
class ExactSums:
    """The raw sums of exact BC of ``call.graph`` and what their updates need.

    Attributes
    ----------
    call : turbobc._validation.Call
        The validated call of the current graph: every source, and for an undirected graph
        ``endpoints=False`` (the endpoint terms are added in :meth:`values`).
    raw : numpy.ndarray
        Σ_s δ_s over every source (plus the endpoint terms on a directed graph with them).
    rounding : numpy.ndarray
        The rounding each sum may have gathered since it was computed from scratch (DRIFT).
    fresh_sources : int
        The sources a fresh ``bc()`` sweeps, from the last one's facts.
    fresh_seconds : float
        The seconds the last fresh computation took.
    rate : float
        Seconds per source of the largest twin sweep of at least :data:`LEARN_FROM` sources
        so far (0 until one): what a large batch's sweep is predicted to cost a source.
    """

    call: object
    raw: np.ndarray
    rounding: np.ndarray
    fresh_sources: int
    fresh_seconds: float = 0.0
    rate: float = 0.0
    learned_from: int = 0

    @classmethod
    def start(cls, call, reason: str = "computed from scratch", learned=None
              ) -> tuple["ExactSums", dict]:
        """The sums of ``call`` from scratch (trees and chains folded, as ``bc()``), and the
        facts of the run; ``learned``: the sums whose learned rate carries on."""
        began = time.perf_counter()
        raw, facts = raw_sums(call) if call.graph.n else (np.zeros(0), {})
        check_finite(raw, call.engine)
        n = call.graph.n
        fresh = facts.get("core_vertices", n) - facts.get("chain_folded", 0)
        seconds = time.perf_counter() - began
        sums = cls(call, raw, np.zeros(n), fresh, seconds,
                   *((learned.rate, learned.learned_from) if learned is not None else ()))
        return sums, {"engine": call.engine, "recomputed": True, "sources_swept": fresh,
                      "affected_sources": n, "sweep_seconds": seconds, "reason": reason,
                      "run": scalar_facts(facts)}

    def values(self, *, normalized: bool, endpoints: bool) -> np.ndarray:
        """networkx's values of the current graph (turbobc/_rescale.py)."""
        graph = self.call.graph
        raw = self.raw
        if endpoints and not graph.directed:
            raw = raw + endpoint_terms(component_sizes(graph))
        return rescale(raw, normalized=normalized, directed=graph.directed,
                       endpoints=endpoints)

    def update(self, after, batch) -> tuple["ExactSums", dict]:
        """The sums after ``batch`` (checked), whose graph is ``after``, and the facts."""
        call = dataclasses.replace(self.call, graph=after)
        most = self._most_sources()
        if most is not None and len(batch) >= most:
            return self.start(call, f"recomputed: {len(batch):,} changed edges, two distance "
                                    f"searches each, cost about as much as a fresh bc(), "
                                    f"which sweeps {self.fresh_sources:,} sources", self)
        began = time.perf_counter()
        touched = affected_sources(self.call.graph, after, batch, limit=most)
        searched = time.perf_counter() - began
        if not touched.complete:
            sums, facts = self.start(call, f"recomputed: the batch touches {most:,} sources or "
                                           f"more; sweeping them before and after it costs "
                                           f"about as much as a fresh bc(), which sweeps "
                                           f"{self.fresh_sources:,} in "
                                           f"{self.fresh_seconds:.3g} s", self)
            return sums, dict(facts, searches=touched.searches, search_seconds=searched)
        X = touched.sources
        facts = {"engine": self.call.engine, "recomputed": False, "affected_sources": X.size,
                 "sources_swept": 2 * X.size, "searches": touched.searches,
                 "search_seconds": searched, "sweep_seconds": 0.0}
        if X.size == 0:
            return (dataclasses.replace(self, call=call),
                    dict(facts, reason="no source's shortest paths change"))
        began = time.perf_counter()
        old, new, run = sweep_twice(self.call, after, X, touched.target_weight)
        swept = time.perf_counter() - began
        facts.update(sweep_seconds=swept, run=run)
        rate, learned_from = self.rate, self.learned_from
        if 2 * X.size >= max(LEARN_FROM, learned_from):  # the largest sweep so far
            rate, learned_from = swept / (2 * X.size), 2 * X.size
        # c' = c − Σ_{s∈X} δ_s^τ(G) + Σ_{s∈X} δ_s^τ(G')
        raw = (self.raw - old) + new
        check_finite(raw, self.call.engine)
        unit, relative, floor = DRIFT
        rounding = self.rounding + unit * (self.raw + old + new + np.abs(raw))
        zero = (raw <= rounding) | _no_dependency(after, call.endpoints)
        raw[zero] = 0.0
        rounding[_no_dependency(after, call.endpoints)] = 0.0
        kind = "pair" if touched.target_weight is not None else "source"
        reason = (f"swept {X.size:,} of {after.n:,} sources again, before and after the "
                  f"batch: the {kind}s whose shortest paths it can change"
                  + (" have an end among them" if kind == "pair" else ""))
        if (rounding > relative * raw + floor * raw.max(initial=0.0)).any():
            sums, fresh = self.start(call, "refreshed: the rounding of the updates so far "
                                           "could pass 1e-13 of a value; recomputed", self)
            return sums, dict(fresh, searches=touched.searches, search_seconds=searched,
                              sources_swept=2 * X.size + fresh["sources_swept"])
        return (ExactSums(call, raw, rounding, self.fresh_sources, self.fresh_seconds, rate,
                          learned_from), dict(facts, reason=reason))

    def _most_sources(self) -> int | None:
        """The |X| from which a batch is recomputed (None: never): 2 |X| sources cost
        ``Tuning.dynamic_recompute_share`` of a fresh bc(), counted in sources and, once a
        large sweep has shown its cost a source, in seconds."""
        share = current_tuning().dynamic_recompute_share
        if share == math.inf:
            return None
        sources = self.fresh_sources
        if self.rate > 0:
            sources = min(sources, self.fresh_seconds / self.rate)
        return max(1, math.ceil(share * sources / 2))


def sweep_twice(call, after, sources: np.ndarray, target_weight=None):
    """Σ_{s ∈ sources} δ_s^τ on the graph of ``call`` and on ``after``, from one run on their
    twin graph (turbobc/_dynamic_changes.py), and the facts of the run.

    Returns (old sums, new sums, facts)."""
    before = call.graph
    n = before.n
    tau = None if target_weight is None else np.concatenate([target_weight, target_weight])
    problem = dataclasses.replace(call.problem, graph=twin_graph(before, after),
                                  target_weight=tau)
    total, facts = run_schedule(problem, call.engine,
                                [np.concatenate([sources, sources + n])])
    return total.vertex[:n].copy(), total.vertex[n:].copy(), scalar_facts(facts)


def _no_dependency(graph, endpoints: bool) -> np.ndarray:
    """The vertices whose raw sums are exactly 0: no shortest path runs through a vertex of
    degree at most one (undirected), nor through one without in- or out-edges (directed);
    none with endpoints counted."""
    if endpoints:
        return np.zeros(graph.n, dtype=bool)
    if graph.directed:
        return (graph.in_degree == 0) | (graph.out_degree == 0)
    return graph.out_degree <= 1


def scalar_facts(facts: dict) -> dict:
    """The facts of a run that are plain numbers, strings or flags."""
    return {k: v for k, v in facts.items() if isinstance(v, (bool, int, float, str))}
