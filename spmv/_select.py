"""The kernel selector: a pure function of graph statistics.

Rules, in order (thresholds from measurements of all three kernels on the benchmark graphs
(docs/benchmarks.md), the record named in :data:`THRESHOLDS_SOURCE`):

1. scCOOC (a thread per edge) when its 2m indices fit the memory model 4m + 48n bytes
   + 2 MiB: it was the fastest kernel on every sparse or small graph measured (delaunay,
   road grids, ego-Facebook), where a level costs little work but one grid barrier and the
   edge-parallel kernel has the shortest chain of dependent loads.
2. veCSC (a warp per vertex, hubs split) for dense or scale-free graphs: mean degree at
   least :data:`VECSC_MIN_MEAN_DEGREE` or scf at least :data:`VECSC_MIN_SCF`.
3. scCSC (a thread per vertex) otherwise: sparse, regular graphs too large for scCOOC.
"""

from __future__ import annotations

from ._scf import GraphStats

__all__ = ["select", "cooc_fits", "VECSC_MIN_MEAN_DEGREE", "VECSC_MIN_SCF",
           "MODEL_SLACK_BYTES", "THRESHOLDS_SOURCE"]

VECSC_MIN_MEAN_DEGREE = 16.0
"""From this mean degree up, a warp per vertex (veCSC) wins: its 32 lanes have work. (Every
graph measured above it was also far above :data:`VECSC_MIN_SCF`; below it, sw100000 at mean
degree 10 and scf 1.02 ran scCSC 0.285 ms against veCSC 0.393 ms.)"""

VECSC_MIN_SCF = 1.2
"""From this scf up, veCSC wins: between del16 (scf 1.10: scCSC 2.11 ms, veCSC 2.21 ms) and
rgg16 (scf 1.26: scCSC 4.51 ms, veCSC 3.38 ms); every scale-free graph (scf 4.6 to 557) ran
veCSC 15 to 80 times faster than scCSC, whose thread per vertex stalls on hubs."""

MODEL_SLACK_BYTES = 2 * 2**20
"""The memory model allows 4m + 48n bytes plus this."""

THRESHOLDS_SOURCE = "bench/results/single_source_h200_v3.json"
"""The benchmark record the thresholds above were read from."""


def cooc_fits(stats: GraphStats) -> bool:
    """Whether a scCOOC run (int32: 8m index bytes, 40n bytes of vectors) fits 4m + 48n + 2 MiB."""
    return 8 * stats.nnz + 40 * stats.n <= 4 * stats.nnz + 48 * stats.n + MODEL_SLACK_BYTES


def select(stats: GraphStats) -> str:
    """Name of the kernel (a member of ``spmv.KERNELS``) for a graph with these statistics.

    Parameters
    ----------
    stats : GraphStats
        From :func:`spmv.stats_host` or :func:`spmv.stats_device`.

    Returns
    -------
    str
        ``"sccooc"`` where it fits the memory model (:func:`cooc_fits`), else ``"vecsc"`` for
        dense or scale-free graphs (mean degree at least :data:`VECSC_MIN_MEAN_DEGREE`, or scf
        at least :data:`VECSC_MIN_SCF`), else ``"sccsc"``.
    """
    if cooc_fits(stats):
        return "sccooc"
    if stats.mean_degree >= VECSC_MIN_MEAN_DEGREE or stats.scf >= VECSC_MIN_SCF:
        return "vecsc"
    return "sccsc"
