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


def _code(path) -> str:
    """A kernel file without its comments."""
    return re.sub(r"//[^\n]*", "", path.read_text())


def test_the_accumulate_step_is_written_once():
    """The `1 /` of u(w) = (τ(w) + δ(w)) / σ(w) and the endpoint `+ 1` live only in
    accumulate.cuh; every kernel calls parent_share / dependency_term."""
    users = set()
    for path in KERNEL_DIR.glob("*.cu*"):
        code = _code(path)
        if path.name == "accumulate.cuh":
            assert "target_weight(tau, w) / sigma_w" in code
            continue
        assert not re.search(r"(V\(1\)|1\.0)\s*/", code), path.name
        if "parent_share(" in code:
            users.add(path.name)
    assert users == {"sccsc.cu", "sccooc.cu", "vecsc.cu", "batched_backward.cuh", "frontiers.cu"}


def test_batched_family_is_a_skeleton_with_policies():
    """No `template <int Mode>` switch: run_batch takes a traversal and an accumulator."""
    for path in KERNEL_DIR.glob("batched*"):
        assert "Mode" not in _code(path), path.name
    code = _code(KERNEL_DIR / "batched.cuh")
    assert "template <class Traversal, class Accumulator, typename I, typename L>" in code
    kernels = re.findall(r"TBCB_KERNEL\((\w+), (\w+), (\w+), (\w+)\)",
                         _code(KERNEL_DIR / "batched.cu"))
    assert {traversal for _, traversal, _, _ in kernels} == {"DensePull", "FrontierPushPull",
                                                             "EdgeParallel"}
    # every traversal with every accumulator and level type, named as the launcher asks
    assert {(t, a, lv) for _, t, a, lv in kernels} == {
        (t, a, lv) for t in ("DensePull", "FrontierPushPull", "EdgeParallel")
        for a in ("VertexSums", "EdgeSums") for lv in ("short", "int")}
    from spmv import _module

    assert {name for name, _, _, _ in kernels} == set(_module.SOURCES["batched.cu"])
    for name, _, accumulator, level in kernels:
        assert name.endswith("_edge") == (accumulator == "EdgeSums"), name
        assert ("16" if level == "short" else "32") in name, name
