"""turbobc.read_graph: the shipped graphs (and, where present, the large set) load with the
curator's n and m, the formats' corner cases, edge lengths with weighted=True (DIMACS .gr,
weighted Matrix Market, a third column, METIS edge weights), and malformed files name the file
and the line."""

from __future__ import annotations

import doctest
import gzip
import re

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import turbobc
import turbobc.io._dimacs
import turbobc.io._matrix_market
import turbobc.io._readers
from data_files import SMALL_GRAPHS, large_data, path as data_path
from turbobc.io._readers import load

HAS_FAST = turbobc.io._matrix_market.fast_reader() is not None
MTX_READERS = [pytest.param("fast_matrix_market", marks=pytest.mark.skipif(
                   not HAS_FAST, reason="fast_matrix_market is in the test extra "
                                        "(pip install '.[test]')")),
               "scipy"]
"""Matrix Market files are read both ways: fast_matrix_market and scipy.io.mmread."""


def pytest_generate_tests(metafunc):
    """Every Matrix Market test (named ..._mtx_... or ..._matrix_market_...) runs with each
    reader of :data:`MTX_READERS`."""
    name = metafunc.function.__name__
    if "mtx_reader" in metafunc.fixturenames and ("mtx" in name or "matrix_market" in name):
        metafunc.parametrize("mtx_reader", MTX_READERS, indirect=True)


@pytest.fixture(autouse=True)
def mtx_reader(request, monkeypatch):
    """The Matrix Market reader of a test: ``"scipy"`` hides fast_matrix_market (as a machine
    without the extra); other tests read as installed."""
    reader = getattr(request, "param", "auto")
    if reader == "scipy":
        monkeypatch.setattr(turbobc.io._matrix_market, "fast_reader", lambda: None)
    return reader

# Copied from the statistics table of the curated real-graph set these files come from (its
# README, "The datasets"), computed by the set's curator with numpy/scipy, not by our reader:
# file, dir (U/D), n, m (undirected edges once, arcs for D, self loops and repeats ignored),
# max (out-)degree, the lowest-indexed max-degree vertex in the ids the file uses. The rows of
# the graphs shipped in tests/data (and the package's ego-Facebook) always run; the others
# are benchmark-scale and run where the large set is present.
README_TABLE = [
    ("facebook_combined.txt.gz", "U", 4039, 88234, 1045, 107),
    ("ego-Twitter-undirected.mtx.gz", "U", 81306, 1342296, 3383, 7511),
    ("wiki-Vote.txt.gz", "D", 7115, 103689, 893, 2565),
    ("email-Enron.txt.gz", "U", 36692, 183831, 1383, 5038),
    ("email-Eu-core.txt.gz", "D", 1005, 24929, 333, 160),
    ("ca-GrQc.txt.gz", "U", 5242, 14484, 81, 21012),
    ("CA-HepTh.txt.gz", "U", 9877, 25973, 65, 1441),
    ("CA-CondMat.txt.gz", "U", 23133, 93439, 279, 73647),
    ("astro-ph.mtx.gz", "U", 16706, 121251, 360, 5503),
    ("PGPgiantcompo.mtx", "U", 10680, 24316, 205, 1144),
    ("cit-HepTh.mtx.gz", "D", 27770, 352768, 562, 812),
    ("cit-HepPh.mtx.gz", "D", 34546, 421534, 411, 8181),
    ("p2p-Gnutella08.txt", "D", 6301, 20777, 48, 5831),
    ("p2p-Gnutella31.txt.gz", "D", 62586, 147892, 78, 5319),
    ("as20000102.txt", "U", 6474, 12572, 1458, 1),
    ("as-caida20070917.txt.gz", "U", 8020, 18203, 1452, 701),
    ("as-caida20071105.mtx.gz", "U", 26475, 53381, 2628, 2229),
    ("power.mtx", "U", 4941, 6594, 19, 2554),
    ("road-luxembourg-osm.mtx.gz", "U", 114599, 119666, 6, 6398),
    ("road-minnesota.mtx", "U", 2642, 3303, 5, 2418),
    ("delaunay_n10.mtx", "U", 1024, 3056, 12, 561),
    ("delaunay_n11.mtx", "U", 2048, 6127, 13, 984),
    ("delaunay_n12.mtx", "U", 4096, 12264, 14, 1967),
    ("delaunay_n13.mtx", "U", 8192, 24547, 12, 3977),
    ("delaunay_n14.mtx.gz", "U", 16384, 49122, 16, 7888),
    ("delaunay_n15.mtx.gz", "U", 32768, 98274, 18, 10112),
    ("delaunay_n16.mtx.gz", "U", 65536, 196575, 17, 27895),
    ("4elt.mtx.gz", "U", 15606, 45878, 10, 14132),
    ("wing.mtx.gz", "U", 62032, 121544, 4, 4959),
]
SHIPPED_ROWS = [row for row in README_TABLE if row[0] in SMALL_GRAPHS]
LARGE_ROWS = [row for row in README_TABLE if row[0] not in SMALL_GRAPHS]

# The same README's "Provenance" table: self-loop counts, and the id ranges of the SNAP files.
README_SELF_LOOPS = {"email-Eu-core.txt.gz": 642, "ca-GrQc.txt.gz": 12, "CA-HepTh.txt.gz": 25,
                     "CA-CondMat.txt.gz": 58, "as20000102.txt": 1323}
README_ID_RANGES = {"ca-GrQc.txt.gz": (13, 26196), "CA-HepTh.txt.gz": (1, 68745),
                    "CA-CondMat.txt.gz": (1, 108299), "wiki-Vote.txt.gz": (3, 8297),
                    "as-caida20070917.txt.gz": (3, 65535)}


def test_every_shipped_graph_has_its_readme_row():
    assert {row[0] for row in SHIPPED_ROWS} == set(SMALL_GRAPHS)
    assert all(data_path(name).is_file() for name in SMALL_GRAPHS)


@pytest.mark.parametrize("name, kind, n, m, max_degree, max_degree_vertex", SHIPPED_ROWS,
                         ids=[row[0] for row in SHIPPED_ROWS])
def test_shipped_graph_loads_with_readme_counts(name, kind, n, m, max_degree,
                                                max_degree_vertex):
    _check_readme_row(data_path(name), kind, n, m, max_degree, max_degree_vertex)


@pytest.mark.large_data
def test_the_table_lists_every_graph_of_the_large_set():
    folder = large_data()
    on_disk = {p.name for p in folder.iterdir() if p.name != "README.md"}
    assert on_disk == {row[0] for row in README_TABLE}


@pytest.mark.large_data
@pytest.mark.parametrize("name, kind, n, m, max_degree, max_degree_vertex", LARGE_ROWS,
                         ids=[row[0] for row in LARGE_ROWS])
def test_large_set_graph_loads_with_readme_counts(name, kind, n, m, max_degree,
                                                  max_degree_vertex):
    _check_readme_row(large_data() / name, kind, n, m, max_degree, max_degree_vertex)


def _check_readme_row(path, kind, n, m, max_degree, max_degree_vertex):
    directed = kind == "D"
    # .mtx files say their direction ('general' or 'symmetric'); an edge list is told it (some
    # SNAP headers call an undirected graph listed both ways a "Directed graph")
    flag = None if ".mtx" in path.name else directed
    graph = load(path, directed=flag)
    assert graph.directed is directed
    assert (graph.n, graph.m) == (n, m)
    A, labels = turbobc.read_graph(path, directed=flag)
    assert A.shape == (n, n) and len(labels) == n
    degree = np.diff(A.indptr)  # out-degree, as the README defines it for D graphs
    assert degree.max() == max_degree
    assert labels[int(np.argmax(degree))] == max_degree_vertex
    assert graph.self_loops == README_SELF_LOOPS.get(path.name, 0)
    if path.name in README_ID_RANGES:
        assert (labels[0], labels[-1]) == README_ID_RANGES[path.name]
    if ".mtx" in path.name:
        np.testing.assert_array_equal(labels, np.arange(1, n + 1))
    np.testing.assert_array_equal(A.data, 1.0)
    assert A.has_sorted_indices and A.diagonal().sum() == 0


