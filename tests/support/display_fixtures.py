"""Fixture module (no tests): hand-built traces and agents for the display tests.

``build_trace`` makes a realistic run: a main agent whose model calls ``task`` three times in one
message; the three sub-agents run in parallel; one calls a tool, one spawns a nested sub-agent,
one fails. ``payload`` is put into every place untrusted text can reach; ``variant`` changes what
must not matter to a view (span ids, the order parallel siblings started, the timings).
"""

from __future__ import annotations

import itertools
from typing import Any

from nbagents.tracing.model import Span, TokenUsage, Trace

__all__ = ["XSS_PAYLOADS", "build_trace"]

XSS_PAYLOADS = (
    "<script>alert(1)</script>",
    '" onmouseover="x',
    "<img src=x onerror=alert(1)>",
    "javascript:alert(1)",
    "</details></div></li></ul>",
    '<a href="javascript:alert(1)">click</a>',
)


def _human(text: str) -> dict[str, Any]:
    return {"type": "human", "content": text, "id": "run-1234"}


def _ai(text: str, calls: list[tuple[str, dict[str, Any]]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    return {
        "type": "ai",
        "content": text,
        "id": "lc_run--5f0e",
        "tool_calls": [
            {"name": n, "args": a, "id": f"call_{i}", "type": "tool_call"}
            for i, (n, a) in enumerate(calls)
        ],
    }


def _tool_msg(text: str, name: str, status: str = "success") -> dict[str, Any]:
    return {
        "type": "tool",
        "content": text,
        "name": name,
        "tool_call_id": "call_x",
        "status": status,
    }


def build_trace(payload: str = "", *, variant: int = 0, finished: bool = True) -> Trace:
    """The standard run; ``payload`` is appended to every untrusted text."""
    p = payload
    ids = (f"{'span' if variant == 0 else 'id-' + str(variant)}-{n}" for n in itertools.count())
    # variant 1 starts the parallel siblings in another order and shifts every time
    shift = 0.013 * variant
    order = [0, 1, 2] if variant % 2 == 0 else [2, 0, 1]
    trace = Trace(title="demo" + p)
    spans: list[Span] = []

    def add(
        parent: Span | None,
        kind: str,
        name: str,
        start: float,
        end: float | None,
        *,
        agent: str = "main",
        depth: int = 0,
        status: str = "ok",
        hidden: bool = False,
        **fields: Any,
    ) -> Span:
        span = Span(
            id=next(ids),
            parent_id=parent.id if parent else None,
            kind=kind,  # type: ignore[arg-type]
            name=name,
            agent=agent,
            depth=depth,
            start=start + shift,
            end=None if end is None else end + shift * 2,
            status=status,  # type: ignore[arg-type]
            hidden=hidden,
            **fields,
        )
        spans.append(span)
        return span

    main = add(
        None,
        "agent",
        "main",
        0.0,
        1.9 if finished else None,
        status="ok" if finished else "running",
        inputs={"messages": [_human("Compare A and B, then write C" + p)]},
        outputs={"messages": [_human("Compare A and B" + p), _ai("Done: combined." + p)]}
        if finished
        else None,
    )
    node = add(main, "chain", "model", 0.0, 0.2, hidden=True)
    task_calls = [
        ("task", {"description": "Research A" + p, "subagent_type": "researcher"}),
        ("task", {"description": "Research B" + p, "subagent_type": "researcher"}),
        ("task", {"description": "Write C" + p, "subagent_type": "writer" + p}),
    ]
    add(
        node,
        "model",
        "ScriptedChatModel",
        0.01,
        0.2,
        model="scripted-1",
        usage=TokenUsage(input=120, output=30, total=150),
        inputs={"messages": [[{"type": "system", "content": "Be main" + p}, _human("go" + p)]]},
        outputs=_ai("", task_calls),
    )
    tools = add(main, "chain", "tools", 0.21, 1.6, hidden=True)
    tasks: dict[int, Span] = {}
    subs: dict[int, Span] = {}
    starts = {0: 0.22, 1: 0.23, 2: 0.24}
    # add in thread order: who started first differs between variants
    for k, i in enumerate(order):
        t0 = starts[k]
        desc = task_calls[i][1]["description"]
        sub_type = task_calls[i][1]["subagent_type"]
        tasks[i] = add(
            tools,
            "task",
            "task",
            t0,
            [1.2, 1.5, 0.9][i],
            status="error" if i == 2 else "ok",
            error=("RuntimeError: writer crashed" + p) if i == 2 else None,
            attributes={
                "description": desc,
                "subagent_type": sub_type,
                "tool_call_id": f"call_{i}",
                "batch": "b0",
                "call_index": i,
            },
            inputs={"description": desc, "subagent_type": sub_type},
            outputs=_tool_msg(["A is fine" + p, "B is fine" + p, "writer crashed" + p][i], "task"),
        )
        subs[i] = add(
            tasks[i],
            "subagent",
            sub_type,
            t0 + 0.01,
            [1.19, 1.49, 0.89][i],
            agent=sub_type,
            depth=1,
            status="error" if i == 2 else "ok",
            error=("RuntimeError: writer crashed" + p) if i == 2 else None,
            attributes={
                "description": desc,
                "parent_agent": "main",
                "withheld": {"messages": "3 items", "todos": "2 items", "secret" + p: "12 chars"},
                "passed": {"files" + p: "2 items"},
                "returned": ["files" + p] if i == 0 else [],
                "result": None if i == 2 else ["A is fine" + p, "B is fine" + p][i],
            },
        )
    # researcher A: model → search tool → model
    a = subs[0]
    add(
        a,
        "model",
        "ScriptedChatModel",
        0.25,
        0.45,
        agent="researcher",
        depth=1,
        model="scripted-1",
        usage=TokenUsage(input=40, output=10, total=50),
        inputs={"messages": [[_human("Research A" + p)]]},
        outputs=_ai("", [("search", {"query": "A" + p, "url": "javascript:alert(1)"})]),
    )
    add(
        a,
        "tool",
        "search" + p,
        0.46,
        0.7,
        agent="researcher",
        depth=1,
        inputs={"query": "A" + p, "url": "javascript:alert(1)"},
        outputs=_tool_msg("results for A" + p, "search"),
    )
    add(
        a,
        "model",
        "ScriptedChatModel",
        0.71,
        1.1,
        agent="researcher",
        depth=1,
        model="scripted-1",
        usage=TokenUsage(input=60, output=12, total=72, cache_read=20),
        inputs={"messages": [[_human("Research A" + p), _tool_msg("results for A" + p, "search")]]},
        outputs=_ai("A is fine" + p),
    )
    # researcher B: model → nested task → general-purpose → model; then answer
    b = subs[1]
    add(
        b,
        "model",
        "ScriptedChatModel",
        0.26,
        0.5,
        agent="researcher",
        depth=1,
        model="scripted-1",
        usage=TokenUsage(input=40, output=11, total=51),
        outputs=_ai("", [("task", {"description": "Dig deeper" + p})]),
    )
    nested_task = add(
        b,
        "task",
        "task",
        0.51,
        1.3,
        agent="researcher",
        depth=1,
        attributes={
            "description": "Dig deeper" + p,
            "subagent_type": "general-purpose",
            "tool_call_id": "call_n",
            "batch": "b1",
            "call_index": 0,
        },
        outputs=_tool_msg("deep result" + p, "task"),
    )
    gp = add(
        nested_task,
        "subagent",
        "general-purpose",
        0.52,
        1.29,
        agent="general-purpose",
        depth=2,
        attributes={
            "description": "Dig deeper" + p,
            "parent_agent": "researcher",
            "withheld": {"messages": "2 items"},
            "passed": {},
            "returned": [],
            "result": "deep result" + p,
        },
    )
    add(
        gp,
        "model",
        "ScriptedChatModel",
        0.53,
        1.28,
        agent="general-purpose",
        depth=2,
        model="scripted-1",
        usage=TokenUsage(input=30, output=8, total=38),
        outputs=_ai("deep result" + p),
    )
    add(
        b,
        "model",
        "ScriptedChatModel",
        1.31,
        1.48,
        agent="researcher",
        depth=1,
        model="scripted-1",
        usage=TokenUsage(input=70, output=9, total=79),
        outputs=_ai("B is fine" + p),
    )
    # writer: its model call fails
    add(
        subs[2],
        "model",
        "ScriptedChatModel",
        0.27,
        0.88,
        agent="writer",
        depth=1,
        model="scripted-1",
        status="error",
        error="RuntimeError: writer crashed" + p,
    )
    # main's final model call
    node2 = add(main, "chain", "model", 1.61, 1.9, hidden=True)
    add(
        node2,
        "model",
        "ScriptedChatModel",
        1.62,
        1.89,
        model="scripted-1",
        usage=TokenUsage(input=200, output=5, total=205),
        outputs=_ai("Done: combined." + p),
    )

    # spans reach the trace in start order, as a tracer records them
    for span in sorted(spans, key=lambda s: s.start):
        trace.add(span)
    trace.finished = finished
    return trace


def make_agent(latency: float = 0.05, *, fail_writer: bool = False) -> Any:
    """A real deep agent on the scripted model: three parallel sub-agents, one nested spawn."""
    from langchain_core.tools import tool

    from nbagents import ScriptedChatModel, create_deep_agent
    from nbagents.models import call, delegate, fail, parallel, say

    @tool
    def search(query: str) -> str:
        """Search the web."""
        return f"results for {query}"

    model = ScriptedChatModel(
        script={
            "main": [
                parallel(
                    delegate("Research A", "researcher"),
                    delegate("Research B", "researcher"),
                    delegate("Write C", "writer"),
                ),
                say("Done: combined."),
            ],
            "researcher": {
                "Research A": [call("search", query="A"), say("A is fine")],
                "Research B": [delegate("Dig deeper"), say("B is fine")],
            },
            "general-purpose": ["deep result"],
            "writer": [fail("writer crashed")] if fail_writer else ["C written"],
        },
        latency=latency,
    )
    return create_deep_agent(
        model,
        [search],
        subagents=[
            {"name": "researcher", "description": "Researches", "system_prompt": "research"},
            {"name": "writer", "description": "Writes", "system_prompt": "write", "tools": []},
        ],
    )
