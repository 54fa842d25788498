"""Importing turbobc does no GPU work, warns nothing, and show_config tells what was found."""

from __future__ import annotations

import subprocess
import sys

import turbobc


def test_import_is_silent_and_does_not_touch_cupy():
    code = ("import sys, turbobc, spmv; "
            "print('cupy' in sys.modules, 'turbobc.engines.gpu.single' in sys.modules)")
    result = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == "False False"
    assert result.stderr == ""


def test_show_config_reports_versions_and_gpu(capsys):
    turbobc.show_config()
    out = capsys.readouterr().out
    for key in ("turbobc", "python-graphblas", "gpu_usable", "default_engine"):
        assert key in out
    usable, reason = turbobc._engines.gpu_status()
    assert reason in out
    assert ("default_engine: gpu" in out) == usable


def test_public_surface():
    assert set(turbobc.__all__) == {"DynamicBC", "bc", "edge_bc", "run_bc", "run_edge_bc",
                                    "top_k", "TopK", "exceptions", "load_ego_facebook",
                                    "read_graph", "show_config", "tuning", "__version__"}
