"""200 parallel sub-agents, repeated, sync and async: no lost or mis-parented span, exact tokens."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

from nbagents import ScriptedChatModel, Trace, Tracer, create_deep_agent
from nbagents.models import call, delegate, parallel, say
from nbagents.tracing import Span, TokenUsage, recording

N = 200
REPEATS = 3


@tool
def echo(text: str) -> str:
    """Repeat ``text``."""
    return text


def agent(n: int = N) -> Any:
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(*(delegate(f"job {i}", "worker") for i in range(n))),
                say("all done"),
            ],
            "worker": {"*": [call("echo", text="ping"), say("done")]},
        }
    )
    worker = {"name": "worker", "description": "Works.", "system_prompt": "Work.", "tools": [echo]}
    return create_deep_agent(model, [echo], subagents=[worker])


def first_human(span: Span) -> str:
    return next(m["content"] for m in span.inputs if m["type"] == "human")


def check(trace: Trace, result: dict[str, Any], n: int = N) -> None:
    spans = trace.spans
    assert all(s.status == "ok" and s.end is not None for s in spans)
    assert len({s.id for s in spans}) == len(spans)
    assert [r.name for r in trace.roots] == ["main"]
    main = trace.roots[0]

    tasks = [s for s in trace.visible_children(main) if s.kind == "task"]
    assert [t.attributes["description"] for t in tasks] == [f"job {i}" for i in range(n)]
    assert [t.attributes["call_index"] for t in tasks] == list(range(n))

    by_kind: dict[str, int] = {}
    for s in spans:
        by_kind[s.kind] = by_kind.get(s.kind, 0) + 1
    assert by_kind["subagent"] == n and by_kind["task"] == n
    assert by_kind["model"] == 2 + 2 * n and by_kind["tool"] == n

    artifacts = {
        m.artifact["description"]: m.artifact
        for m in result["messages"]
        if isinstance(m, ToolMessage) and isinstance(m.artifact, dict)
    }
    records = trace.subagents
    assert [r.description for r in records] == [f"job {i}" for i in range(n)]
    for task, record in zip(tasks, records, strict=True):
        sub = trace.get(record.span_id)
        # The sub-agent hangs under the task that spawned it…
        assert trace.children(task) == [sub]
        assert sub.attributes["tool_call_id"] == task.attributes["tool_call_id"]
        assert sub.attributes["description"] == task.attributes["description"]
        # …and every model and tool span under it is its own: the model saw this brief, the
        # tool ran the call this sub-agent's model made.
        kids = trace.visible_children(sub)
        assert [k.kind for k in kids] == ["model", "tool", "model"]
        assert {first_human(k) for k in kids if k.kind == "model"} == {record.description}
        assert {(k.agent, k.depth) for k in kids} == {("worker", 1)}
        asked = kids[0].outputs["tool_calls"][0]["id"]
        assert kids[1].attributes["tool_call_id"] == asked
        assert kids[1].attributes["batch"] == kids[0].id
        # Tokens: exactly what the task tool measured from the sub-agent's own messages.
        art = artifacts[record.description]
        own = record.tokens_own
        assert art["tokens"] == {"input": own.input, "output": own.output, "total": own.total}
        assert record.tokens_total == own

    total = sum((r.tokens_own for r in records), TokenUsage()) + trace.own_usage(main)
    assert trace.total_usage() == total
    assert result["messages"][-1].text == "all done"


@pytest.mark.slow  # hundreds of sub-agents, repeated
def test_200_parallel_subagents_sync() -> None:
    graph = agent()
    for _ in range(REPEATS):
        tracer = Tracer()
        result = graph.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [tracer]})
        check(tracer.trace, result)


@pytest.mark.slow  # hundreds of sub-agents, repeated
async def test_200_parallel_subagents_async() -> None:
    graph = agent()
    for _ in range(REPEATS):
        with recording() as tracer:
            result = await graph.ainvoke({"messages": [HumanMessage("go")]})
        check(tracer.trace, result)
        assert tracer.trace.finished


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_two_traced_runs_at_once_stay_apart(mode: str) -> None:
    """Two concurrent runs traced by two tracers: each trace holds only its own run."""
    import asyncio

    graph = agent(50)
    first, second = Tracer(), Tracer()
    payload = {"messages": [HumanMessage("go")]}
    if mode == "ainvoke":
        results = await asyncio.gather(
            graph.ainvoke(payload, {"callbacks": [first]}),
            graph.ainvoke(payload, {"callbacks": [second]}),
        )
    else:
        results = await asyncio.gather(
            asyncio.to_thread(graph.invoke, payload, {"callbacks": [first]}),
            asyncio.to_thread(graph.invoke, payload, {"callbacks": [second]}),
        )
    check(first.trace, results[0], 50)
    check(second.trace, results[1], 50)
    assert not {s.id for s in first.trace.spans} & {s.id for s in second.trace.spans}


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
@pytest.mark.slow  # hundreds of sub-agents, repeated
async def test_the_trace_of_a_500_way_fan_out_is_complete(mode: str) -> None:
    """500 parallel sub-agents, where the cost per spawn used to grow with the width: every
    spawn, every model and tool call, under the right parent, and tokens exact to the one.
    (Nothing here is timed: the benchmarks measure speed.)"""
    n = 500
    graph = agent(n)
    tracer = Tracer()
    payload = {"messages": [HumanMessage("go")]}
    config = {"callbacks": [tracer]}
    result = (
        await graph.ainvoke(payload, config) if mode == "ainvoke" else graph.invoke(payload, config)
    )
    check(tracer.trace, result, n)
    main = tracer.trace.roots[0]
    # The main agent's own tokens are what its model reported, message by message.
    reported = TokenUsage.from_messages(result["messages"])
    assert tracer.trace.own_usage(main) == reported
    assert len([m for m in result["messages"] if isinstance(m, ToolMessage)]) == n
