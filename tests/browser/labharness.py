"""Harness for the browser tests: headless JupyterLab driven by Debian's Chromium via Playwright.

Fixtures (made visible to pytest by ``conftest.py``):

``lab_server``
    module scope: JupyterLab on a free loopback port with a random token, serving a temporary copy
    of ``notebooks/``; always stopped, kernels included, even when a test fails.
``browser``
    module scope: Debian's Chromium launched by Playwright through ``executable_path`` (Playwright
    cannot download a browser here).
``lab``
    function scope: a :class:`LabPage`, a fresh browser page plus the helpers the tests share:
    ``open_notebook``, ``run_all``, ``wait_for_running``, ``wait_for_idle``, ``wait_for_selector``,
    ``outputs``, ``screenshot``.

Outside CI a missing Chromium (or Playwright) skips these tests with the reason; with ``CI`` set it
fails them instead, so CI can never pass by skipping. Every wait has a bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = Path(os.environ.get("NBAGENTS_TEST_ARTIFACTS", REPO / "test-artifacts"))

CHROMIUM = os.environ.get("NBAGENTS_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium keeps trying hosts this machine cannot reach.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")

SERVER_START_TIMEOUT_S = 90.0
SERVER_STOP_TIMEOUT_S = 20.0
UI_TIMEOUT_MS = 60_000  # opening a notebook, starting a kernel
RUN_TIMEOUT_MS = 90_000  # running all cells of a notebook
IDLE_POLL_MS = 100
"""How often a wait for an idle kernel looks. Playwright's default looks at every frame, which
kept the page drawing 60 frames a second (about a tenth of a core here) for as long as a cell
ran, on the cores the kernel runs on."""
CURRENT_NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"
PROMPTS = f"{CURRENT_NOTEBOOK} .jp-CodeCell .jp-InputPrompt"

# Sets window.__nbagentsSawBusy once any input prompt of the current notebook shows "[*]".
_WATCH_FOR_BUSY = """sel => {
    if (window.__nbagentsBusyObserver) window.__nbagentsBusyObserver.disconnect();
    window.__nbagentsSawBusy = false;
    const check = () => {
        if ([...document.querySelectorAll(sel)].some(p => p.textContent.includes('[*]'))) {
            window.__nbagentsSawBusy = true;
        }
    };
    window.__nbagentsBusyObserver = new MutationObserver(check);
    window.__nbagentsBusyObserver.observe(
        document.body, {subtree: true, childList: true, characterData: true});
}"""


def unavailable(reason: str) -> None:
    """Skip outside CI; fail in CI, where a missing browser is a broken set-up, not a pass."""
    if IN_CI:
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:120]


# --------------------------------------------------------------------------------------------------
# JupyterLab server
# --------------------------------------------------------------------------------------------------


@dataclass
class LabServer:
    base_url: str
    token: str
    root_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes]

    def url(self, path: str = "lab") -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}/{path.lstrip('/')}{sep}token={self.token}"

    def api(self, method: str, path: str, timeout: float = 10.0) -> Any:
        req = urllib.request.Request(
            self.url(f"api/{path}"), method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no server log)"
        return "\n".join(text.splitlines()[-lines:])

    def add_notebook(self, name: str, cells: list[str]) -> str:
        """Write a notebook of code cells into the served directory; return its path there."""
        nb = {
            "cells": [
                {
                    "cell_type": "code",
                    "id": f"cell-{i}",
                    "execution_count": None,
                    "metadata": {},
                    "outputs": [],
                    "source": src,
                }
                for i, src in enumerate(cells)
            ],
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        (self.root_dir / name).write_text(json.dumps(nb, indent=1))
        return name

    def add_saved_output(self, name: str, html: str, text: str = "<Trace>") -> str:
        """Write a notebook whose one cell holds ``html`` as a saved output, unsigned: JupyterLab
        treats its outputs as untrusted, as when someone opens a notebook they did not run."""
        nb = {
            "cells": [
                {
                    "cell_type": "code",
                    "id": "saved",
                    "execution_count": 1,
                    "metadata": {},
                    "outputs": [
                        {
                            "output_type": "display_data",
                            "metadata": {},
                            "data": {"text/html": html, "text/plain": text},
                        }
                    ],
                    "source": "t",
                }
            ],
            "metadata": {"kernelspec": {"display_name": "Python 3", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        (self.root_dir / name).write_text(json.dumps(nb))
        return name


def _wait_until_ready(server: LabServer) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            code = server.process.returncode
            raise RuntimeError(f"JupyterLab exited early with code {code}:\n{server.log_tail()}")
        try:
            server.api("GET", "status", timeout=2.0)
            return
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last_error = exc
            time.sleep(0.25)
    raise TimeoutError(
        f"JupyterLab did not answer within {SERVER_START_TIMEOUT_S:.0f} s ({last_error}):\n"
        f"{server.log_tail()}"
    )


def _stop(server: LabServer) -> None:
    """Shut kernels down, then the server; escalate to SIGTERM/SIGKILL of its process group."""
    proc = server.process
    if proc.poll() is None:
        with contextlib.suppress(Exception):
            for kernel in server.api("GET", "kernels", timeout=5.0) or []:
                with contextlib.suppress(Exception):
                    server.api("DELETE", f"kernels/{kernel['id']}", timeout=10.0)
        with contextlib.suppress(Exception):
            server.api("POST", "shutdown", timeout=5.0)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=SERVER_STOP_TIMEOUT_S / 2)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=SERVER_STOP_TIMEOUT_S / 2)


@contextlib.contextmanager
def running_lab(base: Path, notebooks: Path | None = NOTEBOOKS) -> Iterator[LabServer]:
    """JupyterLab on a free loopback port with a random token, serving ``base/root`` (a copy of
    ``notebooks`` when given); stopped on exit, kernels included."""
    root = base / "root"
    if notebooks is not None and notebooks.is_dir():
        shutil.copytree(notebooks, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    else:
        root.mkdir(parents=True)
    # Private config, runtime and workspace dirs: no user settings, layouts or news prompts leak in.
    config_dir = base / "config"
    (config_dir / "labconfig").mkdir(parents=True)
    (config_dir / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config_dir),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        # Its own notebook signatures: which notebooks are trusted is the test's to say.
        "JUPYTER_DATA_DIR": str(base / "data"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONUNBUFFERED": "1",
    }
    token = secrets.token_hex(24)
    port = _free_loopback_port()
    log_path = base / "jupyterlab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
        f"--LabApp.user_settings_dir={base / 'settings'}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if os.geteuid() == 0:  # CI containers run as root
        cmd.append("--allow-root")
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=root,
            start_new_session=True,  # its own process group, so teardown can stop all of it
        )
    server = LabServer(f"http://127.0.0.1:{port}", token, root, log_path, proc)
    try:
        _wait_until_ready(server)
        yield server
    finally:
        _stop(server)


@pytest.fixture(scope="module")
def lab_server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[LabServer]:
    server: LabServer | None = None
    try:
        with running_lab(tmp_path_factory.mktemp("jupyterlab")) as server:
            yield server
    finally:
        if server is not None:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):
                shutil.copy(
                    server.log_path, ARTIFACTS / f"jupyterlab--{_slug(request.module.__name__)}.log"
                )


# --------------------------------------------------------------------------------------------------
# Browser
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        unavailable(
            f"Chromium not found at {CHROMIUM}: install Debian's package "
            "(`apt-get install chromium`; `make test` does it) or set NBAGENTS_CHROMIUM"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is missing: pip install -e '.[test]'")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, timeout=UI_TIMEOUT_MS
        )
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class LabPage:
    """One browser page on the JupyterLab server, with the helpers the tests share."""

    page: Any
    server: LabServer
    name: str
    console: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    # -- navigation --------------------------------------------------------------------------
    def open_notebook(self, path: str) -> None:
        """Open ``path`` (relative to the served root) and wait until its kernel is idle.

        Each page gets a workspace of its own: the default one would restore the notebooks an
        earlier test of the module left open, and "Run All" could then run one of those.
        """
        workspace = f"t-{secrets.token_hex(6)}"
        self.page.goto(
            self.server.url(f"lab/workspaces/{workspace}/tree/{path}"), timeout=UI_TIMEOUT_MS
        )
        self.wait_for_selector(f"{CURRENT_NOTEBOOK} .jp-Notebook .jp-Cell", timeout=UI_TIMEOUT_MS)
        self.wait_for_kernel_idle(timeout=UI_TIMEOUT_MS)

    def wait_for_kernel_idle(self, timeout: float = UI_TIMEOUT_MS) -> None:
        """Wait until the status bar says the kernel is connected and idle.

        (The notebook toolbar's execution indicator reads "idle" before the kernel even connects,
        so it cannot be trusted here.)
        """
        self.page.wait_for_function(
            """() => [...document.querySelectorAll(
                        '.jp-StatusBar-TextItem[title^="Change kernel"]')]
                      .some(e => /\\|\\s*Idle\\s*$/.test(e.textContent))""",
            timeout=timeout,
            polling=IDLE_POLL_MS,
        )

    # -- running -----------------------------------------------------------------------------
    def run_all(self, *, wait: bool = True, timeout: float = RUN_TIMEOUT_MS) -> None:
        """Run → Run All Cells through the menu bar; by default wait for every cell to finish.

        Committed notebooks already show execution numbers, so "finished" is only trusted after a
        MutationObserver has seen a cell go busy (``[*]``) since the click; a click that started
        nothing (the UI was not ready yet) is retried once.
        """
        for attempt in (1, 2):
            self.page.evaluate(_WATCH_FOR_BUSY, PROMPTS)
            self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
            self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
            try:
                self.page.wait_for_function(
                    "() => window.__nbagentsSawBusy === true", timeout=15_000
                )
                break
            except Exception:
                if attempt == 2:
                    raise
                self.page.keyboard.press("Escape")
        if wait:
            self.wait_for_idle(timeout=timeout)

    def wait_for_running(self, timeout: float = UI_TIMEOUT_MS) -> None:
        """Wait until some code cell of the current notebook shows the ``[*]`` busy prompt."""
        self.page.wait_for_function(
            "sel => [...document.querySelectorAll(sel)].some(p => p.textContent.includes('[*]'))",
            arg=PROMPTS,
            timeout=timeout,
        )

    def wait_for_idle(self, timeout: float = RUN_TIMEOUT_MS) -> None:
        """Wait until every code cell of the current notebook has an execution number."""
        self.page.wait_for_function(
            """sel => {
                const prompts = [...document.querySelectorAll(sel)];
                return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
            }""",
            arg=PROMPTS,
            timeout=timeout,
            polling=IDLE_POLL_MS,
        )

    # -- looking -----------------------------------------------------------------------------
    def wait_for_selector(
        self, selector: str, *, timeout: float = UI_TIMEOUT_MS, state: str = "visible"
    ) -> Any:
        return self.page.wait_for_selector(selector, timeout=timeout, state=state)

    def outputs(self, cell_index: int) -> Any:
        """Locator for the outputs of the ``cell_index``-th cell (0-based) of the open notebook."""
        cells = self.page.locator(f"{CURRENT_NOTEBOOK} .jp-Notebook .jp-Cell")
        return cells.nth(cell_index).locator(".jp-OutputArea-output")

    def save(self) -> None:
        """Save the open notebook and wait until the save is over: Jupyter Server's GET of a
        notebook it is still writing can fail (400) or restore the write's temporary file."""
        self.page.keyboard.press("Control+s")
        self.page.wait_for_function(
            "() => !document.querySelector('.lm-TabBar-tab.lm-mod-current.jp-mod-dirty')",
            timeout=30_000,
        )

    def screenshot(self, label: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{_slug(self.name)}--{_slug(label)}.png"
        self.page.screenshot(path=str(path), full_page=True, timeout=UI_TIMEOUT_MS)
        return path


@pytest.fixture
def lab(browser: Any, lab_server: LabServer, request: pytest.FixtureRequest) -> Iterator[LabPage]:
    # Failure screenshots need each phase's report on the item; register the hook here too, so
    # test modules outside tests/browser that import these fixtures (no conftest) get them as well.
    plugins = request.config.pluginmanager
    if not plugins.has_plugin(_REPORTS_PLUGIN):
        plugins.register(_Reports(), _REPORTS_PLUGIN)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(UI_TIMEOUT_MS)
    page = context.new_page()
    helper = LabPage(page, lab_server, request.node.name)
    page.on("console", lambda msg: helper.console.append(f"{msg.type}: {msg.text}"))
    page.on("pageerror", lambda exc: helper.console.append(f"pageerror: {exc}"))

    def on_dialog(dialog: Any) -> None:
        helper.dialogs.append(f"{dialog.type}: {dialog.message}")
        with contextlib.suppress(Exception):
            dialog.dismiss()

    page.on("dialog", on_dialog)
    try:
        yield helper
    finally:
        failed = getattr(request.node, "rep_call", None)
        if failed is not None and failed.failed:
            with contextlib.suppress(Exception):
                helper.screenshot("failure")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            (ARTIFACTS / f"{_slug(helper.name)}--console.txt").write_text("\n".join(helper.console))
        context.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the item (``item.rep_call``) for the ``lab`` fixture."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


_REPORTS_PLUGIN = "nbagents-labharness-reports"


class _Reports:
    pytest_runtest_makereport = staticmethod(pytest_runtest_makereport)
