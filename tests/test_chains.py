"""Folding the sources inside chains of degree-2 vertices into the chains' ends
(turbobc._chains) is exact: bc() equals networkx with the folding on graphs made of chains
(subdivided random graphs, grids and complete graphs), with loops (a cycle through one end),
parallel chains, a chain beside an edge between its ends, chains that tie with a detour,
trees hanging off chain vertices, cycles with no end, long chains left unfolded and
disconnected graphs, on every engine; and the folding did run. The same for weighted graphs
whose sums of lengths are exact (integers with many ties, quarters), on both CPU engines and the
GPU's layer kernels; lengths with inexact sums are not folded."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
from graph_cases import adjacency, shuffled, with_hanging_trees, with_lengths

from turbobc._api import run_bc
from turbobc._chains import ChainFolding, find_chains
from turbobc._graph import Graph
from turbobc._reduce import fold_trees
from turbobc.engines.protocol import SlotWeightsDeclined

# random graphs (here and in tests/test_edge_chains.py): the first 10 seeds in the first check,
# all 60 with the slow tests
SEEDS = [seed if seed < 10 else pytest.param(seed, marks=pytest.mark.slow)
         for seed in range(60)]


def _subdivided(G: nx.Graph, share: float, longest: int, seed: int) -> nx.Graph:
    """``G`` with a ``share`` of its edges replaced by paths of 2 .. longest + 1 edges."""
    rng = np.random.default_rng(seed)
    G = nx.convert_node_labels_to_integers(G)
    H = nx.Graph()
    H.add_nodes_from(G)
    new = G.number_of_nodes()
    for u, v, *_ in G.edges:
        if rng.random() < share:
            prev = u
            for _ in range(int(rng.integers(1, longest + 1))):
                H.add_edge(prev, new)
                prev, new = new, new + 1
            H.add_edge(prev, v)
        else:
            H.add_edge(u, v)
    return H


def random_chain_graph(seed: int) -> nx.Graph:
    """A random graph of 4 to 29 vertices, connected or not, a share of its edges subdivided
    into chains of 1 to 8 inner vertices, trees hung on it for odd seeds; shuffled."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 30))
    G = nx.gnm_random_graph(n, int(rng.integers(n - 1, 3 * n)), seed=seed)
    G = _subdivided(G, float(rng.uniform(0.2, 1.0)), int(rng.integers(1, 9)), seed)
    if seed % 2:
        G = with_hanging_trees(G, int(rng.integers(1, 12)), seed)
    return shuffled(G, seed)


def random_weighted_chain_graph(seed: int) -> nx.Graph:
    """:func:`random_chain_graph` with lengths of one exact kind (EXACT_LENGTHS, by seed)."""
    return EXACT_LENGTHS[sorted(EXACT_LENGTHS)[seed % 3]](random_chain_graph(seed), seed)


def _loops_and_parallels() -> nx.Graph:
    """K4 with: a loop of 3 inner vertices at 3, a loop of 2 at 0, two parallel chains of
    equal length between 1 and 2 (ties), a chain of 3 edges beside the edge 0-1 (detour),
    and a chain of 2 edges between 2 and 3 beside their edge (in-chain pairs tie round)."""
    G = nx.complete_graph(4)
    nx.add_path(G, [3, 10, 11, 12, 3])
    nx.add_path(G, [0, 13, 14, 0])
    nx.add_path(G, [1, 15, 16, 2])
    nx.add_path(G, [1, 17, 18, 2])
    nx.add_path(G, [0, 19, 20, 1])
    nx.add_path(G, [2, 21, 3])
    return G


