"""The layers family: a thread (or a warp) per (source, vertex) slot of each layer of the
shortest-path DAG (:class:`LayersFamily`, the family protocol of turbobc/engines/gpu/family.py).

Chosen (turbobc/engines/gpu/engine.py, ``choose_family``) for every weighted problem
(``Graph.lengths``), vertex and edge BC, any number of sources, and for unweighted runs of many
sources when ``Tuning.gpu_family`` asks for it (``hops``: every edge of length 1, where the
lanes family keeps few of a warp's 32 lanes busy on deep graphs). Per batch of B sources:

1. the distances ``dist[b · n + v]`` (layers_distances.py; spmv/kernels/distances.cu): frontier
   Bellman–Ford rounds, or one block per source in shared memory; for ``hops`` the rounds are
   the breadth-first levels;
2. the DAG sweep (layers_sweep.py; spmv/kernels/layers.cu and block_sweep.cu) with the DAG test
   d(v) + len(v, w) == d(w) (exact float64 equality): path counts over the DAG's hop layers
   (Kahn's order), the accumulate step of spmv/kernels/accumulate.cuh (τ, ω), the endpoint
   terms and, for edge BC, the edge sums (CSR order). Lanes whose counts reach +inf go to the
   exponent-per-vertex sweep of turbobc/engines/wide.py (``Tuning.gpu_weighted_path="wide"``
   sends every lane there: :data:`PATHS`).

``kernel=`` is accepted and ignored. Device memory: turbobc/engines/gpu/memory.py (the layers
part: the CSR format and the lengths, bc, the edge sums, and per source
``BYTES_PER_HOP_SLOT`` per vertex on the kernels' path).
"""

from __future__ import annotations

import time

import numpy as np

from spmv import _ctl

from turbobc._graph import index_dtype_for
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.family import Family, Plan
from turbobc.engines.gpu.layers_distances import distances
from turbobc.engines.gpu.layers_sweep import sweep_dag
from turbobc.engines.gpu.memory import (BYTES_PER_EDGE_SLOT, BYTES_PER_HOP_SLOT, BYTES_PER_SLOT,
                                        chain_scratch_bytes, choose_layers_batch,
                                        device_free_bytes, layers_bytes)
from turbobc.engines.gpu.resident import DeviceResident
from turbobc.engines.protocol import Partial, SlotWeightsDeclined
from turbobc.engines.wide import accumulate_wide

__all__ = ["LayersFamily", "LAYER_PARTS", "PATHS"]

LAYER_PARTS = ("csr_ptr", "csr_idx", "lengths")
"""The format parts a layers run sweeps with (turbobc/engines/gpu/resident.py)."""

PATHS = ("wide", "kernels")
"""How the DAG is swept after the distances (``Tuning.gpu_weighted_path``, default
``"kernels"``): ``"wide"``, engines/wide.py's sweep on CuPy (mantissa and exponent per count;
many small launches per layer), or ``"kernels"``, the layer kernels (plain float64 counts, lanes
whose counts reach +inf swept again by the wide path)."""


