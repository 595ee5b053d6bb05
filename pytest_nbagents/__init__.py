"""nbagents' pytest plugin: notebooks with traces in their outputs pass nbval in CI.

Registered through the ``pytest11`` entry point, so installing nbagents installs it; it does
nothing until a project turns it on, with one line of pytest configuration::

    [tool.pytest.ini_options]
    nbagents_ci = true

(or ``--nbagents-ci`` on the command line). Then, for the session:

- nbval compares outputs with nbagents' sanitize rules applied first (:mod:`._rules`): times,
  timeline bars, costs, ids and the live view's snapshot are masked; the project's own
  ``--nbval-sanitize-with`` file still applies after them;
- traced runs go to a throwaway history (``NBAGENTS_RUNS``), never into the repository;
- cassettes only replay (``NBAGENTS_CASSETTE_MODE=replay``): a request the cassette lacks fails
  and is named, instead of reaching a provider with whatever key CI has.

An environment variable the user set already is left as it is. This module imports nothing
from nbagents, since pytest loads it in every session of the environment.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_nbagents._rules import RULES, Rule, sanitize, sanitize_file_text

__all__ = ["RULES", "Rule", "sanitize", "sanitize_file_text"]

OPTION = "--nbagents-ci"
INI = "nbagents_ci"
RUNS_ENV = "NBAGENTS_RUNS"
CASSETTE_ENV = "NBAGENTS_CASSETTE_MODE"


@dataclass
class _Session:
    folder: Path
    sanitize_file: Path | None = None
    previous_env: dict[str, str | None] = field(default_factory=dict)


_KEY = pytest.StashKey[_Session]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nbagents", "nbagents: agent notebooks in CI")
    group.addoption(
        OPTION,
        action="store_true",
        default=False,
        help="stable nbagents trace outputs under nbval, runs kept out of the repository, "
        "cassettes replayed only (also: nbagents_ci = true in the ini file)",
    )
    parser.addini(INI, type="bool", default=False, help=f"the same as {OPTION}")


def enabled(config: pytest.Config) -> bool:
    return bool(config.getoption(OPTION) or config.getini(INI))


@pytest.hookimpl(trylast=True)  # after nbval's own pytest_configure has read its options
def pytest_configure(config: pytest.Config) -> None:
    if not enabled(config):
        return
    session = _Session(Path(tempfile.mkdtemp(prefix="nbagents-ci-")))
    config.stash[_KEY] = session
    for name, value in ((RUNS_ENV, str(session.folder / "runs.sqlite")), (CASSETTE_ENV, "replay")):
        session.previous_env[name] = os.environ.get(name)
        # Kernels nbval starts inherit the environment, so this reaches the notebooks too.
        os.environ.setdefault(name, value)
    if hasattr(config.option, "nbval_sanitize_with"):
        session.sanitize_file = _combined_rules(config, session.folder)
        config.option.nbval_sanitize_with = str(session.sanitize_file)


def _combined_rules(config: pytest.Config, folder: Path) -> Path:
    """nbval reads one sanitize file: nbagents' rules first, then the project's own."""
    text = sanitize_file_text()
    own = config.option.nbval_sanitize_with
    if own:
        path = Path(own)
        if not path.is_file():
            raise pytest.UsageError(f"--nbval-sanitize-with: no file at {path}.")
        text += f"\n# The project's own rules, from {path}\n" + path.read_text(encoding="utf-8")
    combined = folder / "sanitize.cfg"
    combined.write_text(text, encoding="utf-8")
    return combined


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_KEY, None)
    if session is None:
        return
    for name, value in session.previous_env.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    shutil.rmtree(session.folder, ignore_errors=True)


def pytest_report_header(config: pytest.Config) -> list[str]:
    session = config.stash.get(_KEY, None)
    if session is None:
        return []
    masked = (
        f"{len(RULES)} nbval sanitize rules for trace outputs"
        if session.sanitize_file
        else "nbval is not installed, so no outputs are compared"
    )
    return [
        f"nbagents CI: {masked}; runs kept in {os.environ.get(RUNS_ENV)}; "
        f"cassettes: {os.environ.get(CASSETTE_ENV)}"
    ]
