"""The Tools table of a view: one row per tool (its calls, who made them, failures, time, and the
tokens and cost of the model turns that asked for it) and its first calls.

Kept by differences, one changed span at a time, so an update costs what changed, not the size
of the run. What counts is :mod:`nbagents.tracing.tools`' rules, which ``Trace.tool_usage()``
follows too: the pane and the DataFrame agree.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nbagents._tokens import TokenUsage
from nbagents.cost import Cost, default_prices
from nbagents.display._costview import CostSum, format_cost
from nbagents.display._format import format_duration, format_tokens, short
from nbagents.display._records import GLYPHS, ToolRow, ToolsView
from nbagents.tracing.cost import priced_call
from nbagents.tracing.tools import (
    TOOL_KINDS,
    agents_by_calls,
    is_failure,
    tool_name,
    tools_by_calls,
    turn_of,
)

if TYPE_CHECKING:
    from nbagents.tracing.model import Span

__all__ = ["CALL_LIMIT", "COLUMNS", "COST_COLUMN", "ToolBook", "view_anchor"]

CALL_LIMIT = 100
"""Calls listed under a tool's row; the rest are counted."""
COLUMNS = ["tool", "called by", "calls", "failed", "time", "turns", "in", "out"]
"""As narrow as the token table: ``Trace.tool_usage()`` has the turns' total tokens too."""
COST_COLUMN = "turn cost"
_ANCHORS = uuid.UUID("4b1d9c52-5a3e-4f0e-9d5c-6e0a2f7b8c11")
"""The namespace of the views' anchors: fixed, so a run's anchor is the same in every drawing."""
_NONE: AbstractSet[str] = frozenset()


@dataclass(frozen=True, slots=True)
class _Call:
    """What a tool call adds to its tool's figures."""

    tool: str
    agent: str
    key: str
    """Its view node id."""
    turn: str | None
    failed: bool
    seconds: float
    running: bool


class _Turn:
    """A model turn that asked for a tool: its tokens and cost, as the figures counted them."""

    __slots__ = ("cost", "span", "usage")

    def __init__(self, span: Span | None, cost: Cost) -> None:
        self.span = span
        """``None`` while a call names it and its span has not come yet."""
        self.usage = span.usage if span is not None else TokenUsage()
        self.cost = cost


class _Figures:
    """A tool's figures (or all tools'). ``turns`` counts, per turn, the calls it made here: a
    turn's tokens are added when its first call comes and taken away when its last goes."""

    def __init__(self) -> None:
        self.calls = 0
        self.failures = 0
        self.seconds = 0.0
        self.running = 0
        self.agents: Counter[str] = Counter()
        self.turns: Counter[str] = Counter()
        self.usage = TokenUsage()
        self.cost = CostSum()

    def count(self, call: _Call, sign: int, turn: _Turn | None) -> None:
        self.calls += sign
        self.failures += sign * call.failed
        self.seconds += sign * call.seconds
        self.running += sign * call.running
        self.agents[call.agent] += sign
        if not self.agents[call.agent]:
            del self.agents[call.agent]
        if call.turn is None or turn is None:
            return
        self.turns[call.turn] += sign
        now = self.turns[call.turn]
        if now == (1 if sign > 0 else 0):  # the turn's first call came, or its last went
            self.add(turn.usage, turn.cost, sign)
        if not now:
            del self.turns[call.turn]

    def add(self, usage: TokenUsage, cost: Cost, sign: int) -> None:
        self.usage = self.usage + usage if sign > 0 else self.usage - usage
        self.cost.add(cost, sign)

    @property
    def status(self) -> str:
        return "running" if self.running else "error" if self.failures else "ok"