GRAPHS = {
    "subdivided_gnm": lambda: shuffled(_subdivided(nx.gnm_random_graph(30, 60, seed=1),
                                                    0.7, 6, seed=2), 3),
    "subdivided_grid": lambda: _subdivided(nx.grid_2d_graph(5, 6), 0.5, 4, seed=4),
    "subdivided_k5": lambda: _subdivided(nx.complete_graph(5), 1.0, 5, seed=5),
    "chains_with_trees": lambda: shuffled(with_hanging_trees(_subdivided(
        nx.connected_watts_strogatz_graph(25, 4, 0.3, seed=6), 0.6, 5, seed=7), 30, seed=8),
        9),
    "loops_and_parallels": _loops_and_parallels,
    "cycle_with_chord": lambda: nx.Graph(list(nx.cycle_graph(12).edges) + [(0, 6)]),
    "barbell": lambda: nx.barbell_graph(4, 6),
    "theta": lambda: _subdivided(nx.MultiGraph([(0, 1), (0, 1), (0, 1)]), 1.0, 4, seed=10),
    "disconnected": lambda: nx.disjoint_union_all([
        _subdivided(nx.complete_graph(4), 1.0, 3, seed=11), nx.cycle_graph(7),
        nx.path_graph(5), nx.empty_graph(2), _subdivided(nx.petersen_graph(), 0.5, 3, 12)]),
}


def _folds_here() -> bool:
    """Whether the engine configuration folds chains: all but the GPU's layers family forced on
    an unweighted graph (the per-slot target weights run on the lanes and frontiers families)."""
    from turbobc._tuning import current

    return current().gpu_family != "layers"


def _inner_vertices(G) -> int:
    """Vertices inside chains of the core left once the trees are folded (when at least
    Tuning.fold_min_share = 5% of the vertices fold)."""
    graph = Graph(pattern=sp.csr_array(adjacency(G), dtype=np.float64), directed=False)
    folded = fold_trees(graph, min_folded=max(1, int(np.ceil(0.05 * graph.n))))
    return int(find_chains(graph if folded is None else folded.core).inner.size)


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("endpoints", [False, True])
def test_chain_folded_bc_equals_networkx(engine_config, name, normalized, endpoints):
    engine, kernel = engine_config
    G = GRAPHS[name]()
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0):
        result = run_bc(adjacency(G), normalized=normalized, endpoints=endpoints,
                        engine=engine, kernel=kernel)
    want = nx.betweenness_centrality(G, normalized=normalized, endpoints=endpoints)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)
    if _folds_here():
        assert result.facts["chain_folded"] > 0  # it did fold chain sources


@pytest.mark.parametrize("seed", SEEDS)
def test_random_chain_graphs_equal_networkx(seed, cpu_engine):
    """Random graphs, connected or not, with chains of 1 to 8 inner vertices and trees."""
    G = random_chain_graph(seed)
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0):
        result = run_bc(adjacency(G), normalized=False, engine=cpu_engine)
    want = nx.betweenness_centrality(G, normalized=False)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-9)
    assert result.facts.get("chain_folded", 0) == _inner_vertices(G)


def test_small_batches_take_helper_slots(cpu_engine):
    """Batches of a few slots: most chains have an end in another batch (a helper slot)."""
    G = GRAPHS["subdivided_gnm"]()
    A = adjacency(G)
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0,
                        cpu_batch_cap=8 * A.shape[0]):
        result = run_bc(A, engine=cpu_engine)
    want = nx.betweenness_centrality(G)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)
    assert result.facts["batches"] > 3


def test_long_chains_stay_unfolded(cpu_engine):
    G = _subdivided(nx.complete_graph(4), 1.0, 12, seed=13)
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0, chain_max_length=4):
        result = run_bc(adjacency(G), normalized=False, engine=cpu_engine)
    want = nx.betweenness_centrality(G, normalized=False)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-9)
    graph = Graph(pattern=sp.csr_array(adjacency(G), dtype=np.float64), directed=False)
    chains = find_chains(graph)
    short = chains.inner_count + 1 <= 4
    assert result.facts.get("chain_folded", 0) == int(chains.inner_count[short].sum())


@pytest.mark.parametrize("knob", [{"fold_chains": False}, {"chain_min_share": 0.99},
                                  {"fold_chains": "auto"}])  # auto: the GPU, large graphs
