"""Virtual paths: validation and normalisation shared by every backend."""

from __future__ import annotations

import posixpath

from nbagents.backends._protocol import InvalidPathError


def normalize(path: str) -> str:
    """The canonical form of an absolute virtual path, or :class:`InvalidPathError`.

    ``..`` is refused outright rather than resolved: a model that writes it is trying to leave
    the directory it was given, and silently clamping it would hide that.
    """
    if not isinstance(path, str) or not path:
        raise InvalidPathError("Path is empty: give an absolute path such as /notes/a.md.")
    if "\x00" in path:
        raise InvalidPathError(f"Path {path!r} contains a NUL byte.")
    if len(path) > 1 and path[1] == ":" and path[0].isalpha():
        raise InvalidPathError(
            f"Path {path!r} is a Windows path: give a virtual path that starts with '/', such "
            "as /workspace/file.txt."
        )
    if "\\" in path:
        raise InvalidPathError(f"Path {path!r} contains a backslash: use '/' as the separator.")
    if ".." in path.split("/"):
        raise InvalidPathError(f"Path {path!r} contains '..', which is not allowed.")
    if path.startswith("~"):
        raise InvalidPathError(
            f"Path {path!r} starts with '~': there is no home directory here; give an absolute "
            "path that starts with '/'."
        )
    if not path.startswith("/"):
        raise InvalidPathError(
            f"Path {path!r} is relative: give an absolute path such as /{path.lstrip('./')}."
        )
    normal = posixpath.normpath(path)
    # normpath keeps a leading '//' (POSIX allows it a special meaning); collapse it.
    return "/" + normal.lstrip("/") if normal != "/" else "/"


def as_directory(path: str) -> str:
    """``path`` with one trailing slash, for prefix tests."""
    return path if path.endswith("/") else path + "/"


def is_under(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` itself or inside it."""
    return directory == "/" or path == directory or path.startswith(as_directory(directory))
