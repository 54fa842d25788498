"""``turbobc bc FILE --updates CHANGES.csv``: BC kept current through batches of edge changes,
the top vertices after each batch, the values after the last; every malformed line or
impossible change a data error naming its line (tests/test_cli.py's style)."""

from __future__ import annotations

import csv
import json

import networkx as nx
import numpy as np
import pytest

from turbobc.cli import main

OFFSET = 100
"""The karate club's vertices as the graph file names them: 100 .. 133."""


@pytest.fixture
def karate_file(tmp_path):
    """Zachary's karate club as a CSV edge list whose ids start at 100."""
    path = tmp_path / "karate.csv"
    path.write_text("".join(f"{u + OFFSET},{v + OFFSET}\n"
                            for u, v in nx.karate_club_graph().edges()))
    return path


def _changes(tmp_path, text: str):
    path = tmp_path / "changes.csv"
    path.write_text(text)
    return path


def _top(out: str) -> list[list[tuple[str, float]]]:
    """The (vertex, value) rows of each printed table, in order."""
    tables = []
    for block in out.split("rank  vertex")[1:]:
        rows = []
        for line in block.splitlines()[1:]:
            fields = line.split()
            if len(fields) != 3 or not fields[0].isdigit():
                break
            rows.append((fields[1], float(fields[2])))
        tables.append(rows)
    return tables


def test_updates_print_the_top_after_each_batch_and_write_the_last(tmp_path, karate_file,
                                                                   capsys):
    changes = _changes(tmp_path, "# two batches\n+,100,109\n-,100,131\n\n\n- , 132 , 133\n")
    out_csv = tmp_path / "bc.csv"
    assert main(["bc", str(karate_file), "--updates", str(changes), "--engine", "graphblas",
                 "--top", "3", "-o", str(out_csv)]) == 0
    out = capsys.readouterr().out
    G = nx.karate_club_graph()
    expected = []
    for batch in ([(0, 9)], [(0, 31)]), ([], [(32, 33)]):
        G.add_edges_from(batch[0])
        G.remove_edges_from(batch[1])
        expected.append(nx.betweenness_centrality(G))
    assert "batch 1 (lines 2-3): 1 inserted, 1 deleted; " in out
    assert "batch 2 (line 6): 0 inserted, 1 deleted; " in out
    tables = _top(out)
    assert len(tables) == 3  # the graph read, then each batch
    for table, want in zip(tables[1:], expected):
        best = sorted(want, key=lambda v: -want[v])[:3]
        assert [name for name, _ in table] == [str(v + OFFSET) for v in best]
        np.testing.assert_allclose([x for _, x in table], [want[v] for v in best], atol=1e-6)
    with open(out_csv, newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    got = {int(name) - OFFSET: float(x) for name, x in rows}
    np.testing.assert_allclose([got[v] for v in G], [expected[-1][v] for v in G],
                               rtol=1e-12, atol=1e-14)
    assert f"wrote 34 values after batch 2 to {out_csv}" in out


def test_updates_with_lengths_and_epsilon(tmp_path, capsys):
    """--weight reads '+,u,v,length'; --epsilon keeps its guarantee after each batch (every
    source sampled on a graph this small: exact)."""
    graph = tmp_path / "w.csv"
    graph.write_text("1,2,1\n2,3,1\n3,4,1\n1,4,5\n")
    changes = _changes(tmp_path, "+,1,3,1.5\n-,1,4\n")
    out_json = tmp_path / "bc.json"
    assert main(["bc", str(graph), "--weight", "--updates", str(changes), "--engine",
                 "graphblas", "--raw", "-o", str(out_json)]) == 0
    record = json.loads(out_json.read_text())
    G = nx.Graph([(1, 2, {"weight": 1}), (2, 3, {"weight": 1}), (3, 4, {"weight": 1}),
                  (1, 3, {"weight": 1.5})])
    want = nx.betweenness_centrality(G, weight="weight", normalized=False)
    assert record["vertices"] == [1, 2, 3, 4] and record["batches"] == 1
    np.testing.assert_allclose(record["betweenness"], [want[v] for v in (1, 2, 3, 4)])
    capsys.readouterr()
    changes = _changes(tmp_path, "+,1,3\n-,1,4\n")
    assert main(["bc", str(graph), "--updates", str(changes), "--engine", "graphblas",
                 "--epsilon", "0.2", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "batch 1 (lines 1-2)" in out and "every value within 0 of the exact one" in out


BAD_FILES = [
    ("+,100,101,2\n", "changes.csv, line 1: a length is read only with --weight"),
    ("* 100 101\n", "changes.csv, line 1: expected '+,u,v' (insert) or '-,u,v' (delete); "
                    "got '* 100 101'"),
    ("+,100,999\n", "changes.csv, line 1: vertex '999' is not in the graph"),
    ("+,100,abc\n", "changes.csv, line 1: vertex ids of this graph are integers; got 'abc'"),
    ("-,100,101,3\n", "changes.csv, line 1: a deletion takes no length"),
    ("# nothing\n\n", "changes.csv: no change listed"),
    ("+,100,109\n\n+,102,105\n+,100,101\n", "changes.csv, line 4: insert: edge (100, 101) "
                                            "already exists"),
    ("-,100,109\n", "changes.csv, line 1: delete: edge (100, 109) does not exist"),
    ("+,105,105\n", "changes.csv, line 1: insert: (105, 105) is a self loop"),
]


@pytest.mark.parametrize("text, message", BAD_FILES)
def test_a_bad_changes_file_is_a_data_error_naming_its_line(tmp_path, karate_file, capsys,
                                                           text, message):
    changes = _changes(tmp_path, text)
    assert main(["bc", str(karate_file), "--updates", str(changes), "--engine", "graphblas",
                 "--top", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("turbobc bc: error: ") and message in err, err


def test_weighted_insertions_need_their_length(tmp_path, capsys):
    graph = tmp_path / "w.csv"
    graph.write_text("1,2,1\n2,3,1\n")
    for text, message in (("+,1,3\n", "line 1: with --weight an insertion carries its length, "
                                      "'+,u,v,length'"),
                          ("+,1,3,-2\n", "line 1: the length '-2' must be a positive finite "
                                         "number (--weight)")):
        changes = _changes(tmp_path, text)
        assert main(["bc", str(graph), "--weight", "--updates", str(changes), "--engine",
                     "graphblas"]) == 1
        assert message in capsys.readouterr().err


@pytest.mark.parametrize("flags, clash", [(["-k", "3"], "-k"), (["--edges", "e.csv"], "--edges"),
                                          (["--memory-limit", "1GB"], "--memory-limit"),
                                          (["--kernel", "vecsc"], "--kernel")])
def test_updates_refuse_what_they_do_not_take(tmp_path, karate_file, capsys, flags, clash):
    changes = _changes(tmp_path, "+,100,109\n")
    assert main(["bc", str(karate_file), "--updates", str(changes), *flags]) == 2
    assert (f"--updates keeps BC of every source current (exact, or --epsilon's estimate) on "
            f"this machine; it does not take {clash}") in capsys.readouterr().err


def test_a_missing_changes_file_is_a_usage_error(tmp_path, karate_file, capsys):
    assert main(["bc", str(karate_file), "--updates", str(tmp_path / "none.csv")]) == 2
    assert f"--updates {tmp_path / 'none.csv'}: no such file" in capsys.readouterr().err
