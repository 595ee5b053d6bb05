"""The file backend protocol, its result records and its errors.

The method names, arguments and result records are deepagents' (0.7), so a backend written for
upstream works with nbagents' file tools and an nbagents backend works with upstream's. Results
carry an ``error`` string instead of raising: the file tools hand it to the model, which can try
again. Inside nbagents' own backends a failure is raised as a :class:`BackendError` and turned
into that string at the method's boundary (see :class:`nbagents.backends._base.FileBackend`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, NotRequired, TypeAlias, TypedDict

from langchain.tools import ToolRuntime

FileOperationError: TypeAlias = Literal[
    "file_not_found", "permission_denied", "is_directory", "invalid_path"
]
"""The error codes of :class:`FileUploadResponse` and :class:`FileDownloadResponse`."""

FILE_NOT_FOUND: Final = "file_not_found"
PERMISSION_DENIED: Final = "permission_denied"
IS_DIRECTORY: Final = "is_directory"
INVALID_PATH: Final = "invalid_path"


class FileData(TypedDict):
    """One file as the state and store backends keep it."""

    content: str
    """Text (``utf-8``) or base64 of the bytes (``base64``)."""
    encoding: str
    created_at: NotRequired[str]
    """ISO 8601 timestamp."""
    modified_at: NotRequired[str]
    """ISO 8601 timestamp."""


FileRecord: TypeAlias = FileData
"""nbagents' earlier name for :class:`FileData`."""

FilesUpdate: TypeAlias = dict[str, FileData | None]
"""An update of the state key ``files``: paths set one by one; ``None`` removes a path."""


class FileInfo(TypedDict):
    """An entry of a listing; only ``path`` is always there (directories end with ``/``)."""

    path: str
    is_dir: NotRequired[bool]
    size: NotRequired[int]
    """Bytes."""
    modified_at: NotRequired[str]


class GrepMatch(TypedDict):
    path: str
    line: int
    """1-based line number."""
    text: str


@dataclass
class ReadResult:
    """A window of a file: ``file_data`` holds the raw lines asked for (or a binary's base64).

    ``start_line`` and ``end_line`` are 1-based and inclusive; ``next_offset`` is set when lines
    remain after the window (the ``offset`` to read on from).
    """

    error: str | None = None
    file_data: FileData | None = None
    total_lines: int | None = None
    start_line: int | None = None
    end_line: int | None = None
    next_offset: int | None = None


@dataclass
class WriteResult:
    error: str | None = None
    path: str | None = None


@dataclass
class EditResult:
    error: str | None = None
    path: str | None = None
    occurrences: int | None = None


@dataclass
class DeleteResult:
    error: str | None = None
    path: str | None = None


@dataclass
class LsResult:
    error: str | None = None
    entries: list[FileInfo] | None = None


@dataclass
class GrepResult:
    error: str | None = None
    matches: list[GrepMatch] | None = None
    truncated: bool = False


@dataclass
class GlobResult:
    error: str | None = None
    matches: list[FileInfo] | None = None
    truncated: bool = False


@dataclass
class FileUploadResponse:
    path: str
    error: FileOperationError | str | None = None


@dataclass
class FileDownloadResponse:
    path: str
    content: bytes | None = None
    error: FileOperationError | str | None = None


class BackendError(Exception):
    """A file operation the model asked for cannot be done; the message says why and what next."""


class InvalidPathError(BackendError):
    """The path is malformed or leaves the backend's root (``..``, NUL, symlink escape)."""


class AccessDeniedError(BackendError):
    """An access rule forbids the operation."""


class FileMissingError(BackendError):
    """No file (or directory) at the path."""


class IsDirectoryError(FileMissingError):
    """A file operation was asked of a directory."""


class EditConflictError(BackendError):
    """The string to replace is absent, or present more than once without ``replace_all``."""


class BinaryFileError(BackendError):
    """A text operation was asked of a binary file."""


class InvalidPatternError(BackendError):
    """A glob pattern that cannot be compiled."""


class FileTooLargeError(BackendError):
    """A file larger than the backend is willing to load."""


class BackendProtocol:
    """File operations on absolute virtual paths (``/notes/a.md``).

    Subclass it and implement the synchronous methods; each ``a…`` twin runs its synchronous
    method in a worker thread unless overridden. A method a backend does not support raises
    ``NotImplementedError``. An object that is not a subclass but has these methods (an upstream
    deepagents backend, say) is accepted wherever a backend is.
    """

    def ls(self, path: str) -> LsResult:
        """Direct children of the directory ``path``, sorted by path."""
        raise NotImplementedError

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        """Lines ``offset`` (0-based) to ``offset + limit`` of a file."""
        raise NotImplementedError

    def write(self, file_path: str, content: str) -> WriteResult:
        """Create a text file or overwrite one."""
        raise NotImplementedError

    def edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        """Replace ``old_string``, which must occur exactly once unless ``replace_all``."""
        raise NotImplementedError

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        """Files under ``path`` (default ``/``) matching ``pattern`` (``*``, ``?``, ``**``, …)."""
        raise NotImplementedError

    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        max_count: int | None = None,
    ) -> GrepResult:
        """Lines containing the literal text ``pattern`` in text files under ``path``; with
        ``max_count``, at most that many (``truncated`` when there were more). A backend whose
        ``grep`` has no ``max_count`` still works: the tool cuts its answer (:func:`grep_at_most`).
        """
        raise NotImplementedError

    def delete(self, file_path: str) -> DeleteResult:
        """Remove one file."""
        raise NotImplementedError

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        """Store ``(path, bytes)`` pairs; one response per file, in order."""
        raise NotImplementedError

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        """The bytes of each path; one response per path, in order."""
        raise NotImplementedError

    async def als(self, path: str) -> LsResult:
        return await asyncio.to_thread(self.ls, path)

    async def aread(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        return await asyncio.to_thread(self.read, file_path, offset, limit)

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        return await asyncio.to_thread(self.write, file_path, content)

    async def aedit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        return await asyncio.to_thread(self.edit, file_path, old_string, new_string, replace_all)

    async def aglob(self, pattern: str, path: str | None = None) -> GlobResult:
        return await asyncio.to_thread(self.glob, pattern, path)

    async def agrep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        max_count: int | None = None,
    ) -> GrepResult:
        return await asyncio.to_thread(grep_at_most, self, pattern, path, glob, max_count)

    async def adelete(self, file_path: str) -> DeleteResult:
        return await asyncio.to_thread(self.delete, file_path)

    async def aupload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        return await asyncio.to_thread(self.upload_files, files)

    async def adownload_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        return await asyncio.to_thread(self.download_files, paths)


