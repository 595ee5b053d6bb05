"""The runs a ``Tracer`` has open, and the life of their spans: opened, ended, failed, cut off.

The tracer's callbacks say what a LangChain event means; this keeps what they share: a frame
per open run (by LangChain run id), the trace's clock, where each tool call sits in the model
reply that made it, and the pauses (:class:`~nbagents.tracing.pending.PausedSpans`). Every
change happens under the trace's lock.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from nbagents._contract import MEMORY_CONTENTS_KEY
from nbagents.tracing._attributes import SpanAttributes
from nbagents.tracing._classify import agent_of, error_status, step_of
from nbagents.tracing._extract import error_text, offered_skills
from nbagents.tracing._jsonready import deferred
from nbagents.tracing._plan import loaded_memory, next_plan
from nbagents.tracing._runs import AgentFrame, RunFrame
from nbagents.tracing._statediff import node_updates
from nbagents.tracing.model import Span, SpanKind, SpanStatus, Trace
from nbagents.tracing.pending import PausedSpans, is_pause, thread_of
from nbagents.tracing.span import AGENT_KINDS

__all__ = ["OpenRuns", "new_span"]


class OpenRuns:
    """The frames of the runs a tracer has seen start, and their spans in ``trace``."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.pauses = PausedSpans()
        self._runs: dict[UUID, RunFrame] = {}
        self._calls: dict[tuple[str | None, str], SpanAttributes] = {}
        """(agent span id, tool call id) → ``batch`` (the model span id) and ``call_index``."""
        self._origin: float | None = None
        self._lock = trace.lock
        self.clock: float | None = None
        """When the event being applied happened (``time.perf_counter()``); ``None`` between
        events, when the time is now."""

    def now(self) -> float:
        """Seconds since the first run started, at the event being applied (or now)."""
        now = time.perf_counter() if self.clock is None else self.clock
        if self._origin is None:
            self._origin = now
        return round(now - self._origin, 6)

    def get(self, run_id: UUID | None) -> RunFrame | None:
        """The frame of an open run (``None`` for a run never seen, or no run)."""
        return self._runs.get(run_id) if run_id else None

    def add(self, run_id: UUID, frame: RunFrame) -> None:
        self._runs[run_id] = frame

    def open(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        md: Mapping[str, Any],
        kind: SpanKind,
        name: str,
        inputs: Any,
        *,
        resume_key: str | None = None,
    ) -> RunFrame:
        """Register a model, tool or retriever run with a new span (not yet added to the trace),
        or with the one a pause left under ``resume_key`` (a ``task`` call's id), reopened."""
        with self._lock:
            parent = self.get(parent_run_id)
            agent = agent_of(md, name, parent)
            thread = thread_of(md)
            key = resume_key
            span = None if key is None else self.pauses.resume(thread, kind, key, self.now())
            if span is None:
                span = new_span(run_id, parent, kind, name, agent, self.now())
                span.inputs = deferred(inputs)
                if resume_key is not None:
                    self.pauses.resumable(span, thread, resume_key)
            frame = RunFrame(span, agent, step_of(md, parent), parent=parent)
            self._runs[run_id] = frame
        return frame

    def publish(self, span: Span) -> None:
        """Add a new span to the trace, or tell it that a reopened one changed."""
        if span.id in self.trace:
            self.trace.changed()
        else:
            self.trace.add(span)

    def agent_offered(self, agent: AgentFrame, outputs: Any) -> None:
        """Record on the agent's span the skills a node (the skills middleware) offered it, and
        the memory files one (the memory middleware) loaded."""
        offered = offered_skills(outputs) or {}
        for update in node_updates(outputs):
            memory = loaded_memory(update, MEMORY_CONTENTS_KEY)
            if memory is not None:
                offered["memory"] = memory
        span = self._agent_span(agent) if offered else None
        if span is not None:
            span.attributes.update(offered)

    def agent_planned(self, agent: AgentFrame, todos: Any, at: float) -> None:
        """Record on the agent's span its plan after a ``write_todos`` call at ``at``.

        The plan is a new list each time: the live view notices a changed plan by its identity.
        """
        span = self._agent_span(agent)
        if span is not None:
            previous = span.attributes.get("plan")
            plan = next_plan(previous if isinstance(previous, list) else [], todos, at)
            span.attributes["plan"] = plan

    def agent_opened(self, agent: AgentFrame, skill: str) -> None:
        """Record on the agent's span that it opened ``skill``."""
        span = self._agent_span(agent)
        if span is not None:
            opened = span.attributes.setdefault("skills_opened", [])
            if skill not in opened:
                opened.append(skill)

    def _agent_span(self, agent: AgentFrame) -> Span | None:
        span_id = agent.span_id
        return self.trace.get(span_id) if span_id is not None and span_id in self.trace else None

    def calls_made(self, run: RunFrame, calls: list[tuple[str, int]]) -> None:
        """The model ``run`` replied with these tool calls (id, position in its reply)."""
        for call_id, index in calls:
            self._calls[(run.agent.span_id, call_id)] = {"batch": run.span.id, "call_index": index}

    def call_position(self, agent: AgentFrame, call_id: str | None) -> SpanAttributes:
        """Which reply of ``agent`` made the tool call ``call_id``, and where in it."""
        return self._calls.get((agent.span_id, call_id), {}) if call_id else {}

    def end(self, run: RunFrame, status: SpanStatus, error: str | None, outputs: Any) -> None:
        span = run.span
        span.end = self.now()
        span.status = status
        span.error = error
        span.outputs = outputs
        self.pauses.ended(span)

    def fail(self, run: RunFrame, error: BaseException) -> None:
        """The run raised ``error``: a failure, a stop, or a pause for a human."""
        status = error_status(error)
        paused = is_pause(error)
        text = None if status == "ok" or paused else error_text(error)
        self.end(run, status, text, None)
        if paused:
            self.pauses.place(run, error)
        if status == "interrupted" and run.parent is not None:
            run.parent.paused_child = True
        if run.span.kind in AGENT_KINDS:
            run.agent.forget_state()
            if status != "ok":
                self._cut_off(run.span, text)

    def _cut_off(self, agent_span: Span, reason: str | None) -> None:
        """Close what an agent left running when it stopped: LangChain reports no end for a
        tool or ``task`` call whose task was cancelled under it, so it would run forever."""
        now = self.now()
        for span in self.trace.descendants(agent_span):
            if span.status == "running":
                span.status = "interrupted"
                span.end = now
                span.error = (
                    f"stopped with its agent: {reason}" if reason else "stopped with its agent"
                )

    def finish(self) -> None:
        """Mark what still runs ``interrupted``: the traced block ended first."""
        with self._lock:
            for run in self._runs.values():
                if run.span.status == "running":
                    run.span.status = "interrupted"
                    run.span.error = "still running when the trace ended"


def new_span(
    run_id: UUID,
    parent: RunFrame | None,
    kind: SpanKind,
    name: str,
    agent: AgentFrame,
    start: float,
) -> Span:
    """The span of a run that starts now, under ``parent`` and in ``agent``."""
    return Span(
        id=str(run_id),
        parent_id=parent.span.id if parent else None,
        kind=kind,
        name=name,
        agent=agent.name,
        depth=agent.depth,
        start=start,
    )
