"""nbagents is installed as jupyter-nbagents, and warns when the other `nbagents` is installed."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import nbagents

# What pip writes for the unrelated PyPI project `nbagents` 0.1.1 (see docs/getting-started.md).
OTHER_METADATA = "Metadata-Version: 2.1\nName: nbagents\nVersion: 0.1.1\n"


def test_installed_under_our_name_with_the_packages_version() -> None:
    dist = metadata.distribution("jupyter-nbagents")
    assert dist.version == nbagents.__version__
    # pytest_nbagents: the pytest plugin, apart so that loading it does not import nbagents
    assert str(dist.read_text("top_level.txt")).split() == ["nbagents", "pytest_nbagents"]
    plugins = [e.value for e in dist.entry_points if e.group == "pytest11"]
    assert plugins == ["pytest_nbagents"]


def import_warnings(extra_path: Path) -> str:
    """stderr of a fresh ``import nbagents`` with ``extra_path`` first on ``sys.path``."""
    env = {**os.environ, "PYTHONPATH": str(extra_path)}
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", "import nbagents"],
        cwd=extra_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stderr


@pytest.mark.parametrize("installed", [True, False], ids=["installed", "egg-info-left-by-a-build"])
@pytest.mark.slow  # a fresh Python process per case
def test_import_warns_when_another_nbagents_is_installed(tmp_path: Path, installed: bool) -> None:
    if installed:
        info = tmp_path / "nbagents-0.1.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(OTHER_METADATA)
        (info / "RECORD").write_text("nbagents/__init__.py,,\nnbagents/nbagents.py,,\n")
    else:
        info = tmp_path / "nbagents.egg-info"
        info.mkdir()
        (info / "PKG-INFO").write_text(OTHER_METADATA.replace("0.1.1", "0.1.0"))
    stderr = import_warnings(tmp_path)
    if installed:
        assert "Another distribution named 'nbagents' (0.1.1" in stderr
        assert "`pip uninstall nbagents`" in stderr
        assert "pip install --force-reinstall --no-deps jupyter-nbagents" in stderr
    else:
        assert "Warning" not in stderr, stderr
