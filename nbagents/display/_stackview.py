"""What the deep-agent stack shows in the views: an agent's plan as a checklist and the memory
files it loaded, in its details; a summarization step's fold, in the step's own details."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nbagents.display._format import format_duration, format_tokens, short, truncate
from nbagents.display._records import DetailField, PlanItemView, PlanMark
from nbagents.tracing.model import SpanAttributes

__all__ = [
    "PLAN_MARKS",
    "agent_stack_fields",
    "plan_marks",
    "summarization_fields",
    "summarization_preview",
]

PLAN_MARKS = {"completed": "\u2714", "in_progress": "\u25b6", "pending": "\u25cb"}
"""An item's status as a character, so the checklist reads without colours."""


def agent_stack_fields(attrs: SpanAttributes) -> list[DetailField]:
    """The plan and the memory files of an agent, when it has them."""
    fields: list[DetailField] = []
    plan = attrs.get("plan")
    if plan:
        items = [_plan_item(item) for item in plan if isinstance(item, Mapping)]
        done = sum(item["status"] == "completed" for item in items)
        label = f"Plan ({done} of {len(items)} done)"
        fields.append({"label": label, "type": "checklist", "value": items})
    memory = attrs.get("memory")
    if memory is not None:
        value = [[short(path, 120), f"{chars:,} chars"] for path, chars in memory.items()]
        fields.append({"label": "Memory loaded", "type": "kv", "value": value or [["", "none"]]})
    return fields


def _plan_item(item: Mapping[str, Any]) -> PlanItemView:
    status = str(item.get("status"))
    status = status if status in PLAN_MARKS else "pending"  # a class name: only known ones
    started, finished = item.get("started"), item.get("finished")
    when = ""
    if isinstance(started, int | float):
        when = f"started {format_duration(started)}"
        if isinstance(finished, int | float):
            when += f", done {format_duration(finished)}"
    return {
        "status": status,
        "mark": PLAN_MARKS[status],
        "text": short(item.get("content"), 300),
        "when": when,
    }


def plan_marks(attrs: SpanAttributes) -> list[PlanMark]:
    """When each item of the agent's plan started and finished, in time order."""
    marks: list[PlanMark] = []
    for item in attrs.get("plan", []):
        text = short(item.get("content"), 80)
        for kind in ("started", "finished"):
            at = item.get(kind)
            if isinstance(at, int | float):
                marks.append({"at": float(at), "kind": kind, "label": f"{kind}: {text}"})
    marks.sort(key=lambda m: m["at"])
    return marks


def summarization_fields(attrs: SpanAttributes) -> list[DetailField]:
    """What a summarization step folded, where the folded messages went, and the summary."""
    facts = attrs.get("summarization")
    if not facts:
        return []
    path = facts.get("history_path")
    rows = [
        ["Messages folded", f"{facts.get('messages_folded', 0):,}"],
        ["Context before", f"{format_tokens(int(facts.get('tokens_before') or 0))} tokens"],
        ["Context after", f"{format_tokens(int(facts.get('tokens_after') or 0))} tokens"],
    ]
    # The path is long and unbroken: as text it wraps, where a table cell would widen the pane.
    saved = str(path) if path else "not saved: the backend refused the write"
    fields: list[DetailField] = [
        {"label": "Summarization", "type": "kv", "value": rows},
        {"label": "History saved to", "type": "text", "value": saved},
    ]
    if facts.get("summary"):
        fields.append({"label": "Summary", "type": "text", "value": truncate(facts["summary"])})
    return fields


def summarization_preview(attrs: SpanAttributes) -> str:
    """The step's tree line: how much it folded."""
    facts = attrs.get("summarization")
    if not facts:
        return ""
    before = format_tokens(int(facts.get("tokens_before") or 0))
    after = format_tokens(int(facts.get("tokens_after") or 0))
    return f"{facts.get('messages_folded', 0):,} messages folded, {before} → {after} tokens"
