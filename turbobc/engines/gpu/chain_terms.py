"""The chain folding's terms of a batch on the device, for both layouts (a lanes batch and a
layers batch): one launch of spmv/kernels/chains.cu, a block per (chain, stretch of vertices),
behind :meth:`turbobc.engines.protocol.SlotCounts.chain_terms` of each family (lanes_slots.LaneCounts,
layers_sweep.DistanceCounts)."""

from __future__ import annotations

from spmv import _chains

from turbobc.engines.protocol import SlotWeightsDeclined

__all__ = ["chain_terms"]


def chain_terms(layout: str, counts: dict, plan, rows, tau, n: int, classes=None):
    """The class histograms (mass, tie mass) of the batch's chains as host arrays, their terms
    added into the τ block ``tau`` (``spmv._chains.chain_terms``, whose ``counts`` are the
    batch's levels and counts; ``plan``: the
    :class:`turbobc._chains.ChainFolding`, whose device arrays are uploaded once).

    Raises
    ------
    SlotWeightsDeclined
        When a block cannot have the shared memory of the longest chain's two histograms.
    """
    import cupy

    terms = _chains.chain_terms(layout, counts, rows, plan.on_device(cupy), tau, n, classes)
    if terms is None:
        longest = int(rows.length.max())
        raise SlotWeightsDeclined(f"a chain of {longest} edges needs {16 * (2 * longest + 1)} "
                                  "bytes of shared memory, more than the device gives a block")
    mass, tie_mass = terms
    return cupy.asnumpy(mass), cupy.asnumpy(tie_mass)
