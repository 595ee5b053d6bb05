"""What the file tools show the model: listings, numbered lines, matches."""

from __future__ import annotations

from nbagents.backends._protocol import FileContent, FileInfo, GrepMatch

MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 100_000
MAX_MATCHES = 500


def format_listing(infos: list[FileInfo], empty: str) -> str:
    if not infos:
        return empty
    return "\n".join(i.path + "/" if i.is_dir else i.path for i in infos)


def format_read(content: FileContent) -> str:
    """Numbered lines (``cat -n`` style), long lines cut, and a note on how to read further."""
    if content.is_binary:
        return (
            f"{content.path} is a binary file ({content.size} bytes); its content is not shown. "
            "Only text files can be read."
        )
    if content.total_lines == 0:
        return f"{content.path} is empty."
    out: list[str] = []
    used = 0
    shown = 0
    for number, line in enumerate(content.lines, content.offset + 1):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" … [line cut at {MAX_LINE_CHARS} characters]"
        row = f"{number:6d}\t{line}"
        if out and used + len(row) > MAX_OUTPUT_CHARS:
            break
        out.append(row)
        used += len(row) + 1
        shown += 1
    last = content.offset + shown
    if last < content.total_lines:
        out.append(
            f"\n[Showing lines {content.offset + 1}-{last} of {content.total_lines}. "
            f"To read more, call read_file with offset={last}.]"
        )
    return "\n".join(out)


def format_matches(matches: list[GrepMatch]) -> str:
    if not matches:
        return "No matches."
    rows = [f"{m.path}:{m.line}: {m.text[:MAX_LINE_CHARS]}" for m in matches[:MAX_MATCHES]]
    if len(matches) > MAX_MATCHES:
        rows.append(
            f"[{len(matches) - MAX_MATCHES} more matches not shown: "
            "narrow the path, glob or pattern.]"
        )
    return "\n".join(rows)
