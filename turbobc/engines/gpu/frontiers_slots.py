"""The frontiers family with per-slot target weights (chain folding, ``Problem.slot_weights``):
a *phased* run of the plan's batches (:func:`sweep_slots`), a block per slot.

A chain's folded sources need, before either end's backward sweep, what both ends' forward
sweeps found (their levels and counts at every vertex: turbobc/_chains.py). A whole run of the
family (a block takes a source, sweeps it forward and backward, takes the next) never holds two
sources' forward sweeps at once, so a batch is launched twice (spmv/kernels/frontiers.cu,
``run.phase``):

1. FORWARD: block b sweeps slot b forward, keeping its rows (levels, σ̂, the level starts and
   shifts) and its depth;
2. the plan's target weights: τ of slot b is own(b) ⊗ target weight (a row of n, in the
   relabeled order) plus the terms of the chains the batch carries (spmv/kernels/chains.cu,
   ``bcc_frontier_terms``, through :class:`FrontierCounts`);
3. BACKWARD: block b sweeps slot b backward with its τ row, adds to its own bc row (and the
   edge sums) and clears what it touched.

A batch holds up to :data:`SLOT_WAVES` times the blocks that can be resident (the device
starts the rest as the first finish, so a batch's sources balance as a whole run's do), as
many as the free memory holds with a τ row each (``memory.frontier_block_bytes``).
"""

from __future__ import annotations

import time

import numpy as np

from spmv import _frontiers

from turbobc.engines.gpu.chain_terms import chain_terms
from turbobc.engines.gpu.resident import allocated
from turbobc.engines.protocol import SlotCounts, SlotWeightsDeclined

__all__ = ["SLOT_SPARE", "SLOT_WAVES", "FrontierCounts", "sweep_slots"]

SLOT_WAVES = 4
"""A batch of a phased run holds up to this many times the blocks that can be resident. 8, 16
and 48 were slower on road-luxembourg-osm and NA-road, faster only on usroads (one H200,
docs/deep-graphs.md, "The frontiers family on folded graphs")."""

SLOT_SPARE = 64
"""Slots a phased run's batch may hold beyond its sources: helpers, the other ends of the
chains the batch carries (turbobc/_chains.py, ``ChainFolding.batches``)."""


def sweep_slots(labels, rows, plan, sources, *, capacity: int, n: int, target_weight, edge,
                max_in_degree: int, defines: tuple, progress, mark) -> dict:
    """The batches of ``plan`` over ``sources`` (module docstring) into ``rows`` (the blocks'
    rows, their ``bc`` summed by the caller) and ``edge`` (the relabeled edge sums, or None);
    ``labels`` is the relabeled graph (frontiers.py, ``_Labels``), ``capacity`` the slots of a
    batch, ``mark`` records the pool's peak. Returns the facts of the batches.

    Raises
    ------
    SlotWeightsDeclined
        When a slot's counts spread wider than per-level scaling holds (the caller sweeps
        unfolded), or a source and the other ends of its chains do not fit a batch.
    """
    import cupy

    batches = plan.batches(capacity, labels.rank, sources=sources)
    if rows.tau is None or rows.tau.size < capacity * n:
        rows.tau = None
        rows.tau = allocated(lambda: cupy.empty(capacity * n, dtype=np.float64))
    # the target weight in the relabeled order: entry i is vertex perm[i]'s
    base = (cupy.ones(n) if target_weight is None
            else cupy.asarray(np.asarray(target_weight, dtype=np.float64))[labels.perm_dev])
    graph = {"ptr": labels.ptr, "idx": labels.idx, "n": n}
    work = rows.work()
    depth, target_seconds = 0, 0.0
    for index, slots in enumerate(batches):
        size = int(slots.size)
        dev_slots = cupy.asarray(labels.rank[slots])  # slot b is block b, in the new ids
        rows.wide_count.fill(0)
        launch = dict(blocks=size, sources=dev_slots, omega=None, endpoints=False,
                      max_in_degree=max_in_degree, defines=defines)
        # forward: f<¬σ> = Aᵀ f ; σ += f ; S<f> = d + 1, a block per slot, the rows kept
        _frontiers.sweep_frontiers(graph, work, tau=None, edge=None,
                                   phase=_frontiers.FORWARD, **launch)
        if int(rows.wide_count.get()[0]):
            raise SlotWeightsDeclined("path counts spread wider than per-level scaling holds")
        depths = rows.depth[:size]
        batch_depth = int(depths.max())
        depth = max(depth, batch_depth)
        began = time.perf_counter()
        # τ of slot b = own(b) r, then the chains' terms (turbobc/_chains.py)
        own = plan.own_weights(index)
        tau = rows.tau[:size * n].reshape(size, n)
        cupy.multiply(cupy.asarray(own).reshape(-1, 1), base[None, :], out=tau)
        counts = FrontierCounts(rows, tau, labels.rank_dev, n, size, depths, batch_depth)
        add_credits = plan.add_target_weights(index, counts)
        target_seconds += time.perf_counter() - began
        mark()
        # backward: t<S==L> = 2^-shift A u, u = τ_b/σ̂ + t, with slot b's own τ row
        _frontiers.sweep_frontiers(graph, work, tau=rows.tau, tau_stride=n, edge=edge,
                                   phase=_frontiers.BACKWARD, **launch)
        add_credits()  # on the host while the backward sweep runs
        if progress is not None:
            swept = int(np.count_nonzero(own))  # the helper slots weigh nothing
            if swept:
                progress.update(swept)
    return {"batches": len(batches), "depth": depth, "slot_weight_seconds": target_seconds}


