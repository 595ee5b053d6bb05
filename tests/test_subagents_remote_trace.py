"""What the trace shows of a remote sub-agent's run, traced from its steps (the default) or from
every run event (``"trace": "events"``), against a real ``langgraph dev`` server on loopback.

The served graphs (``tests/remote_graph/``) run on ``ScriptedChatModel``: a deep agent whose own
sub-agents run on the server (``lead``), an agent that stops for a human (``asker``), a plain
LangGraph graph (``plain``) and the worker they share.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from remote_graph.more_graphs import LEAD_PROMPT
from remote_graph.serve import LANGGRAPH, Server

from nbagents import RemoteSubAgent, ScriptedChatModel, Tracer, create_deep_agent
from nbagents.comparison import compare
from nbagents.export import to_otel_spans
from nbagents.models import delegate
from nbagents.tracing import Span, Trace

pytestmark = pytest.mark.server  # starts a `langgraph dev` server

pytest.importorskip("langgraph_sdk")
if not Path(LANGGRAPH).exists():
    pytest.skip("langgraph-cli[inmem] is not installed (the test extra)", allow_module_level=True)

DETAILS = ["steps", "events"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(
        tmp_path_factory.mktemp("langgraph-trace"), graphs=("worker", "lead", "asker", "plain")
    )
    yield running
    running.stop()


def traced(
    server: Server, graph: str, job: str, detail: str, mode: str = "invoke"
) -> tuple[Trace, ToolMessage]:
    """The trace of a main agent handing ``job`` to the remote ``graph``, and the task result."""
    spec: RemoteSubAgent = {
        "name": graph,
        "description": f"The {graph} graph on the team's server.",
        "url": server.url,
        "graph_id": graph,
        "trace": detail,  # type: ignore[typeddict-item]
    }
    model = ScriptedChatModel(script={"main": [delegate(job, graph), "all done"]})
    agent = create_deep_agent(model, subagents=[spec])
    tracer = Tracer()
    config = {"callbacks": [tracer]}
    payload = {"messages": [("user", "go")]}
    if mode == "ainvoke":
        result = asyncio.run(agent.ainvoke(payload, config))
    else:
        result = agent.invoke(payload, config)
    [message] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    return tracer.trace, message


def remote_agent(trace: Trace, name: str) -> Span:
    return next(s for s in trace.spans if s.kind == "subagent" and s.name == name)


def tree(trace: Trace, span: Span) -> list[Any]:
    """The visible steps under ``span``, in call order, as (kind, name, children); a model call
    by kind only: its span is named after the step (``"steps"``) or the model's class."""
    found: list[Any] = []
    for child in sorted(trace.children(span), key=lambda s: s.start):
        below = tree(trace, child)
        if child.hidden:
            found.extend(below)
        else:
            name = "" if child.kind == "model" else child.name
            found.append((child.kind, name, below))
    return found


def models(trace: Trace, span: Span) -> list[Span]:
    return [s for s in trace.descendants(span) if s.kind == "model"]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_a_remote_deep_agents_own_subagents_are_traced_with_exact_tokens(
    server: Server, mode: str
) -> None:
    runs = {detail: traced(server, "lead", "survey", detail, mode) for detail in DETAILS}

    worker = [("model", "", []), ("tool", "work", []), ("model", "", [])]
    spawn = ("task", "task", [("subagent", "worker", worker)])
    expected = [("model", "", []), spawn, spawn, ("model", "", [])]
    for trace, message in runs.values():
        lead = remote_agent(trace, "lead")
        assert lead.status == "ok"
        assert tree(trace, lead) == expected
        assert all(s.status == "ok" for s in trace.descendants(lead))
        own = [s for s in models(trace, lead) if s.model == "scripted-lead"]
        assert len(own) == 2
        # The lead's own calls are the tokens its answer reports; its workers' are extra.
        assert sum(s.usage.total for s in own) == message.artifact["tokens"]["total"]
        nested = [s for s in models(trace, lead) if s not in own]
        assert len(nested) == 4 and all(s.model == "scripted-remote" for s in nested)
        assert all(s.usage.total > 0 for s in nested)
    # The same calls, the same exact tokens, whichever way the steps came.
    steps, events = (runs[d][0] for d in DETAILS)
    usage = {
        d: sorted(
            (s.model, s.usage.input, s.usage.output) for s in models(t, remote_agent(t, "lead"))
        )
        for d, t in (("steps", steps), ("events", events))
    }
    assert usage["steps"] == usage["events"]


