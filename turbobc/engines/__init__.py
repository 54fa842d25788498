"""The engines behind the protocol (engines/protocol.py): the compiled CPU engine (cpu/),
the reference CPU engine (graphblas/), the GPU engine (gpu/) and the exponent-per-vertex sweep
they use for counts past per-level scaling (wide.py); and the registry that names them.

The registry is the one place that knows which engines exist: :data:`REGISTRY` maps each
name to a function that builds the engine (importing its module only then, so that importing
turbobc imports no engine and no CuPy), :func:`engine_named` looks a name up, and
:func:`resolve_engine` picks the engine that runs a problem from the engines' own
:meth:`~turbobc.engines.protocol.Engine.can_serve` answers. Validation, the loop
(turbobc/_run.py) and the Dask workers (turbobc/_dask.py) all look engines up here, below
them; nothing here imports those modules.
"""

from turbobc.engines.protocol import Engine, Partial, Problem, Sweeper
from turbobc.exceptions import GPUUnavailableError

__all__ = ["AUTO_ORDER", "ENGINES", "REGISTRY", "Engine", "Partial", "Problem", "Sweeper",
           "engine_named", "resolve_engine"]


def _gpu_engine() -> Engine:
    from turbobc.engines.gpu.engine import GpuEngine

    return GpuEngine()


def _cpu_engine() -> Engine:
    from turbobc.engines.cpu import CpuEngine

    return CpuEngine()


def _graphblas_engine() -> Engine:
    from turbobc.engines.graphblas import GraphblasEngine

    return GraphblasEngine()


REGISTRY = {
    "gpu": _gpu_engine,
    "cpu": _cpu_engine,
    "graphblas": _graphblas_engine,
}
"""Engine name -> a function that builds it: one line per engine."""

AUTO_ORDER = ("gpu", "cpu")
"""The engines ``engine="auto"`` tries, in order: the first whose ``can_serve`` says yes."""

ENGINES = ("auto", *REGISTRY)
"""Accepted values of ``engine``: "auto" picks "gpu" when a usable device is present, else
"cpu"; "graphblas" is the reference (python-graphblas)."""


def engine_named(name: str) -> Engine:
    """The engine called ``name`` (a key of :data:`REGISTRY`; "auto" is resolved by
    :func:`resolve_engine`)."""
    build = REGISTRY.get(name)
    if build is None:
        known = [repr(known) for known in REGISTRY]
        names = ", ".join(known[:-1]) + " or " + known[-1]
        raise ValueError(f"engine must be {names}; got {name!r}")
    return build()


def resolve_engine(name: str, problem: Problem) -> Engine:
    """The engine that runs ``problem`` when the user asked for ``name``: each engine's
    :meth:`~turbobc.engines.protocol.Engine.can_serve` decides whether it can, nothing else.

    ``"auto"`` takes the first engine of :data:`AUTO_ORDER` that can serve (the GPU engine,
    else the compiled CPU engine). A named kernel is something only the GPU engine serves, so
    ``engine="auto"`` with one means the GPU.

    Raises
    ------
    turbobc.exceptions.GPUUnavailableError
        ``name`` is ``"gpu"``, or ``"auto"`` where only the GPU engine could serve (a named
        kernel), and the GPU engine cannot run here (its reason: no usable GPU).
    ValueError
        ``name`` is ``"cpu"`` or ``"graphblas"`` and that engine cannot serve (its reason: a
        GPU kernel).
    """
    if name == "auto":
        reasons = {}
        for candidate in AUTO_ORDER:
            engine = engine_named(candidate)
            reasons[candidate] = engine.can_serve(problem)
            if reasons[candidate] is None:
                return engine
        asked = f"kernel={problem.kernel!r}" if problem.kernel != "auto" else "this call"
        raise _gpu_unavailable(asked, reasons["gpu"])
    engine = engine_named(name)
    reason = engine.can_serve(problem)
    if reason is None:
        return engine
    if name == "gpu":
        raise _gpu_unavailable("engine='gpu'", reason)
    raise ValueError(f"engine={name!r} cannot run this: {reason}; pass engine='gpu' or "
                     "'auto' instead")


def _gpu_unavailable(asked: str, reason: str) -> GPUUnavailableError:
    return GPUUnavailableError(f"{asked} needs a usable GPU, and the GPU engine cannot run "
                               f"here ({reason}). Use engine='cpu' (or 'auto') to run on "
                               "the CPU")
