"""The view of a trace, built once and then kept up to date by changed spans only.

:class:`ViewBuilder` follows one trace. Each :meth:`~ViewBuilder.update` takes, under the
trace's lock, a copy of only the spans that changed since the last one (a cheap fingerprint per
span says which; a finished model or tool call never changes again and is read in place), then
updates the tree, the token roll-ups (along the changed span's ancestors only), costs, agent
rows and timeline rows that depend on them, and returns what changed.
:meth:`~ViewBuilder.view_json` is the whole view (the static HTML draws it, the live widget
gets it first); :meth:`~ViewBuilder.patch_json` is what changed (the widget applies it in
place). :meth:`~ViewBuilder.view` and :meth:`~ViewBuilder.patch` are the same records parsed.

The builder keeps each record as JSON text, made when its span changes: a whole view of a large
run is then a join of unchanged texts, and the builder adds few objects for the garbage
collector to walk while the agent runs (every such object slows each full collection of the
agent's own process).

Which spans changed is found by :mod:`nbagents.display._fingerprints`; the tree (node ids,
order, depths) is kept by :mod:`nbagents.display._tree`, the token and cost sums by
:mod:`nbagents.display._rollups`; what one span shows is in
:mod:`nbagents.display._spanview`, the record types in :mod:`nbagents.display._records`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from nbagents._tokens import TokenUsage
from nbagents.display._conversation import conversation_page, conversation_view, page_count
from nbagents.display._costview import format_cost
from nbagents.display._fingerprints import SpanFingerprints
from nbagents.display._format import format_duration, format_tokens, short
from nbagents.display._records import (
    GLYPHS,
    KINDS,
    STATUSES,
    VIEW_VERSION,
    AgentRow,
    ConversationPage,
    Header,
    NodeTexts,
    Segment,
    Stat,
    Texts,
    TimelineRow,
    View,
    ViewNode,
    ViewPatch,
    ViewSummary,
)
from nbagents.display._rollups import UsageRollups
from nbagents.display._sharedtext import SharedTexts, fill_view
from nbagents.display._spanview import details, label, pending_view, state_diff
from nbagents.display._stackview import plan_marks
from nbagents.display._toolbook import ToolBook
from nbagents.display._tree import AGENT_KINDS, VisibleTree
from nbagents.tracing.model import count_failures
from nbagents.tracing.pending import PENDING

if TYPE_CHECKING:
    from nbagents.tracing import Transcript
    from nbagents.tracing.model import Span, SpanAttributes, Trace

__all__ = ["ViewBuilder", "build_view"]

COLUMNS = ["agent", "task", "status", "time", "in", "out", "own total", "incl. sub-agents"]
COST_COLUMNS = ["own cost", "cost incl. sub-agents"]
REASONING_COLUMN = "reasoning"
"""After "out", once a model call of the run reported reasoning tokens (part of "out")."""
COST_LABEL = "cost"
"""The header's cost stat: the static HTML marks its value, which varies with the price table."""
RUNNING = "running…"


