"""Breadth-first searches, connected components and the reverse Cuthill-McKee order of a
pattern, by SciPy where it serves and by compiled loops where it does not.

SciPy's ``scipy.sparse.csgraph`` casts the index arrays to int32 (and refuses values that do
not fit), so from 2^31 - 1 stored edges or vertices (:data:`CSGRAPH_LIMIT`) a graph is out of
its reach; and its code is compiled already, where the loops here are compiled by numba at
first use (seconds in a fresh process, the cold-start issue) unless shipped ahead
(turbobc/_compiled.py serves them). The compiled loops are the faster ones (half SciPy's time
for the reverse Cuthill-McKee order of del20, a quarter of it for a search of
road-luxembourg-osm), so they run whenever they are shipped ahead; without the extension each
function below runs SciPy below :data:`SCIPY_BELOW_NNZ` stored edges (milliseconds there: the
graphs a first call meets) and the loop, compiled at first use, from there on, where its
compile is small beside the graph's work. ``component_order_levels`` is compiled at every
size (SciPy has none);
``peel_trees`` (turbobc/_reduce.py's folding of hanging trees) runs compiled when shipped
and as plain Python otherwise (4.5 ms of ca-GrQc's 10.4 ms exact run on an H200 host had been
its Python loop).
Imports only turbobc/_compiled.py, and that when a loop runs.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CSGRAPH_LIMIT", "SCIPY_BELOW_NNZ", "PREFER_SHIPPED", "past_csgraph", "scipy_serves",
           "scipy_order_levels", "bfs_order_levels", "bfs_depths",
           "component_order_levels", "component_depths", "component_labels", "peel_trees",
           "reverse_cuthill_mckee"]

CSGRAPH_LIMIT = 2**31 - 1
"""SciPy's csgraph routines take n vertices and nnz stored edges below this (int32 indices)."""

SCIPY_BELOW_NNZ = 2**22
"""Below this many stored edges the searches run in SciPy (no compile on a first call)."""

PREFER_SHIPPED = True
"""Whether the compiled loops run at every size when shipped ahead (False: SciPy below
:data:`SCIPY_BELOW_NNZ` whatever is shipped, as the tests of SciPy's path set it)."""

RCM_SCIPY_SORT_WORK = 2**26
"""SciPy's reverse Cuthill-McKee order sorts each vertex's new neighbours by insertion, work
up to the sum of squared degrees: past this much, the compiled order (a merge sort) runs."""


def past_csgraph(pattern) -> bool:
    """Whether ``pattern`` (a SciPy sparse matrix) is out of SciPy csgraph's reach."""
    return max(pattern.shape[0], pattern.nnz) >= CSGRAPH_LIMIT


def scipy_serves(indptr: np.ndarray) -> bool:
    """Whether SciPy's searches run on the pattern with these row pointers: it is small
    enough for them, and the compiled loops are not shipped ahead (they would have to be
    compiled first; shipped, they are faster: ego-Facebook's reverse Cuthill-McKee order
    1.7 ms against SciPy's 6.0 ms on 2 cores, the search of road-luxembourg-osm 6 ms
    against 25 ms)."""
    from turbobc._compiled import shipped_core

    return (int(indptr[-1]) < SCIPY_BELOW_NNZ and indptr.size - 1 < CSGRAPH_LIMIT
            and not (PREFER_SHIPPED and shipped_core(say=False) is not None))


def _csr(indptr: np.ndarray, indices: np.ndarray, extra_row: np.ndarray | None = None):
    """The pattern as SciPy's CSR matrix (int8 ones); with ``extra_row``, one more vertex n
    whose out-edges go to ``extra_row`` (a virtual root of a search from several roots)."""
    import scipy.sparse as sp

    n = indptr.size - 1
    if extra_row is not None:
        indptr = np.append(indptr, indptr[-1] + extra_row.size)
        indices = np.concatenate([indices, extra_row.astype(indices.dtype)])
        n += 1
    ones = np.ones(indices.size, dtype=np.int8)
    return sp.csr_matrix((ones, indices, indptr), shape=(n, n))


