"""The real graphs the tests read (tests only).

``tests/data/`` holds ten small graphs copied byte for byte from a curated public set (see
``tests/data/README.md``); ego-Facebook, the demo graph, ships inside the package. These are
always present, so no test that reads them may skip.

The large set (29 graphs, up to 114,599 vertices) is not in the repository. Only
benchmark-scale tests read it: they call :func:`large_data` and skip, saying why, when it is
absent (they also carry the ``large_data`` marker). It is looked for in the folder named by
``TURBOBC_LARGE_DATA``, else where the CI machine places it beside the checkout;
``TURBOBC_REQUIRE_LARGE_DATA=1`` (set by ``.ci/run`` where the folder exists) turns the skip
into a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import scipy.sparse as sp

from turbobc import read_graph

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
"""The small graphs shipped with the tests."""

PACKAGE_DATA = ROOT / "turbobc" / "data"
"""Graphs shipped inside the package (ego-Facebook)."""

SMALL_GRAPHS = ("delaunay_n10.mtx", "delaunay_n11.mtx", "delaunay_n12.mtx", "power.mtx",
                "road-minnesota.mtx", "as20000102.txt", "ca-GrQc.txt.gz",
                "email-Eu-core.txt.gz", "p2p-Gnutella08.txt", "wiki-Vote.txt.gz",
                "facebook_combined.txt.gz")
"""Every graph :func:`path` finds without the large set."""


def path(name: str) -> Path:
    """The file of a small graph: ``tests/data/NAME``, or the package's copy of ego-Facebook."""
    for folder in (DATA, PACKAGE_DATA):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"{name} is not one of the graphs shipped with the tests "
                            f"({', '.join(SMALL_GRAPHS)})")


def load(name: str, *, directed: bool) -> sp.csr_array:
    """The small graph ``name`` as a CSR pattern (symmetrized when not ``directed``)."""
    return read_graph(path(name), directed=directed)[0]


def large_data() -> Path:
    """The folder of the large real-graph set; skips the calling test when it is absent."""
    configured = os.environ.get("TURBOBC_LARGE_DATA")
    folder = Path(configured) if configured else ROOT.parent / "shared" / "data"
    if folder.is_dir():
        return folder
    reason = (f"benchmark-scale test: the large real-graph set (29 graphs, 17 MB) is not at "
              f"{folder}; set TURBOBC_LARGE_DATA to its folder to run this test")
    if os.environ.get("TURBOBC_REQUIRE_LARGE_DATA") == "1":
        pytest.fail(reason)
    pytest.skip(reason)
