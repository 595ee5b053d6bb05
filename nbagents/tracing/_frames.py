"""pandas views of a trace: a row per span, and token usage per agent or per spawn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import pandas as pd

from nbagents.tracing.model import TokenUsage
from nbagents.tracing.span import AGENT_KINDS

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = [
    "inside_same_agent",
    "memory_frame",
    "spans_frame",
    "summarizations_frame",
    "todos_frame",
    "token_cells",
    "token_usage_frame",
]

_TOKEN_COLUMNS = ["input_tokens", "output_tokens", "total_tokens", "total_tokens_incl_descendants"]


def spans_frame(trace: Trace) -> pd.DataFrame:
    """One row per span, depth first in call order (stable for equal runs)."""
    rows = [
        {
            "id": s.id,
            "parent_id": s.parent_id,
            "kind": s.kind,
            "name": s.name,
            "agent": s.agent,
            "depth": s.depth,
            "start": s.start,
            "end": s.end,
            "duration": s.duration,
            "status": s.status,
            "error": s.error,
            "model": s.model,
            **token_cells(s.usage),
            "hidden": s.hidden,
        }
        for s in trace.walk()
    ]
    return pd.DataFrame(rows, columns=None if rows else ["id", "parent_id", "kind", "name"])


def token_cells(usage: TokenUsage) -> dict[str, int]:
    """A span's token counts, as the columns of a frame of spans name them."""
    return {
        "input_tokens": usage.input,
        "output_tokens": usage.output,
        "total_tokens": usage.total,
        "cache_read_tokens": usage.cache_read,
        "cache_write_tokens": usage.cache_write,
        "reasoning_tokens": usage.reasoning,
    }


def token_usage_frame(trace: Trace, per: Literal["agent", "spawn"] = "agent") -> pd.DataFrame:
    """Rows for the main agent(s) and each sub-agent (type, or spawn with ``per="spawn"``).

    A ``reasoning_tokens`` column (the own calls' reasoning, part of ``output_tokens``) follows
    ``output_tokens`` when some model call of the run reported reasoning tokens.
    """
    if per not in ("agent", "spawn"):
        raise ValueError(f"per must be 'agent' or 'spawn', got {per!r}.")
    # The main agents (every agent span not spawned by a task call) first, then the spawns.
    records = [r for top in trace.agents() for r in top.walk()]
    rows = [
        {
            "agent": r.type,
            "role": "subagent" if r.kind == "subagent" else "main",
            "depth": r.depth,
            "spawns": 1,
            "description": r.description if r.kind == "subagent" else "",
            "input_tokens": r.tokens_own.input,
            "output_tokens": r.tokens_own.output,
            "reasoning_tokens": r.tokens_own.reasoning,
            "total_tokens": r.tokens_own.total,
            "total_tokens_incl_descendants": r.tokens_total.total,
            "span_id": r.span_id,
        }
        for r in sorted(records, key=lambda r: r.kind == "subagent")
    ]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=["agent", "role", "spawns", *_TOKEN_COLUMNS])
    if not frame["reasoning_tokens"].any():
        frame = frame.drop(columns=["reasoning_tokens"])
    columns = [c for c in frame.columns if "tokens" in c]
    if per == "spawn":
        return frame.drop(columns=["spawns"]).reset_index(drop=True)
    # A spawn inside another of its own type (a researcher that delegates to a researcher) is
    # already in that one's total: adding both would count its tokens twice.
    incl = frame["total_tokens_incl_descendants"]
    frame["total_tokens_incl_descendants"] = [
        0 if nested else tokens
        for tokens, nested in zip(incl, inside_same_agent(trace, frame), strict=True)
    ]
    grouped = (
        frame.groupby(["agent", "role"], sort=False)
        .agg(spawns=("spawns", "sum"), **{c: (c, "sum") for c in columns})
        .reset_index()
    )
    grouped.loc[grouped["role"] == "main", "spawns"] = 0
    return grouped


def inside_same_agent(trace: Trace, rows: pd.DataFrame) -> list[bool]:
    """For each row of ``token_usage_frame(trace, "spawn")``, whether its span runs inside the
    span of another row with the same ``agent`` and ``role``.

    The rows of one agent and role that are not nested have disjoint subtrees, which together
    hold every step of that agent's spawns exactly once.
    """
    keys = zip(rows["agent"], rows["role"], strict=True)
    key_of = dict(zip(rows["span_id"], keys, strict=True))  # one row per agent span
    return [
        any(key_of.get(above.id) == key for above in trace.ancestors(trace.get(span_id)))
        for span_id, key in key_of.items()
    ]


def todos_frame(trace: Trace) -> pd.DataFrame:
    """Each agent's plan: a row per item of its latest todo list, in the list's order."""
    rows = [
        {"agent": s.name, "span_id": s.id, "position": n, **item}
        for s in trace.walk()
        if s.kind in AGENT_KINDS
        for n, item in enumerate(s.typed_attributes().get("plan", []))
    ]
    columns = ["agent", "span_id", "position", "content", "status", "added", "started", "finished"]
    return pd.DataFrame(rows, columns=columns)


def summarizations_frame(trace: Trace) -> pd.DataFrame:
    """A row per summarization step: whose conversation it folded, when, and what it kept."""
    rows = [
        {"agent": s.agent, "span_id": s.id, "start": s.start, **facts}
        for s in trace.walk()
        if (facts := s.typed_attributes().get("summarization"))
    ]
    columns = ["agent", "span_id", "start", "messages_folded", "tokens_before", "tokens_after"]
    return pd.DataFrame(rows, columns=[*columns, "history_path", "summary"])


def memory_frame(trace: Trace) -> pd.DataFrame:
    """A row per memory file an agent loaded, with its size in characters."""
    rows = [
        {"agent": s.name, "span_id": s.id, "path": path, "chars": chars}
        for s in trace.walk()
        if s.kind in AGENT_KINDS
        for path, chars in s.typed_attributes().get("memory", {}).items()
    ]
    return pd.DataFrame(rows, columns=["agent", "span_id", "path", "chars"])
