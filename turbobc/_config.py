"""``turbobc.show_config()``: what turbobc found on this machine."""

from __future__ import annotations

import platform
import sys

__all__ = ["show_config", "config"]


def config() -> dict:
    """Versions and the GPU status as a dict (the content of :func:`show_config`)."""
    import graphblas
    import numba
    import numpy
    import scipy

    from turbobc._engines import gpu_status

    usable, reason = gpu_status()
    return {
        "turbobc": _version(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "python-graphblas": graphblas.__version__,
        "numba": numba.__version__,
        "cpu_threads": numba.get_num_threads(),
        "gpu_usable": usable,
        "gpu": reason,
        "default_engine": "gpu" if usable else "cpu",
    }


def show_config() -> None:
    """Print turbobc's version, its dependencies and whether a GPU is usable."""
    for key, value in config().items():
        print(f"{key:>17}: {value}")


def _version() -> str:
    from turbobc._version import __version__

    return __version__
