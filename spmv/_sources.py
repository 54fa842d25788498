"""What the CUDA kernels are: the ``.cu`` files of ``spmv/kernels/``, the ``__global__``
templates each defines, their instantiations (name expressions) and the NVRTC options. The
table both spmv/_module.py (which loads or compiles them) and spmv/_prebuilt.py (the binaries
compiled ahead) read; it imports nothing of spmv."""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["KERNEL_DIR", "SOURCES", "OPTIONS", "INDEX_TYPES", "VALUE_TYPES", "INDEX_PAIRS",
           "COOPERATIVE", "name_expressions", "source_text", "c_index_type", "instance_name"]

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"
"""Folder of the ``.cu`` sources and the headers they share (``*.cuh``)."""

INDEX_TYPES = ("int", "long long")
"""C types of the index template parameter: int32 and int64 indices."""

INDEX_PAIRS = (("int", "int"), ("long long", "long long"), ("int", "long long"))
"""(vertex, position) C types of the kernels that take both (:data:`_POSITIONED`): one type
throughout, or int32 vertices with int64 positions (column pointers) for a graph of fewer than
2^31 vertices and more stored edges: 4 bytes a stored edge instead of 8."""

VALUE_TYPES = ("double",)
"""C types of the value template parameter (σ, δ and bc)."""

SOURCES = {
    "sccsc.cu": ("bc_sccsc",),
    "sccooc.cu": ("bc_sccooc",),
    "vecsc.cu": ("bc_vecsc",),
    "stats.cu": ("out_degree", "column_length", "degree_product_sum", "expand_columns",
                 "missing_reverse"),
    "batched.cu": tuple(f"bcb_{k}{w}{acc}" for acc in ("", "_edge")
                        for k in ("sccsc", "vecsc", "sccooc") for w in (16, 32)),
    "distances.cu": ("bcl_relax", "bcl_block_distances"),
    "marks.cu": ("bcl_count_marks", "bcl_list_marks"),
    "layers.cu": ("bcl_indegree", "bcl_forward", "bcl_backward"),
    "block_sweep.cu": ("bcl_block_sweep",),
    "frontiers.cu": ("bcf_sweep",),
    "pairs.cu": ("bcp_sample",),
    "chains.cu": ("bcc_lane_terms", "bcc_slot_terms", "bcc_frontier_terms"),
    "relabel.cu": ("bcr_relabel", "bcr_block_sums"),
    "arrays.cu": ("tba_fill_f64", "tba_put_f64", "tba_gather_f64", "tba_rows_inf",
                  "tba_add_rows_f64", "tba_add_entries_f64", "tba_outer_f64",
                  "tba_weighted_rows", "tba_far_select"),
}
"""Each source file and the ``__global__`` templates it defines."""

_VALUE_TEMPLATED = {"bc_sccsc", "bc_sccooc", "bc_vecsc"}

_POSITIONED = {"bc_sccsc", "bc_sccooc", "bc_vecsc", "degree_product_sum"}
"""Kernels with a position type beside the vertex type (``<I, P>``, after the value type)."""

_SAME_POSITION = {"bc_sccooc"}  # COOC keeps no pointers: its positions are its vertices' type

COOPERATIVE = {"sccsc.cu", "sccooc.cu", "vecsc.cu"}  # launched with all blocks resident

OPTIONS = ("--std=c++17", f"-I{KERNEL_DIR}")
"""NVRTC options (CuPy adds the architecture of the device; CI adds ``-arch=compute_90``)."""


def c_index_type(dtype) -> str:
    """C type of the template index parameter for a numpy index dtype (int32 or int64)."""
    import numpy as np

    dtype = np.dtype(dtype)
    if dtype == np.int32:
        return "int"
    if dtype == np.int64:
        return "long long"
    raise ValueError(f"index dtype must be int32 or int64; got {dtype}")


def instance_name(kernel: str, index_dtype, position_dtype=None, value: str = "double") -> str:
    """The name expression of ``kernel`` for numpy index types: vertices ``index_dtype`` and,
    for the kernels that take one, positions ``position_dtype`` (default: the same), e.g.
    ``instance_name("bc_vecsc", np.int32, np.int64) == "bc_vecsc<int, double, long long>"``."""
    args = [c_index_type(index_dtype)]
    if kernel in _VALUE_TEMPLATED:
        args.append(value)
    if kernel in _POSITIONED:
        args.append(c_index_type(index_dtype if position_dtype is None else position_dtype))
    return f"{kernel}<{', '.join(args)}>"


@functools.lru_cache(maxsize=None)
def name_expressions(filename: str) -> tuple[str, ...]:
    """Every template instantiation compiled from ``filename``, e.g.
    ``bc_sccsc<int, double, int>`` (computed once per file)."""
    names = []
    for kernel in SOURCES[filename]:
        pairs = ([(i, i) for i in INDEX_TYPES] if kernel not in _POSITIONED
                 or kernel in _SAME_POSITION else INDEX_PAIRS)
        for index, position in pairs:
            args = [index]
            if kernel in _VALUE_TEMPLATED:
                args.append("{value}")
            if kernel in _POSITIONED:
                args.append(position)
            template = f"{kernel}<{', '.join(args)}>"
            names.extend(template.format(value=value) for value in
                         (VALUE_TYPES if kernel in _VALUE_TEMPLATED else (None,)))
    return tuple(names)


def source_text(filename: str) -> str:
    """Text of one kernel source file."""
    return (KERNEL_DIR / filename).read_text()
