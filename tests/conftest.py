"""Shared fixtures: the engines every correctness test runs on, and the GPU skip rule.

``ENGINE_CONFIGS`` lists (engine, kernel) pairs, and the GPU engine's layers family on hops. The same
test bodies run for each; GPU pairs carry the ``gpu`` marker and skip, with the reason, where
CuPy sees no device. The list is built from ``spmv.KERNELS`` so a kernel added
to the registry joins the whole correctness grid automatically.
"""

from __future__ import annotations

import pytest

from spmv import KERNELS
from turbobc._engines import gpu_status

GPU_KERNELS = ("auto",) + KERNELS
FRONTIERS = "frontiers-family"
"""The GPU engine with ``Tuning.gpu_family = "frontiers"`` (unweighted runs of many sources a
source per thread block, turbobc/engines/gpu/frontiers.py)."""

LAYERS = "layers-family"
"""The GPU engine with ``Tuning.gpu_family = "layers"`` (unweighted runs of many sources on the
layer kernels, turbobc/engines/gpu/layers.py): the fixture sets the knob and hands the test
("gpu", "auto")."""

ENGINE_CONFIGS = [pytest.param(("graphblas", "auto"), id="graphblas")] + [
    pytest.param(("gpu", kernel), id=f"gpu-{kernel}", marks=pytest.mark.gpu)
    for kernel in GPU_KERNELS
] + [pytest.param(("gpu", LAYERS), id="gpu-layers", marks=pytest.mark.gpu),
     pytest.param(("gpu", FRONTIERS), id="gpu-frontiers", marks=pytest.mark.gpu)]


def pytest_collection_modifyitems(config, items):
    usable, reason = gpu_status()
    if usable:
        return
    skip_gpu = pytest.mark.skip(reason=f"no usable GPU: {reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)


@pytest.fixture(params=ENGINE_CONFIGS)
def engine_config(request):
    """An (engine, kernel) pair: the CPU reference, every GPU kernel, and the GPU engine's
    layers and frontiers families."""
    engine, kernel = request.param
    if kernel not in (LAYERS, FRONTIERS):
        yield request.param
        return
    import turbobc

    if kernel == FRONTIERS:
        with turbobc.tuning(gpu_family="frontiers"):
            yield engine, "auto"
        return

    # the levels by rounds over the batch (the small graphs of the grid would otherwise find
    # them a source per block: tests/test_gpu_weighted.py covers that way with hops)
    with turbobc.tuning(gpu_family="layers", gpu_block_distances=False):
        yield engine, "auto"
