"""One JSON-ready description of a trace, shared by the static HTML and the live widget.

Everything here is plain data: strings are *not* escaped (each renderer escapes for its own
context), every text that came from a model, a tool or state is truncated to a bounded size, and
nothing depends on span ids, object addresses or the order threads happened to start in: node ids
are derived from the position in the visible tree (``"0"``, ``"0.2"``, ``"0.2.1"``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from nbagents._contract import GENERAL_PURPOSE
from nbagents._tokens import TokenUsage

if TYPE_CHECKING:
    from nbagents.tracing.model import Span, Trace

__all__ = [
    "KINDS",
    "STATUSES",
    "build_view",
    "format_duration",
    "format_tokens",
    "short",
    "snapshot",
    "truncate",
]

VIEW_VERSION = 1
KINDS = ("agent", "subagent", "task", "model", "tool", "chain")
STATUSES = ("running", "ok", "error", "interrupted")
LABEL_LIMIT = 80
"""Longest text shown in a tree line or a table cell."""
DETAIL_LIMIT = 10_000
"""Longest text shown in a details pane; the full text stays in the trace data."""
MESSAGE_LIMIT = 1_000
"""Longest message content in a model call's input messages (its reply is shown in full)."""
SYSTEM_LIMIT = 300
"""Longest system prompt shown with a model call: it repeats on every call of an agent."""
INPUT_MESSAGES = 4
"""A model call shows this many of its latest input messages (the rest are counted)."""

Json = dict[str, Any]


# -- formatting -------------------------------------------------------------------------------


