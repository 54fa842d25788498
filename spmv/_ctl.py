"""The host's copy of spmv/kernels/ctl.cuh: the control-block layout of every kernel, the
statuses of a batch and the limits of per-level count scaling.

``tests/test_ctl_layout.py`` reads the header and checks these numbers against it.
"""

from __future__ import annotations

__all__ = ["SLOTS", "N_CTL", "STATUS", "DEPTH", "WIDE_SOURCE", "STATUSES", "LEVEL_OVERFLOW",
           "SHIFT_TABLE_FULL", "WIDE_RANGE", "OVERFLOW_EXP", "WIDE_EXP"]

SLOTS = {"BAR_COUNT": 0, "BAR_GEN": 1, "FLAG0": 2, "OVF_LEVEL": 5, "EDGES0": 6, "STATUS": 9,
         "DEPTH": 10, "MAX_BITS": 11, "REACHED": 12, "WIDE_SOURCE": 13, "N_CTL": 16}
"""enum tbc::Ctl: slot of each control word (N_CTL: the block's length)."""

N_CTL = SLOTS["N_CTL"]
STATUS, DEPTH, WIDE_SOURCE = SLOTS["STATUS"], SLOTS["DEPTH"], SLOTS["WIDE_SOURCE"]
"""Slots the host reads after a launch."""

STATUSES = {"OK": 0, "LEVEL_OVERFLOW": 1, "SHIFT_TABLE_FULL": 2, "WIDE_RANGE": 3}
"""enum tbc::Status: why a batched launch stopped before its backward sweep."""

LEVEL_OVERFLOW = STATUSES["LEVEL_OVERFLOW"]
SHIFT_TABLE_FULL = STATUSES["SHIFT_TABLE_FULL"]
WIDE_RANGE = STATUSES["WIDE_RANGE"]

OVERFLOW_EXP = 512
"""A level whose largest scaled count passes 2^OVERFLOW_EXP is scaled back by a power of two.
From [0.5, 1) one more level can grow by at most the in-degree (< 2^63), which still fits."""

WIDE_EXP = 896
"""A scaled count below 2^-WIDE_EXP: its level spreads too wide for per-level scaling, and
the source is swept by turbobc.engines.wide (an exponent per vertex)."""
