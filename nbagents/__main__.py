"""``python -m nbagents``: the ``nbagents`` command."""

from nbagents._cli import main

raise SystemExit(main())
