"""The kernel entry-point structs (spmv/kernels/views.cuh) and their NumPy mirrors
(spmv/_views.py) agree: the same fields in the same order with matching types (read from the
header), and, compiled through NVRTC, the same offsets and sizes for every instantiation."""

from __future__ import annotations

import re

import numpy as np
import pytest

from spmv import _views
from spmv._module import KERNEL_DIR, OPTIONS

HEADER = KERNEL_DIR / "views.cuh"

# C type of a field -> the dtype its mirror must have (every pointer is a uint64 address)
_SCALARS = {"long long": np.int64, "int": np.int32, "double": np.float64,
            "unsigned long long": np.uint64}

# Template arguments each struct is instantiated with by the kernels.
_INSTANCES = {"SingleGraph": ["int, int", "long long, long long", "int, long long"],
              "SingleWork": ["int, double", "long long, double"],
              "SingleRun": ["int, double", "long long, double"],
              "BatchGraph": ["int", "long long"],
              "BatchWork": ["short", "int"],
              "BatchRun": ["int", "long long"],
              "LayerGraph": ["int", "long long"],
              "RelaxState": [""], "RelaxRound": [""], "DagSlots": [""], "LayerStep": [""],
              "DagSums": [""], "ChainRows": [""], "ChainPlan": [""], "LaneLayout": [""],
              "SlotLayout": [""], "FrontierLayout": [""],
              "FrontierGraph": ["int", "long long"], "FrontierWork": ["int", "long long"],
              "FrontierRun": [""],
              "PairGraph": ["int", "long long"], "PairWork": ["int", "long long"],
              "PairRun": [""]}
"""Template arguments of each struct's instantiations ("": not a template)."""


def _structs() -> dict[str, list[tuple[str, str]]]:
    """Struct name -> [(C type, field name)] in declaration order, from the header."""
    text = re.sub(r"//[^\n]*", "", HEADER.read_text())
    found = {}
    for name, body in re.findall(r"struct (\w+) \{(.*?)\};", text, flags=re.S):
        fields = re.findall(r"([\w ]+?\*?)\s*(\w+);", body)
        found[name] = [(ctype.strip(), field) for ctype, field in fields]
    return found


def test_every_struct_has_a_mirror_with_the_same_fields():
    structs = _structs()
    assert set(structs) == set(_views.VIEWS)
    for name, fields in structs.items():
        dtype = _views.VIEWS[name]
        assert [field for _, field in fields] == list(dtype.names), name
        for ctype, field in fields:
            expected = np.uint64 if ctype.endswith("*") else _SCALARS[ctype]
            assert dtype.fields[field][0] == np.dtype(expected), (name, field, ctype)


def test_offsets_and_sizes_agree_with_the_compiler():
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except Exception as exc:  # CuPy present without the NVRTC library
        pytest.skip(f"CuPy with NVRTC is not installed ({type(exc).__name__}: {exc}); "
                    "install turbobc[nvrtc]")
    checks = ['#include "views.cuh"']
    for name, dtype in _views.VIEWS.items():
        for args in _INSTANCES[name]:
            cname = f"tbc::{name}<{args}>" if args else f"tbc::{name}"
            checks.append(f"static_assert(sizeof({cname}) == {dtype.itemsize}, "
                          f"\"size of {cname}\");")
            for field in dtype.names:
                offset = dtype.fields[field][1]
                checks.append(f"static_assert(__builtin_offsetof({cname}, {field}) == {offset},"
                              f" \"offset of {cname}::{field}\");")
    source = "\n".join(checks) + "\n"
    prog = nvrtc.createProgram(source, "views_layout.cu", [], [])
    try:
        try:
            nvrtc.compileProgram(prog, ["-arch=compute_90", *OPTIONS])
        except nvrtc.NVRTCError:
            pytest.fail("views.cuh and spmv/_views.py disagree:\n" + nvrtc.getProgramLog(prog))
    finally:
        nvrtc.destroyProgram(prog)
    assert len(checks) > 1 + sum(len(d.names) for d in _views.VIEWS.values())


def test_a_wrong_mirror_is_caught():
    """The compiled check is not vacuous: a shifted field fails it."""
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except Exception as exc:
        pytest.skip(f"CuPy with NVRTC is not installed ({type(exc).__name__}: {exc})")
    source = ('#include "views.cuh"\n'
              "static_assert(__builtin_offsetof(tbc::BatchRun<int>, nsrc) == 16, \"nsrc\");\n")
    prog = nvrtc.createProgram(source, "views_wrong.cu", [], [])
    try:
        with pytest.raises(nvrtc.NVRTCError):
            nvrtc.compileProgram(prog, ["-arch=compute_90", *OPTIONS])
        assert "nsrc" in nvrtc.getProgramLog(prog)
    finally:
        nvrtc.destroyProgram(prog)


def test_record_needs_every_field_and_turns_arrays_into_addresses():
    with pytest.raises(TypeError, match="missing"):
        _views.record(_views.BATCH_RUN, nsrc=3)

    class FakeDeviceArray:  # what the launchers hand over: __cuda_array_interface__ and .data.ptr
        __cuda_array_interface__ = {}

        class data:
            ptr = 0xABC000

    rec = _views.record(_views.SINGLE_RUN, sources=FakeDeviceArray(), nsrc=5, bc=FakeDeviceArray(),
                        tau=None, omega=None, endpoints=1)
    assert int(rec["sources"]) == 0xABC000 and int(rec["tau"]) == 0
    assert int(rec["nsrc"]) == 5 and int(rec["endpoints"]) == 1
    assert rec.dtype.itemsize == _views.SINGLE_RUN.itemsize