def test_folding_off_gives_the_same(knob, cpu_engine):
    G = GRAPHS["chains_with_trees"]()
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0):
        folded = run_bc(adjacency(G), engine=cpu_engine)
    with turbobc.tuning(**knob):
        plain = run_bc(adjacency(G), engine=cpu_engine)
    assert folded.facts["chain_folded"] > 0 and "chain_folded" not in plain.facts
    np.testing.assert_allclose(folded.values, plain.values, rtol=1e-12, atol=1e-12)


def test_directed_and_inexact_weighted_graphs_are_not_folded(cpu_engine):
    """A directed graph, and lengths whose float64 sums are not exact (0.1, 0.2, ...: a tie
    from one source is none from the next vertex), are swept as they are; integer lengths
    fold."""
    G = GRAPHS["subdivided_k5"]()
    A = adjacency(G)
    floats = adjacency(with_lengths(G, "float", seed=1))
    integers = adjacency(with_lengths(G, "int100", seed=1))
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0):
        directed = run_bc(A, directed=True, engine=cpu_engine)
        inexact = run_bc(floats, weight=True, engine=cpu_engine)
        exact = run_bc(integers, weight=True, engine=cpu_engine)
    assert "chain_folded" not in directed.facts and "chain_folded" not in inexact.facts
    assert exact.facts["chain_folded"] == _inner_vertices(G)


# lengths whose sums are exact in float64 (Graph.length_scale): integers with many ties, wide
# integers, and halves and quarters
EXACT_LENGTHS = {
    "int3": lambda G, seed: with_lengths(G, "int3", seed),
    "int100": lambda G, seed: with_lengths(G, "int100", seed),
    "quarters": lambda G, seed: _quarters(G, seed),
}


def _quarters(G: nx.Graph, seed: int) -> nx.Graph:
    """A copy of ``G`` with lengths 0.25 .. 3 in steps of 0.25."""
    G = G.copy()
    steps = np.random.default_rng(seed).integers(1, 13, G.number_of_edges())
    for (u, v), step in zip(G.edges, steps.tolist()):
        G.edges[u, v]["weight"] = step / 4
    return G

WEIGHTED_ENGINES = [pytest.param("graphblas", id="graphblas"), pytest.param("cpu", id="cpu"),
                    pytest.param("gpu", id="gpu", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("engine", WEIGHTED_ENGINES)
@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("kind", sorted(EXACT_LENGTHS))
@pytest.mark.parametrize("endpoints", [False, True])
def test_weighted_chain_folded_bc_equals_networkx(engine, name, kind, endpoints):
    """Weighted chains fold by lengths (positions along the chain, classes of h by the
    doubled positions): equal to networkx's weighted BC, and the folding did run."""
    G = EXACT_LENGTHS[kind](GRAPHS[name](), 7)
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0):
        result = run_bc(adjacency(G), weight=True, endpoints=endpoints,
                        engine=engine)
    want = nx.betweenness_centrality(G, weight="weight", endpoints=endpoints)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)
    assert result.facts["chain_folded"] > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_random_weighted_chain_graphs_equal_networkx(seed, cpu_engine):
    """Random graphs with chains and trees, lengths of every exact kind (many ties with
    1..3): the folded weighted BC equals networkx."""
    G = random_weighted_chain_graph(seed)
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0):
        result = run_bc(adjacency(G), weight=True, normalized=False,
                        engine=cpu_engine)
    want = nx.betweenness_centrality(G, weight="weight", normalized=False)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-9)
    assert result.facts.get("chain_folded", 0) == _inner_vertices(G)


def test_find_chains():
    """A theta graph (three paths between 0 and 1) and a loop at 0."""
    G = nx.Graph()
    nx.add_path(G, [0, 2, 3, 1])
    nx.add_path(G, [0, 4, 1])
    nx.add_path(G, [0, 5, 6, 7, 8, 0])
    G.add_edge(0, 1)
    A = nx.to_scipy_sparse_array(G, nodelist=range(9), format="csr")
    graph = Graph(pattern=sp.csr_array(A, dtype=np.float64), directed=False)
    chains = find_chains(graph)
    got = sorted((int(a), int(b), tuple(chains.inner[lo:hi].tolist()))
                 for a, b, lo, hi in zip(chains.first, chains.last, chains.offsets[:-1],
                                         chains.offsets[1:]))
    assert got == [(0, 0, (5, 6, 7, 8)), (0, 1, (2, 3)), (0, 1, (4,))]
    plan = ChainFolding(graph, np.ones(graph.n), chains)
    assert plan.sources.tolist() == [0, 1]
    # both ends in one batch, or the other end as a helper slot of each
    assert [b.tolist() for b in plan.batches(2)] == [[0, 1]]
    with pytest.raises(SlotWeightsDeclined, match="cannot hold source 0"):
        plan.batches(1)  # 0 and the other end of its chains, 1, take two slots


