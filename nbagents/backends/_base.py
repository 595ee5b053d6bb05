"""``FileBackend``: the file operations once, over a few storage primitives.

The state, store and disk backends differ only in where a file's bytes live. A subclass
implements the ``_``-prefixed primitives on normalised paths and raises a :class:`BackendError`
for what the model can fix; the public methods turn that into the result's ``error``.
"""

from __future__ import annotations

import functools
import itertools
import posixpath
from collections.abc import Callable, Iterable
from time import monotonic
from typing import Any, Literal, ParamSpec, TypeVar

from nbagents.backends._content import (
    data_bytes,
    data_size,
    data_text,
    decode,
    replace_exact,
    text_data,
    window,
)
from nbagents.backends._globs import check_glob, glob_matches
from nbagents.backends._paths import as_directory, normalize
from nbagents.backends._protocol import (
    FILE_NOT_FOUND,
    INVALID_PATH,
    IS_DIRECTORY,
    PERMISSION_DENIED,
    AccessDeniedError,
    BackendError,
    BackendProtocol,
    BinaryFileError,
    DeleteResult,
    EditResult,
    FileData,
    FileDownloadResponse,
    FileInfo,
    FileMissingError,
    FileTooLargeError,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    InvalidPathError,
    IsDirectoryError,
    LsResult,
    ReadResult,
    WriteResult,
)

R = TypeVar("R")
P = ParamSpec("P")


def failure_text(error: Exception) -> str:
    """What went wrong, for the model: an ``OSError`` as its type and reason, else its message."""
    if isinstance(error, OSError):
        # Permission bits, a full disk, a file that vanished: the model may try something else.
        return f"{type(error).__name__}: {error.strerror or error}"
    return str(error)


