"""Whether the GPU engine can run here, and how messages name the CPU engine. (Which engines
exist is the registry's: turbobc/engines/__init__.py.)

Nothing here imports CuPy at module import time: :func:`gpu_status` does it
lazily, once, and caches the answer.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["CPU_ENGINE", "cpu_fallback_note", "gpu_count", "gpu_status"]

CPU_ENGINE = "the CPU engine (numba)"
"""How messages name the engine ``engine="cpu"`` runs, the one "auto" picks without a GPU."""


@lru_cache(maxsize=1)
def gpu_status() -> tuple[bool, str]:
    """Whether the GPU engine can run, and a sentence that says why (not).

    Returns
    -------
    usable : bool
        True when CuPy imports and sees at least one CUDA device.
    reason : str
        What was found, e.g. ``"CuPy 14.2.0, 1 device(s): NVIDIA H100 80GB HBM3"``,
        or what is missing.
    """
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install raising at import
        return False, (f"CuPy is not importable ({type(exc).__name__}: {exc}); "
                       "install turbobc[cuda12] or turbobc[cuda13]")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return False, f"CuPy {cupy.__version__} found no usable CUDA device ({exc})"
    if count < 1:
        return False, f"CuPy {cupy.__version__} found no CUDA device"
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    if isinstance(name, bytes):
        name = name.decode()
    return True, f"CuPy {cupy.__version__}, {count} device(s): {name}"


def gpu_count() -> int:
    """How many CUDA devices CuPy sees: 0 where :func:`gpu_status` finds the GPU engine
    unusable (no CuPy, no driver, no device)."""
    if not gpu_status()[0]:
        return 0
    import cupy

    return int(cupy.cuda.runtime.getDeviceCount())


def cpu_fallback_note() -> str:
    """What ``engine="auto"`` does on this machine without a GPU, in plain words, with the
    technical reason on a second line; ``""`` when a GPU is usable.

    Returns
    -------
    str
        e.g. ``"No usable CUDA device was found, so the CPU engine (python-graphblas) is
        used.\n  detail: CuPy 14.2.0 found no usable CUDA device (cudaErrorNoDevice: ...)"``.
    """
    usable, reason = gpu_status()
    if usable:
        return ""
    return f"No usable CUDA device was found, so {CPU_ENGINE} is used.\n  detail: {reason}"
