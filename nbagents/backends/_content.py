"""Operations on file contents that every backend shares: decoding, windows, edits."""

from __future__ import annotations

import base64
import datetime
from typing import Any

from nbagents.backends._protocol import BackendError, EditConflictError, FileData, ReadResult


def decode(data: bytes) -> tuple[str, str]:
    """Text when the bytes are UTF-8 without NUL bytes, else base64."""
    if b"\x00" not in data:
        try:
            return data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    return base64.b64encode(data).decode("ascii"), "base64"


def text_data(content: str, encoding: str = "utf-8", previous: FileData | None = None) -> FileData:
    """A stored file with ``content``, keeping the creation time of the file it replaces."""
    stamp = datetime.datetime.now(datetime.UTC).isoformat()
    created = previous.get("created_at") if previous is not None else None
    return {
        "content": content,
        "encoding": encoding,
        "created_at": created or stamp,
        "modified_at": stamp,
    }


def data_text(data: FileData | dict[str, Any]) -> str:
    """The stored content as one string.

    Files written by deepagents before 0.5 (and some checkpoints) hold a list of lines.
    """
    content = data.get("content", "")
    if isinstance(content, list):
        return "\n".join(str(line) for line in content)
    return str(content)


def data_bytes(data: FileData) -> bytes:
    text = data_text(data)
    if data.get("encoding", "utf-8") == "base64":
        return base64.b64decode(text)
    return text.encode("utf-8")


def data_size(data: FileData) -> int:
    """The content's size in bytes, from its text alone (a listing decodes nothing)."""
    text = data_text(data)
    if data.get("encoding", "utf-8") == "base64":
        return len(text) * 3 // 4 - text[-2:].count("=")
    return len(text.encode("utf-8"))


BINARY_SUFFIXES = frozenset(
    {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".ico", ".tif", ".tiff", ".pdf"}
    | {".mp3", ".wav", ".ogg", ".flac", ".m4a", ".mp4", ".mkv", ".mov", ".avi", ".webm"}
    | {".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".tar"}
)
"""Files read whole whatever they hold: a line window of a video or an archive means nothing."""


def window(path: str, data: FileData, offset: int, limit: int) -> ReadResult:
    """Lines ``offset`` to ``offset + limit`` of a text file (a binary file comes whole).

    A negative offset reads from the top and a limit below 1 reads nothing, as upstream does:
    the model asked for a window, not for an error.
    """
    text = data_text(data)
    encoding = data.get("encoding", "utf-8")
    whole: FileData = {**data, "content": text, "encoding": encoding}
    dot = path.rfind(".")
    if encoding != "utf-8" or (dot > path.rfind("/") and path[dot:].lower() in BINARY_SUFFIXES):
        return ReadResult(file_data=whole)
    if limit < 1:
        return ReadResult(file_data={**whole, "content": ""})
    # Line endings are kept: the window is the file's own text, byte for byte.
    lines = text.splitlines(keepends=True)
    if not lines:
        return ReadResult(file_data=whole)
    offset = max(offset, 0)
    if offset >= len(lines):
        raise BackendError(f"Line offset {offset} exceeds file length ({len(lines)} lines)")
    end = min(offset + limit, len(lines))
    return ReadResult(
        file_data={**whole, "content": "".join(lines[offset:end])},
        total_lines=len(lines),
        start_line=offset + 1,
        end_line=end,
        next_offset=end if end < len(lines) else None,
    )


def replace_exact(path: str, text: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
    """``text`` with ``old`` replaced and the count; a conflict is an error the model can fix."""
    if not old:
        raise EditConflictError("old_string is empty: give the exact text to replace.")
    if "\r\n" not in text:
        # Windows line endings arrive from models and downloads; an LF file keeps its own.
        old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    count = text.count(old)
    if count == 0:
        if old.endswith("\n") and not text.endswith("\n") and text.endswith(old.rstrip("\n")):
            raise EditConflictError(
                f"old_string ends with a newline, but {path} does not end with one: drop the "
                "final newline from old_string (and new_string)."
            )
        raise EditConflictError(
            f"old_string was not found in {path}: read the file and copy the text exactly, "
            "including whitespace and indentation."
        )
    if count > 1 and not replace_all:
        raise EditConflictError(
            f"old_string appears {count} times in {path}: include more surrounding lines to make "
            "it unique, or pass replace_all=true to replace every occurrence."
        )
    return text.replace(old, new), count
