"""``AgentRecord``: one agent of a run (the main agent or a sub-agent spawn), and the run's
agents as one tree. Comparison, testing, the notebook facts, the token table and
``Trace.subagents`` all read this tree."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from nbagents._tokens import TokenUsage
from nbagents.tracing.span import AGENT_KINDS, Span, SpanStatus

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = ["AgentRecord", "SubAgentRecord", "agent_records", "agents_under"]


@dataclass(frozen=True)
class AgentRecord:
    """One agent: what it was asked, what it cost, what it was (not) given, whom it spawned."""

    span_id: str
    """The id of the agent's span."""
    kind: Literal["agent", "subagent"]
    """``"agent"`` for a run's main agent (or an agent started inside a step, such as a
    grader), ``"subagent"`` for a spawn."""
    type: str
    """The agent's name; for a spawn its spec's name: ``"researcher"``, ``"general-purpose"``, …"""
    description: str
    """The task it was given (the ``task`` tool's ``description``); empty for a main agent."""
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
    """The text it returned (a main agent: its last message); ``None`` until it did."""
    tokens_own: TokenUsage
    """Tokens of its own model calls (not of the sub-agents it spawned)."""
    tokens_total: TokenUsage
    """Tokens of the agent and every sub-agent it spawned, recursively."""
    withheld: Mapping[str, str]
    """Parent state keys withheld from the sub-agent → their size (``{"messages": "12 items"}``)."""
    passed: Mapping[str, str]
    """Parent state keys given to the sub-agent → their size."""
    returned: tuple[str, ...]
    """State keys the sub-agent sent back to the parent (besides its one ToolMessage)."""
    error: str | None = None
    """Why it failed; ``None`` unless it did."""
    task_span_id: str | None = None
    """The id of the ``task`` call that spawned it."""
    children: tuple[AgentRecord, ...] = ()
    """The agents that ran under it, in call order."""

    @property
    def duration(self) -> float | None:
        """Seconds the agent ran; ``None`` while it runs."""
        return None if self.end is None else self.end - self.start

    @property
    def spawns(self) -> tuple[AgentRecord, ...]:
        """The sub-agents it spawned itself (``children`` without agents started in a step)."""
        return tuple(c for c in self.children if c.kind == "subagent")

    def walk(self) -> Iterator[AgentRecord]:
        """This agent, then every agent under it, depth first in call order."""
        yield self
        for child in self.children:
            yield from child.walk()


SubAgentRecord = AgentRecord
"""The name ``Trace.subagents``' records had before the main agent had one too."""


def agent_records(trace: Trace) -> list[AgentRecord]:
    """The run's top agents, each with the agents under it: every agent span once, in call
    order (not start order: parallel siblings start in whatever order their threads get going,
    so equal runs give equal trees)."""
    with trace.lock:
        return [_record(trace, s) for s in agents_under(trace, None)]


def agents_under(trace: Trace, span: Span | None) -> Iterator[Span]:
    """The agent spans nearest under ``span`` (under no span: the top ones), in call order."""
    for child in trace.children(span):
        if child.kind in AGENT_KINDS:
            yield child
        else:
            yield from agents_under(trace, child)


def _record(trace: Trace, span: Span) -> AgentRecord:
    attrs = span.typed_attributes()
    # The nearest task or agent above it: a task call spawned it, an agent ran it in a step.
    above = next((a for a in trace.ancestors(span) if a.kind in ("task", *AGENT_KINDS)), None)
    spawned = span.kind == "subagent"
    result = attrs.get("result") if spawned else _last_message(span)
    return AgentRecord(
        span_id=span.id,
        kind="subagent" if spawned else "agent",
        type=span.name,
        description=attrs.get("description", ""),
        parent_agent=attrs.get("parent_agent", ""),
        depth=span.depth,
        start=span.start,
        end=span.end,
        status=span.status,
        result=None if result is None else str(result),
        tokens_own=trace.own_usage(span),
        tokens_total=trace.usage_including_descendants(span),
        withheld=dict(attrs.get("withheld", {})),
        passed=dict(attrs.get("passed", {})),
        returned=tuple(attrs.get("returned", ())),
        error=span.error,
        task_span_id=above.id if above is not None and above.kind == "task" else None,
        children=tuple(_record(trace, s) for s in agents_under(trace, span)),
    )


def _last_message(span: Span) -> str | None:
    messages = outputs.get("messages") if isinstance(outputs := span.outputs, dict) else None
    last = messages[-1] if isinstance(messages, list) and messages else None
    content = last.get("content") if isinstance(last, dict) else None
    return content if isinstance(content, str) else None