def test_a_model_call_shows_the_conversation_from_steps_the_whole_request_from_events(
    server: Server,
) -> None:
    for detail in DETAILS:
        trace, _ = traced(server, "lead", "survey", detail)
        lead = remote_agent(trace, "lead")
        first = min(models(trace, lead), key=lambda s: s.start)
        kinds = [m["type"] for m in first.inputs]
        if detail == "steps":  # the step's input: the conversation, not what middleware adds
            assert kinds == ["human"]
            assert first.name == "model"
        else:
            assert kinds == ["system", "human"]
            assert first.inputs[0]["content"].startswith(LEAD_PROMPT)
            assert first.name == "ScriptedChatModel"
        assert first.inputs[-1]["content"] == "survey"
        entries = [e.kind for e in trace.transcript(lead).entries]
        assert entries.count("reply") == 2
        assert ("system" in entries) == (detail == "events")


@pytest.mark.parametrize("detail", DETAILS)
def test_a_remote_tool_that_waits_for_a_human_is_interrupted_not_failed(
    server: Server, detail: str
) -> None:
    trace, message = traced(server, "asker", "jump", detail)

    asker = remote_agent(trace, "asker")
    [risky] = [s for s in trace.descendants(asker) if s.kind == "tool"]
    assert risky.name == "risky" and risky.status == "interrupted"
    assert risky.inputs == {"action": "jump"}
    assert "May I jump?" in (risky.error or "")
    assert all(s.status != "running" for s in trace.descendants(asker))
    # The main agent has no checkpointer: it cannot pause for the question, so the sub-agent
    # fails saying so (with one, it pauses: test_subagents_remote_approvals.py).
    assert not any(s.attributes.get("pending") for s in trace.spans)
    assert asker.status == "error" and "checkpointer" in (asker.error or "")
    assert message.status == "error" and "{'question': 'May I jump?'}" in message.text


def test_a_plain_graph_shows_its_nodes_with_the_calls_made_in_them(server: Server) -> None:
    trace, message = traced(server, "plain", "tidy up", "steps")

    plain = remote_agent(trace, "plain")
    assert tree(trace, plain) == [
        ("chain", "think", [("model", "", [])]),
        ("chain", "act", [("tool", "work", [])]),
        ("chain", "think", [("model", "", [])]),
    ]
    calls = models(trace, plain)
    assert all(s.model == "scripted-plain" and s.usage.total > 0 for s in calls)
    assert sum(s.usage.total for s in calls) == message.artifact["tokens"]["total"]
    [work] = [s for s in trace.descendants(plain) if s.kind == "tool"]
    assert work.inputs == {"job": "tidy up"}
    assert work.outputs["content"] == "worked on: tidy up"
    assert message.text == "plain says: worked on: tidy up"


@pytest.mark.parametrize("detail", DETAILS)
def test_a_remote_tool_error_is_named_as_on_the_server(server: Server, detail: str) -> None:
    trace, message = traced(server, "worker", "explode now", detail)

    assert message.status == "error"
    worker = remote_agent(trace, "worker")
    [work] = [s for s in trace.descendants(worker) if s.kind == "tool"]
    assert work.status == "error"
    assert work.error == "ValueError: cannot do 'explode now'"


def test_views_export_and_comparison_read_a_steps_trace_as_an_events_trace(
    server: Server,
) -> None:
    steps, _ = traced(server, "lead", "survey", "steps")
    events, _ = traced(server, "lead", "survey", "events")

    rows = compare(steps, events).rows  # type: ignore[union-attr]
    assert [(r.depth, r.type) for r in rows] == [
        (0, "main"),
        (1, "lead"),
        (2, "worker"),
        (2, "worker"),
    ]
    for row in rows:
        assert (row.a.status, row.a.tokens) == (row.b.status, row.b.tokens)
    # Both read the lead's workers' answers: from the steps the lead wrote, and from the
    # Command its task tool returned (serialised by the server, revived by nbagents).
    for answers in ([r.a.result for r in rows[2:]], [r.b.result for r in rows[2:]]):
        assert answers == [
            "worker says: worked on: survey part A",
            "worker says: worked on: survey part B",
        ]
    exported = {
        name: to_otel_spans(trace) for name, trace in (("steps", steps), ("events", events))
    }
    for spans in exported.values():
        chats = [s for s in spans if s.attributes["nbagents.kind"] == "model"]  # type: ignore[index]
        assert sorted(s.name for s in chats).count("chat scripted-remote") == 4
    assert len(exported["steps"]) == len(exported["events"])
    html = steps.to_html()
    assert "scripted-lead" in html and "scripted-remote" in html