_BACKEND_METHODS = ("ls", "read", "write", "edit", "glob", "grep")


def is_backend(value: object) -> bool:
    """Whether ``value`` is a backend instance (ours, or any object with the file methods)."""
    return not isinstance(value, type) and (
        isinstance(value, BackendProtocol) or _has_methods(value)
    )


def _has_methods(value: object) -> bool:
    return all(callable(getattr(value, name, None)) for name in _BACKEND_METHODS)


BackendFactory: TypeAlias = Callable[[ToolRuntime[Any, Any]], Any]
"""Builds a backend for one tool call or hook, from its runtime."""

BackendLike: TypeAlias = BackendProtocol | BackendFactory | type[BackendProtocol]
"""A backend, a backend class that needs no arguments, or a factory called with the runtime."""


def resolve_backend(backend: Any, runtime: ToolRuntime[Any, Any]) -> BackendProtocol:
    """The backend itself, or what the factory builds for ``runtime``."""
    if is_backend(backend):
        return backend  # type: ignore[no-any-return]
    built = backend(runtime)
    if not is_backend(built):
        raise TypeError(
            f"The backend factory {backend!r} returned {type(built).__name__}, not a backend "
            "(an object with ls, read, write, edit, glob and grep)."
        )
    return built  # type: ignore[no-any-return]


def check_backend(backend: Any, *, what: str = "backend") -> Any:
    """``backend`` as the file tools take it, checked when the agent is built.

    A backend instance or a factory is kept; a backend class is instantiated (``StateBackend``
    needs no arguments). Anything else is refused here, with what to pass instead, rather than
    at the first file operation in the middle of a run.
    """
    if is_backend(backend):
        return backend
    if isinstance(backend, type):
        if not _has_methods(backend):
            raise TypeError(f"{what}={backend.__name__} is a class but not a file backend.")
        try:
            return backend()
        except TypeError as error:
            raise TypeError(
                f"{what}={backend.__name__} is a class that needs arguments ({error}): pass an "
                f"instance, e.g. {what}={backend.__name__}(...)."
            ) from None
    if callable(backend):
        return backend
    raise TypeError(
        f"{what} must be a file backend (StateBackend(), FilesystemBackend(root_dir=...), "
        f"StoreBackend(...), CompositeBackend(...)) or a factory called with the tool runtime, "
        f"not {type(backend).__name__}: {backend!r}."
    )


def grep_at_most(
    backend: Any,
    pattern: str,
    path: str | None = None,
    glob: str | None = None,
    max_count: int | None = None,
) -> GrepResult:
    """``backend.grep`` with at most ``max_count`` matches: passed on to a ``grep`` that takes
    it (which can stop early), else the answer is cut here. ``truncated`` says matches were
    left out."""
    if max_count is not None and _takes_max_count(backend.grep):
        return first_matches(backend.grep(pattern, path, glob, max_count=max_count), max_count)
    return first_matches(backend.grep(pattern, path, glob), max_count)


async def agrep_at_most(
    backend: Any,
    pattern: str,
    path: str | None = None,
    glob: str | None = None,
    max_count: int | None = None,
) -> GrepResult:
    """:func:`grep_at_most` through the backend's ``agrep`` when it has one."""
    agrep = getattr(backend, "agrep", None)
    if agrep is None:
        return await asyncio.to_thread(grep_at_most, backend, pattern, path, glob, max_count)
    if max_count is not None and _takes_max_count(agrep):
        return first_matches(await agrep(pattern, path, glob, max_count=max_count), max_count)
    return first_matches(await agrep(pattern, path, glob), max_count)


def _takes_max_count(method: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # a builtin or an odd callable: cut its answer instead
        return False
    return any(p.name == "max_count" or p.kind is p.VAR_KEYWORD for p in parameters)


def first_matches(result: GrepResult, max_count: int | None) -> GrepResult:
    """``result`` with at most ``max_count`` matches (``truncated`` if some were cut)."""
    if max_count is None or result.matches is None or len(result.matches) <= max_count:
        return result
    return GrepResult(error=result.error, matches=result.matches[:max_count], truncated=True)
