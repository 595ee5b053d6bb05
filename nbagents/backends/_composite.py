"""The composite backend: path prefixes routed to other backends."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from nbagents.backends._base import _reported
from nbagents.backends._globs import check_glob, glob_matches
from nbagents.backends._paths import as_directory, is_under, normalize
from nbagents.backends._protocol import (
    INVALID_PATH,
    BackendError,
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileDownloadResponse,
    FileInfo,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    InvalidPathError,
    LsResult,
    ReadResult,
    WriteResult,
    first_matches,
    is_backend,
)

Item = TypeVar("Item", FileInfo, GrepMatch)


class CompositeBackend(BackendProtocol):
    """Routes each path to the backend of its longest matching prefix, else to ``default``.

    A routed backend sees paths with its prefix removed (``/skills/a/SKILL.md`` reaches the skills
    backend as ``/a/SKILL.md``) and its results are given the prefix back. Listings, globs and
    greps that span several backends merge their results. A state backend routed under a prefix
    keeps its own (unprefixed) keys in the ``files`` state key, so it is usually the ``default``.
    Any backend may be routed, also one that is not an nbagents class (an upstream deepagents
    backend, for example).

    ``artifacts_root`` is the directory under which ``FilesystemMiddleware`` saves what it takes
    out of the conversation (``<artifacts_root>/large_tool_results/``), as in deepagents: a
    route there sends those files to a backend of their own (a scratch store, a disk directory).
    """

    def __init__(
        self, default: Any, routes: Mapping[str, Any], *, artifacts_root: str = "/"
    ) -> None:
        try:
            self.artifacts_root = normalize(artifacts_root)
        except InvalidPathError as error:
            raise ValueError(f"CompositeBackend: artifacts_root: {error}") from None
        for where, backend in [("default", default), *routes.items()]:
            if not is_backend(backend):
                raise TypeError(
                    f"CompositeBackend: the backend for {where!r} is {backend!r}, not a backend "
                    "instance (a StateBackend(), FilesystemBackend(...), StoreBackend(...), ...)."
                )
        self.default: BackendProtocol = default
        self.routes: dict[str, BackendProtocol] = {}
        for prefix, backend in routes.items():
            normal = normalize(prefix)
            if normal == "/":
                raise ValueError("A route cannot be '/': pass that backend as default.")
            self.routes[as_directory(normal)] = backend
        # Longest first, so the first match is the longest prefix.
        self._ordered = sorted(self.routes.items(), key=lambda item: -len(item[0]))

    def __repr__(self) -> str:
        root = f", artifacts_root={self.artifacts_root!r}" if self.artifacts_root != "/" else ""
        return f"CompositeBackend({self.default!r}, {self.routes!r}{root})"

    def _route(self, path: str) -> tuple[str, BackendProtocol, str]:
        """(prefix, backend, path inside it) for a path, normalised here."""
        path = normalize(path)
        for prefix, backend in self._ordered:
            if path == prefix.rstrip("/") or path.startswith(prefix):
                return prefix, backend, "/" + path[len(prefix) :]
        return "", self.default, path

    @staticmethod
    def _outer(prefix: str, inner: str) -> str:
        if not prefix:
            return inner
        return prefix.rstrip("/") + (inner if inner != "/" else "")

    def _outer_error(self, prefix: str, inner: str, error: str | None) -> str | None:
        """A routed backend's error naming the path the caller gave, not the inner one."""
        if error is None or not prefix or inner == "/":
            return error
        outer = self._outer(prefix, inner)
        # Only whole paths: "/a" must not rewrite the start of "/ab".
        pattern = r"(?<![\w./-])'?" + re.escape(inner) + r"'?(?![\w./-])"
        return re.sub(pattern, lambda m: m.group(0).replace(inner, outer), error)

    def _outer_fields(self, prefix: str, inner: str, result: Any) -> dict[str, Any]:
        """A routed backend's ``error`` and ``path``, naming the path the caller gave."""
        path = None if result.path is None else self._outer(prefix, result.path)
        return {"error": self._outer_error(prefix, inner, result.error), "path": path}

    def _relabel(self, prefix: str, items: list[Item]) -> list[Item]:
        """A backend's entries or matches with the paths the caller gave; of the default
        backend's (``prefix`` empty), those a route hides are left out."""
        routes = [route.rstrip("/") for route in self.routes]
        return [
            {**item, "path": self._outer(prefix, item["path"])}
            for item in items
            if prefix or not any(is_under(item["path"].rstrip("/"), r) for r in routes)
        ]

    def _mounts_below(self, path: str) -> list[tuple[str, BackendProtocol]]:
        """Routes strictly inside ``path`` (their whole tree is below it)."""
        return [
            (prefix, backend)
            for prefix, backend in self._ordered
            if prefix.rstrip("/") != path and is_under(prefix.rstrip("/"), path)
        ]

    @_reported(LsResult, (BackendError,))
    def ls(self, path: str) -> LsResult:
        where = normalize(path or "/")
        prefix, backend, inner = self._route(where)
        result = backend.ls(inner)
        if prefix:
            return LsResult(
                error=self._outer_error(prefix, inner, result.error),
                entries=None if result.entries is None else self._relabel(prefix, result.entries),
            )
        mounts = self._mounts_below(where)
        if result.entries is None and not mounts:
            return result
        entries = {info["path"]: info for info in self._relabel("", result.entries or [])}
        base = as_directory(where)
        for mount, _ in mounts:
            child = base + mount[len(base) :].split("/", 1)[0] + "/"
            entries.setdefault(child, {"path": child, "is_dir": True})
        return LsResult(entries=[entries[key] for key in sorted(entries)])

    @_reported(ReadResult, (BackendError,))
    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        prefix, backend, inner = self._route(file_path or "/")
        result = backend.read(inner, offset=offset, limit=limit)
        result.error = self._outer_error(prefix, inner, result.error)
        return result

    @_reported(WriteResult, (BackendError,))
    def write(self, file_path: str, content: str) -> WriteResult:
        prefix, backend, inner = self._route(file_path or "/")
        result = backend.write(inner, content)
        return WriteResult(**self._outer_fields(prefix, inner, result))

    @_reported(EditResult, (BackendError,))
    def edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        prefix, backend, inner = self._route(file_path or "/")
        result = backend.edit(inner, old_string, new_string, replace_all=replace_all)
        fields = self._outer_fields(prefix, inner, result)
        return EditResult(**fields, occurrences=result.occurrences)

    @_reported(DeleteResult, (BackendError,))
    def delete(self, file_path: str) -> DeleteResult:
        """Delete in the backend the path routes to. ``/``, a route's own directory and a
        directory with a route inside it are refused: the mounted backend's files would go (all
        of them, for an upstream backend given ``/``) or stay behind, neither of which the
        caller can have meant."""
        where = normalize(file_path or "/")
        if where == "/":
            return DeleteResult(error="/ cannot be deleted.")
        prefix, backend, inner = self._route(where)
        if prefix and inner == "/":
            return DeleteResult(
                error=f"{prefix} is where another backend is mounted, so it cannot be deleted; "
                "delete the files in it instead."
            )
        mounts = sorted(mount for mount, _ in self._mounts_below(where))
        if mounts:
            return DeleteResult(
                error=f"{where} holds {', '.join(mounts)}, where another backend is mounted, so "
                "it cannot be deleted whole; delete what else is in it instead."
            )
        remove = getattr(backend, "delete", None)
        try:
            result = remove(inner) if callable(remove) else None
        except NotImplementedError:
            result = None
        if result is None:
            # delete is optional: a routed backend (an upstream one, say) may not have it.
            return DeleteResult(error=f"{where} is on a backend that cannot delete files.")
        return DeleteResult(**self._outer_fields(prefix, inner, result))

    @_reported(GlobResult, (BackendError,))
    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        where = normalize(path or "/")
        check_glob(pattern)
        prefix, backend, inner = self._route(where)
        # A pattern is matched relative to the search root, which is the same inside a routed
        # backend: it can be passed on as it is.
        own = backend.glob(pattern, inner)
        mounts = [] if prefix else self._mounts_below(where)
        if own.matches is None and not mounts:
            return GlobResult(error=self._outer_error(prefix, inner, own.error))
        found = self._relabel(prefix, own.matches or [])
        truncated = own.truncated
        for mount, routed in mounts:
            # Below the root a mount's files have a longer relative path than they have in their
            # own backend: list them all and match here on the outer paths.
            for everything in ("*", ".*"):
                result = routed.glob(everything, "/")
                truncated = truncated or result.truncated
                relabelled = self._relabel(mount, result.matches or [])
                found.extend(i for i in relabelled if glob_matches(pattern, i["path"], where))
        if not prefix:
            found.sort(key=lambda i: i["path"])
        return GlobResult(matches=found, truncated=truncated)

    @_reported(GrepResult, (BackendError,))
    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        max_count: int | None = None,
    ) -> GrepResult:
        # ``max_count`` counts here, once the routes' answers are merged, filtered and sorted.
        where = normalize(path or "/")
        if glob is not None:
            check_glob(glob)
        prefix, backend, inner = self._route(where)
        own = backend.grep(pattern, inner, None if prefix else glob)
        mounts = [] if prefix else self._mounts_below(where)
        if own.matches is None and not mounts:
            return GrepResult(error=self._outer_error(prefix, inner, own.error))
        found = self._relabel(prefix, own.matches or [])
        truncated = own.truncated
        for mount, routed in mounts:
            result = routed.grep(pattern, "/")
            truncated = truncated or result.truncated
            found.extend(self._relabel(mount, result.matches or []))
        if glob is not None:
            found = [m for m in found if glob_matches(glob, m["path"], where)]
        found.sort(key=lambda m: (m["path"], m["line"]))
        return first_matches(GrepResult(matches=found, truncated=truncated), max_count)

    def _grouped(self, paths: list[str]) -> list[tuple[BackendProtocol, list[int]]]:
        """Positions of ``paths`` grouped by the backend that holds them (invalid ones left out)."""
        groups: dict[int, tuple[BackendProtocol, list[int]]] = {}
        for position, path in enumerate(paths):
            try:
                _, backend, _ = self._route(path)
            except BackendError:
                continue
            groups.setdefault(id(backend), (backend, []))[1].append(position)
        return list(groups.values())

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        responses = [FileUploadResponse(path=path, error=INVALID_PATH) for path, _ in files]
        for backend, positions in self._grouped([path for path, _ in files]):
            batch = [(self._route(files[i][0])[2], files[i][1]) for i in positions]
            for i, response in zip(positions, backend.upload_files(batch), strict=True):
                responses[i] = FileUploadResponse(path=files[i][0], error=response.error)
        return responses

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        responses = [FileDownloadResponse(path=path, error=INVALID_PATH) for path in paths]
        for backend, positions in self._grouped(paths):
            batch = [self._route(paths[i])[2] for i in positions]
            for i, response in zip(positions, backend.download_files(batch), strict=True):
                responses[i] = FileDownloadResponse(
                    path=paths[i], content=response.content, error=response.error
                )
        return responses
