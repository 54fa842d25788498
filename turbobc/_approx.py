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
  n sources costs no more, and the result is exact. When the pilot predicts 70% or more of a
  second upper limit's fixed size (sampled paths: Riondato and Kornaropoulos's, from the
  vertex diameter), the run draws that size at once (:func:`at_once`).
- **Never slower than exact.** Before sampling, after each step of the pilot and after each
  checkpoint short of ε, one rule (turbobc/_exact_rule.py, :class:`ExactRule`) weighs the
  samples still needed against the exact sweep, in the engine's waves, and finishes by the
  exact sweep when that costs less (the facts say why: ``exact_because``).

The checkpoints, the pilot and the loop live in turbobc/_stopping.py, shared with
``turbobc.top_k`` (turbobc/_topk.py), whose goal is another (the k most central separated).

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
from turbobc._exact_rule import (EXACT_SHARE, EXACT_WAVES, ExactCheaper, ExactRule, at_once,
                                 exact_in_few_waves)
from turbobc._fold import ExactPlan, raw_sums
from turbobc._pairs import (pair_factor, pair_sample_limit, pair_seed, rk_samples,
                            vertex_diameter_bound)
from turbobc._progress import source_progress
from turbobc._rescale import check_finite
from turbobc._run import Schedule, planned_batch_of, run_schedule
from turbobc._bernstein import bernstein_radius, largest_radius, radius_above
from turbobc._stopping import (AIM_GROWTH, AIM_STEPS, CHECKPOINT_GROWTH, EVEN_SHARE,
                               FIRST_CHECKPOINT, PILOT_SHARE, aimed_checkpoints,
                               allocate_log_terms, checkpoints, decreasing_root, pilot_size,
                               pilot_then_budgets, radius_floor, until_within)
from turbobc._tuning import current as current_tuning

# the stopping machinery (turbobc/_stopping.py) and the exact rule (turbobc/_exact_rule.py)
# are named here too: approximation's whole vocabulary in one import
__all__ = ["AIM_GROWTH", "AIM_STEPS", "CHECKPOINT_GROWTH", "EVEN_SHARE", "EXACT_SHARE",
           "EXACT_WAVES", "FIRST_CHECKPOINT", "PILOT_SHARE", "at_once", "exact_in_few_waves",
           "ExactCheaper", "ExactRule", "SourceSampling", "aimed_checkpoints",
           "allocate_log_terms", "approximate", "approximate_pairs", "approximate_raw",
           "bernstein_radius", "checkpoints", "decreasing_root", "exact_rule", "hoeffding_samples",
           "largest_radius", "pilot_size", "pilot_then_budgets", "radius_above",
           "radius_floor", "sample_limit", "sample_range", "scale_of", "until_within"]


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


