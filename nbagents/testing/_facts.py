"""What a test asks of a trace, read once: the spawns, the tool calls, and what went wrong.

Everything here reads a finished ``Trace`` and builds plain records, so the assertions and
their failure messages work from the same facts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nbagents.tracing.model import AgentRecord, Span, SpanStatus, Trace
from nbagents.tracing.span import AGENT_KINDS

__all__ = ["Problem", "SpawnFact", "ToolCall", "problems", "spawns", "tool_calls"]


# The words the task tool and LangGraph use when a run hits one of their limits; a failure
# that says one of them is reported as a limit reached rather than as an error of the agent.
LIMIT_MARKERS = {
    "depth limit": "the sub-agent depth limit",
    "Recursion limit": "LangGraph's recursion limit",
}
# How a spec's or a run's ``limits`` say they stopped an agent (``LimitReached``'s text).
REACHED = re.compile(r"(the limit \S+ of .+?) is reached(?: \((.*)\))?")


@dataclass(frozen=True)
class SpawnFact:
    """One sub-agent spawn, as a test sees it."""

    type: str
    description: str
    parent: str
    """The agent that delegated: ``"main"``, or the sub-agent type that spawned this one."""
    depth: int
    status: SpanStatus
    parallel: bool
    """Called in the same model message as another ``task`` call (or, without that record,
    running at the same time as a sibling spawn)."""
    result: str | None
    tokens: int
    """Tokens of its model calls and of every sub-agent under it."""
    error: str | None


@dataclass(frozen=True)
class ToolCall:
    """One tool call of one agent (not ``task`` calls, which are spawns, nor skill loads)."""

    tool: str
    agent: str
    args: Any
    status: SpanStatus
    error: str | None


@dataclass(frozen=True)
class Problem:
    """Something that went wrong, where it started: ``where`` is the path of agents to it."""

    where: str
    what: str
    limit: str | None = None
    """Which limit was reached, when the failure is one."""

    def __str__(self) -> str:
        prefix = f"{self.limit} was reached: " if self.limit else ""
        return f"{self.where}: {prefix}{self.what}"


def spawns(trace: Trace) -> list[SpawnFact]:
    """Every sub-agent spawn of the run, in call order."""
    with trace.lock:
        tasks = [s for s in trace.spans if s.kind == "task"]
        batch_sizes = Counter(_batch(s) for s in tasks if _batch(s) is not None)
        facts: list[SpawnFact] = []

        def visit(parent: AgentRecord | None, agents: Sequence[AgentRecord]) -> None:
            siblings = [r for r in agents if r.kind == "subagent"]
            for record in agents:
                if record.kind == "subagent":
                    task = trace.get(record.task_span_id) if record.task_span_id else None
                    batch = _batch(task) if task is not None else None
                    if batch is not None:
                        parallel = batch_sizes[batch] > 1
                    else:
                        parallel = any(r is not record and _overlap(r, record) for r in siblings)
                    facts.append(
                        SpawnFact(
                            type=record.type,
                            description=record.description,
                            parent=record.parent_agent or (parent.type if parent else ""),
                            depth=record.depth,
                            status=record.status,
                            parallel=parallel,
                            result=record.result,
                            tokens=record.tokens_total.total,
                            error=record.error,
                        )
                    )
                visit(record, record.children)

        visit(None, trace.agents())
        return facts


def tool_calls(trace: Trace) -> list[ToolCall]:
    """Every tool call of every agent, in call order."""
    with trace.lock:
        return [
            ToolCall(s.name, s.agent, s.inputs, s.status, s.error)
            for s in trace.walk()
            if s.kind == "tool"
        ]


def problems(trace: Trace) -> list[Problem]:
    """What went wrong, each failure once, where it started; and a run that did not finish."""
    with trace.lock:
        failed = [s for s in trace.walk() if s.status == "error"]
        found = [
            Problem(_where(trace, s), s.error or "failed", _limit(s.error))
            for s in failed
            if not _passed_up(trace, s)
        ]
        found += _stopped_by_limits(trace)
        for root in trace.visible_roots():
            if root.status == "running":
                found.append(Problem(_where(trace, root), "still running: the run did not end"))
            elif root.status == "interrupted" and root is trace.visible_roots()[-1]:
                found.append(Problem(_where(trace, root), "paused, waiting for a decision"))
        return found


# -- helpers ---------------------------------------------------------------------------------


def _batch(span: Span) -> str | None:
    # The model call whose message held this call: the tracer's record of parallel calls.
    batch = span.typed_attributes().get("batch")
    return batch if isinstance(batch, str) else None


def _overlap(a: AgentRecord, b: AgentRecord) -> bool:
    def end(r: AgentRecord) -> float:
        return r.end if r.end is not None else float("inf")

    return a.start < end(b) and b.start < end(a)


def _where(trace: Trace, span: Span) -> str:
    path: list[str] = []
    step: Span | None = span
    while step is not None:
        if step.kind == "subagent":
            path.append(f"{step.name} {quoted(step.typed_attributes().get('description') or '')}")
        elif step.kind == "agent":
            path.append(step.name)
        elif step is span:
            target = step.typed_attributes().get("subagent_type") if step.kind == "task" else None
            path.append(f"task → {target}" if target else f"{step.kind} {step.name}")
        step = trace.parent(step)
    return " > ".join(reversed(path))


def quoted(value: Any, width: int = 40) -> str:
    """``value`` (its repr unless a string) on one line, cut to ``width``, quoted."""
    text = " ".join((value if isinstance(value, str) else repr(value)).split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def _passed_up(trace: Trace, span: Span) -> bool:
    """A step that failed only because a step under it did (its error ends with that one's)."""
    if not span.error:
        return False
    return any(
        d.status == "error" and d.error and d is not span and span.error.endswith(d.error)
        for d in trace.descendants(span)
    )


def _stopped_by_limits(trace: Trace) -> list[Problem]:
    """The agents a spec's or a run's limit stopped, each limit once: where it stopped the
    deepest agent (a run-wide limit stops the sub-agents running then, and then the run)."""
    stopped = [s for s in trace.walk() if s.status == "limit" and s.kind in AGENT_KINDS]
    reached = {s.id: REACHED.search(s.error or "") for s in stopped}
    limit = {key: found.group(1) if found else None for key, found in reached.items()}
    found: list[Problem] = []
    for s in stopped:
        if any(d.id in limit and limit[d.id] == limit[s.id] for d in trace.descendants(s)):
            continue
        said = reached[s.id]
        what = (said.group(2) or "stopped") if said else s.error or "stopped by a limit"
        found.append(Problem(_where(trace, s), what, limit[s.id] or "a limit"))
    return found


def _limit(error: str | None) -> str | None:
    return next((limit for marker, limit in LIMIT_MARKERS.items() if marker in (error or "")), None)
