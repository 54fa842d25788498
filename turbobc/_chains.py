"""Exact chain folding: the sources inside chains of degree-2 vertices are folded into the
vertices that end the chains, so exact BC sweeps from far fewer sources.

On road networks most vertices lie on *chains*: paths a, x_1, ..., x_k, b whose inner
vertices have degree 2 (road-luxembourg-osm: 83,657 of the 93,000 vertices left once its
trees are folded). A source x_i inside a chain reaches the rest of the graph through a (after
i edges) or through b (after L − i, where L = k + 1 is the chain's length), so its sweep is a
share of a's sweep plus a share of b's. Summed over the chain's sources (each weighing
r(x_i), the vertices it stands for after folding trees):

- a target t outside the chain, with Δ(t) = d(a, t) − d(b, t), is reached by x_i through a
  when i + d(a, t) < L − i + d(b, t), i.e. 2i < h(t) = L − Δ(t); through b when 2i > h(t);
  through both when 2i = h(t), where the i-th source's paths split σ(a, t) : σ(b, t). So a's
  sweep carries the chain's sources with a **target weight that depends on the source**,

      τ_a(t) = r(t) · ( Σ_{2i < h(t)} r(x_i) + [2i* = h(t)] r(x_i*) σ(a,t) / (σ(a,t) + σ(b,t)) ),

  and b's sweep the rest, τ_b(t) = r(t) Σ_{2i > h(t)} r(x_i) + the other share of the tie.
  The engines take such a τ per *slot* (source of a batch): :class:`ChainFolding` computes it
  between the forward and the backward sweep of each batch, from the levels and counts of
  both ends of every chain (both ends are slots of the same batch; an end that is not a
  source of that batch joins it as a *helper* slot with no weight of its own).
- The chain's own vertices, and a and b themselves (a sweep never credits its own source),
  get what the chain's sources add to them in closed form: per chain, the targets outside it
  fall into 2L + 1 classes by h(t) (a histogram of r(t), and of r(t)'s tie shares, over h),
  and each (source, class) credits the inner vertices between the source and the end it
  leaves by.
- Pairs inside the chain (a source x_i and a target x_j, a or b) take the inner path, of
  |i − j| edges, or go round through a and b, of L + d(a, b) − |i − j| edges (only when
  d(a, b) < L), or both on a tie (1 : σ(a, b) paths). Going round, the vertices outside the
  chain on the shortest a-b paths get their share through a's sweep: τ_a(b) grows by the
  pair's weight.

A *loop* (a = b: a cycle through one vertex of another degree) is the same with d(a, b) = 0.

Edge BC folds the same way (docs/algorithm.md, "Folding chains", edge sums): the dependency of a
pair (x_i, t) on an edge outside the chain splits between a's and b's paths as its dependency on
a vertex does, so the ends' sweeps carry it when their edge sums use the slot's τ (every
engine's accumulate step hands a DAG edge v -> w the term σ(v)/σ(w) · (τ(w) + δ(w)) with the
τ it sweeps with); the chain's own edges get closed forms, edge j (positions j − 1, j) what
vertex j − 1 gets of the paths through a (crossed toward a) and what vertex j gets of those
through b (crossed toward b), and the in-chain pairs the edges between them or round them.

Weighted graphs: i and L above become lengths. x_i lies at p_i (the length of the chain from
a to it) and the chain is λ long; a target outside is reached through a when 2 p_i < h(t) =
λ − Δ(t), on a tie when 2 p_i = h(t). The classes stay the 2L + 1 of the hop case, in order:
class 2j holds h = 2 p_j, class 2j + 1 the h strictly between 2 p_j and 2 p_(j+1) (p_0 = 0,
p_(L) = λ), so that in hops the class is h itself and everything after the histograms is
unchanged (:meth:`ChainFolding.classes`). In-chain pairs compare |p_i − p_j| with
λ + d(a, b) − |p_i − p_j|. The comparisons are exact only when the sums of lengths are
(``Graph.length_scale``; positions are kept as integers in its units), as is every
reduction of a weighted graph.

Everything is exact for undirected graphs: the engines' sweeps are unchanged, only their
target weights differ. Chains longer than ``max_length`` edges stay unfolded (their in-chain
pairs cost O(L²) here); so does everything on a directed graph, or on a weighted one whose
sums of lengths are not exact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from turbobc._chain_paths import ChainRows, Chains, chain_positions, find_chains
from turbobc._graph import Graph, entry_positions
from turbobc.engines.protocol import SlotCounts, SlotWeightsDeclined

__all__ = ["Chains", "find_chains", "ChainFolding", "ChainRows"]


@dataclass
class _Batch:
    slots: np.ndarray       # source vertex of each slot
    own: np.ndarray         # own weight of each slot: r(source), or 0 for a helper
    chains: np.ndarray      # the chains this batch carries
    lane_a: np.ndarray      # slot of each chain's first end
    lane_b: np.ndarray      # slot of each chain's last end


class ChainFolding:
    """The per-slot target weights that fold the sources inside ``chains`` into the chains'
    ends (module docstring), for the sweeps of ``graph`` from :attr:`sources` with target
    weight ``r`` (``Problem.target_weight``); :attr:`credit` collects, as the batches of a
    run are swept, what the folded sources add to the chains' own vertices and ends, or with
    ``edges`` (edge BC) what they add to the chains' own edges (:meth:`edge_credit`).

    An engine serving it (``Problem.slot_weights``) calls :meth:`batches` once per run with
    the run's sources and how many slots a batch holds, then per batch sets τ = own ⊗ r
    (:meth:`own_weights`), sweeps forward, calls :meth:`add_target_weights`, sweeps backward
    with that τ (and ω = 1) and runs the callable it returned; last, it adds :attr:`credit`
    to the run's raw vertex sums, and with ``edges`` :meth:`edge_credit` to its edge sums.
    So a run's :class:`~turbobc.engines.protocol.Partial` is whole:
    the sums of its sources and of the folded sources they carry. The runs of disjoint parts
    of :attr:`sources` (the chunks of a Dask run, turbobc/_dask.py) carry every chain once
    between them (:meth:`batches`), and their partials add up to the run of all.

    Attributes
    ----------
    sources : numpy.ndarray
        The vertices swept: every vertex not inside a folded chain.
    folded : int
        The sources folded (the chains' inner vertices).
    credit : numpy.ndarray
        float64 per vertex: the raw sums of the folded sources carried by the run in
        progress (since the last :meth:`batches`) that its sweeps do not carry (zero with
        ``edges``: edge BC has no vertex sums to give).
    edges : bool
        Edge BC: the credits go to the chains' edges (:meth:`edge_credit`), not their
        vertices.
    r, chain_of, prefix : numpy.ndarray
        What an engine's :meth:`SlotCounts.chain_terms` reads: r per vertex, the chain of
        each vertex (-1: none), and each chain's prefix sums P(0..k) of r over its inner
        vertices (from ``ChainRows.prefix_off``).
    class_at : numpy.ndarray
        int64, every chain's doubled positions after an offset of its own
        (:meth:`class_rows`): the lookup of a target's class (:meth:`classes`).
    scale : float or None
        The units of the positions: ``Graph.length_scale`` of a weighted graph, None in hops.
    seconds : dict
        Host seconds of the plan (its batches included), and of the target weights and the
        credits of the run in progress.
    """

    def __init__(self, graph: Graph, r: np.ndarray, chains: Chains, *, edges: bool = False):
        began = time.perf_counter()
        self.graph, self.r, self.chains = graph, np.asarray(r, dtype=np.float64), chains
        self.edges = edges
        n = graph.n
        self.chain_of = np.full(n, -1, dtype=np.int64)
        k = chains.inner_count
        self.chain_of[chains.inner] = np.repeat(np.arange(chains.count), k)
        self.sources = np.flatnonzero(self.chain_of < 0)
        self.folded = int(chains.inner.size)
        self.credit = np.zeros(n, dtype=np.float64)
        self.seconds = {"plan": 0.0, "target_weights": 0.0, "credits": 0.0}
        self._k, self._L = k, k + 1
        self._loop = chains.first == chains.last
        # positions 0..L of each chain: a, x_1 .. x_k, b (a again for a loop)
        self._pos_off = np.zeros(chains.count + 1, dtype=np.int64)
        np.cumsum(self._L + 1, out=self._pos_off[1:])
        vertex_at = np.empty(self._pos_off[-1], dtype=np.int64)
        vertex_at[self._pos_off[:-1]] = chains.first
        vertex_at[self._pos_off[1:] - 1] = chains.last
        inner_pos = (np.repeat(self._pos_off[:-1] + 1 - chains.offsets[:-1], k)
                     + np.arange(chains.inner.size))
        vertex_at[inner_pos] = chains.inner
        self._vertex_at = vertex_at
        # edge BC: the credit of edge j (positions j − 1, j) of chain c at pos_off[c] + j, each
        # way: toward b (forward, the entry x_{j−1} -> x_j) and toward a (backward)
        self._edge_forward = np.zeros(vertex_at.size if edges else 0, dtype=np.float64)
        self._edge_backward = np.zeros(vertex_at.size if edges else 0, dtype=np.float64)
        self._position, self.scale = chain_positions(graph, vertex_at, self._pos_off, self._L)
        self._span = self._position[self._pos_off[1:] - 1]       # λ per chain (L in hops)
        # class lookup (classes()): chain c's doubled positions, after every earlier chain's
        # 2 λ + 1 possible values of h
        self._class_base = np.zeros(chains.count + 1, dtype=np.int64)
        np.cumsum(2 * self._span + 1, out=self._class_base[1:])
        self.class_at = (np.repeat(self._class_base[:-1], self._L + 1)
                         + 2 * self._position)
        self._uploaded: dict = {}
        self._r_at = self.r[vertex_at]
        self._r_at[self._pos_off[1:][self._loop] - 1] = 0.0  # a loop's b is a, counted at 0
        # P(m) = Σ_{i ≤ m} r(x_i), m = 0..k, per chain at prefix_off[c] + m
        self._prefix_off = np.zeros(chains.count + 1, dtype=np.int64)
        np.cumsum(k + 1, out=self._prefix_off[1:])
        prefix = np.zeros(self._prefix_off[-1], dtype=np.float64)
        inner_r = self.r[chains.inner]
        running = np.cumsum(inner_r)
        base = np.concatenate([[0.0], running])[chains.offsets[:-1]]
        prefix[inner_pos - self._pos_off[:-1].repeat(k) + self._prefix_off[:-1].repeat(k)] = \
            running - np.repeat(base, k)
        self.prefix = prefix
        self._batches: list[_Batch] = []
        self.seconds["plan"] = time.perf_counter() - began

    def __getstate__(self) -> dict:
        """What a copy of the plan needs (a Dask worker's, turbobc/_dask.py): not the run
        in progress (its batches and credits) nor the device copies."""
        state = dict(self.__dict__)
        state.update(_uploaded={}, _batches=[], credit=None, _edge_forward=None,
                     _edge_backward=None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.credit = np.zeros(self.graph.n, dtype=np.float64)
        size = self._vertex_at.size if self.edges else 0
        self._edge_forward = np.zeros(size, dtype=np.float64)
        self._edge_backward = np.zeros(size, dtype=np.float64)

    # ---- positions ---------------------------------------------------------------------

    def scaled(self, xp, distance):
        """Distances (hops, or lengths for a weighted graph) as int64 in the units of the
        chains' positions (times :attr:`scale`; exact: module docstring)."""
        if self.scale is None:
            return distance.astype(np.int64)
        return xp.rint(distance * self.scale).astype(np.int64)

    def classes(self, xp, rows: "ChainRows", level_a, level_b):
        """The class 0 .. 2L (module docstring) of every target of the ``rows`` chains
        (``(chains, n)`` arrays of ``xp``: the distances from both ends' slots); in hops
        h = L − (level_a − level_b) itself. Entries of unreached targets are in range but
        meaningless."""
        span, base, first = (xp.asarray(a)[:, None] for a in self.class_rows(rows))
        if self.scale is None:
            return span - (level_a - level_b)
        class_at = self.on_device(xp)["class_at"]
        query = base + span - self.scaled(xp, level_a - level_b)
        at = xp.clip(xp.searchsorted(class_at, query, side="right") - 1, first,
                     first + xp.asarray(rows.length)[:, None])
        return 2 * (at - first) + (class_at[at] != query)

    def class_rows(self, rows: "ChainRows") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per chain of ``rows`` (host int64): its length λ in the positions' units, the
        value before its doubled positions and where they start in :attr:`class_at`
        (``class_at[first + j] = base + 2 p_j``)."""
        chains = rows.chains
        return self._span[chains], self._class_base[chains], self._pos_off[chains]

    def on_device(self, xp) -> dict:
        """The plan's arrays every batch reads, as arrays of ``xp`` (uploaded once):
        ``class_at``, ``prefix``, ``chain_of`` and ``r``."""
        if xp not in self._uploaded:
            self._uploaded[xp] = {name: xp.asarray(getattr(self, name))
                                  for name in ("class_at", "prefix", "chain_of", "r")}
        return self._uploaded[xp]

    def forget_device(self) -> None:
        """Let the arrays :meth:`on_device` uploaded go."""
        self._uploaded.clear()

    def chunked_sources(self, parts: int) -> np.ndarray:
        """:attr:`sources` in an order whose cuts into ``parts`` consecutive runs (a Dask
        run's chunks, turbobc/_dask.py) leave few chains with their ends in different runs:
        each such chain costs its run a helper slot (its other end walked again). Vertex
        order, or the reverse Cuthill-McKee order of the graph when that separates fewer
        (road-luxembourg-osm's core in 4 runs: 2,921 of 10,518 chains in vertex order, 273
        in this one; power and road-minnesota keep their files' order)."""
        from scipy.sparse.csgraph import reverse_cuthill_mckee

        order = reverse_cuthill_mckee(sp.csr_array(self.graph.pattern), symmetric_mode=True)
        rank = np.empty(self.graph.n, dtype=np.int64)
        rank[order] = np.arange(order.size)
        banded = self.sources[np.argsort(rank[self.sources], kind="stable")]
        return min((self.sources, banded), key=lambda sources: self._separated(sources, parts))

    def _separated(self, sources: np.ndarray, parts: int) -> int:
        """Chains whose ends fall in different runs of ``sources`` cut into ``parts``."""
        run = np.zeros(self.graph.n, dtype=np.int64)
        for index, part in enumerate(np.array_split(sources, max(1, parts))):
            run[part] = index
        return int(np.count_nonzero(run[self.chains.first] != run[self.chains.last]))

    # ---- batches -------------------------------------------------------------------------

    def batches(self, capacity: int, rank: np.ndarray | None = None,
                sources: np.ndarray | None = None) -> list[np.ndarray]:
        """Start a run: the slots of each batch (source vertices, distinct within a batch, at
        most ``capacity``) over ``sources`` (a part of :attr:`sources`; default all), in
        ``rank`` order (default: the order given), each batch carrying the chains whose
        first-swept end it holds, with their other ends as helpers where they are not sources
        of it; :attr:`credit` (and the chains' edge credits) and the seconds of the target
        weights and credits start from zero.

        A run carries the chains whose first end (``Chains.first``) is among its sources: all
        of them when it sweeps every source, and each chain exactly once over runs of
        disjoint parts of :attr:`sources`, whichever part holds its last end. Raises
        SlotWeightsDeclined when a source and the other ends of its chains do not fit one
        batch."""
        began = time.perf_counter()
        chains = self.chains
        self.credit = np.zeros(self.graph.n, dtype=np.float64)
        self._edge_forward[:] = 0.0
        self._edge_backward[:] = 0.0
        self.seconds.update(target_weights=0.0, credits=0.0)
        if sources is None:
            sources = self.sources
            held = None
        else:
            sources = np.asarray(sources, dtype=np.int64)
            held = np.zeros(self.graph.n, dtype=bool)
            held[sources] = True
            if (self.chain_of[sources] >= 0).any():
                raise ValueError("a run of a chain folding sweeps no source inside a folded "
                                 "chain")
        if rank is not None:
            sources = sources[np.argsort(rank[sources], kind="stable")]
        # (chain, other end) at each end vertex, for the chains this run carries (a loop is
        # listed once); the others' first end is another run's source
        mine_only = (np.arange(chains.count) if held is None
                     else np.flatnonzero(held[chains.first]))
        at_end: dict = {}
        for c, a, b in zip(mine_only.tolist(), chains.first[mine_only].tolist(),
                           chains.last[mine_only].tolist()):
            at_end.setdefault(a, []).append((c, b))
            if b != a:
                at_end.setdefault(b, []).append((c, a))
        carried = bytearray(chains.count)
        self._batches = []
        slots, where, owned, need = [], {}, [], set()
        for s in sources.tolist():
            mine = [(c, o) for c, o in at_end.get(s, ()) if not carried[c]]
            wanted = {o for _, o in mine if o != s and o not in where}
            extra = len(wanted - need) + (0 if s in need else 1)  # slots s would add
            if slots and len(slots) + len(need) + extra > capacity:
                self._close(slots, where, owned, need)
                slots, where, owned, need = [], {}, [], set()
                extra = len(wanted) + 1
            if extra > capacity:
                raise SlotWeightsDeclined(f"a batch of {capacity} slots cannot hold source {s} "
                                          f"and the other ends of its {len(mine)} chains")
            where[s] = len(slots)
            slots.append(s)
            need.discard(s)
            need |= wanted
            for c, _ in mine:
                carried[c] = 1
                owned.append(c)
        if slots:
            self._close(slots, where, owned, need)
        self.seconds["plan"] += time.perf_counter() - began
        return [b.slots for b in self._batches]

    def _close(self, slots, where, owned, need) -> None:
        own = np.concatenate([self.r[np.asarray(slots, dtype=np.int64)],
                              np.zeros(len(need))])
        for helper in sorted(need - where.keys()):
            where[helper] = len(slots)
            slots.append(helper)
        owned = np.asarray(owned, dtype=np.int64)
        chains = self.chains
        lane_a = np.array([where[a] for a in chains.first[owned].tolist()], dtype=np.int64)
        lane_b = np.array([where[b] for b in chains.last[owned].tolist()], dtype=np.int64)
        self._batches.append(_Batch(slots=np.asarray(slots, dtype=np.int64), own=own,
                                    chains=owned, lane_a=lane_a, lane_b=lane_b))

    def own_weights(self, index: int) -> np.ndarray:
        """ω of each slot of batch ``index``: r of its source, 0 for a helper."""
        return self._batches[index].own

    # ---- between the sweeps --------------------------------------------------------------

    def array_chain_terms(self, counts: SlotCounts, rows: "ChainRows") -> tuple:
        """:meth:`SlotCounts.chain_terms <turbobc.engines.protocol.SlotCounts.chain_terms>` as
        array code of ``counts.xp`` over (chains, n) blocks of the batch's levels and counts:
        add each chain's terms to the target weights of both its ends' slots, and return the
        histograms over h of the targets outside each chain (module docstring): per chain
        ``rows.hist_off[p] + h``, the sum of r(t), and of r(t) times the tie share of a."""
        xp, n = counts.xp, counts.n
        dev = xp.asarray
        # per chain and class h = 0 .. 2L (laid out as the histograms): what a target of the
        # class adds, per unit of r(t), to τ_a (P(m), m = #{i : 2i < h}) and to τ_b
        # (P(k) − P(min(h/2, k))), and r(x_{h/2}) where the class ties (even h, 2 ≤ h ≤ 2k)
        L, off = rows.length, rows.hist_off
        owner = np.repeat(np.arange(L.size), 2 * L + 1)
        h = np.arange(off[-1]) - off[:-1][owner]
        k, base = (L - 1)[owner], rows.prefix_off[owner]
        prefix = self.prefix
        star = np.minimum(h // 2, k)
        to_a = prefix[base + np.clip((h + 1) // 2 - 1, 0, k)]
        to_b = prefix[base + k] - prefix[base + star]
        tied = (h % 2 == 0) & (h >= 2) & (h <= 2 * k)
        r_star = np.where(tied, prefix[base + star] - prefix[base + np.maximum(star - 1, 0)],
                          0.0)
        # every (chain, target): its class, for targets outside the chain and its ends
        level_a, level_b = counts.levels(rows.lane_a), counts.levels(rows.lane_b)
        vertex = xp.arange(n)
        outside = (level_a >= 0) & (dev(self.chain_of)[None, :] != dev(rows.chains)[:, None])
        outside &= ((vertex[None, :] != dev(rows.first)[:, None])
                    & (vertex[None, :] != dev(rows.last)[:, None]))
        key = xp.where(outside, dev(off[:-1])[:, None]
                       + self.classes(xp, rows, level_a, level_b), 0)
        del level_a, level_b
        r_t = xp.where(outside, dev(self.r)[None, :], 0.0)
        tau_a, tau_b = r_t * dev(to_a)[key], r_t * dev(to_b)[key]
        # ties: σ(a,t) / (σ(a,t) + σ(b,t)), both in the scale of a's level
        at = xp.nonzero(outside & (dev(r_star)[key] != 0.0))
        share = xp.zeros(0)
        if at[0].size:
            sig_a, exp_a = counts.counts(rows.lane_a)
            sig_b, exp_b = counts.counts(rows.lane_b)
            sa, sb = sig_a[at], sig_b[at]
            if exp_a is not None:
                sb = xp.ldexp(sb, (exp_b[at] - exp_a[at]).astype(np.int32))
            del sig_a, exp_a, sig_b, exp_b
            share = sa / (sa + sb)
            tied_r = r_t[at] * dev(r_star)[key[at]]
            tau_a[at] += tied_r * share
            tau_b[at] += tied_r * (1.0 - share)
        counts.add_target_weights(rows.lane_a, tau_a)
        counts.add_target_weights(rows.lane_b, tau_b)
        del tau_a, tau_b
        size = int(off[-1])
        mass = xp.bincount(key[outside], weights=r_t[outside], minlength=size)
        tie_mass = (xp.bincount(key[at], weights=r_t[at] * share, minlength=size)
                    if at[0].size else xp.zeros(size))
        return counts.host(mass), counts.host(tie_mass)

    def add_target_weights(self, index: int, counts: SlotCounts):
        """Add the folded sources' target weights to the slots of batch ``index`` (module
        docstring). Returns a callable that adds their closed-form terms to :attr:`credit`,
        or with :attr:`edges` to the chains' edges (:meth:`edge_credit`): host work, which the
        engine may run while its backward sweep runs on the device."""
        batch = self._batches[index]
        began = time.perf_counter()
        later = []
        step = max(1, counts.chunk_entries // max(1, counts.n))
        for lo in range(0, batch.chains.size, step):
            part = slice(lo, lo + step)
            later.append(self._add_chunk(counts, batch.chains[part], batch.lane_a[part],
                                         batch.lane_b[part]))
        self.seconds["target_weights"] += time.perf_counter() - began

        def add_credits() -> None:
            began = time.perf_counter()
            for finish in later:
                finish()
            self.seconds["credits"] += time.perf_counter() - began

        return add_credits

    def _add_chunk(self, counts: SlotCounts, chains, lane_a, lane_b):
        first, last, L = self.chains.first[chains], self.chains.last[chains], self._L[chains]
        hist_off = np.zeros(chains.size + 1, dtype=np.int64)
        np.cumsum(2 * L + 1, out=hist_off[1:])
        rows = ChainRows(chains=chains, lane_a=lane_a, lane_b=lane_b, first=first,
                         last=last, length=L, prefix_off=self._prefix_off[chains],
                         hist_off=hist_off)
        # τ of both ends' slots, and the classes of the targets outside each chain
        mass, tie_mass = counts.chain_terms(self, rows)
        # d(a, b) and σ(a, b): pairs inside a chain with a shorter way round add to τ_a(b)
        # (edge BC: those that go round from b to a to τ_b(a), so that each stored entry of
        # the a-b paths gets the pairs that cross it its way)
        D, sig_ab = counts.at(lane_a, last)
        D = np.where(self._loop[chains], 0, self.scaled(np, D))
        sig_ab = np.where(self._loop[chains], 1.0, sig_ab)
        direct = (D >= self._span[chains]) & ~self._loop[chains]
        if (~direct).any():
            to_b, to_a = self._credit_pairs(chains[~direct], D[~direct], sig_ab[~direct])
            round_a, round_b = lane_a[~direct], lane_b[~direct]
            ends_a, ends_b = first[~direct], last[~direct]
            for lanes, ends, around in ((round_a, ends_b, to_b), (round_b, ends_a, to_a)):
                keep = (around != 0) & (ends_a != ends_b)
                if keep.any():
                    counts.add_target_entries(lanes[keep], ends[keep], around[keep])

        def finish() -> None:
            # chains of like lengths together: the tables are (chains, longest + 2)
            for part in _by_length(L):
                self._credit_outside(chains[part], hist_off[part], mass, tie_mass)
            inside = np.flatnonzero(direct)
            for part in _by_length(L[inside]):
                self._credit_direct(chains[inside[part]])

        return finish

    # The credits below are per position j = 0 .. L of each chain (a, x_1 .. x_k, b), in
    # (chains, Lmax + 2) arrays of the chunk's chains, summed along each row only: a running
    # sum across chains would leave other chains' rounding where a credit is 0. Edge credits
    # (edge BC) are per edge j = 1 .. L, the edge between positions j − 1 and j, at column j,
    # each way: forward (crossed toward b) and backward (toward a).

    def _table(self, chains, values_at, width: int) -> np.ndarray:
        """(chains, width) array: row c holds ``values_at`` of its positions 0 .. L."""
        L = self._L[chains]
        rows = np.repeat(np.arange(chains.size), L + 1)
        cols = np.arange(rows.size) - np.repeat(np.cumsum(L + 1) - (L + 1), L + 1)
        table = np.zeros((chains.size, width), dtype=np.float64)
        table[rows, cols] = values_at[self._pos_off[chains][rows] + cols]
        return table

    def _prefix_table(self, chains, width: int) -> np.ndarray:
        """P(m) = Σ_{i ≤ m} r(x_i) at column m = 0 .. width − 1 (P(k) past k)."""
        k = self._k[chains]
        cols = np.minimum(np.arange(width)[None, :], k[:, None])
        return self.prefix[self._prefix_off[chains][:, None] + cols]

    def _add_credit(self, chains, table: np.ndarray) -> None:
        """credit of the vertex at position j of chain c += ``table[c, j]`` (j ≤ L)."""
        L = self._L[chains]
        cols = np.arange(table.shape[1])[None, :]
        keep = cols <= L[:, None]
        where = self._pos_off[chains][:, None] + np.minimum(cols, L[:, None])
        self.credit += _summed(self._vertex_at[where[keep]], table[keep], self.credit.size)

    def _add_edge_credit(self, chains, forward: np.ndarray, backward: np.ndarray) -> None:
        """Credit of edge j of chain c (1 ≤ j ≤ L) crossed toward b += ``forward[c, j]``, and
        crossed toward a += ``backward[c, j]``."""
        L = self._L[chains]
        cols = np.arange(forward.shape[1])[None, :]
        keep = (cols >= 1) & (cols <= L[:, None])
        where = (self._pos_off[chains][:, None] + cols)[keep]
        size = self._edge_forward.size
        self._edge_forward += _summed(where, forward[keep], size)
        self._edge_backward += _summed(where, backward[keep], size)

    def edge_credit(self) -> np.ndarray:
        """float64 per stored entry of the graph's pattern: what the folded sources add to the
        chains' edges (edge BC, :attr:`edges`), collected as the batches were swept; zero off
        the chains. Edge j of a chain (positions j − 1, j) has its entry x_{j−1} -> x_j credited
        with the paths that cross it toward b, x_j -> x_{j−1} with those toward a."""
        pattern = self.graph.pattern
        edge = np.zeros(pattern.nnz, dtype=np.float64)
        if not self.edges:
            return edge
        L = self._L
        j = np.arange(self._vertex_at.size) - np.repeat(self._pos_off[:-1], L + 1)
        at = np.flatnonzero(j >= 1)
        tail, head = self._vertex_at[at - 1], self._vertex_at[at]
        # every chain edge has an inner end: it lies on one chain only, once
        edge[entry_positions(pattern, tail, head)] = self._edge_forward[at]
        edge[entry_positions(pattern, head, tail)] = self._edge_backward[at]
        return edge

    def _credit_outside(self, chains, class_start, mass, tie_mass) -> None:
        """Credits of the folded sources' paths to targets outside their chain (``mass`` and
        ``tie_mass`` of chain c's class h at ``class_start[c] + h``). A target of
        class h is reached by x_i through a when i ≤ m(h) = ⌈h/2⌉ − 1 (its paths cover the
        positions 0 .. i − 1), through b when i ≥ s(h) = ⌊h/2⌋ + 1 (positions i + 1 .. L),
        and by x_{h/2} through both (even h; split by the tie shares). So position j gets
        Σ_h H(h) (P(m(h)) − P(j))⁺ + Σ_h H(h) (P(j − 1) − P(s(h) − 1))⁺ + the ties: sums over
        the classes grouped by m(h) and by s(h).

        Edge BC: the paths through a cover the edges 1 .. i (toward a), those through b the
        edges i + 1 .. L (toward b), so edge j gets what position j − 1 gets through a (the
        sources i ≥ j) and what position j gets through b (the sources i ≤ j − 1)."""
        k, L = self._k[chains], self._L[chains]
        C, width = chains.size, int(L.max()) + 2
        h = np.arange(2 * width - 1)[None, :]
        valid = h <= 2 * L[:, None]
        flat_h = np.where(valid, h + class_start[:, None], 0)
        H = np.where(valid, mass[flat_h], 0.0)
        T = np.where(valid, tie_mass[flat_h], 0.0)
        rows = np.broadcast_to(np.arange(C)[:, None], H.shape)
        m = np.clip((h + 1) // 2 - 1, 0, k[:, None])
        s = np.minimum(h // 2 + 1, k[:, None] + 1)
        by_m = _summed((rows * width + m)[valid], H[valid], C * width).reshape(C, width)
        by_s = _summed((rows * width + s)[valid], H[valid], C * width).reshape(C, width)
        P = self._prefix_table(chains, width)                    # P(0 .. width − 1)
        j = np.arange(width)[None, :]
        # through a: Σ_{m > j} A(m) (P(m) − P(j))
        after = lambda x: np.cumsum(x[:, ::-1], axis=1)[:, ::-1] - x  # noqa: E731  Σ_{m > j}
        through_a = after(by_m * P) - P * after(by_m)
        # through b: Σ_{s ≤ j − 1} B(s) (P(j − 1) − P(s − 1))
        P_before = np.concatenate([np.zeros((C, 1)), P[:, :-1]], axis=1)   # P(j − 1)
        upto = lambda x: np.cumsum(x, axis=1) - x  # noqa: E731            Σ_{s < j}
        through_b = P_before * upto(by_s) - upto(by_s * P_before)
        # ties, at i = h / 2 (columns 2i of H and T): through a for j < i, through b for j > i
        r = self._table(chains, self._r_at, width)
        r[np.arange(C), 0] = 0.0
        r[j > k[:, None]] = 0.0                                     # r(x_i), i = 1 .. k
        even = np.minimum(2 * j, 2 * width - 2)
        tie_a = np.take_along_axis(T, np.broadcast_to(even, T[:, :width].shape), 1) * r
        tie_b = np.take_along_axis(H, np.broadcast_to(even, H[:, :width].shape), 1) * r - tie_a
        if self.edges:
            # edge j: through a what position j − 1 gets, through b what position j gets
            toward_a = _shifted(through_a + after(tie_a))
            self._add_edge_credit(chains, through_b + upto(tie_b), toward_a)
            return
        credit = through_a + through_b
        credit += after(tie_a) + upto(tie_b)
        self._add_credit(chains, credit)

    def _credit_direct(self, chains) -> None:
        """The pairs inside chains that are a shortest way between their ends.

        A pair {p < q} of positions (x_p, or a at 0 and b at L) weighs w = r_p r_q
        ([p inner] + [q inner]) (both ordered pairs when both are inner). When d(a, b) = L
        every such shortest path is the inner one, and position j gets Σ_{p < j < q} w =
        X(j − 1) (R − R(j)) + R(j − 1) (X − X(j)) in prefix sums of x = r [inner] and r.

        Edge BC: edge j lies between every p ≤ j − 1 and q ≥ j, crossed toward b by the pairs
        from p (inner), X(j − 1) (R − R(j − 1)), and toward a by those from q (inner),
        R(j − 1) (X − X(j − 1)).
        """
        k, L = self._k[chains], self._L[chains]
        width = int(L.max()) + 2
        r = self._table(chains, self._r_at, width)
        j = np.arange(width)[None, :]
        x = np.where((j >= 1) & (j <= k[:, None]), r, 0.0)         # r of inner positions
        X, R = np.cumsum(x, axis=1), np.cumsum(r, axis=1)
        X_before = np.concatenate([np.zeros((chains.size, 1)), X[:, :-1]], axis=1)
        R_before = np.concatenate([np.zeros((chains.size, 1)), R[:, :-1]], axis=1)
        if self.edges:
            self._add_edge_credit(chains, X_before * (R[:, -1:] - R_before),
                                  R_before * (X[:, -1:] - X_before))
            return
        credit = X_before * (R[:, -1:] - R) + R_before * (X[:, -1:] - X)
        self._add_credit(chains, credit)

    def _credit_pairs(self, chains, D, sig) -> tuple[np.ndarray, np.ndarray]:
        """The pairs inside chains with a shorter way round through a and b (d(a, b) < λ, or
        a loop), pair by pair: the inner path of |p_i − p_j| or the way round of
        λ + d(a, b) − |p_i − p_j| (``D``: d(a, b) scaled as the positions), both on a tie
        (1 : σ(a, b) paths). Returns per chain the weight that goes round from a to b and
        from b to a (τ_a(b) and τ_b(a): the vertices, or edges, of the shortest a-b paths);
        for vertex sums, which take no direction, all of it from a to b.

        Edge BC: the inner path covers the edges lo + 1 .. hi, the way round the edges 1 .. lo
        and hi + 1 .. L (a loop's last edge, x_k – a, too); from x_i to x_j with i < j the
        inner path runs toward b and the way round toward a (x_i down to a, then b down to
        x_j), the other way for i > j."""
        k, L = self._k[chains], self._L[chains]
        loop = self._loop[chains]
        width = int(L.max()) + 2
        # every (chain, i, j): i = 1..k, j = 0..L
        reps = k * (L + 1)
        row = np.repeat(np.arange(chains.size), reps)
        flat = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        i = flat // (L[row] + 1) + 1
        j = flat % (L[row] + 1)
        keep = i != j
        row, i, j = row[keep], i[keep], j[keep]
        at = self._pos_off[chains][row]
        w = self._r_at[at + i] * self._r_at[at + j]
        gap = np.abs(self._position[at + i] - self._position[at + j])
        round_len = self._span[chains][row] + D[row] - gap
        f_in = np.where(gap < round_len, 1.0, np.where(gap == round_len,
                                                       1.0 / (1.0 + sig[row]), 0.0))
        w_in, w_round = w * f_in, w * (1.0 - f_in)
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        if self.edges:
            ahead = i < j  # the way round: x_i to a, a to b, b to x_j
            self._pair_edges(chains, row, ahead, lo, hi, w_in, w_round, width)
            return (np.bincount(row[ahead], weights=w_round[ahead], minlength=chains.size),
                    np.bincount(row[~ahead], weights=w_round[~ahead], minlength=chains.size))
        top = np.where(loop[row], L[row] - 1, L[row])  # a loop credits a once, at 0
        upper = hi + 1 <= top
        base = row * (width + 1)
        # inside: the positions strictly between; round: 0 .. lo − 1 and hi + 1 .. top
        diff = _summed(
            np.concatenate([base + lo + 1, base + hi, base, base + lo, (base + hi + 1)[upper],
                            (base + top + 1)[upper]]),
            np.concatenate([w_in, -w_in, w_round, -w_round, w_round[upper], -w_round[upper]]),
            chains.size * (width + 1)).reshape(chains.size, width + 1)
        self._add_credit(chains, np.cumsum(diff, axis=1)[:, :width])
        return np.bincount(row, weights=w_round, minlength=chains.size), np.zeros(chains.size)

    def _pair_edges(self, chains, row, ahead, lo, hi, w_in, w_round, width: int) -> None:
        """The edge credits of :meth:`_credit_pairs`: per pair (chain ``row``, positions
        ``lo`` < ``hi``, its source at ``lo`` when ``ahead``), ``w_in`` on the edges lo + 1 ..
        hi the way the source looks, ``w_round`` on the edges 1 .. lo and hi + 1 .. L the
        other way (difference arrays over the edges, summed along each chain's row)."""
        L = self._L[chains][row]
        base = row * (width + 1)
        size = chains.size * (width + 1)

        def runs(inner):
            """The credits of one way: the inner paths of the pairs where ``inner``, the ways
            round of the others."""
            out = ~inner
            index = np.concatenate([base[inner] + lo[inner] + 1, base[inner] + hi[inner] + 1,
                                    base[out], base[out] + lo[out] + 1, base[out] + hi[out] + 1,
                                    base[out] + L[out] + 1])
            values = np.concatenate([w_in[inner], -w_in[inner], w_round[out], -w_round[out],
                                     w_round[out], -w_round[out]])
            diff = _summed(index, values, size).reshape(chains.size, width + 1)
            return np.cumsum(diff, axis=1)[:, :width]

        # toward b: the inner paths of the sources before their targets, the ways round of
        # the sources after theirs; toward a the others
        self._add_edge_credit(chains, runs(ahead), runs(~ahead))


def _by_length(L: np.ndarray) -> list[np.ndarray]:
    """Positions of ``L`` (chain lengths, at least 1) grouped by ⌊log2 L⌋, so that a group's
    (chains, longest + 2) tables are at most about twice their chains' own positions: on
    road-luxembourg-osm (15,143 chains, 7.5 edges long on average, 170 at most) one table
    for all was 20 times too wide."""
    if L.size == 0:
        return []
    key = np.log2(L).astype(np.int64)
    order = np.argsort(key, kind="stable")
    cuts = np.flatnonzero(np.diff(key[order])) + 1
    return np.split(order, cuts)


def _shifted(table: np.ndarray) -> np.ndarray:
    """``table`` moved one column right (column j holds column j − 1; column 0 zero)."""
    return np.concatenate([np.zeros((table.shape[0], 1)), table[:, :-1]], axis=1)


def _summed(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """The values summed by index (``np.add.at`` into zeros, faster)."""
    return np.bincount(index, weights=values, minlength=size)

