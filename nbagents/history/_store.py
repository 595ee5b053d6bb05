"""The run history: one SQLite file (WAL) of compressed traces and the facts they are listed by."""

from __future__ import annotations

import json
import os
import sqlite3
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import asdict, fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nbagents.history._record import RunInfo
from nbagents.tracing.model import Trace

if TYPE_CHECKING:
    import pandas as pd

SCHEMA_VERSION = 2
"""``PRAGMA user_version`` of a store this code writes; a newer one is read-only to it."""

_COLUMNS = [f.name for f in fields(RunInfo)]
_LISTS = {"tags", "agent_types", "models"}
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM runs"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    started_at REAL NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    notebook TEXT,
    git_commit TEXT,
    status TEXT NOT NULL,
    duration REAL NOT NULL,
    spans INTEGER NOT NULL,
    spawns INTEGER NOT NULL,
    failures INTEGER NOT NULL,
    agent_types TEXT NOT NULL DEFAULT '[]',
    models TEXT NOT NULL DEFAULT '[]',
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    total_tokens INTEGER NOT NULL,
    cost REAL,
    saved_at REAL NOT NULL,
    trace BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started_at);
CREATE TABLE IF NOT EXISTS experiments (
    experiment_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS experiment_results (
    experiment_id TEXT NOT NULL,
    case_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (experiment_id, case_id, repeat)
);
"""
_GITIGNORE = "# Made by nbagents: saved runs hold prompts and outputs; keep them out of git.\n*\n"


class RunStoreError(Exception):
    """The run history cannot be read or written; the message says why and what to do."""


class RunNotFoundError(KeyError):
    """No run with that id in the store."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "run not found"


class RunStore:
    """Runs saved in one SQLite file: ``save``, ``list``, ``load``, ``delete``, ``prune``.

    Several processes may save into one file at once (each save is one short transaction;
    writers wait up to ``timeout`` seconds for each other). A process killed while saving
    leaves the file as it was before that save.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 10.0) -> None:
        self.path = Path(path).expanduser()
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"

    # -- writing -------------------------------------------------------------------------------

    def save(self, info: RunInfo, trace: Trace) -> None:
        """Save ``trace`` under ``info.run_id``, replacing what was saved under it before (a
        paused run saved again when it resumes)."""
        blob = zlib.compress(trace.to_json().encode("utf-8"), 6)
        row = asdict(info)
        for column in _LISTS:
            row[column] = json.dumps(list(row[column]))
        names = [*row, "saved_at", "trace"]
        marks = ", ".join("?" for _ in names)
        with self._connect(write=True) as db:
            db.execute(
                f"INSERT OR REPLACE INTO runs ({', '.join(names)}) VALUES ({marks})",
                [*row.values(), time.time(), blob],
            )

    def delete(self, run_ids: str | Sequence[str]) -> int:
        """Delete the runs with these ids; how many there were."""
        ids = [run_ids] if isinstance(run_ids, str) else list(run_ids)
        if not ids:
            return 0
        marks = ", ".join("?" for _ in ids)
        with self._connect(write=True) as db:
            return db.execute(f"DELETE FROM runs WHERE run_id IN ({marks})", ids).rowcount

    def prune(self, *, older_than: timedelta | float | None = None, keep: int | None = None) -> int:
        """Delete runs started more than ``older_than`` ago (a ``timedelta``, or days) and all
        but the newest ``keep``; how many were deleted."""
        if older_than is None and keep is None:
            raise ValueError("prune needs older_than=, keep= or both")
        if keep is not None and keep < 0:
            raise ValueError(f"keep must be 0 or more, not {keep}")
        deleted = 0
        with self._connect(write=True) as db:
            if older_than is not None:
                age = older_than if isinstance(older_than, timedelta) else timedelta(older_than)
                cutoff = time.time() - age.total_seconds()
                deleted += db.execute("DELETE FROM runs WHERE started_at < ?", [cutoff]).rowcount
            if keep is not None:
                deleted += db.execute(
                    "DELETE FROM runs WHERE run_id NOT IN "
                    "(SELECT run_id FROM runs ORDER BY started_at DESC LIMIT ?)",
                    [keep],
                ).rowcount
        return deleted

    def save_experiment(
        self,
        experiment_id: str,
        *,
        created_at: float,
        name: str,
        tags: Sequence[str],
        status: str,
        record: str,
    ) -> None:
        """Save an experiment's own record (its cases, scorers, status) under its id."""
        with self._connect(write=True) as db:
            db.execute(
                "INSERT OR REPLACE INTO experiments VALUES (?, ?, ?, ?, ?, ?)",
                [experiment_id, created_at, name, json.dumps(list(tags)), status, record],
            )

    def save_results(self, experiment_id: str, results: Sequence[tuple[str, int, str]]) -> None:
        """Save results of an experiment: ``(case_id, repeat, result JSON)`` each, replacing
        what was saved for that case and repeat."""
        with self._connect(write=True) as db:
            db.executemany(
                "INSERT OR REPLACE INTO experiment_results VALUES (?, ?, ?, ?)",
                [(experiment_id, case, repeat, text) for case, repeat, text in results],
            )

    # -- reading -------------------------------------------------------------------------------

    def experiment(self, experiment_id: str) -> tuple[str, list[str]]:
        """An experiment's record and its results' JSON, in the order they were saved."""
        with self._connect() as db:
            found = None
            if _has_experiments(db):
                found = db.execute(
                    "SELECT record FROM experiments WHERE experiment_id = ?", [experiment_id]
                ).fetchone()
            if found is None:
                raise RunNotFoundError(f"No experiment {experiment_id!r} in {self.path}.")
            rows = db.execute(
                "SELECT result FROM experiment_results WHERE experiment_id = ? ORDER BY rowid",
                [experiment_id],
            ).fetchall()
        return str(found[0]), [str(row[0]) for row in rows]

    def experiments(self) -> list[tuple[str, str, list[str]]]:
        """Every experiment, newest first: its record and its results' JSON."""
        if not self.path.exists():
            return []
        with self._connect() as db:
            if not _has_experiments(db):
                return []
            query = "SELECT experiment_id FROM experiments ORDER BY created_at DESC, rowid DESC"
            ids = [str(row[0]) for row in db.execute(query)]
        return [(i, *self.experiment(i)) for i in ids]

    def load(self, run_id: str) -> Trace:
        """The trace saved under ``run_id``, as it was saved."""
        with self._connect() as db:
            found = db.execute("SELECT trace FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if found is None:
            raise RunNotFoundError(f"No run {run_id!r} in {self.path}.")
        try:
            text = zlib.decompress(found[0]).decode("utf-8")
        except (zlib.error, UnicodeDecodeError) as error:
            raise RunStoreError(f"Run {run_id!r} in {self.path} is damaged: {error}.") from None
        return Trace.from_json(text)

    def info(self, run_id: str) -> RunInfo:
        """The listing facts of one run."""
        with self._connect() as db:
            found = db.execute(f"{_SELECT} WHERE run_id = ?", [run_id]).fetchone()
        if found is None:
            raise RunNotFoundError(f"No run {run_id!r} in {self.path}.")
        return _info(found)

    def infos(
        self,
        *,
        name: str | None = None,
        tag: str | None = None,
        status: str | None = None,
        since: datetime | str | float | None = None,
        until: datetime | str | float | None = None,
        limit: int | None = None,
    ) -> list[RunInfo]:
        """Runs newest first, filtered: ``name`` (``*`` and ``?`` match any text), one ``tag``,
        ``status``, started ``since``/``until`` (datetimes, ISO strings or epoch seconds)."""
        tests = [
            ("name GLOB ?" if any(c in (name or "") for c in "*?[") else "name = ?", name),
            ("EXISTS (SELECT 1 FROM json_each(runs.tags) WHERE value = ?)", tag),
            ("status = ?", status),
            ("started_at >= ?", None if since is None else _epoch(since, "since")),
            ("started_at < ?", None if until is None else _epoch(until, "until")),
        ]
        where = [test for test, value in tests if value is not None]
        values: list[Any] = [value for _, value in tests if value is not None]
        sql = _SELECT
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY started_at DESC, rowid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            values.append(limit)
        if not self.path.exists():
            return []
        with self._connect() as db:
            return [_info(row) for row in db.execute(sql, values)]

    def list(self, **filters: Any) -> pd.DataFrame:
        """``infos(**filters)`` as a DataFrame, one row per run, newest first."""
        import pandas as pd

        rows = [asdict(info) for info in self.infos(**filters)]
        frame = pd.DataFrame(rows, columns=_COLUMNS)
        frame["started_at"] = pd.to_datetime(frame["started_at"], unit="s", utc=True)
        for column in _LISTS:
            frame[column] = frame[column].map(list)
        return frame.rename(columns={"started_at": "started"})

    def __len__(self) -> int:
        if not self.path.exists():
            return 0
        with self._connect() as db:
            return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])

    # -- the file ------------------------------------------------------------------------------

    @contextmanager
    def _connect(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        try:
            folder = self.path.parent
            if write and not folder.exists():
                folder.mkdir(parents=True, exist_ok=True)
                if folder.name == ".nbagents":  # a folder made for runs alone: keep it out of git
                    (folder / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")
            db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
            with closing(db):
                if write:  # WAL stays set in the file: readers need not (and may not) set it
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=NORMAL")
                self._check_schema(db, write)
                if write:
                    db.execute("BEGIN IMMEDIATE")
                    try:
                        yield db
                    except BaseException:
                        db.execute("ROLLBACK")
                        raise
                    db.execute("COMMIT")
                else:
                    yield db
        except sqlite3.Error as error:
            raise RunStoreError(self._explain(error)) from error
        except OSError as error:
            raise RunStoreError(
                f"Cannot use the run store {self.path}: {error.strerror or error}."
            ) from error

    def _check_schema(self, db: sqlite3.Connection, write: bool) -> None:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise RunStoreError(
                f"The run store {self.path} was written by a newer nbagents (schema "
                f"{version}; this one knows {SCHEMA_VERSION}): upgrade nbagents to use it."
            )
        if version < SCHEMA_VERSION and write:
            db.executescript(_SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};")
        elif version == 0:
            db.executescript(_SCHEMA)  # reading an empty file: an empty table answers

    def _explain(self, error: sqlite3.Error) -> str:
        text = str(error)
        where = f"the run store {self.path}"
        if "locked" in text or "busy" in text:
            return (
                f"{where} is locked by another process (waited {self.timeout:g} s). The run "
                "itself is unaffected."
            )
        if "readonly" in text or "unable to open" in text:
            return f"Cannot write to {where} ({text}): check its permissions, or choose " + (
                "another file with keep_runs(path=...) or NBAGENTS_RUNS."
            )
        if "full" in text:
            return f"{where} cannot grow: the disk is full ({text})."
        if "not a database" in text or "malformed" in text:
            return (
                f"{where} is damaged ({text}): move it away (runs in it are lost) and a new "
                "one is made at the next run."
            )
        return f"{where} failed: {text}."


def _has_experiments(db: sqlite3.Connection) -> bool:
    # A store written by schema 1 has no experiments until this code first writes to it.
    return (
        db.execute("SELECT 1 FROM sqlite_master WHERE name = 'experiments'").fetchone() is not None
    )


def _info(row: Sequence[Any]) -> RunInfo:
    data = dict(zip(_COLUMNS, row, strict=True))
    for column in _LISTS:
        data[column] = tuple(json.loads(data[column] or "[]"))
    return RunInfo(**data)


def _epoch(value: datetime | str | float, what: str) -> float:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(
                f"{what}={value!r} is not an ISO date, e.g. '2026-11-25' or '2026-11-25T14:00'"
            ) from None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise TypeError(f"{what} must be a datetime, an ISO date string or epoch seconds")
