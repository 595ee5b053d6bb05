"""What nbval compares of a displayed trace: what the run did, in words that do not change with
nbagents' HTML.

A notebook's committed outputs are compared with a new run of it. The HTML of a displayed trace
(``t``) changes with nbagents' releases (a label, a class, a new detail), which would fail a
user's CI after an upgrade although their agent did the same. So the display carries, in an HTML
comment before the trace's HTML, the run's facts: each agent with its status, tokens, its own
model and tool calls, its task and result, and its error. With ``nbagents_ci`` on,
``pytest_nbagents`` reduces the display to that comment, so what is compared is what the run did.

The format is versioned (``v1``): it changes only with a new version, which says so.
"""

from __future__ import annotations

from collections import Counter

from nbagents.tracing.model import AgentRecord, Trace

__all__ = ["FACTS_END", "FACTS_START", "TRACE_END", "trace_facts", "with_facts"]

FACTS_START = "<!--nba-facts v1\n"
FACTS_END = "-->"
TRACE_END = "<!--/nba-trace-->"
"""Ends a displayed trace, so a sanitize rule can take it whole."""
TEXT_LIMIT = 300
"""Characters of a task, result or error kept in the facts."""


def with_facts(trace: Trace, html: str) -> str:
    """``html`` (the trace's view) preceded by the trace's facts and followed by its end mark."""
    return FACTS_START + trace_facts(trace) + FACTS_END + html + TRACE_END


def trace_facts(trace: Trace) -> str:
    """One paragraph per agent, sub-agents indented under the agent that spawned them."""
    lines: list[str] = []
    with trace.lock:
        for root in trace.agents():
            _agent(trace, root, 0, lines)
    return "".join(f"{line}\n" for line in lines)


def _agent(trace: Trace, run: AgentRecord, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    # The agent's own model calls (as ``model``) and tool calls, by name; not its sub-agents'.
    calls = Counter(
        "model" if span.kind == "model" else span.name
        for span in trace.own_spans(trace.get(run.span_id))
        if span.kind in ("model", "tool")
    )
    called = ", ".join(f"{name} x{n}" for name, n in sorted(calls.items()))
    head = f"{run.type} · {run.status} · {run.tokens_total.total} tokens · calls: {called or '-'}"
    lines.append(pad + _safe(head))
    for label, text in (("task", run.description), ("result", run.result), ("error", run.error)):
        if text:
            lines.append(f"{pad}  {label}: {_safe(text)}")
    for child in run.spawns:
        _agent(trace, child, depth + 1, lines)


def _safe(text: str) -> str:
    """One line, bounded, and unable to end the comment it stands in."""
    flat = " ".join(str(text).split())
    if len(flat) > TEXT_LIMIT:
        flat = flat[: TEXT_LIMIT - 1] + "…"
    return flat.replace("<", "&lt;").replace(">", "&gt;")
