"""Exceptions for GPU conditions.

User mistakes (bad matrices, bad arguments) raise builtin exceptions
(``TypeError``, ``ValueError``); see :func:`turbobc.bc`. The classes here
describe the state of the machine rather than the call, and a device
out-of-memory stays a builtin ``MemoryError``.
"""

__all__ = ["TurboBCError", "GPUUnavailableError", "KernelCompileError"]


class TurboBCError(Exception):
    """Base class of turbobc's own exceptions."""


class GPUUnavailableError(TurboBCError, RuntimeError):
    """``engine="gpu"`` (or a named GPU kernel) was asked for, but no usable GPU is present.

    The message says what is missing: CuPy itself, or a CUDA device that CuPy can see.
    """


class KernelCompileError(TurboBCError, RuntimeError):
    """A CUDA kernel failed to compile; the message names the ``.cu`` file and the compiler log."""
