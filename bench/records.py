"""Units and JSON records shared by every benchmark.

Units are defined here and nowhere else:

- ``mteps(nnz, seconds)``: single-source MTEPS = stored edges / time / 1e6.
- ``gteps(n_sources, nnz, seconds)``: exact-BC GTEPS = sources · stored edges / time / 1e9.
- memory is always in bytes.

Every record carries the machine, library versions and the git commit.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

__all__ = ["RESULTS", "environment", "gteps", "mteps", "write_record"]


def mteps(nnz: int, seconds: float) -> float:
    """Single-source traversal rate: stored edges per second, in millions."""
    return nnz / seconds / 1e6


def gteps(n_sources: int, nnz: int, seconds: float) -> float:
    """Exact (or many-source) BC rate: sources x stored edges per second, in billions."""
    return n_sources * nnz / seconds / 1e9


def _git_commit() -> str:
    """The commit: $TURBOBC_COMMIT when set (the GPU machine gets a copy without .git),
    else git (with -dirty for uncommitted changes to tracked files)."""
    if os.environ.get("TURBOBC_COMMIT"):
        return os.environ["TURBOBC_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             cwd=Path(__file__).resolve().parent, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True,
                               cwd=Path(__file__).resolve().parent).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("TURBOBC_COMMIT", "unknown")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment() -> dict:
    """Machine, versions and commit for a record (GPU fields when CuPy sees a device)."""
    import graphblas
    import numpy
    import scipy

    import turbobc

    env = {
        "commit": _git_commit(),
        "turbobc": turbobc.__version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "python_graphblas": graphblas.__version__,
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
    }
    from turbobc._engines import gpu_status

    usable, _ = gpu_status()
    if usable:
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        env.update(gpu=name, sm_count=props["multiProcessorCount"], cupy=cupy.__version__,
                   cuda_runtime=cupy.cuda.runtime.runtimeGetVersion(),
                   cuda_driver=cupy.cuda.runtime.driverGetVersion())
    else:
        env["gpu"] = None
    return env


def write_record(name: str, record: dict, results: Path = RESULTS,
                 path: Path | None = None) -> Path:
    """Write ``record`` (plus the environment) to ``results/<name>-<UTC time>.json``, or over
    ``path`` (a record written earlier in the same run, rewritten as rows are added, so that
    a run cut by its time limit keeps the rows it finished)."""
    results.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = path if path is not None else results / f"{name}-{stamp}.json"
    payload = {"benchmark": name, "utc": stamp, "environment": environment(), **record}
    path.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n")
    return path
