"""Whether the code runs in a Jupyter kernel: the one check every notebook-facing part uses."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["kernel_shell"]


def kernel_shell() -> Any:
    """The IPython shell when running in a kernel (which can show widgets), else None.

    Reads ``sys.modules`` rather than importing IPython: a script that never imported it is not
    in a kernel, and should not pay for the import.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell if getattr(shell, "kernel", None) is not None else None
