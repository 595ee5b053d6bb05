"""One JSON-ready description of a trace, shared by the static HTML and the live widget.

Everything here is plain data: strings are *not* escaped (each renderer escapes for its own
context), every text that came from a model, a tool or state is truncated to a bounded size, and
nothing depends on span ids, object addresses or the order threads happened to start in: node ids
are derived from the position in the visible tree (``"0"``, ``"0.2"``, ``"0.2.1"``).

This module builds the tree, the token table and the timeline; what one span shows is in
:mod:`nbagents.display._spanview`, how text is bounded and worded in
:mod:`nbagents.display._format`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, get_args

from nbagents._tokens import TokenUsage
from nbagents.display._costview import AgentCosts, agent_costs, format_cost
from nbagents.display._format import (
    LABEL_LIMIT,
    Json,
    format_duration,
    format_tokens,
    short,
    truncate,
)
from nbagents.display._spanview import details, label, state_diff
from nbagents.tracing.model import SpanKind, SpanStatus

if TYPE_CHECKING:
    from nbagents.tracing.model import Span, Trace

__all__ = [
    "KINDS",
    "LABEL_LIMIT",
    "STATUSES",
    "Json",
    "build_view",
    "format_duration",
    "format_tokens",
    "short",
    "snapshot",
    "truncate",
]

VIEW_VERSION = 1
KINDS: tuple[str, ...] = get_args(SpanKind)
"""The span kinds a view knows (``static/live.js`` lists them too)."""
STATUSES: tuple[str, ...] = get_args(SpanStatus)


def _usage(usage: TokenUsage) -> Json:
    return {
        "input": usage.input,
        "output": usage.output,
        "total": usage.total,
        "cache_read": usage.cache_read,
    }


def _kind(span: Span) -> str:
    return span.kind if span.kind in KINDS else "chain"


def _status(value: str) -> str:
    return value if value in STATUSES else "running"


# -- the view ---------------------------------------------------------------------------------


def build_view(trace: Trace) -> Json:
    """The whole view of ``trace`` as JSON-ready data (see the module docstring).

    Safe while the run goes on: the trace's lock is held only to copy the spans, so the agent's
    threads wait for a copy, never for the rendering.
    """
    return _build(snapshot(trace))


def snapshot(trace: Trace) -> Trace:
    """A consistent copy of ``trace`` (spans and their attribute dicts), taken under its lock."""
    from nbagents.tracing.model import Trace

    with trace.lock:
        spans = [copy.copy(s) for s in trace.spans]
        for span in spans:
            span.attributes = dict(span.attributes)
        title, finished = trace.title, trace.finished
    copied = Trace(spans, title=title)
    copied.finished = finished
    return copied


def _build(trace: Trace) -> Json:
    nodes: list[Json] = []
    by_id: dict[str, Span] = {}

    def walk(span: Span, node_id: str, parent: str | None, depth: int) -> None:
        kids = trace.visible_children(span)
        kid_ids = [f"{node_id}.{i}" for i in _positions(kids)]
        tokens = span.usage if span.kind == "model" else trace.usage_including_descendants(span)
        name, preview = label(span)
        node: Json = {
            "id": node_id,
            "parent": parent,
            "depth": depth,
            "kind": _kind(span),
            "name": name,
            "preview": preview,
            "status": _status(span.status),
            "start": span.start,
            "end": span.end,
            "tokens": _usage(tokens),
            "children": kid_ids,
            "details": details(trace, span, tokens),
        }
        if span.kind == "subagent":
            node["diff"] = state_diff(span)
        nodes.append(node)
        by_id[node_id] = span
        for kid, kid_id in zip(kids, kid_ids, strict=True):
            walk(kid, kid_id, node_id, depth + 1)

    for i, root in enumerate(trace.visible_roots()):
        walk(root, str(i), None, 0)

    spans = trace.spans
    horizon = max([s.end if s.end is not None else s.start for s in spans], default=0.0)
    agent_nodes = [n for n in nodes if n["kind"] in ("agent", "subagent")]
    total = trace.total_usage()
    costs = agent_costs(trace)
    agent_rows = [_agent_row(trace, n, by_id[n["id"]], costs) for n in agent_nodes]
    return {
        "version": VIEW_VERSION,
        "title": short(trace.title, 120),
        "status": _status(trace.status),
        "finished": bool(trace.finished),
        "duration": horizon,
        "agents": len({n["name"] for n in agent_nodes}),
        "spawns": sum(1 for n in nodes if n["kind"] == "subagent"),
        "errors": trace.failures(),
        "tokens": _usage(total),
        "cost": None if costs is None else format_cost(costs.trace),
        "waiting": _waiting(trace),
        "nodes": nodes,
        "agent_rows": agent_rows,
        "timeline": _timeline(nodes, {r["id"]: r["depth"] for r in agent_rows}, horizon),
    }


def _waiting(trace: Trace) -> bool:
    """The run paused for a person (an interrupt, e.g. an approval) and was not resumed yet.

    A paused graph ends its root ``interrupted`` with no error text; a run cut off when the
    trace ended carries a reason instead.
    """
    roots = trace.roots
    return bool(roots) and roots[-1].status == "interrupted" and roots[-1].error is None


def _positions(kids: list[Span]) -> list[int]:
    """Each child's position, stable while parallel siblings are still starting.

    A call's place is its batch's first place plus its index in the AI message, so a sibling
    that starts late does not shift the ids (and the live view's selection) of the others.
    """
    positions: list[int] = []
    first: dict[Any, int] = {}
    free = 0
    for kid in kids:
        batch, index = kid.attributes.get("batch"), kid.attributes.get("call_index")
        if batch is not None and isinstance(index, int):
            position = first.setdefault(batch, free) + index
        else:
            position = free
        positions.append(position)
        free = max(free, position + 1)
    return positions


def _agent_row(trace: Trace, node: Json, span: Span, costs: AgentCosts | None) -> Json:
    own = trace.own_usage(span)
    row: Json = {
        "id": node["id"],
        "kind": node["kind"],
        "name": node["name"],
        "depth": sum(1 for _ in _agent_ancestors(trace, span)),
        "description": short(span.attributes.get("description")),
        "status": node["status"],
        "start": span.start,
        "end": span.end,
        "own": _usage(own),
        "total": node["tokens"],
    }
    if costs is not None:
        row["cost_own"] = format_cost(costs.own.get(span.id))
        row["cost_total"] = format_cost(costs.total.get(span.id))
    return row


def _agent_ancestors(trace: Trace, span: Span) -> Iterable[Span]:
    parent = trace.parent(span)
    while parent is not None:
        if parent.kind in ("agent", "subagent") and not parent.hidden:
            yield parent
        parent = trace.parent(parent)


def _timeline(nodes: list[Json], depths: Mapping[str, int], horizon: float) -> list[Json]:
    """One row per agent and sub-agent; its model and tool calls as segments inside the bar."""
    scale = 100.0 / horizon if horizon > 0 else 0.0
    by_id = {n["id"]: n for n in nodes}

    def pos(node: Json) -> tuple[float, float]:
        start = float(node["start"])
        end = float(node["end"]) if node["end"] is not None else horizon
        left = min(max(start * scale, 0.0), 100.0)
        width = min(max((end - start) * scale, 0.0), 100.0 - left)
        return round(left, 2), round(width, 2)

    def own_calls(node: Json) -> Iterable[Json]:
        for kid_id in node["children"]:
            kid = by_id[kid_id]
            if kid["kind"] in ("model", "tool", "skill"):
                yield kid
            if kid["kind"] in ("model", "tool", "skill", "task", "chain"):
                yield from own_calls(kid)

    rows = []
    for node in nodes:
        if node["kind"] not in ("agent", "subagent"):
            continue
        left, width = pos(node)
        segments = []
        for call in own_calls(node):
            s_left, s_width = pos(call)
            segments.append(
                {
                    "id": call["id"],
                    # a skill load is a file read: drawn as the tool call it is
                    "kind": "model" if call["kind"] == "model" else "tool",
                    "left": s_left,
                    "width": s_width,
                }
            )
        rows.append(
            {
                "id": node["id"],
                "name": node["name"],
                "depth": depths.get(node["id"], 0),
                "status": node["status"],
                "left": left,
                "width": width,
                "segments": segments,
            }
        )
    return rows
