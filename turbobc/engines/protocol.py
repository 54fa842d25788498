"""The engine protocol: what to compute (:class:`Problem`), who can (:class:`Engine`), the
resident worker (:class:`Sweeper`) and what it returns (:class:`Partial`).

Every engine answers the same three calls::

    reason = engine.can_serve(problem)      # None, or why not (as networkx's can_run)
    with engine.open(problem) as sweeper:   # the graph stays with the sweeper
        part = sweeper.run(sources)         # raw sums of these sources: a Partial
    sweeper.facts                           # kernel, batch, depth, peak bytes, seconds ...

Partials of disjoint source sets add with ``+`` (the reduce of a sampling schedule or of a
Dask map), and :func:`turbobc._rescale.rescale` turns the total into networkx's numbers. The
loop that drives this is :func:`turbobc._run.run_schedule`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from turbobc._graph import Graph

__all__ = ["Problem", "Partial", "Sweeper", "Engine", "SlotCounts", "SlotWeightsDeclined",
           "slot_weights_reason"]


class SlotWeightsDeclined(RuntimeError):
    """An engine met, mid-run, something its per-slot target weights cannot serve (path
    counts that need the exponent-per-vertex sweep): the caller runs the problem without
    them."""


@dataclass(frozen=True)
class Problem:
    """What to compute, independent of the engine.

    Attributes
    ----------
    graph : Graph
        The validated pattern and its direction, and for weighted BC its edge lengths
        (``graph.lengths``; :attr:`weighted`). An engine that counts shortest paths in hops
        only must decline a weighted problem in :meth:`Engine.can_serve`.
    endpoints : bool
        Add networkx's endpoint terms.
    kernel : str
        The GPU kernel, or ``"auto"``.
    memory_limit : int or None
        Bytes the run may use (host memory on the CPU engine, device memory on the GPU).
    target_weight : numpy.ndarray or None
        τ, float64 of length n: the weight of each vertex as a path target in the accumulate
        step ``δ(v) = Σ_w σ(v)/σ(w) · (τ(w) + δ(w))`` (spmv/kernels/accumulate.cuh). None:
        every vertex weighs 1 (all-pairs BC). A subset of targets T is ``τ = [w ∈ T]``.
    source_weight : numpy.ndarray or None
        ω, float64 of length n: every term a source s adds (its δ and endpoint terms) counts
        ω(s) times. None: once. An exact graph reduction passes the vertex counts it folds.
    edges : bool
        Also sum each stored edge's share of the dependencies (edge BC): ``Partial.edge``.
    split_non_targets : bool
        networkx's edge subset BC (with ``edges`` and τ in {0, 1}): a non-target's dependency
        goes to its shortest-path parents in equal shares, δ(w) / |P(w)|, instead of in
        proportion to their path counts (CPU engine).
    slot_weights : turbobc._chains.ChainFolding or None
        Target weights that depend on the source (vertex or edge sums without endpoints;
        weighted only with exact sums of lengths, ``Graph.length_scale``): the engine
        sweeps the batches it says for the sources :meth:`Sweeper.run` is given (a part of
        the plan's sources: :meth:`~turbobc._chains.ChainFolding.batches`), with τ of slot
        b = own(b) · target_weight, plus what it adds between the forward and the backward
        sweep, and adds the plan's closed-form credit of the run to the raw sums
        (``credit`` to the vertex sums, ``edge_credit()`` to the edge sums); ω is unused.
        With ``edges`` the edge sums take the same τ: each DAG edge v -> w of slot b's sweep
        gets σ(v)/σ(w) · (τ_b(w) + δ_b(w)). So the run's :class:`Partial` holds every source
        it stands for, and the partials of disjoint parts add up. An engine that cannot must
        decline in
        :meth:`Engine.can_serve`.
    """

    graph: Graph
    endpoints: bool = False
    kernel: str = "auto"
    memory_limit: int | None = None
    target_weight: np.ndarray | None = None
    source_weight: np.ndarray | None = None
    edges: bool = False
    split_non_targets: bool = False
    slot_weights: object | None = None

    @property
    def weighted(self) -> bool:
        """Whether shortest paths are measured by the edge lengths ``graph.lengths`` (weighted
        BC) rather than in hops."""
        return self.graph.lengths is not None


@dataclass
class Partial:
    """Raw (unscaled) sums over a set of sources; ``a + b`` is the sums over both sets.

    Attributes
    ----------
    vertex : numpy.ndarray
        float64, length n: ``Σ_s δ_s(v)`` over the sources (plus endpoint terms).
    sources : int
        How many sources were swept.
    edge : numpy.ndarray or None
        Per stored edge sums, aligned with ``pattern.indices`` (edge BC; not yet computed).
    vertex_sq : numpy.ndarray or None
        ``Σ_s δ_s(v)²`` (adaptive sampling; not yet computed).
    """

    vertex: np.ndarray
    sources: int
    edge: np.ndarray | None = None
    vertex_sq: np.ndarray | None = None

    @classmethod
    def zeros(cls, n: int) -> "Partial":
        """The sums over no source."""
        return cls(vertex=np.zeros(n, dtype=np.float64), sources=0)

    def __add__(self, other: "Partial") -> "Partial":
        def both(a, b):
            if a is None and b is None:
                return None
            if a is None or b is None:
                raise ValueError("cannot add a Partial with per-edge or squared sums to one "
                                 "without them")
            return a + b

        return Partial(vertex=self.vertex + other.vertex, sources=self.sources + other.sources,
                       edge=both(self.edge, other.edge),
                       vertex_sq=both(self.vertex_sq, other.vertex_sq))


class Sweeper:
    """An engine opened on one problem: keeps what it built (the graph in its own layout)
    across :meth:`run` calls until :meth:`close`.

    Attributes
    ----------
    problem : Problem
    facts : dict
        What the runs did (kernel, family, batch size, batches, depth, peak bytes, seconds),
        updated by each :meth:`run`.
    """

    def __init__(self, problem: Problem):
        self.problem = problem
        self.facts: dict = {}

    def run(self, sources: np.ndarray, progress=None) -> Partial:
        """Raw sums of ``sources`` (distinct int64 vertex ids); advances ``progress`` (a tqdm
        bar, or None) by the sources finished."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what :meth:`run` kept (device memory, matrices)."""

    def __enter__(self) -> "Sweeper":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SlotCounts:
    """What an engine shows of a batch between its forward and backward sweeps, for per-slot
    target weights (:attr:`Problem.slot_weights`): the levels and path counts of chosen slots,
    and a way to add to their target weights. Engines subclass it over their own layout
    (arrays of ``xp``: NumPy or CuPy); the plan (turbobc/_chains.py) reads and writes the
    batch through it only.

    Attributes
    ----------
    xp : module
        The array module of the batch's arrays.
    n : int
        Vertices.
    chunk_entries : int
        About how many (slot, vertex) entries one call should ask for at once.
    tau : array of xp or None
        The batch's target weights as one (slots, n) block, where an engine keeps them so:
        then the default :meth:`add_target_weights` and :meth:`add_target_entries` add to it.
    """

    xp = np
    n = 0
    chunk_entries = 1 << 22
    tau = None

    def levels(self, lanes) -> "xp.ndarray":
        """(len(lanes), n) int64: the hop distance from each slot's source, -1 unreached."""
        raise NotImplementedError

    def counts(self, lanes) -> tuple:
        """σ̂ (len(lanes), n) float64 and the exponent (same shape, int64, or None when no
        level of the batch was scaled): σ = σ̂ · 2^exponent."""
        raise NotImplementedError

    def add_target_weights(self, lanes, values) -> None:
        """τ of slot ``lanes[p]`` += ``values[p]`` (a row of n); lanes may repeat."""
        if self.tau is None:
            raise NotImplementedError("no (slots, n) block of target weights: the engine adds")
        self.xp.add.at(self.tau, self.xp.asarray(lanes), values)

    def add_target_entries(self, lanes, vertices, values) -> None:
        """τ of slot ``lanes[p]`` at vertex ``vertices[p]`` += ``values[p]`` (host arrays)."""
        if self.tau is None:
            raise NotImplementedError("no (slots, n) block of target weights: the engine adds")
        xp = self.xp
        xp.add.at(self.tau, (xp.asarray(lanes), xp.asarray(vertices)), xp.asarray(values))

    def host(self, a) -> np.ndarray:
        """``a``, an array of :attr:`xp`, as a NumPy array."""
        return a if self.xp is np else self.xp.asnumpy(a)

    def at(self, lanes, vertices) -> tuple[np.ndarray, np.ndarray]:
        """The level and the count σ (exponent applied) of slot ``lanes[p]`` at vertex
        ``vertices[p]``, as host arrays."""
        xp = self.xp
        rows = xp.arange(len(lanes))
        where = xp.asarray(vertices)
        level = self.levels(lanes)[rows, where]
        sigma, exponent = self.counts(lanes)
        sigma = sigma[rows, where]
        if exponent is not None:
            sigma = xp.ldexp(sigma, exponent[rows, where].astype(np.int32))
        return self.host(level), self.host(sigma)

    def chain_terms(self, plan, rows) -> tuple:
        """Add each chain of ``rows`` (a ``ChainRows``) its terms to the target weights of
        both its ends' slots, and return the histograms over h of the targets outside each
        chain, per chain ``rows.hist_off[p] + h``: the sum of r(t), and of r(t) times the tie
        share of a (turbobc/_chains.py, module docstring). By default the plan's array code
        over :meth:`levels`, :meth:`counts` and :meth:`add_target_weights`
        (``ChainFolding.array_chain_terms``); an engine may override it with a kernel."""
        return plan.array_chain_terms(self, rows)


class Engine:
    """One way of computing: the CPU (python-graphblas) or the GPU (CuPy kernels)."""

    name: str = ""

    def can_serve(self, problem: Problem) -> str | None:
        """None when this engine can compute ``problem`` here, else the reason."""
        raise NotImplementedError

    def open(self, problem: Problem) -> Sweeper:
        """A sweeper for ``problem``."""
        raise NotImplementedError


def slot_weights_reason(problem: Problem) -> str | None:
    """Why per-slot target weights (``Problem.slot_weights``) cannot serve ``problem``, or
    None: they serve vertex and edge sums without endpoints (nor networkx's edge subset rule),
    weighted only when the sums of lengths are exact (what every engine that takes them checks
    first)."""
    if problem.slot_weights is None:
        return None
    if problem.endpoints or problem.split_non_targets:
        return ("per-slot target weights serve vertex and edge sums without endpoints or "
                "networkx's edge subset rule")
    if problem.weighted and problem.graph.length_scale is None:
        return ("per-slot target weights need exact sums of lengths (integer lengths, for "
                "instance: Graph.length_scale)")
    return None
