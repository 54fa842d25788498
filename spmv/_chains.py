"""Thin launcher of the chain-folding kernels (``spmv/kernels/chains.cu``): the terms of the
sources folded into the chains' ends, between the forward and the backward sweep of a batch,
for a lanes batch (``bcc_lane_terms``), a layers batch (``bcc_slot_terms``) or a frontiers
batch (``bcc_frontier_terms``).

Nothing here imports CuPy at import time.
"""

from __future__ import annotations

import numpy as np

from ._module import allow_shared_memory, get_kernel
from ._views import CHAIN_PLAN, CHAIN_ROWS, FRONTIER_LAYOUT, LANE_LAYOUT, SLOT_LAYOUT, record

__all__ = ["CHAIN_THREADS", "chain_terms"]

CHAIN_THREADS = 256
"""Threads per block: a block per (chain, stretch of the vertices)."""

_KERNELS = {"lanes": "bcc_lane_terms", "slots": "bcc_slot_terms",
            "frontiers": "bcc_frontier_terms"}


def chain_terms(layout: str, counts: dict, rows, uploaded: dict, tau, n: int, classes=None):
    """Add the chains' terms into ``tau`` and return their class histograms (mass, tie mass,
    on the device), or None when a block cannot have the shared memory of the longest chain's
    two histograms.

    Parameters
    ----------
    layout : {"lanes", "slots", "frontiers"}
        The batch's layout.
    counts : dict
        Its levels and counts on the device: ``"lanes"``: level (int16 or int32), sigma (σ̂),
        exponent (the cumulative shift table, or None) and lanes (B); ``"slots"``: dist,
        sigma and scale (the positions' integer unit); ``"frontiers"``: level (int32), sigma
        (σ̂), exponent (the cumulative shift table, a row of ``depths`` per slot, or None),
        depths and rank (int64: each vertex's row in the relabeled graph).
    rows
        The chains of the batch, one row each (``turbobc._chains``: chains, lane_a, lane_b,
        first, last, length, prefix_off, hist_off; host arrays).
    uploaded : dict
        The plan's device arrays: prefix, chain_of, r, and for ``"slots"`` class_at.
    tau
        The batch's τ block (device, float64).
    classes : tuple, optional
        ``"slots"``: the rows' (span, class_base, class_first) host arrays.
    """
    import cupy

    if layout == "lanes":
        view = record(LANE_LAYOUT, level=counts["level"], sigma=counts["sigma"],
                      exponent=counts["exponent"], lanes=counts["lanes"], n=n,
                      level_bytes=counts["level"].dtype.itemsize)
    elif layout == "frontiers":
        view = record(FRONTIER_LAYOUT, level=counts["level"], sigma=counts["sigma"],
                      exponent=counts["exponent"], rank=counts["rank"],
                      depths=counts["depths"], n=n)
    else:
        view = record(SLOT_LAYOUT, dist=counts["dist"], sigma=counts["sigma"], n=n,
                      scale=counts["scale"])
    kernel = get_kernel("chains.cu", f"{_KERNELS[layout]}<long long>")
    shared = 16 * int(2 * rows.length.max() + 1)  # the two histograms of the longest chain
    if not allow_shared_memory(kernel, shared):
        return None
    dev = cupy.asarray
    span, base, first = (None, None, None) if classes is None else (dev(c) for c in classes)
    size = int(rows.hist_off[-1])
    mass = cupy.zeros(size, dtype=np.float64)
    tie_mass = cupy.zeros(size, dtype=np.float64)
    row_arrays = dict(chain=dev(rows.chains), lane_a=dev(rows.lane_a), lane_b=dev(rows.lane_b),
                      first=dev(rows.first), last=dev(rows.last), length=dev(rows.length),
                      prefix_off=dev(rows.prefix_off), hist_off=dev(rows.hist_off))
    chains = record(CHAIN_ROWS, **row_arrays, span=span, class_base=base, class_first=first)
    plan = record(CHAIN_PLAN, prefix=uploaded["prefix"], chain_of=uploaded["chain_of"],
                  r=uploaded["r"], class_at=uploaded.get("class_at"), tau=tau, mass=mass,
                  tie_mass=tie_mass)
    stretches = max(1, min(64, -(-n // 4096)))
    kernel((int(rows.chains.size), stretches), (CHAIN_THREADS,), (view, chains, plan),
           shared_mem=shared)
    return mass, tie_mass
