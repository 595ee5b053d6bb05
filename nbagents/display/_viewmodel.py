"""The view of a trace, built once and then kept up to date by changed spans only.

Each :meth:`ViewBuilder.update` takes, under the trace's lock, only the spans that changed
(:mod:`~nbagents.display._fingerprints`) and updates the tree (:mod:`~nbagents.display._tree`),
the token and cost roll-ups along their ancestors (:mod:`~nbagents.display._rollups`) and the
records that depend on them. :meth:`~ViewBuilder.view_json` is the whole view (the static HTML
draws it, the live widget gets it first), :meth:`~ViewBuilder.patch_json` what changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, cast

from nbagents.display._conversation import conversation_page, conversation_view, page_count
from nbagents.display._costview import format_cost
from nbagents.display._fingerprints import SpanFingerprints
from nbagents.display._format import dumps, format_tokens, short
from nbagents.display._records import (
    KINDS,
    STATUSES,
    VIEW_VERSION,
    AgentRow,
    ConversationPage,
    TimelineRow,
    ToolsView,
    View,
    ViewNode,
    ViewPatch,
    ViewSummary,
)
from nbagents.display._rollups import UsageRollups
from nbagents.display._rows import agent_row, columns, header, node_head, status_of, timeline_row
from nbagents.display._spanview import details, state_diff
from nbagents.display._toolbook import ToolBook
from nbagents.display._tree import AGENT_KINDS, VisibleTree
from nbagents.tracing.model import count_failures

if TYPE_CHECKING:
    from nbagents.tracing import Transcript
    from nbagents.tracing.model import Span, SpanAttributes, Trace

__all__ = ["ViewBuilder", "build_view"]

_PARTS = ("details", "diff", "conversation")
VOCABULARY = {"kinds": KINDS, "statuses": STATUSES, "agent_kinds": AGENT_KINDS}
"""The span kinds and statuses the front end knows, sent with every whole view."""


def build_view(trace: Trace) -> View:
    """The whole view of ``trace`` (safe while the run goes on: see :class:`ViewBuilder`)."""
    builder = ViewBuilder(trace)
    builder.update()
    return builder.view()


@dataclass
class _Changes:
    """What one update touched, as span ids; ``parts``: span id → the parts of its node that
    changed (a patch carries only those); ``tools``: the names of the tools whose rows
    changed."""

    nodes: set[str] = field(default_factory=set)
    parts: dict[str, set[str]] = field(default_factory=dict)
    kids: set[str] = field(default_factory=set)
    agent_rows: set[str] = field(default_factory=set)
    timeline: set[str] = field(default_factory=set)
    tools: set[str] = field(default_factory=set)
    roots: bool = False
    agents: bool = False
    columns: bool = False

    def __bool__(self) -> bool:
        return bool(self.nodes or self.agent_rows or self.timeline or self.roots or self.agents)

    def merge(self, other: _Changes) -> None:
        """Add what ``other`` (a later update) touched: one patch then covers both."""
        for sid, parts in other.parts.items():
            self.parts.setdefault(sid, set()).update(parts)
        for f in fields(self):
            mine = getattr(self, f.name)
            if isinstance(mine, set):
                mine |= getattr(other, f.name)
            elif isinstance(mine, bool):
                setattr(self, f.name, mine or getattr(other, f.name))

    def keep(self, kept: dict[str, Any], sid: str, record: Any, part: str) -> bool:
        """Keep ``record`` as span ``sid``'s ``part``; whether it changed."""
        if kept.get(sid) == record:
            return False
        kept[sid] = record
        self.parts.setdefault(sid, set()).add(part)
        return True


