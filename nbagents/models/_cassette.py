"""The cassette file: recorded model responses keyed by request, as versioned JSON, read
safely, merged across concurrent writes (what to record is ``replay``'s business)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nbagents._versioned import VersionedJSON

__all__ = [
    "CASSETTE_FORMAT",
    "CASSETTE_VERSION",
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMissError",
]

CASSETTE_FORMAT = "nbagents-cassette"
CASSETTE_VERSION = 1
"""The cassette format this module writes and the newest it reads."""


class CassetteError(Exception):
    """Base class of the errors about cassettes."""


class CassetteFormatError(CassetteError, ValueError):
    """A cassette file that cannot be read: not JSON, not a cassette, or from a newer version."""


_FILE = VersionedJSON(
    format=CASSETTE_FORMAT,
    version=CASSETTE_VERSION,
    error=CassetteFormatError,
    not_json=(
        "{where} is not valid JSON ({error.msg} at line {error.lineno}, column {error.colno}); "
        "it may have been cut short or merged badly. Fix it, or delete it and record again."
    ),
    not_ours='{where} is not an nbagents cassette (it has no "format": "{format}").',
    bad_version="{where} has an invalid cassette version: {version!r}.",
    too_new=(
        "{where} was written by a newer nbagents (cassette format {version}; this version "
        "reads up to {current}). Upgrade nbagents, or record the cassette again."
    ),
)


class CassetteMissError(CassetteError, LookupError):
    """A request that the cassette has no response for, in a mode that cannot record it."""

    def __init__(self, message: str, *, key: str, agent: str, path: Path) -> None:
        super().__init__(message)
        self.key, self.agent, self.path = key, agent, path


@dataclass
class _FileState:
    """What every Cassette on one file shares within the process."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    misses: list[tuple[str, str]] = field(default_factory=list)
    """(agent, key) of each request replay could not answer, first first."""


_files: dict[str, _FileState] = {}
_files_guard = threading.Lock()


class Cassette:
    """A JSON file of recorded model responses, keyed by request.

    Safe to share between threads: every write re-reads the file, merges, and replaces it
    atomically, so parallel sub-agents and several models may record into one cassette. The file
    is written with sorted keys so that re-recording an unchanged run leaves it unchanged.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.note: str | None = None
        # One lock per file, so that several wrapped models (a main model and a sub-agent's)
        # recording into one file do not overwrite each other's entries; and one list of misses,
        # so that the main agent's miss can point at the sub-agent's miss that caused it.
        with _files_guard:
            self._state = _files.setdefault(str(self.path.resolve()), _FileState())
        self._lock = self._state.lock
        self._interactions: dict[str, dict[str, Any]] = {}
        with self._lock:
            self._reload()

    @property
    def exists(self) -> bool:
        return self.path.exists()

    def __len__(self) -> int:
        return len(self._interactions)

    def interaction(self, key: str) -> Mapping[str, Any] | None:
        """The recorded request summary and response for ``key``, if any."""
        found = self._interactions.get(key)
        if found is None:
            # Another model may have recorded into the file since we read it.
            with self._lock:
                self._reload()
            found = self._interactions.get(key)
        return found

    def interactions(self) -> Mapping[str, Mapping[str, Any]]:
        return dict(self._interactions)

    def note_miss(self, agent: str, key: str) -> list[tuple[str, str]]:
        """Remember a request replay could not answer; return the earlier ones."""
        with self._lock:
            earlier = list(self._state.misses)
            self._state.misses.append((agent, key))
        return earlier

    def record(
        self, key: str, request: Mapping[str, Any], response: Mapping[str, Any], note: str | None
    ) -> None:
        """Store ``response`` for ``key`` and write the file."""
        with self._lock:
            self._reload()  # what other models recorded since, kept
            self._interactions[key] = {"request": dict(request), "response": dict(response)}
            if note is not None:
                self.note = note
            self._write()

    # -- file I/O, called with the lock held -----------------------------------------------------

    def _reload(self) -> None:
        try:
            self._interactions, self.note = _read(self.path)
        except FileNotFoundError:
            self._interactions = {}

    def _write(self) -> None:
        data: dict[str, Any] = {**_FILE.header(), "interactions": self._interactions}
        if self.note:
            data["note"] = self.note
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Write beside the target and rename, so a reader never sees half a file.
        handle, temporary = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise


def _read(path: Path) -> tuple[dict[str, dict[str, Any]], str | None]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise CassetteFormatError(f"{path} is not UTF-8 text: {error}.") from error
    data = _FILE.parse(text, where=str(path))
    interactions = data.get("interactions")
    if not isinstance(interactions, dict):
        raise CassetteFormatError(f"{path} has no 'interactions' object.")
    for key, value in interactions.items():
        if not isinstance(value, Mapping):
            raise CassetteFormatError(f"{path}: interaction {key!r} is not an object.")
        response = value.get("response")
        if not isinstance(response, Mapping) or "content" not in response:
            raise CassetteFormatError(
                f"{path}: interaction {key!r} has no 'response' with a 'content'; the file is "
                f"damaged. Fix it or delete it and record again."
            )
    note = data.get("note")
    return interactions, note if isinstance(note, str) else None
