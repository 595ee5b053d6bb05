"""Turning run inputs and outputs into bounded, JSON-ready data.

Messages become dicts (``type``, ``content``, ``name``, ``tool_calls``, ``tool_call_id``,
``status``), pydantic models and dataclasses become dicts, LangGraph ``Command``/``Send`` become
tagged dicts, and anything else becomes its ``repr``. Strings, containers, nesting and the total
size are bounded, so a trace of a long run stays small enough to display and save.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
import uuid
from collections.abc import Iterable, Mapping, Set
from pathlib import PurePath
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage
from pydantic import BaseModel

from nbagents._contract import describe_size

__all__ = [
    "HEAD_ITEMS",
    "MAX_CHARS",
    "MAX_ITEMS",
    "MAX_STRING",
    "Deferred",
    "deferred",
    "items_left_out",
    "jsonready",
    "shape",
]

MAX_STRING = 20_000
"""Longest string kept whole; longer ones are cut with a note of how much was dropped."""
MAX_ITEMS = 200
"""Most items kept of one list or mapping."""
HEAD_ITEMS = 20
"""Of a list cut short, how many of its first items are kept; the rest of those kept are its
last ones."""
MAX_DEPTH = 12
MAX_CHARS = 200_000
"""Rough budget of characters for one converted value."""


@dataclasses.dataclass(slots=True)
class _Budget:
    remaining: int


def jsonready(value: Any, *, max_chars: int = MAX_CHARS) -> Any:
    """A JSON-ready copy of ``value``, bounded to about ``max_chars`` characters."""
    return _convert(value, _Budget(max_chars), 0)


_PENDING = object()


@dataclasses.dataclass(slots=True, eq=False, repr=False)
class Deferred:
    """A value as a callback gave it, made JSON-ready (once) when first read.

    Converting every model prompt, tool result and node output while the run goes on was most
    of what tracing cost, and most of it is never looked at: a span keeps the reference, and
    ``Span.inputs``/``outputs`` convert it when a view, an export or a file reads them. The
    converted value is kept here and the reference dropped; two threads reading at once may both
    convert, to equal values.
    """

    _value: Any
    _max_chars: int
    _result: Any = _PENDING

    def resolve(self) -> Any:
        result = self._result
        if result is _PENDING:
            try:
                result = jsonready(self._value, max_chars=self._max_chars)
            except Exception as error:  # read long after the run: a reader must not break
                result = f"<not recorded: {type(error).__name__}: {error}>"
            self._result = result
            self._value = None
        return result


def deferred(value: Any, *, max_chars: int = MAX_CHARS) -> Any:
    """``value`` to be converted when read (see :class:`Deferred`); plain scalars at once."""
    cls = type(value)
    if cls is dict or cls is list:
        return Deferred(value, max_chars)
    if value is None or isinstance(value, bool | int | float):
        return jsonready(value)
    if isinstance(value, str) and len(value) <= MAX_STRING:
        return jsonready(value, max_chars=max_chars)
    return Deferred(value, max_chars)


def shape(value: Any) -> Any:
    """What a plumbing span carried, without copying it: ``{"messages": "12 items", …}``.

    LangGraph's node wrappers pass the whole agent state in and out; the visible spans already
    hold that content, and converting it again for every node run would double the tracing cost.
    """
    if isinstance(value, Mapping):
        return {str(k): describe_size(v) for k, v in value.items()}
    return describe_size(value)


def _string(text: str, budget: _Budget) -> str:
    limit = max(200, min(MAX_STRING, budget.remaining))
    if len(text) > limit:
        dropped = len(text) - limit
        text = f"{text[:limit]}… [{dropped} more chars]"
    budget.remaining -= len(text)
    return text


def _convert(value: Any, budget: _Budget, depth: int) -> Any:
    # Plain strings, dicts and lists are most of what a run passes: they skip the checks
    # below (each isinstance against an abstract class costs a call into abc).
    cls = type(value)
    if cls is str:
        return _string(value, budget)
    if cls is dict or cls is list:
        if depth >= MAX_DEPTH or budget.remaining <= 0:
            return _string(_short_repr(value), budget)
        if cls is dict:
            return _mapping(value, budget, depth)
        return _sequence(value, budget, depth)
    if value is None or isinstance(value, bool | int):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
            return _string(str(value), budget)
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return _string(value, budget)
    if depth >= MAX_DEPTH or budget.remaining <= 0:
        return _string(_short_repr(value), budget)
    if isinstance(value, BaseMessage):
        return _message(value, budget, depth)
    if isinstance(value, enum.Enum):
        return _convert(value.value, budget, depth + 1)
    if isinstance(value, Mapping):
        return _mapping(value, budget, depth)
    if isinstance(value, list | tuple | Set) or type(value).__name__ == "deque":
        items = sorted(value, key=repr) if isinstance(value, Set) else list(value)
        return _sequence(items, budget, depth)
    kind = type(value).__name__
    if kind in ("Command", "Send") and type(value).__module__.startswith("langgraph"):
        return _langgraph_object(value, budget, depth)
    if isinstance(value, BaseModel):
        try:
            dumped = value.model_dump()
        except Exception:
            return _string(_short_repr(value), budget)
        return _convert(dumped, budget, depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}
        return _mapping(fields, budget, depth)
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    if isinstance(value, BaseException):
        return _string(f"{type(value).__name__}: {value}", budget)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID | PurePath):
        return str(value)
    return _string(_short_repr(value), budget)


def _mapping(value: Mapping[Any, Any], budget: _Budget, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, (key, item) in enumerate(value.items()):
        if i >= MAX_ITEMS or budget.remaining <= 0:
            out["…"] = f"{len(value) - i} more keys"
            break
        out[key if isinstance(key, str) else str(key)] = _convert(item, budget, depth + 1)
    return out


def _sequence(items: list[Any], budget: _Budget, depth: int) -> list[Any]:
    # Newest last: an agent's state ends with its final answer and a model call's input with
    # what it answers, so a list too long or too large keeps its first items (on at most a
    # quarter of the budget) and its last, converted from the end while the budget lasts, and
    # says how many it left out between.
    head: list[Any] = []
    head_budget = budget.remaining - budget.remaining // 4
    for item in items[:HEAD_ITEMS]:
        if budget.remaining <= head_budget and head:
            break
        head.append(_convert(item, budget, depth + 1))
    tail: list[Any] = []
    room = MAX_ITEMS - len(head)
    for item in reversed(items[len(head) :]):
        if len(tail) >= room or budget.remaining <= 0:
            break
        tail.append(_convert(item, budget, depth + 1))
    tail.reverse()
    left_out = len(items) - len(head) - len(tail)
    return [*head, f"… {left_out} more items", *tail] if left_out else head + tail


def items_left_out(value: Iterable[Any]) -> int:
    """How many items the conversion left out of ``value`` (a list it made), 0 if none."""
    for item in value:
        if type(item) is str and item.startswith("… ") and item.endswith(" more items"):
            count = item[2:].split(" ", 1)[0]
            return int(count) if count.isdigit() else 1
    return 0


def _message(message: BaseMessage, budget: _Budget, depth: int) -> dict[str, Any]:
    kind = message.type  # a chunk's type is its class name: AIMessageChunk is an "ai" message
    if kind.endswith("MessageChunk"):
        kind = kind.removesuffix("MessageChunk").lower()
    data: dict[str, Any] = {"type": kind, "content": _convert(message.content, budget, depth + 1)}
    if message.name:
        data["name"] = message.name
    # Read as a field: a pydantic model answers a missing attribute by raising, which is slow,
    # and most messages are not AI ones.
    calls = vars(message).get("tool_calls")
    if calls:
        data["tool_calls"] = [
            {
                "name": c.get("name"),
                "args": _convert(c.get("args"), budget, depth + 2),
                "id": c.get("id"),
            }
            for c in calls
        ]
    if isinstance(message, ToolMessage):
        data["tool_call_id"] = message.tool_call_id
        data["status"] = message.status
        if message.artifact is not None:
            data["artifact"] = _convert(message.artifact, budget, depth + 1)
    return data


def _langgraph_object(value: Any, budget: _Budget, depth: int) -> dict[str, Any]:
    if type(value).__name__ == "Send":
        return {
            "type": "send",
            "node": str(getattr(value, "node", "")),
            "arg": _convert(getattr(value, "arg", None), budget, depth + 1),
        }
    data: dict[str, Any] = {"type": "command"}
    for attr in ("update", "goto", "resume", "graph"):
        item = getattr(value, attr, None)
        if item is not None and item != ():
            data[attr] = _convert(item, budget, depth + 1)
    return data


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception as error:  # a broken __repr__ must not break tracing
        text = f"<{type(value).__name__} (repr failed: {type(error).__name__})>"
    return text
