"""Reading the messages a trace stored: the one reader of transcripts, span views and re-runs.

The tracer stores a message as a dict (``type`` is ``human``, ``ai``, ``tool`` or ``system``,
with ``content``, ``name``, ``tool_calls``, ``tool_call_id``, ``status``); what it stores as
given is what users pass, such as ``{"role": "user", ...}`` dicts and ``("user", "text")``
pairs. A value it shortened says so: a string ends ``… [N more chars]``, a list holds
``… N more items``, a mapping a ``"…"`` key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)

from nbagents.tracing._jsonready import items_left_out

__all__ = [
    "call_parts",
    "compact_json",
    "content_text",
    "is_message",
    "message_text",
    "message_type",
    "reply",
    "stored_messages",
    "to_message",
    "tool_calls",
    "tool_result",
    "was_cut",
]

_ROLES = {"user": "human", "assistant": "ai"}
_PAIR_ROLES = ("human", "ai", "tool", "system", *_ROLES)
_HOLDERS = ("messages", "update", "generations", "output", "message")
"""Where a value holds its messages: a state, a ``Command`` update, an LLM result."""
_CUT = re.compile(r"… \[\d+ more chars\]$")
# One encoder: ``json.dumps`` with options builds a new one per call.
_compact = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode


def compact_json(value: Any) -> str:
    """``value`` as one line of JSON (a string as it is), ``str()`` where JSON cannot say it."""
    if isinstance(value, str):
        return value
    try:
        return _compact(value)
    except (TypeError, ValueError):
        return str(value)


def message_type(message: Mapping[str, Any]) -> str:
    """``human``, ``ai``, ``tool``, ``system``, or the other role the message names."""
    kind = str(message.get("type") or message.get("role") or "")
    return _ROLES.get(kind, kind)


def is_message(value: Any) -> bool:
    return (
        isinstance(value, Mapping) and "content" in value and ("type" in value or "role" in value)
    )


def stored_messages(value: Any) -> tuple[list[Mapping[str, Any]], int]:
    """Every message in ``value`` (a message, a list of them, ``{"messages": …}``, a
    ``Command`` update, an LLM result), as stored; and how many the tracer left out of them."""
    found: list[Mapping[str, Any]] = []
    return found, _collect(value, found, 0)


def _collect(value: Any, found: list[Mapping[str, Any]], depth: int) -> int:
    if depth > 4:
        return 0
    if isinstance(value, Mapping):
        if is_message(value):
            found.append(value)
            return 0
        holder = next((k for k in _HOLDERS if k in value), None)
        return 0 if holder is None else _collect(value[holder], found, depth + 1)
    if not isinstance(value, list | tuple):
        return 0
    if len(value) == 2 and isinstance(value[1], str) and value[0] in _PAIR_ROLES:
        found.append({"type": _ROLES.get(value[0], value[0]), "content": value[1]})
        return 0
    return items_left_out(value) + sum(_collect(item, found, depth + 1) for item in value)


def reply(outputs: Any) -> Mapping[str, Any] | None:
    """A model call's reply; of several generations the first, which is what an agent uses."""
    if isinstance(outputs, str):
        return {"type": "ai", "content": outputs}
    found = stored_messages(outputs)[0]
    return dict(found[0]) if found else None


def tool_result(outputs: Any, call_id: str) -> Mapping[str, Any] | None:
    """The ToolMessage a tool call's output holds (alone, or in a ``Command`` update): the one
    answering ``call_id``, else the last."""
    if isinstance(outputs, str):
        return {"type": "tool", "content": outputs, "tool_call_id": call_id}
    found = [m for m in stored_messages(outputs)[0] if message_type(m) == "tool"]
    match = [m for m in found if m.get("tool_call_id") == call_id] or found
    return dict(match[-1]) if match else None


def tool_calls(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [c for c in message.get("tool_calls") or () if isinstance(c, Mapping)]


def call_parts(call: Mapping[str, Any]) -> tuple[Any, Any]:
    """A tool call's name and arguments, in LangChain's shape or OpenAI's raw one."""
    fn = call.get("function")
    if isinstance(fn, Mapping):
        return fn.get("name"), fn.get("arguments")
    return call.get("name"), call.get("args")


def content_text(content: Any, dumps: Callable[[Any], str] = compact_json) -> str:
    """A stored content as text: content blocks' texts joined, other values through ``dumps``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text") or ""))
            else:
                parts.append(dumps(block))
        return "\n".join(parts)
    return "" if content is None else dumps(content)


def message_text(message: Mapping[str, Any]) -> str:
    return content_text(message.get("content"))


def to_message(message: Mapping[str, Any]) -> BaseMessage:
    """A stored message as the LangChain message it was."""
    kind = message_type(message)
    content = message.get("content")
    if not isinstance(content, str | list):
        content = compact_json(content)
    name = message.get("name")
    extra: dict[str, Any] = {"name": str(name)} if name else {}
    if kind == "system":
        return SystemMessage(content=content, **extra)
    if kind == "human":
        return HumanMessage(content=content, **extra)
    if kind == "ai":
        calls = [_tool_call(c) for c in tool_calls(message)]
        return AIMessage(content=content, tool_calls=calls, **extra)
    if kind == "tool":
        status = message.get("status")
        return ToolMessage(
            content=content,
            tool_call_id=str(message.get("tool_call_id") or ""),
            status=status if status in ("success", "error") else "success",
            artifact=message.get("artifact"),
            **extra,
        )
    return ChatMessage(content=content, role=kind or "other", **extra)


def _tool_call(call: Mapping[str, Any]) -> ToolCall:
    name, args = call_parts(call)
    args = args if isinstance(args, dict) else {"_": args}
    return ToolCall(name=str(name or ""), args=args, id=call.get("id"), type="tool_call")


def was_cut(value: Any) -> bool:
    """Whether the tracer shortened ``value`` anywhere in it."""
    if isinstance(value, str):
        return bool(_CUT.search(value))
    if isinstance(value, Mapping):
        return "…" in value or any(was_cut(v) for v in value.values())
    if isinstance(value, list):
        return bool(items_left_out(value)) or any(was_cut(v) for v in value)
    return False
