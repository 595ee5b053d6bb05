"""A cassette's entries: how a model call is keyed (see ``replay``'s docstring), how its
response is stored and read back, and :func:`closest`, which explains a miss."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import invalid_tool_call, tool_call
from langchain_core.utils.utils import LC_ID_PREFIX
from pydantic import BaseModel

from nbagents.models._cassette import Cassette

__all__ = ["Request", "closest", "count", "plain", "response_entry", "response_message"]

_PREVIEW = 80
_KINDS = (
    (SystemMessage, "system"),
    (HumanMessage, "human"),
    (AIMessage, "ai"),
    (ToolMessage, "tool"),
)


class Request:
    """What identifies one model call in a cassette."""

    def __init__(
        self,
        messages: Sequence[BaseMessage],
        agent: str,
        tools: Sequence[str],
        tool_choice: Any,
    ) -> None:
        canonical = [_canonical(m) for m in messages]
        self.agent = agent
        self.tools = sorted(tools)
        self.digests = [f"{c['type']}:{_digest(c)[:10]}" for c in canonical]
        payload = {
            "agent": agent,
            "tools": self.tools,
            "tool_choice": tool_choice,
            "messages": canonical,
        }
        self.key = _digest(payload)[:24]
        self.last = _describe_message(messages[-1]) if messages else "(no messages)"

    def summary(self) -> dict[str, Any]:
        """What the cassette stores beside the response: enough to explain a later miss."""
        return {
            "agent": self.agent,
            "tools": self.tools,
            "messages": self.digests,
            "last": self.last,
        }


def _canonical(message: BaseMessage) -> dict[str, Any]:
    kind = next((name for cls, name in _KINDS if isinstance(message, cls)), message.type)
    item: dict[str, Any] = {"type": kind, "content": plain(message.content)}
    if isinstance(message, AIMessage) and message.tool_calls:
        item["tool_calls"] = [[c["name"], plain(c["args"])] for c in message.tool_calls]
    if isinstance(message, ToolMessage):
        item["name"] = message.name
        item["status"] = message.status
    return item


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _describe_message(message: BaseMessage) -> str:
    text = " ".join(message.text.split())
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = ", ".join(c["name"] for c in message.tool_calls)
        text = f"{text} [calls {calls}]".strip()
    if len(text) > _PREVIEW:
        text = text[: _PREVIEW - 1] + "…"
    return f"{message.type}: {text!r}"


def plain(value: Any) -> Any:
    """``value`` as plain JSON data (pydantic models dumped, anything else unknown as a string)."""
    return json.loads(json.dumps(value, default=_json_default, ensure_ascii=False))


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


# -- responses ---------------------------------------------------------------------------------


def response_entry(message: BaseMessage) -> dict[str, Any]:
    entry: dict[str, Any] = {"content": plain(message.content)}
    if isinstance(message, AIMessage):
        if message.tool_calls:
            entry["tool_calls"] = [
                {"name": c["name"], "args": plain(c["args"]), "id": c.get("id")}
                for c in message.tool_calls
            ]
        if message.invalid_tool_calls:
            entry["invalid_tool_calls"] = [plain(dict(c)) for c in message.invalid_tool_calls]
        if message.usage_metadata:
            entry["usage_metadata"] = plain(dict(message.usage_metadata))
    if message.response_metadata:
        entry["response_metadata"] = plain(message.response_metadata)
    if message.additional_kwargs:
        entry["additional_kwargs"] = plain(message.additional_kwargs)
    # LangChain's own ids name a run, so they would differ on every recording; a provider's id
    # (``chatcmpl-…``, ``msg_…``) is part of the response and is kept.
    if message.id and not message.id.startswith(LC_ID_PREFIX):
        entry["id"] = message.id
    return entry


def response_message(entry: Mapping[str, Any]) -> AIMessage:
    return AIMessage(
        content=entry["content"],
        tool_calls=[
            tool_call(name=c["name"], args=c["args"], id=c.get("id"))
            for c in entry.get("tool_calls", [])
        ],
        invalid_tool_calls=[
            invalid_tool_call(
                name=c.get("name"), args=c.get("args"), id=c.get("id"), error=c.get("error")
            )
            for c in entry.get("invalid_tool_calls", [])
        ],
        usage_metadata=entry.get("usage_metadata"),
        response_metadata=dict(entry.get("response_metadata", {})),
        additional_kwargs=dict(entry.get("additional_kwargs", {})),
        id=entry.get("id"),
    )


def closest(cassette: Cassette, request: Request) -> str:
    """Where the recording of the same agent that agrees longest with ``request`` parts from it."""
    best: tuple[tuple[int, int], str, Mapping[str, Any]] | None = None
    for key, value in cassette.interactions().items():
        summary = value.get("request") or {}
        if summary.get("agent") != request.agent:
            continue
        digests = list(summary.get("messages") or [])
        pairs = zip(digests, request.digests, strict=False)
        shared = sum(1 for _ in itertools.takewhile(lambda p: p[0] == p[1], pairs))
        # Longest shared prefix first; among equals, the conversation of the closest length.
        rank = (shared, -abs(len(digests) - len(request.digests)))
        if best is None or rank > best[0]:
            best = (rank, key, summary)
    if best is None:
        agents = sorted(
            {str((v.get("request") or {}).get("agent")) for v in cassette.interactions().values()}
        )
        return f"The cassette has no request of this agent; it has: {agents or 'none'}."
    (shared, _), key, summary = best
    size = len(summary.get("messages") or [])
    if shared == size == len(request.digests):
        return (
            f"The closest recording ({key}) has the same messages but other tools: "
            f"{summary.get('tools')}."
        )
    if shared < min(size, len(request.digests)):
        kind = request.digests[shared].split(":", 1)[0]
        return (
            f"The closest recording of this agent ({key}, {count(size, 'message')}) first "
            f"differs at message {shared + 1}, a {kind} message."
        )
    return (
        f"The closest recording of this agent ({key}) has {size} messages and this request "
        f"{len(request.digests)}; they agree up to message {shared}."
    )


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