def _walked_chains(graph: Graph) -> list[tuple[int, int, tuple]]:
    """The chains found by walking them one vertex at a time (find_chains' first form, the
    oracle of its array passes): from each end pair (a, x), a of another degree beside a
    degree-2 x, in (a, x) order, unless x was walked already."""
    ptr, idx = graph.pattern.indptr, graph.pattern.indices
    degree = np.diff(ptr)
    pairs = sorted((int(a), int(x)) for x in np.flatnonzero(degree == 2)
                   for a in idx[ptr[x]:ptr[x + 1]] if degree[a] != 2)
    seen, chains = set(), []
    for a, x in pairs:
        if x in seen:
            continue
        prev, walk = a, []
        while degree[x] == 2 and x not in seen:
            seen.add(x)
            walk.append(x)
            y, z = (int(w) for w in idx[ptr[x]:ptr[x + 1]])
            prev, x = x, (z if y == prev else y)
        chains.append((a, x, tuple(walk)))
    return chains


@pytest.mark.parametrize("seed", range(40))
def test_find_chains_walks_each_chain_from_its_first_end(seed):
    """Every chain, its ends and its vertices from a to b, in the order of the chains' first
    end pairs, as the walk finds them: random chain graphs, cycles without ends, lone
    vertices, paths, grids."""
    rng = np.random.default_rng(seed)
    G = random_chain_graph(seed)
    if seed % 4 == 1:
        G = nx.disjoint_union_all([G, nx.cycle_graph(int(rng.integers(3, 9))),
                                   nx.path_graph(int(rng.integers(1, 7))), nx.empty_graph(2)])
    elif seed % 4 == 2:
        G = shuffled(nx.grid_2d_graph(int(rng.integers(1, 5)), int(rng.integers(2, 6))), seed)
    elif seed % 4 == 3:
        G = shuffled(_subdivided(nx.cycle_graph(int(rng.integers(3, 8))), 0.5, 4, seed), seed)
    G = nx.convert_node_labels_to_integers(G)
    A = nx.to_scipy_sparse_array(G, nodelist=range(G.number_of_nodes()), format="csr")
    graph = Graph(pattern=sp.csr_array(A, dtype=np.float64), directed=False)
    chains = find_chains(graph)
    got = [(int(a), int(b), tuple(chains.inner[lo:hi].tolist()))
           for a, b, lo, hi in zip(chains.first, chains.last, chains.offsets[:-1],
                                   chains.offsets[1:])]
    assert got == _walked_chains(graph)
    assert chains.inner.dtype == chains.first.dtype == chains.last.dtype == np.int64


def test_bad_knob_is_refused():
    G = GRAPHS["subdivided_k5"]()
    with turbobc.tuning(fold_chains="yes"), pytest.raises(ValueError, match="fold_chains"):
        run_bc(adjacency(G), engine="graphblas")


@pytest.mark.slow
def test_counts_past_float64_scaling(engine_config):
    """A chain of 540 diamonds beside a path of 1,080 edges (tests/test_overflow.py): counts
    pass 2^512, so levels are scaled and the tie shares of the diamonds' parallel chains
    (1 inner vertex each) read σ through the exponents; the path is one long chain whose ends
    also meet the long way round. Folded equals unfolded, which test_overflow.py checks
    against exact integers."""
    from test_overflow import diamond_chain_beside_path

    engine, kernel = engine_config
    A = diamond_chain_beside_path(540)
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0, chain_max_length=4096):
        folded = run_bc(A, normalized=False, engine=engine, kernel=kernel)
    with turbobc.tuning(fold_chains=False):
        plain = run_bc(A, normalized=False, engine=engine, kernel=kernel)
    if _folds_here():
        assert folded.facts["chain_folded"] > 1000
    np.testing.assert_allclose(folded.values, plain.values, rtol=1e-12, atol=1e-9)


