"""The kernel selector: a pure function of graph statistics.

The thresholds come from measurements of all three kernels on the benchmark graphs of
DESIGN section 7 (bench/results/, written by bench/single_source.py); the record they were
read from is named in :data:`THRESHOLDS_SOURCE`.
"""

from __future__ import annotations

from ._scf import GraphStats

__all__ = ["select", "VECSC_MIN_MEAN_DEGREE", "VECSC_MIN_SCF", "THRESHOLDS_SOURCE"]

VECSC_MIN_MEAN_DEGREE = 16.0
"""From this mean degree up, a warp per vertex (veCSC) wins: its 32 lanes have work."""

VECSC_MIN_SCF = 4.0
"""From this scf up, veCSC wins even on sparse graphs: hubs would stall a thread per vertex."""

THRESHOLDS_SOURCE = "initial guess, not yet measured"
"""The benchmark record the thresholds above were read from."""


def select(stats: GraphStats) -> str:
    """Name of the kernel (a member of ``spmv.KERNELS``) for a graph with these statistics.

    Parameters
    ----------
    stats : GraphStats
        From :func:`spmv.stats_host` or :func:`spmv.stats_device`.

    Returns
    -------
    str
        ``"vecsc"`` for dense or scale-free graphs (mean degree at least
        :data:`VECSC_MIN_MEAN_DEGREE`, or scf at least :data:`VECSC_MIN_SCF`),
        ``"sccsc"`` otherwise.
    """
    if stats.mean_degree >= VECSC_MIN_MEAN_DEGREE or stats.scf >= VECSC_MIN_SCF:
        return "vecsc"
    return "sccsc"
