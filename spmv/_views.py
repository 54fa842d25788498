"""The host's copy of spmv/kernels/views.cuh: the structs every kernel entry point takes.

Each struct is a NumPy structured dtype with C alignment (``align=True``), device pointers as
``uint64`` and counts as ``int64``, so one layout serves every index and level type. A
launcher fills one record per struct (:func:`record`) and passes it by value, as CuPy passes
any NumPy structured scalar. ``tests/test_views_layout.py`` checks the field names against the
header and, through NVRTC, every offset and size against the compiler's.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SINGLE_GRAPH", "SINGLE_WORK", "SINGLE_RUN", "BATCH_GRAPH", "BATCH_WORK",
           "BATCH_RUN", "VIEWS", "record", "pointer"]

_P, _N, _I, _F = np.uint64, np.int64, np.int32, np.float64


def _struct(*fields) -> np.dtype:
    return np.dtype(list(fields), align=True)


SINGLE_GRAPH = _struct(("a", _P), ("b", _P), ("unit_col", _P), ("unit_start", _P), ("n", _N),
                       ("m", _N), ("nunits", _N), ("directed", _I))
SINGLE_WORK = _struct(("S", _P), ("sigma", _P), ("t", _P), ("shifts", _P), ("ctl", _P))
SINGLE_RUN = _struct(("sources", _P), ("nsrc", _N), ("bc", _P), ("tau", _P), ("omega", _P),
                      ("endpoints", _I))

BATCH_GRAPH = _struct(("in_ptr", _P), ("in_idx", _P), ("out_ptr", _P), ("out_idx", _P),
                      ("erow", _P), ("ecol", _P), ("n", _N), ("m", _N), ("small_count", _F))
BATCH_WORK = _struct(("level", _P), ("sigma", _P), ("t", _P), ("flag0", _P), ("flag1", _P),
                     ("masks", _P), ("shifts", _P), ("maxbits", _P), ("reached", _P),
                     ("ctl", _P), ("dcap", _N))
BATCH_RUN = _struct(("sources", _P), ("nsrc", _N), ("lanes", _N), ("bc", _P), ("edge", _P),
                    ("tau", _P), ("omega", _P), ("tau_slot", _P), ("push_ratio", np.uint64),
                    ("endpoints", _I), ("phase", _I))

VIEWS = {"SingleGraph": SINGLE_GRAPH, "SingleWork": SINGLE_WORK, "SingleRun": SINGLE_RUN,
         "BatchGraph": BATCH_GRAPH, "BatchWork": BATCH_WORK, "BatchRun": BATCH_RUN}
"""Struct name in views.cuh -> its dtype."""


def pointer(array) -> int:
    """The device address of a CuPy array, or 0 for None (a null pointer)."""
    return 0 if array is None else int(array.data.ptr)


def record(dtype: np.dtype, **values) -> np.void:
    """One struct of ``dtype`` by value: every field must be given; CuPy arrays (and None)
    become device pointers."""
    if len(values) != len(dtype.names) or not all(name in values for name in dtype.names):
        missing = set(dtype.names) - set(values)
        extra = set(values) - set(dtype.names)
        raise TypeError(f"fields of the struct: missing {sorted(missing)}, unknown {sorted(extra)}")
    fields = tuple(pointer(value) if value is None or hasattr(value, "__cuda_array_interface__")
                   else value for value in (values[name] for name in dtype.names))
    return np.array(fields, dtype=dtype)[()]  # one conversion (a launch builds one per source)
