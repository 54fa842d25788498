"""Exceptions for GPU conditions.

User mistakes (bad matrices, bad arguments) raise builtin exceptions
(``TypeError``, ``ValueError``); see :func:`turbobc.bc`. The classes here
describe the state of the machine rather than the call, and a device
out-of-memory stays a builtin ``MemoryError``.

:class:`TurboBCError` and :class:`KernelCompileError` are defined by the kernel layer
(spmv/errors.py), which raises the latter and imports nothing from turbobc; they are the same
classes here.
"""

from spmv.errors import KernelCompileError, TurboBCError

__all__ = ["TurboBCError", "GPUUnavailableError", "KernelCompileError"]


class GPUUnavailableError(TurboBCError, RuntimeError):
    """``engine="gpu"`` (or a named GPU kernel) was asked for, but no usable GPU is present.

    The message says what is missing: CuPy itself, or a CUDA device that CuPy can see.
    """
