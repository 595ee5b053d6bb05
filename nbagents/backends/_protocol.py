"""The file backend protocol, its records and its errors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, TypedDict, runtime_checkable

from langchain.tools import ToolRuntime

Encoding: TypeAlias = Literal["utf-8", "base64"]


class FileRecord(TypedDict):
    """One file as the state backend stores it (the seed's shape)."""

    content: str
    """Text (``utf-8``) or base64 of the bytes (``base64``)."""
    encoding: Encoding
    created_at: str
    """ISO 8601 timestamp."""
    modified_at: str
    """ISO 8601 timestamp."""


FilesUpdate: TypeAlias = dict[str, FileRecord | None]
"""What a write hands back for the state key ``files``; ``None`` removes a path."""


@dataclass(frozen=True)
class FileInfo:
    """An entry of a listing: a file or a directory, by its virtual path."""

    path: str
    is_dir: bool = False
    size: int = 0
    modified_at: str | None = None


@dataclass(frozen=True)
class FileContent:
    """A window of a file's lines (``offset`` is 0-based), or a binary file's description."""

    path: str
    encoding: Encoding
    lines: tuple[str, ...]
    offset: int
    total_lines: int
    size: int
    """Size of the whole file in bytes."""

    @property
    def is_binary(self) -> bool:
        return self.encoding == "base64"

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class GrepMatch:
    path: str
    line: int
    """1-based line number."""
    text: str


@dataclass(frozen=True)
class WriteResult:
    """A completed write or edit; ``files_update`` is set when the state must change."""

    path: str
    replacements: int = 0
    files_update: FilesUpdate | None = field(default=None)


class BackendError(Exception):
    """A file operation the model asked for cannot be done; the message says why and what next."""


class InvalidPathError(BackendError):
    """The path is malformed or leaves the backend's root (``..``, NUL, symlink escape)."""


class AccessDeniedError(BackendError):
    """An access rule forbids the operation."""


class FileMissingError(BackendError):
    """No file (or directory) at the path."""


class EditConflictError(BackendError):
    """The string to replace is absent, or present more than once without ``replace_all``."""


class BinaryFileError(BackendError):
    """A text operation was asked of a binary file."""


class InvalidPatternError(BackendError):
    """A glob or regular expression that cannot be compiled."""


class FileTooLargeError(BackendError):
    """A file larger than the backend is willing to load."""


@runtime_checkable
class BackendProtocol(Protocol):
    """File operations on absolute virtual paths (``/notes/a.md``).

    Implementations raise a :class:`BackendError` subclass for anything the caller (usually a
    model, through the file tools) can correct; the tools turn it into an error result.
    """

    def ls(self, path: str) -> list[FileInfo]:
        """Direct children of the directory ``path``, sorted by path."""
        ...

    def read(self, path: str, *, offset: int = 0, limit: int | None = None) -> FileContent:
        """Lines ``offset`` to ``offset + limit`` of a text file; binary files have no lines."""
        ...

    def write(self, path: str, content: str) -> WriteResult:
        """Create or overwrite a text file."""
        ...

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> WriteResult:
        """Replace ``old`` by ``new``; ``old`` must occur exactly once unless ``replace_all``."""
        ...

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Files under ``path`` matching ``pattern`` (``*``, ``?``, ``[...]``, ``**``)."""
        ...

    def grep(self, pattern: str, path: str = "/", *, glob: str | None = None) -> list[GrepMatch]:
        """Lines matching the regular expression ``pattern`` in text files under ``path``."""
        ...


BackendFactory: TypeAlias = Callable[[ToolRuntime[Any, Any]], BackendProtocol]
"""Builds a backend for one tool call or hook, from its runtime (the state backend needs state)."""

BackendLike: TypeAlias = BackendProtocol | BackendFactory
"""A backend, or a factory called with the tool runtime."""


def resolve_backend(backend: BackendLike, runtime: ToolRuntime[Any, Any]) -> BackendProtocol:
    """The backend itself, or what the factory builds for ``runtime``."""
    if isinstance(backend, BackendProtocol):
        return backend
    return backend(runtime)
