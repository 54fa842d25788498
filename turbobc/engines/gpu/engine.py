"""The GPU engine behind the protocol: its plan picks the kernel family for each run.

One source is swept by the single-source family (:mod:`turbobc.engines.gpu.single`, spmv/kernels/sweep.cuh);
more by the batched family (:mod:`turbobc.engines.gpu.batched`, spmv/kernels/batched.cuh), which
itself goes one source at a time when not even 32 lanes fit in device memory. The facts of
each run (``family``, kernel, batch, depth, peak pool bytes, seconds) land in
:attr:`GpuSweeper.facts`.

Not yet resident: each :meth:`GpuSweeper.run` uploads the storage format its family needs and
frees it at the end (the two families keep different formats: CSC, or CSR and CSC).
"""

from __future__ import annotations

import numpy as np

from turbobc._engines import gpu_status
from turbobc.engines.protocol import Engine, Partial, Problem, Sweeper

__all__ = ["GpuEngine", "GpuSweeper"]


class GpuEngine(Engine):
    """The CUDA engine through CuPy."""

    name = "gpu"

    def can_serve(self, problem: Problem) -> str | None:
        usable, reason = gpu_status()
        return None if usable else f"no usable GPU: {reason}"

    def open(self, problem: Problem) -> "GpuSweeper":
        return GpuSweeper(problem)


class GpuSweeper(Sweeper):
    """Runs sources on the device, choosing the family per run (module docstring)."""

    def run(self, sources: np.ndarray, progress=None) -> Partial:
        problem = self.problem
        sources = np.asarray(sources, dtype=np.int64)
        if sources.size > 1:
            from turbobc.engines.gpu.batched import accumulate
        else:
            from turbobc.engines.gpu.single import accumulate
        facts: dict = {}
        raw = accumulate(problem.graph, sources, endpoints=problem.endpoints,
                         kernel=problem.kernel, progress=progress,
                         memory_limit=problem.memory_limit, facts=facts)
        self.facts.update(engine="gpu", **facts)
        return Partial(vertex=raw, sources=int(sources.size))