class ViewBuilder:
    """The view of one trace, updated incrementally (see the module docstring). Not
    thread-safe: one thread updates it (the live view's flusher, or the caller)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.rev = 0
        self._fingerprints = SpanFingerprints()
        self._tree = VisibleTree()
        self._usage = UsageRollups()
        self._tools = ToolBook()
        self._parts: dict[str, dict[str, Any]] = {part: {} for part in _PARTS}
        """Each visible span's parts (records of :data:`_PARTS`), by part then span id."""
        self._paged: set[str] = set()
        """Agents whose conversation has more than its first page."""
        self._attrs: dict[str, SpanAttributes] = {}
        """Each visible span's typed attributes, read once per take of the span."""
        self._talking: set[str] = set()
        """Agents whose own steps changed in the update under way."""
        self._errors: set[str] = set()
        self._horizon = 0.0
        self._priced = False
        self._reasoning = False
        self._status = "running"
        self._finished = False
        self._title = ""
        self.waiting = False
        """Whether the last run is paused, waiting for a decision (as of the last update)."""

    def span_of(self, key: str) -> Span | None:
        """The span a view node id stands for (as of the last update), or ``None``."""
        ids = self._tree.ids
        if not (key.isascii() and key.isdigit()) or int(key) >= len(ids):
            return None
        return self._tree.spans[ids[int(key)]]

    # -- reading the trace ---------------------------------------------------------------------

    def update(self) -> _Changes:
        """Take in what changed in the trace since the last call; returns what it touched."""
        trace = self.trace
        with trace.lock:
            dirty = self._fingerprints.changed(trace)
            self._status = status_of(trace.status)
            self._finished = bool(trace.finished)
            self._title = trace.title
        changes = _Changes()
        for span, final in dirty:
            self._take(span, changes, final)
        self._converse(self._talking, changes)
        self._talking = set()
        changes.kids.update(p for p in self._tree.settle() if p is not None)
        priced, reasoning = self._usage.costs.priced, bool(self._usage.total.reasoning)
        if (priced, reasoning) != (self._priced, self._reasoning):
            self._priced, self._reasoning = priced, reasoning
            changes.columns = True
            changes.agent_rows.update(self._tree.agents)
        roots = self._tree.kids[None]
        last = self._tree.spans[roots[-1]] if roots else None
        self.waiting = bool(last and last.status == "interrupted" and last.error is None)
        if changes or dirty:
            self.rev += 1
        return changes

    def _take(self, span: Span, changes: _Changes, final: bool) -> None:
        sid = span.id
        tree = self._tree
        self._horizon = max(self._horizon, span.end if span.end is not None else span.start)
        # A new child changes its parent's children only, which settle() reports (as kids).
        if tree.take(span) and not span.hidden:
            changes.roots |= tree.parent[sid] is None
            changes.agents |= span.kind in AGENT_KINDS
        if not span.hidden:
            changes.nodes.add(sid)
            attrs = self._attrs[sid] = span.typed_attributes()
            changes.keep(self._parts["details"], sid, details(span, attrs), "details")
            if span.kind == "subagent":
                changes.keep(self._parts["diff"], sid, state_diff(attrs), "diff")
            self._errors.discard(sid)
            if span.status == "error":
                self._errors.add(sid)
            if span.kind in AGENT_KINDS:
                changes.agent_rows.add(sid)
                changes.timeline.add(sid)
                self._talking.add(sid)
            owner = tree.owner.get(sid)
            if owner is not None:
                changes.timeline.add(owner)
                self._talking.add(owner)  # a model or tool call: a step of its agent's conversation
        changes.tools |= self._tools.take(span, tree.key.get(sid))
        if span.kind == "model":
            ancestors = list(tree.ancestors(sid))
            if self._usage.take_call(span, ancestors, final):
                changes.nodes.update(a.id for a in ancestors if not a.hidden)
                changes.agent_rows.update(a.id for a in ancestors if a.kind in AGENT_KINDS)

    def _transcript(self, sid: str) -> Transcript | None:
        """The transcript of agent ``sid``. Under the trace's lock: it reads the agent's model
        and tool calls in place (their messages are set whole, never changed after)."""
        try:
            agent = self.trace.get(sid)
        except KeyError:  # a view of spans handed in by hand
            return None
        return self.trace.transcript(agent)

    def _converse(self, talking: set[str], changes: _Changes) -> None:
        """Rebuild the conversations of the agents whose own steps changed (the trace's lock
        taken once for all: taken per agent while hundreds of sub-agents record their steps,
        each take would wait for the GIL)."""
        if not talking:
            return
        with self.trace.lock:
            transcripts = [(sid, self._transcript(sid)) for sid in talking]
        for sid, transcript in transcripts:
            if transcript is None:
                continue
            view = conversation_view(transcript, self._key_of, self._title_of)
            if view["left_out"]:
                self._paged.add(sid)
            else:
                self._paged.discard(sid)
            if changes.keep(self._parts["conversation"], sid, view, "conversation"):
                changes.nodes.add(sid)

    def _key_of(self, span_id: str | None) -> str | None:
        return self._tree.key.get(span_id) if span_id is not None else None

    def _title_of(self, span_id: str) -> str:
        span = self._tree.spans.get(span_id)
        if span is None:
            return "a sub-agent"
        attrs = self._attrs.get(span_id)  # none for a span a loaded file marks hidden
        task = (attrs if attrs is not None else span.typed_attributes()).get("description")
        return f"{span.name}: {task}" if task else span.name

    def conversation_page(self, key: str, page: int) -> ConversationPage | None:
        """Page ``page`` of the conversation of agent node ``key`` as of now (``None`` for a
        node that is no agent): the view holds only the first page."""
        pages = self._pages(key, [page])
        return pages[0] if pages else None

    def conversation_pages(self, key: str) -> list[ConversationPage]:
        """Every page but the first of the conversation of agent node ``key``, as of now."""
        return self._pages(key, None)

    def _pages(self, key: str, numbers: list[int] | None) -> list[ConversationPage]:
        span = self.span_of(key)
        if span is None or span.kind not in AGENT_KINDS:
            return []
        with self.trace.lock:
            transcript = self._transcript(span.id)
        if transcript is None:
            return []
        if numbers is None:
            numbers = list(range(1, page_count(len(transcript.entries))))
        return [conversation_page(transcript, n, self._key_of, self._title_of) for n in numbers]

    def long_conversations(self) -> list[str]:
        """The view node ids of the agents whose conversation has more than one page."""
        return [self._tree.key[sid] for sid in self._paged if sid in self._tree.key]

    # -- the records ---------------------------------------------------------------------------

    def _agent_row(self, sid: str) -> AgentRow:
        task = self._attrs[sid].get("description")
        return agent_row(self._tree, self._usage, sid, task, self._reasoning, self._priced)

    def _bar(self, sid: str) -> TimelineRow:
        return timeline_row(self._tree, sid, self._attrs[sid])

    def _node(self, sid: str, parts: Iterable[str], with_children: bool) -> ViewNode:
        """A :class:`ViewNode`, with the ``parts`` it has of :data:`_PARTS`."""
        node = cast(dict[str, Any], node_head(self._tree, self._usage, sid, self._attrs[sid]))
        if with_children:
            node["children"] = self._tree.keys(self._tree.kids.get(sid, ()))
        node.update((p, self._parts[p][sid]) for p in parts if sid in self._parts[p])
        return cast(ViewNode, node)

    def _summary(self) -> ViewSummary:
        total, priced = self._usage.total, self._priced
        reasoning = [total.reasoning] if self._reasoning else []
        tokens = [total.input, total.output, *reasoning, total.total, total.total]
        cost = format_cost(self._usage.costs.trace()) if priced else None
        totals = ["all", "", "", "", *map(format_tokens, tokens)]
        failures = count_failures(
            {sid: self._tree.spans[sid].error for sid in self._errors},
            {sid: self._tree.parent[sid] for sid in self._errors},
        )
        failed = failures if self._errors else None
        stats = header(self._tree, self._usage, self._horizon, self.waiting, cost, failed)
        return {
            "version": VIEW_VERSION,
            "rev": self.rev,
            "status": self._status,
            "finished": self._finished,
            "waiting": self.waiting,
            "errors": failures,
            "cost": cost,
            "duration": self._horizon,
            "header": {"status": self._status, "title": short(self._title, 120), "stats": stats},
            "totals": totals if cost is None else [*totals, cost, cost],
        }

    def snapshot_view(self) -> View:
        """The whole view as of the last :meth:`update`, as built: what the snapshot draws. Its
        records are the builder's own (pairs are tuples where :meth:`view` has lists)."""
        agents = self._tree.agents
        return {
            **self._summary(),
            "columns": columns(self._priced, self._reasoning),
            "roots": self._tree.keys(self._tree.kids[None]),
            "nodes": [self._node(s, _PARTS, True) for s in self._tree.walk()],
            "agents": self._tree.keys(agents),
            "agent_rows": [self._agent_row(a) for a in agents],
            "timeline": [self._bar(a) for a in agents],
            "tools": self._tools_part(None),
            "vocabulary": VOCABULARY,
        }

    def view_json(self) -> str:
        """The whole :class:`View` as JSON text, as of the last :meth:`update`."""
        return dumps(self.snapshot_view())

    def view(self) -> View:
        """The whole view, as of the last :meth:`update`, as the front end reads it."""
        return cast(View, json.loads(self.view_json()))

    def _tools_part(self, names: set[str] | None) -> ToolsView:
        roots = self._tree.kids[None]
        return self._tools.part(names, self._priced, roots[0] if roots else None)

    def patch_json(self, changes: _Changes) -> str:
        """What :meth:`update` changed (a :class:`ViewPatch`) as JSON text, to apply to the
        view of the revision before."""

        def order(ids: Iterable[str]) -> list[str]:
            key = self._tree.key
            return sorted((s for s in ids if s in key), key=lambda s: int(key[s]))

        # A node's parts go only when they changed: the front end keeps the parts a patch
        # leaves out (most updates of a wide run's agent are a step of its conversation).
        patch: dict[str, Any] = {
            **self._summary(),
            "nodes": [
                self._node(s, changes.parts.get(s, ()), s in changes.kids)
                for s in order(changes.nodes | changes.kids)
            ],
            "agent_rows": [self._agent_row(a) for a in order(changes.agent_rows)],
            "timeline": [self._bar(a) for a in order(changes.timeline)],
        }
        if changes.roots:
            patch["roots"] = self._tree.keys(self._tree.kids[None])
        if changes.agents:
            patch["agents"] = self._tree.keys(self._tree.agents)
        if changes.columns:
            patch["columns"] = columns(self._priced, self._reasoning)
        if changes.tools or changes.columns:  # a new column: every row again
            patch["tools"] = self._tools_part(None if changes.columns else changes.tools)
        return dumps(patch)

    def patch(self, changes: _Changes) -> ViewPatch:
        """:meth:`patch_json`, parsed."""
        return cast(ViewPatch, json.loads(self.patch_json(changes)))
