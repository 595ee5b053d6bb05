"""Two runs' agent trees side by side: each agent of one run matched with its counterpart.

The trees are ``Trace.agents()``: the main agent and the sub-agents it spawned. Under matched
parents, children match by sub-agent type and task description first, then by type in call
order; what is left is an agent one run has and the other has not. So a spawn matches by its
path of sub-agent types from the root and its task, else by order, and a changed prompt moves
nothing else.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from nbagents.tracing.model import AgentRecord

Change = Literal["same", "changed", "added", "removed"]


@dataclass(frozen=True)
class Pair:
    """An agent of run A and its counterpart in run B; either is ``None`` when only one run
    has it."""

    a: AgentRecord | None
    b: AgentRecord | None
    depth: int
    children: list[Pair] = field(default_factory=list)

    @property
    def either(self) -> AgentRecord:
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
            and self.a.tokens_total.total == self.b.tokens_total.total
            and self.a.result == self.b.result
            and self.a.description == self.b.description
            and len(self.a.spawns) == len(self.b.spawns)
        )
        return "same" if same else "changed"

    def walk(self) -> Iterator[Pair]:
        yield self
        for child in self.children:
            yield from child.walk()


def align(
    a: tuple[AgentRecord, ...] | list[AgentRecord],
    b: tuple[AgentRecord, ...] | list[AgentRecord],
    depth: int = 0,
) -> list[Pair]:
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
    order: list[tuple[AgentRecord | None, AgentRecord | None]] = []
    cursor = 0  # b's agents before it are placed
    for i, left in enumerate(a):
        partner = matched.get(i)
        if partner is not None:
            # b's unmatched agents that come before this match go before it, as added.
            order += [(None, b[k]) for k in range(cursor, partner) if k not in taken]
            cursor = max(cursor, partner)
        order.append((left, None if partner is None else b[partner]))
    order += [(None, b[k]) for k in range(cursor, len(b)) if k not in taken]
    # An agent only one run has is aligned with nothing, and so is every agent under it.
    return [
        Pair(x, y, depth, align(x.spawns if x else (), y.spawns if y else (), depth + 1))
        for x, y in order
    ]
