"""turbobc: betweenness centrality on NVIDIA GPUs in the language of linear algebra.

>>> import turbobc
>>> bc = turbobc.bc(A)  # doctest: +SKIP

Importing turbobc does no GPU work; see :func:`show_config` for what was found.
"""

from turbobc import exceptions
from turbobc._api import bc, edge_bc, run_bc, run_edge_bc
from turbobc._config import show_config
from turbobc._dynamic import DynamicBC
from turbobc._topk import TopK, top_k
from turbobc.io import read_graph
from turbobc._tuning import tuning
from turbobc.datasets import load_ego_facebook
from turbobc._version import __version__

__all__ = ["DynamicBC", "bc", "edge_bc", "run_bc", "run_edge_bc", "top_k", "TopK", "exceptions",
           "load_ego_facebook", "read_graph", "show_config", "tuning", "__version__"]
