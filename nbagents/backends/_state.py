"""The state backend: files in the agent state key ``files``."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from langchain.tools import ToolRuntime

from nbagents.backends._content import (
    compile_regex,
    grep_lines,
    record_size,
    replace_exact,
    require_text,
    text_record,
    window,
)
from nbagents.backends._globs import glob_matches
from nbagents.backends._paths import as_directory, is_under, normalize
from nbagents.backends._protocol import (
    FileContent,
    FileInfo,
    FileMissingError,
    FileRecord,
    FilesUpdate,
    GrepMatch,
    InvalidPathError,
    WriteResult,
)

FILES_KEY = "files"
"""The state key holding the state backend's files (path -> :class:`FileRecord`)."""


def files_reducer(
    current: Mapping[str, FileRecord] | None, update: Mapping[str, FileRecord | None] | None
) -> dict[str, FileRecord]:
    """Merge a ``files`` update into the state: paths are set one by one, ``None`` deletes.

    Merging (rather than replacing the dict) is what lets parallel tool calls or sub-agents that
    write different files all land in the same step.
    """
    merged = dict(current or {})
    for path, record in (update or {}).items():
        if record is None:
            merged.pop(path, None)
        else:
            merged[path] = record
    return merged


class StateBackend:
    """Files held in a mapping taken from the agent state; writes return the update to apply.

    Tools cannot change state themselves: the file tools turn ``WriteResult.files_update`` into a
    ``Command``. The backend also applies its own writes to its private copy so that a later read
    in the same call sees them.
    """

    def __init__(self, files: Mapping[str, FileRecord] | None = None) -> None:
        self._files: dict[str, FileRecord] = dict(files or {})

    @classmethod
    def from_runtime(cls, runtime: ToolRuntime[Any, Any]) -> StateBackend:
        """The backend factory: the files of the runtime's state."""
        state = runtime.state
        files = state.get(FILES_KEY) if isinstance(state, Mapping) else None
        return cls(files)

    @property
    def files(self) -> Mapping[str, FileRecord]:
        return self._files

    def _record(self, path: str) -> tuple[str, FileRecord]:
        path = normalize(path)
        record = self._files.get(path)
        if record is None:
            if self._is_dir(path):
                raise FileMissingError(f"{path} is a directory, not a file: use ls to list it.")
            raise FileMissingError(f"File {path} does not exist.")
        return path, record

    def _is_dir(self, path: str) -> bool:
        prefix = as_directory(path)
        return any(p.startswith(prefix) for p in self._files)

    def ls(self, path: str) -> list[FileInfo]:
        path = normalize(path)
        if path in self._files:
            raise InvalidPathError(f"{path} is a file, not a directory: use read_file.")
        prefix = as_directory(path)
        entries: dict[str, FileInfo] = {}
        for name, record in self._files.items():
            if not name.startswith(prefix):
                continue
            head, sep, _ = name[len(prefix) :].partition("/")
            if sep:
                entries.setdefault(prefix + head, FileInfo(prefix + head, is_dir=True))
            else:
                entries[name] = FileInfo(name, False, record_size(record), record["modified_at"])
        if not entries and path != "/":
            raise FileMissingError(f"Directory {path} does not exist.")
        return [entries[k] for k in sorted(entries)]

    def read(self, path: str, *, offset: int = 0, limit: int | None = None) -> FileContent:
        path, record = self._record(path)
        return window(
            path, record["content"], record["encoding"], record_size(record), offset, limit
        )

    def write(self, path: str, content: str) -> WriteResult:
        path = normalize(path)
        if path == "/" or self._is_dir(path):
            raise InvalidPathError(f"{path} is a directory; give a file path.")
        parent = posixpath.dirname(path)
        while parent != "/":
            if parent in self._files:
                raise InvalidPathError(f"{parent} is a file, so {path} cannot be created.")
            parent = posixpath.dirname(parent)
        previous = self._files.get(path)
        record = text_record(content, previous["created_at"] if previous else None)
        return self._commit(path, record, 0)

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> WriteResult:
        path, record = self._record(path)
        require_text(path, record["encoding"])
        text, count = replace_exact(path, record["content"], old, new, replace_all)
        return self._commit(path, text_record(text, record["created_at"]), count)

    def _commit(self, path: str, record: FileRecord, count: int) -> WriteResult:
        self._files[path] = record
        update: FilesUpdate = {path: record}
        return WriteResult(path, count, update)

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        base = normalize(path)
        return [
            FileInfo(name, False, record_size(record), record["modified_at"])
            for name, record in sorted(self._files.items())
            if is_under(name, base) and glob_matches(pattern, name, base)
        ]

    def grep(self, pattern: str, path: str = "/", *, glob: str | None = None) -> list[GrepMatch]:
        regex = compile_regex(pattern)
        base = normalize(path)
        if base in self._files:
            candidates = [base]
        else:
            candidates = sorted(
                name
                for name in self._files
                if is_under(name, base) and (glob is None or glob_matches(glob, name, base))
            )
        matches: list[GrepMatch] = []
        for name in candidates:
            record = self._files[name]
            if record["encoding"] != "utf-8":
                continue
            matches.extend(
                GrepMatch(name, n, line) for n, line in grep_lines(regex, record["content"])
            )
        return matches
