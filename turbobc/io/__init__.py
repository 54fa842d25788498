"""Graph file readers."""

from turbobc.io._readers import read_graph  # noqa: E402

__all__ = ["read_graph"]
