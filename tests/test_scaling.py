"""The scaling limits are one pair of numbers: turbobc's copy (turbobc/_scaling.py), the GPU
package's (spmv/_ctl.py) and the kernels' (spmv/kernels/ctl.cuh) agree."""

from __future__ import annotations

import re

from spmv import _ctl
from spmv._module import KERNEL_DIR
from turbobc import _scaling


def test_turbobc_limits_equal_spmv_and_the_kernels():
    text = (KERNEL_DIR / "ctl.cuh").read_text()
    header = {name: int(re.search(rf"constexpr int {name} = (\d+);", text).group(1))
              for name in ("OVERFLOW_EXP", "WIDE_EXP")}
    assert header == {"OVERFLOW_EXP": _scaling.OVERFLOW_EXP, "WIDE_EXP": _scaling.WIDE_EXP}
    assert (_ctl.OVERFLOW_EXP, _ctl.WIDE_EXP) == (_scaling.OVERFLOW_EXP, _scaling.WIDE_EXP)