def short(text: Any, limit: int = LABEL_LIMIT) -> str:
    """One line, whitespace collapsed, at most ``limit`` characters (``…`` marks a cut)."""
    flat = " ".join(_text(text).split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"


def truncate(text: Any, limit: int = DETAIL_LIMIT) -> str:
    """``text`` as it is, cut at ``limit`` characters with a note of how much was left out."""
    full = _text(text)
    if len(full) <= limit:
        return full
    return f"{full[:limit]}… [{len(full) - limit} more characters]"


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "…"
    # Thresholds sit where rounding would carry over: 9.996 is "10.0 s", 59.96 is "1 min 00 s".
    if seconds < 9.995:
        return f"{seconds:.2f} s"
    if seconds < 59.95:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def format_tokens(n: int) -> str:
    return f"{n:,}"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _json(value)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _usage(usage: TokenUsage) -> Json:
    return {
        "input": usage.input,
        "output": usage.output,
        "total": usage.total,
        "cache_read": usage.cache_read,
    }


def _kind(span: Span) -> str:
    return span.kind if span.kind in KINDS else "chain"


def _status(value: str) -> str:
    return value if value in STATUSES else "running"


# -- messages ---------------------------------------------------------------------------------

_ROLES = {
    "human": "human",
    "user": "human",
    "HumanMessage": "human",
    "ai": "ai",
    "assistant": "ai",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "tool": "tool",
    "ToolMessage": "tool",
    "system": "system",
    "SystemMessage": "system",
}


def _as_message(value: Any) -> Json | None:
    """A message dict (``{"type", "content", ...}`` or LangChain's ``{"type", "data"}``)."""
    if not isinstance(value, Mapping):
        return None
    data = value.get("data")
    if isinstance(data, Mapping) and "content" in data and "type" in value:
        value = {**data, "type": value["type"]}
    if "content" not in value:
        return None
    raw_role = value.get("type") or value.get("role") or "message"
    role = _ROLES.get(str(raw_role), "other")
    calls = []
    for call in value.get("tool_calls") or ():
        if isinstance(call, Mapping):
            fn = call.get("function")
            if isinstance(fn, Mapping):  # OpenAI's raw shape
                name, args = fn.get("name"), fn.get("arguments")
            else:
                name, args = call.get("name"), call.get("args")
            args = args if isinstance(args, str) else _compact(args)
            calls.append({"name": short(name, 60), "args": truncate(args, MESSAGE_LIMIT)})
    msg: Json = {
        "role": role,
        "name": short(value.get("name") or "", 60),
        "content": _content_text(value.get("content")),
        "tool_calls": calls,
    }
    if value.get("status") == "error":
        msg["error"] = True
    return msg


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(_text(block.get("text")))
            else:
                parts.append(_json(block))
        return "\n".join(parts)
    return _text(content)


def _messages(value: Any, depth: int = 0) -> list[Json]:
    """Every message found in ``value`` (a message, a list of them, ``{"messages": …}``)."""
    if depth > 4 or value is None:
        return []
    single = _as_message(value)
    if single is not None:
        return [single]
    if isinstance(value, Mapping):
        for key in ("messages", "update", "generations", "output", "message"):
            if key in value:
                return _messages(value[key], depth + 1)
        return []
    if (  # LangChain's ("user", "text") shorthand
        isinstance(value, list | tuple)
        and len(value) == 2
        and isinstance(value[0], str)
        and value[0] in _ROLES
        and isinstance(value[1], str)
    ):
        return [_as_message({"type": value[0], "content": value[1]}) or {}]
    if isinstance(value, list | tuple):
        out: list[Json] = []
        for item in value:
            out.extend(_messages(item, depth + 1))
        return out
    return []


def _model_inputs(inputs: list[Json]) -> Json:
    """A model call's input: its system prompt (cut) and its latest messages."""
    system = [m for m in inputs if m["role"] == "system"][:1]
    rest = [m for m in inputs if m["role"] != "system"]
    hidden = max(len(rest) - INPUT_MESSAGES, 0)
    label = "Input messages"
    if hidden:
        label += f" (the last {INPUT_MESSAGES} of {len(rest)}"
        label += " and the system prompt)" if system else ")"
    shown = _cap_messages(system, SYSTEM_LIMIT) + _cap_messages(rest[hidden:], MESSAGE_LIMIT)
    return _field(label, "messages", shown)


def _cap_messages(messages: list[Json], limit: int) -> list[Json]:
    return [{**m, "content": truncate(m["content"], limit)} for m in messages]


# -- details ----------------------------------------------------------------------------------


def _field(label: str, kind: str, value: Any) -> Json:
    return {"label": label, "type": kind, "value": value}


def _text_field(label: str, value: Any, kind: str = "text") -> Json | None:
    text = truncate(value)
    return _field(label, kind, text) if text.strip() else None


def _details(trace: Trace, span: Span, tokens: TokenUsage) -> list[Json]:
    attrs = span.attributes
    fields: list[Json | None] = []
    if span.error:
        fields.append(_text_field("Error", span.error, "error"))
    if span.kind == "task":
        fields.append(_text_field("Description", attrs.get("description")))
        fields.append(_text_field("Sub-agent type", attrs.get("subagent_type")))
        fields.append(_text_field("Result", _tool_output(span.outputs)))
    elif span.kind == "subagent":
        fields.append(_text_field("Description", attrs.get("description")))
        fields.append(_text_field("Called by", attrs.get("parent_agent")))
        fields.append(_text_field("Result", attrs.get("result")))
    elif span.kind == "model":
        fields.append(_text_field("Model", span.model))
        tools = attrs.get("tools")
        if tools:
            fields.append(_text_field("Tools offered", ", ".join(map(str, _keys(tools)))))
        inputs = _messages(span.inputs)
        if inputs:
            fields.append(_model_inputs(inputs))
        outputs = _messages(span.outputs)
        if outputs:
            fields.append(_field("Reply", "messages", _cap_messages(outputs, DETAIL_LIMIT)))
        elif span.outputs is not None:
            fields.append(_text_field("Reply", span.outputs, "code"))
    elif span.kind == "tool":
        fields.append(_text_field("Arguments", _tool_args(span.inputs), "code"))
        fields.append(_text_field("Output", _tool_output(span.outputs)))
    else:  # agent
        inputs = _messages(span.inputs)
        if inputs:
            fields.append(_field("Input", "messages", _cap_messages(inputs, MESSAGE_LIMIT)))
        elif span.inputs is not None:
            fields.append(_text_field("Input", span.inputs, "code"))
        outputs = _messages(span.outputs)
        if outputs:
            fields.append(
                _field("Final answer", "messages", _cap_messages(outputs[-1:], DETAIL_LIMIT))
            )
    if tokens:
        fields.append(
            _field(
                "Tokens",
                "kv",
                [
                    ["input", format_tokens(tokens.input)],
                    ["output", format_tokens(tokens.output)],
                    ["total", format_tokens(tokens.total)],
                    *(
                        [["cache read", format_tokens(tokens.cache_read)]]
                        if tokens.cache_read
                        else []
                    ),
                ],
            )
        )
    return [f for f in fields if f is not None]


def _tool_args(inputs: Any) -> Any:
    if isinstance(inputs, str):
        try:
            return json.loads(inputs)
        except ValueError:
            return inputs
    if isinstance(inputs, Mapping) and set(inputs) <= {"input", "args", "inputs"}:
        inner = inputs.get("args", inputs.get("input", inputs.get("inputs")))
        return _tool_args(inner) if isinstance(inner, str) else inner
    return inputs


def _tool_output(outputs: Any) -> Any:
    """What a tool answered: its ToolMessage's content (also inside a ``Command`` update)."""
    found = _messages(outputs)
    tools = [m for m in found if m["role"] == "tool"] or found
    if tools:
        return tools[-1]["content"]
    return outputs


def _diff(span: Span) -> Json:
    attrs = span.attributes
    withheld = attrs.get("withheld") or {}
    passed = attrs.get("passed") or {}
    returned = attrs.get("returned") or ()
    return {
        "withheld": [[short(k, 60), short(v, 40)] for k, v in sorted(_pairs(withheld))],
        "passed": [[short(k, 60), short(v, 40)] for k, v in sorted(_pairs(passed))],
        "returned": sorted(short(k, 60) for k in _keys(returned)),
    }


def _pairs(value: Any) -> Iterable[tuple[str, str]]:
    if isinstance(value, Mapping):
        return [(str(k), _text(v)) for k, v in value.items()]
    return [(str(k), "") for k in _keys(value)]


def _keys(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping | list | tuple | set | frozenset):
        return [str(k) for k in value]
    return []


# -- labels -----------------------------------------------------------------------------------


def _label(span: Span) -> tuple[str, str]:
    """The node's name and a one-line preview of what it did."""
    attrs = span.attributes
    if span.kind == "task":
        kind = attrs.get("subagent_type") or GENERAL_PURPOSE
        return f"task → {short(kind, 40)}", short(attrs.get("description"))
    if span.kind == "subagent":
        result = attrs.get("result")
        return short(span.name, 40), short("→ " + _text(result)) if result else ""
    if span.kind == "model":
        outputs = _messages(span.outputs)
        preview = ""
        if outputs:
            last = outputs[-1]
            calls = last["tool_calls"]
            if calls:
                names = [c["name"] for c in calls]
                preview = "calls " + ", ".join(
                    f"{n} \u00d7{names.count(n)}" if names.count(n) > 1 else n
                    for n in dict.fromkeys(names)
                )
            else:
                preview = short(last["content"])
        return short(span.model or span.name, 40), preview
    if span.kind == "tool":
        args = _tool_args(span.inputs)
        return short(span.name, 40), short(args if isinstance(args, str) else _compact(args))
    return short(span.name, 40), ""


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


# -- the view ---------------------------------------------------------------------------------


def build_view(trace: Trace) -> Json:
    """The whole view of ``trace`` as JSON-ready data (see the module docstring).

    Safe while the run goes on: the trace's lock is held only to copy the spans, so the agent's
    threads wait for a copy, never for the rendering.
    """
    return _build(snapshot(trace))


def snapshot(trace: Trace) -> Trace:
    """A consistent copy of ``trace`` (spans and their attribute dicts), taken under its lock."""
    from nbagents.tracing.model import Trace

    with trace.lock:
        spans = [copy.copy(s) for s in trace.spans]
        for span in spans:
            span.attributes = dict(span.attributes)
        title, finished = trace.title, trace.finished
    copied = Trace(spans, title=title)
    copied.finished = finished
    return copied


def _build(trace: Trace) -> Json:
    nodes: list[Json] = []
    by_id: dict[str, Span] = {}

    def walk(span: Span, node_id: str, parent: str | None, depth: int) -> None:
        kids = trace.visible_children(span)
        kid_ids = [f"{node_id}.{i}" for i in _positions(kids)]
        tokens = span.usage if span.kind == "model" else trace.usage_including_descendants(span)
        name, preview = _label(span)
        node: Json = {
            "id": node_id,
            "parent": parent,
            "depth": depth,
            "kind": _kind(span),
            "name": name,
            "preview": preview,
            "status": _status(span.status),
            "start": span.start,
            "end": span.end,
            "tokens": _usage(tokens),
            "children": kid_ids,
            "details": _details(trace, span, tokens),
        }
        if span.kind == "subagent":
            node["diff"] = _diff(span)
        nodes.append(node)
        by_id[node_id] = span
        for kid, kid_id in zip(kids, kid_ids, strict=True):
            walk(kid, kid_id, node_id, depth + 1)

    for i, root in enumerate(trace.visible_roots()):
        walk(root, str(i), None, 0)

    spans = trace.spans
    horizon = max([s.end if s.end is not None else s.start for s in spans], default=0.0)
    agent_nodes = [n for n in nodes if n["kind"] in ("agent", "subagent")]
    total = trace.total_usage()
    agent_rows = [_agent_row(trace, n, by_id[n["id"]]) for n in agent_nodes]
    return {
        "version": VIEW_VERSION,
        "title": short(trace.title, 120),
        "status": _status(trace.status),
        "finished": bool(trace.finished),
        "duration": horizon,
        "agents": len({n["name"] for n in agent_nodes}),
        "spawns": sum(1 for n in nodes if n["kind"] == "subagent"),
        "errors": sum(1 for n in nodes if n["status"] == "error"),
        "tokens": _usage(total),
        "nodes": nodes,
        "agent_rows": agent_rows,
        "timeline": _timeline(nodes, {r["id"]: r["depth"] for r in agent_rows}, horizon),
    }


def _positions(kids: list[Span]) -> list[int]:
    """Each child's position, stable while parallel siblings are still starting.

    A call's place is its batch's first place plus its index in the AI message, so a sibling
    that starts late does not shift the ids (and the live view's selection) of the others.
    """
    positions: list[int] = []
    first: dict[Any, int] = {}
    free = 0
    for kid in kids:
        batch, index = kid.attributes.get("batch"), kid.attributes.get("call_index")
        if batch is not None and isinstance(index, int):
            position = first.setdefault(batch, free) + index
        else:
            position = free
        positions.append(position)
        free = max(free, position + 1)
    return positions


def _agent_row(trace: Trace, node: Json, span: Span) -> Json:
    own = trace.own_usage(span)
    return {
        "id": node["id"],
        "kind": node["kind"],
        "name": node["name"],
        "depth": sum(1 for _ in _agent_ancestors(trace, span)),
        "description": short(span.attributes.get("description")),
        "status": node["status"],
        "start": span.start,
        "end": span.end,
        "own": _usage(own),
        "total": node["tokens"],
    }


def _agent_ancestors(trace: Trace, span: Span) -> Iterable[Span]:
    parent = trace.parent(span)
    while parent is not None:
        if parent.kind in ("agent", "subagent") and not parent.hidden:
            yield parent
        parent = trace.parent(parent)


def _timeline(nodes: list[Json], depths: Mapping[str, int], horizon: float) -> list[Json]:
    """One row per agent and sub-agent; its model and tool calls as segments inside the bar."""
    scale = 100.0 / horizon if horizon > 0 else 0.0
    by_id = {n["id"]: n for n in nodes}

    def pos(node: Json) -> tuple[float, float]:
        start = float(node["start"])
        end = float(node["end"]) if node["end"] is not None else horizon
        left = min(max(start * scale, 0.0), 100.0)
        width = min(max((end - start) * scale, 0.0), 100.0 - left)
        return round(left, 2), round(width, 2)

    def own_calls(node: Json) -> Iterable[Json]:
        for kid_id in node["children"]:
            kid = by_id[kid_id]
            if kid["kind"] in ("model", "tool"):
                yield kid
            if kid["kind"] in ("model", "tool", "task", "chain"):
                yield from own_calls(kid)

    rows = []
    for node in nodes:
        if node["kind"] not in ("agent", "subagent"):
            continue
        left, width = pos(node)
        segments = []
        for call in own_calls(node):
            s_left, s_width = pos(call)
            segments.append(
                {"id": call["id"], "kind": call["kind"], "left": s_left, "width": s_width}
            )
        rows.append(
            {
                "id": node["id"],
                "name": node["name"],
                "depth": depths.get(node["id"], 0),
                "status": node["status"],
                "left": left,
                "width": width,
                "segments": segments,
            }
        )
    return rows
