"""The CUDA kernels of ``spmv/kernels/`` as CuPy ``RawModule`` objects, loaded on first use.

Nothing here imports CuPy or compiles anything at import time. :func:`get_kernel` gives one
template instantiation of a ``.cu`` file: from the file's binary compiled ahead
(spmv/_prebuilt.py, spmv/prebuilt/), else compiled through NVRTC on first use (CuPy caches it
on disk); the module is kept per device. The same sources, options and name expressions are what
``tests/test_kernels_compile.py`` hands to NVRTC directly on machines without a GPU, and what
:func:`compile_ptx` uses there.
"""

from __future__ import annotations

import re
import threading
import time

from spmv._prebuilt import load_module
from spmv._sources import (COOPERATIVE, INDEX_PAIRS, INDEX_TYPES, KERNEL_DIR, OPTIONS,
                           SOURCES, VALUE_TYPES, c_index_type, instance_name, name_expressions,
                           source_text)
from spmv.errors import KernelCompileError

__all__ = ["KERNEL_DIR", "SOURCES", "OPTIONS", "INDEX_TYPES", "VALUE_TYPES", "name_expressions",
           "source_text", "compile_ptx", "get_kernel", "c_index_type", "instance_name",
           "allow_shared_memory", "warm_kernels", "INDEX_PAIRS"]

def _readable_log(filename: str, log: str) -> str:
    # NVRTC names the program after a temporary file; name the real one instead.
    log = re.sub(r"^\S*?\.cu(?=\(\d+\))", str(KERNEL_DIR / filename), log, flags=re.M)
    return f"CUDA kernel source {KERNEL_DIR / filename} failed to compile:\n{log.strip()}"


def compile_ptx(filename: str, source: str | None = None, arch: str = "compute_90"):
    """Compile a kernel file through NVRTC alone (no device needed).

    Parameters
    ----------
    filename : str
        A key of :data:`SOURCES`; names the program in the log.
    source : str, optional
        Text to compile instead of the file's (used to test the error path).
    arch : str
        Virtual architecture, ``compute_90`` (Hopper) by default.

    Returns
    -------
    ptx : bytes
        The PTX of every instantiation.
    lowered : dict
        Name expression -> mangled name.

    Raises
    ------
    KernelCompileError
        With the file name and NVRTC's log.
    """
    from cupy.cuda import nvrtc

    text = source_text(filename) if source is None else source
    prog = nvrtc.createProgram(text, str(KERNEL_DIR / filename), [], [])
    try:
        names = name_expressions(filename)
        for name in names:
            nvrtc.addNameExpression(prog, name)
        try:
            nvrtc.compileProgram(prog, [f"-arch={arch}", *OPTIONS])
        except nvrtc.NVRTCError as exc:
            log = nvrtc.getProgramLog(prog)
            raise KernelCompileError(_readable_log(filename, log or str(exc))) from None
        lowered = {name: nvrtc.getLoweredName(prog, name) for name in names}
        return nvrtc.getPTX(prog), lowered
    finally:
        nvrtc.destroyProgram(prog)


_lock = threading.Lock()
_modules: dict[tuple, tuple] = {}
"""(device, file, defines) or (device, file, name expression, defines) -> (module, the
mangled name of each name expression, or None where the module maps them itself)."""


