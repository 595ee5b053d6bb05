"""`make lab` and `make test` install their extras with uv (pip where uv cannot be had), EXTRAS
adds more, the installer runs once per set, WHEELHOUSE installs from a folder with no index.

The venv's python is a stand-in that records what it is asked to do (and "installs" a stand-in
uv that records too), so the real Makefile and scripts/pip-install.sh run as a user's `make`
would run them, without installing anything.
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
bin="$(dirname "$0")"
echo "python $@" >> "$bin/../calls"
case "$*" in
    *" install "*" uv")
        [ -n "$NO_UV" ] && { echo "ERROR: No matching distribution found for uv"; exit 1; }
        cp "$bin/../uv-stand-in" "$bin/uv" && chmod +x "$bin/uv";;
esac
"""

UV_STAND_IN = """#!/bin/sh
echo "uv $@" >> "$(dirname "$0")/../calls"
# a cold cache: uv --offline cannot resolve
case "$*" in *--offline*) [ -n "$COLD" ] && exit 1;; esac
exit 0
"""


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(STAND_IN)
    python.chmod(0o755)
    (python.parent.parent / "uv-stand-in").write_text(UV_STAND_IN)
    return python.parent.parent


def make(venv: Path, *args: str, **more_env: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("EXTRAS", "MAKEFLAGS", "WHEELHOUSE")}
    env.update(more_env)
    done = subprocess.run(
        # PYTHON, the interpreter that made the venv, installs uv into it with its pip
        [
            "make",
            "--no-print-directory",
            *args,
            f"VENV={venv}",
            f"PYTHON={venv}/bin/python",
            "PIP_PROGRESS_EVERY=60",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def calls(venv: Path) -> list[str]:
    return (venv / "calls").read_text().splitlines() if (venv / "calls").exists() else []


def installs(venv: Path) -> list[str]:
    """Each install of the project: "uv .[extras]", "uv --offline .[extras]" or "pip .[extras]"."""
    done = []
    for call in calls(venv):
        words = call.split()
        if "install" in words and "-e" in words:
            offline = " --offline" if "--offline" in words else ""
            done.append(
                f"{'uv' if words[0] == 'uv' else 'pip'}{offline} {words[words.index('-e') + 1]}"
            )
    return done


def test_extras_adds_to_the_lab_install(venv: Path) -> None:
    assert "installed -e .[lab,providers]" in make(venv, "install-lab", "EXTRAS=providers")
    assert installs(venv) == ["uv --offline .[lab,providers]"]
    # The stamp is per set of extras: the same set is not installed twice, another one is.
    assert "already installed" in make(venv, "install-lab", "EXTRAS=providers")
    make(venv, "install-lab")
    assert installs(venv) == ["uv --offline .[lab,providers]", "uv --offline .[lab]"]
    # uv came from the package index into the venv, once, by the interpreter that made the venv
    (uv_itself,) = [c for c in calls(venv) if c.endswith(" uv")]
    assert uv_itself.startswith(f"python -m pip --python {venv}/bin/python")


def test_extras_adds_to_the_test_install(venv: Path) -> None:
    make(venv, "install-test", "EXTRAS=providers,postgres")
    assert installs(venv) == ["uv --offline .[test,docs,providers,postgres]"]


def test_uv_installs_into_the_venv_it_is_given_and_pip_too(venv: Path) -> None:
    make(venv, "install-lab")
    (install,) = [c for c in calls(venv) if c.startswith("uv ")]
    assert f"pip install --python {venv}/bin/python --offline -e .[lab] pip" in install


def test_what_the_cache_lacks_comes_from_the_index(venv: Path) -> None:
    make(venv, "install-lab", COLD="1")
    assert installs(venv) == ["uv --offline .[lab]", "uv .[lab]"]
    assert "not all in uv's cache" in (venv / "pip-lab.log").read_text()


def test_offline_first_can_be_turned_off(venv: Path) -> None:
    make(venv, "install-lab", NBAGENTS_OFFLINE_FIRST="0")
    assert installs(venv) == ["uv .[lab]"]


def test_pip_installs_where_uv_cannot_be_had(venv: Path) -> None:
    out = make(venv, "install-lab", NO_UV="1")
    assert "uv is not to be had" in out
    assert "No matching distribution found for uv" in out
    assert "pip: installed -e .[lab]" in out
    assert installs(venv) == ["pip .[lab]"]


def test_the_wheelhouse_is_the_only_source(venv: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    assert f"from {wheels}" in make(venv, "install-lab", f"WHEELHOUSE={wheels}")
    uv_itself, project = (c for c in calls(venv) if "install" in c.split())
    assert f"--no-index --find-links {wheels} uv" in uv_itself
    # no --offline: the wheelhouse is the only source already
    assert f"--no-index --find-links {wheels} -e .[lab]" in project


def test_a_missing_wheelhouse_is_an_error(venv: Path, tmp_path: Path) -> None:
    with pytest.raises(subprocess.CalledProcessError) as failed:
        make(venv, "install-lab", f"WHEELHOUSE={tmp_path / 'nowhere'}")
    assert "is not a folder" in failed.value.stderr
    assert installs(venv) == []


def test_the_readme_says_how_to_set_up_a_real_provider() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`make lab EXTRAS=providers`" in readme
    assert "`make lab EXTRAS=providers` installs `.[lab,providers]`" in readme


def test_a_wheelhouse_may_be_served(venv: Path) -> None:
    make(venv, "install-lab", "WHEELHOUSE=http://10.0.0.2:8000/")
    uv_itself, project = (c for c in calls(venv) if "install" in c.split())
    assert "--no-index --find-links http://10.0.0.2:8000/ uv" in uv_itself
    assert "--no-index --find-links http://10.0.0.2:8000/ -e .[lab]" in project
