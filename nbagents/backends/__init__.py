"""File backends (state, disk, composite) and the file tools middleware."""

from nbagents.backends._composite import CompositeBackend
from nbagents.backends._disk import AccessRule, DiskBackend
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
)
from nbagents.backends._state import FILES_KEY, StateBackend, files_reducer

__all__ = [
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
    "FilesUpdate",
    "GrepMatch",
    "InvalidPathError",
    "InvalidPatternError",
    "StateBackend",
    "WriteResult",
    "files_reducer",
]
