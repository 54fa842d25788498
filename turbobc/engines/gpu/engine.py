"""The GPU engine behind the protocol: its plan picks the kernel family for each run.

One source is swept by the single-source family (:mod:`turbobc.engines.gpu.single`, spmv/kernels/single.cuh);
more by the batched family (:mod:`turbobc.engines.gpu.batched`, spmv/kernels/batched.cuh), which
itself goes one source at a time when not even 32 lanes fit in device memory. Edge BC
(``Problem.edges``) always runs batched, one source too: only the batched kernels have the
EdgeSums accumulator (spmv/kernels/batched_backward.cuh).

Weighted graphs (``Graph.lengths``, ``Problem.weighted``), vertex and edge BC, go to
:mod:`turbobc.engines.gpu.weighted` whatever the number of sources: Bellman–Ford distances on
the device, then the layer kernels' sweep of the shortest-path DAG. The same module serves
unweighted runs of more than one source as the **queue** family (``Tuning.gpu_family``), every
edge of length 1: a thread per (source, vertex) slot of each breadth-first level, where the
batched family works a warp per (vertex, 32 sources) unit of which a deep graph keeps only a
few lanes busy (bench/deep_profile.py: about 2 of 32 on road networks).

Not served here (:meth:`GpuEngine.can_serve` says why; the CPU engine serves it): networkx's
edge subset BC (``Problem.split_non_targets``: a non-target's dependency split among its
parents in equal shares, which would need each vertex's parent count per source and a second
accumulator beside t). The facts of
each run (``family``, kernel, batch, depth, peak pool bytes, seconds, ``resident_reused``,
``upload_seconds``) land in :attr:`GpuSweeper.facts`.

Resident: a :class:`GpuSweeper` keeps one :class:`~turbobc.engines.gpu.resident.DeviceResident`
for its lifetime. Opening allocates nothing; each run builds on the device only the format
parts it does not find there (CSC for the single-source family, or its COOC column array and
veCSC hub units; CSR, CSC when directed, and COO rows for scCOOC for the batched one; an
undirected graph's CSR is its CSC, so both families share one copy), and later runs of the same
family, kernel and index type copy nothing of the graph. The batched blocks, the result and the
control block are kept too (zeroed per run). :meth:`GpuSweeper.close` lets all of it go (CuPy's
pool keeps the blocks cached); a closed sweeper refuses to run. A sweeper is used by one thread
at a time; separate sweepers share nothing.
"""

from __future__ import annotations

import numpy as np

from turbobc._engines import gpu_status
from turbobc._graph import index_dtype_for
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.resident import DeviceResident
from turbobc.engines.protocol import Engine, Partial, Problem, Sweeper, slot_weights_reason

__all__ = ["GpuEngine", "GpuSweeper", "FAMILIES"]

FAMILIES = ("auto", "lanes", "queue")
"""Values of ``Tuning.gpu_family`` (:meth:`GpuSweeper._family`)."""


class GpuEngine(Engine):
    """The CUDA engine through CuPy."""

    name = "gpu"

    def can_serve(self, problem: Problem) -> str | None:
        if problem.split_non_targets:
            return ("networkx's edge subset BC (edge BC with targets: a non-target's "
                    "dependency split among its parents in equal shares) runs on the CPU "
                    "engine (graphblas) for now")
        reason = slot_weights_reason(problem)
        if reason is not None:
            return reason
        if (problem.slot_weights is not None and not problem.weighted
                and self._family_name() == "queue"):
            return ("per-slot target weights serve unweighted graphs on the batched kernels, "
                    "not the queue family")
        usable, reason = gpu_status()
        return None if usable else f"no usable GPU: {reason}"

    @staticmethod
    def _family_name() -> str:
        return current_tuning().gpu_family

    def open(self, problem: Problem) -> "GpuSweeper":
        return GpuSweeper(problem)