class LayersFamily(Family):
    """A thread per (source, vertex) slot of each DAG layer (module docstring).

    Parameters
    ----------
    problem : Problem
        Weighted (``graph.lengths``) or, with ``hops``, unweighted; vertex or edge sums, τ and
        ω, endpoints, memory limit; per-slot target weights (``problem.slot_weights``, a
        weighted graph with exact sums of lengths: the plan's batches of the sources a sweep is
        given, τ per slot, the plan's closed-form credit added to the sums).
    hops : bool
        Sweep an unweighted graph with every edge of length 1.
    batch : int, optional
        Force the sources per batch (tests, benchmarks).
    index_dtype : numpy dtype, optional
        Force int32 or int64 indices.
    path : str, optional
        The DAG sweep (:data:`PATHS`; default ``Tuning.gpu_weighted_path``; with ``hops`` or
        per-slot target weights always the kernels).
    """

    name = "layers"

    def __init__(self, problem, *, hops: bool = False, batch=None, index_dtype=None,
                 path=None):
        super().__init__(problem)
        self.hops, self.batch, self.index_dtype, self.path = hops, batch, index_dtype, path

    def _path(self) -> str:
        path = current_tuning().gpu_weighted_path if self.path is None else self.path
        if path not in PATHS:
            raise ValueError(f"the weighted path must be one of {PATHS}; got {path!r}")
        return "kernels" if self.hops or self.problem.slot_weights is not None else path

    def plan(self, resident, num_sources: int) -> Plan:
        """Sources per batch of a run of ``num_sources`` now (the layer kernels' model on the
        kernels' path, the wide sweep's otherwise)."""
        graph, problem = resident.graph, self.problem
        index_dtype = np.dtype(self.index_dtype or index_dtype_for(graph.n, graph.nnz))
        kernels = self._path() == "kernels"
        batch = choose_layers_batch(graph.n, graph.nnz, num_sources, device_free_bytes(),
                                    index_bytes=index_dtype.itemsize, edges=problem.edges,
                                    memory_limit=problem.memory_limit, hops=kernels)
        return Plan(self.name, batch=batch,
                    model_bytes=layers_bytes(graph.n, graph.nnz, batch=batch,
                                             index_bytes=index_dtype.itemsize,
                                             edges=problem.edges, hops=kernels),
                    shape={"slots": batch * graph.n, "index_dtype": str(index_dtype),
                           "path": self._path()})

    def sweep(self, resident, sources, progress=None):
        """Raw sums of ``sources`` (vertex, and edge sums for edge BC) and the run's facts, as
        :meth:`turbobc.engines.gpu.lanes.LanesFamily.sweep` defines them.

        Raises
        ------
        ValueError
            For an unknown kernel or path, a graph without lengths (unless ``hops``) or with
            them (with ``hops``), or repeated sources.
        MemoryError
            When the device cannot hold the format and one source's arrays.
        SlotWeightsDeclined
            With per-slot target weights, when a batch's counts pass float64's range or the
            device runs out of memory (the caller sweeps unfolded).
        """
        import spmv

        problem, hops = self.problem, self.hops
        spmv.check_kernel(problem.kernel)
        path = self._path()
        if (resident.graph.lengths is None) != hops:
            raise ValueError("the layers family needs a graph with lengths" if not hops else
                             "hops=True sweeps an unweighted graph; this one has lengths")
        plan = problem.slot_weights
        edge = np.zeros(resident.graph.nnz, dtype=np.float64) if problem.edges else None
        facts: dict = {}
        with resident.run():
            weights = resident.accumulate_weights(problem.target_weight, problem.source_weight)
            failure = None
            try:
                raw = _run(resident, sources, endpoints=problem.endpoints, progress=progress,
                           memory_limit=problem.memory_limit, facts=facts, weights=weights,
                           edge_raw=edge, batch=self.batch, index_dtype=self.index_dtype,
                           path=path, hops=hops, plan=plan)
                return Partial(vertex=raw, sources=int(np.asarray(sources).size),
                               edge=edge), facts
            except _OutOfMemory as exc:
                failure = str(exc)
            finally:
                if plan is not None:
                    plan.forget_device()  # the plan's uploads
            resident.release()
            del weights
        if plan is not None:
            # the caller sweeps unfolded, whose own memory model says whether it fits
            raise SlotWeightsDeclined(f"the device ran out of memory: {failure}")
        graph = resident.graph
        model = (f"about {BYTES_PER_HOP_SLOT} bytes per vertex" if path == "kernels" else
                 f"about {BYTES_PER_SLOT} bytes per vertex and {BYTES_PER_EDGE_SLOT} per stored "
                 "edge")
        raise MemoryError(
            f"the GPU engine could not hold a layers batch (n={graph.n}, m={graph.nnz}: "
            f"{model}, per source); free device memory or run it with engine='graphblas'. "
            f"CuPy said: {failure}")


class _OutOfMemory(Exception):
    pass


