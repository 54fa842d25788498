"""The real graphs in ../shared/data, read with turbobc.read_graph (tests only)."""

from __future__ import annotations

from pathlib import Path

import scipy.sparse as sp

from turbobc import read_graph

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def load(name: str, *, directed: bool) -> sp.csr_array:
    """The graph in file ``name`` as a CSR pattern (symmetrized when not ``directed``)."""
    return read_graph(DATA / name, directed=directed)[0]
