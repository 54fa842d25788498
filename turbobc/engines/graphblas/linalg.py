"""The small GraphBLAS helpers every part of the graphblas engine shares: row scaling, column
sums into NumPy arrays, per-edge sums as arrays aligned with the pattern, and when a frontier
is pulled."""

from __future__ import annotations

import numpy as np
from graphblas import Matrix, Vector, monoid, semiring

from turbobc._graph import entry_positions

__all__ = ["PULL_ABOVE_DENSITY"]

# A frontier denser than this (entries / (B n)) is pulled rather than pushed: it is handed to
# the product as a bitmap, which lets SuiteSparse use its dot-product method (LAGraph's switch).
# Forward sweeps alone, B = n, two cores, seconds at 0.05 / 0.2 / never a bitmap: ca-GrQc core
# 1.50 / 1.15 / 0.95, power core 1.60 / 1.15 / 1.15, ego-Facebook 1.22 / 1.17 / 1.41,
# wiki-Vote as undirected core 1.76 / 1.81 / 2.42, as20000102 core 0.71 / 0.67 / 0.83: deep
# graphs' mid-size frontiers were pulled too early (one-off script, not a record).
PULL_ABOVE_DENSITY = 0.2


def _row_scaling(factors: np.ndarray) -> Matrix:
    """diag(factors) as a B x B matrix."""
    return Vector.from_coo(np.arange(len(factors)), factors, size=len(factors)).diag()


def _aligned_with_pattern(E: Matrix, pattern) -> np.ndarray:
    """The values of E (pattern within ``pattern``'s) as an array aligned with
    ``pattern.indices`` (zero where E has no entry)."""
    rows, cols, vals = E.to_coo()
    out = np.zeros(pattern.nnz, dtype=np.float64)
    out[entry_positions(pattern, rows, cols)] = vals
    return out


def _add_columns(M: Matrix, raw: np.ndarray, row_weights: np.ndarray | None = None) -> None:
    """raw += the column sums of M, row b counted ``row_weights[b]`` times (ωᵀ M) when given."""
    if row_weights is None:
        sums = M.reduce_columnwise(monoid.plus).new()
    else:
        sums = Vector.from_dense(row_weights).vxm(M, semiring.plus_times).new()
    idx, vals = sums.to_coo()
    raw[idx] += vals


