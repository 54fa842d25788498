"""Minimal readers for the real graphs in ../shared/data (tests only).

SNAP edge lists: '#' comments, whitespace separated, ids neither contiguous nor from 0, some
undirected files list both directions; vertex i is the i-th smallest id. Matrix Market:
scipy.io.mmread (1-based, 'symmetric' expanded to both directions).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def load(name: str, *, directed: bool) -> sp.csr_array:
    """The graph in file ``name`` as a CSR pattern (symmetrized when not ``directed``)."""
    path = DATA / name
    if ".mtx" in name:
        A = sp.csr_array(scipy.io.mmread(path))
    else:
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt") as fh:
            pairs = np.loadtxt(fh, dtype=np.int64, comments="#", usecols=(0, 1), ndmin=2)
        ids, flat = np.unique(pairs, return_inverse=True)
        edges = flat.reshape(-1, 2)
        n = ids.size
        A = sp.csr_array((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    if not directed:
        A = A + A.T
    A.sum_duplicates()
    A.data[:] = 1.0
    return A
