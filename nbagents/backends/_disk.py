"""The disk backend: a directory on disk as a virtual root, with access rules."""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from nbagents.backends._content import (
    compile_regex,
    decode,
    grep_lines,
    replace_exact,
    require_text,
    window,
)
from nbagents.backends._globs import compile_glob, glob_matches
from nbagents.backends._paths import normalize
from nbagents.backends._protocol import (
    AccessDeniedError,
    FileContent,
    FileInfo,
    FileMissingError,
    FileTooLargeError,
    GrepMatch,
    InvalidPathError,
    WriteResult,
)

Operation: TypeAlias = Literal["read", "write"]
Effect: TypeAlias = Literal["allow", "deny"]

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class AccessRule:
    """Allow or deny reading or writing the virtual paths matching a glob.

    ``pattern`` is an absolute virtual path glob: ``/secrets/**`` is everything under
    ``/secrets``; ``/**/*.env`` is any ``.env`` file. Rules are checked in order and the **last**
    matching rule decides (as in ``.gitignore``), so a later ``allow`` can carve an exception out of
    an earlier ``deny``; with no matching rule the backend's ``default`` applies.
    """

    effect: Effect
    pattern: str
    operations: tuple[Operation, ...] = ("read", "write")

    def __post_init__(self) -> None:
        if self.effect not in ("allow", "deny"):
            raise ValueError(f"AccessRule effect must be 'allow' or 'deny', not {self.effect!r}")
        if not self.pattern.startswith("/"):
            raise ValueError(
                f"AccessRule pattern must be absolute (start with '/'): {self.pattern!r}"
            )
        unknown = set(self.operations) - {"read", "write"}
        if unknown or not self.operations:
            raise ValueError(
                f"AccessRule operations must be 'read' and/or 'write': {self.operations!r}"
            )
        compile_glob(self.pattern)

    @classmethod
    def allow(cls, pattern: str, *operations: Operation) -> AccessRule:
        return cls("allow", pattern, operations or ("read", "write"))

    @classmethod
    def deny(cls, pattern: str, *operations: Operation) -> AccessRule:
        return cls("deny", pattern, operations or ("read", "write"))

    def matches(self, path: str, operation: Operation) -> bool:
        return operation in self.operations and compile_glob(self.pattern).match(path) is not None


def _iso(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).isoformat()


