"""Sparse matrix-vector kernels of the TurboBC paper, their registry and the kernel selector.

Importing this package does no GPU work: kernels compile on first use.

The registry
------------
``KERNELS`` names every single-source SpMV kernel that ``turbobc.bc(..., kernel=...)``
accepts. A test fails if one of them is missing from the GPU correctness grid.
"""

KERNELS = ("sccsc", "sccooc", "vecsc")
"""Names of the kernels: thread per vertex (CSC), thread per stored edge (COOC),
warp per vertex with a shuffle reduction (CSC)."""

__all__ = ["KERNELS"]
