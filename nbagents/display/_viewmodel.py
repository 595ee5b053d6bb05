"""The view of a trace, built once and then kept up to date by changed spans only.

:class:`ViewBuilder` follows one trace. Each :meth:`~ViewBuilder.update` takes, under the
trace's lock, a copy of only the spans that changed since the last one (a cheap fingerprint per
span says which), then updates the tree, the token roll-ups (along the changed span's ancestors
only), costs, agent rows and timeline rows that depend on them, and returns what changed.
:meth:`~ViewBuilder.view` is the whole view (the static HTML draws it);
:meth:`~ViewBuilder.patch` is what changed (the live widget applies it in place).

Node ids are handed out in the order spans are first seen and never change, so a late
parallel sibling never shifts the ids of the others; the order of children is the call order
(:func:`nbagents.tracing.model.call_order`). What one span shows is in
:mod:`nbagents.display._spanview`, the record types in :mod:`nbagents.display._records`.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable
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
    DetailField,
    Header,
    Segment,
    Stat,
    StateDiffView,
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
        self._model_usage: dict[str, TokenUsage] = {}
        self._agent_own: dict[str, TokenUsage] = {}
        self._calls: dict[str, list[str]] = {}
        self._owner: dict[str, str] = {}
        self._details: dict[str, list[DetailField]] = {}
        self._diffs: dict[str, StateDiffView] = {}
        self._errors: set[str] = set()
        self._settled: set[str] = set()
        """Spans that cannot change any more: not fingerprinted again (most of a large run)."""
        self._agent_names: Counter[str] = Counter()
        self._spawns = 0
        self._agents: list[str] = []
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
        settled = self._settled
        with trace.lock:
            dirty = []
            for span in trace.spans:
                if span.id in settled:
                    continue
                fp = _fingerprint(span)
                if self._fp.get(span.id) != fp:
                    self._fp[span.id] = fp
                    copied = copy.copy(span)
                    copied.attributes = dict(span.attributes)
                    dirty.append(copied)
                    if span.end is not None and span.status in _FINAL and span.kind in _SETTLING:
                        settled.add(span.id)
            self._status = _status(trace.status)
            self._finished = bool(trace.finished)
            self._title = trace.title
        reorder: set[str | None] = set()
        for span in dirty:
            self._take(span, changes, reorder)
        for parent in reorder:
            kids = call_order([self._span[k] for k in self._vkids[parent]])
            self._vkids[parent] = [k.id for k in kids]
            if parent is not None:
                changes.kids.add(parent)
        if changes.agents:
            self._agents = [s for s in self._walk() if self._span[s].kind in AGENT_KINDS]
        priced = self._costs.priced
        if priced != self._priced:
            self._priced = priced
            changes.columns = True
            changes.agent_rows.update(self._agents)
        roots = self._vkids[None]
        last = self._span[roots[-1]] if roots else None
        self._waiting = bool(last and last.status == "interrupted" and last.error is None)
        if changes or dirty:
            self.rev += 1
        return changes

    def _take(self, span: Span, changes: _Changes, reorder: set[str | None]) -> None:
        sid = span.id
        old = self._span.get(sid)
        self._span[sid] = span
        self._horizon = max(self._horizon, span.end if span.end is not None else span.start)
        if old is None:
            self._add(span, changes, reorder)
        if not span.hidden:
            changes.nodes.add(sid)
            changes.details.add(sid)
            self._details[sid] = details(span)
            if span.kind == "subagent":
                self._diffs[sid] = state_diff(span)
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
            self._model_changed(span, changes)

    def _add(self, span: Span, changes: _Changes, reorder: set[str | None]) -> None:
        sid = span.id
        parent = span.parent_id if span.parent_id in self._span else None
        while parent is not None and self._span[parent].hidden:
            grand = self._span[parent].parent_id
            parent = grand if grand in self._span else None
        self._vparent[sid] = parent
        self._incl[sid] = TokenUsage()
        if span.hidden:
            return
        self._key[sid] = str(len(self._key))
        self._vkids.setdefault(parent, []).append(sid)
        self._vkids[sid] = []
        reorder.add(parent)
        self._depth[sid] = 0 if parent is None else self._depth[parent] + 1
        if parent is None:
            changes.roots = True
        else:
            changes.nodes.add(parent)
        if span.kind in AGENT_KINDS:
            changes.agents = True
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

    def _model_changed(self, span: Span, changes: _Changes) -> None:
        sid = span.id
        agents = [a for a in self._ancestors(sid) if self._span[a].kind in AGENT_KINDS]
        self._costs.set(span, agents)
        before = self._model_usage.get(sid, TokenUsage())
        if span.usage == before:
            return
        delta = _minus(span.usage, before)
        self._model_usage[sid] = span.usage
        self._total = self._total + delta
        self._incl[sid] = span.usage
        for ancestor in self._ancestors(sid):
            self._incl[ancestor] = self._incl[ancestor] + delta
            if not self._span[ancestor].hidden:
                changes.nodes.add(ancestor)
        for agent in agents:
            changes.agent_rows.add(agent)
        if agents:
            self._agent_own[agents[0]] = self._agent_own.get(agents[0], TokenUsage()) + delta

    def _walk(self) -> list[str]:
        out: list[str] = []
        stack = list(reversed(self._vkids[None]))
        while stack:
            sid = stack.pop()
            out.append(sid)
            stack.extend(reversed(self._vkids[sid]))
        return out

    # -- the records ---------------------------------------------------------------------------

    def _node(self, sid: str, with_details: bool, with_children: bool = True) -> ViewNode:
        span = self._span[sid]
        name, preview = label(span)
        tokens = self._incl[sid]
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
        if pending:
            node["pending"] = [pending_view(r) for r in pending]
        if with_children:
            node["children"] = [self._key[k] for k in self._vkids[sid]]
        if with_details:
            node["details"] = self._details[sid]
            if sid in self._diffs:
                node["diff"] = self._diffs[sid]
        return node

    def _agent_row(self, sid: str) -> AgentRow:
        span = self._span[sid]
        own, total = self._agent_own.get(sid, TokenUsage()), self._incl[sid]
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

    def view(self) -> View:
        """The whole view, as of the last :meth:`update`."""
        order = self._walk()
        return {
            **self._summary(),
            "columns": self._columns(),
            "roots": [self._key[r] for r in self._vkids[None]],
            "nodes": [self._node(s, with_details=True) for s in order],
            "agents": [self._key[a] for a in self._agents],
            "agent_rows": [self._agent_row(a) for a in self._agents],
            "timeline": [self._timeline_row(a) for a in self._agents],
        }

    def patch(self, changes: _Changes) -> ViewPatch:
        """What :meth:`update` changed, to apply to the view of the revision before."""

        def order(ids: Iterable[str]) -> list[str]:
            return sorted((s for s in ids if s in self._key), key=lambda s: int(self._key[s]))

        # cast: mypy wants a TypedDict's optional keys spelled out when ``**`` builds it
        patch = cast(
            ViewPatch,
            {
                **self._summary(),
                "nodes": [
                    self._node(s, s in changes.details, s in changes.kids)
                    for s in order(changes.nodes | changes.kids)
                ],
                "agent_rows": [self._agent_row(a) for a in order(changes.agent_rows)],
                "timeline": [self._timeline_row(a) for a in order(changes.timeline)],
            },
        )
        if changes.roots:
            patch["roots"] = [self._key[r] for r in self._vkids[None]]
        if changes.agents:
            patch["agents"] = [self._key[a] for a in self._agents]
        if changes.columns:
            patch["columns"] = self._columns()
        return patch


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
