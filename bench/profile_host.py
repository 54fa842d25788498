"""Where the host time of ``turbobc.bc(A, engine="gpu")`` goes (cProfile, warm call).

Usage: python bench/profile_host.py GRAPH [GRAPH ...]
"""

import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import graphs  # noqa: E402


def main(names):
    import cupy

    import turbobc
    from turbobc._api import run_bc

    for name in names:
        A = graphs.graph(name)
        turbobc.bc(A, engine="gpu")  # compile, warm
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        _, run = run_bc(A, engine="gpu")
        cupy.cuda.Device().synchronize()
        total = time.perf_counter() - t0
        print(f"{name}: {total:.4f} s end to end, sweep {run['sweep_seconds']:.4f} s, order "
              f"{run['order_seconds']:.4f} s", flush=True)
        profile = cProfile.Profile()
        profile.enable()
        turbobc.bc(A, engine="gpu")
        cupy.cuda.Device().synchronize()
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main(sys.argv[1:])
