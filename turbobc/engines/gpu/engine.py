"""The GPU engine behind the protocol: it picks a family of kernels per run, in one place.

A family (the protocol of turbobc/engines/gpu/family.py) is one way of traversing the graph on
the device: **single** (one source per sweep; single.py), **lanes** (32 sources a warp, a lane
each; lanes.py) and **layers** (a thread per (source, vertex) slot of each layer of the
shortest-path DAG; layers.py), and **frontiers** (a source per thread block, its frontier a
queue; frontiers.py). :func:`choose_family` picks one from the problem's facts and says
why; the reason lands in the run's facts (``family_reason``).

Not served here (:meth:`GpuEngine.can_serve` says why; the CPU engine serves it): networkx's
edge subset BC (``Problem.split_non_targets``: a non-target's dependency split among its
parents in equal shares, which would need each vertex's parent count per source and a second
accumulator beside t). The facts of each run (``family``, ``family_reason``, kernel, batch,
depth, peak pool bytes, seconds, ``resident_reused``, ``upload_seconds``) land in
:attr:`GpuSweeper.facts`.

Resident: a :class:`GpuSweeper` keeps one :class:`~turbobc.engines.gpu.resident.DeviceResident`
for its lifetime. Opening allocates nothing; each run builds on the device only the format
parts it does not find there, and later runs of the same family, kernel and index type copy
nothing of the graph. :meth:`GpuSweeper.close` lets all of it go (CuPy's pool keeps the blocks
cached); a closed sweeper refuses to run. A sweeper is used by one thread at a time; separate
sweepers share nothing.
"""

from __future__ import annotations

import numpy as np

from turbobc._engines import gpu_status
from turbobc._tuning import current as current_tuning
from turbobc.engines.gpu.family import Family
from turbobc.engines.gpu.family_costs import predicted_seconds
from turbobc.engines.gpu.frontiers import FrontiersFamily
from turbobc.engines.gpu.lanes import LanesFamily
from turbobc.engines.gpu.layers import LayersFamily
from turbobc.engines.gpu.resident import DeviceResident
from turbobc.engines.gpu.single import SingleFamily
from turbobc.engines.protocol import Engine, Partial, Problem, Sweeper, slot_weights_reason

__all__ = ["GpuEngine", "GpuSweeper", "FAMILIES", "choose_family", "family_costs"]

FAMILIES = ("auto", "lanes", "layers", "frontiers")
"""Values of ``Tuning.gpu_family``: the family of unweighted runs of many sources."""


def choose_family(problem: Problem, num_sources: int) -> tuple[Family, str]:
    """The family that sweeps ``num_sources`` sources of ``problem``, and why: the one place
    the GPU engine decides how to traverse.

    ======================================  ========  =========================================
    the problem                             family    why
    ======================================  ========  =========================================
    weighted (``graph.lengths``)            layers    distances, then the DAG by layers
    ``Tuning.gpu_family="lanes"``           lanes     32 sources a warp (per-slot target
                                                      weights too: the lanes' split phases)
    ``Tuning.gpu_family="layers"``, > 1     layers    every edge of length 1 (deep graphs)
    ``Tuning.gpu_family="frontiers"``, > 1  frontiers a source per block (deep graphs; per-slot
                                                      target weights: a phased run)
    ``"auto"``, > 1, kernel ``"auto"``, at  lanes or  the one whose predicted seconds
    most ``Tuning.frontier_max_degree``     frontiers (:func:`family_costs` and
    stored edges a vertex                             turbobc/engines/gpu/family_costs.py) are
                                                      fewer
    per-slot target weights (chains)        lanes     unweighted: the lanes' split phases
    edge BC                                 lanes     the lanes kernels sum the edges too
    more than one source                    lanes     32 sources a warp
    one source                              single    a persistent launch over the graph
    ======================================  ========  =========================================
    """
    knob = current_tuning().gpu_family
    if knob not in FAMILIES:
        raise ValueError(f"Tuning.gpu_family must be one of {FAMILIES}; got {knob!r}")
    if problem.weighted:
        return LayersFamily(problem), "weighted: distances, then the shortest-path DAG by layers"
    if problem.slot_weights is not None and knob == "lanes":
        return LanesFamily(problem), "per-slot target weights of an unweighted graph"
    if knob == "layers" and num_sources > 1:
        return (LayersFamily(problem, hops=True),
                "Tuning.gpu_family='layers': every edge of length 1, a thread per slot")
    if knob == "frontiers" and num_sources > 1:
        return (FrontiersFamily(problem),
                "Tuning.gpu_family='frontiers': a source per block, its frontier a queue")
    costs = family_costs(problem, num_sources) if knob == "auto" else None
    if costs is not None and costs["frontiers"] < costs["lanes"]:
        return (FrontiersFamily(problem),
                f"predicted cheapest (frontiers {costs['frontiers']:.3g} s, lanes "
                f"{costs['lanes']:.3g} s): a source per block, its frontier a queue")
    predicted = ("" if costs is None else f"predicted cheapest (lanes {costs['lanes']:.3g} s, "
                 f"frontiers {costs['frontiers']:.3g} s): ")
    if problem.slot_weights is not None:
        return LanesFamily(problem), predicted + "per-slot target weights of an unweighted graph"
    if problem.edges:
        return LanesFamily(problem), predicted + "edge BC: the lanes kernels sum the edges"
    if num_sources > 1:
        return LanesFamily(problem), predicted + "many sources: 32 a warp"
    return SingleFamily(problem), "one source"