class GpuSweeper(Sweeper):
    """Runs sources on the device, choosing the family per run and keeping the graph there
    between runs (module docstring).

    Attributes
    ----------
    resident : DeviceResident
        What stays on the device between runs: ``resident.parts`` maps
        ``(part, index type)`` to the device arrays of the format
        (:mod:`turbobc.engines.gpu.resident`).
    """

    def __init__(self, problem: Problem):
        super().__init__(problem)
        self.resident = DeviceResident(problem.graph)  # empty: the first run fills it

    def run(self, sources: np.ndarray, progress=None) -> Partial:
        """Raw sums of ``sources`` (see :class:`~turbobc.engines.protocol.Sweeper`).

        Raises
        ------
        RuntimeError
            When the sweeper is closed, or another thread is running it.
        """
        if self.resident.closed:
            raise RuntimeError("this GPU sweeper is closed; open another with "
                               "GpuEngine().open(problem)")
        problem = self.problem
        sources = np.asarray(sources, dtype=np.int64)
        facts: dict = {}
        common = dict(endpoints=problem.endpoints, kernel=problem.kernel, progress=progress,
                      memory_limit=problem.memory_limit, facts=facts,
                      target_weight=problem.target_weight,
                      source_weight=problem.source_weight)
        edge = None
        if problem.weighted:
            # weighted BC (vertex and edge): Bellman-Ford distances and the DAG sweep
            from turbobc.engines.gpu.weighted import accumulate_on

            edge = np.zeros(problem.graph.nnz, dtype=np.float64) if problem.edges else None
            # (per-slot target weights: the plan's batches on the layer kernels)
            raw = accumulate_on(self.resident, sources, edge_raw=edge,
                                slot_weights=problem.slot_weights, **common)
        elif problem.slot_weights is not None:
            # per-slot target weights (chain folding): the batched kernels, the plan's batches
            from turbobc.engines.gpu.batched import accumulate_on

            common.update(source_weight=None)
            raw = accumulate_on(self.resident, sources, slot_weights=problem.slot_weights,
                                **common)
        elif self._queue_family(sources.size):
            # deep graphs: the layer kernels of the weighted family with every length 1, a
            # thread per (source, vertex) slot of each level (no idle lanes)
            from turbobc.engines.gpu.weighted import accumulate_on

            edge = np.zeros(problem.graph.nnz, dtype=np.float64) if problem.edges else None
            raw = accumulate_on(self.resident, sources, edge_raw=edge, hops=True, **common)
        elif problem.edges:
            # edge BC: the batched family's EdgeSums kernels, whatever the number of sources
            from turbobc.engines.gpu.batched import accumulate_on

            edge = np.zeros(problem.graph.nnz, dtype=np.float64)
            raw = accumulate_on(self.resident, sources, edge_raw=edge, **common)
        elif sources.size > 1:
            from turbobc.engines.gpu.batched import accumulate_on

            raw = accumulate_on(self.resident, sources, **common)
        else:
            from turbobc.engines.gpu.single import accumulate_on

            raw = accumulate_on(self.resident, sources, **common)
        self.facts.update(engine="gpu", **facts)
        return Partial(vertex=raw, sources=int(sources.size), edge=edge)

    def _family(self, num_sources: int) -> str:
        """The family of an unweighted run of ``num_sources`` sources: ``"lanes"`` (the
        batched kernels, a warp per (vertex, 32 sources) unit) or ``"queue"`` (the layer
        kernels, a thread per (source, vertex) slot), from ``Tuning.gpu_family``."""
        family = current_tuning().gpu_family
        if family not in FAMILIES:
            raise ValueError(f"Tuning.gpu_family must be one of {FAMILIES}; got {family!r}")
        return "lanes" if family == "auto" else family

    def _queue_family(self, num_sources: int) -> bool:
        """Whether a run of ``num_sources`` sources goes to the queue family: unweighted, more
        than one source, and ``Tuning.gpu_family`` says so."""
        return (not self.problem.weighted and num_sources > 1
                and self._family(num_sources) == "queue")

    def planned_batch(self, num_sources: int) -> int:
        """About the sources one batch of a run of ``num_sources`` would take on this device
        now (:func:`turbobc.engines.gpu.batched.planned_batch`); a Dask run makes its chunks
        no smaller."""
        hops = self._queue_family(num_sources)
        if self.problem.weighted or hops:
            from turbobc.engines.gpu.batched import _device_free_bytes
            from turbobc.engines.gpu.weighted import choose_batch

            graph = self.problem.graph
            return choose_batch(graph.n, graph.nnz, num_sources, _device_free_bytes(),
                                index_bytes=index_dtype_for(graph.n, graph.nnz).itemsize,
                                edges=self.problem.edges,
                                memory_limit=self.problem.memory_limit, hops=hops)
        from turbobc.engines.gpu.batched import planned_batch

        return planned_batch(self.problem.graph, num_sources,
                             memory_limit=self.problem.memory_limit, edges=self.problem.edges)

    def close(self) -> None:
        """Let the device arrays go; calling it again does nothing."""
        self.resident.close()