def _reported(
    result: Callable[..., R], catch: tuple[type[Exception], ...] = (BackendError, OSError)
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Makes a method answer ``result(error=...)`` for what it raises of ``catch``."""

    def wrap(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return method(*args, **kwargs)
            except catch as error:
                return result(error=failure_text(error))

        return run

    return wrap


def _answered(response: Callable[..., R], do: Callable[..., R], given: str, *args: Any) -> R:
    """``do(given, *args)``, else ``response(path=given, error=...)`` with the error code (or
    text) of the :class:`BackendError` or ``OSError`` it raised."""
    try:
        return do(given, *args)
    except IsDirectoryError:
        code = IS_DIRECTORY
    except FileMissingError:
        code = FILE_NOT_FOUND
    except (AccessDeniedError, PermissionError):
        code = PERMISSION_DENIED
    except InvalidPathError:
        code = INVALID_PATH
    except (BackendError, OSError) as error:
        code = failure_text(error)
    return response(path=given, error=code)


class _Clock:
    """The time limit of one search (``search_seconds``), and whether it stopped the search."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.until = None if seconds is None else monotonic() + seconds
        self.stopped = False

    def out(self) -> bool:
        if self.until is not None and monotonic() >= self.until:
            self.stopped = True
        return self.stopped

    def nothing_found(self, tool: str, base: str) -> str:
        return (
            f"{tool} found nothing under {base} in {self.seconds:g} s, its time limit, before "
            "it had looked at every file: search a narrower path, or with a more specific "
            "pattern."
        )


class FileBackend(BackendProtocol):
    """A backend made of storage primitives; see the module docstring."""

    virtual_directories = True
    """Directories exist only as prefixes of file paths, so listing or searching one that holds
    nothing finds nothing, as upstream's state and store backends do (a disk says it is missing)."""

    search_seconds: float | None = 10.0
    """How long one ``glob`` or ``grep`` may walk and read (``None``: no limit). Past it the
    search answers what it found so far, marked ``truncated``, or an error saying so when it
    found nothing: a pattern over a huge directory (a home directory, ``node_modules``) must
    not hold the agent for minutes. Set it on a backend: ``backend.search_seconds = 30``."""

    # -- primitives (normalised absolute paths) -------------------------------------------------

    def _get(self, path: str) -> FileData | None:
        """The file at ``path``, or ``None`` when there is none."""
        raise NotImplementedError

    def _put(self, path: str, data: FileData) -> None:
        """Create or replace the file at ``path``."""
        raise NotImplementedError

    def _remove(self, path: str) -> list[str]:
        """Remove the file at ``path`` (or what is under it); the paths removed."""
        raise NotImplementedError

    def _files(self, base: str) -> Iterable[FileInfo]:
        """Every file at or under ``base``, with its size and modification time."""
        raise NotImplementedError

    def _children(self, directory: str) -> list[FileInfo] | None:
        """Direct children of ``directory``; ``None`` when it is no directory. By default derived
        from :meth:`_files`, where directories exist only as prefixes of file paths."""
        prefix = as_directory(directory)
        entries: dict[str, FileInfo] = {}
        for info in self._files(directory):
            head, sep, _ = info["path"][len(prefix) :].partition("/")
            if sep:
                entries.setdefault(
                    prefix + head + "/", {"path": prefix + head + "/", "is_dir": True}
                )
            elif info["path"] != directory:
                entries[info["path"]] = info
        if not entries and directory != "/":
            return None
        return [entries[key] for key in sorted(entries)]

    def _is_dir(self, path: str) -> bool:
        return path == "/" or self._children(path) is not None

    def _is_file(self, path: str) -> bool:
        return self._get(path) is not None

    def _normalize(self, path: str) -> str:
        """The canonical form of a path the caller gave (see :func:`normalize`)."""
        return normalize(path)

    def _search_base(self, path: str | None) -> str:
        """The directory a ``glob`` or ``grep`` given ``path`` searches."""
        return self._normalize(path or "/")

    def _check(self, path: str, operation: Literal["read", "write"]) -> None:
        """Raise :class:`AccessDeniedError` when ``operation`` of ``path`` is not allowed."""

    # -- shared helpers -------------------------------------------------------------------------

    def _file(self, path: str) -> FileData:
        self._check(path, "read")
        data = self._get(path)
        if data is None:
            if self._is_dir(path):
                raise IsDirectoryError(f"{path} is a directory, not a file: use ls to list it.")
            raise FileMissingError(f"File '{path}' not found")
        return data

    def _writable(self, path: str) -> None:
        if path == "/" or (not self._is_file(path) and self._is_dir(path)):
            raise IsDirectoryError(f"{path} is a directory; give a file path.")
        self._check(path, "write")
        parent = posixpath.dirname(path)
        while parent != "/":
            if self._is_file(parent):
                raise InvalidPathError(f"{parent} is a file, so {path} cannot be created.")
            parent = posixpath.dirname(parent)

    def _save(self, path: str, content: str, encoding: str = "utf-8") -> None:
        self._writable(path)
        self._put(path, text_data(content, encoding, self._previous(path)))

    def _previous(self, path: str) -> FileData | None:
        """The file a write replaces, whose creation time the new one keeps."""
        return self._get(path)

    # -- the protocol ---------------------------------------------------------------------------

    @_reported(LsResult)
    def ls(self, path: str) -> LsResult:
        where = self._normalize(path)
        if self._is_file(where):
            raise InvalidPathError(f"Path '{path}': not_a_directory")
        entries = self._children(where)
        if entries is None:
            if self.virtual_directories:
                return LsResult(entries=[])
            raise FileMissingError(f"Path '{path}': path_not_found")
        return LsResult(entries=entries)

    @_reported(ReadResult)
    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        path = self._normalize(file_path)
        return window(path, self._file(path), offset, limit)

    @_reported(WriteResult)
    def write(self, file_path: str, content: str) -> WriteResult:
        path = self._normalize(file_path)
        self._save(path, content)
        return WriteResult(path=path)

    @_reported(EditResult)
    def edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        path = self._normalize(file_path)
        self._check(path, "write")
        data = self._file(path)
        if data.get("encoding", "utf-8") != "utf-8":
            raise BinaryFileError(f"{path} is a binary file; it cannot be edited as text.")
        text, count = replace_exact(path, data_text(data), old_string, new_string, replace_all)
        self._put(path, text_data(text, "utf-8", data))
        return EditResult(path=path, occurrences=count)

    @_reported(DeleteResult)
    def delete(self, file_path: str) -> DeleteResult:
        path = self._normalize(file_path)
        if path == "/":
            raise InvalidPathError("/ cannot be deleted.")
        self._check(path, "write")
        if not self._remove(path):
            raise FileMissingError(f"File '{path}' not found")
        return DeleteResult(path=path)

    @_reported(GlobResult)
    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        base = self._search_base(path)
        check_glob(pattern)
        clock = _Clock(self.search_seconds)
        found = [
            info
            for info in self._readable(base, clock)
            if glob_matches(pattern, info["path"], base)
        ]
        if clock.stopped and not found:
            return GlobResult(error=clock.nothing_found("glob", base))
        return GlobResult(matches=found, truncated=clock.stopped)

    @_reported(GrepResult)
    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        max_count: int | None = None,
    ) -> GrepResult:
        base = self._search_base(path)
        if glob is not None:
            check_glob(glob)
        matches: list[GrepMatch] = []
        clock = _Clock(self.search_seconds)
        for info in self._readable(base, clock):
            if clock.out():
                break
            name = info["path"]
            if glob is not None and not glob_matches(glob, name, base):
                continue
            try:
                data = self._get(name)
            except FileTooLargeError:
                continue  # a disk backend's huge file: skipped, not an error for the whole search
            if data is None or data.get("encoding", "utf-8") != "utf-8":
                continue
            for number, line in enumerate(data_text(data).splitlines(), 1):
                if pattern not in line:
                    continue
                if max_count is not None and len(matches) == max_count:
                    return GrepResult(matches=matches, truncated=True)  # one more exists
                matches.append({"path": name, "line": number, "text": line})
        if clock.stopped and not matches:
            return GrepResult(error=clock.nothing_found("grep", base))
        return GrepResult(matches=matches, truncated=clock.stopped)

    def _readable(self, base: str, clock: _Clock) -> list[FileInfo]:
        """The files under ``base`` the rules let the model read, in path order; only those
        walked before ``clock`` ran out."""
        walked = list(itertools.takewhile(lambda _: not clock.out(), self._files(base)))
        readable = []
        for info in sorted(walked, key=lambda i: i["path"]):
            try:
                self._check(info["path"], "read")
            except AccessDeniedError:
                continue
            readable.append(info)
        if (
            not readable
            and not self.virtual_directories
            and base != "/"
            and not self._is_file(base)
            and not self._is_dir(base)
        ):
            raise FileMissingError(f"Directory '{base}' not found")
        return readable

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        def upload(given: str, content: bytes) -> FileUploadResponse:
            self._save(self._normalize(given), *decode(content))
            return FileUploadResponse(path=given)

        return [_answered(FileUploadResponse, upload, *file) for file in files]

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        def download(given: str) -> FileDownloadResponse:
            data = self._file(self._normalize(given))
            return FileDownloadResponse(path=given, content=data_bytes(data))

        return [_answered(FileDownloadResponse, download, given) for given in paths]


def file_info(path: str, data: FileData) -> FileInfo:
    """The listing entry of a stored file."""
    info: FileInfo = {"path": path, "is_dir": False, "size": data_size(data)}
    if "modified_at" in data:
        info["modified_at"] = data["modified_at"]
    return info
