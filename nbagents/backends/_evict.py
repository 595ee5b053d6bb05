"""Large tool results: saved to a file, and replaced in the conversation by a note and a preview.

``FilesystemMiddleware(tool_token_limit_before_evict=...)`` uses this on every tool call but its
own file tools (whose answers are already paged or capped).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.types import Command

from nbagents.backends.prompts import LARGE_TOOL_RESULTS_DIR

CHARS_PER_TOKEN = 4
PREVIEW_LINES = 5
PREVIEW_LINE_CHARS = 1000
KEPT_IN_CONVERSATION = ("ls", "read_file", "write_file", "edit_file", "glob", "grep", "delete")
"""Tools whose results are never saved to a file: the file tools themselves."""
ToolResult = ToolMessage | Command[Any]

NOTE = """The result of tool call {call_id} was too large to keep in the conversation \
({chars} characters), so it was saved to the file {path}.

Read it with read_file, a page at a time (offset and limit, e.g. offset=0, limit=100), or \
search it with grep. Its first and last lines:

{preview}"""


def results_dir(backend: Any) -> str:
    """The directory large results go to on ``backend``: ``large_tool_results/`` under its
    ``artifacts_root`` (a :class:`~nbagents.backends.CompositeBackend` option), else under /."""
    root = getattr(backend, "artifacts_root", "/")
    if not isinstance(root, str) or root in ("", "/"):
        return LARGE_TOOL_RESULTS_DIR
    return root.rstrip("/") + LARGE_TOOL_RESULTS_DIR


def result_path(tool_call_id: str, backend: Any = None) -> str:
    """Where the result of ``tool_call_id`` is saved: a file name without '/', '\\' or '.'."""
    name = re.sub(r"[./\\]", "_", tool_call_id) or "unknown"
    return f"{results_dir(backend)}{name}"


def preview(text: str) -> str:
    """The first and last :data:`PREVIEW_LINES` lines of ``text`` (each cut), numbered."""
    lines = text.splitlines()
    numbered = [f"{n}  {line[:PREVIEW_LINE_CHARS]}" for n, line in enumerate(lines, 1)]
    if len(lines) <= 2 * PREVIEW_LINES:
        return "\n".join(numbered)
    skipped = f"... [{len(lines) - 2 * PREVIEW_LINES} lines not shown] ..."
    return "\n".join([*numbered[:PREVIEW_LINES], skipped, *numbered[-PREVIEW_LINES:]])


def shrink(result: ToolResult, backend: Any, limit_tokens: int) -> ToolResult:
    """``result`` (a ToolMessage or a Command carrying some), its messages over
    ``limit_tokens`` saved to files on ``backend`` and replaced by a note."""
    replaced: dict[int, ToolMessage] = {}
    for message in _large(result, limit_tokens):
        path = result_path(message.tool_call_id, backend)
        replaced[id(message)] = _replacement(message, path, backend.write(path, message.text))
    return _map_messages(result, replaced)


async def ashrink(result: ToolResult, backend: Any, limit_tokens: int) -> ToolResult:
    write = getattr(backend, "awrite", None) or (
        lambda path, text: asyncio.to_thread(backend.write, path, text)
    )
    replaced: dict[int, ToolMessage] = {}
    for message in _large(result, limit_tokens):
        path = result_path(message.tool_call_id, backend)
        replaced[id(message)] = _replacement(message, path, await write(path, message.text))
    return _map_messages(result, replaced)


def _large(result: ToolResult, limit_tokens: int) -> list[ToolMessage]:
    if isinstance(result, Command) and isinstance(result.update, dict):
        messages = list(result.update.get("messages") or [])
    else:
        messages = [result]
    limit = limit_tokens * CHARS_PER_TOKEN
    return [m for m in messages if isinstance(m, ToolMessage) and len(m.text) > limit]


def _map_messages(result: ToolResult, replaced: dict[int, ToolMessage]) -> ToolResult:
    if isinstance(result, Command) and isinstance(result.update, dict):
        messages = result.update.get("messages")
        if not messages:
            return result
        update = {**result.update, "messages": [replaced.get(id(m), m) for m in messages]}
        return Command(graph=result.graph, update=update, resume=result.resume, goto=result.goto)
    return replaced.get(id(result), result)


def _replacement(message: ToolMessage, path: str, write_result: Any) -> ToolMessage:
    """The note that replaces ``message``, or ``message`` itself if it could not be saved."""
    if write_result is None or getattr(write_result, "error", None):
        return message
    text = message.text
    note = NOTE.format(
        call_id=message.tool_call_id,
        chars=len(text),
        path=path,
        preview=preview(text),
    )
    if isinstance(message.content, str):
        return message.model_copy(update={"content": note})
    # Keep the blocks that are not text (images, ...): only the text was saved.
    others = [b for b in message.content if not (isinstance(b, dict) and b.get("type") == "text")]
    others = [b for b in others if not isinstance(b, str)]
    return message.model_copy(update={"content": [{"type": "text", "text": note}, *others]})
