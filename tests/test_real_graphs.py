"""Real graphs shipped with the tests (tests/data) against networkx (exact where networkx is
quick enough, else the same sampled or explicit sources)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import turbobc
from data_files import load, path as data_path
from oracles import networkx_bc

# file, directed, how many sources: "all", ("k", k, seed) or ("every", step); the six that
# take longest on the CPU are left to the slow run (marker slow)
REAL_CASES = [
    pytest.param("delaunay_n10.mtx", False, "all", marks=pytest.mark.slow),
    pytest.param("road-minnesota.mtx", False, "all", marks=pytest.mark.slow),
    pytest.param("power.mtx", False, ("k", 300, 1), marks=pytest.mark.slow),
    pytest.param("as20000102.txt", False, ("k", 200, 2), marks=pytest.mark.slow),
    ("facebook_combined.txt.gz", False, ("every", 97)),
    ("email-Eu-core.txt.gz", True, ("k", 150, 3)),
    pytest.param("p2p-Gnutella08.txt", True, ("k", 200, 4), marks=pytest.mark.slow),
    pytest.param("wiki-Vote.txt.gz", True, ("k", 40, 5), marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("name", "directed", "how"), REAL_CASES,
                         ids=[getattr(case, "values", case)[0] for case in REAL_CASES])
def test_real_graph_matches_networkx(name, directed, how, engine_config):
    engine, kernel = engine_config
    A = load(name, directed=directed)
    G = nx.from_scipy_sparse_array(A, create_using=nx.DiGraph if directed else nx.Graph)
    if how == "all":
        expected = networkx_bc(G, selection="all", normalized=True, endpoints=False)
        got = turbobc.bc(A, engine=engine, kernel=kernel)
    elif how[0] == "k":
        _, k, seed = how
        expected = networkx_bc(G, selection="k", normalized=True, endpoints=False, k=k,
                               seed=seed)
        got = turbobc.bc(A, k=k, seed=seed, engine=engine, kernel=kernel)
    else:
        sources = list(range(0, A.shape[0], how[1]))
        expected = networkx_bc(G, selection="sources", normalized=False, endpoints=False,
                               sources=sources)
        got = turbobc.bc(A, sources=sources, normalized=False, engine=engine, kernel=kernel)
    assert got.shape == (A.shape[0],)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-13)
    assert np.count_nonzero(got) > A.shape[0] // 10  # the comparison is not between zeros


def test_the_gpu_tests_real_graphs_are_shipped():
    """The GPU tests (which skip here) read their real graphs from the same shipped files: a
    fresh clone on a GPU machine has every one of them."""
    from test_gpu_batched import REAL as batched_real
    from test_gpu_engine import REAL as single_real

    names = {row[0] for row in batched_real} | {row[0] for row in single_real}
    for name in sorted(names):
        assert data_path(name).is_file()
        assert load(name, directed=False).nnz > 0
