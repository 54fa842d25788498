"""The limits of per-level path-count scaling, turbobc's own copy for the CPU engines.

Every engine keeps path counts σ as float64 scaled by a power of two per (source, level)
(turbobc/engines/wide.py has the whole story): a level whose largest scaled count passes
2^OVERFLOW_EXP is scaled back, and a scaled count below 2^-WIDE_EXP means the level spreads
too wide for one scale, so its source is swept with an exponent per vertex
(:mod:`turbobc.engines.wide`). The GPU kernels hold the same two numbers
(spmv/kernels/ctl.cuh, mirrored in spmv/_ctl.py); tests/test_scaling.py checks that all three
agree, so the CPU engines need not import the GPU package for them.
"""

from __future__ import annotations

__all__ = ["OVERFLOW_EXP", "WIDE_EXP"]

OVERFLOW_EXP = 512
"""A level whose largest scaled count passes 2^OVERFLOW_EXP is scaled back by a power of two.
From [0.5, 1) one more level can grow by at most the in-degree (< 2^63), which still fits."""

WIDE_EXP = 896
"""A scaled count below 2^-WIDE_EXP: its level spreads too wide for per-level scaling, and
the source is swept by turbobc.engines.wide (an exponent per vertex)."""
