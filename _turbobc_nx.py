"""networkx's ``backend_info`` entry point for turbobc.

networkx calls :func:`backend_info` while it is imported, so this module is top-level and
imports nothing (not even turbobc): registering the backend costs ``import networkx`` nothing.
The backend itself is ``turbobc.nx._backend.BackendInterface``; :data:`FUNCTIONS` is the
list of what it implements.
"""

__all__ = ["FUNCTIONS", "backend_info"]

FUNCTIONS = {
    "betweenness_centrality":
        "Unweighted or weighted (positive weights as edge lengths; a multigraph's pair "
        "weighs its lightest parallel edge), exact or sampled with k: the same numbers and "
        "sampled sources as networkx. Zero or negative weights and weight functions are "
        "declined.",
    "betweenness_centrality_subset":
        "Unweighted or weighted (positive weights), any sources and targets: the same "
        "numbers as networkx (a repeated source counts once per listing). Zero or negative "
        "weights and weight functions are declined.",
    "edge_betweenness_centrality":
        "Unweighted or weighted (positive weights), exact or sampled with k, on the CPU "
        "engine; a multigraph's edges keyed (u, v, key) as networkx keys them. Zero or "
        "negative weights and weight functions are declined.",
    "edge_betweenness_centrality_subset":
        "Unweighted or weighted (positive weights), any sources and targets, on the CPU "
        "engine; multigraph edges keyed as networkx keys them. Zero or negative weights "
        "and weight functions are declined.",
}
"""The functions the backend implements, with what networkx shows about each: the one list.
``turbobc.nx._backend.implements`` refuses a function not named here, and the backend does
not import if one named here is not implemented."""

_EXTRA_PARAMETERS = {
    'engine : {"auto", "gpu", "cpu", "graphblas"}, default "auto"':
        "turbobc engine: the GPU when CuPy sees one, else the CPU (cpu, compiled with "
        "numba); graphblas is the python-graphblas reference.",
    'kernel : {"auto", "sccsc", "sccooc", "vecsc"}, default "auto"':
        "GPU SpMV kernel; auto chooses by the scf metric.",
    "progress : bool, default False": "Show a progress bar (sources done, time left).",
}


def _parameters(name: str) -> dict:
    """The extra parameters of one function (edge BC runs on the CPU: no GPU kernel)."""
    if name.startswith("edge_"):
        return {key: doc for key, doc in _EXTRA_PARAMETERS.items()
                if not key.startswith("kernel")}
    return _EXTRA_PARAMETERS


def backend_info() -> dict:
    """What networkx shows about this backend (``networkx.backend_info`` entry point)."""
    return {
        "backend_name": "turbobc",
        "project": "turbobc",
        "package": "turbobc",
        "url": "https://github.com/turbobc/turbobc",
        "short_summary": "Betweenness centrality on NVIDIA GPUs (CuPy) or the CPU "
                         "(compiled with numba; python-graphblas as the reference).",
        "default_config": {},
        "functions": {name: {"additional_docs": docs,
                             "additional_parameters": _parameters(name)}
                      for name, docs in FUNCTIONS.items()},
    }
