"""The CPU's compiled functions, ready before the first call: shipped ahead, or compiled once.

Every function numba compiles for turbobc is listed in :data:`ENTRY_POINTS`, with the
signatures a call can reach: the CPU engine's sweeps (turbobc/engines/cpu/), each a serial
function that releases the GIL so that Python threads run it side by side
(turbobc/engines/cpu/threads.py), and the searches of turbobc/_traverse.py past SciPy's reach.

:func:`entry` gives the function of a name for an index type:

1. **ahead**: from the extension ``turbobc._aot_core``, which ``python -m turbobc._aot``
   compiles with ``numba.pycc`` when the package is built (setup.py: numba and a C compiler
   at build time). Importing it costs milliseconds and imports no numba; it is used when the
   stamp beside it (``_aot_core.json``) equals :func:`stamp` of the sources here, so a
   function edited after the build is never served stale;
2. **at first use**: otherwise numba's JIT compiles the same Python function for the
   signature called (``nogil=True``, cached on disk, where numba's cache finds a writable
   folder: beside the module, else ``NUMBA_CACHE_DIR`` or the user's cache folder, so a
   read-only install does not recompile in every process); the reason is said once on
   stderr, and :func:`compile_log` keeps what was compiled and how long it took.

``TURBOBC_AOT=0`` skips the extension (tests of the JIT path). Nothing here imports numba
until a function is compiled at first use.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

__all__ = ["ENTRY_POINTS", "SOURCE_FILES", "entry", "stamp", "shipped_core", "compile_log",
           "compile_seconds", "symbol", "signatures", "cpu_flags", "first_use_mark",
           "compiled_since", "first_use_line"]

_ROOT = Path(__file__).resolve().parent

_CPU = "turbobc.engines.cpu"

ENTRY_POINTS = {
    # name: (module, function, signature with {I} for the index type and {P} for pointers)
    "sweep_chunk": (f"{_CPU}.sweep", "sweep_chunk",
                    "void({P}, {I}, float64[::1], int64[::1], int64, int64, float64[::1], "
                    "float64[::1], boolean, boolean, float64[::1], float64[::1], int64[::1], "
                    "int64[::1])"),
    "walk_slot": (f"{_CPU}.sweep", "walk_slot",
                  "void({P}, {I}, float64[::1], int64[::1], int64, int64, int64, "
                  "float64[:, ::1], float64[:, ::1], int64[:, ::1], int64[:, ::1], int64[::1], "
                  "int64[::1], boolean[::1], int64[::1])"),
    "accumulate_slots": (f"{_CPU}.sweep", "accumulate_slots",
                         "void({P}, {I}, float64[::1], int64[::1], int64[::1], int64[:, ::1], "
                         "float64[:, ::1], float64[:, ::1], int64[:, ::1], boolean[::1], "
                         "float64[:, ::1], int64, int64, float64[::1], float64[::1])"),
    "distances_row": (f"{_CPU}.sweep", "distances_row",
                      "void({P}, {I}, float64[::1], int64, int64, float64[::1])"),
    "sweep_lane_batch": (f"{_CPU}.lanes", "sweep_lane_batch",
                         "void({P}, {I}, int64[::1], int64, float64[::1], float64[::1], "
                         "boolean, float64[::1], boolean[::1])"),
    "sample_block": (f"{_CPU}.pairs", "sample_block",
                     "int64({P}, {I}, {P}, {I}, uint64, int64, int64, boolean, "
                     "int32[:, ::1], float64[:, ::1], int64[:, ::1], uint64[::1])"),
    "bfs": ("turbobc._traverse", "_bfs_loop",
            "Tuple((int64[::1], int64, int64[::1]))({P}, {I}, int64[::1], int64, boolean)"),
    "degrees_counting_loops": ("turbobc._traverse", "_degrees_counting_loops_loop",
                               "int64[::1]({P}, {I}, int64)"),
    "cuthill_mckee": ("turbobc._traverse", "_cuthill_mckee_loop",
                      "int64[::1]({P}, {I}, int64[::1], int64[::1], int64)"),
    "union_find": ("turbobc._traverse", "_union_find_loop", "int64[::1]({P}, {I}, int64)"),
    "peel_trees": ("turbobc._traverse", "_peel_loop",
                   "Tuple((int64[::1], int64[::1], int64[::1], int64[::1], int64[::1], "
                   "int64[::1]))(int64[::1], int64[::1], int64[::1])"),
    "bernstein_radii": ("turbobc._bernstein", "_radii_loop",
                        "void(float64[::1], float64[::1], float64, float64, int64, "
                        "float64[::1])"),
}
"""Every compiled function: name -> (module, function, signature). Row pointers ({P}) are
int64; column indices ({I}) int32 or int64, one compiled version each; a function without
indices has one version (index type "any")."""

INDEX_TYPES = {"int32": "i4", "int64": "i8"}

SOURCE_FILES = ("_compiled.py", "_traverse.py", "_bernstein.py", "engines/cpu/sweep.py",
                "engines/cpu/walks.py", "engines/cpu/accumulate.py", "engines/cpu/lanes.py",
                "engines/cpu/pairs.py", "engines/cpu/statuses.py")
"""The files whose text the shipped functions were compiled from (under turbobc/)."""


def signatures(name: str) -> dict[str, str]:
    """Index type -> the numba signature of ``name`` for it ("any" where it takes none)."""
    text = ENTRY_POINTS[name][2]
    if "{I}" not in text:
        return {"any": text.format(P="int64[::1]")}
    return {index: text.format(P="int64[::1]", I=f"{index}[::1]") for index in INDEX_TYPES}


def symbol(name: str, index: str) -> str:
    """The extension's name of ``name`` for index type ``index`` ("int32", "int64" or
    "any")."""
    return name if index == "any" else f"{name}__{INDEX_TYPES[index]}"


def stamp() -> str:
    """Hash (sha256, hex) of :data:`SOURCE_FILES`: what a shipped extension must match."""
    digest = hashlib.sha256()
    for name in SOURCE_FILES:
        digest.update(name.encode() + b"\0" + (_ROOT / name).read_bytes() + b"\0")
    return digest.hexdigest()


_lock = threading.RLock()
_found: dict = {}
_core: list = []  # [module or None, the reason not yet said or None] once looked for
_log: list = []   # (what, signature, seconds) of every compile at first use


def shipped_core(*, say: bool = True):
    """The extension ``turbobc._aot_core`` when present and current, else None (the reason
    said once on stderr, by the first call with ``say``: a caller that only asks whether
    the functions are ready, turbobc/_traverse.py, says nothing)."""
    if not _core:
        _core.extend(_look_for_core())
    core, reason = _core[0], _core[1]
    if core is None and reason is not None and say:
        _core[1] = None  # said once
        _say(reason)
    return core


def _look_for_core() -> tuple:
    """(the extension, None) when present and current, else (None, why not: a line)."""
    if os.environ.get("TURBOBC_AOT", "1") == "0":
        return None, None
    found = _shipped_files()
    if found is None:
        return None, ("the CPU functions were not compiled ahead with this install "
                      "(turbobc/_aot_core); numba compiles the ones a call uses at its first "
                      "use and caches them")
    shipped, library = found
    missing = set(shipped.get("cpu_flags", ())) - set(cpu_flags())
    if missing:
        return None, ("the CPU functions shipped ahead (turbobc/_aot_core) were compiled for "
                      f"a CPU with features this one lacks ({', '.join(sorted(missing)[:4])}); "
                      "numba compiles the ones a call uses at first use")
    if shipped.get("stamp") != stamp():
        return None, ("the CPU functions shipped ahead (turbobc/_aot_core) were built from "
                      "other sources; numba compiles the ones a call uses at first use "
                      "(python -m turbobc._aot rebuilds them)")
    try:
        return _load_extension(library), None
    except ImportError as exc:
        return None, (f"the CPU functions shipped ahead do not load ({exc}); numba compiles "
                      "the ones a call uses at first use")


def _shipped_files():
    """(``_aot_core.json`` read, the extension's path): beside this module, else in another
    turbobc folder on the import path, the installed one (a checkout imported in place, e.g. by
    ``python -m turbobc.demo`` in the folder the package was installed from, uses the
    extension its install built when its sources are the same: the stamp says so); None
    where neither has one."""
    import importlib.machinery

    # this package's folder, then every other turbobc folder on the import path (the
    # installed one, where a checkout is imported in place)
    folders = [_ROOT] + [Path(entry or ".").resolve() / "turbobc" for entry in sys.path]
    folders = [f for f in dict.fromkeys(folders) if f == _ROOT or f.resolve() != _ROOT]
    for folder in folders:
        try:
            shipped = json.loads((folder / "_aot_core.json").read_text())
        except (OSError, ValueError):
            continue
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if (folder / f"_aot_core{suffix}").is_file():
                return shipped, folder / f"_aot_core{suffix}"
    return None


def _load_extension(path: Path):
    """The extension module at ``path``, as ``turbobc._aot_core``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("turbobc._aot_core", path)
    if spec is None:
        raise ImportError(f"no extension module at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["turbobc._aot_core"] = module
    return module


def entry(name: str, index_dtype=None):
    """The compiled function ``name`` for column indices of ``index_dtype`` (int32 or
    int64; None for a function without indices): the shipped one, else numba's dispatcher
    (compiled at first use)."""
    index = "any" if index_dtype is None else np.dtype(index_dtype).name
    key = (name, index)
    function = _found.get(key)
    if function is None:
        with _lock:
            core = shipped_core()
            if core is not None:
                function = getattr(core, symbol(name, index))
            else:
                function = _timed(name, _jitted(name))
            _found[key] = function
    return function


_jit: dict = {}


def _jitted(name: str):
    """numba's dispatcher of ``name`` (``nogil=True``, cached on disk)."""
    module, attribute, _ = ENTRY_POINTS[name]
    function = getattr(importlib.import_module(module), attribute)
    if not hasattr(function, "py_func"):  # a plain function: compiled here
        from numba import njit

        function = njit(cache=True, nogil=True)(function)
    return function


def _timed(name: str, dispatcher):
    """``dispatcher`` with each new signature's compile (or disk-cache load) timed into the
    log before it runs, and whether it compiled (a miss of numba's disk cache): the first
    call of a signature pays it."""
    from numba import typeof

    seen: set = set()

    def run(*args):
        types = tuple(typeof(a) for a in args)
        if types not in seen:
            with _lock:  # threads call it at once: one compiles, one logs
                if types not in seen:
                    misses = sum(dispatcher.stats.cache_misses.values())
                    began = time.perf_counter()
                    dispatcher.compile(types)
                    compiled = sum(dispatcher.stats.cache_misses.values()) > misses
                    _log.append((name, str(types), time.perf_counter() - began, compiled))
                    seen.add(types)
        return dispatcher(*args)

    run.__doc__ = dispatcher.__doc__
    run.dispatcher = dispatcher
    return run


def first_use_mark() -> tuple[int, int]:
    """Where the two logs of compiles at first use stand now (numba's and NVRTC's):
    :func:`compiled_since` reads what a call compiled after it."""
    return len(_log), len(_nvrtc_log())


def compiled_since(mark: tuple[int, int]) -> tuple[float, list[str]]:
    """Seconds spent at first use since ``mark`` compiling (or loading from numba's disk
    cache, or from CuPy's) and what was compiled, not loaded (CPU functions by name; CUDA
    kernels as file: instantiation, which CuPy may have read from its cache)."""
    cpu = _log[mark[0]:]
    gpu = _nvrtc_log()[mark[1]:]
    names = ([name for name, _, _, compiled in cpu if compiled]
             + [f"{filename}: {expression}" for filename, expression, _ in gpu])
    return sum(entry[2] for entry in cpu) + sum(s for _, _, s in gpu), names


def first_use_line(facts: dict) -> str | None:
    """The line the demo and the command print on stderr when a run compiled something at
    first use (``facts["compiled"]``), or None."""
    names = facts.get("compiled") or []
    if not names:
        return None
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (f"turbobc: compiled {len(names)} function(s) at first use in "
            f"{facts.get('compile_seconds', 0.0):.1f} s ({shown}); later calls, in this "
            "process and others, reuse them (`turbobc warm-up` compiles everything ahead)")


def _nvrtc_log() -> list:
    """spmv's log of kernels compiled through NVRTC (empty when no GPU kernel was asked for:
    spmv/_module.py is imported only then)."""
    module = sys.modules.get("spmv._module")
    return module._compiled if module is not None else []


def compile_log() -> list:
    """(function, argument types, seconds, whether it compiled rather than loaded numba's
    disk cache) of every signature readied at first use in this process."""
    return list(_log)


def compile_seconds() -> float:
    """Seconds this process spent readying CPU functions at first use (cache loads
    included)."""
    return sum(entry[2] for entry in _log)


def cpu_flags() -> list[str]:
    """This CPU's feature flags (turbobc/_aot.py records the build machine's)."""
    try:
        for line in (Path("/proc/cpuinfo").read_text()).splitlines():
            if line.startswith(("flags", "Features")):
                return line.split(":", 1)[1].split()
    except OSError:
        pass
    return []


def _say(line: str) -> None:
    print(f"turbobc: {line}", file=sys.stderr, flush=True)
