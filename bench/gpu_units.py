"""Units and the environment block of every GPU benchmark record (one definition each)."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def mteps(edges: int, seconds: float) -> float:
    """Millions of traversed edges per second: single-source MTEPS = nnz / time."""
    return edges / seconds / 1e6


def gteps(edges: int, seconds: float) -> float:
    """Billions of traversed edges per second (exact BC: n · nnz / time)."""
    return edges / seconds / 1e9


def commit() -> str:
    """The git commit the code came from (env TURBOBC_COMMIT, else git, else 'unknown')."""
    if os.environ.get("TURBOBC_COMMIT"):
        return os.environ["TURBOBC_COMMIT"]
    try:
        root = Path(__file__).resolve().parents[1]
        return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except Exception:
        return "unknown"


def environment() -> dict:
    """GPU name, CUDA runtime/driver and CuPy versions, host, commit."""
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return {
        "gpu": name,
        "sm_count": props["multiProcessorCount"],
        "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
        "cuda_driver": cupy.cuda.runtime.driverGetVersion(),
        "cupy": cupy.__version__,
        "python": platform.python_version(),
        "commit": commit(),
    }
