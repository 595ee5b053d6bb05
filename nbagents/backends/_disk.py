"""The disk backend: a directory on disk as a virtual root, with access rules."""

from __future__ import annotations

import datetime
import os
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

from nbagents.backends._base import FileBackend
from nbagents.backends._content import data_bytes, decode
from nbagents.backends._globs import compile_glob, path_matches
from nbagents.backends._paths import normalize
from nbagents.backends._protocol import (
    AccessDeniedError,
    FileData,
    FileInfo,
    FileTooLargeError,
    InvalidPathError,
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
        compile_glob(self.pattern, dotmatch=True)

    @classmethod
    def allow(cls, pattern: str, *operations: Operation) -> AccessRule:
        return cls("allow", pattern, operations or ("read", "write"))

    @classmethod
    def deny(cls, pattern: str, *operations: Operation) -> AccessRule:
        return cls("deny", pattern, operations or ("read", "write"))

    def matches(self, path: str, operation: Operation) -> bool:
        return operation in self.operations and path_matches(self.pattern, path)


def _iso(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).isoformat()


class DiskBackend(FileBackend):
    """Files under ``root`` on disk, seen by the model as ``/…`` virtual paths.

    Every absolute path is read inside the root (``/etc/passwd`` is ``<root>/etc/passwd``); ``..``,
    NUL bytes and symlinks whose target lies outside the root are refused. The files are the
    disk's: every agent, thread and user given this backend shares them.
    """

    virtual_directories = False

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
        if not self._inside(host):
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
        stat, is_dir = host.stat(), host.is_dir()
        return {
            "path": self._virtual(host).rstrip("/") + "/" if is_dir else self._virtual(host),
            "is_dir": is_dir,
            "size": 0 if is_dir else stat.st_size,
            "modified_at": _iso(stat.st_mtime),
        }

    # -- storage primitives ----------------------------------------------------------------

    def _is_file(self, path: str) -> bool:
        return self._host(path).is_file()

    def _is_dir(self, path: str) -> bool:
        return self._host(path).is_dir()

    def _get(self, path: str) -> FileData | None:
        host = self._host(path)
        if not host.is_file():
            return None
        size = host.stat().st_size
        if size > self.max_file_bytes:
            raise FileTooLargeError(
                f"{path} is {size} bytes, over this backend's limit of {self.max_file_bytes}."
            )
        content, encoding = decode(host.read_bytes())
        return {"content": content, "encoding": encoding, "modified_at": _iso(host.stat().st_mtime)}

    def _previous(self, path: str) -> FileData | None:
        return None

    def _put(self, path: str, data: FileData) -> None:
        host = self._host(path)
        host.parent.mkdir(parents=True, exist_ok=True)
        # mkdir may have followed a symlinked parent: check again before writing.
        self._host(path)
        host.write_bytes(data_bytes(data))

    def _remove(self, path: str) -> list[str]:
        host = self._host(path)
        if host.is_symlink() or host.is_file():
            # A link goes, not what it points to.
            host.unlink()
            return [path]
        if not host.is_dir():
            return []
        # A directory goes whole or not at all: every file below must be writable first.
        below = [Path(top, name) for top, _, names in os.walk(host) for name in names]
        for file in below:
            self._check(self._virtual(file), "write")
        shutil.rmtree(host)
        return [path, *(self._virtual(file) for file in below)]

    def _children(self, directory: str) -> list[FileInfo] | None:
        host = self._host(directory)
        if not host.is_dir():
            return None
        return [
            self._info(child)
            for child in sorted(host.iterdir())
            if self._inside(child) and self.allows(self._virtual(child), "read")
        ]

    def _files(self, base: str) -> Iterator[FileInfo]:
        """Files under ``base``, in path order, never leaving the root."""
        host = self._host(base)
        if host.is_file():
            yield self._info(host)
            return
        if not host.is_dir():
            return
        for directory, dirs, files in os.walk(host):
            dirs.sort()
            here = Path(directory)
            for name in sorted(files):
                child = here / name
                if child.is_symlink() and not self._inside(child):
                    continue
                yield self._info(child)


class FilesystemBackend(DiskBackend):
    """deepagents' name and arguments for a directory on disk.

    ``virtual_mode=True`` (the default) is :class:`DiskBackend`: paths are virtual, rooted at
    ``root_dir`` (default: the working directory), and cannot leave it. ``virtual_mode=False``
    takes absolute paths as host paths and resolves relative ones under ``root_dir``, with no
    confinement at all: an agent can then read and write anything this process can, so use it
    only where that is meant. ``max_file_size_mb`` bounds the files read and searched.
    """

    def __init__(
        self,
        root_dir: str | os.PathLike[str] | None = None,
        virtual_mode: bool = True,
        max_file_size_mb: int = 10,
        *,
        rules: Sequence[AccessRule] = (),
        default: Effect = "allow",
    ) -> None:
        self.cwd = Path(root_dir).resolve() if root_dir is not None else Path.cwd()
        self.virtual_mode = virtual_mode
        super().__init__(
            self.cwd if virtual_mode else Path("/"),
            rules=rules,
            default=default,
            max_file_bytes=max_file_size_mb * 1024 * 1024,
        )

    def __repr__(self) -> str:
        return f"FilesystemBackend({str(self.cwd)!r}, virtual_mode={self.virtual_mode!r})"

    def _normalize(self, path: str) -> str:
        if self.virtual_mode:
            return normalize(path)
        host = Path(path) if Path(path).is_absolute() else self.cwd / path
        return os.path.normpath(host).replace(os.sep, "/")

    def _search_base(self, path: str | None) -> str:
        # Without virtual paths "/" is the host's root: a search from it (or from nowhere) means
        # the backend's directory, as upstream has it, not a walk over the whole machine.
        if not self.virtual_mode and path in (None, "/"):
            path = str(self.cwd)
        return super()._search_base(path)
