"""Operations on file contents that every backend shares: decoding, windows, edits, regexes."""

from __future__ import annotations

import base64
import datetime
import re

from nbagents.backends._protocol import (
    BinaryFileError,
    EditConflictError,
    Encoding,
    FileContent,
    FileRecord,
    InvalidPatternError,
)


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat()


def decode(data: bytes) -> tuple[str, Encoding]:
    """Text when the bytes are UTF-8 without NUL bytes, else base64."""
    if b"\x00" not in data:
        try:
            return data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    return base64.b64encode(data).decode("ascii"), "base64"


def text_record(content: str, created_at: str | None = None) -> FileRecord:
    stamp = now_iso()
    return {
        "content": content,
        "encoding": "utf-8",
        "created_at": created_at or stamp,
        "modified_at": stamp,
    }


def record_size(record: FileRecord) -> int:
    if record["encoding"] == "base64":
        return len(record["content"]) * 3 // 4 - record["content"][-2:].count("=")
    return len(record["content"].encode("utf-8"))


def window(
    path: str, text: str, encoding: Encoding, size: int, offset: int, limit: int | None
) -> FileContent:
    """The lines ``offset`` to ``offset + limit`` of ``text`` (none for a binary file)."""
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if encoding == "base64":
        return FileContent(path, encoding, (), offset, 0, size)
    lines = text.splitlines()
    end = len(lines) if limit is None else offset + limit
    return FileContent(path, encoding, tuple(lines[offset:end]), offset, len(lines), size)


def replace_exact(path: str, text: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
    """``text`` with ``old`` replaced and the count; a conflict is an error the model can fix."""
    if not old:
        raise EditConflictError("old_string is empty: give the exact text to replace.")
    count = text.count(old)
    if count == 0:
        raise EditConflictError(
            f"old_string was not found in {path}: read the file and copy the text exactly, "
            "including whitespace and indentation."
        )
    if count > 1 and not replace_all:
        raise EditConflictError(
            f"old_string occurs {count} times in {path}: include more surrounding lines to make "
            "it unique, or pass replace_all=true to replace every occurrence."
        )
    return text.replace(old, new), count


def require_text(path: str, encoding: Encoding) -> None:
    if encoding != "utf-8":
        raise BinaryFileError(f"{path} is a binary file; it cannot be edited as text.")


def compile_regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as error:
        raise InvalidPatternError(
            f"Invalid regular expression {pattern!r}: {error}. Escape special characters "
            "such as ( [ . * with a backslash to search for them literally."
        ) from error


def grep_lines(regex: re.Pattern[str], text: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(text.splitlines(), 1) if regex.search(line)]
