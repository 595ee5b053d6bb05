"""For every test and every notebook nbval runs: runs are saved to a throwaway history, never to
the repository's ``.nbagents`` (kernels started by nbval inherit the environment)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_FOLDER = Path(tempfile.mkdtemp(prefix="nbagents-test-runs-"))


def pytest_configure(config: pytest.Config) -> None:
    os.environ["NBAGENTS_RUNS"] = str(_FOLDER / "runs.sqlite")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_FOLDER, ignore_errors=True)
