"""The networkx backend (``networkx.backends`` entry point ``turbobc``)."""
