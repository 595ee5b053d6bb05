"""Deriving one ``SubAgentRecord`` per spawn from a trace's spans."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbagents.tracing.model import Span, SubAgentRecord

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = ["subagent_records"]


def subagent_records(trace: Trace) -> list[SubAgentRecord]:
    """One record per sub-agent span, in call order (depth first, parallel calls by position).

    Call order, not start order: parallel siblings start in whatever order their threads get
    going, so equal runs give equal lists.
    """
    with trace.lock:
        return [_record(trace, s) for s in trace.walk() if s.kind == "subagent"]


def _record(trace: Trace, span: Span) -> SubAgentRecord:
    attrs: dict[str, Any] = span.attributes
    task = _enclosing_task(trace, span)
    return SubAgentRecord(
        span_id=span.id,
        type=span.name,
        description=str(attrs.get("description", "")),
        parent_agent=str(attrs.get("parent_agent", "")),
        depth=span.depth,
        start=span.start,
        end=span.end,
        status=span.status,
        result=attrs.get("result"),
        tokens_own=trace.own_usage(span),
        tokens_total=trace.usage_including_descendants(span),
        withheld=dict(attrs.get("withheld") or {}),
        passed=dict(attrs.get("passed") or {}),
        returned=tuple(attrs.get("returned") or ()),
        error=span.error,
        task_span_id=task.id if task else None,
    )


def _enclosing_task(trace: Trace, span: Span) -> Span | None:
    parent = trace.parent(span)
    while parent is not None and parent.kind != "task":
        if parent.kind in ("agent", "subagent"):
            return None
        parent = trace.parent(parent)
    return parent
