"""``SubAgentRecord``, one sub-agent spawn, and deriving one per spawn from a trace's spans."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nbagents._tokens import TokenUsage
from nbagents.tracing.span import Span, SpanStatus

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = ["SubAgentRecord", "subagent_records"]


@dataclass(frozen=True)
class SubAgentRecord:
    """One spawn of a sub-agent: what it was asked, what it cost, what it was (not) given."""

    span_id: str
    """The id of the sub-agent's span."""
    type: str
    """The sub-agent's type (its spec's name): ``"researcher"``, ``"general-purpose"``, …"""
    description: str
    """The task it was given (the ``task`` tool's ``description``)."""
    parent_agent: str
    """The name of the agent that spawned it."""
    depth: int
    """1 for a sub-agent of the main agent, one more per level of nesting."""
    start: float
    """Seconds since the trace began."""
    end: float | None
    """Seconds since the trace began; ``None`` while it runs."""
    status: SpanStatus
    """Its span's status."""
    result: str | None
    """The text it returned to its parent; ``None`` until it did."""
    tokens_own: TokenUsage
    """Tokens of its own model calls (not of the sub-agents it spawned)."""
    tokens_total: TokenUsage
    """Tokens of the sub-agent and every sub-agent it spawned, recursively."""
    withheld: Mapping[str, str]
    """Parent state keys withheld from the sub-agent → their size (``{"messages": "12 items"}``)."""
    passed: Mapping[str, str]
    """Parent state keys given to the sub-agent → their size."""
    returned: tuple[str, ...]
    """State keys the sub-agent sent back to the parent (besides its one ToolMessage)."""
    error: str | None = None
    """Why the spawn failed; ``None`` unless it did."""
    task_span_id: str | None = None
    """The id of the ``task`` call that spawned it."""

    @property
    def duration(self) -> float | None:
        """Seconds the sub-agent ran; ``None`` while it runs."""
        return None if self.end is None else self.end - self.start

    @property
    def result_preview(self) -> str:
        """The result on one line, cut to 80 characters."""
        text = " ".join((self.result or "").split())
        return text if len(text) <= 80 else text[:79] + "…"


def subagent_records(trace: Trace) -> list[SubAgentRecord]:
    """One record per sub-agent span, in call order (depth first, parallel calls by position).

    Call order, not start order: parallel siblings start in whatever order their threads get
    going, so equal runs give equal lists.
    """
    with trace.lock:
        return [_record(trace, s) for s in trace.walk() if s.kind == "subagent"]


def _record(trace: Trace, span: Span) -> SubAgentRecord:
    attrs = span.typed_attributes()
    task = _enclosing_task(trace, span)
    return SubAgentRecord(
        span_id=span.id,
        type=span.name,
        description=attrs.get("description", ""),
        parent_agent=attrs.get("parent_agent", ""),
        depth=span.depth,
        start=span.start,
        end=span.end,
        status=span.status,
        result=attrs.get("result"),
        tokens_own=trace.own_usage(span),
        tokens_total=trace.usage_including_descendants(span),
        withheld=dict(attrs.get("withheld", {})),
        passed=dict(attrs.get("passed", {})),
        returned=tuple(attrs.get("returned", ())),
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
