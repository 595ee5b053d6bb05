"""`make lab` and `make test` install their extras, EXTRAS adds more, pip runs once per set.

The venv's python is a stand-in that records what it is asked to do, so the real Makefile and
scripts/pip-install.sh run as a user's `make` would run them, without installing anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.install,  # runs make's install steps
    pytest.mark.skipif(shutil.which("make") is None, reason="needs make"),
]

STAND_IN = """#!/bin/sh
# `python -I -c ...` asks whether this clone is installed under its old name: it is not.
[ "$1" = "-I" ] && exit 1
echo "$@" >> "$(dirname "$0")/../calls"
"""


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(STAND_IN)
    python.chmod(0o755)
    return python.parent.parent


def make(venv: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("EXTRAS", "MAKEFLAGS")}
    done = subprocess.run(
        ["make", "--no-print-directory", *args, f"VENV={venv}", "PIP_PROGRESS_EVERY=60"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def pip_installs(venv: Path) -> list[str]:
    calls = (venv / "calls").read_text().splitlines() if (venv / "calls").exists() else []
    return [c.split()[-1] for c in calls if c.startswith("-m pip install")]


def test_extras_adds_to_the_lab_install(venv: Path) -> None:
    assert "installed -e .[lab,providers]" in make(venv, "install-lab", "EXTRAS=providers")
    assert pip_installs(venv) == [".[lab,providers]"]
    # The stamp is per set of extras: the same set is not installed twice, another one is.
    assert "already installed" in make(venv, "install-lab", "EXTRAS=providers")
    make(venv, "install-lab")
    assert pip_installs(venv) == [".[lab,providers]", ".[lab]"]


def test_extras_adds_to_the_test_install(venv: Path) -> None:
    make(venv, "install-test", "EXTRAS=providers,postgres")
    assert pip_installs(venv) == [".[test,docs,providers,postgres]"]


def test_the_readme_says_how_to_set_up_a_real_provider() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`make lab EXTRAS=providers`" in readme
    assert "`make lab EXTRAS=providers` installs `.[lab,providers]`" in readme
