"""Compile the CPU functions ahead: ``python -m turbobc._aot [--into FOLDER]``.

Builds the extension ``turbobc._aot_core`` with ``numba.pycc`` from every function and
signature of :data:`turbobc._compiled.ENTRY_POINTS`, and ``_aot_core.json`` beside it: the
stamp of the sources (:func:`turbobc._compiled.stamp`), the numba version, the seconds it
took and the build machine's CPU flags. setup.py runs it when the package is built (numba and
a C compiler at build time; without them the package installs without the extension and numba
compiles at first use); run by hand, it (re)builds the extension in the source tree. About a
minute on one core.

Two things numba.pycc does not do by itself, done here:

- **the GIL**: its wrappers hold the GIL, so threads would run the functions one at a time;
  the flags it compiles with are made to release it, as ``nogil=True`` does for the JIT
  (the functions touch no Python object);
- **the CPU**: it compiles for a generic CPU; this build targets the build machine's
  (``target_cpu="host"``, the same code numba's JIT would make there) and records its CPU
  flags, and turbobc/_compiled.py uses the extension only on a machine with at least those
  flags (a wheel built on a newer CPU never runs an instruction an older one lacks).

The modules are imported without running the package's ``__init__`` files (bare packages
below), so the build needs numba and NumPy alone.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
import types
from pathlib import Path

__all__ = ["build", "main"]

_ROOT = Path(__file__).resolve().parent


def _bare_packages() -> None:
    """turbobc's packages as empty modules over their folders, so that importing a module of
    them does not run the package ``__init__`` files (which import SciPy, tqdm, ...)."""
    for name in ("turbobc", "turbobc.engines", "turbobc.engines.cpu"):
        if name in sys.modules:
            continue
        package = types.ModuleType(name)
        package.__path__ = [str(_ROOT.parent / name.replace(".", "/"))]
        sys.modules[name] = package


def _gil_free_flags() -> None:
    """Make numba.pycc compile its wrappers to release the GIL (module docstring)."""
    import numba.pycc.compiler as pycc_compiler

    class GilFreeFlags(pycc_compiler.Flags):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    pycc_compiler.Flags = GilFreeFlags


def build(into: Path) -> Path:
    """Compile the extension into folder ``into``; returns the path of ``_aot_core.json``."""
    _bare_packages()
    _gil_free_flags()
    import numba
    from numba.pycc import CC

    compiled = importlib.import_module("turbobc._compiled")
    began = time.perf_counter()
    cc = CC("_aot_core", source_module="turbobc._compiled")
    cc.output_dir = str(into)
    cc.target_cpu = "host"
    for name, (module, attribute, _) in compiled.ENTRY_POINTS.items():
        function = getattr(importlib.import_module(module), attribute)
        function = getattr(function, "py_func", function)
        for index, signature in compiled.signatures(name).items():
            cc.export(compiled.symbol(name, index), signature)(function)
    cc.compile()
    stamp_path = Path(into) / "_aot_core.json"
    stamp_path.write_text(json.dumps({
        "stamp": compiled.stamp(), "numba": numba.__version__,
        "python": ".".join(map(str, sys.version_info[:3])),
        "seconds": round(time.perf_counter() - began, 1),
        "cpu_flags": sorted(set(compiled.cpu_flags()))},
        indent=1) + "\n")
    return stamp_path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--into", type=Path, default=_ROOT,
                        help="folder of the extension (default: turbobc/ itself)")
    args = parser.parse_args(argv)
    # the callees' own numba caches go to a folder of their own, not beside the sources
    os.environ.setdefault("NUMBA_CACHE_DIR", tempfile.mkdtemp(prefix="turbobc-aot-"))
    path = build(args.into)
    seconds = json.loads(path.read_text())["seconds"]
    print(f"turbobc: the CPU functions compiled ahead into {args.into} in {seconds} s",
          file=sys.stderr)


if __name__ == "__main__":
    main()
