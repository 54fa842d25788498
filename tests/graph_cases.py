"""The catalogue of graphs the networkx oracle tests run on.

Each case is a networkx graph; tests convert it with ``nx.to_scipy_sparse_array``
in ``list(G)`` order, so position i of turbobc's result is node ``list(G)[i]``.
:func:`with_lengths` gives a case edge lengths for weighted BC.
"""

from __future__ import annotations

import networkx as nx
import numpy as np


def _random_dag(n: int, p: float, seed: int) -> nx.DiGraph:
    rng = np.random.default_rng(seed)
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    for u in range(n):
        for v in range(u + 1, n):
            if rng.random() < p:
                G.add_edge(u, v)
    return G


def _two_components() -> nx.Graph:
    G = nx.disjoint_union(nx.cycle_graph(7), nx.barbell_graph(4, 2))
    G.add_nodes_from(range(G.number_of_nodes(), G.number_of_nodes() + 3))  # isolated vertices
    return G


def _scale_free_directed(n: int, seed: int) -> nx.DiGraph:
    G = nx.DiGraph(nx.scale_free_graph(n, seed=seed))  # parallel edges collapse to one
    G.remove_edges_from(nx.selfloop_edges(G))
    return G


def _with_self_loops(G: nx.Graph) -> nx.Graph:
    G = G.copy()
    G.add_edges_from((v, v) for v in list(G)[::3])
    return G


def with_hanging_trees(core: nx.Graph, hanging: int, seed: int) -> nx.Graph:
    """``core`` (relabelled 0 .. n − 1) with ``hanging`` vertices attached one by one to
    random earlier vertices: trees of every shape hang off it (exact reductions' tests)."""
    rng = np.random.default_rng(seed)
    G = nx.convert_node_labels_to_integers(core)
    for _ in range(hanging):
        new = G.number_of_nodes()
        G.add_edge(new, int(rng.integers(0, new)))
    return G


def adjacency(G: nx.Graph):
    """G's adjacency matrix (CSR), its rows and columns in ``list(G)`` order."""
    return nx.to_scipy_sparse_array(G, nodelist=list(G), format="csr")


def shuffled(G: nx.Graph, seed: int) -> nx.Graph:
    """The same graph with its vertices in a random order (folded vertices spread out)."""
    order = list(G)
    np.random.default_rng(seed).shuffle(order)
    H = nx.Graph()
    H.add_nodes_from(order)
    H.add_edges_from(G.edges)
    return H


GRAPH_CASES = {
    # networkx's small named graphs
    "karate": lambda: nx.karate_club_graph(),
    "florentine": lambda: nx.florentine_families_graph(),
    "les_miserables": lambda: nx.les_miserables_graph(),
    "davis_southern_women": lambda: nx.davis_southern_women_graph(),
    "petersen": lambda: nx.petersen_graph(),
    "tutte": lambda: nx.tutte_graph(),
    "dodecahedral": lambda: nx.dodecahedral_graph(),
    "krackhardt_kite": lambda: nx.krackhardt_kite_graph(),
    "frucht": lambda: nx.frucht_graph(),
    "house_x": lambda: nx.house_x_graph(),
    "bull": lambda: nx.bull_graph(),
    # regular shapes
    "path": lambda: nx.path_graph(9),
    "cycle": lambda: nx.cycle_graph(10),
    "star": lambda: nx.star_graph(8),
    "complete": lambda: nx.complete_graph(7),
    "wheel": lambda: nx.wheel_graph(9),
    "barbell": lambda: nx.barbell_graph(5, 3),
    "lollipop": lambda: nx.lollipop_graph(5, 4),
    "ladder": lambda: nx.ladder_graph(8),
    "grid_6x7": lambda: nx.grid_2d_graph(6, 7),
    "grid_deep_2x40": lambda: nx.grid_2d_graph(2, 40),
    "hypercube": lambda: nx.hypercube_graph(4),
    # trees
    "balanced_tree": lambda: nx.balanced_tree(2, 4),
    "binomial_tree": lambda: nx.binomial_tree(5),
    "random_tree": lambda: nx.random_labeled_tree(40, seed=7),
    # random undirected, including disconnected ones and isolated vertices
    "gnp_dense": lambda: nx.gnp_random_graph(35, 0.3, seed=1),
    "gnp_sparse_isolated": lambda: nx.gnp_random_graph(60, 0.03, seed=2),
    "gnp_medium": lambda: nx.gnp_random_graph(80, 0.08, seed=3),
    "two_components_isolated": _two_components,
    "edgeless": lambda: nx.empty_graph(6),
    "watts_strogatz": lambda: nx.connected_watts_strogatz_graph(50, 4, 0.2, seed=4),
    "barabasi_albert": lambda: nx.barabasi_albert_graph(70, 3, seed=5),
    "self_loops": lambda: _with_self_loops(nx.gnp_random_graph(25, 0.2, seed=6)),
    # directed
    "digraph_gnp": lambda: nx.gnp_random_graph(40, 0.08, seed=8, directed=True),
    "digraph_sparse_unreachable": lambda: nx.gnp_random_graph(50, 0.03, seed=9, directed=True),
    "digraph_dense": lambda: nx.gnp_random_graph(25, 0.35, seed=10, directed=True),
    "dag": lambda: _random_dag(40, 0.1, seed=11),
    "directed_cycle": lambda: nx.cycle_graph(9, create_using=nx.DiGraph),
    "directed_star_out": lambda: nx.star_graph(6, create_using=nx.DiGraph),
    "scale_free_directed": lambda: _scale_free_directed(80, seed=12),
    "directed_self_loops": lambda: _with_self_loops(
        nx.gnp_random_graph(30, 0.1, seed=13, directed=True)),
}


LENGTH_KINDS = {
    "int3": lambda rng, size: rng.integers(1, 4, size),        # many ties
    "int100": lambda rng, size: rng.integers(1, 101, size),
    "float": lambda rng, size: rng.uniform(0.05, 2.0, size),   # ties only where sums agree
}
"""Random edge lengths for weighted BC: kind -> (rng, number of edges) -> lengths."""


def with_lengths(G: nx.Graph, kind: str, seed: int, attribute: str = "weight") -> nx.Graph:
    """A copy of ``G`` whose edges carry random lengths of ``kind`` (:data:`LENGTH_KINDS`) in
    ``attribute``, drawn in ``G.edges`` order from ``seed``."""
    G = G.copy()
    edges = list(G.edges(keys=True) if G.is_multigraph() else G.edges())
    lengths = LENGTH_KINDS[kind](np.random.default_rng(seed), len(edges)).tolist()
    for edge, length in zip(edges, lengths):
        G.edges[edge][attribute] = length
    return G
