"""The pair sampler's blocks per SM (spmv/kernels/pairs.cu, ``PAIR_MIN_BLOCKS``): the same
samples timed for each register cap, with the counts checked equal (they are a function of
the seed and the sample numbers only, whatever the grid).

For each graph and each ``PAIR_MIN_BLOCKS`` of ``--min-blocks`` (2: up to 128 registers a
thread, the compiler's choice; 3: 80; 4: 64), the kernel is compiled with that cap and the
grid given ``--grid-per-sm`` blocks per SM (the blocks beyond those resident wait, then take
samples from the counter). Times ``--samples`` samples after a warm-up launch. Record
``pairs_occupancy``.

Usage: python bench/pairs_occupancy.py [--graphs kron20 road1000 del20] [--samples 8192]
       [--min-blocks 2 3 4] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from exact_gpu import LABELS, cached_graph  # noqa: E402
from records import RESULTS, write_record  # noqa: E402


def sampler_with(graph, min_blocks: int, grid_per_sm: int):
    """A PairSampler whose kernel is compiled with ``PAIR_MIN_BLOCKS = min_blocks`` and whose
    grid holds ``grid_per_sm`` blocks per SM."""
    import cupy

    import spmv._module as _module
    import turbobc.engines.gpu.pairs as pairs

    sampler = pairs.PairSampler(graph, blocks_per_sm=grid_per_sm)
    name = f"bcp_sample<{_module.c_index_type(sampler.ptr.dtype)}>"
    module = cupy.RawModule(code=f"#define PAIR_MIN_BLOCKS {min_blocks}\n"
                            + _module.source_text("pairs.cu"),
                            options=_module.OPTIONS, name_expressions=[name])
    sampler.kernel = module.get_function(name)
    return sampler, sampler.kernel.num_regs


def main(argv=None):
    import cupy
    import scipy.sparse as sp

    from turbobc._graph import Graph

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=["kron20", "road1000", "del20"])
    parser.add_argument("--samples", type=int, default=8192)
    parser.add_argument("--min-blocks", nargs="+", type=int, default=[2, 3, 4])
    parser.add_argument("--grid-per-sm", type=int, default=4)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows, record = [], None
    for name in args.graphs:
        A = cached_graph(name)  # the benchmark graphs: undirected, canonical
        pattern = sp.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=A.shape)
        graph = Graph(pattern=pattern, directed=False)
        counts = None
        for min_blocks in args.min_blocks:
            sampler, registers = sampler_with(graph, min_blocks, args.grid_per_sm)
            sampler(7, 10**9, sampler.blocks)  # warm-up: other sample numbers
            base = sampler.counts.get()
            cupy.cuda.Device().synchronize()
            began = time.perf_counter()
            total = sampler(7, 0, args.samples)
            seconds = time.perf_counter() - began
            mine = total - base
            same = counts is None or bool(np.array_equal(mine, counts))
            counts = mine if counts is None else counts
            row = {"graph": LABELS.get(name, name), "n": graph.n, "min_blocks": min_blocks,
                   "registers": int(registers), "grid_blocks": sampler.blocks,
                   "samples": args.samples, "seconds": seconds,
                   "microseconds_per_sample": 1e6 * seconds / args.samples,
                   "counts_equal_first_variant": same}
            rows.append(row)
            record = write_record("pairs_occupancy", {"rows": rows}, results=args.out,
                                  path=record)
            print(f"{row['graph']:10s} min_blocks={min_blocks} regs={registers:3d} "
                  f"{seconds:7.3f} s ({row['microseconds_per_sample']:.1f} us/sample) "
                  f"counts equal: {same}", flush=True)
            del sampler
            cupy.get_default_memory_pool().free_all_blocks()
    print(f"record: {record}")


if __name__ == "__main__":
    main()