def build_view(trace: Trace) -> View:
    """The whole view of ``trace`` (safe while the run goes on: see :class:`ViewBuilder`)."""
    builder = ViewBuilder(trace)
    builder.update()
    return builder.view()


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""A record as compact JSON text (one encoder for all: ``json.dumps`` makes one per call)."""


def _object(head: str, parts: Iterable[tuple[str, str]]) -> str:
    """``head`` (a JSON object's text) with ``parts`` (key, JSON text) added to it."""
    # One join: a part (a node's details, the whole view's nodes) is copied once.
    pieces = [head[:-1]]
    for key, text in parts:
        pieces += (f',"{key}":', text)
    pieces.append("}")
    if head == "{}" and len(pieces) > 2:
        pieces[1] = pieces[1][1:]
    return "".join(pieces)


def _array(texts: Iterable[str]) -> str:
    return "[" + ",".join(texts) + "]"


def _kind(span: Span) -> str:
    return span.kind if span.kind in KINDS else "chain"


def _status(value: str) -> str:
    return value if value in STATUSES else "running"


def _time(span: Span) -> str:
    if span.end is None:
        return RUNNING
    return format_duration(max(span.end - span.start, 0.0))


class _Changes:
    """What one update touched, as span ids."""

    def __init__(self) -> None:
        self.nodes: set[str] = set()
        self.parts: dict[str, set[str]] = {}
        """Span id → the parts of its node (``details``, ``diff``, ``conversation``) whose text
        changed: a patch carries only those."""
        self.kids: set[str] = set()
        self.agent_rows: set[str] = set()
        self.timeline: set[str] = set()
        self.tools: set[str] = set()
        """Names of the tools whose rows changed (their calls' or turns' nodes did too)."""
        self.roots = False
        self.agents = False
        self.columns = False
        self.texts: set[str] = set()
        """Keys of the long texts first made: the patch carries them."""

    def __bool__(self) -> bool:
        return bool(self.nodes or self.agent_rows or self.timeline or self.roots or self.agents)

    def merge(self, other: _Changes) -> None:
        """Add what ``other`` (a later update) touched: one patch then covers both."""
        self.nodes |= other.nodes
        for sid, parts in other.parts.items():
            self.parts.setdefault(sid, set()).update(parts)
        self.kids |= other.kids
        self.agent_rows |= other.agent_rows
        self.timeline |= other.timeline
        self.tools |= other.tools
        self.roots |= other.roots
        self.agents |= other.agents
        self.columns |= other.columns
        self.texts |= other.texts


class ViewBuilder:
    """The view of one trace, updated incrementally (see the module docstring).

    Not thread-safe: one thread updates it (the live view's flusher, or the caller).
    """

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.rev = 0
        self._fingerprints = SpanFingerprints()
        self._tree = VisibleTree()
        self._usage = UsageRollups()
        self._tools = ToolBook()
        self._details: dict[str, str] = {}
        """Each visible span's details, as JSON text."""
        self._diffs: dict[str, str] = {}
        self._conversations: dict[str, str] = {}
        """Each agent's conversation (a ``ConversationView``), as JSON text."""
        self._paged: set[str] = set()
        """Agents whose conversation has more than its first page."""
        self._shared = SharedTexts()
        """The long texts the details and conversations refer to."""
        self._attrs: dict[str, SpanAttributes] = {}
        """Each visible span's typed attributes, read once per take of the span (the copy
        taken, or a finished call, does not change under the view)."""
        self._heads: dict[str, str] = {}
        """Each visible node's record without its children and parts, as JSON text: a patch
        and the next whole view share it."""
        self._node_text: dict[str, str] = {}
        self._row_text: dict[str, str] = {}
        self._bar_text: dict[str, str] = {}
        """Whole records as JSON text, dropped when they change and made again when asked."""
        self._talking: set[str] = set()
        """Agents whose own steps changed in the update under way."""
        self._errors: set[str] = set()
        self._horizon = 0.0
        self._priced = False
        self._reasoning = False
        self._status = "running"
        self._finished = False
        self._title = ""
        self._waiting = False
        self._by_key: dict[str, str] = {}
        self._keys_seen = -1

    def span_of(self, key: str) -> Span | None:
        """The span a view node id stands for (as of the last update), or ``None``."""
        tree = self._tree
        if self._keys_seen != len(tree.key):
            self._by_key = {k: sid for sid, k in tree.key.items()}
            self._keys_seen = len(tree.key)
        sid = self._by_key.get(key)
        return tree.spans.get(sid) if sid is not None else None

    @property
    def waiting(self) -> bool:
        """Whether the last run is paused, waiting for a decision (as of the last update)."""
        return self._waiting

    # -- reading the trace ---------------------------------------------------------------------

    def update(self) -> _Changes:
        """Take in what changed in the trace since the last call; returns what it touched."""
        trace = self.trace
        with trace.lock:
            dirty = self._fingerprints.changed(trace)
            self._status = _status(trace.status)
            self._finished = bool(trace.finished)
            self._title = trace.title
        changes = _Changes()
        for span, final in dirty:
            self._take(span, changes, final)
        self._converse(self._talking, changes)
        self._talking = set()
        changes.kids.update(p for p in self._tree.settle() if p is not None)
        for sid in changes.nodes:
            self._heads.pop(sid, None)
        for sid in changes.nodes | changes.kids:
            self._node_text.pop(sid, None)
        priced, reasoning = self._usage.costs.priced, bool(self._usage.total.reasoning)
        if (priced, reasoning) != (self._priced, self._reasoning):
            self._priced, self._reasoning = priced, reasoning
            changes.columns = True
            changes.agent_rows.update(self._tree.agents)
        for sid in changes.agent_rows:
            self._row_text.pop(sid, None)
        for sid in changes.timeline:
            self._bar_text.pop(sid, None)
        roots = self._tree.kids[None]
        last = self._tree.spans[roots[-1]] if roots else None
        self._waiting = bool(last and last.status == "interrupted" and last.error is None)
        if changes or dirty:
            self.rev += 1
        return changes

    def _take(self, span: Span, changes: _Changes, final: bool) -> None:
        sid = span.id
        tree = self._tree
        self._horizon = max(self._horizon, span.end if span.end is not None else span.start)
        # A new child changes its parent's children only, which settle() reports (as kids):
        # the parent's own record stays, and is not made again.
        if tree.take(span) and not span.hidden:
            changes.roots |= tree.parent[sid] is None
            changes.agents |= span.kind in AGENT_KINDS
        if not span.hidden:
            changes.nodes.add(sid)
            attrs = self._attrs[sid] = span.typed_attributes()
            pane = self._shared.details(details(span, attrs), changes.texts)
            _keep(self._details, sid, _dumps(pane), changes, "details")
            if span.kind == "subagent":
                _keep(self._diffs, sid, _dumps(state_diff(attrs)), changes, "diff")
            if span.status == "error":
                self._errors.add(sid)
            else:
                self._errors.discard(sid)
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

    def _converse(self, talking: set[str], changes: _Changes) -> None:
        """Rebuild the conversations of the agents whose own steps changed.

        A transcript reads its agent's model and tool calls in place (their messages are set
        whole when a call starts or ends, never changed after) under the trace's lock, taken
        once for all of them. Taken once per agent while hundreds of sub-agents record their
        steps, each take would wait for the GIL.
        """
        if not talking:
            return
        transcripts = []
        with self.trace.lock:
            for sid in talking:
                try:
                    agent = self.trace.get(sid)
                except KeyError:  # a view of spans handed in by hand
                    continue
                transcripts.append((sid, self.trace.transcript(agent)))
        for sid, transcript in transcripts:
            view = conversation_view(transcript, self._key_of, self._title_of)
            if view["left_out"]:
                self._paged.add(sid)
            else:
                self._paged.discard(sid)
            text = _dumps(self._shared.conversation(view, changes.texts))
            if _keep(self._conversations, sid, text, changes, "conversation"):
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
        """Page ``page`` of the conversation of the agent view node ``key`` stands for, as of
        now (``None`` for a node that is no agent): the view holds only the first page."""
        transcript = self._transcript_of(key)
        if transcript is None:
            return None
        return conversation_page(transcript, page, self._key_of, self._title_of)

    def conversation_pages(self, key: str) -> list[ConversationPage]:
        """Every page but the first of the conversation of agent node ``key``, as of now."""
        transcript = self._transcript_of(key)
        if transcript is None:
            return []
        pages = page_count(len(transcript.entries))
        return [
            conversation_page(transcript, n, self._key_of, self._title_of) for n in range(1, pages)
        ]

    def _transcript_of(self, key: str) -> Transcript | None:
        span = self.span_of(key)
        if span is None or span.kind not in AGENT_KINDS:
            return None
        with self.trace.lock:
            try:
                agent = self.trace.get(span.id)
            except KeyError:  # a view of spans handed in by hand
                agent = span
            return self.trace.transcript(agent)

    def long_conversations(self) -> list[str]:
        """The view node ids of the agents whose conversation has more than one page."""
        return [self._tree.key[sid] for sid in self._paged if sid in self._tree.key]

    # -- the records ---------------------------------------------------------------------------

    def _node(self, sid: str, parts: Iterable[str], with_children: bool) -> str:
        """A :class:`ViewNode` as JSON text, with the ``parts`` it has of ``details``, ``diff``
        and ``conversation``."""
        extra: list[tuple[str, str]] = []
        if with_children:
            extra.append(("children", _dumps(self._tree.keys(self._tree.kids.get(sid, ())))))
        texts = {"details": self._details, "diff": self._diffs, "conversation": self._conversations}
        extra += [(part, texts[part][sid]) for part in parts if sid in texts[part]]
        return _object(self._head(sid), extra)

    def _head(self, sid: str) -> str:
        """The node's record but its children and parts, as JSON text."""
        text = self._heads.get(sid)
        if text is not None:
            return text
        span = self._tree.spans[sid]
        attrs = self._attrs[sid]
        name, preview = label(span, attrs)
        tokens = self._usage.including(sid)
        status = _status(span.status)
        parent = self._tree.parent[sid]
        node: ViewNode = {
            "id": self._tree.key[sid],
            "parent": None if parent is None else self._tree.key[parent],
            "depth": self._tree.depth[sid],
            "kind": _kind(span),
            "kind_label": span.kind if span.kind in KINDS and span.kind != "chain" else "step",
            "status": status,
            "glyph": GLYPHS[status],
            "name": name,
            "preview": preview,
            "failed": status == "error",
            "time": _time(span),
            "tokens": f"{format_tokens(tokens.total)} tok" if tokens.total else "",
            "token_table": _token_pairs(tokens),
            "start": span.start,
            "end": span.end,
        }
        pending = attrs.get(PENDING)
        if pending:
            node["pending"] = [pending_view(r) for r in pending]
        text = self._heads[sid] = _dumps(node)
        return text

    def _whole_node(self, sid: str) -> str:
        text = self._node_text.get(sid)
        if text is None:
            text = self._node_text[sid] = self._node(sid, _PARTS, True)
        return text

    def _row(self, sid: str) -> str:
        text = self._row_text.get(sid)
        if text is None:
            text = self._row_text[sid] = _dumps(self._agent_row(sid))
        return text

    def _bar(self, sid: str) -> str:
        text = self._bar_text.get(sid)
        if text is None:
            text = self._bar_text[sid] = _dumps(self._timeline_row(sid))
        return text

    def _agent_row(self, sid: str) -> AgentRow:
        span = self._tree.spans[sid]
        own, total = self._usage.own(sid), self._usage.including(sid)
        status = _status(span.status)
        cells = [
            short(span.name, 40),
            short(self._attrs[sid].get("description")),
            status,
            _time(span),
            format_tokens(own.input),
            format_tokens(own.output),
            *([format_tokens(own.reasoning)] if self._reasoning else []),
            format_tokens(own.total),
            format_tokens(total.total),
        ]
        if self._priced:
            cells += [
                format_cost(self._usage.costs.own(sid)),
                format_cost(self._usage.costs.total(sid)),
            ]
        return {
            "id": self._tree.key[sid],
            "depth": self._tree.agent_depth[sid],
            "status": status,
            "glyph": GLYPHS[status],
            "cells": cells,
        }

    def _timeline_row(self, sid: str) -> TimelineRow:
        span = self._tree.spans[sid]
        status = _status(span.status)
        segments: list[Segment] = []
        for call_id in self._tree.calls.get(sid, ()):
            call = self._tree.spans[call_id]
            segments.append(
                {
                    "id": self._tree.key[call_id],
                    "kind": "model" if call.kind == "model" else "tool",
                    "start": call.start,
                    "end": call.end,
                }
            )
        end = format_duration(span.end) if span.end is not None else format_duration(None)
        row: TimelineRow = {
            "id": self._tree.key[sid],
            "name": short(span.name, 40),
            "depth": self._tree.agent_depth[sid],
            "status": status,
            "glyph": GLYPHS[status],
            "time": f"{format_duration(span.start)} → {end}",
            "start": span.start,
            "end": span.end,
            "segments": segments,
        }
        marks = plan_marks(self._attrs[sid])
        if marks:
            row["marks"] = marks
        return row

    def _header(self) -> Header:
        total = self._usage.total
        stats: list[Stat] = [
            _stat("time", format_duration(self._horizon), varies=True),
            _stat("agents", str(len(self._tree.agent_names))),
            _stat("sub-agent spawns", str(self._tree.spawns)),
            _stat(
                "tokens",
                format_tokens(total.total),
                note=f"({format_tokens(total.input)} in, {format_tokens(total.output)} out)",
            ),
        ]
        if self._waiting:
            stats.append(_stat("", "waiting for a decision", emphasis="waiting"))
        if self._priced:
            stats.append(_stat(COST_LABEL, format_cost(self._usage.costs.trace())))
        if self._errors:
            stats.append(_stat("failed", str(self._failures()), emphasis="error"))
        return {"status": self._status, "title": short(self._title, 120), "stats": stats}

    def _failures(self) -> int:
        return count_failures(
            {sid: self._tree.spans[sid].error for sid in self._errors},
            {sid: self._tree.parent[sid] for sid in self._errors},
        )

    def _columns(self) -> list[str]:
        columns = COLUMNS + COST_COLUMNS if self._priced else list(COLUMNS)
        if self._reasoning:
            columns.insert(columns.index("out") + 1, REASONING_COLUMN)
        return columns

    def _totals(self) -> list[str]:
        total = self._usage.total
        cells = ["all", "", "", ""]
        reasoning = [total.reasoning] if self._reasoning else []
        tokens = [total.input, total.output, *reasoning, total.total, total.total]
        cells += [format_tokens(n) for n in tokens]
        if self._priced:
            cells += [format_cost(self._usage.costs.trace())] * 2
        return cells

    def _summary(self) -> ViewSummary:
        return {
            "version": VIEW_VERSION,
            "rev": self.rev,
            "status": self._status,
            "finished": self._finished,
            "waiting": self._waiting,
            "errors": self._failures(),
            "cost": format_cost(self._usage.costs.trace()) if self._priced else None,
            "duration": self._horizon,
            "header": self._header(),
            "totals": self._totals(),
        }

    def view_json(self) -> str:
        """The whole :class:`View` as JSON text, as of the last :meth:`update`."""
        return _object(
            _dumps(self._summary()),
            [
                ("columns", _dumps(self._columns())),
                ("roots", _dumps(self._tree.keys(self._tree.kids[None]))),
                ("nodes", _array(self._whole_node(s) for s in self._tree.walk())),
                ("agents", _dumps(self._tree.keys(self._tree.agents))),
                ("agent_rows", _array(self._row(a) for a in self._tree.agents)),
                ("timeline", _array(self._bar(a) for a in self._tree.agents)),
                ("tools", self._tools_part(None)),
                ("texts", _dumps(self._shared.table)),
            ],
        )

    def view(self) -> View:
        """The whole view, as of the last :meth:`update`, its long texts in place."""
        return cast(View, self._filled(self.view_json()))

    def _filled(self, text: str) -> dict[str, Any]:
        """A view or patch as JSON ``text``, parsed, its nodes' long texts put back in place."""
        return fill_view(json.loads(text), self._shared.table)

    def snapshot_view(self) -> View:
        """:meth:`view` with its nodes parsed only when read (:class:`NodeTexts`): what the
        bounded snapshot needs of a wide run, without parsing the whole view."""
        view = cast(View, dict(self._summary()))
        view["columns"] = self._columns()
        view["roots"] = self._tree.keys(self._tree.kids[None])
        key = self._tree.key
        texts = {key[s]: self._whole_node(s) for s in self._tree.walk()}
        view["nodes"] = NodeTexts(texts, self._shared.table)
        view["agents"] = self._tree.keys(self._tree.agents)
        view["agent_rows"] = Texts([self._row(a) for a in self._tree.agents])
        view["timeline"] = Texts([self._bar(a) for a in self._tree.agents])
        view["tools"] = json.loads(self._tools_part(None))
        return view

    def _tools_part(self, names: set[str] | None) -> str:
        roots = self._tree.kids[None]
        return self._tools.part(names, self._priced, roots[0] if roots else None)

    def patch_json(self, changes: _Changes) -> str:
        """What :meth:`update` changed (a :class:`ViewPatch`) as JSON text, to apply to the
        view of the revision before."""

        def order(ids: Iterable[str]) -> list[str]:
            return sorted(
                (s for s in ids if s in self._tree.key), key=lambda s: int(self._tree.key[s])
            )

        # A node's details and conversation go only when their text changed: the front end
        # keeps the parts a patch leaves out. At a wide fan-out most updates of an agent are a
        # new step in its conversation, not in its details.
        nodes = (
            self._node(s, changes.parts.get(s, ()), s in changes.kids)
            for s in order(changes.nodes | changes.kids)
        )
        parts = [
            ("nodes", _array(nodes)),
            ("agent_rows", _array(self._row(a) for a in order(changes.agent_rows))),
            ("timeline", _array(self._bar(a) for a in order(changes.timeline))),
        ]
        if changes.roots:
            parts.append(("roots", _dumps(self._tree.keys(self._tree.kids[None]))))
        if changes.agents:
            parts.append(("agents", _dumps(self._tree.keys(self._tree.agents))))
        if changes.columns:
            parts.append(("columns", _dumps(self._columns())))
        if changes.tools or changes.columns:  # a new column: every row again
            parts.append(("tools", self._tools_part(None if changes.columns else changes.tools)))
        if changes.texts:
            table = self._shared.table
            parts.append(("texts", _dumps({k: table[k] for k in sorted(changes.texts, key=int)})))
        return _object(_dumps(self._summary()), parts)

    def patch(self, changes: _Changes) -> ViewPatch:
        """:meth:`patch_json`, parsed, its long texts in place."""
        return cast(ViewPatch, self._filled(self.patch_json(changes)))


_PARTS = ("details", "diff", "conversation")


def _keep(texts: dict[str, str], sid: str, text: str, changes: _Changes, part: str) -> bool:
    """Keep ``text`` as span ``sid``'s ``part``; whether it changed (then ``changes`` says so)."""
    if texts.get(sid) == text:
        return False
    texts[sid] = text
    changes.parts.setdefault(sid, set()).add(part)
    return True


def _stat(
    label: str, value: str, *, note: str = "", emphasis: Any = "", varies: bool = False
) -> Stat:
    return {"label": label, "value": value, "note": note, "emphasis": emphasis, "varies": varies}


def _token_pairs(tokens: TokenUsage) -> list[tuple[str, str]]:
    if not tokens:
        return []
    pairs = [
        ("input", format_tokens(tokens.input)),
        ("output", format_tokens(tokens.output)),
        ("total", format_tokens(tokens.total)),
    ]
    if tokens.reasoning:
        pairs.insert(2, ("reasoning", format_tokens(tokens.reasoning)))
    if tokens.cache_read:
        pairs.append(("cache read", format_tokens(tokens.cache_read)))
    if tokens.cache_write:
        pairs.append(("cache write", format_tokens(tokens.cache_write)))
    return pairs
