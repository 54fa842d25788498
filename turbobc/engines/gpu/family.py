"""The family protocol of the GPU engine: how a family of kernels plans a run and sweeps it.

A family is one way of traversing the graph on the device:

=========  =====================================================  ==========================
family     traversal                                              module, kernels
=========  =====================================================  ==========================
single     one source per sweep, a persistent launch whose grid   single.py; single.cuh
           covers the graph (a thread per vertex, per edge, or
           a warp per vertex)
lanes      32 sources per warp, a lane per source, n x B blocks   lanes.py; batched*.cuh
layers     a thread (or a warp) per (source, vertex) slot of       layers.py; distances.cu,
           each layer of the shortest-path DAG: distances first   layers.cu, block_sweep.cu
           (breadth-first or Bellman–Ford), then the DAG's layers
frontiers  a source per thread block, its frontier a queue and     frontiers.py; frontiers.cu
           its levels kept for the backward sweep (deep graphs)
=========  =====================================================  ==========================

Every family answers the same two calls for the problem it was made with::

    plan = family.plan(resident, num_sources)   # Plan: batch, model bytes, launch shape
    part, facts = family.sweep(resident, sources, progress)   # a Partial and the run's facts

and may build ahead, on the host, what depends on the graph alone (``family.build_ahead()``,
where ``family.builds_ahead``).

:func:`turbobc.engines.gpu.engine.choose_family` is the one place that picks a family, from the
problem's facts, and says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from turbobc.engines.protocol import Partial, Problem

__all__ = ["Family", "Plan", "sweep_with"]


@dataclass(frozen=True)
class Plan:
    """What a family would do with a run of some sources on this device now.

    Attributes
    ----------
    family : str
        The family's name.
    batch : int
        Sources per batch (1 for the single-source family).
    model_bytes : int
        Device bytes of the memory model for that batch (turbobc/engines/gpu/memory.py).
    shape : dict
        The launch shape: kernel, index type, lanes or slots per batch, ...
    """

    family: str
    batch: int
    model_bytes: int
    shape: dict = field(default_factory=dict)


class Family:
    """One family of kernels, made for one problem (a :class:`~turbobc.engines.protocol.Problem`).

    Subclasses set :attr:`name` and implement :meth:`plan` and :meth:`sweep`; keyword
    arguments of ``__init__`` beyond the problem are the family's test knobs (a forced batch,
    index type, ...), None for the engine's own choice.
    """

    name: str = ""
    builds_ahead: bool = False
    """Whether :meth:`build_ahead` builds anything (a Dask client asks before it asks the
    workers whether they have GPUs)."""

    def __init__(self, problem: Problem):
        self.problem = problem

    def build_ahead(self) -> None:
        """Build on the host, from the graph alone, what each sweeper of this family would
        otherwise build in its first sweep, and keep it on the graph, which carries it when
        pickled (``Graph.TRAVELLING_CACHE``): a Dask client builds it once for every GPU
        worker (turbobc/_dask.py, ``built_ahead``). Nothing by default."""

    def plan(self, resident, num_sources: int) -> Plan:
        """The :class:`Plan` of a run of ``num_sources`` sources on ``resident``'s graph, from
        the free device memory now (allocates nothing)."""
        raise NotImplementedError

    def sweep(self, resident, sources: np.ndarray, progress=None) -> tuple[Partial, dict]:
        """The raw sums of ``sources`` on ``resident``'s graph (a
        :class:`~turbobc.engines.gpu.resident.DeviceResident`, reused and kept), and the facts
        of the run. ``progress`` (a tqdm bar, or None) is advanced by the sources done.

        Raises
        ------
        MemoryError
            When the device cannot hold the run (everything allocated is released first).
        RuntimeError
            When ``resident`` is closed, or already running.
        """
        raise NotImplementedError


def sweep_with(family_cls, on, sources, *, progress=None, knobs: dict | None = None,
               **problem) -> tuple[Partial, dict]:
    """Sweep ``sources`` with one family, outside the engine's choice (benchmarks, tests).

    Parameters
    ----------
    family_cls : type
        :class:`~turbobc.engines.gpu.single.SingleFamily`,
        :class:`~turbobc.engines.gpu.lanes.LanesFamily` or
        :class:`~turbobc.engines.gpu.layers.LayersFamily`.
    on : Graph or DeviceResident
        The graph (a :class:`~turbobc.engines.gpu.resident.DeviceResident` is made for the
        call and closed after it), or a resident object, reused and kept.
    sources : array_like
        Distinct source vertices.
    progress : tqdm or None
    knobs : dict, optional
        The family's own arguments (a forced batch, index type, ...).
    **problem
        The :class:`~turbobc.engines.protocol.Problem` fields beside the graph.

    Returns
    -------
    Partial, dict
        The raw sums and the facts of the run.
    """
    from turbobc.engines.gpu.resident import DeviceResident

    resident = on if isinstance(on, DeviceResident) else DeviceResident(on)
    family = family_cls(Problem(resident.graph, **problem), **(knobs or {}))
    try:
        return family.sweep(resident, np.asarray(sources, dtype=np.int64), progress)
    finally:
        if resident is not on:
            resident.close()
