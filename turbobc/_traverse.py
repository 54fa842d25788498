"""Traversals of a pattern past what SciPy's ``scipy.sparse.csgraph`` takes: its routines
cast the index arrays to int32 (and refuse values that do not fit), so from 2^31 - 1 stored
edges or vertices (:data:`CSGRAPH_LIMIT`) the breadth-first order, the connected components
and the reverse Cuthill-McKee order of a graph are out of its reach. The callers
(turbobc/_graph.py ``bfs_levels``, turbobc/_reduce.py ``component_sizes``,
turbobc/_pairs.py ``vertex_diameter_bound``) use SciPy below the limit and the compiled loops
here past it (or, with ``force``, on any graph: how the tests run them); the reverse
Cuthill-McKee order (turbobc/engines/gpu/lanes_order.py) and the search that stops at a
depth (``depth_reached``, for ``Graph.deeper_than`` on large graphs) are compiled at every
size. Imports
nothing of turbobc; numba only when a loop runs.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CSGRAPH_LIMIT", "past_csgraph", "bfs_order_levels", "bfs_depths", "depth_reached",
           "component_order_levels", "component_depths", "component_labels",
           "reverse_cuthill_mckee", "compiled_on_first_use"]

CSGRAPH_LIMIT = 2**31 - 1
"""SciPy's csgraph routines take n vertices and nnz stored edges below this (int32 indices)."""


def past_csgraph(pattern) -> bool:
    """Whether ``pattern`` (a SciPy sparse matrix) is out of SciPy csgraph's reach."""
    return max(pattern.shape[0], pattern.nnz) >= CSGRAPH_LIMIT


def bfs_order_levels(indptr: np.ndarray, indices: np.ndarray, root: int):
    """Breadth-first order from ``root`` along out-edges (int64) and the level of every vertex
    (-1 where unreached), in one compiled pass: O(n + m), int64 throughout."""
    order, count, level = _search(indptr, indices, np.array([root], dtype=np.int64), False)
    return order[:count], level


