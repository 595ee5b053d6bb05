"""The composite backend: path prefixes routed to other backends."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from nbagents.backends._globs import compile_glob, glob_matches
from nbagents.backends._paths import as_directory, is_under, normalize
from nbagents.backends._protocol import (
    BackendError,
    BackendProtocol,
    FileContent,
    FileInfo,
    FileMissingError,
    GrepMatch,
    WriteResult,
)

T = TypeVar("T")


class CompositeBackend:
    """Routes each path to the backend of its longest matching prefix, else to ``default``.

    A routed backend sees paths with its prefix removed (``/skills/a/SKILL.md`` reaches the skills
    backend as ``/a/SKILL.md``) and its results are given the prefix back. Listings, globs and
    greps that span several backends merge their results. A state backend routed under a prefix
    keeps its own (unprefixed) keys in the ``files`` state key, so it is usually the ``default``.
    """

    def __init__(self, default: BackendProtocol, routes: Mapping[str, BackendProtocol]) -> None:
        self.default = default
        self.routes: dict[str, BackendProtocol] = {}
        for prefix, backend in routes.items():
            normal = normalize(prefix)
            if normal == "/":
                raise ValueError("A route cannot be '/': pass that backend as default.")
            self.routes[as_directory(normal)] = backend
        # Longest first, so the first match is the longest prefix.
        self._ordered = sorted(self.routes.items(), key=lambda item: -len(item[0]))

    def _route(self, path: str) -> tuple[str, BackendProtocol, str]:
        """(prefix, backend, path inside it) for a normalised path."""
        for prefix, backend in self._ordered:
            if path == prefix.rstrip("/") or path.startswith(prefix):
                return prefix, backend, "/" + path[len(prefix) :]
        return "", self.default, path

    @staticmethod
    def _outer(prefix: str, inner: str) -> str:
        if not prefix:
            return inner
        return prefix.rstrip("/") + (inner if inner != "/" else "")

    @contextlib.contextmanager
    def _outer_errors(self, prefix: str, inner: str) -> Iterator[None]:
        """Re-raise a routed backend's error naming the path the caller gave, not the inner one."""
        try:
            yield
        except BackendError as error:
            if not prefix or inner == "/":
                raise
            outer = self._outer(prefix, inner)
            # Only whole paths: "/a" must not rewrite the start of "/ab".
            pattern = r"(?<![\w./-])" + re.escape(inner) + r"(?![\w./-])"
            message = re.sub(pattern, lambda _: outer, str(error))
            raise type(error)(message) from error

    def _shadowed(self, path: str) -> bool:
        """Whether a default-backend path is hidden by a route."""
        return any(is_under(path, prefix.rstrip("/")) for prefix in self.routes)

    def _relabel_info(self, prefix: str, infos: list[FileInfo]) -> list[FileInfo]:
        return [
            FileInfo(self._outer(prefix, i.path), i.is_dir, i.size, i.modified_at) for i in infos
        ]

    def _mounts_below(self, path: str) -> list[tuple[str, BackendProtocol]]:
        """Routes strictly inside ``path`` (their whole tree is below it)."""
        return [
            (prefix, backend)
            for prefix, backend in self._ordered
            if prefix.rstrip("/") != path and is_under(prefix.rstrip("/"), path)
        ]

    def ls(self, path: str) -> list[FileInfo]:
        path = normalize(path)
        prefix, backend, inner = self._route(path)
        if prefix:
            with self._outer_errors(prefix, inner):
                return self._relabel_info(prefix, backend.ls(inner))
        entries: dict[str, FileInfo] = {}
        mounts = self._mounts_below(path)
        try:
            for info in backend.ls(inner):
                if not self._shadowed(info.path):
                    entries[info.path] = info
        except FileMissingError:
            if not mounts:
                raise
        base = as_directory(path)
        for mount, _ in mounts:
            child = base + mount[len(base) :].split("/", 1)[0]
            entries.setdefault(child, FileInfo(child, is_dir=True))
        return [entries[k] for k in sorted(entries)]

    def read(self, path: str, *, offset: int = 0, limit: int | None = None) -> FileContent:
        prefix, backend, inner = self._route(normalize(path))
        with self._outer_errors(prefix, inner):
            content = backend.read(inner, offset=offset, limit=limit)
        if not prefix:
            return content
        return FileContent(
            self._outer(prefix, content.path),
            content.encoding,
            content.lines,
            content.offset,
            content.total_lines,
            content.size,
        )

    def write(self, path: str, content: str) -> WriteResult:
        prefix, backend, inner = self._route(normalize(path))
        with self._outer_errors(prefix, inner):
            result = backend.write(inner, content)
        return WriteResult(
            self._outer(prefix, result.path), result.replacements, result.files_update
        )

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> WriteResult:
        prefix, backend, inner = self._route(normalize(path))
        with self._outer_errors(prefix, inner):
            result = backend.edit(inner, old, new, replace_all=replace_all)
        return WriteResult(
            self._outer(prefix, result.path), result.replacements, result.files_update
        )

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        path = normalize(path)
        compile_glob(pattern)
        prefix, backend, inner = self._route(path)
        if prefix:
            with self._outer_errors(prefix, inner):
                inner_found = backend.glob("**", inner)
            return self._filter(pattern, path, self._relabel_info(prefix, inner_found))
        results = [
            i
            for i in _unless_missing(lambda: backend.glob(pattern, path))
            if not self._shadowed(i.path)
        ]
        for mount, routed in self._mounts_below(path):
            results.extend(
                self._filter(pattern, path, self._relabel_info(mount, routed.glob("**")))
            )
        return sorted(results, key=lambda i: i.path)

    @staticmethod
    def _filter(pattern: str, path: str, infos: list[FileInfo]) -> list[FileInfo]:
        # Routed backends are asked for everything and filtered here on the outer paths, so a
        # pattern means the same thing whichever backend holds the files.
        return [i for i in infos if glob_matches(pattern, i.path, path)]

    def grep(self, pattern: str, path: str = "/", *, glob: str | None = None) -> list[GrepMatch]:
        path = normalize(path)
        if glob is not None:
            compile_glob(glob)
        prefix, backend, inner = self._route(path)
        if prefix:
            with self._outer_errors(prefix, inner):
                matched = backend.grep(pattern, inner)
            found = [GrepMatch(self._outer(prefix, m.path), m.line, m.text) for m in matched]
        else:
            found = [
                m
                for m in _unless_missing(lambda: backend.grep(pattern, path, glob=glob))
                if not self._shadowed(m.path)
            ]
            for mount, routed in self._mounts_below(path):
                found.extend(
                    GrepMatch(self._outer(mount, m.path), m.line, m.text)
                    for m in routed.grep(pattern)
                )
        if glob is not None:
            found = [m for m in found if glob_matches(glob, m.path, path)]
        return sorted(found, key=lambda m: (m.path, m.line))


def _unless_missing(run: Callable[[], list[T]]) -> list[T]:
    # The default backend may have nothing at a directory that only holds mounts.
    try:
        return run()
    except FileMissingError:
        return []