def scipy_order_levels(csr, root: int) -> tuple[np.ndarray, np.ndarray]:
    """Breadth-first order from ``root`` along out-edges of a SciPy CSR matrix, and the level
    of every vertex (-1 where unreached): O(n + m) in SciPy plus O(n log depth) in NumPy (the
    levels by pointer jumping over the breadth-first tree)."""
    from scipy.sparse.csgraph import breadth_first_order

    order, pred = breadth_first_order(csr, root, directed=True, return_predecessors=True)
    n = csr.shape[0]
    level = np.full(n, -1, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(order.size)
    jump = pos[np.where(order == root, root, pred[order])]   # parents, as places in order
    hops = np.ones(order.size, dtype=np.int64)
    hops[0] = 0
    while True:  # hops[i] = the levels from order[i] up to order[jump[i]]
        done = jump == 0
        if done.all():
            break
        hops = hops + np.where(done, 0, hops[jump])
        jump = np.where(done, 0, jump[jump])
    level[order] = hops
    return order, level


def _scipy_depths(indptr: np.ndarray, indices: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """The depth of every vertex from the nearest of ``roots`` (-1 where unreached): one SciPy
    search from a virtual root whose out-edges go to ``roots``."""
    n = indptr.size - 1
    level = scipy_order_levels(_csr(indptr, indices, np.asarray(roots)), n)[1][:n]
    return np.where(level > 0, level - 1, -1)


def bfs_order_levels(indptr: np.ndarray, indices: np.ndarray, root: int):
    """Breadth-first order from ``root`` along out-edges (int64) and the level of every vertex
    (-1 where unreached), in one pass: O(n + m) (SciPy below :data:`SCIPY_BELOW_NNZ`)."""
    if scipy_serves(indptr):
        return scipy_order_levels(_csr(indptr, indices), root)
    order, count, level = _search(indptr, indices, np.array([root], dtype=np.int64), False)
    return order[:count], level


def bfs_depths(indptr: np.ndarray, indices: np.ndarray, roots: np.ndarray) -> np.ndarray:
    """The breadth-first depth of every vertex from the nearest of ``roots`` (one search from
    all of them at once; -1 where unreached), in one pass: O(n + m)."""
    if scipy_serves(indptr):
        return _scipy_depths(indptr, indices, np.asarray(roots, dtype=np.int64))
    return _search(indptr, indices, np.asarray(roots, dtype=np.int64), False)[2]


def component_order_levels(indptr: np.ndarray, indices: np.ndarray):
    """A breadth-first order of the whole pattern (a search from each vertex not yet reached,
    in vertex order, so every component from its least vertex) and every vertex's depth in
    it, in one compiled pass: O(n + m), no components computed first."""
    return _search(indptr, indices, np.empty(0, dtype=np.int64), True)[::2]


def component_depths(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The breadth-first depth of every vertex of a symmetric pattern from the least vertex of
    its connected component (:func:`component_order_levels`; below :data:`SCIPY_BELOW_NNZ`
    SciPy's components, then one search from every component's least vertex at once)."""
    if scipy_serves(indptr):
        from scipy.sparse.csgraph import connected_components

        label = connected_components(_csr(indptr, indices), directed=False)[1]
        least = np.unique(label, return_index=True)[1]  # first of each label: least vertex
        return _scipy_depths(indptr, indices, least)
    return component_order_levels(indptr, indices)[1]


def _search(indptr, indices, roots, each_component: bool):
    """The compiled breadth-first search behind the functions above: (order, its length,
    levels)."""
    n = indptr.size - 1
    return _bfs(np.ascontiguousarray(indptr), np.ascontiguousarray(indices), roots,
                np.int64(n), each_component)


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
    the largest degree), half SciPy's time on del20 (0.24 s against 0.55 s on 2 cores).
    SciPy's own runs below :data:`SCIPY_BELOW_NNZ` stored edges when its sorts cost at most
    :data:`RCM_SCIPY_SORT_WORK` (the sum of squared degrees): the same permutation without a
    compile."""
    if not symmetric:
        pattern = pattern + pattern.T
    pattern = pattern.tocsr()
    degrees = np.diff(pattern.indptr).astype(np.float64)
    if scipy_serves(pattern.indptr) and degrees @ degrees <= RCM_SCIPY_SORT_WORK:
        from scipy.sparse.csgraph import reverse_cuthill_mckee as scipy_rcm

        return scipy_rcm(pattern.astype(np.int8), symmetric_mode=True).astype(np.int64)
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
                ranks = np.argsort(degree[group], kind="mergesort")
                for k in range(ranks.size):  # a loop: numba compiles a slice assignment's
                    order[first + k] = group[ranks[k]]  # shape check for seconds
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


def _bfs_loop(indptr, indices, roots, n, each_component):
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


def peel_trees(degree: np.ndarray, neighbour_sum: np.ndarray, leaves: np.ndarray):
    """Peel the trees hanging off an undirected graph, leaf after leaf (turbobc/_reduce.py's
    ``fold_trees``): ``degree`` (int64, each vertex's neighbours), ``neighbour_sum`` (int64,
    the sum of their ids) and ``leaves`` (the vertices of degree 1). A vertex left with one
    neighbour finds it as its neighbour sum and folds into it with the trees folded into it
    already.

    Returns int64 arrays: the folded vertices in the order they fold, the vertex each folded
    into, the size of the tree each carried, and per vertex its size r (itself and the trees
    folded into it), Σ c and Σ c² over the trees c folded into it. Compiled when shipped
    ahead (turbobc/_compiled.py), plain Python otherwise (no compile on a first call).
    """
    from turbobc._compiled import entry, shipped_core

    arrays = (np.array(degree, dtype=np.int64), np.array(neighbour_sum, dtype=np.int64),
              np.ascontiguousarray(leaves, dtype=np.int64))
    loop = entry("peel_trees") if shipped_core(say=False) is not None else _peel_loop
    return loop(*arrays)


def _peel_loop(degree, neighbour_sum, leaves):
    n = degree.size
    size = np.ones(n, dtype=np.int64)
    hanging_sum = np.zeros(n, dtype=np.int64)
    hanging_sq = np.zeros(n, dtype=np.int64)
    folded = np.empty(n, dtype=np.int64)
    parent = np.empty(n, dtype=np.int64)
    carried = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)  # a vertex enters once: when its degree reaches 1
    top = 0
    for x in leaves:
        stack[top] = x
        top += 1
    count = 0
    while top > 0:
        top -= 1
        x = stack[top]
        if degree[x] != 1:  # its neighbour was folded into it meanwhile (a tree's root)
            continue
        p = neighbour_sum[x]
        degree[x] = 0  # x leaves; its tree (size r(x)) hangs from p from now on
        degree[p] -= 1
        neighbour_sum[p] -= x
        c = size[x]
        folded[count], parent[count], carried[count] = x, p, c
        count += 1
        size[p] += c
        hanging_sum[p] += c
        hanging_sq[p] += c * c
        if degree[p] == 1:
            stack[top] = p
            top += 1
    return (folded[:count].copy(), parent[:count].copy(), carried[:count].copy(), size,
            hanging_sum, hanging_sq)


def _compiled(name: str):
    """The compiled loop ``name`` (turbobc/_compiled.py: shipped ahead, or compiled at first
    use), called with the types it was compiled for: int64 row pointers, int32 or int64
    column indices, int64 arrays and counts."""
    from turbobc._compiled import entry

    def run(indptr, indices, *rest):
        indices = np.ascontiguousarray(indices, dtype=_index_type(indices))
        rest = tuple(np.ascontiguousarray(r, dtype=np.int64) if isinstance(r, np.ndarray)
                     else r for r in rest)
        return entry(name, indices.dtype)(np.ascontiguousarray(indptr, dtype=np.int64),
                                          indices, *rest)

    return run


def _index_type(indices: np.ndarray):
    """int32 indices stay int32; any other type is widened to int64."""
    return np.int32 if indices.dtype == np.int32 else np.int64


_bfs = _compiled("bfs")
_degrees_counting_loops = _compiled("degrees_counting_loops")
_cuthill_mckee = _compiled("cuthill_mckee")
_union_find = _compiled("union_find")