def family_costs(problem: Problem, num_sources: int) -> dict | None:
    """The predicted seconds of the lanes' and the frontiers' device loops for a run of
    ``num_sources`` sources of ``problem`` (turbobc/engines/gpu/family_costs.py), or None:
    one source, a kernel asked by name (``problem.kernel``: the lanes' kernels), or a graph
    of more than ``Tuning.frontier_max_degree`` stored edges a vertex (no mesh or road: the
    lanes, with no search for its depth)."""
    graph = problem.graph
    if (num_sources <= 1 or problem.kernel != "auto"
            or graph.nnz > current_tuning().frontier_max_degree * graph.n):
        return None
    return predicted_seconds(num_sources, graph.n, graph.nnz, graph.depth_estimate)


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
        knob = current_tuning().gpu_family
        if problem.slot_weights is not None and not problem.weighted and knob == "layers":
            return ("per-slot target weights serve unweighted graphs on the lanes and "
                    "frontiers families, not the layers family Tuning.gpu_family asks for")
        usable, reason = gpu_status()
        return None if usable else f"no usable GPU: {reason}"

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
        sources = np.asarray(sources, dtype=np.int64)
        family, reason = choose_family(self.problem, sources.size)
        try:
            part, facts = family.sweep(self.resident, sources, progress)
        except MemoryError as exc:
            # "auto"'s prediction does not weigh memory: where not even one block's rows fit
            # (a memory_limit), the lanes, which go one source at a time when 32 do not
            if family.name != "frontiers" or current_tuning().gpu_family != "auto":
                raise
            family = LanesFamily(self.problem)
            reason = (f"{reason}; but not one block's rows fit ({str(exc).split('. ')[0]}): "
                      f"the lanes")
            part, facts = family.sweep(self.resident, sources, progress)
        costs = (family_costs(self.problem, sources.size)
                 if current_tuning().gpu_family == "auto" else None)
        self.facts.update(engine="gpu", family_reason=reason, **facts)
        if costs is not None:  # every family's prediction beside the choice, and its inputs
            graph = self.problem.graph
            self.facts["family_costs"] = {
                "predicted": costs, "sources": int(sources.size), "n": graph.n,
                "m": graph.nnz, "depth": graph.depth_estimate}
        return part

    def planned_batch(self, num_sources: int) -> int:
        """About the sources one batch of a run of ``num_sources`` would take on this device
        now (the chosen family's :meth:`~turbobc.engines.gpu.family.Family.plan`); a Dask run
        makes its chunks no smaller."""
        family, _ = choose_family(self.problem, num_sources)
        return family.plan(self.resident, num_sources).batch

    def close(self) -> None:
        """Let the device arrays go; calling it again does nothing."""
        self.resident.close()