def approximate_raw(call, epsilon: float, delta: float, seed, sweep, *,
                    edges=None, goal=None, keep: dict | None = None,
                    plan: ExactPlan | None = None) -> tuple[np.ndarray, dict]:
    """Normalized BC within ``epsilon`` with probability 1 − ``delta`` (module docstring).

    ``call``: the validated call (turbobc/_validation.py); ``sweep(sources)`` returns the raw
    sums (a Partial) of the given new sources on the call's engine. ``edges``: None for vertex
    BC, or ``(count, raw_of)`` for edge BC: ``count`` distinct edges (each undirected edge
    once), whose raw sums ``raw_of(partial)`` gives. networkx scales edge sums as vertex sums
    with endpoints, ``1 / (n (n − 1))``, and a source's term on an edge is at most n − 1
    (the targets beyond it), so ``X_s(e) = n δ_s(e) / (n (n − 1))`` lies in [0, 1]: the scale
    and range of ``endpoints=True``, with the union bound over the ``count`` edges. ``goal``:
    :func:`until_within`'s (every radius within ε unless given).

    Returns the normalized values (one per vertex, or per distinct edge) and the facts:
    ``samples``, ``pilot_samples``, ``bound`` (the largest radius reached, 0 when exact),
    ``stopped_by`` ("radius", "hoeffding" or "exact", with ``exact_because``),
    ``checkpoints``, ``hoeffding_samples``. The pilot's sources are the first of a second
    permutation drawn after the run's own. ``keep``: a dict that receives the run's
    ``order``, the raw sums of its samples (``raw``) and :func:`until_within`'s state
    (turbobc/_dynamic_sampled.py carries a run on as its graph changes); a run that keeps
    its state sweeps every source itself when the exact rule prefers that.

    Raises
    ------
    ExactCheaper
        When the exact rule (turbobc/_exact_rule.py) chooses the exact sweep of vertex BC
        before any of the run's own sources, and ``keep`` is None: the caller sweeps every
        source as ``bc`` does.
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
    folds = edges is None and keep is None  # the caller may sweep as bc() does
    rule = ExactRule(n, wave=getattr(sweep, "planned_batch", None), engine=call.engine,
                     folding=plan if folds else None)
    # all n sources at once, without a pilot, when they are a few of the engine's waves
    reason = rule.before(limit)
    if reason is None:
        mean, facts = until_within(epsilon, delta, count, R, limit, draw, exact_at=n,
                                   pilot=pilot, rule=rule, goal=goal, fold_exact=folds,
                                   keep=keep)
    elif folds:
        raise ExactCheaper(reason)
    else:
        mean = draw(0, n)
        facts = {"samples": n, "pilot_samples": 0, "bound": 0.0, "stopped_by": "exact",
                 "checkpoints": [n], "epsilon": epsilon, "delta": delta,
                 "exact_because": reason}
        if keep is not None:
            keep.update(points=[n], bernstein=0, log_term=0.0, aimed_at=None, aimed_shift=0.0)
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


def approximate_pairs(call, epsilon: float, delta: float, seed, sample,
                      first: int = FIRST_CHECKPOINT, rule=None,
                      goal=None) -> tuple[np.ndarray, dict]:
    """Normalized BC within ``epsilon`` with probability 1 − ``delta`` from sampled shortest
    paths (turbobc/_pairs.py): X is 0 or 1 (R = 1), the estimate is c times its mean, and
    Hoeffding's size for pairs is the upper limit.

    ``sample(seed64, first, count)`` adds the counts of samples ``first .. first + count − 1``
    (uint64, one per vertex) to a running total and returns that total. The run's samples are
    numbered from 0, the pilot's from the upper limit on (numbers the run never reaches);
    ``first``: the first checkpoint; ``rule``: the exact rule (:func:`pair_rule`), which may
    raise :class:`ExactCheaper`; ``goal``: :func:`until_within`'s. Returns the values and the
    facts of :func:`until_within` with ``sampler = "pairs"``.
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
                                 first=first, second_limit=second, rule=rule, goal=goal)
    facts.update(hoeffding_samples=limit, sample_range=1.0, sampler="pairs")
    return values, facts


def pair_rule(call, plan: ExactPlan | None = None):
    """The exact rule (turbobc/_exact_rule.py) of a run that samples shortest paths: a path
    costs ``Tuning.pair_switch_in_sources`` (GPU) or ``cpu_pair_switch_in_sources`` (cpu
    engine) of a source's sweep in the engine's waves (the sweeper's ``planned_batch``,
    :func:`turbobc._run.planned_batch_of`); None on the graphblas engine (no switch)."""
    knobs = current_tuning()
    kappa = {"gpu": knobs.pair_switch_in_sources,
             "cpu": knobs.cpu_pair_switch_in_sources}.get(call.engine)
    if kappa is None:
        return None
    return ExactRule(call.graph.n, pair_cost=kappa, engine=call.engine,
                     wave=planned_batch_of(call.problem, call.engine, call.client),
                     folding=plan)


# ---- the run ----------------------------------------------------------------------------

