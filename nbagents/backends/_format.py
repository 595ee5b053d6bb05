"""What the file tools show the model: listings, numbered lines, matches."""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

from nbagents.backends._content import data_size
from nbagents.backends._protocol import FileInfo, GrepMatch, ReadResult

MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 100_000
MAX_MATCHES = 500
STOPPED_EARLY = (
    "[The search stopped early: there may be more matches. Narrow the path "
    "or the pattern to see them all.]"
)
STOPPED_AT = (
    "[Stopped at max_count={cut_at} matches: there are more. Raise max_count, or narrow the "
    "path, glob or pattern, to see the rest.]"
)
TOOL_RESULT_TOKEN_LIMIT = 20_000
"""A tool's answer longer than this many tokens (about four characters each) is cut."""
TRUNCATION_GUIDANCE = "[Output cut here: narrow the path, glob or pattern to see the rest.]"
"""The line that ends an answer cut at :data:`TOOL_RESULT_TOKEN_LIMIT`."""
NO_FILES = "No files found"
NO_MATCHES = "No matches found"
GrepMode = Literal["files_with_matches", "content", "count"]
_REGEX_SIGNS = re.compile(r"\||\.\*|\.\+|\\[.dswbDSWB()\[\]|]|^\^|\$$|\[[^\]]*\]|\(\?")


def truncate(text: str) -> str:
    """``text``, cut after :data:`TOOL_RESULT_TOKEN_LIMIT` tokens with a line saying so."""
    limit = TOOL_RESULT_TOKEN_LIMIT * 4
    return text if len(text) <= limit else text[:limit] + "\n" + TRUNCATION_GUIDANCE


def format_listing(infos: list[FileInfo], *, truncated: bool = False) -> str:
    if not infos:
        return NO_FILES
    rows = [
        i["path"] + "/" if i.get("is_dir") and not i["path"].endswith("/") else i["path"]
        for i in infos
    ]
    if truncated:
        rows.append(
            "[The search stopped early: the list may be incomplete. Narrow the "
            "path or the pattern to see it all.]"
        )
    return truncate("\n".join(rows))


def format_read(path: str, result: ReadResult, offset: int, limit: int) -> str:
    """Numbered lines (the number, two spaces, the line), long lines cut, how to read further."""
    data = result.file_data
    if data is None:
        return f"{path} could not be read."
    if data.get("encoding", "utf-8") != "utf-8":
        return (
            f"{path} is a binary file ({data_size(data)} bytes); its content is not shown. "
            "Only text files can be read."
        )
    if result.start_line is None:
        if limit > 0:
            return f"{path} is empty."
        return (
            f"No lines of {path} were read: `limit` was {limit}, so the file was not looked at. "
            "Call read_file with a limit of 1 or more to read it."
        )
    lines = data["content"].splitlines()
    width = len(str(result.start_line + len(lines) - 1))
    out: list[str] = []
    used = 0
    for number, line in enumerate(lines, result.start_line):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" … [line cut at {MAX_LINE_CHARS} characters]"
        row = f"{number:>{width}}  {line}"
        if out and used + len(row) > MAX_OUTPUT_CHARS:
            break
        out.append(row)
        used += len(row) + 1
    last = result.start_line - 1 + len(out)
    total = result.total_lines
    if total is not None and last < total:
        out.append(
            f"\n[Showing lines {result.start_line}-{last} of {total}. "
            f"To read more, call read_file with offset={last}.]"
        )
    if offset < 0:
        out.append(f"\n[offset={offset} is before the start of the file: read from line 1.]")
    return "\n".join(out)


def format_matches(
    matches: list[GrepMatch],
    mode: GrepMode = "content",
    *,
    truncated: bool = False,
    cut_at: int | None = None,
) -> str:
    """``content``: ``path:line: text`` per match; ``files_with_matches``: one path per line;
    ``count``: ``path: n`` per file. ``cut_at``: the ``max_count`` the search stopped at."""
    if not matches:
        return NO_MATCHES
    stopped = STOPPED_EARLY if cut_at is None else STOPPED_AT.format(cut_at=cut_at)
    if mode != "content":
        counts = Counter(m["path"] for m in matches)
        rows = [p if mode == "files_with_matches" else f"{p}: {n}" for p, n in counts.items()]
        if truncated:
            rows.append(stopped)
        return truncate("\n".join(rows))
    rows = [f"{m['path']}:{m['line']}: {m['text'][:MAX_LINE_CHARS]}" for m in matches[:MAX_MATCHES]]
    if len(matches) > MAX_MATCHES:
        rows.append(
            f"[{len(matches) - MAX_MATCHES} more matches not shown: "
            "narrow the path, glob or pattern.]"
        )
    elif truncated:
        rows.append(stopped)
    return truncate("\n".join(rows))


def regex_hint(pattern: str) -> str:
    """A note for a pattern that found nothing and looks like a regular expression, else ''."""
    if not _REGEX_SIGNS.search(pattern):
        return ""
    return (
        "grep matches literal text, not regex: characters such as `|`, `.*` and `\\.` are "
        "searched as they are. Search for the exact text instead, one search per alternative."
    )
