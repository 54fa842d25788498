"""Kernels compiled ahead: the binaries in ``spmv/prebuilt/``, found by device, checked by hash.

A person's first call should not wait for NVRTC (7-16 s on an H200 for a family's kernels).
``python -m spmv.prebuild`` compiles every instantiation of every kernel file
(:func:`spmv._sources.name_expressions`) through NVRTC, without a GPU, for each architecture of
:data:`ARCHS` (a cubin each) and as PTX for :data:`PTX_ARCH` (which the driver compiles for a
newer device), with the options CuPy's own NVRTC path uses (:func:`compile_options`); it writes
them xz-compressed, with ``manifest.json``: per file its :func:`stamp` (a hash of the file, every
header, the options and the name expressions), the mangled name of each instantiation and the
binaries. The files are package data; CI checks that every stamp matches the sources
(tests/test_prebuilt.py), so a kernel edited without regenerating fails CI.

At run time :func:`load_module` gives the module of a file for the current device: the cubin of
the same major architecture with the largest minor one not above the device's, else the PTX,
unpacked into a temporary file and loaded with ``cupy.RawModule(path=...)``. It returns None,
and the caller compiles through NVRTC as before, when the manifest is missing, when a file's
stamp does not match its source, when no binary covers the device, when the driver refuses the
binary, or under ``TURBOBC_PREBUILT=0``; each reason is said once per process, in one line on
stderr. Nothing here imports CuPy at import time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import lzma
import os
import sys
import tempfile
import threading
from pathlib import Path

from spmv._sources import KERNEL_DIR, OPTIONS, name_expressions

__all__ = ["PREBUILT_DIR", "ARCHS", "PTX_ARCH", "compile_options", "stamp", "manifest",
           "binary_for", "load_module", "say_once", "reasons_said"]

PREBUILT_DIR = Path(__file__).resolve().parent / "prebuilt"
"""The shipped binaries and ``manifest.json``."""

ARCHS = (80, 86, 89, 90, 100, 110, 120)
"""Compute capabilities with a cubin each (the kernels take warp reductions, sm_80 on):
Ampere (A100, A10/RTX 30), Ada (L4, L40, RTX 40), Hopper (H100, H200), Blackwell (B200), Thor
and Blackwell desktop (RTX 50). A cubin runs
on its major architecture at its minor version and above (sm_86's on an 8.7 device)."""

PTX_ARCH = 120
"""The virtual architecture of the shipped PTX, which a newer device's driver compiles."""


def compile_options(arch: str) -> list[str]:
    """NVRTC options of a shipped binary for ``arch`` ("sm_90" or "compute_120"): turbobc's
    (:data:`spmv._sources.OPTIONS`) and the ``-ftz=true`` that CuPy adds to every RawModule, so
    a shipped binary is what CuPy's NVRTC path would compile."""
    return [f"-arch={arch}", *_portable(OPTIONS), "-ftz=true"]


def _portable(options) -> list[str]:
    """``options`` with the include folder relative: a stamp must not depend on where the
    package lies."""
    return [o.replace(str(KERNEL_DIR), "spmv/kernels") for o in options]


@functools.lru_cache(maxsize=None)
def stamp(filename: str) -> str:
    """The hash a shipped binary of ``filename`` was built from: the file, every header of
    ``spmv/kernels`` (any header change invalidates every file), the options and the name
    expressions (sha256, hex)."""
    digest = hashlib.sha256()
    for path in [KERNEL_DIR / filename, *sorted(KERNEL_DIR.glob("*.cuh"))]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update("\0".join(compile_options("ARCH")).encode() + b"\0")
    digest.update("\0".join(name_expressions(filename)).encode())
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def manifest() -> dict | None:
    """``prebuilt/manifest.json``, or None where none was shipped."""
    try:
        return json.loads((PREBUILT_DIR / "manifest.json").read_text())
    except FileNotFoundError:
        return None


def binary_for(entry: dict, capability: int) -> str | None:
    """The binary of a manifest entry for a device of ``capability`` (major * 10 + minor):
    the cubin of the same major architecture with the largest minor version not above the
    device's, else the PTX when the device is at least its architecture, else None."""
    major, minor = divmod(capability, 10)
    cubins = [arch for arch in map(int, entry["cubins"])
              if arch // 10 == major and arch % 10 <= minor]
    if cubins:
        return entry["cubins"][str(max(cubins))]
    if capability >= entry["ptx_arch"]:
        return entry["ptx"]
    return None


_said: set = set()
_said_lock = threading.Lock()


def say_once(line: str) -> None:
    """Print ``line`` on stderr, once per process."""
    with _said_lock:
        if line in _said:
            return
        _said.add(line)
    print(f"turbobc: {line}", file=sys.stderr, flush=True)


def reasons_said() -> list[str]:
    """The lines :func:`say_once` printed in this process (tests read them)."""
    return sorted(_said)


def load_module(filename: str, capability: int, cooperative: bool):
    """The ``cupy.RawModule`` of ``filename``'s shipped binary for a device of
    ``capability``, with every instantiation of the file, and the mangled names
    (name expression -> symbol); or None, said on stderr once (module docstring)."""
    if os.environ.get("TURBOBC_PREBUILT", "1") == "0":
        return None
    shipped = manifest()
    if shipped is None:
        say_once("no kernels were shipped with this install (spmv/prebuilt/manifest.json); "
                 "compiling them through NVRTC at first use (CuPy caches them)")
        return None
    entry = shipped["files"].get(filename)
    if entry is None or entry["stamp"] != stamp(filename):
        say_once(f"the shipped kernels of spmv/kernels/{filename} do not match its source; "
                 "compiling it through NVRTC (python -m spmv.prebuild regenerates them)")
        return None
    name = binary_for(entry, capability)
    if name is None:
        major, minor = divmod(capability, 10)
        say_once(f"no shipped kernels cover compute capability {major}.{minor}; compiling "
                 "them through NVRTC at first use (CuPy caches them)")
        return None
    import cupy

    data = lzma.decompress((PREBUILT_DIR / name).read_bytes())
    handle, path = tempfile.mkstemp(suffix=Path(name).suffixes[-2])
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        module = cupy.RawModule(path=path, enable_cooperative_groups=cooperative)
        module.compile()  # loads it now, while the file exists
    except cupy.cuda.driver.CUDADriverError as exc:
        say_once(f"the driver refused the shipped kernels {name} ({exc}); compiling them "
                 "through NVRTC")
        return None
    finally:
        os.unlink(path)
    return module, entry["lowered"]
