"""Two runs' agent trees side by side: each agent of one run matched with its counterpart.

An agent is the main agent (a root) or a sub-agent spawn. Under matched parents, children
match by sub-agent type and task description first, then by type in call order; what is left
is an agent one run has and the other has not. So a spawn matches by its path of sub-agent
types from the root and its task, else by order, and a changed prompt moves nothing else.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from nbagents.cost import Cost, Prices
from nbagents.tracing.cost import cost_of_spans
from nbagents.tracing.model import Span, SpanStatus, Trace

Change = Literal["same", "changed", "added", "removed"]


@dataclass(frozen=True)
class AgentRun:
    """One agent of one run, with what the comparison shows of it (sub-agents included)."""

    span: Span
    type: str
    description: str
    status: SpanStatus
    tokens: int
    """Tokens of its model calls and of every sub-agent under it."""
    cost: Cost
    seconds: float | None
    result: str | None
    children: list[AgentRun] = field(default_factory=list)


@dataclass(frozen=True)
class Pair:
    """An agent of run A and its counterpart in run B; either is ``None`` when only one run
    has it."""

    a: AgentRun | None
    b: AgentRun | None
    depth: int
    children: list[Pair] = field(default_factory=list)

    @property
    def either(self) -> AgentRun:
        found = self.a or self.b
        assert found is not None
        return found

    @property
    def change(self) -> Change:
        if self.a is None:
            return "added"
        if self.b is None:
            return "removed"
        same = (
            self.a.status == self.b.status
            and self.a.tokens == self.b.tokens
            and self.a.result == self.b.result
            and self.a.description == self.b.description
            and len(self.a.children) == len(self.b.children)
        )
        return "same" if same else "changed"

    def walk(self) -> Iterator[Pair]:
        yield self
        for child in self.children:
            yield from child.walk()


def agent_tree(trace: Trace, prices: Prices | None = None) -> list[AgentRun]:
    """The run's agents as a tree: its main agents, each with the spawns under it."""
    with trace.lock:
        roots = [s for s in trace.visible_roots() if s.kind in ("agent", "subagent")]
        return [_agent(trace, root, prices) for root in roots]


def _agent(trace: Trace, span: Span, prices: Prices | None) -> AgentRun:
    below = list(trace.descendants(span))
    models = [s for s in below if s.kind == "model"]
    tokens = sum(s.usage.total for s in models)
    children = [_agent(trace, s, prices) for s in _spawns_under(trace, span)]
    attrs = span.typed_attributes()
    result = attrs.get("result") if span.kind == "subagent" else _final_text(span)
    return AgentRun(
        span=span,
        type=span.name,
        description=attrs.get("description", ""),
        status=span.status,
        tokens=tokens,
        cost=cost_of_spans(models, prices),
        seconds=span.duration,
        result=None if result is None else str(result),
        children=children,
    )


def _spawns_under(trace: Trace, span: Span) -> list[Span]:
    """The sub-agents this agent spawned itself, in call order."""
    found: list[Span] = []
    for child in trace.children(span):
        if child.kind == "subagent":
            found.append(child)
        elif child.kind != "agent":
            found.extend(_spawns_under(trace, child))
    return found


def _final_text(span: Span) -> str | None:
    outputs = span.outputs
    messages = outputs.get("messages") if isinstance(outputs, dict) else None
    if isinstance(messages, list) and messages:
        last = messages[-1]
        if isinstance(last, dict):
            content = last.get("content")
            return content if isinstance(content, str) else None
    return None


def align(a: list[AgentRun], b: list[AgentRun], depth: int = 0) -> list[Pair]:
    """Pairs of ``a`` and ``b`` agents: by type and description, then by type in order; the
    rest alone. In ``a``'s order, each of ``b``'s own agents after the one it follows."""
    matched: dict[int, int] = {}
    taken: set[int] = set()
    for key in (lambda r: (r.type, r.description), lambda r: (r.type, "")):
        waiting: dict[tuple[str, str], deque[int]] = {}
        for j, right in enumerate(b):
            if j not in taken:
                waiting.setdefault(key(right), deque()).append(j)
        for i, left in enumerate(a):
            queue = waiting.get(key(left)) if i not in matched else None
            if queue:
                j = queue.popleft()
                matched[i] = j
                taken.add(j)
    pairs: list[Pair] = []
    cursor = 0  # b's agents before it are placed
    for i, left in enumerate(a):
        partner = matched.get(i)
        if partner is not None:
            # b's unmatched agents that come before this match go before it, as added.
            for k in range(cursor, partner):
                if k not in taken:
                    pairs.append(_alone(None, b[k], depth))
            cursor = max(cursor, partner)
            right = b[partner]
            pairs.append(Pair(left, right, depth, align(left.children, right.children, depth + 1)))
        else:
            pairs.append(_alone(left, None, depth))
    pairs.extend(_alone(None, b[k], depth) for k in range(cursor, len(b)) if k not in taken)
    return pairs


def _alone(a: AgentRun | None, b: AgentRun | None, depth: int) -> Pair:
    only = a or b
    assert only is not None
    kids = [_alone(c if a else None, None if a else c, depth + 1) for c in only.children]
    return Pair(a, b, depth, kids)