def test_docstring_example_runs():
    result = doctest.testmod(turbobc.io._readers, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def _write(path, text, *, compress=False):
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def _edges(A, labels):
    """Edges of a pattern as a set of (label, label) pairs."""
    coo = sp.coo_array(A)
    return {(labels[i].item() if hasattr(labels[i], "item") else labels[i],
             labels[j].item() if hasattr(labels[j], "item") else labels[j])
            for i, j in zip(coo.row, coo.col)}


SNAP_TEXT = ("# Directed graph (each unordered pair of nodes is saved once): x.txt\r\n"
             "# FromNodeId\tToNodeId\r\n"
             "30\t1412\r\n"
             "1412\t30\r\n"
             "\r\n"
             "7 7\r\n"
             "30\t9\t-1\r\n")


def test_snap_edge_list_as_undirected(tmp_path):
    A, labels = turbobc.read_graph(_write(tmp_path / "x.txt", SNAP_TEXT), directed=False)
    assert labels.tolist() == [7, 9, 30, 1412]
    assert labels.dtype == np.int64
    expected = nx.Graph([(30, 1412), (30, 9)])
    expected.add_node(7)  # only a self loop: kept, isolated
    assert _edges(A, labels) == {(u, v) for u, v in expected.to_directed().edges}


def test_snap_edge_list_as_directed(tmp_path):
    graph = load(_write(tmp_path / "x.txt", SNAP_TEXT), directed=True)
    assert graph.directed and graph.m == 3 and graph.self_loops == 1
    assert _edges(graph.matrix, graph.labels) == {(30, 1412), (1412, 30), (30, 9)}


def test_snap_header_says_the_direction(tmp_path):
    body = "# FromNodeId\tToNodeId\r\n1\t2\r\n2\t3\r\n"
    directed = _write(tmp_path / "d.txt", "# Directed graph (each unordered pair of nodes is "
                                          "saved once): d.txt\r\n" + body)
    undirected = _write(tmp_path / "u.txt", "# Undirected graph: u.txt\r\n" + body)
    silent = _write(tmp_path / "s.txt", "# a comment\n" + body)
    late = _write(tmp_path / "l.txt", body + "# Directed graph\n")  # not a header: ignored
    arcs, edges = {(1, 2), (2, 3)}, {(1, 2), (2, 1), (2, 3), (3, 2)}
    cases = [(directed, None, True, arcs), (directed, False, False, edges),
             (undirected, None, False, edges), (undirected, True, True, arcs),
             (silent, None, False, edges), (late, None, False, edges)]
    for path, flag, expected, pairs in cases:
        graph = load(path, directed=flag)
        assert graph.directed is expected, (path.name, flag)
        assert _edges(graph.matrix, graph.labels) == pairs
    assert load(directed).header_directed is True and load(silent).header_directed is None
    assert load(undirected, directed=True).header_directed is False


def test_snap_headers_of_the_shipped_graphs():
    # p2p-Gnutella08 and wiki-Vote say "Directed graph", as20000102 "Undirected graph",
    # email-Eu-core has no header (its first line is an edge)
    for name, directed in [("p2p-Gnutella08.txt", True), ("wiki-Vote.txt.gz", True),
                           ("as20000102.txt", False), ("email-Eu-core.txt.gz", False)]:
        assert load(data_path(name)).directed is directed, name


@pytest.mark.parametrize("name", ["as20000102.txt", "ca-GrQc.txt.gz"])
def test_appearance_is_networkx_read_edgelist_node_order(name):
    graph = load(data_path(name))
    G = nx.read_edgelist(data_path(name), nodetype=int)
    assert graph.labels[graph.file_order].tolist() == list(G)
    assert sorted(G) == graph.labels.tolist()


def test_matrix_market_file_order_is_the_index_order(tmp_path):
    graph = load(_mtx(tmp_path / "o.mtx", "general\n3 3 2\n3 1\n2 1\n"))
    assert graph.appearance is None and graph.file_order.tolist() == [0, 1, 2]


def test_gzip_and_plain_read_the_same(tmp_path):
    plain = turbobc.read_graph(_write(tmp_path / "x.txt", SNAP_TEXT))
    packed = turbobc.read_graph(_write(tmp_path / "x.txt.gz", SNAP_TEXT, compress=True))
    assert (plain[0] != packed[0]).nnz == 0
    np.testing.assert_array_equal(plain[1], packed[1])


@pytest.mark.parametrize("suffix, sep", [(".csv", ","), (".tsv", "\t")])
def test_csv_tsv_with_names_and_header(tmp_path, suffix, sep):
    text = sep.join(["source", "target", "weight"]) + "\n" + "\n".join(
        sep.join(row) for row in [("bob", "alice", "2"), ("alice", "carol", "1"),
                                  ("carol", "bob", "5"), ("dave", "dave", "1")]) + "\n"
    A, labels = turbobc.read_graph(_write(tmp_path / f"g{suffix}", text))
    assert labels.tolist() == ["bob", "alice", "carol", "dave"]  # order of first appearance
    triangle = nx.Graph([("bob", "alice"), ("alice", "carol"), ("carol", "bob")])
    assert _edges(A, labels) == set(triangle.to_directed().edges)


def test_csv_names_in_networkx_read_edgelist_order(tmp_path):
    # the second name of line 1 comes before the first name of line 2
    path = _write(tmp_path / "o.csv", "ann,bea\ncid,ann\ndan,bea\n")
    _, labels = turbobc.read_graph(path)
    assert labels.tolist() == list(nx.read_edgelist(path, delimiter=","))
    assert labels.tolist() == ["ann", "bea", "cid", "dan"]


def test_csv_integer_ids_with_header_and_without(tmp_path):
    with_header = turbobc.read_graph(_write(tmp_path / "a.csv", "u,v\n5,3\n3,10\n"))
    without = turbobc.read_graph(_write(tmp_path / "b.csv", "5,3\n3,10\n"))
    for A, labels in (with_header, without):
        assert labels.tolist() == [3, 5, 10]
        assert _edges(A, labels) == {(3, 5), (5, 3), (3, 10), (10, 3)}
    odd_header = turbobc.read_graph(_write(tmp_path / "c.csv", "who,whom\n5,3\n"))
    assert odd_header[1].tolist() == [3, 5]


def test_csv_quoted_names(tmp_path):
    A, labels = turbobc.read_graph(_write(tmp_path / "q.csv",
                                          '"Smith, J.",Doe\nDoe,"O\'Neil, K."\n'))
    assert labels.tolist() == ["Smith, J.", "Doe", "O'Neil, K."]
    assert _edges(A, labels) == {("Smith, J.", "Doe"), ("Doe", "Smith, J."),
                                 ("Doe", "O'Neil, K."), ("O'Neil, K.", "Doe")}


def test_format_argument_overrides_the_suffix(tmp_path):
    path = _write(tmp_path / "edges.dat", "1,2\n2,3\n")
    A, labels = turbobc.read_graph(path, format="csv")
    assert labels.tolist() == [1, 2, 3] and A.nnz == 4


def _mtx(path, text):
    return _write(path, "%%MatrixMarket matrix coordinate pattern " + text)


def test_matrix_market_direction_from_the_header(tmp_path):
    symmetric = _mtx(tmp_path / "s.mtx", "symmetric\n% comment\n4 4 3\n2 1\n3 2\n3 3\n")
    graph = load(symmetric)
    assert not graph.directed and graph.m == 2 and graph.self_loops == 1
    assert graph.labels.tolist() == [1, 2, 3, 4]  # the declared dimension: vertex 4 isolated
    assert _edges(graph.matrix, graph.labels) == {(1, 2), (2, 1), (2, 3), (3, 2)}
    as_directed = load(symmetric, directed=True)
    assert as_directed.directed and as_directed.m == 4

    general = _mtx(tmp_path / "g.mtx.gz", "general\n3 3 2\n1 2\n2 3\n")
    general.write_bytes(gzip.compress(general.read_bytes()))
    graph = load(general)
    assert graph.directed and _edges(graph.matrix, graph.labels) == {(1, 2), (2, 3)}
    assert load(general, directed=False).m == 2


def test_matrix_market_values_and_explicit_zeros(tmp_path):
    path = _write(tmp_path / "r.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                      "3 3 3\n1 2 2.5\n2 3 0\n3 1 -1\n")
    graph = load(path)
    assert _edges(graph.matrix, graph.labels) == {(1, 2), (3, 1)}
    np.testing.assert_array_equal(graph.matrix.data, 1.0)


METIS_MANUAL = """% the example graph of the METIS manual (Figure 2)
7 11
5 3 2
1 3 4
5 4 2 1
2 3 6 7
1 3 6
5 4 7
6 4
"""
METIS_MANUAL_ADJ = {1: [5, 3, 2], 2: [1, 3, 4], 3: [5, 4, 2, 1], 4: [2, 3, 6, 7],
                    5: [1, 3, 6], 6: [5, 4, 7], 7: [6, 4]}


def test_metis_manual_example(tmp_path):
    graph = load(_write(tmp_path / "m.graph", METIS_MANUAL))
    assert not graph.directed and (graph.n, graph.m) == (7, 11)
    expected = nx.Graph(nx.from_dict_of_lists(METIS_MANUAL_ADJ))
    assert _edges(graph.matrix, graph.labels) == set(expected.to_directed().edges)


def test_metis_weights_and_isolated_vertices(tmp_path):
    # fmt 011: one vertex weight, then (neighbour, edge weight) pairs; vertex 4 has no edges
    text = "% weighted\n4 2 011\n7 2 9\n8 1 9 3 4\n6 2 4\n5\n"
    graph = load(_write(tmp_path / "w.graph", text))
    assert (graph.n, graph.m) == (4, 2)
    assert _edges(graph.matrix, graph.labels) == {(1, 2), (2, 1), (2, 3), (3, 2)}
    two_weights = "3 1 111 2\n1 5 5 2 9\n1 5 5 1 9\n1 5 5\n"  # size, 2 vertex weights, edges
    graph = load(_write(tmp_path / "v.graph", two_weights))
    assert _edges(graph.matrix, graph.labels) == {(1, 2), (2, 1)} and graph.n == 3
    # without weights, an empty line is a vertex without neighbours
    graph = load(_write(tmp_path / "e.graph", "3 1\n2\n1\n\n"))
    assert graph.n == 3 and _edges(graph.matrix, graph.labels) == {(1, 2), (2, 1)}


def test_metis_of_a_real_graph_equals_its_matrix_market(tmp_path):
    A, labels = turbobc.read_graph(data_path("delaunay_n10.mtx"))
    lines = [f"{A.shape[0]} {A.nnz // 2}"]
    lines += [" ".join(str(j + 1) for j in A.indices[A.indptr[i]:A.indptr[i + 1]])
              for i in range(A.shape[0])]
    B, metis_labels = turbobc.read_graph(_write(tmp_path / "d.graph", "\n".join(lines) + "\n"))
    assert (A != B).nnz == 0
    np.testing.assert_array_equal(labels, metis_labels)


def test_read_graph_feeds_bc_like_networkx(tmp_path):
    G = nx.les_miserables_graph()
    path = tmp_path / "les.tsv"
    path.write_text("".join(f"{u}\t{v}\n" for u, v in G.edges))
    A, labels = turbobc.read_graph(path)
    ours = dict(zip(labels.tolist(), turbobc.bc(A, engine="graphblas").tolist()))
    theirs = nx.betweenness_centrality(G)
    assert ours.keys() == theirs.keys()
    assert all(ours[v] == pytest.approx(theirs[v], rel=1e-12, abs=1e-15) for v in G)


# --------------------------------------------------------------------------- malformed files

def _raises_at(path, line, match, **kwargs):
    with pytest.raises(ValueError, match=re.escape(f"{path}, line {line}") + ".*" + match):
        load(path, **kwargs)


def test_snap_line_with_one_field(tmp_path):
    path = _write(tmp_path / "x.txt", "# c\n1 2\n3\n")
    _raises_at(path, 3, "expected two vertex ids separated by white space; got '3'")


def test_snap_non_integer_id(tmp_path):
    path = _write(tmp_path / "x.txt.gz", "1 2\r\n2 3\r\n3 abc\r\n", compress=True)
    _raises_at(path, 3, re.escape("SNAP vertex ids are integers; got 'abc' (read names with "
                                  "format='csv' or 'tsv')"))


def test_snap_id_beyond_64_bits(tmp_path):
    path = _write(tmp_path / "x.txt", "1 2\n2 99999999999999999999\n")
    _raises_at(path, 2, "vertex id 99999999999999999999 does not fit in 64 bits")


def test_csv_empty_field(tmp_path):
    path = _write(tmp_path / "x.csv", "a,b\nb,\n")
    _raises_at(path, 2, "empty vertex id in 'b,'")


def test_csv_single_column(tmp_path):
    path = _write(tmp_path / "x.csv", "a,b\nc\n")
    _raises_at(path, 2, "expected two vertex ids separated by a comma")


def test_not_utf8(tmp_path):
    path = tmp_path / "x.txt"
    path.write_bytes(b"1 2\n2 3\n\xff\xfe 4\n")
    _raises_at(path, 3, "not UTF-8 text")


def test_bad_gzip(tmp_path):
    path = _write(tmp_path / "x.txt.gz", "1 2\n")  # not compressed
    with pytest.raises(ValueError, match=re.escape(f"{path}: cannot read the file")):
        load(path)


@pytest.mark.parametrize("banner, problem", [
    ("%%MatrixMarket matrix coordinate pattern", "not a Matrix Market file"),
    ("%%MatrixMarket tensor coordinate pattern general", "not a Matrix Market file"),
    ("%%MatrixMarket matrix sparse pattern general", "unknown layout 'sparse'"),
    ("%%MatrixMarket matrix coordinate bool general", "unknown field 'bool'"),
    ("%%MatrixMarket matrix coordinate pattern upper", "unknown symmetry 'upper'"),
])
def test_mtx_bad_banner(tmp_path, banner, problem):
    _raises_at(_write(tmp_path / "x.mtx", banner + "\n3 3 1\n1 2\n"), 1, re.escape(problem))


def test_mtx_missing_banner(tmp_path):
    path = _write(tmp_path / "x.mtx", "3 3 1\n1 2\n")
    _raises_at(path, 1, "not a Matrix Market file")


@pytest.mark.parametrize("size_line", ["3 x 1", "3 3", "3 3 1 1", "3 3 -1"])
def test_mtx_bad_size_line_after_comments(tmp_path, size_line):
    # banner, two comment lines, a blank line: the size line is line 5
    path = _mtx(tmp_path / "x.mtx", f"general\n% one\n% two\n\n{size_line}\n1 2\n")
    _raises_at(path, 5, re.escape("the size line must be 'rows columns entries' (three "
                                  f"non-negative integers); got '{size_line}'"))


@pytest.mark.parametrize("bad, problem", [
    ("x 1", "row and column must be integers; got 'x 1'"),
    ("3", "expected 2 values (row, column); got '3'"),
    ("1 2 5", "expected 2 values (row, column); got '1 2 5'"),
    ("4 3", "entry (4, 3) is outside the declared 3 x 3 (1-based)"),
])
def test_mtx_bad_entry_on_its_own_line(tmp_path, bad, problem):
    # lines: 1 banner, 2 comment, 3 size, 4 entry, 5 comment, 6 entry, 7 bad (CRLF ends)
    text = f"general\r\n% c\r\n3 3 4\r\n1 2\r\n% mid\r\n2 3\r\n{bad}\r\n3 1\r\n"
    _raises_at(_mtx(tmp_path / "x.mtx", text), 7, re.escape(problem))


def test_mtx_bad_value(tmp_path):
    path = _write(tmp_path / "x.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                      "3 3 2\n1 2 1.5\n2 3 abc\n")
    _raises_at(path, 4, re.escape("value 'abc' is not a number"))
    path = _write(tmp_path / "y.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                      "3 3 2\n1 2 1.5\n2 3\n")
    _raises_at(path, 4, re.escape("expected 3 values (row, column, value); got '2 3'"))


def test_mtx_too_few_entries(tmp_path):
    # 5 lines; the size line (line 3) declares 4 entries, 2 follow
    path = _mtx(tmp_path / "x.mtx", "general\n% c\n3 3 4\n2 1\n1 3\n")
    _raises_at(path, "6 (end of file)",
               re.escape("the size line (line 3) declares 4 entries; only 2 follow"))


def test_mtx_too_many_entries(tmp_path):
    path = _mtx(tmp_path / "x.mtx", "general\n3 3 1\n2 1\n% c\n1 3\n")
    _raises_at(path, 5, re.escape("more entry lines than the 1 the size line declares"))


def test_mtx_no_size_line(tmp_path):
    path = _mtx(tmp_path / "x.mtx", "general\n% only comments\n")
    _raises_at(path, "3 (end of file)", "no size line")


def test_mtx_errors_name_one_line_only(tmp_path):
    path = _mtx(tmp_path / "x.mtx", "general\n3 3 1\nx 1\n")
    with pytest.raises(ValueError) as info:
        load(path)
    message = str(info.value).replace(str(path), "FILE")
    assert message == "FILE, line 3: row and column must be integers; got 'x 1'"


def test_empty_files(tmp_path):
    for name in ("e.mtx", "e.graph", "e.mtx.gz"):
        path = _write(tmp_path / name, "", compress=name.endswith(".gz"))
        with pytest.raises(turbobc.io._readers.EmptyGraphFileError, match=re.escape(str(path))):
            load(path)
    graph = load(_write(tmp_path / "e.txt", "# nothing but a comment\n"))
    assert graph.n == 0 and graph.m == 0  # an edge list without lines: no vertices


def test_mtx_not_square(tmp_path):
    path = _mtx(tmp_path / "x.mtx", "general\n3 4 1\n1 2\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}, line 2: an adjacency matrix must "
                                                   "be square; the size line declares 3 x 4")):
        load(path)


def test_metis_bad_header(tmp_path):
    _raises_at(_write(tmp_path / "a.graph", "% c\n7 x\n"), 2,
               re.escape("METIS header must be 'n m [fmt [ncon]]' with integers"))
    _raises_at(_write(tmp_path / "b.graph", "3 1 102\n"), 1, "fmt made of up to three 0/1")
    _raises_at(_write(tmp_path / "c.graph", "% only comments\n"), 2, "no header line")


def test_metis_neighbour_out_of_range(tmp_path):
    _raises_at(_write(tmp_path / "x.graph", "2 1\n2\n3\n"), 3,
               re.escape("neighbour 3 of vertex 2 is outside 1..2"))


def test_metis_too_few_and_too_many_lines(tmp_path):
    _raises_at(_write(tmp_path / "a.graph", "3 1\n2\n1\n"), "4 (end of file)",
               "only 2 adjacency lines")
    _raises_at(_write(tmp_path / "b.graph", "2 1\n2\n1\n1\n"), 4, "more adjacency lines")


def test_metis_edge_count_mismatch(tmp_path):
    _raises_at(_write(tmp_path / "x.graph", "% c\n3 3\n2\n1 3\n2\n"), 2,
               re.escape("the header declares m = 3 edges, so the adjacency lines should hold "
                         "2m = 6 entries; they hold 4"))


def test_metis_non_integer_and_odd_weight_pairs(tmp_path):
    _raises_at(_write(tmp_path / "a.graph", "2 1\n2\n1.5\n"), 3, "hold integers")
    _raises_at(_write(tmp_path / "b.graph", "2 1 1\n2 5\n1\n"), 3,
               "with fmt 001 and ncon 0, expected 0 leading value")


def test_unknown_suffix_and_format(tmp_path):
    path = _write(tmp_path / "x.gml", "graph [ ]")
    with pytest.raises(ValueError, match=re.escape(f"cannot tell the format of {path} from its "
                                                   "suffix '.gml'")):
        load(path)
    with pytest.raises(ValueError, match=re.escape("format must be one of 'mtx', 'snap', "
                                                   "'csv', 'tsv', 'metis', 'gr'; got 'gml'")):
        load(path, format="gml")


def test_missing_file_and_bad_argument_types(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such graph file"):
        load(tmp_path / "missing.mtx")
    with pytest.raises(TypeError, match="directed must be True, False or None; got str 'yes'"):
        load(tmp_path / "missing.mtx", directed="yes")
    with pytest.raises(TypeError, match="path must be a str or os.PathLike; got int"):
        load(3)



# --------------------------------------------------------------------------- edge lengths

def _lengths(graph_or_matrix, labels=None):
    """Stored entries as {(label, label): value}."""
    A = getattr(graph_or_matrix, "matrix", graph_or_matrix)
    labels = graph_or_matrix.labels if labels is None else labels
    coo = sp.coo_array(A)
    return {(_plain(labels[i]), _plain(labels[j])): x
            for i, j, x in zip(coo.row, coo.col, coo.data.tolist())}


def _plain(label):
    return label.item() if hasattr(label, "item") else label


def _smallest_parallel(G: nx.MultiGraph | nx.MultiDiGraph) -> dict:
    """{(u, v): smallest 'weight' over the parallel edges}, both directions if undirected."""
    out = {}
    for u, v, w in G.edges(data="weight"):
        pairs = [(u, v)] if G.is_directed() else [(u, v), (v, u)]
        for pair in pairs:
            if u != v:
                out[pair] = min(w, out.get(pair, w))
    return out


def test_weighted_false_reads_the_pattern_and_says_so(tmp_path):
    graph = load(_write(tmp_path / "w.txt", "1 2 5\n2 3 -1\n3 4 abc\n"))
    assert not graph.weighted
    np.testing.assert_array_equal(graph.matrix.data, 1.0)
    assert load(data_path("power.mtx")).weighted is False


DIMACS_ROADS = """c 9th DIMACS Implementation Challenge: Shortest Paths
c TIGER/Line graph, a made-up corner of it
c
p sp 5 9
c graph contains 5 nodes and 9 arcs
c
a 1 2 803
a 2 1 803
a 2 3 158
a 3 2 158
a 3 4 774
a 4 3 774
a 4 5 1000
a 1 5 3000
a 4 5 990
"""


def test_dimacs_gr_reads_directed_arcs_with_their_lengths(tmp_path):
    graph = load(_write(tmp_path / "roads.gr", DIMACS_ROADS), weighted=True)
    assert graph.format == "gr" and graph.directed and graph.weighted
    assert graph.labels.tolist() == [1, 2, 3, 4, 5] and (graph.n, graph.m) == (5, 8)
    # the repeated arc 4 -> 5 keeps its smaller length, as shortest paths use it
    multi = nx.MultiDiGraph()
    for line in DIMACS_ROADS.splitlines():
        if line.startswith("a"):
            _, u, v, w = line.split()
            multi.add_edge(int(u), int(v), weight=float(w))
    assert _lengths(graph) == _smallest_parallel(multi)
    assert _lengths(graph)[(4, 5)] == 990.0
    assert graph.matrix.has_sorted_indices and graph.matrix.dtype == np.float64


def test_dimacs_gr_unweighted_undirected_and_gzip(tmp_path):
    path = _write(tmp_path / "roads.gr.gz", DIMACS_ROADS, compress=True)
    pattern = load(path)
    assert not pattern.weighted and pattern.m == 8
    np.testing.assert_array_equal(pattern.matrix.data, 1.0)
    both_ways = load(path, directed=False, weighted=True)
    assert not both_ways.directed and both_ways.m == 5
    lengths = _lengths(both_ways)
    assert lengths[(1, 5)] == lengths[(5, 1)] == 3000.0
    assert lengths[(4, 5)] == lengths[(5, 4)] == 990.0
    assert turbobc.read_graph(path, format="gr", directed=False)[0].nnz == 10


@pytest.mark.parametrize("text, line, problem", [
    ("a 1 2 3\np sp 2 1\n", 1, "an arc before the problem line 'p sp n m'"),
    ("p sp 2\n", 1, "the problem line must be 'p sp n m' (n vertices, m arcs, non-negative "
                    "integers); got 'p sp 2'"),
    ("p max 2 1\n", 1, "the problem line must be 'p sp n m'"),
    ("p sp 2 1\np sp 2 1\n", 2, "a second problem line (the first is line 1)"),
    ("c x\np sp 2 1\ne 1 2 3\n", 3, "DIMACS shortest-path lines start with 'c' (comment), "
                                    "'p' (problem) or 'a' (arc); got 'e 1 2 3'"),
    ("p sp 2 1\na 1 2\n", 2, "an arc line is 'a u v w' (tail, head, length); got 'a 1 2'"),
    ("p sp 2 2\na 1 2 4\na 2 3 4\n", 3, "vertex '3' is not an integer in 1..2"),
    ("p sp 2 2\na 1 x 4\na 0 1 4\n", 2, "vertex 'x' is not an integer in 1..2"),
    ("p sp 2 1\na 1 2 4\na 2 1 4\n", 3, "more arc lines than the m = 1 the problem line "
                                        "declares"),
    ("p sp 3 3\na 1 2 4\n", "3 (end of file)", "the problem line declares m = 3 arcs; only 1 "
                                               "follow"),
    ("c only a comment\n", "2 (end of file)", "no problem line 'p sp n m'"),
])
def test_dimacs_gr_malformed(tmp_path, text, line, problem):
    _raises_at(_write(tmp_path / "x.gr", text), line, re.escape(problem))


@pytest.mark.parametrize("length, problem", [
    ("0", "the length of edge (2, 3) is 0; edge lengths must be positive finite numbers"),
    ("-4", "the length of edge (2, 3) is -4; edge lengths must be positive finite numbers"),
    ("nan", "the length of edge (2, 3) is nan;"),
    ("inf", "the length of edge (2, 3) is inf;"),
    ("ten", "the length of edge (2, 3), 'ten', is not a number"),
])
def test_dimacs_gr_bad_length_names_line_and_edge(tmp_path, length, problem):
    path = _write(tmp_path / "x.gr", f"c\np sp 3 2\na 1 2 4\na 2 3 {length}\n")
    _raises_at(path, 4, re.escape(problem), weighted=True)
    assert load(path).m == 2  # not read without weighted=True


def test_dimacs_gr_empty_file(tmp_path):
    path = _write(tmp_path / "e.gr", "")
    with pytest.raises(turbobc.io._readers.EmptyGraphFileError, match="no problem line"):
        load(path)


def _mm(path, field, symmetry, body):
    return _write(path, f"%%MatrixMarket matrix coordinate {field} {symmetry}\n{body}")


def test_matrix_market_real_and_integer_lengths(tmp_path):
    general = load(_mm(tmp_path / "g.mtx", "real", "general",
                       "% roads\n3 3 4\n1 2 2.5\n2 3 0.25\n3 1 7\n1 2 1.5\n"), weighted=True)
    assert general.directed and general.weighted
    assert _lengths(general) == {(1, 2): 1.5, (2, 3): 0.25, (3, 1): 7.0}  # 1 -> 2 twice
    symmetric = load(_mm(tmp_path / "s.mtx", "integer", "symmetric",
                         "4 4 3\n2 1 5\n3 2 8\n4 4 1\n"), weighted=True)
    assert not symmetric.directed and symmetric.self_loops == 1
    assert _lengths(symmetric) == {(1, 2): 5.0, (2, 1): 5.0, (2, 3): 8.0, (3, 2): 8.0}
    as_arcs = load(tmp_path / "s.mtx", weighted=True, directed=True)
    assert as_arcs.directed and _lengths(as_arcs) == _lengths(symmetric)  # both ways


def test_matrix_market_general_read_undirected_keeps_the_smaller_length(tmp_path):
    path = _mm(tmp_path / "g.mtx", "real", "general", "2 2 2\n1 2 4\n2 1 3\n")
    assert _lengths(load(path, weighted=True, directed=False)) == {(1, 2): 3.0, (2, 1): 3.0}
    assert _lengths(load(path, weighted=True)) == {(1, 2): 4.0, (2, 1): 3.0}


def test_matrix_market_dense_array_lengths(tmp_path):
    path = _write(tmp_path / "d.mtx", "%%MatrixMarket matrix array real general\n"
                                      "2 2\n0\n3.5\n2\n0\n")  # column-major: A[2,1], A[1,2]
    graph = load(path, weighted=True)
    assert _lengths(graph) == {(2, 1): 3.5, (1, 2): 2.0}  # a zero is no edge
    bad = _write(tmp_path / "b.mtx", "%%MatrixMarket matrix array real general\n"
                                     "% c\n2 2\n0\n3.5\n-2\n0\n")
    _raises_at(bad, 6, re.escape("the length of an edge is -2;"), weighted=True)


@pytest.mark.parametrize("field, symmetry, problem", [
    ("pattern", "general", "a 'pattern' Matrix Market file holds no edge values; "
                           "weighted=True needs a 'real' or 'integer' file"),
    ("complex", "general", "'complex' values are not edge lengths"),
    ("real", "skew-symmetric", "a 'skew-symmetric' file stands for the negated value"),
])
def test_matrix_market_without_lengths(tmp_path, field, symmetry, problem):
    body = "2 2 1\n2 1" + (" 1 0\n" if field == "complex" else " 1\n" if field == "real"
                           else "\n")
    path = _mm(tmp_path / "x.mtx", field, symmetry, body)
    _raises_at(path, 1, re.escape(problem), weighted=True)
    assert load(path).m == 1  # read as a pattern without weighted=True


@pytest.mark.parametrize("value, problem", [
    ("0", "the length of edge (3, 1) is 0; edge lengths must be positive finite numbers"),
    ("-1.5", "the length of edge (3, 1) is -1.5;"),
    ("nan", "the length of edge (3, 1) is nan;"),
    ("inf", "the length of edge (3, 1) is inf;"),
])
def test_matrix_market_bad_length_names_line_and_edge(tmp_path, value, problem):
    # lines: 1 banner, 2 comment, 3 size, 4 entry, 5 bad entry
    path = _mm(tmp_path / "x.mtx", "real", "symmetric", f"% c\n3 3 2\n2 1 1.5\n3 1 {value}\n")
    _raises_at(path, 5, re.escape(problem), weighted=True)


def test_matrix_market_non_numeric_length(tmp_path):
    path = _mm(tmp_path / "x.mtx", "real", "general", "3 3 2\n1 2 1.5\n2 3 abc\n")
    _raises_at(path, 4, re.escape("value 'abc' is not a number"), weighted=True)


WEIGHTED_SNAP = ("# Undirected graph: w.txt\n"
                 "# FromNodeId\tToNodeId\tLength\n"
                 "30\t1412\t2.5\n"
                 "1412\t30\t4\n"       # the same edge again: the smaller length stays
                 "30\t9\t1e-3\n"
                 "7\t7\t3\n")


def test_snap_third_column_is_the_length(tmp_path):
    path = _write(tmp_path / "w.txt", WEIGHTED_SNAP)
    graph = load(path, weighted=True)
    assert graph.weighted and not graph.directed and graph.self_loops == 1
    assert graph.labels.tolist() == [7, 9, 30, 1412]
    multi = nx.read_weighted_edgelist(path, nodetype=int, create_using=nx.MultiGraph)
    assert _lengths(graph) == _smallest_parallel(multi)
    assert _lengths(graph)[(30, 1412)] == 2.5
    arcs = load(path, weighted=True, directed=True)
    assert _lengths(arcs) == {(30, 1412): 2.5, (1412, 30): 4.0, (30, 9): 1e-3}
    extra = _write(tmp_path / "x.txt", WEIGHTED_SNAP.replace("1e-3", "1e-3\tlabel 5"))
    assert _lengths(load(extra, weighted=True)) == _lengths(graph)  # later columns ignored


@pytest.mark.parametrize("suffix, sep", [(".csv", ","), (".tsv", "\t")])
def test_csv_tsv_lengths_with_names_and_header(tmp_path, suffix, sep):
    rows = [("source", "target", "weight"), ("bob", "alice", "2"), ("alice", "carol", "0.5"),
            ("carol", "bob", "5"), ("bob", "alice", "3")]
    path = _write(tmp_path / f"g{suffix}", "".join(sep.join(r) + "\n" for r in rows))
    A, labels = turbobc.read_graph(path, weighted=True)
    assert labels.tolist() == ["bob", "alice", "carol"]
    assert _lengths(A, labels) == {("bob", "alice"): 2.0, ("alice", "bob"): 2.0,
                                   ("alice", "carol"): 0.5, ("carol", "alice"): 0.5,
                                   ("carol", "bob"): 5.0, ("bob", "carol"): 5.0}


def test_csv_quoted_length(tmp_path):
    A, labels = turbobc.read_graph(_write(tmp_path / "q.csv", '"a, b",c," 1.25"\n'),
                                   weighted=True)
    assert _lengths(A, labels) == {("a, b", "c"): 1.25, ("c", "a, b"): 1.25}


def test_edge_list_without_a_third_column(tmp_path):
    path = _write(tmp_path / "x.txt", "# c\n1 2 4\n2 3\n")
    _raises_at(path, 3, re.escape("weighted=True reads the third column as the edge length; "
                                  "edge (2, 3) has none"), weighted=True)
    _raises_at(data_path("as20000102.txt"), 5, "reads the third column", weighted=True)


@pytest.mark.parametrize("value, problem", [
    ("0", "the length of edge (b, c) is 0; edge lengths must be positive finite numbers"),
    ("-2", "the length of edge (b, c) is -2;"),
    ("NaN", "the length of edge (b, c) is NaN;"),
    ("-inf", "the length of edge (b, c) is -inf;"),
    ("heavy", "the length of edge (b, c), 'heavy', is not a number"),
])
def test_edge_list_bad_length_names_line_and_edge(tmp_path, value, problem):
    path = _write(tmp_path / "x.csv", f"src,dst,len\na,b,1\n\nb,c,{value}\n")
    _raises_at(path, 4, re.escape(problem), weighted=True)
    assert load(path).m == 2  # the pattern reads without looking at the values


def test_metis_edge_weights_are_lengths(tmp_path):
    # fmt 011: a vertex weight, then (neighbour, weight) pairs; 1 - 2 weighs 9, 2 - 3 weighs 4
    graph = load(_write(tmp_path / "w.graph", "% weighted\n4 2 011\n7 2 9\n8 1 9 3 4\n6 2 4\n5\n"),
                 weighted=True)
    assert graph.weighted and graph.labels.tolist() == [1, 2, 3, 4]
    assert _lengths(graph) == {(1, 2): 9.0, (2, 1): 9.0, (2, 3): 4.0, (3, 2): 4.0}
    # the two lines of an edge disagree: the smaller length, both ways
    uneven = load(_write(tmp_path / "u.graph", "2 1 1\n2 5\n1 3\n"), weighted=True)
    assert _lengths(uneven) == {(1, 2): 3.0, (2, 1): 3.0}


def test_metis_weight_errors(tmp_path):
    _raises_at(_write(tmp_path / "a.graph", "% c\n2 1\n2\n1\n"), 2,
               re.escape("the header's fmt 000 declares no edge weights (its last digit is 0), "
                         "so weighted=True has no lengths to read"), weighted=True)
    _raises_at(_write(tmp_path / "b.graph", "2 1 001\n2 5\n1 0\n"), 3,
               re.escape("the length of edge (2, 1) is 0; edge lengths must be positive finite "
                         "numbers"), weighted=True)
    _raises_at(_write(tmp_path / "c.graph", "2 1 001\n2 -5\n1 5\n"), 2,
               re.escape("the length of edge (1, 2) is -5;"), weighted=True)


def test_pattern_files_refuse_weighted(tmp_path):
    _raises_at(data_path("power.mtx"), 1, "holds no edge values", weighted=True)


def test_weighted_must_be_a_bool(tmp_path):
    for value in ("yes", None, 1):
        with pytest.raises(TypeError, match=re.escape(f"weighted must be True or False; got "
                                                      f"{type(value).__name__} {value!r}")):
            load(tmp_path / "missing.txt", weighted=value)


def _weighted_lines(directed: bool):
    """A random graph's (u, v, w) lines, 1-based, with repeated pairs of other lengths (and,
    undirected, some pairs listed the other way round): what a file may list."""
    G = nx.gnp_random_graph(30, 0.15, seed=12, directed=directed)
    rng = np.random.default_rng(5)
    lines = [(u + 1, v + 1, int(rng.integers(1, 6))) for u, v in G.edges]
    lines += [(v, u, w + 2) if not directed and i % 2 else (u, v, w + 1)
              for i, (u, v, w) in enumerate(lines[::4])]
    lines += [(u, v, w - 0.5) for u, v, w in lines[1::9]]  # lighter repeats
    return lines


def _networkx_multigraph(lines, directed: bool):
    M = nx.MultiDiGraph() if directed else nx.MultiGraph()
    M.add_nodes_from(range(1, 31))
    M.add_weighted_edges_from(lines)
    return M


def _write_weighted(tmp_path, fmt: str, lines, directed: bool):
    """The lines in one of the weighted formats."""
    if fmt == "snap":
        header = "# Directed graph\n" if directed else "# Undirected graph\n"
        return _write(tmp_path / "w.txt", header + "".join(f"{u} {v} {w}\n"
                                                           for u, v, w in lines))
    if fmt == "csv":
        return _write(tmp_path / "w.csv", "src,dst,len\n" + "".join(f"{u},{v},{w}\n"
                                                                   for u, v, w in lines))
    if fmt == "mtx":
        return _mm(tmp_path / "w.mtx", "real", "general", f"30 30 {len(lines)}\n" + "".join(
            f"{u} {v} {w}\n" for u, v, w in lines))
    return _write(tmp_path / "w.gr", f"c roads\np sp 30 {len(lines)}\n" + "".join(
        f"a {u} {v} {w}\n" for u, v, w in lines))


@pytest.mark.parametrize("fmt", ["snap", "csv", "mtx", "gr"])
@pytest.mark.parametrize("directed", [True, False])
def test_weighted_file_bc_is_networkx_bc_of_the_file_as_a_multigraph(tmp_path, fmt, directed):
    """bc(A, weight=True) of a file read with weighted=True equals networkx's weighted BC of the
    same lines in a multigraph (its shortest paths take a pair's lightest edge), vertex and
    edge BC. (Matrix Market 'general' and DIMACS files are directed: read undirected they
    are symmetrized.)"""
    lines = _weighted_lines(directed)
    graph = load(_write_weighted(tmp_path, fmt, lines, directed), weighted=True,
                 directed=directed)
    M = _networkx_multigraph(lines, directed)
    assert graph.directed is directed and graph.weighted
    ours = turbobc.bc(graph.matrix, weight=True, directed=directed, engine="graphblas")
    want = nx.betweenness_centrality(M, weight="weight")
    np.testing.assert_allclose(ours, [want[v] for v in graph.labels.tolist()], rtol=1e-12,
                               atol=1e-15)
    assert sum(x > 0 for x in want.values()) > 10  # not a comparison of zeros
    E = sp.coo_array(turbobc.edge_bc(graph.matrix, weight=True, directed=directed))
    pair = {}  # networkx shares a pair's edge BC among its lightest parallel edges: add them
    for (u, v, _), x in nx.edge_betweenness_centrality(M, weight="weight").items():
        key = (u, v) if directed else frozenset((u, v))
        pair[key] = pair.get(key, 0.0) + x
    assert E.nnz == len(pair) * (1 if directed else 2)
    for i, j, x in zip(E.row, E.col, E.data):
        u, v = int(graph.labels[i]), int(graph.labels[j])
        assert x == pytest.approx(pair[(u, v) if directed else frozenset((u, v))], rel=1e-12,
                                  abs=1e-15)


def test_metis_weighted_bc_is_networkx_weighted_bc(tmp_path):
    G = nx.gnp_random_graph(25, 0.2, seed=3)
    for u, v in G.edges:
        G[u][v]["weight"] = 1 + (u * v) % 4
    lines = [f"{G.number_of_nodes()} {G.number_of_edges()} 001"]
    lines += [" ".join(f"{v + 1} {G[u][v]['weight']}" for v in G[u]) for u in range(25)]
    graph = load(_write(tmp_path / "w.graph", "\n".join(lines) + "\n"), weighted=True)
    ours = turbobc.bc(graph.matrix, weight=True, engine="graphblas")
    want = nx.betweenness_centrality(G, weight="weight")
    np.testing.assert_allclose(ours, [want[v] for v in range(25)], rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_a_pattern_with_weight_true_is_unweighted_bc():
    """weighted=False reads ones: weight=True on them gives the unweighted BC (documented)."""
    A, _ = turbobc.read_graph(data_path("road-minnesota.mtx"))
    np.testing.assert_allclose(turbobc.bc(A, weight=True, engine="graphblas"),
                               turbobc.bc(A, engine="graphblas"), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("text", [
    DIMACS_ROADS,
    DIMACS_ROADS.replace("\n", "\r\n"),                              # CRLF
    DIMACS_ROADS.replace("a 2 3 158", "a\t2  3\t158  "),             # tabs, runs of blanks
    DIMACS_ROADS.replace("a 3 4 774", "c a comment among the arcs\n\na 3 4 774.25"),
    DIMACS_ROADS.rstrip("\n"),                                       # no final line end
    DIMACS_ROADS.replace("a 4 5 990", "a 4 5 99999999999999999999"),  # beyond int64: a float
    "p sp 3 0\n",                                                    # no arcs
])
def test_dimacs_gr_read_at_once_equals_line_by_line(text):
    """A well-formed file is read by regular expressions and one NumPy parse
    (_gr_arcs_at_once); the line-by-line reader, which reports errors, gives the same."""
    at_once = turbobc.io._dimacs._gr_arcs_at_once(text, True)
    by_line = turbobc.io._dimacs._gr_arcs_by_line("x.gr", text, True)
    assert at_once is not None and at_once[0] == by_line[0]
    for ours, theirs in zip(at_once[1:], by_line[1:]):
        np.testing.assert_array_equal(ours, theirs)
        assert ours.dtype == theirs.dtype


@pytest.mark.parametrize("text", [
    "a 1 2 3\np sp 2 1\n",                    # an arc before the problem line
    "p sp 2 1\np sp 2 1\na 1 2 3\n",          # two problem lines
    "p sp 2 1\na 1 2\n",                      # an arc without its length
    "p sp 3 2\na 1 2\n7\na 2 3 4\n",          # ... and a stray number: 6 numbers for 2 arcs
    "p sp 3 2\na 1 2 3 4\na 2 3\n",           # 4 + 2 fields: 6 numbers for 2 arcs
    "p sp 2 1\na 1 2 3\n5 6 7\n",             # a line without its 'a'
    "p sp 2 1\na 1 3 4\n",                    # a vertex beyond n
    "p sp 2 1\na 1 2 -4\n",                   # a negative length
    "p sp 2 1\na 1 2 nan\n",                  # a length that is not a number
    "p sp 2 1\ne 1 2 4\na 1 2 4\n",           # another kind of line
])
def test_dimacs_gr_read_at_once_leaves_bad_files_to_the_line_reader(tmp_path, text):
    assert turbobc.io._dimacs._gr_arcs_at_once(text, True) is None
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "x.gr")) + ", line "):
        load(_write(tmp_path / "x.gr", text), weighted=True)


# --------------------------------------------------------------------------- headers are claims

def _peak_bytes(call):
    """What ``call()`` raised and the peak of memory Python and NumPy allocated meanwhile."""
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as raised:
            call()
        return raised.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("compress", [False, True])
def test_mtx_declaring_more_entries_than_the_file_holds_allocates_nothing(tmp_path, compress):
    """5 x 5 with 3,000,000,000 declared entries and one entry line: scipy.io.mmread would
    allocate 11 GiB for them (and abort the process when that fails); the reader refuses
    first, at the line where the entries fall short, within a few MiB."""
    name = "lie.mtx.gz" if compress else "lie.mtx"
    path = _write(tmp_path / name, "%%MatrixMarket matrix coordinate pattern general\n"
                  "5 5 3000000000\n1 2\n", compress=compress)
    error, peak = _peak_bytes(lambda: load(path))
    assert str(error) == (f"{path}, line 4 (end of file): the size line (line 2) declares "
                          "3000000000 entries; only 1 follow")
    assert peak < 32 * 2**20


def test_mtx_array_declaring_more_values_than_the_file_holds(tmp_path):
    """A dense 'array' file of 100,000 x 100,000 with one value: 10^10 values claimed, refused
    at the size line before scipy allocates 80 GB for them."""
    path = _write(tmp_path / "dense.mtx", "%%MatrixMarket matrix array real general\n% c\n"
                  "100000 100000\n1\n")
    error, peak = _peak_bytes(lambda: load(path))
    assert str(error) == (f"{path}, line 3: the size line declares 10,000,000,000 entries, "
                          "which take at least 19,999,999,999 bytes; the file holds 2 after "
                          "that line")
    assert peak < 32 * 2**20


def test_header_declaring_more_vertices_than_memory_holds(tmp_path):
    """10^12 declared vertices (16 TB of row pointers and labels): the file and the line, not
    NumPy's 'Unable to allocate 7.28 TiB'."""
    path = _mtx(tmp_path / "huge.mtx", "general\n1000000000000 1000000000000 1\n1 2\n")
    error, peak = _peak_bytes(lambda: load(path))
    assert str(error).startswith(
        f"{path}, line 2: the header declares n = 1,000,000,000,000 vertices, which take at "
        "least 16000000000000 bytes (14.6 TiB) to read (16 bytes a vertex), more than the ")
    assert str(error).endswith(" of memory available")
    assert peak < 32 * 2**20


def test_dimacs_problem_line_declaring_more_vertices_than_memory_holds(tmp_path, monkeypatch):
    """'p sp 3000000000 1' asks for 48 GB before the one arc is read: refused at its line
    where less is available (here: 8 GiB, as the memory check is told)."""
    import turbobc.io._common

    monkeypatch.setattr(turbobc.io._common, "available_memory", lambda: 8 * 2**30)
    path = _write(tmp_path / "big.gr", "c three billion crossroads\np sp 3000000000 1\n"
                  "a 1 2 1\n")
    for weighted in (False, True):
        with pytest.raises(ValueError) as raised:
            load(path, weighted=weighted)
        assert str(raised.value) == (
            f"{path}, line 2: the header declares n = 3,000,000,000 vertices, which take at "
            "least 48000000000 bytes (44.7 GiB) to read (16 bytes a vertex), more than the "
            "8589934592 bytes (8 GiB) of memory available")
    # the same file's problem line read line by line (a stray line sends it there)
    messy = _write(tmp_path / "messy.gr", "p sp 3000000000 1\n\n  a 1 2 1\n")
    _raises_at(messy, 1, "the header declares n = 3,000,000,000 vertices")


def test_a_utf8_byte_order_mark_is_skipped(tmp_path):
    """Files saved by editors that write a byte-order mark first read as without it, in every
    format (it used to make the first id '\\ufeff1')."""
    bom = "\ufeff"
    texts = {"g.txt": "1 2\n2 3\n", "g.csv": "source,target\na,b\nb,c\n",
             "g.tsv": "1\t2\n2\t3\n", "g.mtx": "%%MatrixMarket matrix coordinate pattern "
             "symmetric\n3 3 2\n2 1\n3 2\n", "g.graph": "3 2\n2\n1 3\n2\n",
             "g.gr": "p sp 3 2\na 1 2 1\na 2 3 1\n"}
    for name, text in texts.items():
        for compress in (False, True):
            suffix = ".gz" if compress else ""
            plain = load(_write(tmp_path / f"plain-{name}{suffix}", text, compress=compress))
            marked = load(_write(tmp_path / f"bom-{name}{suffix}", bom + text,
                                 compress=compress))
            assert (marked.matrix != plain.matrix).nnz == 0, name
            np.testing.assert_array_equal(marked.labels, plain.labels)
            assert marked.n == 3 and marked.matrix.nnz in (2, 4), name


# ---------------------------------------------------------------- Matrix Market, both readers

MTX_FILES = [name for name in SMALL_GRAPHS if ".mtx" in name]


@pytest.mark.parametrize("name", MTX_FILES)
@pytest.mark.parametrize("directed", [None, True, False])
def test_both_readers_read_the_same_graph(name, directed):
    if not HAS_FAST:
        pytest.skip("fast_matrix_market is in the test extra (pip install '.[test]')")
    path = data_path(name)
    fast = turbobc.io._matrix_market.read_mtx(path, directed, False,
                                              reader="fast_matrix_market")
    slow = turbobc.io._matrix_market.read_mtx(path, directed, False, reader="scipy")
    assert (fast.matrix != slow.matrix).nnz == 0 and fast.matrix.has_canonical_format
    assert fast.matrix.indices.dtype == slow.matrix.indices.dtype == np.int32
    np.testing.assert_array_equal(fast.labels, slow.labels)
    assert (fast.directed, fast.self_loops, fast.header_directed) == (
        slow.directed, slow.self_loops, slow.header_directed)


def test_matrix_market_weighted_symmetric_both_ways(tmp_path, mtx_reader):
    path = _write(tmp_path / "w.mtx", "%%MatrixMarket matrix coordinate real symmetric\n"
                                      "4 4 3\n2 1 2.5\n3 2 1\n4 1 4\n")
    A = load(path, weighted=True).matrix
    assert A.toarray().tolist() == [[0, 2.5, 0, 4], [2.5, 0, 1, 0], [0, 1, 0, 0], [4, 0, 0, 0]]
    arcs = load(path, weighted=True, directed=True)
    assert arcs.directed and (arcs.matrix != A).nnz == 0


class _Bytes:
    def __init__(self):
        self.count = 0

    def update(self, n):
        self.count += n


@pytest.mark.parametrize("suffix", [".mtx", ".mtx.gz"])
def test_progress_counts_the_files_bytes(tmp_path, suffix):
    if not HAS_FAST:
        pytest.skip("fast_matrix_market is in the test extra (pip install '.[test]')")
    text = data_path("delaunay_n10.mtx").read_bytes()
    path = tmp_path / f"d{suffix}"
    path.write_bytes(gzip.compress(text) if suffix.endswith(".gz") else text)
    bar = _Bytes()
    A, _ = turbobc.read_graph(path, progress=bar)
    assert bar.count == path.stat().st_size
    B, _ = turbobc.read_graph(path, progress=True)  # a tqdm bar, shown after a second
    assert (A != B).nnz == 0 and (A != turbobc.read_graph(path)[0]).nnz == 0


def test_matrix_market_byte_order_mark_both_ways(tmp_path, mtx_reader):
    path = tmp_path / "bom.mtx"
    path.write_bytes(b"\xef\xbb\xbf%%MatrixMarket matrix coordinate pattern general\n"
                     b"3 3 2\n1 2\n2 3\n")
    graph = load(path)
    assert _edges(graph.matrix, graph.labels) == {(1, 2), (2, 3)}


def test_read_graph_refuses_a_progress_that_is_no_bar(tmp_path):
    path = _mtx(tmp_path / "p.mtx", "general\n3 3 1\n1 2\n")
    with pytest.raises(TypeError, match=re.escape("progress must be True or False, or an "
                                                  "object with an update(n) method; got "
                                                  "str 'yes'")):
        turbobc.read_graph(path, progress="yes")


def test_reader_names_checked(tmp_path, monkeypatch):
    path = _mtx(tmp_path / "r.mtx", "general\n3 3 1\n1 2\n")
    with pytest.raises(ValueError, match=re.escape("reader must be one of 'auto', "
                                                   "'fast_matrix_market', 'scipy'; got "
                                                   "'fmm'")):
        turbobc.io._matrix_market.read_mtx(path, None, False, reader="fmm")
    monkeypatch.setattr(turbobc.io._matrix_market, "fast_reader", lambda: None)
    with pytest.raises(ImportError, match=re.escape("reader='fast_matrix_market' needs the "
                                                    "fast_matrix_market package: pip install "
                                                    "'turbobc[fast-io]'")):
        turbobc.io._matrix_market.read_mtx(path, None, False, reader="fast_matrix_market")
