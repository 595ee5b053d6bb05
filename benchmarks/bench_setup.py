"""Time from a fresh clone to JupyterLab serving, the way a workshop's room sets up.

1. **Online**: ``git clone`` this repository (its HEAD: commit first) into a temporary folder and
   run ``make lab`` there (venv, uv from the package index into it, ``uv pip install -e .[lab]``,
   JupyterLab). The time is until the server's ``/api`` answers; then the server is stopped.
   ``--runs 2`` (the default) does it twice in two clones: the first run warms the package
   caches, the second is the figure a warm cache gives.
2. **Offline** (``--wheelhouse``, on by default): ``make wheelhouse`` in the first clone, then a
   third clone runs ``make lab WHEELHOUSE=…`` with the package index unreachable (the index URLs
   and the HTTP(S) proxies point at a closed port on loopback) and with empty uv and pip caches,
   as on a participant's laptop in a room with no network.

Prints the figures only; ``make lab``'s own output goes to a log in the temporary folder
(``--keep`` keeps it).

    python benchmarks/bench_setup.py [--runs 2] [--no-wheelhouse] [--python python3] [--keep]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens on loopback here
SERVING_TIMEOUT = 900.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def clone(into: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(into)], check=True)
    return into


def serving(port: int) -> bool:
    # no proxy for our own probe, whatever the environment says
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}/api", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def time_make_lab(
    where: Path, python: str, log: Path, env: dict[str, str] | None = None, *make_args: str
) -> tuple[float, str]:
    """Seconds from `make lab` to JupyterLab's /api answering, and make's output."""
    port = free_port()
    lab_args = f"--no-browser --port={port} --ServerApp.token= --ServerApp.password="
    start = time.perf_counter()
    with log.open("w") as out:
        make = subprocess.Popen(
            ["make", "--no-print-directory", "lab", f"PYTHON={python}", f"LAB_ARGS={lab_args}",
             *make_args],
            cwd=where,
            env=env or os.environ.copy(),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: JupyterLab stops with it
        )  # fmt: skip
        try:
            while not serving(port):
                if make.poll() is not None:
                    raise RuntimeError(f"make lab exited ({make.returncode}): see {log}")
                if time.perf_counter() - start > SERVING_TIMEOUT:
                    raise RuntimeError(f"JupyterLab did not answer in {SERVING_TIMEOUT} s")
                time.sleep(0.1)
            seconds = time.perf_counter() - start
        finally:
            if make.poll() is None:
                os.killpg(make.pid, signal.SIGTERM)
                try:
                    make.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(make.pid, signal.SIGKILL)
                    make.wait()
    return seconds, log.read_text()


def load() -> str:
    """The machine's load average over the last minute: the figures move with it."""
    return f"load {os.getloadavg()[0]:.1f}"


def installed_in(output: str) -> str:
    """What the installer said it took ("uv: installed -e .[lab] in 9 s")."""
    found = re.search(r"^(uv|pip): installed .* in (\d+) s$", output, re.MULTILINE)
    return f"{found.group(1)} {found.group(2)} s" if found else "no install line"


def offline_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.upper() not in ("NO_PROXY",)}
    env.update(
        PIP_INDEX_URL=f"{CLOSED}/simple",
        UV_INDEX_URL=f"{CLOSED}/simple",
        UV_DEFAULT_INDEX=f"{CLOSED}/simple",
        HTTP_PROXY=CLOSED,
        HTTPS_PROXY=CLOSED,
        ALL_PROXY=CLOSED,
        http_proxy=CLOSED,
        https_proxy=CLOSED,
        UV_CACHE_DIR=str(tmp / "empty-uv-cache"),
        PIP_CACHE_DIR=str(tmp / "empty-pip-cache"),
    )
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="online runs, each in a fresh clone")
    parser.add_argument("--no-wheelhouse", dest="wheelhouse", action="store_false")
    parser.add_argument("--python", default=os.environ.get("PYTHON", "python3"))
    parser.add_argument("--keep", action="store_true", help="keep the clones and logs")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="nbagents-bench-setup-"))
    version = subprocess.run(
        [args.python, "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    head = subprocess.run(
        ["git", "-C", str(REPO), "log", "-1", "--format=%h %s"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()[:72]  # fmt: skip
    print(f"fresh clones of {REPO.name} at {head}")
    print(f"{version}, {os.cpu_count()} CPUs; logs in {tmp}")
    try:
        first = None
        for run in range(1, args.runs + 1):
            where = clone(tmp / f"online-{run}")
            first = first or where
            seconds, output = time_make_lab(where, args.python, tmp / f"online-{run}.log")
            print(
                f"make lab, online, run {run}: {seconds:5.1f} s to serving "
                f"(install: {installed_in(output)}; {load()})",
                flush=True,
            )
        if args.wheelhouse:
            first = first or clone(tmp / "online-1")
            wheels = tmp / "wheels"
            start = time.perf_counter()
            made = subprocess.run(
                ["make", "--no-print-directory", "wheelhouse", f"PYTHON={args.python}",
                 f"WHEELHOUSE={wheels}"],
                cwd=first, capture_output=True, text=True, check=False,
            )  # fmt: skip
            if made.returncode:
                print(made.stdout + made.stderr, file=sys.stderr)
                return 1
            size = sum(p.stat().st_size for p in wheels.glob("*.whl")) / 1e6
            print(
                f"make wheelhouse: {time.perf_counter() - start:5.1f} s, "
                f"{len(list(wheels.glob('*.whl')))} wheels, {size:.0f} MB ({load()})",
                flush=True,
            )
            where = clone(tmp / "offline")
            seconds, output = time_make_lab(
                where, args.python, tmp / "offline.log", offline_env(tmp), f"WHEELHOUSE={wheels}"
            )
            print(
                f"make lab WHEELHOUSE=…, index unreachable, empty caches: {seconds:5.1f} s to "
                f"serving (install: {installed_in(output)}; {load()})"
            )
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
