"""`make wheelhouse`, then `make lab WHEELHOUSE=…` installs from it with the index unreachable.

The wheelhouse is made from the package index (or the caches) for this interpreter; the install
then runs with the index URLs and the HTTP(S) proxies pointing at a closed port on loopback and
with empty uv and pip caches, as on a laptop in a room with no network. Marked `install`: it
downloads (or copies from the caches) about 170 MB and installs a whole lab venv.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens on loopback here

pytestmark = [
    pytest.mark.install,
    pytest.mark.skipif(shutil.which("make") is None, reason="needs make"),
]


def make(*args: str, env: dict[str, str], timeout: int) -> str:
    done = subprocess.run(
        ["make", "--no-print-directory", *args, f"PYTHON={sys._base_executable}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_lab_venv_installs_from_the_wheelhouse_with_no_index(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("EXTRAS", "MAKEFLAGS", "WHEELHOUSE")}
    wheels = tmp_path / "wheels"
    made = make("wheelhouse", f"VENV={tmp_path / 'maker'}", f"WHEELHOUSE={wheels}", env=env,
                timeout=900)  # fmt: skip
    assert f"install with: make lab WHEELHOUSE={wheels}" in made
    names = {p.name.split("-")[0].lower() for p in wheels.glob("*.whl")}
    assert {"jupyterlab", "langgraph", "uv", "pip", "setuptools", "jupyter_nbagents"} <= names

    offline = {k: v for k, v in env.items() if k.upper() != "NO_PROXY"}
    offline.update(
        PIP_INDEX_URL=f"{CLOSED}/simple",
        PIP_EXTRA_INDEX_URL="",
        PIP_FIND_LINKS="",
        UV_INDEX_URL=f"{CLOSED}/simple",
        UV_DEFAULT_INDEX=f"{CLOSED}/simple",
        HTTP_PROXY=CLOSED,
        HTTPS_PROXY=CLOSED,
        ALL_PROXY=CLOSED,
        http_proxy=CLOSED,
        https_proxy=CLOSED,
        UV_CACHE_DIR=str(tmp_path / "empty-uv-cache"),
        PIP_CACHE_DIR=str(tmp_path / "empty-pip-cache"),
    )
    venv = tmp_path / "room"
    out = make("install-lab", f"VENV={venv}", f"WHEELHOUSE={wheels}", env=offline, timeout=600)
    assert f"uv: installing -e .[lab] into {venv} from {wheels}" in out
    assert "uv: installed -e .[lab]" in out

    checked = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import nbagents, jupyterlab, deepagents, langgraph_sdk, pip; print(nbagents.__file__)"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    assert checked.stdout.strip() == str(REPO / "nbagents" / "__init__.py")
    lab = subprocess.run(
        [str(venv / "bin" / "jupyter"), "lab", "--version"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    assert lab.stdout.strip()