class DiskBackend:
    """Files under ``root`` on disk, seen by the model as ``/…`` virtual paths.

    Every absolute path is read inside the root (``/etc/passwd`` is ``<root>/etc/passwd``); ``..``,
    NUL bytes and symlinks whose target lies outside the root are refused.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        rules: Sequence[AccessRule] = (),
        default: Effect = "allow",
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise ValueError(f"DiskBackend root {str(self.root)!r} is not a directory")
        if default not in ("allow", "deny"):
            raise ValueError(f"default must be 'allow' or 'deny', not {default!r}")
        self.rules = tuple(rules)
        self.default = default
        self.max_file_bytes = max_file_bytes
        self._real_root = self.root.resolve()

    def __repr__(self) -> str:
        return (
            f"DiskBackend({str(self.root)!r}, rules={list(self.rules)!r}, default={self.default!r})"
        )

    # -- paths and rules -------------------------------------------------------------------

    def allows(self, path: str, operation: Operation) -> bool:
        """Whether the rules let ``operation`` touch the virtual ``path``."""
        decision = self.default
        for rule in self.rules:
            if rule.matches(path, operation):
                decision = rule.effect
        return decision == "allow"

    def _check(self, path: str, operation: Operation) -> None:
        if not self.allows(path, operation):
            raise AccessDeniedError(f"Access denied: {operation} of {path} is not permitted.")

    def _host(self, path: str) -> Path:
        """The host path for a normalised virtual path, refusing symlink escapes."""
        host = self._real_root.joinpath(path.lstrip("/"))
        real = Path(os.path.realpath(host))
        if real != self._real_root and not real.is_relative_to(self._real_root):
            raise InvalidPathError(f"{path} resolves outside the backend root (symlink escape).")
        return host

    def _virtual(self, host: Path) -> str:
        return (
            "/" + host.relative_to(self._real_root).as_posix() if host != self._real_root else "/"
        )

    def _inside(self, host: Path) -> bool:
        real = Path(os.path.realpath(host))
        return real == self._real_root or real.is_relative_to(self._real_root)

    def _info(self, host: Path) -> FileInfo:
        stat = host.stat()
        return FileInfo(
            self._virtual(host),
            host.is_dir(),
            0 if host.is_dir() else stat.st_size,
            _iso(stat.st_mtime),
        )

    # -- operations ------------------------------------------------------------------------

    def ls(self, path: str) -> list[FileInfo]:
        path = normalize(path)
        host = self._host(path)
        if host.is_file():
            raise InvalidPathError(f"{path} is a file, not a directory: use read_file.")
        if not host.is_dir():
            raise FileMissingError(f"Directory {path} does not exist.")
        entries = []
        for child in sorted(host.iterdir()):
            if not self._inside(child) or not self.allows(self._virtual(child), "read"):
                continue
            entries.append(self._info(child))
        return entries

    def _load(self, path: str) -> tuple[str, bytes]:
        path = normalize(path)
        self._check(path, "read")
        host = self._host(path)
        if host.is_dir():
            raise FileMissingError(f"{path} is a directory, not a file: use ls to list it.")
        if not host.is_file():
            raise FileMissingError(f"File {path} does not exist.")
        size = host.stat().st_size
        if size > self.max_file_bytes:
            raise FileTooLargeError(
                f"{path} is {size} bytes, over this backend's limit of {self.max_file_bytes}."
            )
        return path, host.read_bytes()

    def read(self, path: str, *, offset: int = 0, limit: int | None = None) -> FileContent:
        path, data = self._load(path)
        text, encoding = decode(data)
        return window(path, text, encoding, len(data), offset, limit)

    def write(self, path: str, content: str) -> WriteResult:
        path = normalize(path)
        if path == "/":
            raise InvalidPathError("/ is a directory; give a file path.")
        self._check(path, "write")
        host = self._host(path)
        if host.is_dir():
            raise InvalidPathError(f"{path} is a directory; give a file path.")
        host.parent.mkdir(parents=True, exist_ok=True)
        # mkdir may have followed a symlinked parent: check again before writing.
        self._host(path)
        host.write_text(content, encoding="utf-8")
        return WriteResult(path)

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> WriteResult:
        path = normalize(path)
        self._check(path, "write")
        path, data = self._load(path)
        text, encoding = decode(data)
        require_text(path, encoding)
        text, count = replace_exact(path, text, old, new, replace_all)
        self._host(path).write_text(text, encoding="utf-8")
        return WriteResult(path, count)

    def _walk(self, base: str) -> Iterator[tuple[str, Path]]:
        """Readable files under ``base``, in path order, never leaving the root."""
        host = self._host(base)
        if host.is_file():
            if self.allows(base, "read"):
                yield base, host
            return
        if not host.is_dir():
            raise FileMissingError(f"Directory {base} does not exist.")
        for directory, dirs, files in os.walk(host):
            dirs.sort()
            here = Path(directory)
            for name in sorted(files):
                child = here / name
                if child.is_symlink() and not self._inside(child):
                    continue
                virtual = self._virtual(child)
                if self.allows(virtual, "read"):
                    yield virtual, child

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        base = normalize(path)
        compile_glob(pattern)
        return [
            self._info(host)
            for virtual, host in self._walk(base)
            if glob_matches(pattern, virtual, base)
        ]

    def grep(self, pattern: str, path: str = "/", *, glob: str | None = None) -> list[GrepMatch]:
        regex = compile_regex(pattern)
        base = normalize(path)
        matches: list[GrepMatch] = []
        for virtual, host in self._walk(base):
            if glob is not None and not glob_matches(glob, virtual, base):
                continue
            if host.stat().st_size > self.max_file_bytes:
                continue
            text, encoding = decode(host.read_bytes())
            if encoding == "utf-8":
                matches.extend(GrepMatch(virtual, n, line) for n, line in grep_lines(regex, text))
        return matches
