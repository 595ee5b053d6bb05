"""Where the run history lives: an argument, ``NBAGENTS_RUNS``, or the project's ``.nbagents``."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "NBAGENTS_RUNS"
"""A path to the store's SQLite file, or ``off`` to keep no history."""
STORE_DIR = ".nbagents"
STORE_FILE = "runs.sqlite"
_OFF = {"off", "0", "false", "no", "none", ""}

_switch: dict[str, bool | Path | None] = {"enabled": True, "path": None}


def keep_runs(enabled: bool = True, *, path: str | os.PathLike[str] | None = None) -> None:
    """Turn the run history on or off for this process, or point it at another file.

    ``keep_runs(False)`` stops saving runs; ``keep_runs(path="runs.sqlite")`` saves them there.
    ``nbagents.trace(store=...)`` still decides for one run.
    """
    _switch["enabled"] = bool(enabled)
    _switch["path"] = None if path is None else Path(path)


def project_root(start: Path | None = None) -> Path:
    """The nearest directory at or above ``start`` (the working directory) holding ``.git``;
    ``start`` itself when there is none."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here


def default_store_path() -> Path | None:
    """The store a run is saved to when no ``store=`` is given; ``None`` when history is off."""
    if not _switch["enabled"]:
        return None
    chosen = _switch["path"]
    if isinstance(chosen, Path):
        return chosen
    value = os.environ.get(ENV_VAR)
    if value is not None:
        return None if value.strip().lower() in _OFF else Path(value).expanduser()
    return project_root() / STORE_DIR / STORE_FILE
