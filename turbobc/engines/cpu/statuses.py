"""Constants the CPU engine's compiled functions and their callers share, in a module that
imports no numba (the callers must not load numba when the functions were compiled ahead)."""

__all__ = ["OK", "WIDE", "VANISHED", "LANES"]

OK, WIDE, VANISHED = 0, 1, 2
"""Statuses of a walk (turbobc/engines/cpu/walks.py): done; counts spread too wide for one
scale; a length vanished."""

LANES = 64
"""Sources per batch of lanes (turbobc/engines/cpu/lanes.py): the bits of a uint64."""
