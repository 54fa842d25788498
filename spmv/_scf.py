"""The scale-free metric ``scf`` that picks a kernel.

Definition
----------
For a graph with n vertices and m stored edges (each undirected edge stored twice), with
deg(v) the out-degree of v (the degree for undirected graphs) and mean degree m / n::

    scf = ( Σ over stored edges (u, v) of deg(u)·deg(v) / m ) / (m / n)²

The numerator is the mean, over edges, of the product of the degrees at the two ends; the
denominator is what that mean would be if every vertex had the mean degree. So scf == 1 for
every regular graph (rings, grids without border, complete graphs), grows with degree
variance and with hubs that link to hubs, and is large for scale-free graphs (Kronecker,
Mycielski). A graph with no edges has scf = 1 by definition. This replaces the paper's
unnormalized sum (its equation 5), whose reported values cannot be reproduced.

Computed on the device from the CSC arrays (:func:`scf_device`) by the engine, and on the host
with NumPy (:func:`scf_host`) where no device is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["GraphStats", "scf_from_sum", "scf_host", "stats_host", "stats_device"]


@dataclass(frozen=True)
class GraphStats:
    """What the selector looks at.

    Attributes
    ----------
    n, nnz : int
        Vertices and stored edges.
    scf : float
        The metric defined in this module.
    max_degree : int
        Largest out-degree.
    directed : bool
        Whether the pattern is treated as directed.
    """

    n: int
    nnz: int
    scf: float
    max_degree: int
    directed: bool

    @property
    def mean_degree(self) -> float:
        """Stored edges per vertex, m / n (0 for an empty graph)."""
        return self.nnz / self.n if self.n else 0.0


def scf_from_sum(degree_product_sum: float, n: int, m: int) -> float:
    """scf from Σ_edges deg(u)·deg(v), n and m (1.0 when there are no edges)."""
    if m == 0:
        return 1.0
    mean = m / n
    return float(degree_product_sum) / m / (mean * mean)


def scf_host(pattern) -> float:
    """scf of a scipy sparse pattern (``pattern[u, v] != 0`` is an edge u -> v), with NumPy."""
    csr = pattern.tocsr()
    n, m = csr.shape[0], csr.nnz
    deg = np.diff(csr.indptr).astype(np.float64)
    ones = csr.copy()
    ones.data = np.ones_like(ones.data, dtype=np.float64)
    # Σ_(u,v) deg(u) deg(v) = degᵀ A deg
    return scf_from_sum(float(deg @ (ones @ deg)), n, m)


def stats_host(pattern, directed: bool) -> GraphStats:
    """:class:`GraphStats` of a scipy sparse pattern, on the host."""
    csr = pattern.tocsr()
    deg = np.diff(csr.indptr)
    return GraphStats(n=csr.shape[0], nnz=csr.nnz, scf=scf_host(csr),
                      max_degree=int(deg.max()) if deg.size else 0, directed=bool(directed))


def stats_device(colptr, rowidx, n: int, m: int, directed: bool) -> GraphStats:
    """:class:`GraphStats` from CSC arrays already on the device (CuPy), computed there.

    Needs 8n + 8 bytes of device memory for the degrees while it runs.
    """
    import cupy

    from ._launch import column_length, degree_product_sum, out_degree

    deg = cupy.zeros(n, dtype=cupy.float64)
    total = cupy.zeros(1, dtype=cupy.float64)
    if directed:
        out_degree(rowidx, m, deg)          # deg = A 1 (row counts)
    else:
        column_length(colptr, n, deg)       # symmetric: row counts = column lengths
    degree_product_sum(colptr, rowidx, n, deg, total)   # degᵀ A deg
    max_degree = int(deg.max()) if n else 0
    total_host = float(total.get()[0])
    del deg, total
    return GraphStats(n=n, nnz=m, scf=scf_from_sum(total_host, n, m), max_degree=max_degree,
                      directed=bool(directed))
