"""The exceptions the kernel layer raises, and the base class of turbobc's own exceptions.

``spmv`` sits below ``turbobc`` and imports nothing from it, so the error its code raises
(:class:`KernelCompileError`) lives here, with the base class it shares with turbobc's other
exceptions (:class:`TurboBCError`). :mod:`turbobc.exceptions` re-exports both, so a caller
catches ``turbobc.exceptions.KernelCompileError`` or ``turbobc.exceptions.TurboBCError`` as
before.
"""

__all__ = ["TurboBCError", "KernelCompileError"]


class TurboBCError(Exception):
    """Base class of turbobc's own exceptions."""


class KernelCompileError(TurboBCError, RuntimeError):
    """A CUDA kernel failed to compile; the message names the ``.cu`` file and the compiler log."""
