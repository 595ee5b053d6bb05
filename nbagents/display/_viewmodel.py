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

Node ids are handed out in the order spans are first seen and never change, so a late
parallel sibling never shifts the ids of the others; the order of children is the call order
(:func:`nbagents.tracing.model.call_order`). What one span shows is in
:mod:`nbagents.display._spanview`, the record types in :mod:`nbagents.display._records`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from nbagents._tokens import TokenUsage
from nbagents.display._costview import CostBook, format_cost
from nbagents.display._format import format_duration, format_tokens, short
from nbagents.display._records import (
    GLYPHS,
    KINDS,
    STATUSES,
    VIEW_VERSION,
    AgentRow,
    Header,
    Segment,
    Stat,
    TimelineRow,
    View,
    ViewNode,
    ViewPatch,
    ViewSummary,
)
from nbagents.display._spanview import details, label, pending_view, state_diff
from nbagents.tracing._pending import PENDING
from nbagents.tracing.model import STREAMED, call_order, count_failures

if TYPE_CHECKING:
    from nbagents.tracing.model import Span, Trace

__all__ = ["ViewBuilder", "build_view"]

_ZERO = TokenUsage()

AGENT_KINDS = ("agent", "subagent")
CALL_KINDS = ("model", "tool", "skill")
"""Drawn as segments of their agent's timeline bar (a skill load is a file read: a tool)."""
COLUMNS = ["agent", "task", "status", "time", "in", "out", "own total", "incl. sub-agents"]
COST_COLUMNS = ["own cost", "cost incl. sub-agents"]
RUNNING = "running…"


def build_view(trace: Trace) -> View:
    """The whole view of ``trace`` (safe while the run goes on: see :class:`ViewBuilder`)."""
    builder = ViewBuilder(trace)
    builder.update()
    return builder.view()


def _dumps(record: object) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def _object(head: str, parts: Iterable[tuple[str, str]]) -> str:
    """``head`` (a JSON object's text) with ``parts`` (key, JSON text) added to it."""
    extra = "".join(f',"{key}":{text}' for key, text in parts)
    if head == "{}":
        return "{" + extra[1:] + "}"
    return head[:-1] + extra + "}"


def _array(texts: Iterable[str]) -> str:
    return "[" + ",".join(texts) + "]"


_FINAL = frozenset({"ok", "error"})
_SETTLING = frozenset({"model", "tool", "chain", "skill"})
"""Kinds the tracer never touches once they ended ok or failed (an agent, a task or a sub-agent
may still get a result, a pause or a resumption; an interrupted step may be answered)."""


def _fingerprint(span: Span) -> tuple[Any, ...]:
    # What the tracer changes on a span after adding it: its end, status and results, its
    # usage, and attributes (a sub-agent's result, a streaming reply).
    attrs = span.attributes
    streamed = attrs.get(STREAMED)
    return (
        span.status,
        span.end,
        span.usage,
        span.model,
        span.error,
        id(span.outputs),
        len(attrs),
        id(attrs.get("result")),
        len(streamed) if isinstance(streamed, str) else 0,
    )


def _snapshot(span: Span) -> Span:
    """A copy of ``span`` the tracer's threads cannot change under the view (and that much
    faster than ``copy.copy``, which goes through pickling's protocol)."""
    copied = object.__new__(type(span))
    copied.__dict__.update(span.__dict__)
    copied.attributes = dict(span.attributes)
    return copied


