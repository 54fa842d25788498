"""The control-block layout is defined once (spmv/kernels/ctl.cuh) and mirrored once (spmv/_ctl.py)."""

from __future__ import annotations

import re

from spmv import _ctl
from spmv._module import KERNEL_DIR


def _enum(text: str, name: str) -> dict:
    body = re.search(rf"enum {name} : int \{{(.*?)\}};", text, flags=re.S).group(1)
    return {key: int(value) for key, value in re.findall(r"(\w+) = (\d+)", body)}


def test_python_mirror_equals_the_header():
    text = (KERNEL_DIR / "ctl.cuh").read_text()
    assert _enum(text, "Ctl") == _ctl.SLOTS
    assert _enum(text, "Status") == _ctl.STATUSES


def test_slots_are_distinct_and_inside_the_block():
    used = []
    for key, slot in _ctl.SLOTS.items():
        if key == "N_CTL":
            continue
        width = 3 if key in ("FLAG0", "EDGES0") else 1  # rotating over d % 3
        used += range(slot, slot + width)
    assert len(used) == len(set(used))
    assert max(used) < _ctl.N_CTL


def test_no_other_control_layout_in_the_kernels():
    """Only ctl.cuh declares control slots; the other headers use its names."""
    for path in KERNEL_DIR.glob("*.cu*"):
        if path.name != "ctl.cuh":
            assert "enum Ctl" not in path.read_text(), path.name


def test_count_limits_equal_the_header():
    text = (KERNEL_DIR / "ctl.cuh").read_text()
    assert int(re.search(r"constexpr int OVERFLOW_EXP = (\d+);", text).group(1)) == _ctl.OVERFLOW_EXP
    assert int(re.search(r"constexpr int WIDE_EXP = (\d+);", text).group(1)) == _ctl.WIDE_EXP


def test_no_other_literal_limit():
    """The limits appear as numbers only in ctl.cuh and spmv/_ctl.py."""
    for path in list(KERNEL_DIR.glob("*.cu*")) + list(KERNEL_DIR.parent.parent.glob("turbobc/*.py")):
        if path.name != "ctl.cuh":
            text = path.read_text()
            assert "0x1p512" not in text and "0x1p-896" not in text, path.name
            assert "2**896" not in text and "2.0**896" not in text, path.name