def _run(resident, sources, *, endpoints, progress, memory_limit, facts, weights,
         edge_raw, batch, index_dtype, path="kernels", hops=False, plan=None) -> np.ndarray:
    """The run inside :meth:`DeviceResident.run`: batches of distances and DAG sweeps."""
    import cupy

    graph = resident.graph
    n, m = graph.n, graph.nnz
    edges = edge_raw is not None
    sources = np.asarray(sources, dtype=np.int64)
    if sources.size == 0 or n == 0:
        return np.zeros(n, dtype=np.float64)
    if np.unique(sources).size != sources.size:
        raise ValueError("sources must be distinct")
    forced_batch = batch
    index_dtype = (np.dtype(index_dtype) if index_dtype is not None
                   else index_dtype_for(n, m))
    # what a layers run does not sweep with would only take memory
    resident.keep_only(LAYER_PARTS, index_dtype)
    resident.drop_workspace()
    if not edges:
        resident.drop_edge_accumulator()
    failure = None
    try:
        ptr = resident.fetch("csr_ptr", index_dtype)
        idx = resident.fetch("csr_idx", index_dtype)
        lengths = resident.fetch("lengths", index_dtype)
        bc, _ = resident.accumulator(_ctl.N_CTL)
        edge = resident.edge_accumulator() if edges else None
        budget = None if memory_limit is None else max(
            0, memory_limit - DeviceResident.weight_bytes(weights))
        free = device_free_bytes() + resident.edge_bytes()
        # the wide sweep's batch (every lane of a weighted run, the lanes out of float64
        # range of the kernels) plans the full model; a hops run's kernels plan their own
        wide_batch = choose_layers_batch(n, m, sources.size, free,
                                         index_bytes=index_dtype.itemsize, edges=edges,
                                         memory_limit=budget)
        if forced_batch is not None:
            batch = wide_batch = max(1, min(int(forced_batch), sources.size))
        elif path == "kernels":  # (always with hops and with a plan)
            # the layer kernels hold a slot in BYTES_PER_HOP_SLOT whatever the lengths: their
            # batch is not capped by the wide sweep's, which takes its own (smaller) batches;
            # a plan's helper slots join its sources, so its batches plan for every vertex
            batch = choose_layers_batch(n, m, n if plan is not None else sources.size, free,
                                        index_bytes=index_dtype.itemsize, edges=edges,
                                        memory_limit=budget, hops=True,
                                        slot_scratch=(None if plan is None else
                                                      chain_scratch_bytes(
                                                          n, plan.chains.count, plan.folded)))
        else:
            batch = wide_batch
        rounds: list = []
        # the distances, and the layer kernels' phases (each timed to the device's end)
        seconds = {"distances": 0.0, "indegree": 0.0, "forward": 0.0, "backward": 0.0,
                   "block": 0.0}

        def batch_distances(batch_sources):
            began = time.perf_counter()
            out = distances(ptr, idx, lengths, n, batch_sources, rounds)
            # the per-block kernel returns before it is done: its time is the distances'
            cupy.cuda.get_current_stream().synchronize()
            resident.mark()
            seconds["distances"] += time.perf_counter() - began
            return out

        began = time.perf_counter()
        wide = sources
        batches = None
        if plan is not None:
            batches = plan.batches(batch, sources=sources)
            batch = max(len(slots) for slots in batches)
        if path == "kernels":
            wide = sweep_dag(ptr, idx, lengths, n, sources, bc, edge, endpoints, weights, batch,
                             batch_distances, progress, seconds, plan=plan, batches=batches)
        if len(wide):
            accumulate_wide(cupy, ptr, idx, n, wide, bc, endpoints=endpoints,
                            progress=progress, batch_entries=wide_batch * n,
                            target_weight=weights[0], source_weight=weights[1],
                            edge_raw=edge, lengths=lengths, distances=batch_distances)
        raw = bc.get()
        if edges:
            edge_raw += edge.get()
        if plan is not None:
            # what the folded sources of the run add in closed form: to the vertices (vertex
            # BC) or to the chains' edges (edge BC)
            raw += plan.credit
            if edges:
                edge_raw += plan.edge_credit()
        resident.mark()
        sweep_seconds = time.perf_counter() - began
    except cupy.cuda.memory.OutOfMemoryError as exc:
        failure = str(exc)  # the run's arrays die with this block
    if failure is not None:
        raise _OutOfMemory(failure)
    if facts is not None:
        facts.update(family="layers", distances="breadth-first" if hops else "bellman-ford",
                     kernel="bfs+kernels" if hops else f"bellman-ford+{path}", batch=batch,
                     batches=(len(batches) if batches is not None
                              else -(-sources.size // batch)),
                     rounds=max(rounds, default=0),
                     distance_seconds=seconds["distances"], sweep_seconds=sweep_seconds,
                     layer_seconds={key: seconds[key]
                                    for key in ("indegree", "forward", "backward", "block")},
                     index_dtype=str(index_dtype),
                     wide_sources=len(wide) if path == "kernels" else 0, edge_sums=edges,
                     peak_pool_bytes=resident.peak - resident.baseline,
                     model_bytes=layers_bytes(n, m, batch=batch,
                                              index_bytes=index_dtype.itemsize, edges=edges,
                                              hops=path == "kernels"),
                     **resident.run_facts())
    return raw
