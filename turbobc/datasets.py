"""Real graphs shipped inside the package.

``ego-Facebook`` (SNAP facebook_combined, 4,039 vertices, 88,234 undirected
edges, each listed once) is the demo graph.
"""

from __future__ import annotations

import gzip
from importlib.resources import files

import numpy as np
import scipy.sparse as sp

__all__ = ["load_ego_facebook"]


def load_ego_facebook() -> sp.csr_array:
    """SNAP ego-Facebook as a symmetric 4039 x 4039 CSR pattern (vertex i is SNAP id i).

    >>> A = load_ego_facebook()
    >>> A.shape, A.nnz
    ((4039, 4039), 176468)
    """
    with gzip.open(files("turbobc").joinpath("data/facebook_combined.txt.gz"), "rt") as fh:
        edges = np.loadtxt(fh, dtype=np.int64, comments="#", ndmin=2)
    n = int(edges.max()) + 1
    rows = np.concatenate([edges[:, 0], edges[:, 1]])
    cols = np.concatenate([edges[:, 1], edges[:, 0]])
    A = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    A.data[:] = 1.0
    return A