def test_a_declined_plan_sweeps_unfolded(cpu_engine):
    """Batches of one slot cannot hold a source and the other end of its chains: the plan
    declines (SlotWeightsDeclined) and the call is swept unfolded, with the same values."""
    G = GRAPHS["subdivided_k5"]()
    A = adjacency(G)
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0, cpu_batch_cap=A.shape[0]):
        result = run_bc(A, engine=cpu_engine)
    assert "chain_folded" not in result.facts
    want = nx.betweenness_centrality(G)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)


class _Recorder:
    """A caller's progress object that is not a tqdm bar."""

    def __init__(self):
        self.updates = []

    def update(self, n=1):
        self.updates.append(n)


@pytest.mark.parametrize("progress", ["recorder", "tqdm"])
def test_a_plan_declined_midway_counts_each_source_once(monkeypatch, progress, cpu_engine):
    """The plan declines at its second batch: the call is swept unfolded with the same values,
    and a caller's progress object is told about every vertex exactly once."""
    import io

    from tqdm import tqdm

    from turbobc._chains import ChainFolding
    from turbobc.engines.protocol import SlotWeightsDeclined

    real = ChainFolding.add_target_weights

    def add_target_weights(self, index, counts):
        if index >= 1:
            raise SlotWeightsDeclined("declined for the test")
        return real(self, index, counts)

    monkeypatch.setattr(ChainFolding, "add_target_weights", add_target_weights)
    G = GRAPHS["subdivided_gnm"]()
    A = adjacency(G)
    bar = (_Recorder() if progress == "recorder"
           else tqdm(total=A.shape[0], file=io.StringIO()))  # drawn, out of sight
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0, cpu_batch_cap=16 * A.shape[0]):
        result = run_bc(A, engine=cpu_engine, progress=bar)
    assert "chain_folded" not in result.facts
    shown = sum(bar.updates) if progress == "recorder" else bar.n
    assert shown == A.shape[0]
    want = nx.betweenness_centrality(G)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-12)


def _two_triangles_joined_by(length: int) -> nx.Graph:
    G = nx.Graph([(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)])
    nx.add_path(G, [0] + list(range(6, 6 + length - 1)) + [3])
    return G


@pytest.mark.slow
@pytest.mark.parametrize("length", [1600, 2000])
def test_long_chains(engine_config, length):
    """Chains past the default chain_max_length, folded when it allows them: the GPU's class
    histograms of such a chain need more than 48 KiB of shared memory (opted in)."""
    engine, kernel = engine_config
    G = _two_triangles_joined_by(length)
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0, chain_max_length=4096):
        result = run_bc(adjacency(G), normalized=False, engine=engine, kernel=kernel)
    want = nx.betweenness_centrality(G, normalized=False)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-9)
    if _folds_here():
        assert result.facts["chain_folded"] == length - 1 + 4  # and two loops of 2


# graphs with 85 to 149 sources left after folding: several batches of 32 slots (the classes
# of GRAPHS leave about 30, one batch)
MANY_BATCHES = {
    "subdivided_gnm": lambda: shuffled(_subdivided(nx.gnm_random_graph(160, 320, seed=21), 0.7,
                                                    6, seed=22), 23),
    "chains_with_trees": lambda: shuffled(with_hanging_trees(_subdivided(
        nx.connected_watts_strogatz_graph(150, 4, 0.3, seed=24), 0.6, 5, seed=25), 60,
        seed=26), 27),
    "disconnected": lambda: nx.disjoint_union_all([
        _subdivided(nx.gnm_random_graph(60, 120, seed=28), 0.8, 4, seed=29), nx.cycle_graph(9),
        nx.path_graph(6), _subdivided(nx.petersen_graph(), 0.5, 3, 30),
        _subdivided(nx.complete_graph(12), 0.5, 5, seed=31)]),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(MANY_BATCHES))
