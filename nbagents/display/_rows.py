"""The records of one visible span and of the run: a step's node (without its children and
parts), an agent's token-table and timeline rows, the header and the tables' columns, made from
the tree and the roll-ups the view builder keeps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbagents._tokens import TokenUsage
from nbagents.display._costview import format_cost
from nbagents.display._format import format_duration, format_tokens, short
from nbagents.display._records import GLYPHS, KINDS, STATUSES, AgentRow, Stat, TimelineRow, ViewNode
from nbagents.display._rollups import UsageRollups
from nbagents.display._spanview import label, pending_view
from nbagents.display._stackview import plan_marks
from nbagents.display._tree import VisibleTree
from nbagents.tracing.pending import PENDING

if TYPE_CHECKING:
    from nbagents.tracing.model import Span, SpanAttributes

__all__ = ["COLUMNS", "COST_COLUMNS", "COST_LABEL", "agent_row", "columns", "header", "node_head"]

COLUMNS = ["agent", "task", "status", "time", "in", "out", "own total", "incl. sub-agents"]
COST_COLUMNS = ["own cost", "cost incl. sub-agents"]
COST_LABEL = "cost"
"""The header's cost stat: the static HTML marks its value, which varies with the price table."""


def status_of(value: str) -> str:
    return value if value in STATUSES else "running"


def _time(span: Span) -> str:
    return "running…" if span.end is None else format_duration(max(span.end - span.start, 0.0))


def node_head(tree: VisibleTree, usage: UsageRollups, sid: str, attrs: SpanAttributes) -> ViewNode:
    """Step ``sid``'s node, without its children and parts."""
    span = tree.spans[sid]
    name, preview = label(span, attrs)
    tokens = usage.including(sid)
    status = status_of(span.status)
    parent = tree.parent[sid]
    node: ViewNode = {
        "id": tree.key[sid],
        "parent": None if parent is None else tree.key[parent],
        "depth": tree.depth[sid],
        "kind": span.kind if span.kind in KINDS else "chain",
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
    return node


def agent_row(
    tree: VisibleTree,
    usage: UsageRollups,
    sid: str,
    task: str | None,
    reasoning: bool,
    priced: bool,
) -> AgentRow:
    """Agent ``sid``'s row of the token table (``columns(priced, reasoning)``)."""
    span = tree.spans[sid]
    own, total = usage.own(sid), usage.including(sid)
    status = status_of(span.status)
    cells = [
        short(span.name, 40),
        short(task),
        status,
        _time(span),
        format_tokens(own.input),
        format_tokens(own.output),
        *([format_tokens(own.reasoning)] if reasoning else []),
        format_tokens(own.total),
        format_tokens(total.total),
    ]
    if priced:
        cells += [format_cost(usage.costs.own(sid)), format_cost(usage.costs.total(sid))]
    return {
        "id": tree.key[sid],
        "depth": tree.agent_depth[sid],
        "status": status,
        "glyph": GLYPHS[status],
        "cells": cells,
    }


def timeline_row(tree: VisibleTree, sid: str, attrs: SpanAttributes) -> TimelineRow:
    """Agent ``sid``'s bar, its model and tool calls in it, its plan's marks."""
    span = tree.spans[sid]
    status = status_of(span.status)
    calls = [tree.spans[c] for c in tree.calls.get(sid, ())]
    row: TimelineRow = {
        "id": tree.key[sid],
        "name": short(span.name, 40),
        "depth": tree.agent_depth[sid],
        "status": status,
        "glyph": GLYPHS[status],
        "time": f"{format_duration(span.start)} → {format_duration(span.end)}",
        "start": span.start,
        "end": span.end,
        "segments": [
            {
                "id": tree.key[c.id],
                "kind": "model" if c.kind == "model" else "tool",
                "start": c.start,
                "end": c.end,
            }
            for c in calls
        ],
    }
    marks = plan_marks(attrs)
    if marks:
        row["marks"] = marks
    return row


def header(
    tree: VisibleTree,
    usage: UsageRollups,
    horizon: float,
    waiting: bool,
    cost: str | None,
    failures: int | None,
) -> list[Stat]:
    """The header's figures (``cost``: the run's when priced; ``failures`` when any failed)."""
    total = usage.total
    tokens = f"({format_tokens(total.input)} in, {format_tokens(total.output)} out)"
    stats: list[Stat] = [
        _stat("time", format_duration(horizon), varies=True),
        _stat("agents", str(len(tree.agent_names))),
        _stat("sub-agent spawns", str(tree.spawns)),
        _stat("tokens", format_tokens(total.total), note=tokens),
    ]
    if waiting:
        stats.append(_stat("", "waiting for a decision", emphasis="waiting"))
    if cost is not None:
        stats.append(_stat(COST_LABEL, cost))
    if failures is not None:
        stats.append(_stat("failed", str(failures), emphasis="error"))
    return stats


def columns(priced: bool, reasoning: bool) -> list[str]:
    """The token table's columns: reasoning tokens (part of "out") once a call reported some."""
    names = COLUMNS + COST_COLUMNS if priced else list(COLUMNS)
    if reasoning:
        names.insert(names.index("out") + 1, "reasoning")
    return names


def _stat(
    label: str, value: str, *, note: str = "", emphasis: Any = "", varies: bool = False
) -> Stat:
    return {"label": label, "value": value, "note": note, "emphasis": emphasis, "varies": varies}


def _token_pairs(tokens: TokenUsage) -> list[tuple[str, str]]:
    if not tokens:
        return []
    pairs = [("input", tokens.input), ("output", tokens.output)]
    pairs += [("reasoning", tokens.reasoning), ("total", tokens.total)]
    pairs += [("cache read", tokens.cache_read), ("cache write", tokens.cache_write)]
    return [(name, format_tokens(n)) for name, n in pairs if n or name in _ALWAYS]


_ALWAYS = ("input", "output", "total")
