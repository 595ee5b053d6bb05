"""Glob patterns on virtual paths: ``*`` and ``?`` stay within a segment, ``**`` crosses them."""

from __future__ import annotations

import functools
import re

from nbagents.backends._protocol import InvalidPatternError


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex matching whole paths against ``pattern``.

    Written here because ``fnmatch`` lets ``*`` match ``/`` and ``glob.translate`` needs 3.13.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if pattern.startswith("/", i):
                    # "**/" matches zero or more whole directories.
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern.startswith("[!", i) else i + 1)
            if end < 0:
                raise InvalidPatternError(f"Glob {pattern!r} has an unclosed '['.")
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error as error:
        raise InvalidPatternError(f"Glob {pattern!r} is invalid: {error}.") from error


def glob_matches(pattern: str, path: str, base: str) -> bool:
    """Whether ``path`` matches ``pattern``; a relative pattern is taken from ``base``."""
    if pattern.startswith("/"):
        return compile_glob(pattern).match(path) is not None
    relative = path[len(base) :].lstrip("/") if base != "/" else path.lstrip("/")
    return compile_glob(pattern).match(relative) is not None
