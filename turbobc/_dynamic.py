"""BC kept current as the graph changes: :class:`DynamicBC` (issue 50, docs/dynamic.md).

The public face of the dynamic layer. It validates the graph once (turbobc/_validation.py),
keeps the sums of exact BC (turbobc/_dynamic_exact.py) or of a sample of sources with a
guarantee (turbobc/_dynamic_sampled.py), and for each batch of edge changes checks it
against the graph (turbobc/_dynamic_changes.py), finds the sources it affects
(turbobc/_dynamic_affected.py) and sweeps them again through the one loop
(turbobc/_run.py) on the engine ``bc()`` would use: no engine-specific code lives here.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import scipy.sparse as sp

from turbobc._dynamic_changes import changed_graph, check_batch
from turbobc._dynamic_exact import ExactSums
from turbobc._dynamic_sampled import SampledSums
from turbobc._validation import DEFAULT_DELTA, check_guarantee, validate

__all__ = ["DynamicBC"]


class DynamicBC:
    r"""Betweenness centrality of a graph kept current under edge insertions and deletions.

    .. math::

        c_B(v) = \sum_{s \ne v \ne t} \frac{\sigma(s, t \mid v)}{\sigma(s, t)}
               = \sum_s \delta_s(v)

    computed once, then updated by :meth:`update` for each batch of changes: the sources
    whose shortest-path DAG the batch can change (on an undirected graph, a cover of the
    pairs it can change) are swept again on the graph before and after it, in one run of
    the engine, and their difference is added (docs/dynamic.md). A batch that touches about
    as many sources as a fresh :func:`turbobc.bc` sweeps is recomputed, and the facts say so.

    Parameters
    ----------
    A : scipy.sparse matrix or array, shape (n, n)
        As for :func:`turbobc.bc`: ``A[i, j] != 0`` is an edge i -> j; a symmetric pattern
        is an undirected graph (unless ``directed=True``). A networkx graph is taken as
        :func:`turbobc.bc` takes it; its vertices are then named by their positions in
        ``list(G)``.
    directed : bool, optional
        As for :func:`turbobc.bc`; fixed for the life of the object (an update that makes
        the pattern symmetric keeps a directed graph directed).
    normalized, endpoints, weight, engine :
        As for :func:`turbobc.bc` (``weight=True``: ``A``'s values are the edge lengths).
    epsilon : float, optional
        Approximate BC: after every batch each normalized value is within ``epsilon`` of the
        exact one with probability at least 1 − ``delta``, from sampled sources
        (docs/approximate.md); a batch re-sweeps the sampled sources it affects and samples
        more where the bound needs them (docs/dynamic.md, "Approximate mode"). None: exact.
    delta : float, default 0.1
        With ``epsilon``: the probability the guarantee may fail.
    seed : None, int or numpy.random.Generator, optional
        With ``epsilon``: the seed of the sources' order.

    Attributes
    ----------
    values : numpy.ndarray
        float64, length n: BC of the current graph, networkx's numbers (a copy).
    facts : dict
        What the last computation did: ``reason`` (why it swept what it swept),
        ``recomputed``, ``affected_sources``, ``sources_swept`` (on both graphs together),
        ``searches`` (distance searches), ``seconds``, ``search_seconds``,
        ``sweep_seconds``, ``inserted``, ``deleted``, ``engine``, ``run`` (the engine's facts);
        with ``epsilon`` also ``samples``, ``bound``, ``stopped_by``, ``resampled`` and
        ``drawn``.
    graph : scipy.sparse.csr_array
        The current adjacency matrix (canonical: sorted, no self loops; values 1, or the
        edge lengths), a copy.

    Raises
    ------
    TypeError, ValueError, MemoryError
        As :func:`turbobc.bc` for the arguments they share; ``delta`` without ``epsilon``;
        ``epsilon`` with ``normalized=False``.

    Notes
    -----
    An update costs two distance searches per changed edge (breadth-first, or Dijkstra with
    lengths; O(m) each) and 2 |X| source sweeps on the engine, X the sources it affects (or
    covers): on ego-Facebook a local insertion (u and v two hops apart) covers about 1% of
    the sources, on the power grid 2%, on road networks 15 to 20%. The twin graph swept
    holds both graphs: twice the graph's memory on the engine. Exact values stay within
    1e-13 of a fresh ``bc()`` relative to each value, or 1e-14 of the largest: the rounding
    of the updates is tracked and the sums recomputed before it could pass that.

    Examples
    --------
    A ladder: rails 0 - 1 - ... - 5 and 6 - 7 - ... - 11, rungs i - (i + 6). The diagonal
    0 - 7 takes vertex 6 off every shortest path; only pairs with 0 at one end change, so
    source 0 is swept again, before and after (its other targets counted twice). Deleting the
    rung 3 - 9 changes most pairs: recomputed.

    >>> import numpy as np, scipy.sparse as sp, turbobc
    >>> rails, rungs = np.r_[0:5, 6:11], np.arange(6)
    >>> u, v = np.r_[rails, rungs], np.r_[rails + 1, rungs + 6]
    >>> A = sp.csr_array((np.ones(32), (np.r_[u, v], np.r_[v, u])))
    >>> dyn = turbobc.DynamicBC(A, normalized=False, engine="graphblas")
    >>> np.round(dyn.values, 2).tolist()
    [1.45, 10.73, 15.32, 15.32, 10.73, 1.45, 1.45, 10.73, 15.32, 15.32, 10.73, 1.45]
    >>> np.round(dyn.update(insert=[(0, 7)]), 2).tolist()
    [1.45, 7.18, 13.22, 14.17, 10.2, 1.28, 0.0, 12.83, 16.47, 15.85, 10.9, 1.45]
    >>> dyn.facts["recomputed"], dyn.facts["affected_sources"], dyn.facts["sources_swept"]
    (False, 1, 2)
    >>> round(float(dyn.update(delete=[(3, 9)])[3]), 2), dyn.facts["recomputed"]
    (11.35, True)
    >>> dyn.update(insert=[(0, 7)])
    Traceback (most recent call last):
    ...
    turbobc._dynamic_changes.BadChange: insert: edge (0, 7) already exists
    """

    def __init__(self, A, *, directed=None, normalized=True, endpoints=False, weight=None,
                 epsilon=None, delta=DEFAULT_DELTA, seed=None, engine="auto"):
        began = time.perf_counter()
        if epsilon is not None:
            epsilon, delta = check_guarantee(epsilon, delta, k=None, sources=None,
                                             targets=None, normalized=normalized)
        elif delta != DEFAULT_DELTA:
            raise ValueError("delta= states the confidence of the epsilon guarantee; give "
                             "epsilon too (DynamicBC(A, epsilon=0.01, delta=0.1))")
        call = validate(A, sources=None, k=None, seed=None, normalized=normalized,
                        endpoints=endpoints, directed=directed, engine=engine, kernel="auto",
                        progress=False, weight=weight)
        self._normalized, self._endpoints = call.normalized, call.endpoints
        if epsilon is not None and call.graph.n >= 3:
            self._sums, facts = SampledSums.start(call, epsilon, delta, seed)
        else:
            # (fewer than 3 vertices with epsilon: exact costs nothing)
            if not call.graph.directed:  # the endpoint terms in closed form (_dynamic_exact)
                call = dataclasses.replace(call, endpoints=False)
            self._sums, facts = ExactSums.start(call)
        self._values = self._sums.values(normalized=self._normalized,
                                         endpoints=self._endpoints)
        self._facts = dict(facts, inserted=0, deleted=0, seconds=time.perf_counter() - began)

    @property
    def values(self) -> np.ndarray:
        """BC of the current graph, networkx's numbers (a copy)."""
        return self._values.copy()

    @property
    def facts(self) -> dict:
        """What the last computation did (the class docstring lists the keys)."""
        return dict(self._facts)

    @property
    def graph(self) -> sp.csr_array:
        """The current adjacency matrix: canonical, values 1 or the edge lengths (a copy)."""
        current = self._sums.call.graph
        data = np.ones(current.nnz) if current.lengths is None else current.lengths.copy()
        return sp.csr_array((data, current.pattern.indices.copy(),
                             current.pattern.indptr.copy()), shape=current.pattern.shape)

    @property
    def n(self) -> int:
        """Number of vertices."""
        return self._sums.call.graph.n

    @property
    def directed(self) -> bool:
        """Whether the graph is directed."""
        return self._sums.call.graph.directed

    def update(self, insert=None, delete=None, lengths=None) -> np.ndarray:
        """Apply a batch of edge changes and return the new values.

        Parameters
        ----------
        insert, delete : sequence of (u, v) pairs of vertex indices, optional
            The edges to insert and to delete; the deletions apply first, so an edge in
            both changes its length. On an undirected graph (u, v) is one edge: both
            directions change, and (v, u) names the same edge.
        lengths : sequence of float, optional
            On a weighted graph (``weight=True``), the length of each inserted edge, in the
            order of ``insert`` (positive and finite); not on an unweighted graph.

        Returns
        -------
        numpy.ndarray
            :attr:`values` after the batch.

        Raises
        ------
        TypeError
            A list that is not pairs of integers, a length that is not a number.
        ValueError
            A vertex out of range, a self loop, an edge named twice in one list, inserting an
            edge that exists, deleting one that does not; missing, extra or non-positive
            lengths. Values, facts and graph are then as they were.
        """
        began = time.perf_counter()
        current = self._sums.call.graph
        batch = check_batch(current.pattern, current.directed, current.weighted, insert,
                            delete, lengths)
        counts = {"inserted": len(batch.insert), "deleted": len(batch.delete)}
        if not len(batch):
            kept = {key: self._facts[key] for key in ("samples", "bound", "stopped_by")
                    if key in self._facts}  # epsilon's figures hold as they were
            self._facts = dict(counts, **kept, engine=self._sums.call.engine,
                               recomputed=False, affected_sources=0, sources_swept=0,
                               searches=0, reason="an empty batch: nothing changed",
                               seconds=time.perf_counter() - began)
            return self.values
        sums, facts = self._sums.update(changed_graph(current, batch), batch)
        values = sums.values(normalized=self._normalized, endpoints=self._endpoints)
        # the new state at once, only when every step above has succeeded
        self._sums, self._values = sums, values
        self._facts = dict(facts, **counts, seconds=time.perf_counter() - began)
        return self.values

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (f"DynamicBC(n={self.n:,}, {kind}, {self._sums.call.graph.nnz:,} stored edges, "
                f"engine={self._sums.call.engine!r})")