class ToolBook:
    """The Tools table of one view, kept up to date one changed span at a time."""

    def __init__(self) -> None:
        self._prices = default_prices()
        self._calls: dict[str, _Call] = {}
        self._tools: dict[str, _Figures] = {}
        self._listed: dict[str, list[str]] = {}
        """Each tool's calls (span ids), in the order first seen."""
        self._models: dict[str, Span] = {}
        """The latest copy of each model call: a turn once a call names it."""
        self._turns: dict[str, _Turn] = {}
        """The model calls that asked for a tool, priced."""
        self._asking: dict[str, set[str]] = {}
        """Each turn that asked for a tool → the tools it asked for."""
        self._all = _Figures()
        self._priced = False

    def take(self, span: Span, key: str | None) -> AbstractSet[str]:
        """Take in a changed span (``key``: its view node id, ``None`` if hidden); returns the
        tools whose rows changed."""
        if span.kind == "model":
            return self._take_turn(span)
        if span.kind in TOOL_KINDS and key is not None:
            return self._take_call(span, key)
        return _NONE

    def _take_call(self, span: Span, key: str) -> AbstractSet[str]:
        running = span.end is None
        seconds = 0.0 if running else span.duration or 0.0
        call = _Call(
            tool_name(span), span.agent, key, turn_of(span), is_failure(span), seconds, running
        )
        old = self._calls.get(span.id)
        if old == call:
            return _NONE
        self._calls[span.id] = call
        if old is None or old.tool != call.tool:
            self._listed.setdefault(call.tool, []).append(span.id)
        if old is None:
            self._count(call, 1)
            return {call.tool}
        self._count(old, -1)
        self._count(call, 1)
        if old.tool != call.tool:  # renamed (a loaded trace can say anything)
            self._listed[old.tool].remove(span.id)
            if not self._tools[old.tool].calls:
                del self._tools[old.tool], self._listed[old.tool]
        return {call.tool, old.tool}

    def _count(self, call: _Call, sign: int) -> None:
        turn = self._turn(call.turn) if call.turn is not None else None
        tool = self._tools.get(call.tool)
        if tool is None:
            tool = self._tools[call.tool] = _Figures()
        tool.count(call, sign, turn)
        self._all.count(call, sign, turn)
        if call.turn is not None:
            asking = self._asking.setdefault(call.turn, set())
            if call.turn in tool.turns:
                asking.add(call.tool)
            else:
                asking.discard(call.tool)

    def _turn(self, sid: str) -> _Turn:
        """The turn a call names, priced when first named (its span may come later)."""
        turn = self._turns.get(sid)
        if turn is None:
            span = self._models.get(sid)
            turn = self._turns[sid] = _Turn(span, self._price(span))
        return turn

    def _price(self, span: Span | None) -> Cost:
        return priced_call(span, self._prices) if span is not None and span.usage else Cost()

    def _take_turn(self, span: Span) -> AbstractSet[str]:
        self._models[span.id] = span
        old = self._turns.get(span.id)
        if old is None or (old.span is not None and old.usage == span.usage):
            return _NONE  # no call named it yet, or its tokens did not change
        new = self._turns[span.id] = _Turn(span, self._price(span))
        asking = self._asking.get(span.id, _NONE)
        counting = [self._tools[name] for name in asking]  # all tools count it if any does
        for figures in (*counting, self._all) if counting else ():
            figures.add(old.usage, old.cost, -1)
            figures.add(new.usage, new.cost, 1)
        return set(asking)

    # -- the records -----------------------------------------------------------------------

    def part(self, names: Iterable[str] | None, priced: bool, root: str | None) -> ToolsView:
        """The :class:`ToolsView`, with the rows of ``names`` (all: ``None``); ``priced`` adds
        the cost column; ``root``: the span id of the view's first root."""
        self._priced = priced
        rank = tools_by_calls(Counter({n: f.calls for n, f in self._tools.items()}))
        order = sorted(self._tools, key=rank.__getitem__)
        chosen = None if names is None else set(names)
        wanted = order if chosen is None else [n for n in order if n in chosen]
        columns = [*COLUMNS, COST_COLUMN] if priced else COLUMNS
        return {
            "anchor": view_anchor(root) if root else "",
            "columns": columns,
            "order": order,
            "rows": [self._row(n) for n in wanted],
            "totals": self._cells("all", "", self._all),
        }

    def _row(self, name: str) -> ToolRow:
        figures = self._tools[name]
        listed = self._listed[name]
        agents = figures.agents
        by = ", ".join(
            f"{a} \u00d7{agents[a]}" if agents[a] > 1 else a for a in agents_by_calls(agents)
        )
        calls = [self._calls[sid] for sid in listed[:CALL_LIMIT]]
        return {
            "id": name,
            "status": figures.status,
            "glyph": GLYPHS[figures.status],
            "cells": self._cells(short(name, 40), short(by), figures),
            "calls": [{"id": c.key, "agent": short(c.agent, 40)} for c in calls],
            "more": max(len(listed) - CALL_LIMIT, 0),
        }

    def _cells(self, first: str, by: str, figures: _Figures) -> list[str]:
        usage = figures.usage
        cells = [
            first,
            by,
            format_tokens(figures.calls),
            format_tokens(figures.failures),
            format_duration(figures.seconds),
            format_tokens(len(figures.turns)),
            format_tokens(usage.input),
            format_tokens(usage.output),
        ]
        if self._priced:
            cells.append(format_cost(figures.cost.cost()))
        return cells


def view_anchor(root: str) -> str:
    """The view's ``anchor``: a UUID of its first root's span id, the same for every drawing of
    one run and different for another run."""
    return str(uuid.uuid5(_ANCHORS, root))
