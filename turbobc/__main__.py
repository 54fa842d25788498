"""``python -m turbobc``: the ``turbobc`` command (see turbobc.cli)."""

from turbobc.cli import main

raise SystemExit(main())
