"""The tree the views draw: a trace's visible spans, their node ids, depths and agents' calls.

A hidden span's children hang from its nearest visible ancestor. Node ids are handed out in the
order spans are first seen and never change; children are in call order, settled once per
update.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterable, Iterator
from typing import TYPE_CHECKING

from nbagents.tracing.model import call_order
from nbagents.tracing.span import AGENT_KINDS

if TYPE_CHECKING:
    from nbagents.tracing.model import Span

__all__ = ["AGENT_KINDS", "CALL_KINDS", "VisibleTree"]

CALL_KINDS = ("model", "tool", "skill")
"""Drawn as segments of their agent's timeline bar (a skill load is a file read: a tool)."""


class VisibleTree:
    """The visible tree of one trace, grown one span at a time (see the module docstring).
    ``spans`` holds the latest copy of every span taken in, hidden ones too: the roll-ups walk
    a call's ancestors through them."""

    def __init__(self) -> None:
        self.spans: dict[str, Span] = {}
        self.key: dict[str, str] = {}
        """Node id of each visible span: its place in ``ids``."""
        self.ids: list[str] = []
        self.parent: dict[str, str | None] = {}
        """Nearest visible ancestor of each span (hidden ones too); ``None`` for a root."""
        self.kids: dict[str | None, list[str]] = {None: []}
        """Visible children in call order; ``None`` holds the roots."""
        self.depth: dict[str, int] = {}
        self.agent_depth: dict[str, int] = {}
        """How many visible agents are above each visible agent."""
        self.calls: dict[str, list[str]] = {}
        """Each visible agent's own model, tool and skill calls, in the order first seen."""
        self.owner: dict[str, str] = {}
        """The agent whose timeline bar draws each call."""
        self.agents: list[str] = []
        """Visible agents in tree order, as of the last :meth:`settle`."""
        self._agent_at: dict[str, str | None] = {}
        """Each visible span's nearest visible agent, itself included (the visible parents
        never change, so neither does this)."""
        self.agent_names: Counter[str] = Counter()
        self.spawns = 0
        self._agentful: set[str] = set()
        """Agents and the steps above them: the part of the tree the agents' order needs."""
        self._unordered: set[str | None] = set()
        self._new_agent = False

    def take(self, span: Span) -> bool:
        """Keep ``span`` (a newer copy of a span replaces the older); whether it is new."""
        new = span.id not in self.spans
        self.spans[span.id] = span
        if new:
            self._add(span)
        return new

    def _add(self, span: Span) -> None:
        sid = span.id
        parent = span.parent_id if span.parent_id in self.spans else None
        while parent is not None and self.spans[parent].hidden:
            grand = self.spans[parent].parent_id
            parent = grand if grand in self.spans else None
        self.parent[sid] = parent
        if span.hidden:
            return
        self.key[sid] = str(len(self.ids))
        self.ids.append(sid)
        self.kids.setdefault(parent, []).append(sid)
        self._unordered.add(parent)
        self.depth[sid] = 0 if parent is None else self.depth[parent] + 1
        above = None if parent is None else self._agent_at[parent]
        self._agent_at[sid] = sid if span.kind in AGENT_KINDS else above
        if span.kind in AGENT_KINDS:
            self._new_agent = True
            step: str | None = sid
            while step is not None and step not in self._agentful:
                self._agentful.add(step)
                step = self.parent[step]
            self.agent_names[span.name] += 1
            self.spawns += span.kind == "subagent"
            self.agent_depth[sid] = 0 if above is None else self.agent_depth[above] + 1
            self.calls[sid] = []
        elif span.kind in CALL_KINDS and above is not None:
            self.owner[sid] = above
            self.calls[above].append(sid)

    def settle(self) -> set[str | None]:
        """Put children that came since the last call in call order, and the agents in tree
        order; returns the parents whose children were ordered again."""
        reordered, self._unordered = self._unordered, set()
        for parent in reordered:
            kids = call_order([self.spans[k] for k in self.kids[parent]])
            self.kids[parent] = [k.id for k in kids]
        if self._new_agent:
            self._new_agent = False
            # Walking only the branches that lead to an agent.
            self.agents = [
                s for s in self.walk(self._agentful) if self.spans[s].kind in AGENT_KINDS
            ]
        return reordered

    def keys(self, ids: Iterable[str]) -> list[str]:
        return [self.key[s] for s in ids]

    def ancestors(self, sid: str) -> Iterator[Span]:
        """The spans above ``sid``, hidden ones too, nearest first."""
        parent = self.spans[sid].parent_id
        while parent is not None and parent in self.spans:
            span = self.spans[parent]
            yield span
            parent = span.parent_id

    def walk(self, within: Container[str] | None = None) -> list[str]:
        """Visible spans in tree order (only those in ``within``, when given)."""
        out: list[str] = []
        stack = [r for r in reversed(self.kids[None]) if within is None or r in within]
        while stack:
            sid = stack.pop()
            out.append(sid)
            kids = reversed(self.kids.get(sid, ()))
            stack.extend(kids if within is None else (k for k in kids if k in within))
        return out