def test_gpu_batches_of_32_slots(name):
    """Many batches of 32 slots on the GPU's lanes family: most chains have an end in another
    batch."""
    G = MANY_BATCHES[name]()
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0, max_batch=32,
                        gpu_family="lanes"):
        result = run_bc(adjacency(G), normalized=False, engine="gpu")
    want = nx.betweenness_centrality(G, normalized=False)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-9)
    assert result.facts["chain_folded"] > 0 and result.facts["batches"] > 2


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(MANY_BATCHES))
@pytest.mark.parametrize("endpoints", [False, True])
def test_gpu_frontiers_in_batches_of_16_slots(monkeypatch, name, endpoints):
    """The frontiers family's phased run (a block per slot, forward, the chains' terms,
    backward) in batches of 16 slots: most chains have an end in another batch, and a
    batch's helper slots sweep with no weight of their own."""
    from turbobc.engines.gpu.frontiers import FrontiersFamily

    monkeypatch.setattr(FrontiersFamily, "_blocks", lambda self, *args: 16)
    G = MANY_BATCHES[name]()
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0, gpu_family="frontiers"):
        result = run_bc(adjacency(G), normalized=False, endpoints=endpoints, engine="gpu")
    want = nx.betweenness_centrality(G, normalized=False, endpoints=endpoints)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-9)
    assert result.facts["chain_folded"] > 0 and result.facts["batches"] > 2
    assert result.facts["family"] == "frontiers" and result.facts["phased"] is True


@pytest.mark.gpu
def test_gpu_auto_folds_a_deep_graph_on_the_frontiers():
    """"auto" on a deep graph of folded chains (a 30 x 30 grid, every edge a chain of 24
    inner vertices, trees hung on it): the frontiers family's phased run, equal to the unfolded
    sweep to 1e-12 and to networkx on a smaller one."""
    for side, inner, check in ((30, 24, "unfolded"), (6, 5, "networkx")):
        G = nx.grid_2d_graph(side, side)
        H = nx.Graph()
        for k, (u, v) in enumerate(G.edges()):
            nx.add_path(H, [u] + [("inner", k, i) for i in range(inner)] + [v])
        H = with_hanging_trees(nx.convert_node_labels_to_integers(H), 40, seed=side)
        A = adjacency(H)
        with turbobc.tuning(chain_min_share=0.0, chain_min_vertices=0):
            folded = run_bc(A, normalized=False, engine="gpu")
        assert folded.facts["family"] == "frontiers" and folded.facts["phased"] is True
        assert folded.facts["chain_folded"] > 0
        if check == "unfolded":
            with turbobc.tuning(fold_chains=False):
                want = run_bc(A, normalized=False, engine="gpu").values
        else:
            nxbc = nx.betweenness_centrality(H, normalized=False)
            want = [nxbc[v] for v in H]
        np.testing.assert_allclose(folded.values, want, rtol=1e-12, atol=1e-9)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(MANY_BATCHES))
def test_gpu_weighted_chains_in_batches_of_24_slots(monkeypatch, name):
    """Weighted chains on the GPU's layer kernels in batches of 24 slots (the batch size
    forced): most chains have an end in another batch; equal to networkx."""
    from turbobc.engines.gpu import layers

    monkeypatch.setattr(layers, "choose_layers_batch", lambda *args, **kwargs: 24)
    G = with_lengths(MANY_BATCHES[name](), "int3", seed=3)
    with turbobc.tuning(fold_chains=True, chain_min_share=0.0):
        result = run_bc(adjacency(G), weight=True, normalized=False, engine="gpu")
    want = nx.betweenness_centrality(G, weight="weight", normalized=False)
    np.testing.assert_allclose(result.values, [want[v] for v in G], rtol=1e-12, atol=1e-9)
    assert result.facts["chain_folded"] > 0 and result.facts["batches"] > 2
