"""Every CUDA kernel compiles through NVRTC for Hopper (compute_90), with every template
instantiation the engine uses, on a machine without a GPU; a broken kernel gives a readable
KernelCompileError naming the .cu file and the line.

Needs CuPy and the NVRTC library (``pip install turbobc[nvrtc]``), not a device.
"""

from __future__ import annotations

import pytest

from spmv._module import SOURCES
from turbobc.exceptions import KernelCompileError


def _nvrtc_or_skip():
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except Exception as exc:  # ImportError, or CuPy present without the NVRTC library
        pytest.skip(f"CuPy with NVRTC is not installed ({type(exc).__name__}: {exc}); "
                    "install turbobc[nvrtc]")
    return nvrtc


def test_every_kernel_is_in_a_source_file():
    import spmv
    from spmv import _module

    for kernel in spmv.KERNELS:
        assert f"{kernel}.cu" in _module.SOURCES
        assert (_module.KERNEL_DIR / f"{kernel}.cu").is_file()
    assert set(p.name for p in _module.KERNEL_DIR.glob("*.cu")) == set(_module.SOURCES)


@pytest.mark.parametrize("filename", sorted(SOURCES))  # every kernel file
def test_kernel_compiles_for_compute_90(filename):
    _nvrtc_or_skip()
    from spmv import _module

    ptx, lowered = _module.compile_ptx(filename, arch="compute_90")
    names = _module.name_expressions(filename)
    assert set(lowered) == set(names)
    for kernel in SOURCES[filename]:  # each kernel in both index types: int32 and int64
        assert any(name.startswith(f"{kernel}<int") for name in names), kernel
        assert any(name.startswith(f"{kernel}<long long") for name in names), kernel
    text = ptx.decode() if isinstance(ptx, bytes) else ptx
    assert ".target sm_90" in text
    for mangled in lowered.values():
        assert f".entry {mangled}" in text


def test_frontiers_profile_build_compiles():
    """The frontiers kernel's FRONTIER_PROFILE build (bench/frontier_profile.py) compiles too,
    and records into work.profile only there."""
    _nvrtc_or_skip()
    from spmv import _module

    plain, _ = _module.compile_ptx("frontiers.cu")
    source = "#define FRONTIER_PROFILE 1\n" + _module.source_text("frontiers.cu")
    profiled, lowered = _module.compile_ptx("frontiers.cu", source=source)
    text = profiled.decode() if isinstance(profiled, bytes) else profiled
    plain = plain.decode() if isinstance(plain, bytes) else plain
    assert "clock64" in text or "%clock64" in text
    assert "%clock64" not in plain
    assert set(lowered) == set(_module.name_expressions("frontiers.cu"))


def test_broken_kernel_names_file_and_line():
    _nvrtc_or_skip()
    from spmv import _module

    source = _module.source_text("sccsc.cu")
    lines = source.splitlines()
    target = next(i for i, line in enumerate(lines) if "sum += load_cg" in line)
    lines[target] = lines[target].replace("sum +=", "sum += no_such_symbol +")
    with pytest.raises(KernelCompileError) as info:
        _module.compile_ptx("sccsc.cu", source="\n".join(lines))
    message = str(info.value)
    assert "sccsc.cu failed to compile" in message
    assert f"sccsc.cu({target + 1}): error" in message
    assert "no_such_symbol" in message


def test_importing_does_not_import_cupy():
    import subprocess
    import sys

    code = "import sys, spmv, turbobc.engines.gpu.single; print('cupy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
