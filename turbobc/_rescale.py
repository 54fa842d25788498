"""networkx's normalization of betweenness, as one pure NumPy function, and the check of the
raw sums before it.

This is ``networkx.algorithms.centrality.betweenness._rescale`` (networkx >= 3.6),
vectorised. The engines return *raw* sums over ordered (s, t) pairs; every scale
factor is applied here and nowhere else. :func:`check_finite` refuses a non-finite raw sum
first.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

__all__ = ["check_finite", "rescale"]


def rescale(raw: np.ndarray, *, normalized: bool, directed: bool, endpoints: bool,
            sampled_sources: np.ndarray | None = None, n: int | None = None) -> np.ndarray:
    """Scale raw ordered-pair BC sums exactly as networkx does.

    Parameters
    ----------
    raw : numpy.ndarray
        Length-n float64 vector of raw sums (Brandes dependencies over ordered
        pairs, plus the endpoint terms when ``endpoints``). Not modified.
    normalized : bool
        Divide by the number of (s, t) pairs that could pass through a vertex.
    directed : bool
        For undirected graphs unnormalized values are halved (each unordered
        pair was counted twice).
    endpoints : bool
        Whether endpoints were counted; sets ``N = n`` instead of ``n - 1``.
    sampled_sources : numpy.ndarray or None
        The k sampled sources, or None when every source (or an explicit
        ``sources`` list) was used. With ``endpoints=False`` sampled sources and
        the other vertices get different factors (networkx >= 3.5).
    n : int, optional
        Number of vertices, when ``raw`` is not per vertex: edge BC passes its per-edge
        sums with ``endpoints=True``, networkx's rule for edges. Default ``len(raw)``.

    Returns
    -------
    numpy.ndarray
        A new float64 vector.

    Notes
    -----
    With ``N = n if endpoints else n - 1``, ``K = N`` (or ``k`` when sampled) and
    ``c = 1`` for directed, ``2`` for undirected graphs:

    ==========================  ==================  =================
    case                        normalized          unnormalized
    ==========================  ==================  =================
    not sampled, or endpoints   1 / (K (N - 1))     N / (K c)
    sampled, source vertex      1 / ((K-1)(N - 1))  N / ((K - 1) c)
    sampled, other vertex       1 / (K (N - 1))     N / (K c)
    ==========================  ==================  =================

    No scaling when ``N < 2``. The source factor is NaN when ``k == 1`` (networkx's 0/0),
    and a ``RuntimeWarning`` says why.
    """
    n = raw.shape[0] if n is None else n
    out = np.array(raw, dtype=np.float64, copy=True)
    N = n if endpoints else n - 1
    if N < 2:
        return out
    k = None if sampled_sources is None else len(sampled_sources)
    K = N if k is None else k
    correction = 1 if directed else 2
    if k is None or endpoints:
        scale = 1 / (K * (N - 1)) if normalized else N / (K * correction)
        if scale != 1:
            out *= scale
        return out
    if K == 1:
        warnings.warn(
            "k=1 with endpoints=False: the sampled source's value is NaN, as networkx returns "
            "it. networkx scales a sampled source's sum by 1/(k - 1) (a source never lies "
            "between itself and a target), and with one sample there is no data for it: 0/0. "
            "Use k >= 2 or endpoints=True for a value at every vertex.",
            RuntimeWarning, stacklevel=3)
    if normalized:
        scale_source = 1 / ((K - 1) * (N - 1)) if K > 1 else math.nan
        scale_other = 1 / (K * (N - 1))
    else:
        scale_source = N / ((K - 1) * correction) if K > 1 else math.nan
        scale_other = N / (K * correction)
    factors = np.full(n, scale_other)
    factors[np.asarray(sampled_sources, dtype=np.int64)] = scale_source
    out *= factors
    return out


def check_finite(raw: np.ndarray, engine: str) -> None:
    """Refuse to return a non-finite sum: networkx's only NaN comes from its own rescaling.

    Every raw sum is at most (number of sources) x n, so a non-finite one means a count the
    engines could not represent; say so instead of returning it.

    Raises
    ------
    OverflowError
        Naming the engine, how many sums are not finite and where the first one is.
    """
    bad = np.flatnonzero(~np.isfinite(raw))
    if bad.size:
        raise OverflowError(
            f"the {engine} engine produced {bad.size} non-finite betweenness sums (first at "
            f"vertex {bad[0]}): some quantity of this graph is beyond what turbobc can "
            f"represent in float64 with per-vertex exponents; please report the graph")
