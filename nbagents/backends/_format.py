"""What the file tools show the model: listings, numbered lines, matches."""

from __future__ import annotations

from nbagents.backends._content import data_size
from nbagents.backends._protocol import FileInfo, GrepMatch, ReadResult

MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 100_000
MAX_MATCHES = 500


def format_listing(infos: list[FileInfo], empty: str, *, truncated: bool = False) -> str:
    if not infos:
        return empty
    rows = [
        i["path"] + "/" if i.get("is_dir") and not i["path"].endswith("/") else i["path"]
        for i in infos
    ]
    if truncated:
        rows.append("[The search stopped early: the list may be incomplete.]")
    return "\n".join(rows)


def format_read(path: str, result: ReadResult, limit: int) -> str:
    """Numbered lines (``cat -n`` style), long lines cut, and a note on how to read further."""
    data = result.file_data
    if data is None:
        return f"{path} could not be read."
    if data.get("encoding", "utf-8") != "utf-8":
        return (
            f"{path} is a binary file ({data_size(data)} bytes); its content is not shown. "
            "Only text files can be read."
        )
    if result.start_line is None:
        return f"{path} is empty." if limit > 0 else f"No lines of {path} were asked for."
    out: list[str] = []
    used = 0
    shown = 0
    for number, line in enumerate(data["content"].splitlines(), result.start_line):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" … [line cut at {MAX_LINE_CHARS} characters]"
        row = f"{number:6d}\t{line}"
        if out and used + len(row) > MAX_OUTPUT_CHARS:
            break
        out.append(row)
        used += len(row) + 1
        shown += 1
    last = result.start_line - 1 + shown
    total = result.total_lines
    if total is not None and last < total:
        out.append(
            f"\n[Showing lines {result.start_line}-{last} of {total}. "
            f"To read more, call read_file with offset={last}.]"
        )
    return "\n".join(out)


def format_matches(matches: list[GrepMatch], *, truncated: bool = False) -> str:
    if not matches:
        return "No matches."
    rows = [f"{m['path']}:{m['line']}: {m['text'][:MAX_LINE_CHARS]}" for m in matches[:MAX_MATCHES]]
    if len(matches) > MAX_MATCHES:
        rows.append(
            f"[{len(matches) - MAX_MATCHES} more matches not shown: "
            "narrow the path, glob or pattern.]"
        )
    elif truncated:
        rows.append("[The search stopped early: there may be more matches.]")
    return "\n".join(rows)