def _minus(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    return TokenUsage(
        a.input - b.input,
        a.output - b.output,
        a.total - b.total,
        a.cache_read - b.cache_read,
        a.cache_write - b.cache_write,
    )


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
        self.details: set[str] = set()
        self.kids: set[str] = set()
        self.agent_rows: set[str] = set()
        self.timeline: set[str] = set()
        self.roots = False
        self.agents = False
        self.columns = False

    def __bool__(self) -> bool:
        return bool(self.nodes or self.agent_rows or self.timeline or self.roots or self.agents)


class ViewBuilder:
    """The view of one trace, updated incrementally (see the module docstring).

    Not thread-safe: one thread updates it (the live view's flusher, or the caller).
    """

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.rev = 0
        self._fp: dict[str, tuple[Any, ...]] = {}
        self._span: dict[str, Span] = {}
        self._key: dict[str, str] = {}
        self._vparent: dict[str, str | None] = {}
        self._vkids: dict[str | None, list[str]] = {None: []}
        self._depth: dict[str, int] = {}
        self._agent_depth: dict[str, int] = {}
        self._incl: dict[str, TokenUsage] = {}
        """Tokens including descendants; absent while zero."""
        self._model_usage: dict[str, TokenUsage] = {}
        self._agent_own: dict[str, TokenUsage] = {}
        self._calls: dict[str, list[str]] = {}
        self._owner: dict[str, str] = {}
        self._details: dict[str, str] = {}
        """Each visible span's details, as JSON text."""
        self._diffs: dict[str, str] = {}
        self._node_text: dict[str, str] = {}
        self._row_text: dict[str, str] = {}
        self._bar_text: dict[str, str] = {}
        """Whole records as JSON text, dropped when they change and made again when asked."""
        self._errors: set[str] = set()
        self._seen = 0
        """How many of the trace's spans the builder has taken in."""
        self._open: dict[str, Span] = {}
        """Spans taken in that may still change (the trace's own objects): the only ones
        fingerprinted again. Most of a large run settles and is never looked at again."""
        self._agent_names: Counter[str] = Counter()
        self._spawns = 0
        self._agents: list[str] = []
        self._agentful: set[str] = set()
        """Agents and the steps above them: the part of the tree the agents' order needs."""
        self._horizon = 0.0
        self._total = TokenUsage()
        self._costs = CostBook()
        self._priced = False
        self._status = "running"
        self._finished = False
        self._title = ""
        self._waiting = False

    @property
    def waiting(self) -> bool:
        """Whether the last run is paused, waiting for a decision (as of the last update)."""
        return self._waiting

    # -- reading the trace ---------------------------------------------------------------------

    def update(self) -> _Changes:
        """Take in what changed in the trace since the last call; returns what it touched."""
        changes = _Changes()
        trace = self.trace
        with trace.lock:
            fresh = trace.spans_from(self._seen)
            self._seen += len(fresh)
            dirty: list[tuple[Span, bool]] = []
            for span in [*self._open.values(), *fresh]:
                fp = _fingerprint(span)
                if self._fp.get(span.id) == fp:
                    continue
                if span.end is not None and span.status in _FINAL and span.kind in _SETTLING:
                    # Never changed again: read in place, no copy, no fingerprint kept.
                    self._open.pop(span.id, None)
                    self._fp.pop(span.id, None)
                    dirty.append((span, True))
                    continue
                self._open[span.id] = span
                self._fp[span.id] = fp
                dirty.append((_snapshot(span), False))
            self._status = _status(trace.status)
            self._finished = bool(trace.finished)
            self._title = trace.title
        reorder: set[str | None] = set()
        for span, final in dirty:
            self._take(span, changes, reorder, final)
        for parent in reorder:
            kids = call_order([self._span[k] for k in self._vkids[parent]])
            self._vkids[parent] = [k.id for k in kids]
            if parent is not None:
                changes.kids.add(parent)
        for sid in changes.nodes | changes.kids:
            self._node_text.pop(sid, None)
        if changes.agents:
            self._agents = self._agents_in_order()
        priced = self._costs.priced
        if priced != self._priced:
            self._priced = priced
            changes.columns = True
            changes.agent_rows.update(self._agents)
        for sid in changes.agent_rows:
            self._row_text.pop(sid, None)
        for sid in changes.timeline:
            self._bar_text.pop(sid, None)
        roots = self._vkids[None]
        last = self._span[roots[-1]] if roots else None
        self._waiting = bool(last and last.status == "interrupted" and last.error is None)
        if changes or dirty:
            self.rev += 1
        return changes

    def _take(self, span: Span, changes: _Changes, reorder: set[str | None], final: bool) -> None:
        sid = span.id
        old = self._span.get(sid)
        self._span[sid] = span
        self._horizon = max(self._horizon, span.end if span.end is not None else span.start)
        if old is None:
            self._add(span, changes, reorder)
        if not span.hidden:
            changes.nodes.add(sid)
            changes.details.add(sid)
            self._details[sid] = _dumps(details(span))
            if span.kind == "subagent":
                self._diffs[sid] = _dumps(state_diff(span))
            if span.status == "error":
                self._errors.add(sid)
            else:
                self._errors.discard(sid)
            if span.kind in AGENT_KINDS:
                changes.agent_rows.add(sid)
                changes.timeline.add(sid)
            owner = self._owner.get(sid)
            if owner is not None:
                changes.timeline.add(owner)
        if span.kind == "model":
            self._model_changed(span, changes, final)

    def _add(self, span: Span, changes: _Changes, reorder: set[str | None]) -> None:
        sid = span.id
        parent = span.parent_id if span.parent_id in self._span else None
        while parent is not None and self._span[parent].hidden:
            grand = self._span[parent].parent_id
            parent = grand if grand in self._span else None
        self._vparent[sid] = parent
        if span.hidden:
            return
        self._key[sid] = str(len(self._key))
        self._vkids.setdefault(parent, []).append(sid)
        reorder.add(parent)
        self._depth[sid] = 0 if parent is None else self._depth[parent] + 1
        if parent is None:
            changes.roots = True
        else:
            changes.nodes.add(parent)
        if span.kind in AGENT_KINDS:
            changes.agents = True
            above: str | None = sid
            while above is not None and above not in self._agentful:
                self._agentful.add(above)
                above = self._vparent[above]
            self._agent_names[span.name] += 1
            self._spawns += span.kind == "subagent"
            self._agent_depth[sid] = sum(1 for _ in self._visible_agents_above(sid))
            self._calls[sid] = []
        elif span.kind in CALL_KINDS:
            owner = next(iter(self._visible_agents_above(sid)), None)
            if owner is not None:
                self._owner[sid] = owner
                self._calls[owner].append(sid)

    def _visible_agents_above(self, sid: str) -> Iterable[str]:
        parent = self._vparent.get(sid)
        while parent is not None:
            if self._span[parent].kind in AGENT_KINDS:
                yield parent
            parent = self._vparent.get(parent)

    def _ancestors(self, sid: str) -> Iterable[str]:
        parent = self._span[sid].parent_id
        while parent is not None and parent in self._span:
            yield parent
            parent = self._span[parent].parent_id

    def _model_changed(self, span: Span, changes: _Changes, final: bool) -> None:
        sid = span.id
        agents = [a for a in self._ancestors(sid) if self._span[a].kind in AGENT_KINDS]
        self._costs.set(span, agents, final=final)
        # A finished call's usage is not kept: nothing will be taken back from it.
        usage = self._model_usage
        before = usage.pop(sid, _ZERO) if final else usage.get(sid, _ZERO)
        if span.usage == before:
            return
        delta = _minus(span.usage, before)
        if not final:
            self._model_usage[sid] = span.usage
        self._total = self._total + delta
        self._incl[sid] = span.usage
        for ancestor in self._ancestors(sid):
            if not self._span[ancestor].hidden:
                self._incl[ancestor] = self._incl.get(ancestor, _ZERO) + delta
                changes.nodes.add(ancestor)
        for agent in agents:
            changes.agent_rows.add(agent)
        if agents:
            self._agent_own[agents[0]] = self._agent_own.get(agents[0], _ZERO) + delta

    def _walk(self) -> list[str]:
        """Visible spans in tree order."""
        out: list[str] = []
        stack = list(reversed(self._vkids[None]))
        while stack:
            sid = stack.pop()
            out.append(sid)
            stack.extend(reversed(self._vkids.get(sid, ())))
        return out

    def _agents_in_order(self) -> list[str]:
        """Agent spans in tree order, walking only the branches that lead to one."""
        within = self._agentful
        out: list[str] = []
        stack = [r for r in reversed(self._vkids[None]) if r in within]
        while stack:
            sid = stack.pop()
            if self._span[sid].kind in AGENT_KINDS:
                out.append(sid)
            stack.extend(k for k in reversed(self._vkids.get(sid, ())) if k in within)
        return out

    # -- the records ---------------------------------------------------------------------------

    def _node(self, sid: str, with_details: bool, with_children: bool) -> str:
        """A :class:`ViewNode` as JSON text."""
        span = self._span[sid]
        name, preview = label(span)
        tokens = self._incl.get(sid, _ZERO)
        status = _status(span.status)
        parent = self._vparent[sid]
        node: ViewNode = {
            "id": self._key[sid],
            "parent": None if parent is None else self._key[parent],
            "depth": self._depth[sid],
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
        pending = span.attributes.get(PENDING)
        if pending and isinstance(pending, list):
            # A loaded file is anyone's JSON: draw the requests that have a request's shape.
            node["pending"] = [pending_view(r) for r in pending if isinstance(r, Mapping)]
        if with_children:
            node["children"] = [self._key[k] for k in self._vkids.get(sid, ())]
        text = _dumps(node)
        if not with_details:
            return text
        parts = [("details", self._details[sid])]
        if sid in self._diffs:
            parts.append(("diff", self._diffs[sid]))
        return _object(text, parts)

    def _whole_node(self, sid: str) -> str:
        text = self._node_text.get(sid)
        if text is None:
            text = self._node_text[sid] = self._node(sid, True, True)
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
        span = self._span[sid]
        own, total = self._agent_own.get(sid, _ZERO), self._incl.get(sid, _ZERO)
        status = _status(span.status)
        cells = [
            short(span.name, 40),
            short(span.attributes.get("description")),
            status,
            _time(span),
            format_tokens(own.input),
            format_tokens(own.output),
            format_tokens(own.total),
            format_tokens(total.total),
        ]
        if self._priced:
            cells += [format_cost(self._costs.own(sid)), format_cost(self._costs.total(sid))]
        return {
            "id": self._key[sid],
            "depth": self._agent_depth[sid],
            "status": status,
            "glyph": GLYPHS[status],
            "cells": cells,
        }

    def _timeline_row(self, sid: str) -> TimelineRow:
        span = self._span[sid]
        status = _status(span.status)
        segments: list[Segment] = []
        for call_id in self._calls.get(sid, ()):
            call = self._span[call_id]
            segments.append(
                {
                    "id": self._key[call_id],
                    "kind": "model" if call.kind == "model" else "tool",
                    "start": call.start,
                    "end": call.end,
                }
            )
        end = format_duration(span.end) if span.end is not None else format_duration(None)
        return {
            "id": self._key[sid],
            "name": short(span.name, 40),
            "depth": self._agent_depth[sid],
            "status": status,
            "glyph": GLYPHS[status],
            "time": f"{format_duration(span.start)} → {end}",
            "start": span.start,
            "end": span.end,
            "segments": segments,
        }

    def _header(self) -> Header:
        total = self._total
        stats: list[Stat] = [
            _stat("time", format_duration(self._horizon), varies=True),
            _stat("agents", str(len(self._agent_names))),
            _stat("sub-agent spawns", str(self._spawns)),
            _stat(
                "tokens",
                format_tokens(total.total),
                note=f"({format_tokens(total.input)} in, {format_tokens(total.output)} out)",
            ),
        ]
        if self._waiting:
            stats.append(_stat("", "waiting for a decision", emphasis="waiting"))
        if self._priced:
            stats.append(_stat("cost", format_cost(self._costs.trace())))
        if self._errors:
            stats.append(_stat("failed", str(self._failures()), emphasis="error"))
        return {"status": self._status, "title": short(self._title, 120), "stats": stats}

    def _failures(self) -> int:
        return count_failures(
            {sid: self._span[sid].error for sid in self._errors},
            {sid: self._vparent[sid] for sid in self._errors},
        )

    def _columns(self) -> list[str]:
        return COLUMNS + COST_COLUMNS if self._priced else list(COLUMNS)

    def _totals(self) -> list[str]:
        total = self._total
        cells = ["all", "", "", ""]
        cells += [format_tokens(n) for n in (total.input, total.output, total.total, total.total)]
        if self._priced:
            cells += [format_cost(self._costs.trace())] * 2
        return cells

    def _summary(self) -> ViewSummary:
        return {
            "version": VIEW_VERSION,
            "rev": self.rev,
            "status": self._status,
            "finished": self._finished,
            "waiting": self._waiting,
            "errors": self._failures(),
            "cost": format_cost(self._costs.trace()) if self._priced else None,
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
                ("roots", _dumps([self._key[r] for r in self._vkids[None]])),
                ("nodes", _array(self._whole_node(s) for s in self._walk())),
                ("agents", _dumps([self._key[a] for a in self._agents])),
                ("agent_rows", _array(self._row(a) for a in self._agents)),
                ("timeline", _array(self._bar(a) for a in self._agents)),
            ],
        )

    def view(self) -> View:
        """The whole view, as of the last :meth:`update`."""
        return cast(View, json.loads(self.view_json()))

    def patch_json(self, changes: _Changes) -> str:
        """What :meth:`update` changed (a :class:`ViewPatch`) as JSON text, to apply to the
        view of the revision before."""

        def order(ids: Iterable[str]) -> list[str]:
            return sorted((s for s in ids if s in self._key), key=lambda s: int(self._key[s]))

        # A node whose details changed goes whole (children too): the next whole view
        # reuses that text.
        nodes = (
            self._whole_node(s) if s in changes.details else self._node(s, False, s in changes.kids)
            for s in order(changes.nodes | changes.kids)
        )
        parts = [
            ("nodes", _array(nodes)),
            ("agent_rows", _array(self._row(a) for a in order(changes.agent_rows))),
            ("timeline", _array(self._bar(a) for a in order(changes.timeline))),
        ]
        if changes.roots:
            parts.append(("roots", _dumps([self._key[r] for r in self._vkids[None]])))
        if changes.agents:
            parts.append(("agents", _dumps([self._key[a] for a in self._agents])))
        if changes.columns:
            parts.append(("columns", _dumps(self._columns())))
        return _object(_dumps(self._summary()), parts)

    def patch(self, changes: _Changes) -> ViewPatch:
        """:meth:`patch_json`, parsed."""
        return cast(ViewPatch, json.loads(self.patch_json(changes)))


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
    if tokens.cache_read:
        pairs.append(("cache read", format_tokens(tokens.cache_read)))
    return pairs
