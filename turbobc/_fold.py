"""Exact BC through the reductions: fold the graph on the caller's side, sweep the core
through the one loop, expand the sums back.

For exact BC of an undirected graph (every vertex a source and a target) the sweeps need not
run over the graph as it is::

    call ──fold trees (turbobc/_reduce.py)──► core, each vertex weighted by what it stands for
         ──fold chains (turbobc/_chains.py)──► the chains' inner sources folded into their ends
         ──the one loop (turbobc/_run.py), on any executor──► Partial of the core's sweeps
         ──expand──► raw sums of the whole graph (closed-form terms of what was folded)

The folding and the expansion run here, once, above the loop; the loop sweeps the core's
problem as it sweeps any other, here or on Dask's workers, which receive the core, its
weights and the chain plan with the problem (scattered once). Each run of the plan, a whole
call here or one chunk on a worker, returns its chains' closed-form credit inside its
:class:`~turbobc.engines.protocol.Partial` (the vertices' ``ChainFolding.credit``, or for
edge BC the chains' edges, ``ChainFolding.edge_credit``; ``ChainFolding.batches``), so the
chunks' partials add up to the folded sums as the local run's do, and nothing is kept on a
worker's copy.

:func:`raw_sums` (vertex BC) and :func:`raw_edge_sums` (edge BC) are what
:func:`turbobc._api.run_bc` and :func:`turbobc._api.run_edge_bc` call for every exact run;
where nothing folds (sampled or given sources, targets, a directed graph, too little to
fold) they sweep the call's sources through the loop as they are.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np

from turbobc._chains import ChainFolding, find_chains
from turbobc._progress import ForwardedProgress, source_progress
from turbobc._reduce import FoldedTrees, component_sizes, endpoint_terms, fold_trees
from turbobc._run import run_schedule
from turbobc._tuning import current as current_tuning
from turbobc.engines import engine_named
from turbobc.engines.protocol import SlotWeightsDeclined

__all__ = ["ExactPlan", "raw_edge_sums", "raw_sums"]

CHUNKED_PARTS = 16
"""The chunks a Dask run's source order is chosen for (``ChainFolding.chunked_sources``):
a few per worker of a small cluster."""


class ExactPlan:
    """What the exact run of vertex BC of ``call`` folds, worked out once when first asked:
    the exact rule (turbobc/_exact_rule.py) counts the sources it would sweep
    (:meth:`swept_sources`), and :func:`raw_sums` then sweeps with the same folding.

    Attributes
    ----------
    floor : int
        Sources no folding removes, known without folding: n − 2 d, d the vertices of at
        most two neighbours (a folded chain's inner vertices have two; a tree hanging off the
        graph has at least as many leaves as vertices of three neighbours or more), n where
        nothing folds (a directed graph, some sources or targets given).
    """

    def __init__(self, call):
        self.call, self._folding = call, None
        graph = call.graph
        if graph.directed or not _every_source(call):
            self.floor = graph.n
        else:
            few = int(np.count_nonzero(graph.out_degree <= 2))
            self.floor = max(1, graph.n - 2 * few)

    def folding(self):
        """:func:`_folding` of the call, vertex BC (computed once)."""
        if self._folding is None:
            self._folding = _folding(self.call, endpoints=False)
        return self._folding

    def swept_sources(self) -> int:
        """The sources the exact run sweeps: the core's, less the chains' folded sources."""
        _, core, _, chains = self.folding()
        return int(core.n if chains is None else len(chains.sources))


def raw_sums(call, plan: ExactPlan | None = None) -> tuple[np.ndarray, dict]:
    """The raw sums of the call's sources and the facts of the run: over the graph as it
    is, or, for exact BC of an undirected graph, over the core left once the trees hanging
    off it are folded (turbobc/_reduce.py) and with the sources inside its chains folded into
    the chains' ends (turbobc/_chains.py), expanded back.

    ``call``: the validated call (turbobc/_validation.py); ``plan``: its folding when already
    worked out (:class:`ExactPlan`)."""
    folded, core, problem, chains = (_folding(call, endpoints=False) if plan is None
                                     else plan.folding())
    if folded is None and chains is None:
        total, facts = _unfolded(call)
        return total.vertex, facts
    # the call's problem on the core: every vertex weighted by what it stands for; the
    # endpoint terms come back in closed form (FoldedTrees.expand)
    with _folded_progress(call, core) as bar:
        core_raw, facts = _sweep_core(call, problem, chains, bar)
    if folded is None:
        facts = dict(facts, folded=0)
        raw = core_raw
        if call.endpoints:
            raw = raw + endpoint_terms(component_sizes(call.graph))
        return raw, facts
    return folded.expand(core_raw, endpoints=call.endpoints), _folded_facts(facts, folded)


def raw_edge_sums(call) -> tuple[np.ndarray, dict]:
    """The raw edge sums of the call's sources, one per stored entry of the graph, and the
    facts of the run: over the graph as it is, or, for exact BC of an undirected graph, over
    the core left once its trees are folded and with the sources inside its chains folded into
    the chains' ends (their edge sums with per-slot target weights, the chains' own edges in
    closed form: ``ChainFolding.edge_credit``), expanded back (``FoldedTrees.expand_edges``)."""
    folded, core, problem, chains = _folding(call)
    if folded is None and chains is None:
        total, facts = _unfolded(call)
        return total.edge, facts
    with _folded_progress(call, core) as bar:
        core_edge, facts = _sweep_core(call, problem, chains, bar)
    if folded is None:
        return core_edge, dict(facts, folded=0)
    return folded.expand_edges(core_edge, call.graph.pattern), _folded_facts(facts, folded)


def _folding(call, **changes):
    """What an exact run folds: the trees (turbobc/_reduce.py, or None), the core left, the
    call's problem on the core (every vertex weighted by what it stands for, plus ``changes``)
    and the chains' folding (turbobc/_chains.py, or None); nothing folds unless every vertex
    is a source and a target."""
    every_source = _every_source(call)
    folded = _tree_folding(call) if every_source else None
    core = call.graph if folded is None else folded.core
    weight = None if folded is None else folded.weight
    problem = dataclasses.replace(call.problem, graph=core, target_weight=weight,
                                  source_weight=weight, **changes)
    chains = _chain_folding(call, problem) if every_source else None
    return folded, core, problem, chains


def _unfolded(call):
    """The call's sources swept through the loop on the graph as it is: the total and the
    facts (``folded=0``)."""
    total, facts = run_schedule(call.problem, call.engine, [call.sources],
                                progress=call.progress, client=call.client)
    return total, dict(facts, folded=0)


@contextlib.contextmanager
def _folded_progress(call, core):
    """The progress of a folded run, for the sweeps of ``core``: it counts every vertex of
    the graph, the swept ones as they go and the folded ones at the end; a MemoryError
    names the core."""
    with contextlib.ExitStack() as stack:
        bar = call.progress
        if isinstance(bar, bool):
            bar = stack.enter_context(source_progress(call.graph.n, bar, call.engine))
        try:
            yield bar
        except MemoryError as exc:
            raise MemoryError(f"{exc} (that is the core left after folding the "
                              f"{call.graph.n - core.n} vertices of the trees hanging off "
                              f"this graph of n={call.graph.n})") from None
        if call.graph.n > core.n:
            bar.update(call.graph.n - core.n)


def _folded_facts(facts: dict, folded: FoldedTrees) -> dict:
    """The facts of a run over the core, with what the folding of its trees did."""
    return dict(facts, folded=folded.folded, core_vertices=folded.core.n,
                fold_seconds=folded.seconds)


def _every_source(call) -> bool:
    """Whether the call is exact BC with every vertex a source and a target: what the exact
    reductions (turbobc/_reduce.py, turbobc/_chains.py) fold."""
    return not call.sampled and call.targets is None and len(call.sources) == call.graph.n


def _tree_folding(call) -> FoldedTrees | None:
    """The trees hanging off the call's graph folded (turbobc/_reduce.py), or None: off
    (``Tuning.fold_trees``), a directed graph, fewer folded vertices than
    ``Tuning.fold_min_share`` of them, or a weighted graph whose sums of lengths are not
    exact (``Graph.length_scale``)."""
    knobs = current_tuning()
    if not knobs.fold_trees or call.graph.directed:
        return None
    # a weighted graph only when every path sum is exact (Graph.length_scale): the
    # reductions move sources along paths, networkx sums lengths from the source
    if call.graph.weighted and call.graph.length_scale is None:
        return None
    # too little to fold is not worth what the weighted sweeps cost: then only the
    # peeling runs (ego-Facebook, 75 of 4,039 vertices: 1 ms instead of 8)
    return fold_trees(call.graph,
                      min_folded=max(1, math.ceil(knobs.fold_min_share * call.graph.n)))


def _chain_folding(call, problem):
    """The folding of the sources inside the core's chains (turbobc/_chains.py), or None:
    off (``Tuning.fold_chains``; ``"auto"``: on the GPU engine, for cores of at least
    ``Tuning.chain_min_vertices``), a directed graph, a weighted one whose sums of lengths
    are not exact (``Graph.length_scale``), an engine that does not serve per-slot target
    weights, or fewer folded sources than ``Tuning.chain_min_share`` of the vertices. Vertex
    and edge BC alike: with ``problem.edges`` the plan credits the chains' edges
    (``ChainFolding.edge_credit``).

    With a Dask client the same rules hold for the workers' engine: ``"auto"`` folds when
    the call names the GPU engine, or ``"auto"`` on workers that all have a usable GPU; a
    worker whose engine declines the plan when it opens raises ``SlotWeightsDeclined``, and
    the core is swept unfolded (:func:`_sweep_core`)."""
    knobs = current_tuning()
    graph = problem.graph
    if knobs.fold_chains not in (True, False, "auto"):
        raise ValueError(f"Tuning.fold_chains must be True, False or 'auto'; got "
                         f"{knobs.fold_chains!r}")
    if not knobs.fold_chains or graph.directed:
        return None
    if knobs.fold_chains == "auto" and (graph.n < knobs.chain_min_vertices
                                        or not _sweeps_on_gpus(call)):
        return None  # (the size first: asking a cluster's workers is a round trip)
    if np.count_nonzero(graph.out_degree == 2) < knobs.chain_min_share * call.graph.n:
        return None
    if graph.weighted and graph.length_scale is None:
        return None
    chains = find_chains(graph)
    chains = chains.select(chains.inner_count + 1 <= knobs.chain_max_length)
    if chains.inner.size < max(1, knobs.chain_min_share * call.graph.n):
        return None
    weight = problem.target_weight
    plan = ChainFolding(graph, np.ones(graph.n) if weight is None else weight, chains,
                        edges=problem.edges)
    served = dataclasses.replace(problem, slot_weights=plan, source_weight=None)
    # with a client, an engine this machine may not have ("gpu", "auto") is asked on the
    # workers, as they open their sweepers
    here = call.client is None or call.engine not in ("gpu", "auto")
    if here and engine_named(call.engine).can_serve(served) is not None:
        return None
    return plan


def _sweeps_on_gpus(call) -> bool:
    """Whether the call's sweeps run on the GPU engine: named, or with a Dask client
    ``"auto"`` on workers that all have a usable GPU (turbobc/_dask.py,
    :func:`~turbobc._dask.workers_have_gpus`)."""
    if call.engine == "gpu":
        return True
    if call.client is None or call.engine != "auto":
        return False
    from turbobc._dask import workers_have_gpus

    return workers_have_gpus(call.client)


def _sweep_core(call, problem, chains, bar) -> tuple[np.ndarray, dict]:
    """Raw sums of the core's every vertex as a source, through the loop (vertex sums, or
    with ``problem.edges`` edge sums): swept, or, with ``chains``, the chains' ends swept with
    per-slot target weights plus the chains' closed-form terms (and swept as they are if the
    engine declines midway)."""
    core = problem.graph
    if chains is not None:
        served = dataclasses.replace(problem, slot_weights=chains, source_weight=None)
        shown_before = getattr(bar, "n", None)  # a tqdm bar's count
        # a caller's own progress object: counted, so that a declined attempt's sources are
        # not reported twice
        attempt = bar if shown_before is not None else ForwardedProgress(bar)
        # a Dask run cuts the sources into consecutive chunks: in an order that keeps most
        # chains' two ends in one chunk (ChainFolding.chunked_sources)
        sources = (chains.sources if call.client is None
                   else chains.chunked_sources(CHUNKED_PARTS))
        try:
            total, facts = run_schedule(served, call.engine, [sources],
                                        progress=attempt, client=call.client)
        except SlotWeightsDeclined:
            if shown_before is not None:  # the unfolded sweep counts every source again
                bar.n = shown_before
                bar.refresh()
            else:
                bar = ForwardedProgress(bar, already=attempt.done)
        else:
            bar.update(chains.folded)
            # the chains' closed-form credit came back inside each run's partial
            # (ChainFolding.batches): to the vertex sums, or to the edge sums of the chains'
            # edges; the seconds of the target weights and credits are this process's, or,
            # on Dask, the workers' summed over the chunks
            seconds = facts.pop("slot_seconds", None) or chains.seconds
            return (total.edge if problem.edges else total.vertex), dict(
                facts, chain_folded=chains.folded, chains=chains.chains.count,
                chain_seconds={"plan": chains.seconds["plan"],
                               "target_weights": seconds["target_weights"],
                               "credits": seconds["credits"]})
    total, facts = run_schedule(problem, call.engine, [np.arange(core.n)], progress=bar,
                                client=call.client)
    return (total.edge if problem.edges else total.vertex), facts
