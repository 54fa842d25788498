"""Exact BC by every engine a benchmark compares, each normalized like networkx.

An engine is a name in :data:`ENGINES`; :func:`available` says whether it can run here (and
why not), :func:`run` times one exact, normalized BC of an undirected graph given as a
canonical symmetric scipy CSR pattern and returns the values in vertex order.

- ``turbobc-gpu``: ``turbobc.bc(A, engine="gpu")`` (the batched GPU engine, kernel auto).
- ``turbobc-graphblas``: ``turbobc.bc(A, engine="graphblas")``.
- ``turbobc-graphblas-unfolded``: the same with ``turbobc.tuning(fold_trees=False)``: the
  whole graph swept, no tree folded (docs/algorithm.md, "Folding trees").
- ``networkit``: ``networkit.centrality.Betweenness(G, normalized=True)`` on all threads.
  NetworKit sums the dependencies over ordered pairs and does not halve them for undirected
  graphs (its raw scores are twice networkx's), and ``normalized=True`` divides by
  (n − 1)(n − 2): together exactly networkx's normalized value (docs/algorithm.md,
  "Normalization (networkx's rules)"; :func:`networkit_to_networkx` states it and the tests
  check it against networkx).
- ``networkx``: ``networkx.betweenness_centrality(G)``.

The time of an engine is the BC call alone: building the peer's graph object is timed
separately (``setup_seconds``).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp

__all__ = ["ENGINES", "available", "run", "networkit_to_networkx", "max_rel_diff"]

ENGINES = ("turbobc-gpu", "turbobc-graphblas", "turbobc-graphblas-unfolded", "networkit",
           "networkx")


def _networkit():
    """Import networkit; it imports IPython's deprecated display module when IPython is
    installed (a DeprecationWarning that is networkit's, not ours)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import networkit

    return networkit


def available(engine: str) -> tuple[bool, str]:
    """Whether ``engine`` can run on this machine, and the reason when it cannot."""
    if engine == "turbobc-gpu":
        from turbobc._engines import gpu_status

        usable, reason = gpu_status()
        return usable, "" if usable else f"no usable GPU: {reason}"
    if engine == "networkit":
        try:
            _networkit()
        except ImportError as exc:
            return False, f"networkit is not installed (pip install '.[bench]'): {exc}"
        return True, ""
    if engine in ("turbobc-graphblas", "turbobc-graphblas-unfolded", "networkx"):
        return True, ""
    raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}")


def networkit_to_networkx(scores: np.ndarray, *, normalized: bool) -> np.ndarray:
    """networkx's value of undirected vertex BC from NetworKit's scores of the same run.

    NetworKit's raw score counts ordered pairs (twice networkx's unnormalized value);
    its ``normalized=True`` divides that by (n − 1)(n − 2), which is networkx's normalized
    value already.
    """
    scores = np.asarray(scores, dtype=np.float64)
    return scores if normalized else scores / 2


def max_rel_diff(values: np.ndarray, reference: np.ndarray) -> float:
    """Largest |values − reference| relative to the largest |reference| (0 for all zeros)."""
    scale = float(np.abs(reference).max()) if reference.size else 0.0
    diff = float(np.abs(np.asarray(values) - np.asarray(reference)).max()) if reference.size \
        else 0.0
    return diff / scale if scale > 0 else diff


def _networkit_graph(A: sp.csr_array):
    nk = _networkit()
    upper = sp.triu(A, k=1, format="coo")
    G = nk.Graph(A.shape[0], weighted=False, directed=False)
    G.addEdges((upper.row.astype(np.uint64), upper.col.astype(np.uint64)))
    return G


def run(engine: str, A: sp.csr_array) -> dict:
    """Exact normalized BC of the undirected graph ``A`` by ``engine``.

    Returns
    -------
    dict
        ``values`` (float64, vertex order, networkx's normalization), ``seconds`` (the BC
        call), ``setup_seconds`` (building the engine's graph), ``threads`` where it applies.
    """
    n = A.shape[0]
    out = {"setup_seconds": 0.0}
    if engine in ("turbobc-gpu", "turbobc-graphblas", "turbobc-graphblas-unfolded"):
        import turbobc

        name = engine.split("-")[1]
        if name == "gpu":
            import cupy

            cupy.cuda.Device().synchronize()
        knobs = {"fold_trees": False} if engine.endswith("-unfolded") else {}
        with turbobc.tuning(**knobs):
            start = time.perf_counter()
            values = turbobc.bc(A, engine=name, directed=False)
            out["seconds"] = time.perf_counter() - start
    elif engine == "networkit":
        nk = _networkit()
        start = time.perf_counter()
        G = _networkit_graph(A)
        out["setup_seconds"] = time.perf_counter() - start
        out["threads"] = nk.getMaxNumberOfThreads()
        start = time.perf_counter()
        algo = nk.centrality.Betweenness(G, normalized=True)
        algo.run()
        out["seconds"] = time.perf_counter() - start
        values = networkit_to_networkx(algo.scores(), normalized=True)
    elif engine == "networkx":
        import networkx as nx

        start = time.perf_counter()
        G = nx.from_scipy_sparse_array(A)
        out["setup_seconds"] = time.perf_counter() - start
        start = time.perf_counter()
        result = nx.betweenness_centrality(G)
        out["seconds"] = time.perf_counter() - start
        values = np.array([result[v] for v in range(n)])
    else:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}")
    out["values"] = np.asarray(values, dtype=np.float64)
    return out
