"""What one span shows in a view: its tree line (name and preview) and its details pane.

Reads the messages the tracer stored (model inputs and replies, tool results), a tool's
arguments and output, and a sub-agent's state diff. A new span kind gets its line in
:func:`label` and its fields in :func:`details`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nbagents._contract import GENERAL_PURPOSE
from nbagents.display._format import (
    DETAIL_LIMIT,
    INPUT_MESSAGES,
    LABEL_LIMIT,
    MESSAGE_LIMIT,
    SYSTEM_LIMIT,
    as_text,
    compact_json,
    pretty_json,
    short,
    truncate,
)
from nbagents.display._records import (
    DetailField,
    FieldType,
    MessageView,
    PendingView,
    StateDiffView,
    ToolCallView,
)
from nbagents.display._stackview import (
    agent_stack_fields,
    summarization_fields,
    summarization_preview,
)
from nbagents.tracing.messages import (
    call_parts,
    content_text,
    message_type,
    stored_messages,
    tool_calls,
)
from nbagents.tracing.model import STREAMED
from nbagents.tracing.tools import tool_arguments

if TYPE_CHECKING:
    from nbagents.tracing.model import Span, SpanAttributes

__all__ = ["WHOLE_INPUT_BUDGET", "details", "label", "pending_view", "state_diff", "whole_input"]

WHOLE_INPUT_BUDGET = 2_000_000
"""Characters of one model call's whole input sent to the live view; past it, the earliest
messages are left out (and counted): the newest are what the call answered."""


# -- messages ---------------------------------------------------------------------------------

_ROLES = ("human", "ai", "tool", "system")


def _converted(found: list[Mapping[str, Any]], limit: int) -> list[MessageView]:
    """The stored messages ``found``, each content cut at ``limit`` characters."""
    out: list[MessageView] = []
    for value in found:
        calls: list[ToolCallView] = []
        for call in tool_calls(value):
            name, args = call_parts(call)
            args = args if isinstance(args, str) else compact_json(args)
            calls.append({"name": short(name, 60), "args": truncate(args, MESSAGE_LIMIT)})
        msg: MessageView = {
            "role": _role(value),
            "name": short(value.get("name") or "", 60),
            "content": truncate(content_text(value.get("content"), pretty_json), limit),
            "tool_calls": calls,
        }
        if value.get("status") == "error":
            msg["error"] = True
        out.append(msg)
    return out


def _role(message: Mapping[str, Any]) -> str:
    kind = message_type(message)
    return kind if kind in _ROLES else "other"


def _model_inputs(inputs: list[Mapping[str, Any]], left_out: int) -> DetailField:
    """A model call's input: its system prompt (cut) and its latest messages (``left_out``:
    how many the tracer did not keep). Only those are converted: a long run's calls each carry
    the whole conversation so far."""
    system = [m for m in inputs if _role(m) == "system"][:1]
    rest = [m for m in inputs if _role(m) != "system"]
    hidden = max(len(rest) - INPUT_MESSAGES, 0)
    label = "Input messages"
    if hidden:
        label += f" (the last {INPUT_MESSAGES} of {len(rest) + left_out:,}"
        label += " and the system prompt)" if system else ")"
    shown = _converted(system, SYSTEM_LIMIT) + _converted(rest[hidden:], MESSAGE_LIMIT)
    return _field(label, "messages", shown)


def whole_input(span: Span) -> tuple[str, list[MessageView]]:
    """A model call's whole input (every message, each cut at ``DETAIL_LIMIT`` with the cut
    said), for the live view to open on demand; and its label, which says any cut."""
    found, left_out = stored_messages(span.inputs)
    messages = _converted(found, DETAIL_LIMIT)
    kept: list[MessageView] = []
    used = 0
    for message in reversed(messages):
        size = len(message["content"]) + sum(len(c["args"]) for c in message["tool_calls"])
        if kept and used + size > WHOLE_INPUT_BUDGET:
            break
        kept.append(message)
        used += size
    kept.reverse()
    label = f"Whole input ({len(messages):,} messages)"
    if len(kept) < len(messages):
        label = f"Whole input (the last {len(kept):,} of {len(messages):,} messages: the rest "
        label += "would not fit; trace.get(span_id).inputs has them)"
    if left_out:
        label = label[:-1] + f"; the trace left out {left_out:,} between its first and last ones)"
    return label, kept


# -- details ----------------------------------------------------------------------------------


def _field(label: str, kind: FieldType, value: Any) -> DetailField:
    return {"label": label, "type": kind, "value": value}


def _text_field(label: str, value: Any, kind: FieldType = "text") -> DetailField | None:
    text = truncate(value)
    return _field(label, kind, text) if text.strip() else None


def details(span: Span, attrs: SpanAttributes) -> list[DetailField]:
    """The details pane of ``span`` (its token counts are in the node record, not here);
    ``attrs`` is ``span.typed_attributes()``, which the caller reads once for all its uses."""
    fields: list[DetailField | None] = []
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
        fields.extend(_skill_fields(attrs))
        fields.extend(agent_stack_fields(attrs))
    elif span.kind == "skill":
        fields.append(_text_field("Skill", attrs.get("skill")))
        fields.append(_text_field("SKILL.md", attrs.get("path")))
        fields.append(_text_field("Instructions read", _tool_output(span.outputs)))
    elif span.kind == "model":
        fields.append(_text_field("Model", span.model))
        tools = attrs.get("tools")
        if tools:
            fields.append(_text_field("Tools offered", ", ".join(tools)))
        given, left_out = stored_messages(span.inputs)
        if given:
            fields.append(_model_inputs(given, left_out))
        outputs = _converted(stored_messages(span.outputs)[0], DETAIL_LIMIT)
        if outputs:
            fields.append(_field("Reply", "messages", outputs))
        elif span.outputs is not None:
            fields.append(_text_field("Reply", span.outputs, "code"))
        elif streamed := attrs.get(STREAMED):
            fields.append(_text_field("Reply so far (streaming)", streamed))
    elif span.kind == "tool":
        fields.append(_text_field("Arguments", tool_arguments(span), "code"))
        fields.append(_text_field("Output", _tool_output(span.outputs)))
    elif "summarization" in attrs:
        fields.extend(summarization_fields(attrs))
    elif "rubric_pass" in attrs:
        fields.extend(_rubric_fields(attrs))
    else:  # agent
        fields.extend(_skill_fields(attrs))
        fields.extend(agent_stack_fields(attrs))
        inputs = _converted(stored_messages(span.inputs)[0], MESSAGE_LIMIT)
        if inputs:
            fields.append(_field("Input", "messages", inputs))
        elif span.inputs is not None:
            fields.append(_text_field("Input", span.inputs, "code"))
        # Only the last is shown: the main agent's final state holds every message of the run.
        outputs = _converted(stored_messages(span.outputs)[0][-1:], DETAIL_LIMIT)
        if outputs:
            fields.append(_field("Final answer", "messages", outputs))
    return [f for f in fields if f is not None]


def _skill_fields(attrs: SpanAttributes) -> list[DetailField | None]:
    """Which skills an agent was offered, which it opened, and which failed to load."""
    if "skills_offered" not in attrs:
        return []
    opened = set(attrs.get("skills_opened", []))
    listing = ", ".join(f"{s} (opened)" if s in opened else s for s in attrs["skills_offered"])
    return [
        _text_field("Skills offered", listing or "none"),
        _text_field("Skill warnings", "\n".join(attrs.get("skill_warnings", [])), "error"),
    ]


def _rubric_fields(attrs: SpanAttributes) -> list[DetailField | None]:
    """A grading pass of upstream's rubric loop: what the grader decided and what the agent
    was told (the state it graded is the agent's conversation, shown with the agent)."""
    criteria = [
        f"\u2713 {c.get('name', '')}"
        if c.get("passed")
        else f"\u2717 {c.get('name', '')}: {c.get('gap', '')}"
        for c in attrs.get("rubric_criteria", [])
    ]
    return [
        _text_field("Verdict", attrs.get("rubric_verdict", "grading")),
        _text_field("Grader's explanation", attrs.get("rubric_explanation")),
        _text_field("Criteria", "\n".join(criteria)),
        _text_field("Fed back to the agent", attrs.get("rubric_feedback")),
    ]


def _tool_output(outputs: Any) -> Any:
    """What a tool answered: its ToolMessage's content (also inside a ``Command`` update)."""
    found = stored_messages(outputs)[0]
    tools = [m for m in found if message_type(m) == "tool"] or found
    if tools:
        return content_text(tools[-1].get("content"), pretty_json)
    return outputs


def state_diff(attrs: SpanAttributes) -> StateDiffView:
    """A sub-agent's state diff, from its typed attributes."""
    withheld = attrs.get("withheld", {})
    passed = attrs.get("passed", {})
    return {
        "withheld": [(short(k, 60), short(v, 40)) for k, v in sorted(withheld.items())],
        "passed": [(short(k, 60), short(v, 40)) for k, v in sorted(passed.items())],
        "returned": sorted(short(k, 60) for k in attrs.get("returned", [])),
    }


# -- labels -----------------------------------------------------------------------------------


def label(span: Span, attrs: SpanAttributes) -> tuple[str, str]:
    """The node's name and a one-line preview of what it did (``attrs``: as for
    :func:`details`)."""
    name = short(span.name, 40)
    if span.kind == "task":
        kind = attrs.get("subagent_type") or GENERAL_PURPOSE
        return f"task → {short(kind, 40)}", short(attrs.get("description"))
    if span.kind == "subagent":
        result = attrs.get("result")
        return name, short("→ " + as_text(result)) if result else ""
    if span.kind == "model":
        # The last reply's tool names or text, read as stored: its arguments are not shown.
        outputs = stored_messages(span.outputs)[0]
        preview = ""
        if outputs:
            names = Counter(short(call_parts(c)[0], 60) for c in tool_calls(outputs[-1]))
            if names:
                shown = (f"{n} \u00d7{k}" if k > 1 else n for n, k in names.items())
                preview = "calls " + ", ".join(shown)
            else:
                preview = short(content_text(outputs[-1].get("content"), pretty_json))
        elif streamed := attrs.get(STREAMED):  # growing at its end: show the end
            flat = " ".join(as_text(streamed).split())
            preview = flat if len(flat) <= LABEL_LIMIT else "…" + flat[-(LABEL_LIMIT - 1) :]
        return short(span.model or span.name, 40), preview
    if span.kind == "skill":
        return name, short(attrs.get("path"))
    if span.kind == "tool":
        args = tool_arguments(span)  # none: no preview (it read "null")
        return name, short(args if isinstance(args, str) else compact_json(args)) if args else ""
    return name, summarization_preview(attrs) or short(attrs.get("rubric_explanation"))


def pending_view(request: Mapping[str, Any]) -> PendingView:
    """A request the paused run waits for, as the views show it."""
    args = request.get("args") or {}
    if request.get("kind") == "approval":
        shown = (
            ", ".join(f"{k}={v!r}" for k, v in args.items()) if isinstance(args, Mapping) else ""
        )
        title = f"{request.get('tool', '')}({shown})"
    else:
        title = f"interrupt: {compact_json(request.get('value'))}"
    return {
        "key": f"{request.get('interrupt_id', '')}:{request.get('position', 0)}",
        "title": short(title, 200),
        "description": truncate(as_text(request.get("description") or ""), DETAIL_LIMIT),
        "allowed": [str(d) for d in request.get("allowed") or ()],
        "args_json": truncate(pretty_json(args), DETAIL_LIMIT),
    }
