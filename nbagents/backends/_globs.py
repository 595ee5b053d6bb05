"""Glob patterns on virtual paths, with deepagents' (and ripgrep's) rules for ``glob`` and ``grep``.

For ``glob(pattern, path)`` and ``grep(..., glob=pattern)``, ``path`` is the search root:

- a pattern without ``/`` matches a file's name at any depth (``*.py`` finds ``src/a/b.py``);
- a pattern with ``/`` matches the path relative to the root; ``**`` spans directories, and a
  leading ``/`` only anchors the pattern at the root (``/*.py`` is the root's own files);
- ``*``, ``?`` and a character class never match a name's leading dot, and ``**`` does not enter
  a directory whose name starts with a dot: name the dot to reach those (``.github/**``, ``.*``);
- braces choose (``*.{py,md}``); ``[!a]`` and ``[^a]`` both negate.

Access rules match absolute paths instead, dots included: a rule on ``/**`` must cover ``/.env``.
"""

from __future__ import annotations

import functools
import itertools
import re

from nbagents.backends._protocol import InvalidPatternError

MAX_BRACE_ALTERNATIVES = 1024
"""Patterns a brace expression may expand to; more is refused rather than compiled."""


def _expand_braces(pattern: str) -> list[str]:
    """``a{b,c}d`` as ``[abd, acd]``, nested braces included; a brace with no comma is literal."""
    depth, start = 0, -1
    commas: list[int] = []
    for i, c in enumerate(pattern):
        if c == "{":
            if depth == 0:
                start, commas = i, []
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0 and commas:
                head, tail = pattern[:start], pattern[i + 1 :]
                bounds = [start, *commas, i]
                options = [pattern[a + 1 : b] for a, b in itertools.pairwise(bounds)]
                out: list[str] = []
                for option in options:
                    out.extend(_expand_braces(head + option + tail))
                    if len(out) > MAX_BRACE_ALTERNATIVES:
                        raise InvalidPatternError(
                            f"Glob {pattern!r} expands to more than {MAX_BRACE_ALTERNATIVES} "
                            "patterns."
                        )
                return out
        elif c == "," and depth == 1:
            commas.append(i)
    return [pattern]


def _segment(segment: str, dotmatch: bool) -> str:
    """The regex of one path segment (no ``/``)."""
    out: list[str] = []
    if not dotmatch and not segment.startswith("."):
        out.append(r"(?!\.)")
    i, n = 0, len(segment)
    while i < n:
        c = segment[i]
        if c == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            negated = segment.startswith(("[!", "[^"), i)
            first = i + 2 if negated else i + 1
            # A ']' right after the opening is a member, as in shells.
            end = segment.find("]", first + 1 if segment.startswith("]", first) else first)
            if end < 0:
                raise InvalidPatternError(f"Glob {segment!r} has an unclosed '['.")
            body = segment[first:end].replace("\\", "\\\\").replace("^", "\\^")
            out.append(f"[^/{body}]" if negated else f"[{body}]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _translate(pattern: str, dotmatch: bool) -> str:
    any_segment = "[^/]+" if dotmatch else r"(?!\.)[^/]+"
    segments = pattern.split("/")
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            # Zero or more whole directories; at the end, everything below.
            out.append(f"(?:{any_segment}(?:/{any_segment})*)?" if last else f"(?:{any_segment}/)*")
            continue
        out.append(_segment(segment, dotmatch) + ("" if last else "/"))
    return "".join(out)


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str, *, dotmatch: bool = False) -> re.Pattern[str]:
    """A regex matching a whole path (or name) against ``pattern``.

    Written here because ``fnmatch`` lets ``*`` match ``/`` and ``glob.translate`` needs 3.13.
    """
    try:
        alternatives = [_translate(p, dotmatch) for p in _expand_braces(pattern)]
        return re.compile("(?:" + "|".join(alternatives) + r")\Z", re.DOTALL)
    except re.error as error:
        raise InvalidPatternError(f"Glob {pattern!r} is invalid: {error}.") from error


def check_glob(pattern: str) -> None:
    """Raise :class:`InvalidPatternError` if ``pattern`` cannot be used by :func:`glob_matches`."""
    compile_glob(pattern.lstrip("/"))


def glob_matches(pattern: str, path: str, base: str) -> bool:
    """Whether ``path`` (absolute) matches ``pattern`` searched from the root ``base``."""
    relative = path[len(base) :].lstrip("/") if base != "/" else path.lstrip("/")
    if "/" not in pattern:
        relative = relative.rsplit("/", 1)[-1]
    return compile_glob(pattern.lstrip("/")).match(relative) is not None


def path_matches(pattern: str, path: str) -> bool:
    """Whether the absolute ``path`` matches the absolute ``pattern``, dot names included."""
    return compile_glob(pattern, dotmatch=True).match(path) is not None
