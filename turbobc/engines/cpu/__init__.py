"""The CPU engine (``engine="cpu"``): Brandes' algorithm compiled with numba, threads over
sources with per-thread state, as NetworKit does (docs/cpu-engine.md).

The modules, by role:

- ``walks``: the forward walks of one source, a BFS for hop counts and a Dijkstra for lengths,
  with path counts kept in range by power-of-two scaling;
- ``accumulate``: the one accumulate step (Brandes' backward sweep) with τ, ω, endpoint terms,
  edge sums and networkx's edge subset rule as parameters;
- ``sweep``: the threaded core, chunks of sources in parallel, each with its own state and
  its own row of partial sums;
- ``memory``: the memory plan (chunks in flight, slots of chain folding) and the threads;
- ``engine``: :class:`CpuEngine` and :class:`CpuSweeper` behind the engine protocol
  (turbobc/engines/protocol.py).

Nothing compiles at import: numba compiles each function on its first call and caches the
machine code beside the module (``cache=True``), so the compile is paid once per machine.
"""

from turbobc.engines.cpu.engine import CpuEngine, CpuSweeper

__all__ = ["CpuEngine", "CpuSweeper"]