def approximate(call, epsilon: float, delta: float, seed, goal=None) -> tuple:
    """The values and facts of an approximate run (module docstring, "The run"): normalized
    BC within ``epsilon`` with probability 1 − ``delta``, one value per vertex, or for edge
    BC (``call.edges``) the n x n matrix of :func:`turbobc._edges.edge_matrix`.

    ``call``: the validated call (turbobc/_validation.py), ``epsilon`` and ``delta`` checked
    (:func:`turbobc._validation.check_guarantee`); ``goal``: :func:`until_within`'s (every
    radius within ε unless given: top-k's, turbobc/_topk.py). The facts are the sweeper's (or
    the pair sampler's) and :func:`until_within`'s, with ``exact_because`` when the exact rule
    (turbobc/_exact_rule.py) chose the exact sweep, which then runs as ``bc`` runs it (trees
    and chains folded) unless some of the run's sources were swept already, and
    ``pairs_declined`` (the reason) when sampled paths gave way to sources or to the exact
    sweep.

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
    # the exact run's folding, worked out when the exact rule first weighs it (and kept for
    # the exact run itself): vertex BC only
    plan = None if call.edges else ExactPlan(call)
    pair_limit = pair_sample_limit(n, call.endpoints, epsilon, delta)
    pairs = not call.edges and _samples_pairs(call, pair_limit)
    first, rule, exact, overflow, piloted = FIRST_CHECKPOINT, None, None, None, 0
    if pairs:
        rule = pair_rule(call, plan)
        exact = None if rule is None else rule.before(pair_limit)
        overflow = exact
        pairs = exact is None
    if pairs:
        sample, facts_of, in_flight = _pair_sampler(call)
        first = max(first, in_flight)
    with contextlib.ExitStack() as stack:
        bar = call.progress
        if isinstance(bar, bool):  # the bar's length: the most samples the run may draw
            limit = (pair_limit if pairs
                     else sample_limit(n, call.endpoints or call.edges, epsilon, delta,
                                       values=None if per_edge is None else per_edge[0]))
            bar = stack.enter_context(source_progress(limit + pilot_size(limit, first), bar,
                                                      call.engine))
        if pairs:
            try:
                values, facts = approximate_pairs(
                    call, epsilon, delta, seed,
                    lambda seed64, start, count: sample(seed64, start, count, bar),
                    first=first, rule=rule, goal=goal)
                return values, dict(facts_of(), **facts)
            except ArithmeticError as error:  # path counts past float64: sample sources
                overflow = str(error)
            except ExactCheaper as why:  # the exact rule's verdict: every source, exact
                overflow = exact = why.reason
                piloted = why.pilot_samples
            if bar is not None:
                bar.reset()
        if exact is None:
            schedule = SourceSampling(call, epsilon, delta, seed, edges=per_edge, goal=goal,
                                      plan=plan)
            try:
                _, facts = run_schedule(call.problem, call.engine, schedule, progress=bar,
                                        client=call.client)
                values, facts = schedule.values, dict(facts, **schedule.facts)
            except ExactCheaper as why:  # before the run's own sources: as bc() sweeps
                exact, piloted = why.reason, why.pilot_samples
        if exact is not None:  # exact BC as bc() computes it, trees and chains folded
            raw, facts = raw_sums(call, plan)
            values = raw * scale_of(n, call.endpoints)
            facts = dict(facts, samples=n, pilot_samples=piloted, bound=0.0,
                         stopped_by="exact", exact_because=exact, checkpoints=[n],
                         epsilon=epsilon, delta=delta, sampler="sources")
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

    def __init__(self, call, epsilon: float, delta: float, seed, *, edges=None, goal=None,
                 keep=None, plan=None):
        self.call, self.epsilon, self.delta, self.seed, self.edges = (call, epsilon, delta,
                                                                      seed, edges)
        self.goal, self.keep, self.plan = goal, keep, plan
        n = call.graph.n
        limit = sample_limit(n, call.endpoints or edges is not None, epsilon, delta,
                             values=None if edges is None else edges[0])
        self.most = limit + pilot_size(limit)
        self.values = self.facts = None

    def drive(self, sweep) -> None:
        self.values, self.facts = approximate_raw(self.call, self.epsilon, self.delta,
                                                  self.seed, sweep, edges=self.edges,
                                                  goal=self.goal, keep=self.keep,
                                                  plan=self.plan)


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
        from turbobc.engines.cpu.threads import compute_threads
        from turbobc.engines.cpu.pair_sampler import CpuPairSampler

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
