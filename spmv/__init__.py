"""Sparse matrix-vector kernels of the TurboBC paper, their registry and the kernel selector.

Importing this package does no GPU work and does not import CuPy: kernels compile on first use.

The registry
------------
``KERNELS`` names every single-source SpMV kernel that ``turbobc.bc(..., kernel=...)``
accepts. A test fails if one of them is missing from the GPU correctness grid.

The selector
------------
``select(stats)`` picks a kernel from :class:`GraphStats` (``stats_host`` or ``stats_device``
compute them); ``scf_host`` is the scale-free metric defined in ``spmv._scf``.
"""

KERNELS = ("sccsc", "sccooc", "vecsc")
"""Names of the kernels: thread per vertex (CSC), thread per stored edge (COOC),
warp per vertex with a shuffle reduction (CSC)."""



def check_kernel(kernel: str) -> None:
    """Raise ``ValueError`` unless ``kernel`` is ``"auto"`` or a name of :data:`KERNELS`
    (the one check of a kernel name: validation and the GPU engine families call it)."""
    if kernel != "auto" and kernel not in KERNELS:
        names = ", ".join(map(repr, ("auto",) + KERNELS))
        raise ValueError(f"kernel must be one of {names}; got {kernel!r}")


from ._scf import GraphStats, scf_host, stats_device, stats_host  # noqa: E402
from ._select import select  # noqa: E402

__all__ = ["KERNELS", "GraphStats", "check_kernel", "scf_host", "select", "stats_device", "stats_host"]
