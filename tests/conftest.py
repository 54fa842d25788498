"""Shared fixtures: the engines every correctness test runs on, and the GPU skip rule.

``ENGINE_CONFIGS`` lists (engine, kernel) pairs, the cpu engine's walks one source at a time,
and the GPU engine's layers and frontiers families. The same
test bodies run for each; GPU pairs carry the ``gpu`` marker and skip, with the reason, where
CuPy sees no device. The list is built from ``spmv.KERNELS`` so a kernel added
to the registry joins the whole correctness grid automatically.
"""

from __future__ import annotations

import os

import pytest

# TURBOBC_TEST_GPUS=N (bench/gpu_check.sh on a host of N GPUs) deals the xdist workers over the
# GPUs, worker gwK on GPU K mod N. Set before anything starts CUDA, which reads it once.
_TEST_GPUS = int(os.environ.get("TURBOBC_TEST_GPUS", "0") or 0)
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _TEST_GPUS > 1 and _WORKER.startswith("gw"):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(int(_WORKER[2:]) % _TEST_GPUS)

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

ALONE = "one-source-walks"
"""The cpu engine with ``Tuning.cpu_lanes = False``: every source walked alone (the path of
deep graphs, edge sums and lengths), where the small graphs of the grid would otherwise take
the 64-lane batches (turbobc/engines/cpu/lanes.py): the fixture sets the knob and hands the
test ("cpu", "auto"). Marked slow: the plain "cpu" entry already walks alone wherever lanes do
not serve (lengths, edges, deep graphs), so the first check leaves this repeat to .ci/run."""

ENGINE_CONFIGS = [pytest.param(("graphblas", "auto"), id="graphblas"),
                  pytest.param(("cpu", "auto"), id="cpu"),
                  pytest.param(("cpu", ALONE), id="cpu-alone", marks=pytest.mark.slow)] + [
    pytest.param(("gpu", kernel), id=f"gpu-{kernel}", marks=pytest.mark.gpu)
    for kernel in GPU_KERNELS
] + [pytest.param(("gpu", LAYERS), id="gpu-layers", marks=pytest.mark.gpu),
     pytest.param(("gpu", FRONTIERS), id="gpu-frontiers", marks=pytest.mark.gpu)]

KERNEL_FREE_CONFIGS = [param for param in ENGINE_CONFIGS if param.values[0][1] not in KERNELS]
"""The pairs that name no GPU kernel (the engines, the GPU engine's own choice and its
families): for the calls that take no kernel name, edge and weighted BC, as
``@pytest.mark.parametrize("engine_config", KERNEL_FREE_CONFIGS, indirect=True)``."""


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
    """An (engine, kernel) pair: the graphblas reference, the cpu engine (64-lane batches where
    they serve, and every source alone), every GPU kernel, and the GPU engine's layers and
    frontiers families."""
    engine, kernel = request.param
    if kernel == ALONE:
        import turbobc

        with turbobc.tuning(cpu_lanes=False):
            yield engine, "auto"
        return
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


CPU_ENGINES = [pytest.param("graphblas", id="graphblas"), pytest.param("cpu", id="cpu")]
"""The two CPU engines: the graphblas reference and the compiled cpu engine."""


@pytest.fixture(params=CPU_ENGINES)
def cpu_engine(request):
    """The name of a CPU engine: every test that asks for it runs on both."""
    return request.param


@pytest.fixture
def sampling_only(monkeypatch):
    """The exact rule (turbobc/_exact_rule.py) out of the way: on these graphs of a few
    hundred to a few thousand vertices it would sweep every source where the pilot predicts
    most of them, and the guarantee of the sampled values is what is checked."""
    from turbobc._exact_rule import ExactRule

    monkeypatch.setattr(ExactRule, "before", lambda self, upper: None)
    monkeypatch.setattr(ExactRule, "during", lambda self, *args, **kwargs: None)
