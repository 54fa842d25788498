"""``python -m turbobc``: the ``turbobc`` command (see turbobc.cli)."""

from .cli import main

raise SystemExit(main())
