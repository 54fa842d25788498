"""``turbobc bc FILE --updates CHANGES.csv``: BC kept current through batches of edge changes
(:class:`turbobc.DynamicBC`), the top vertices printed after each batch (docs/cli.md).

A changes file holds one change a line, ``+,u,v`` (insert the edge u - v) or ``-,u,v``
(delete it), u and v as the graph file names them; with ``--weight`` an insertion carries its
length, ``+,u,v,length``. Blank lines separate batches; ``#`` starts a comment. A line that
cannot be read, or a change the graph cannot take, is a data error naming the file and the
line; the whole file is read, and every vertex looked up, before anything is computed.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from turbobc.cli._output import label, print_top, say, write_vertices

__all__ = ["Change", "read_changes", "run_updates"]


@dataclass
class Change:
    """One batch of a changes file: the vertex indices of its insertions and deletions, the
    lengths of its insertions (with --weight), and the line of each."""

    first_line: int
    insert: list = field(default_factory=list)
    delete: list = field(default_factory=list)
    lengths: list = field(default_factory=list)
    insert_lines: list = field(default_factory=list)
    delete_lines: list = field(default_factory=list)

    def lines(self) -> str:
        last = max(self.insert_lines + self.delete_lines)
        return (f"line {self.first_line}" if last == self.first_line
                else f"lines {self.first_line}-{last}")


def read_changes(path: str, labels: np.ndarray, weighted: bool) -> list[Change]:
    """The batches of the changes file ``path``, vertices as indices into ``labels``."""
    integer_labels = labels.dtype.kind in "iu"
    position = {label(v): i for i, v in enumerate(labels)}
    batches, current = [], None
    with open(path, encoding="utf-8-sig") as fh:  # -sig: a byte-order mark is skipped
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                current = None  # a blank line ends the batch
                continue
            text = line.split("#", 1)[0].strip()
            if not text:  # a comment
                continue
            fields = [f.strip() for f in text.split(",")]
            sign = fields[0]
            if sign not in ("+", "-") or len(fields) not in (3, 4):
                raise ValueError(f"{path}, line {number}: expected '+,u,v' (insert) or "
                                 f"'-,u,v' (delete); got {text!r}")
            u, v = (_vertex(token, position, integer_labels, path, number)
                    for token in fields[1:3])
            if current is None:
                current = Change(first_line=number)
                batches.append(current)
            if sign == "-":
                if len(fields) == 4:
                    raise ValueError(f"{path}, line {number}: a deletion takes no length; "
                                     f"got {text!r}")
                current.delete.append((u, v))
                current.delete_lines.append(number)
                continue
            current.insert.append((u, v))
            current.insert_lines.append(number)
            if weighted:
                current.lengths.append(_length(fields, path, number))
            elif len(fields) == 4:
                raise ValueError(f"{path}, line {number}: a length is read only with "
                                 f"--weight; got {text!r}")
    if not batches:
        raise ValueError(f"{path}: no change listed (lines '+,u,v' or '-,u,v')")
    return batches


def _vertex(token: str, position: dict, integer_labels: bool, path: str, number: int) -> int:
    key = token
    if integer_labels:
        try:
            key = int(token)
        except ValueError:
            raise ValueError(f"{path}, line {number}: vertex ids of this graph are integers; "
                             f"got {token!r}") from None
    if key not in position:
        raise ValueError(f"{path}, line {number}: vertex {token!r} is not in the graph")
    return position[key]


def _length(fields: list, path: str, number: int) -> float:
    if len(fields) != 4:
        raise ValueError(f"{path}, line {number}: with --weight an insertion carries its "
                         f"length, '+,u,v,length'; got {','.join(fields)!r}")
    try:
        length = float(fields[3])
    except ValueError:
        length = math.nan
    if not (math.isfinite(length) and length > 0):
        raise ValueError(f"{path}, line {number}: the length {fields[3]!r} must be a positive "
                         "finite number (--weight)")
    return length


def run_updates(args, graph, words: str) -> None:
    """BC of ``graph`` (the file read), then after each batch of ``args.updates``: the run
    line and the top-N table each time, -o after the last batch."""
    from turbobc._dynamic import DynamicBC
    from turbobc._dynamic_changes import BadChange, check_batch

    batches = read_changes(args.updates, graph.labels, graph.weighted)
    began = time.perf_counter()
    dyn = DynamicBC(graph.matrix, directed=graph.directed, normalized=not args.raw,
                    endpoints=args.endpoints, weight=True if args.weight else None,
                    epsilon=args.epsilon, delta=args.delta if args.delta is not None else 0.1,
                    seed=args.seed, engine=args.engine)
    say(f"betweenness centrality ({words}) on engine {dyn.facts['engine']} in "
        f"{time.perf_counter() - began:.2f} s{_estimate(dyn.facts, args)}")
    if args.top:
        print_top(dyn.values, graph.labels, args.top)

    def name(i: int) -> str:
        return str(label(graph.labels[i]))

    for number, batch in enumerate(batches, start=1):
        lengths = batch.lengths if graph.weighted else None
        try:  # the change's own line in the message, and the file's vertex ids
            check_batch(dyn.graph, dyn.directed, graph.weighted, batch.insert, batch.delete,
                        lengths, name=name)
        except BadChange as exc:
            lines = {"insert": batch.insert_lines, "delete": batch.delete_lines}
            where = lines.get(exc.kind, [batch.first_line])
            line = where[exc.position] if exc.position < len(where) else batch.first_line
            raise ValueError(f"{args.updates}, line {line}: {exc}") from None
        dyn.update(insert=batch.insert, delete=batch.delete, lengths=lengths)
        facts = dyn.facts
        say()
        say(f"batch {number} ({batch.lines()}): {facts['inserted']:,} inserted, "
            f"{facts['deleted']:,} deleted; {facts['reason']}; in {facts['seconds']:.2f} s"
            f"{_estimate(facts, args)}")
        if args.top:
            print_top(dyn.values, graph.labels, args.top)
    if args.output is not None:
        write_vertices(args.output, dyn.values, graph.labels,
                       {"file": str(args.file), "updates": str(args.updates),
                        "batches": len(batches), "n": graph.n, "directed": graph.directed,
                        "weighted": graph.weighted, "normalized": not args.raw,
                        "endpoints": args.endpoints, "epsilon": args.epsilon})
        say(f"wrote {graph.n:,} values after batch {len(batches)} to {args.output}")


def _estimate(facts: dict, args) -> str:
    """With --epsilon: the samples and the bound, as a clause."""
    if args.epsilon is None or "bound" not in facts:
        return ""
    return (f"; {facts['samples']:,} sampled sources, every value within "
            f"{facts['bound']:.3g} of the exact one with probability "
            f"{1 - (args.delta if args.delta is not None else 0.1):g}")
