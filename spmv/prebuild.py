"""Regenerate the shipped kernels: ``python -m spmv.prebuild [--jobs N] [--force]``.

Compiles every instantiation of every kernel file (:data:`spmv._sources.SOURCES`) through
NVRTC, without a GPU, to a cubin for each architecture of :data:`spmv._prebuilt.ARCHS` and to
PTX for :data:`spmv._prebuilt.PTX_ARCH`, and writes them xz-compressed into ``spmv/prebuilt/``
with ``manifest.json`` (spmv/_prebuilt.py says what it holds and how a device finds its
binary). A file whose stamp is unchanged keeps its binaries unless ``--force``; binaries of
files or architectures no longer built are removed. Needs the ``nvrtc`` extra (CuPy and the
NVRTC wheel) with NVRTC :data:`BUILD_NVRTC` (``pip install "nvidia-cuda-nvrtc==13.0.*"``;
``--any-nvrtc`` builds with another); about a minute per architecture on one core.

Why NVRTC 13.0, the oldest of CUDA 13: the shipped binaries must run no slower than what
CuPy's own NVRTC compiled before them, and newer NVRTC made slower code of the same source.
On an H200 whose CuPy compiles with NVRTC 13.0, the single-source kernels (CUDA events, turns
of three trees in one call, house_compare-20261129T015919Z and -021117Z in bench/results)
ran 1.02-1.08x slower from 13.5's cubins (delaunay_n16's sccsc 1.07, road340's 1.03) and
0.95-1.04x from 13.2's.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from spmv._sources import KERNEL_DIR, SOURCES, name_expressions, source_text
from spmv._prebuilt import ARCHS, PREBUILT_DIR, PTX_ARCH, compile_options, stamp
from spmv.errors import KernelCompileError

__all__ = ["BUILD_NVRTC", "build_one", "main"]

BUILD_NVRTC = (13, 0)
"""The NVRTC the shipped binaries are built with (module docstring: why)."""


def build_one(filename: str, arch: str) -> tuple[str, str, dict, float]:
    """Compile ``filename`` for ``arch`` ("sm_90" or "compute_120"), write its compressed
    binary; returns (file, arch, mangled names, seconds)."""
    from cupy.cuda import nvrtc

    began = time.perf_counter()
    names = name_expressions(filename)
    prog = nvrtc.createProgram(source_text(filename), str(KERNEL_DIR / filename), [], [])
    try:
        for name in names:
            nvrtc.addNameExpression(prog, name)
        options = [o.replace("spmv/kernels", str(KERNEL_DIR)) for o in compile_options(arch)]
        try:
            nvrtc.compileProgram(prog, options)
        except nvrtc.NVRTCError:
            raise KernelCompileError(f"{filename} ({arch}):\n{nvrtc.getProgramLog(prog)}")
        binary = nvrtc.getCUBIN(prog) if arch.startswith("sm_") else nvrtc.getPTX(prog)
        lowered = {name: nvrtc.getLoweredName(prog, name) for name in names}
    finally:
        nvrtc.destroyProgram(prog)
    (PREBUILT_DIR / _binary_name(filename, arch)).write_bytes(
        lzma.compress(binary, preset=9 | lzma.PRESET_EXTREME))
    return filename, arch, lowered, time.perf_counter() - began


def _binary_name(filename: str, arch: str) -> str:
    kind = "cubin" if arch.startswith("sm_") else "ptx"
    return f"{filename}.{arch}.{kind}.xz"


def _entry(filename: str, lowered: dict) -> dict:
    return {"stamp": stamp(filename), "lowered": lowered,
            "cubins": {str(a): _binary_name(filename, f"sm_{a}") for a in ARCHS},
            "ptx_arch": PTX_ARCH, "ptx": _binary_name(filename, f"compute_{PTX_ARCH}")}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="compiles at a time")
    parser.add_argument("--force", action="store_true", help="rebuild every file")
    parser.add_argument("--any-nvrtc", action="store_true",
                        help=f"build with an NVRTC other than {BUILD_NVRTC[0]}.{BUILD_NVRTC[1]}")
    args = parser.parse_args(argv)
    from cupy.cuda import nvrtc

    if tuple(nvrtc.getVersion()) != BUILD_NVRTC and not args.any_nvrtc:
        raise SystemExit(
            f"spmv.prebuild: NVRTC {'.'.join(map(str, nvrtc.getVersion()))} found; the shipped "
            f"binaries are built with {BUILD_NVRTC[0]}.{BUILD_NVRTC[1]} (pip install "
            f'"nvidia-cuda-nvrtc=={BUILD_NVRTC[0]}.{BUILD_NVRTC[1]}.*"), or pass --any-nvrtc')

    PREBUILT_DIR.mkdir(exist_ok=True)
    old = {}
    if (PREBUILT_DIR / "manifest.json").is_file() and not args.force:
        old = json.loads((PREBUILT_DIR / "manifest.json").read_text())["files"]
    archs = [f"sm_{a}" for a in ARCHS] + [f"compute_{PTX_ARCH}"]
    files = {}
    todo = []
    for filename in SOURCES:
        entry = old.get(filename)
        if entry is not None and entry == _entry(filename, entry["lowered"]) and all(
                (PREBUILT_DIR / _binary_name(filename, a)).is_file() for a in archs):
            files[filename] = entry
        else:
            todo.extend((filename, arch) for arch in archs)
    began = time.perf_counter()
    lowered: dict = {}
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for filename, arch, names, seconds in pool.map(build_one, *zip(*todo)) if todo else ():
            print(f"{filename:16s} {arch:12s} {seconds:6.1f} s", flush=True)
            lowered.setdefault(filename, names)
    for filename, names in lowered.items():
        files[filename] = _entry(filename, names)
    keep = {"manifest.json"} | {_binary_name(f, a) for f in SOURCES for a in archs}
    for path in PREBUILT_DIR.iterdir():
        if path.name not in keep:
            path.unlink()
    manifest = {"nvrtc": ".".join(map(str, nvrtc.getVersion())), "archs": list(ARCHS),
                "ptx_arch": PTX_ARCH, "files": {f: files[f] for f in SOURCES}}
    (PREBUILT_DIR / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(p.stat().st_size for p in PREBUILT_DIR.iterdir())
    print(f"{len(todo)} binaries built in {time.perf_counter() - began:.0f} s; "
          f"spmv/prebuilt holds {total / 2**20:.1f} MiB", file=sys.stderr)


if __name__ == "__main__":
    main()