class FrontierCounts(SlotCounts):
    """A phased batch's levels and counts on the device, for per-slot target weights
    (:class:`turbobc.engines.protocol.SlotCounts`): slot b of vertex v is entry b n + rank[v]
    of the blocks' rows (the graph relabeled, frontiers.py). It serves :meth:`chain_terms`
    with a kernel and :meth:`at` by gathers; σ = σ̂ 2^E, E the sum of the slot's shifts up to
    the vertex's level."""

    def __init__(self, rows, tau, rank_dev, n: int, size: int, depths, depth: int):
        import cupy

        self.xp, self.n = cupy, n
        self.chunk_entries = 1 << 62  # chain_terms needs no scratch: every chain at once
        self._level, self._sigma = rows.level, rows.sigma
        self._tau, self._rank = tau.reshape(-1), rank_dev
        self._depths = depth + 1
        # the shift table of each slot up to the batch's depth (entries past a slot's own
        # depth were not written by this batch: zero), summed along the levels
        shifts = rows.shifts[:size * (n + 2)].reshape(size, n + 2)[:, :depth + 1]
        written = cupy.arange(depth + 1)[None, :] <= depths[:, None]
        shifts = cupy.where(written, shifts, 0)
        self._exponent = (cupy.cumsum(shifts, axis=1, dtype=np.int32) if bool(shifts.any())
                          else None)

    def _entries(self, lanes, vertices):
        cupy = self.xp
        return cupy.asarray(lanes, dtype=np.int64) * self.n + self._rank[cupy.asarray(vertices)]

    def add_target_entries(self, lanes, vertices, values) -> None:
        self.xp.add.at(self._tau, self._entries(lanes, vertices), self.xp.asarray(values))

    def at(self, lanes, vertices):
        cupy = self.xp
        where = self._entries(lanes, vertices)
        level = self._level[where].astype(np.int64)
        sigma = self._sigma[where]
        if self._exponent is not None:
            lanes = cupy.asarray(lanes, dtype=np.int64)
            sigma = cupy.ldexp(sigma, self._exponent[lanes, cupy.maximum(level, 0)])
        return cupy.asnumpy(level), cupy.asnumpy(sigma)

    def chain_terms(self, plan, rows):
        """:meth:`SlotCounts.chain_terms` in one launch of ``bcc_frontier_terms``
        (spmv/kernels/chains.cu): a block per (chain, stretch of vertices)."""
        counts = {"level": self._level, "sigma": self._sigma, "exponent": self._exponent,
                  "depths": self._depths, "rank": self._rank}
        return chain_terms("frontiers", counts, plan, rows, self._tau, self.n)
