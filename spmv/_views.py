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
           "BATCH_RUN", "LAYER_GRAPH", "RELAX_STATE", "RELAX_ROUND", "DAG_SLOTS", "LAYER_STEP",
           "DAG_SUMS", "CHAIN_ROWS", "CHAIN_PLAN", "LANE_LAYOUT", "SLOT_LAYOUT", "FRONTIER_LAYOUT",
           "FRONTIER_GRAPH",
           "FRONTIER_WORK", "FRONTIER_RUN", "PAIR_GRAPH",
           "PAIR_WORK", "PAIR_RUN", "VIEWS", "record", "pointer"]

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

LAYER_GRAPH = _struct(("ptr", _P), ("idx", _P), ("len", _P), ("n", _N))
RELAX_STATE = _struct(("dist", _P), ("marks", _P), ("stamp", _P), ("queue", _P),
                      ("queue_count", _P), ("far_stamp", _P), ("far", _P), ("far_count", _P))
RELAX_ROUND = _struct(("keys", _P), ("count", _N), ("below", _F), ("queued", _I), ("round", _I),
                      ("phase", _I))
DAG_SLOTS = _struct(("dist", _P), ("sigma", _P), ("delta", _P), ("remaining", _P), ("dag", _P),
                    ("mask_at", _P), ("words", _N), ("total", _N))
LAYER_STEP = _struct(("layer", _P), ("size", _N), ("next", _P), ("count", _P), ("marks", _P),
                     ("queued", _I))
DAG_SUMS = _struct(("tau", _P), ("lane_weight", _P), ("skip", _P), ("edge", _P),
                   ("tau_per_slot", _I), ("has_edge", _I))

CHAIN_ROWS = _struct(("chain", _P), ("lane_a", _P), ("lane_b", _P), ("first", _P), ("last", _P),
                     ("length", _P), ("prefix_off", _P), ("hist_off", _P), ("span", _P),
                     ("class_base", _P), ("class_first", _P))
CHAIN_PLAN = _struct(("prefix", _P), ("chain_of", _P), ("r", _P), ("class_at", _P), ("tau", _P),
                     ("mass", _P), ("tie_mass", _P))
LANE_LAYOUT = _struct(("level", _P), ("sigma", _P), ("exponent", _P), ("lanes", _N), ("n", _N),
                      ("level_bytes", _I))
SLOT_LAYOUT = _struct(("dist", _P), ("sigma", _P), ("n", _N), ("scale", _F))
FRONTIER_LAYOUT = _struct(("level", _P), ("sigma", _P), ("exponent", _P), ("rank", _P),
                          ("depths", _N), ("n", _N))

FRONTIER_GRAPH = _struct(("ptr", _P), ("idx", _P), ("n", _N), ("small_count", _F))
FRONTIER_WORK = _struct(("level", _P), ("sigma", _P), ("t", _P), ("order", _P), ("start", _P),
                        ("shifts", _P), ("bc", _P), ("next", _P), ("wide", _P),
                        ("wide_count", _P), ("profile", _P), ("depth", _P))
FRONTIER_RUN = _struct(("sources", _P), ("nsrc", _N), ("tau", _P), ("tau_stride", _N),
                       ("omega", _P), ("edge", _P), ("endpoints", _I), ("phase", _I))

PAIR_GRAPH = _struct(("ptr", _P), ("idx", _P), ("rptr", _P), ("ridx", _P), ("n", _N))
PAIR_WORK = _struct(("levels", _P), ("sigmas", _P), ("orders", _P), ("counts", _P),
                    ("status", _P), ("taken", _P))
PAIR_RUN = _struct(("seed", np.uint64), ("first", _N), ("count", _N), ("endpoints", _I))

VIEWS = {"SingleGraph": SINGLE_GRAPH, "SingleWork": SINGLE_WORK, "SingleRun": SINGLE_RUN,
         "BatchGraph": BATCH_GRAPH, "BatchWork": BATCH_WORK, "BatchRun": BATCH_RUN,
         "LayerGraph": LAYER_GRAPH, "RelaxState": RELAX_STATE, "RelaxRound": RELAX_ROUND,
         "DagSlots": DAG_SLOTS, "LayerStep": LAYER_STEP, "DagSums": DAG_SUMS,
         "ChainRows": CHAIN_ROWS, "ChainPlan": CHAIN_PLAN, "LaneLayout": LANE_LAYOUT,
         "SlotLayout": SLOT_LAYOUT, "FrontierLayout": FRONTIER_LAYOUT,
         "FrontierGraph": FRONTIER_GRAPH, "FrontierWork": FRONTIER_WORK,
         "FrontierRun": FRONTIER_RUN, "PairGraph": PAIR_GRAPH, "PairWork": PAIR_WORK,
         "PairRun": PAIR_RUN}
"""Struct name in views.cuh -> its dtype."""


def pointer(array) -> int:
    """The device address of a CuPy array, or 0 for None (a null pointer)."""
    return 0 if array is None else int(array.data.ptr)


def record(dtype: np.dtype, **values) -> np.void:
    """One struct of ``dtype`` by value: every field must be given; CuPy arrays (and None)
    become device pointers."""
    names = _FIELDS.get(dtype)
    if names is None:
        names = _FIELDS[dtype] = frozenset(dtype.names)
    if values.keys() != names:  # (a set comparison: the layers family builds thousands a call)
        missing = names - set(values)
        extra = set(values) - names
        raise TypeError(f"fields of the struct: missing {sorted(missing)}, unknown {sorted(extra)}")
    fields = tuple(pointer(value) if value is None or hasattr(value, "__cuda_array_interface__")
                   else value for value in (values[name] for name in dtype.names))
    return np.array(fields, dtype=dtype)[()]  # one conversion (a launch builds one per source)


_FIELDS: dict = {}
"""Struct dtype -> the set of its field names (:func:`record`'s check)."""
