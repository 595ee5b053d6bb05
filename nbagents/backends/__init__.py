"""File backends (state, disk, composite) and the file tools middleware."""

from nbagents.backends._composite import CompositeBackend
from nbagents.backends._disk import AccessRule, DiskBackend
from nbagents.backends._middleware import FILESYSTEM_PROMPT, FilesState, FilesystemMiddleware
from nbagents.backends._protocol import (
    AccessDeniedError,
    BackendError,
    BackendFactory,
    BackendLike,
    BackendProtocol,
    BinaryFileError,
    EditConflictError,
    FileContent,
    FileInfo,
    FileMissingError,
    FileRecord,
    FilesUpdate,
    FileTooLargeError,
    GrepMatch,
    InvalidPathError,
    InvalidPatternError,
    WriteResult,
    resolve_backend,
)
from nbagents.backends._state import FILES_KEY, StateBackend, files_reducer
from nbagents.backends._tools import build_file_tools

__all__ = [
    "FILESYSTEM_PROMPT",
    "FILES_KEY",
    "AccessDeniedError",
    "AccessRule",
    "BackendError",
    "BackendFactory",
    "BackendLike",
    "BackendProtocol",
    "BinaryFileError",
    "CompositeBackend",
    "DiskBackend",
    "EditConflictError",
    "FileContent",
    "FileInfo",
    "FileMissingError",
    "FileRecord",
    "FileTooLargeError",
    "FilesState",
    "FilesUpdate",
    "FilesystemMiddleware",
    "GrepMatch",
    "InvalidPathError",
    "InvalidPatternError",
    "StateBackend",
    "WriteResult",
    "build_file_tools",
    "files_reducer",
    "resolve_backend",
]
