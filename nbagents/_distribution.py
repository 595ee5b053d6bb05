"""Which distribution this is, and the unrelated one that shares its import name.

nbagents is published as ``jupyter-nbagents``: ``nbagents`` on PyPI is another project, which
also installs a top-level ``nbagents`` package. Installed side by side, the last one installed
overwrites the other's ``nbagents/__init__.py``, and uninstalling either deletes that file for
both (an editable install of nbagents is shadowed by the other one whatever the order).
"""

from __future__ import annotations

import warnings
from importlib import metadata

__version__ = "0.1.0"
"""The one place the version is written: pyproject.toml reads it from here, ``nbagents`` re-exports
it. A leaf module, so that any layer can name the version without importing the package root."""
DISTRIBUTION = "jupyter-nbagents"
"""The name nbagents is installed and published under."""
OTHER_DISTRIBUTION = "nbagents"
"""The unrelated PyPI project with the same import name, and this project's name before."""


def warn_about_other_distribution() -> None:
    """Warn when a distribution named ``nbagents`` is installed beside this one.

    When this code runs, this package's ``__init__`` is the one on disk, so the other package
    was installed first and still owns files here: uninstalling it later breaks nbagents.
    """
    for dist in metadata.distributions(name=OTHER_DISTRIBUTION):
        # Installers always write RECORD; an ``nbagents.egg-info`` that an old build of this
        # project left in a clone has none and installs nothing.
        if dist.read_text("RECORD") is None:
            continue
        warnings.warn(
            f"Another distribution named {OTHER_DISTRIBUTION!r} ({dist.version}, in "
            f"{dist.locate_file('')}) is installed beside {DISTRIBUTION}: an unrelated PyPI "
            f"project, or nbagents installed under its old name. Both install the "
            f"`nbagents` package, so each overwrites and deletes the other's files. Fix: "
            f"`pip uninstall {OTHER_DISTRIBUTION}`, then `pip install --force-reinstall "
            f"--no-deps {DISTRIBUTION}` (or `pip install -e .` in a clone) to restore the "
            f"files the uninstall removes.",
            stacklevel=2,
        )
        return
