"""networkx as the oracle: every graph class x normalized x endpoints x directed x
(all sources | k with seed | explicit sources), for every engine and kernel."""

from __future__ import annotations

from contextlib import nullcontext

import networkx as nx
import numpy as np
import pytest

import turbobc
from graph_cases import GRAPH_CASES
from oracles import networkx_bc

RTOL, ATOL = 1e-11, 1e-13


def _case(case: str, directed_mode: str):
    """The graph of a case, its node order, its matrix and the ``directed`` to pass."""
    G = GRAPH_CASES[case]()
    if directed_mode == "as_directed":
        G = G.to_directed()
    nodes = list(G)
    A = nx.to_scipy_sparse_array(G, nodelist=nodes, weight=None, format="csr")
    return G, nodes, A, (True if directed_mode == "as_directed" else None)


def _selection_args(G, selection: str, case_index: int) -> dict:
    nodes = list(G)
    if selection == "k":
        return {"k": max(1, len(nodes) // 3), "seed": 1000 + case_index}
    if selection == "sources":
        return {"sources": nodes[::3]}
    return {}


@pytest.mark.parametrize("case", sorted(GRAPH_CASES))
@pytest.mark.parametrize("directed_mode", ["inferred", "as_directed"])
def test_matches_networkx(case, directed_mode, engine_config):
    engine, kernel = engine_config
    G, nodes, A, directed = _case(case, directed_mode)
    index = {v: i for i, v in enumerate(nodes)}
    case_index = sorted(GRAPH_CASES).index(case)
    for selection in ("all", "k", "sources"):
        args = _selection_args(G, selection, case_index)
        ours_args = dict(args)
        if "sources" in ours_args:
            ours_args["sources"] = [index[v] for v in args["sources"]]
        for normalized in (True, False):
            for endpoints in (False, True):
                expected = networkx_bc(G, selection=selection, normalized=normalized,
                                       endpoints=endpoints, **args)
                # k = 1 without endpoints: networkx's NaN at the source, and our warning
                nan_expected = args.get("k") == 1 and not endpoints
                with pytest.warns(RuntimeWarning) if nan_expected else nullcontext():
                    got = turbobc.bc(A, normalized=normalized, endpoints=endpoints,
                                     directed=directed, engine=engine, kernel=kernel,
                                     **ours_args)
                np.testing.assert_allclose(
                    got, expected, rtol=RTOL, atol=ATOL,
                    err_msg=f"{case} {directed_mode} {selection} normalized={normalized} "
                            f"endpoints={endpoints}")


def test_oracle_grid_size():
    """The grid above covers at least 30 graph classes, directed and undirected."""
    graphs = [make() for make in GRAPH_CASES.values()]
    assert len(graphs) >= 30
    assert sum(G.is_directed() for G in graphs) >= 6
    assert sum(not nx.is_weakly_connected(G) if G.is_directed() else not nx.is_connected(G)
               for G in graphs if len(G)) >= 5


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_k_sampling_equals_networkx_sources(seed, engine_config):
    """With the same seed turbobc samples the same sources as networkx: k=1 puts the
    sampled source's NaN (networkx's 0/0) at the same vertex."""
    engine, kernel = engine_config
    G = nx.gnp_random_graph(40, 0.1, seed=3)
    A = nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")
    expected = networkx_bc(G, selection="k", normalized=True, endpoints=False, k=1, seed=seed)
    with pytest.warns(RuntimeWarning, match=r"k=1 .* NaN, as networkx returns it"):
        got = turbobc.bc(A, k=1, seed=seed, engine=engine, kernel=kernel)
    assert np.isnan(expected).sum() == 1
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_networkx_graph_input_keeps_node_order_and_labels(engine_config):
    """A networkx graph is accepted: result in list(G) order, sources given as labels."""
    engine, kernel = engine_config
    G = nx.florentine_families_graph()
    expected = networkx_bc(G, selection="all", normalized=True, endpoints=False)
    np.testing.assert_allclose(turbobc.bc(G, engine=engine, kernel=kernel), expected,
                               rtol=RTOL, atol=ATOL)
    chosen = ["Medici", "Strozzi", "Pazzi"]
    expected = networkx_bc(G, selection="sources", normalized=False, endpoints=False,
                           sources=chosen)
    got = turbobc.bc(G, sources=chosen, normalized=False, engine=engine, kernel=kernel)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_directed_networkx_graph_with_symmetric_pattern_stays_directed(engine_config):
    engine, kernel = engine_config
    G = nx.cycle_graph(6).to_directed()
    expected = networkx_bc(G, selection="all", normalized=False, endpoints=False)
    got = turbobc.bc(G, normalized=False, engine=engine, kernel=kernel)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    # the same pattern as a matrix is inferred undirected: half the raw values
    A = nx.to_scipy_sparse_array(G, format="csr")
    np.testing.assert_allclose(turbobc.bc(A, normalized=False, engine=engine, kernel=kernel),
                               expected / 2, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("case", sorted(GRAPH_CASES))
@pytest.mark.parametrize("directed_mode", ["inferred", "as_directed"])
def test_single_sources_match_networkx(case, directed_mode, engine_config):
    """One source per call: on the GPU this is the single-source engine (the paper's
    pipeline), where more sources go through the batched one."""
    engine, kernel = engine_config
    G, nodes, A, directed = _case(case, directed_mode)
    for position in sorted({0, len(nodes) // 2, len(nodes) - 1}):
        for endpoints in (False, True):
            expected = networkx_bc(G, selection="sources", normalized=False,
                                   endpoints=endpoints, sources=[nodes[position]])
            got = turbobc.bc(A, sources=[position], normalized=False, endpoints=endpoints,
                             directed=directed, engine=engine, kernel=kernel)
            np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL,
                                       err_msg=f"{case} {directed_mode} source {position}")
