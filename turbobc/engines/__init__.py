"""The engines behind the protocol (engines/protocol.py): the CPU engine (graphblas.py),
the GPU engine (gpu/) and the exponent-per-vertex sweep both use for counts past per-level
scaling (wide.py)."""

from turbobc.engines.protocol import Engine, Partial, Problem, Sweeper  # noqa: E402

__all__ = ["Engine", "Partial", "Problem", "Sweeper"]