def bfs_depths(indptr: np.ndarray, indices: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """The breadth-first depth of every vertex from the nearest of ``roots`` (one search from
    all of them at once; -1 where unreached), in one compiled pass: O(n + m)."""
    return _search(indptr, indices, np.asarray(roots, dtype=np.int64), False)[2]


def depth_reached(indptr: np.ndarray, indices: np.ndarray, root: int, cap: int) -> int:
    """The deepest breadth-first level from ``root`` along out-edges, or ``cap`` once the
    search reaches it (it stops there): whether a graph is deep costs a ball of radius ``cap``
    around ``root``, not the whole graph (del20: 0.4 s for the whole search in SciPy)."""
    if cap <= 0:
        return 0
    order, count, level = _search(indptr, indices, np.array([root], dtype=np.int64), False,
                                  cap)
    return int(level[order[count - 1]])  # the last queued is the deepest (or at cap)


def component_order_levels(indptr: np.ndarray, indices: np.ndarray):
    """A breadth-first order of the whole pattern (a search from each vertex not yet reached,
    in vertex order, so every component from its least vertex) and every vertex's depth in
    it, in one compiled pass: O(n + m), no components computed first."""
    return _search(indptr, indices, np.empty(0, dtype=np.int64), True)[::2]


def component_depths(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The breadth-first depth of every vertex of a symmetric pattern from the least vertex of
    its connected component (:func:`component_order_levels`)."""
    return component_order_levels(indptr, indices)[1]


def _search(indptr, indices, roots, each_component: bool, cap: int | None = None):
    """The compiled breadth-first search behind the functions above: (order, its length,
    levels); with ``cap``, it stops once it queues a vertex at that level."""
    n = indptr.size - 1
    return _bfs(np.ascontiguousarray(indptr), np.ascontiguousarray(indices), roots,
                np.int64(n), each_component, np.int64(n + 1 if cap is None else cap))


def component_labels(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The connected component of every vertex, edges taken both ways (a union-find over the
    stored edges, O(m α(n)) in one compiled pass): int64 labels, each the least vertex of its
    component. The labels differ from SciPy's 0..k-1 numbering; the components do not."""
    n = indptr.size - 1
    return _union_find(np.ascontiguousarray(indptr), np.ascontiguousarray(indices),
                       np.int64(n))


def reverse_cuthill_mckee(pattern, symmetric: bool) -> np.ndarray:
    """The reverse Cuthill-McKee order of a square pattern (SciPy's csr_matrix or csr_array;
    ``symmetric=False``: of A + Aᵀ), the same permutation as SciPy's
    ``reverse_cuthill_mckee(pattern, symmetric_mode=symmetric)`` (its seeds in NumPy's
    argsort of the degrees, each vertex's new neighbours ordered by degree, ties as they
    came), in one compiled pass at any size: O(n + m) plus the sorts of each vertex's new
    neighbours (a merge sort past 64 of them, where SciPy's insertion sort is quadratic in
    the largest degree), half SciPy's time on del20 (0.24 s against 0.55 s on 2 cores)."""
    if not symmetric:
        pattern = pattern + pattern.T
    pattern = pattern.tocsr()
    indptr = np.ascontiguousarray(pattern.indptr)
    indices = np.ascontiguousarray(pattern.indices)
    n = indptr.size - 1
    degree = _degrees_counting_loops(indptr, indices, np.int64(n))
    order = _cuthill_mckee(indptr, indices, degree, np.argsort(degree), np.int64(n))
    return order[::-1].copy()


def _degrees_counting_loops_loop(indptr, indices, n):
    # SciPy's degrees: a stored self loop counts twice
    degree = np.empty(n, dtype=np.int64)
    for i in range(n):
        degree[i] = indptr[i + 1] - indptr[i]
        for e in range(indptr[i], indptr[i + 1]):
            if indices[e] == i:
                degree[i] += 1
                break
    return degree


def _cuthill_mckee_loop(indptr, indices, degree, seeds, n):
    order = np.empty(n, dtype=np.int64)
    visited = np.zeros(n, dtype=np.bool_)
    count = 0
    for seed in seeds:  # a breadth-first search from each vertex not yet reached, least
        if count == n:  # degree first
            break
        if visited[seed]:
            continue
        visited[seed] = True
        order[count] = seed
        count += 1
        head = count - 1
        while head < count:
            v = order[head]
            head += 1
            first = count
            for e in range(indptr[v], indptr[v + 1]):
                w = indices[e]
                if not visited[w]:
                    visited[w] = True
                    order[count] = w
                    count += 1
            if count - first > 64:  # v's new neighbours by degree, stably: a merge sort
                group = order[first:count].copy()
                order[first:count] = group[np.argsort(degree[group], kind="mergesort")]
                continue
            for k in range(first + 1, count):  # (a few: an insertion sort, as SciPy's)
                w = order[k]
                d = degree[w]
                j = k
                while j > first and d < degree[order[j - 1]]:
                    order[j] = order[j - 1]
                    j -= 1
                order[j] = w
    return order


def compiled_on_first_use(function):
    """``function`` compiled by numba on first use (cached on disk, as the cpu engine's)."""
    compiled = None

    def run(*args):
        nonlocal compiled
        if compiled is None:
            from numba import njit

            compiled = njit(cache=True)(function)
        return compiled(*args)

    run.__doc__ = function.__doc__
    return run


def _bfs_loop(indptr, indices, roots, n, each_component, cap):
    level = np.full(n, -1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    tail = 0
    for root in roots:
        if level[root] < 0:
            level[root] = 0
            order[tail] = root
            tail += 1
    head, next_root = 0, 0
    while True:
        while head < tail:
            v = order[head]
            head += 1
            for e in range(indptr[v], indptr[v + 1]):
                w = indices[e]
                if level[w] < 0:
                    level[w] = level[v] + 1
                    order[tail] = w
                    tail += 1
                    if level[w] >= cap:  # deep enough: the caller asked no further
                        return order, tail, level
        if not each_component:
            break
        while next_root < n and level[next_root] >= 0:  # the next component's least vertex
            next_root += 1
        if next_root == n:
            break
        level[next_root] = 0
        order[tail] = next_root
        tail += 1
    return order, tail, level


def _union_find_loop(indptr, indices, n):
    parent = np.arange(n, dtype=np.int64)
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            a = u
            while parent[a] != a:  # path halving
                parent[a] = parent[parent[a]]
                a = parent[a]
            b = np.int64(indices[e])
            while parent[b] != b:
                parent[b] = parent[parent[b]]
                b = parent[b]
            if a < b:
                parent[b] = a
            elif b < a:
                parent[a] = b
    for u in range(n):  # every root is its component's least vertex: one pass resolves
        parent[u] = parent[parent[u]]
    return parent


_bfs = compiled_on_first_use(_bfs_loop)
_degrees_counting_loops = compiled_on_first_use(_degrees_counting_loops_loop)
_cuthill_mckee = compiled_on_first_use(_cuthill_mckee_loop)
_union_find = compiled_on_first_use(_union_find_loop)
