"""Views of large and growing traces: patch size, the bounded snapshot, streaming replies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from nbagents.display._html import NODE_LIMIT
from nbagents.display._viewmodel import ViewBuilder, build_view
from nbagents.models import ScriptedChatModel
from nbagents.tracing import Span, Trace, recording
from nbagents.tracing._jsonready import jsonready
from nbagents.tracing.model import STREAMED


def _span(sid: str, parent: str | None, kind: Any, start: float, **kw: Any) -> Span:
    return Span(
        id=sid, parent_id=parent, kind=kind, name=sid, agent="main", depth=0, start=start, **kw
    )


def big_trace(tasks: int) -> Trace:
    """A main agent fanning out to ``tasks`` sub-agents, each with a model and a tool call."""
    spans = [_span("main", None, "agent", 0.0)]
    for i in range(tasks):
        t = 0.001 * i
        spans.append(_span(f"t{i}", "main", "task", t, end=t + 1, status="ok"))
        spans.append(_span(f"s{i}", f"t{i}", "subagent", t, end=t + 1, status="ok"))
        spans.append(_span(f"m{i}", f"s{i}", "model", t, end=t + 0.5, status="ok", model="m"))
        spans.append(_span(f"x{i}", f"s{i}", "tool", t + 0.5, end=t + 0.9, status="ok"))
    return Trace(spans)


def test_a_one_span_change_in_a_3000_span_trace_sends_a_small_patch() -> None:
    trace = big_trace(750)
    tool = trace.get("x400")
    tool.status, tool.end = "running", None  # the one step still going on
    builder = ViewBuilder(trace)
    builder.update()
    whole = len(json.dumps(builder.view()))
    tool.status, tool.end, tool.outputs = "ok", 1.0, {"content": "done"}
    patch = builder.patch(builder.update())
    size = len(json.dumps(patch))
    assert [n["name"] for n in patch["nodes"]] == ["x400"]
    assert size < 20_000 < whole, (size, whole)
    # and nothing at all when nothing changed
    assert not builder.update()


@pytest.mark.slow  # builds a 10,000-span trace
def test_the_snapshot_of_a_10000_span_trace_is_bounded_and_says_what_it_left_out() -> None:
    trace = big_trace(2500)
    html = trace.to_html()
    assert len(html) < 2_000_000, len(html)
    assert html.count("<li ") == NODE_LIMIT
    assert f"and {10_001 - NODE_LIMIT:,} more steps" in html
    assert "and 2,301 more agents" in html  # token table and timeline: 200 rows each


def test_a_streaming_reply_grows_in_the_running_model_node() -> None:
    reply = "The quick brown fox jumps over the lazy dog, then naps in the sun."
    model = ScriptedChatModel(script={"*": [reply]}, stream_chunk_chars=8)
    previews: list[str] = []

    def watch(trace: Trace) -> None:
        for node in build_view(trace)["nodes"]:
            if node["kind"] == "model" and node["status"] == "running" and node["preview"]:
                previews.append(node["preview"])

    with recording() as tracer:
        tracer.trace.subscribe(watch)
        text = "".join(str(chunk.content) for chunk in model.stream("hi"))
    assert text == reply
    assert len(previews) >= 5 and previews == sorted(previews, key=len)
    assert reply.startswith(previews[0]) and previews[-1] == reply
    (span,) = [s for s in tracer.trace.spans if s.kind == "model"]
    assert STREAMED not in span.attributes  # the finished reply is in the outputs
    assert build_view(tracer.trace)["nodes"][0]["preview"] == reply


def test_finished_model_and_tool_calls_are_not_looked_at_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nbagents.display import _fingerprints

    trace = big_trace(750)  # 3,001 spans: every model and tool call has ended
    builder = ViewBuilder(trace)
    builder.update()
    seen: list[str] = []
    real = _fingerprints._fingerprint
    monkeypatch.setattr(
        _fingerprints, "_fingerprint", lambda span: seen.append(span.id) or real(span)
    )
    assert not builder.update()
    # only the agent, the tasks and the sub-agents, which may still change (a result, a pause)
    assert len(seen) == 1 + 2 * 750
    assert not any(sid[0] in "mx" and sid[1:].isdigit() for sid in seen)


def test_a_late_model_call_shows_the_system_prompt_and_the_last_messages() -> None:
    # Each call of a long run carries the whole conversation so far: its details pane shows
    # the system prompt (cut) and the latest messages, and says how many it left out.
    system = {"type": "system", "content": "You research. " * 100}
    talk = [{"type": "human" if i % 2 == 0 else "ai", "content": f"message {i}"} for i in range(10)]
    trace = Trace([_span("m", None, "model", 0.0, inputs={"messages": [[system, *talk]]})])
    [node] = build_view(trace)["nodes"]
    [field] = [f for f in node["details"] if f["type"] == "messages"]
    assert field["label"] == "Input messages (the last 4 of 10 and the system prompt)"
    shown = field["value"]
    assert [m["role"] for m in shown] == ["system", "human", "ai", "human", "ai"]
    assert [m["content"] for m in shown[1:]] == [f"message {i}" for i in range(6, 10)]
    assert len(shown[0]["content"]) < len(system["content"])  # the prompt is cut


def test_an_agent_past_the_tracers_bounds_shows_its_final_answer_and_latest_input() -> None:
    # A 200-way fan-out's main agent ends with 400+ messages, more than the tracer keeps of a
    # list: the view still shows its final answer and its last call's newest messages.
    raw: list[Any] = [HumanMessage("go")]
    for i in range(150):
        raw.append(AIMessage("", tool_calls=[{"name": "task", "args": {}, "id": f"c{i}"}]))
        raw.append(ToolMessage(f"result {i}", tool_call_id=f"c{i}"))
    raw.append(AIMessage("done"))
    agent = _span("a", None, "agent", 0.0, end=2.0, status="ok")
    agent.outputs = jsonready({"messages": raw})
    model = _span("m", "a", "model", 1.0, end=2.0, status="ok")
    model.inputs = jsonready({"messages": [raw[:-1]]})
    nodes = {n["name"]: n for n in build_view(Trace([agent, model]))["nodes"]}
    [answer] = [f for f in nodes["a"]["details"] if f["label"] == "Final answer"]
    assert [m["content"] for m in answer["value"]] == ["done"]
    [given] = [f for f in nodes["m"]["details"] if f["type"] == "messages"]
    assert given["label"] == "Input messages (the last 4 of 301)"
    assert [m["content"] for m in given["value"]][-2:] == ["", "result 149"]


def test_a_patch_carries_a_nodes_details_and_conversation_only_when_they_changed() -> None:
    # A sub-agent of a wide fan-out changes at each of its steps: its conversation grows, while
    # its details (description, result) stay as they were until it ends.
    system = {"type": "system", "content": "You look things up. " * 50}
    task = {"type": "human", "content": "look up k"}
    spans = [
        _span("main", None, "agent", 0.0),
        _span("t", "main", "task", 0.0, attributes={"description": "look up k"}),
        _span("s", "t", "subagent", 0.0, attributes={"description": "look up k"}),
        _span("m1", "s", "model", 0.1, end=0.2, status="ok", inputs={"messages": [[system, task]]}),
    ]
    trace = Trace(spans)
    builder = ViewBuilder(trace)
    builder.update()
    trace.add(_span("m2", "s", "model", 0.3, inputs={"messages": [[system, task]]}))
    patch = builder.patch(builder.update())
    nodes = {n["name"]: n for n in patch["nodes"]}
    assert "conversation" in nodes["s"] and "details" not in nodes["s"]
    assert nodes["s"]["children"] == [builder.view()["nodes"][3]["id"], nodes["m2"]["id"]]
    assert "details" in nodes["m2"]  # a new step comes whole
    assert "m1" not in nodes
    # the patched node, merged as the front end merges it, is the one a whole view shows
    whole = {n["name"]: n for n in builder.view()["nodes"]}
    assert whole["s"]["details"] and whole["s"]["conversation"]["turns"]
