"""Everything compiled before the first call: ``turbobc warm-up``, and each Dask worker's.

A fresh install pays compiles at its first calls where nothing was compiled ahead (a CPU
without the extension of turbobc/_aot.py, a GPU the shipped kernels of spmv/prebuilt do not
cover, CuPy's own elementwise kernels, which CuPy compiles at first use). :func:`warm_up`
pays them all at once, where a container image is built or a cluster starts:

1. the CPU functions (turbobc/_compiled.py): from the shipped extension, or compiled by numba
   for every signature and written to its disk cache;
2. the GPU kernels (spmv/_module.py), where CuPy sees a device: every file's shipped binary
   loaded, or every instantiation compiled through NVRTC (CuPy's disk cache keeps them);
3. a small graph swept once for every kind of problem a call sends (hops and lengths,
   vertex and edge sums, folded trees' weights, folded chains; one source and all), on the
   GPU with each family forced (lanes, frontiers, layers; single for one source): the
   kernels CuPy compiles for itself on a family's path land in its disk cache too.

Dask's ``warm_up`` (turbobc/_dask.py) runs the same on every worker (turbobc/_dask_worker.py
``warm``).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from turbobc._executor import LocalExecutor
from turbobc._tuning import tuning
from turbobc.engines import resolve_engine
from turbobc.engines.protocol import Problem, SlotWeightsDeclined

__all__ = ["warm_up", "warm_cpu_functions", "warm_gpu_kernels", "sweep_small_problems",
           "small_problems", "engine_for"]

GPU_FAMILIES = ("auto", "frontiers", "layers")
"""The GPU families forced in turn over the small problems ("auto" takes the lanes for many
sources and the single family for one; weighted problems always take the layers)."""

SLOT_FAMILIES = ("auto", "frontiers")
"""The GPU families forced in turn over the small problems with chain plans (``"auto"``
takes the lanes on a graph that is not deep)."""


def warm_up(engine: str = "auto") -> dict:
    """Compile (or load) everything ``engine`` ("auto", "cpu", "gpu" or "graphblas") would
    compile at a first call, and sweep the small problems once; a report of what each step
    did and its seconds."""
    began = time.perf_counter()
    report: dict = {}
    from turbobc._engines import gpu_status

    gpu = engine in ("auto", "gpu") and gpu_status()[0]
    if engine in ("auto", "cpu") or (engine == "gpu" and not gpu):
        report["cpu_functions"] = warm_cpu_functions()
    if gpu:
        report["gpu_kernels"] = warm_gpu_kernels()
    report["sweeps"] = sweep_small_problems(engine)
    report["seconds"] = time.perf_counter() - began
    return report


def warm_cpu_functions() -> dict:
    """Every CPU function of every signature ready: from the shipped extension (nothing to
    compile), else compiled by numba and cached on disk."""
    from turbobc._compiled import ENTRY_POINTS, entry, shipped_core, signatures

    began = time.perf_counter()
    if shipped_core() is not None:
        return {"source": "compiled ahead (turbobc/_aot_core)", "functions": len(ENTRY_POINTS),
                "seconds": time.perf_counter() - began}
    from numba.core.sigutils import normalize_signature

    count = 0
    for name in ENTRY_POINTS:
        for index, signature in signatures(name).items():
            function = entry(name, None if index == "any" else index)
            args, _ = normalize_signature(signature)
            function.dispatcher.compile(args)
            count += 1
    return {"source": "compiled by numba (its disk cache keeps them)", "functions": count,
            "seconds": time.perf_counter() - began}


def warm_gpu_kernels() -> dict:
    """Every kernel file's module on this device, for both index types: shipped binaries
    loaded, else every instantiation compiled through NVRTC (spmv/_module.py)."""
    from spmv import _module

    began = time.perf_counter()
    before = len(_module._compiled)
    count = sum(_module.warm_kernels(index) for index in _module.INDEX_TYPES)
    return {"instantiations": count, "compiled_through_nvrtc": len(_module._compiled) - before,
            "seconds": time.perf_counter() - began}


def small_problems() -> list[Problem]:
    """A cycle of 12 with chords and a chain of 3 inner vertices, unweighted and weighted,
    as every kind of problem a call sends: plain, edge sums, folded trees' weights, folded
    chains."""
    import scipy.sparse as sp

    from turbobc._chains import ChainFolding, find_chains
    from turbobc._graph import Graph

    rows = list(range(12)) + [0, 3, 12, 13, 14]
    cols = [(i + 1) % 12 for i in range(12)] + [6, 9, 13, 14, 15]
    rows, cols = rows + [0, 15], cols + [12, 6]
    pattern = sp.coo_array((np.ones(2 * len(rows)), (rows + cols, cols + rows)),
                           shape=(16, 16)).tocsr()
    pattern.sum_duplicates()
    pattern.data[:] = 1.0
    lengths = 1.0 + (pattern.indices + np.repeat(np.arange(16), np.diff(pattern.indptr))) % 3
    hops = Graph(pattern=sp.csr_array(pattern), directed=False)
    weighted = Graph(pattern=hops.pattern, directed=False, lengths=lengths.astype(np.float64))
    weight = np.arange(1.0, 17.0)
    problems = []
    for graph in (hops, weighted):
        problems += [Problem(graph), Problem(graph, edges=True),
                     Problem(graph, target_weight=weight, source_weight=weight)]
        plan = ChainFolding(graph, np.ones(graph.n), find_chains(graph))
        problems.append(Problem(graph, slot_weights=plan))
    return problems


def engine_for(engine: str, problem: Problem):
    """The engine ``engine`` names here for ``problem``: resolved as a call would be, on the
    problem without its chain plan; that engine must then serve the plan, else
    ``SlotWeightsDeclined`` (the caller sweeps the core unfolded, turbobc/_fold.py)."""
    if problem.slot_weights is None:
        return resolve_engine(engine, problem)
    chosen = resolve_engine(engine, dataclasses.replace(problem, slot_weights=None))
    reason = chosen.can_serve(problem)
    if reason is not None:
        raise SlotWeightsDeclined(f"the {chosen.name} engine here does not serve the folded "
                                  f"chains: {reason}")
    return chosen


def sweep_small_problems(engine: str = "auto") -> dict:
    """Every small problem swept once with all its sources and once with one, on the engine
    ``engine`` resolves to (on a GPU, with each family of :data:`GPU_FAMILIES` forced); the
    engines used and the seconds."""
    began = time.perf_counter()
    used = set()
    for problem in small_problems():
        try:
            chosen = engine_for(engine, problem)
        except SlotWeightsDeclined:
            continue  # a call's plan is declined the same way
        # the families serve unweighted problems; a chain plan takes the lanes ("auto" on a
        # small graph) or the frontiers; weighted problems take theirs
        if chosen.name != "gpu" or problem.weighted:
            families = ("auto",)
        elif problem.slot_weights is not None:
            families = SLOT_FAMILIES
        else:
            families = GPU_FAMILIES
        for family in families:
            with tuning(gpu_family=family), LocalExecutor().open(problem, chosen) as sweeper:
                sources = (problem.slot_weights.sources if problem.slot_weights is not None
                           else np.arange(problem.graph.n))
                sweeper.run(sources)
                if problem.slot_weights is None:
                    sweeper.run(sources[:1])
        used.add(chosen.name)
    return {"engines": sorted(used), "seconds": time.perf_counter() - began}
