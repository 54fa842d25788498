"""``python -m turbobc.cli``: the ``turbobc`` command."""

import sys

from turbobc.cli import main

sys.exit(main())