def _module(filename: str, name_expression: str, defines: tuple = ()):
    """The module holding one instantiation on the current device, and its name map.

    Without ``defines``, the file's shipped binary (spmv/_prebuilt.py: every instantiation,
    compiled ahead), loaded once per device. Otherwise, or where no shipped binary serves, only
    the instantiation that is launched is compiled through NVRTC (one name expression per
    module, as CuPy memoizes its own kernels per variant): a first call on batched.cu compiles
    one of its 24 kernels, not all of them; :data:`_compiled` logs the time.
    """
    import cupy

    device = cupy.cuda.Device()
    shipped_key = (device.id, filename, defines)
    with _lock:
        if shipped_key in _modules:
            return _modules[shipped_key]
        key = (device.id, filename, name_expression, defines)
        if key in _modules:
            return _modules[key]
        if not defines:
            found = load_module(filename, int(device.compute_capability),
                                filename in COOPERATIVE)
            if found is not None:
                _modules[shipped_key] = found
                return found
        code = "".join(f"#define {name} {value}\n" for name, value in defines)
        module = cupy.RawModule(code=code + source_text(filename), options=OPTIONS,
                                name_expressions=[name_expression],
                                enable_cooperative_groups=filename in COOPERATIVE)
        began = time.perf_counter()
        try:
            module.compile()
        except cupy.cuda.compiler.CompileException as exc:
            raise KernelCompileError(_readable_log(filename, exc.get_message())) from None
        _compiled.append((filename, name_expression, time.perf_counter() - began))
        _modules[key] = (module, None)
    return _modules[key]


_compiled: list = []
"""(file, name expression, seconds) of every instantiation this process compiled through
NVRTC (or read from CuPy's cache): turbobc/_compiled.py reports a call's in its facts."""


def get_kernel(filename: str, name_expression: str, defines: tuple = ()):
    """The compiled ``cupy.RawKernel`` for one instantiation, compiling it on first use;
    ``defines``: (name, value) pairs written as ``#define`` lines before the source (a kernel's
    compile-time variants, e.g. the ``FRONTIER_*`` macros of frontiers.cu), each set its own
    module.

    Raises
    ------
    ValueError
        If ``name_expression`` is not one of :func:`name_expressions` of the file.
    KernelCompileError
        If the file does not compile (the message names it and carries NVRTC's log).
    """
    import cupy

    # a launch looks its kernel up: one dict lookup once found (the layers family launches
    # thousands of rounds a call, where building the names each time cost 0.16 s on
    # weighted road-luxembourg-osm)
    key = (cupy.cuda.runtime.getDevice(), filename, name_expression, tuple(defines))
    kernel = _kernels.get(key)
    if kernel is None:
        if name_expression not in name_expressions(filename):
            raise ValueError(f"{name_expression!r} is not an instantiation of {filename}; "
                             f"expected one of {list(name_expressions(filename))}")
        module, mangled = _module(filename, name_expression, tuple(defines))
        kernel = module.get_function(name_expression if mangled is None
                                     else mangled[name_expression])
        _kernels[key] = kernel
    return kernel


_kernels: dict = {}
"""(device, file, name expression, defines) -> the kernel :func:`get_kernel` found."""


def warm_kernels(index_type: str = "int") -> int:
    """Compile (or load from CuPy's disk cache) every instantiation of every kernel file with
    the vertex type ``index_type`` on the current device, so that no launch of a run compiles:
    what a Dask worker does when its cluster starts (``turbobc._dask_worker.warm``); the first
    chunk of a call otherwise paid the compile of the variant its graph chose (4 s of
    road-luxembourg-osm's one 9,343-source chunk on an H200 with a cold cache). Returns the
    instantiations."""
    names = [(filename, name) for filename in SOURCES for name in name_expressions(filename)
             if name.split("<", 1)[1].startswith(index_type + ",")
             or name.split("<", 1)[1] == index_type + ">"]
    for filename, name in names:
        get_kernel(filename, name)
    return len(names)


def allow_shared_memory(kernel, nbytes: int) -> bool:
    """Let ``kernel`` (from :func:`get_kernel`) launch with ``nbytes`` of dynamic shared memory:
    when that and the kernel's static shared memory pass the default 48 KiB, it opts in (up to
    what the device allows a block). False when the device cannot give a block that much."""
    total = nbytes + kernel.shared_size_bytes  # the static part counts against both limits
    if total <= 48 * 1024:
        return True
    import cupy

    runtime = cupy.cuda.runtime
    most = runtime.deviceGetAttribute(runtime.cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                      cupy.cuda.Device().id)
    if total > most:
        return False
    kernel.max_dynamic_shared_size_bytes = nbytes
    return True

