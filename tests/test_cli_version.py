"""``nbagents --version``: the console script and ``python -m nbagents`` say which nbagents runs."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import nbagents

pytestmark = pytest.mark.install  # the console script installed next to this Python

# The console script pyproject declares, installed next to this interpreter.
SCRIPT = Path(sys.executable).parent / "nbagents"


@pytest.mark.parametrize(
    "command", [[str(SCRIPT)], [sys.executable, "-m", "nbagents"]], ids=["script", "module"]
)
def test_version_names_the_version_distribution_and_place(command: list[str]) -> None:
    done = subprocess.run(
        [*command, "--version"], capture_output=True, text=True, timeout=120, check=True
    )
    package = Path(nbagents.__file__).parent
    assert done.stdout == (
        f"nbagents {metadata.version('jupyter-nbagents')} (jupyter-nbagents) from {package}\n"
    )
