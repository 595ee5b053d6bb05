"""``recording()``, the tracer's safety guarantees, and JSON-ready inputs and outputs."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

import pytest
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.types import Command, Send
from pydantic import BaseModel

from nbagents import ScriptedChatModel, Trace, Tracer, create_deep_agent
from nbagents._contract import describe_size
from nbagents.models import delegate, say
from nbagents.tracing import Span, recording
from nbagents.tracing._jsonready import (
    HEAD_ITEMS,
    MAX_ITEMS,
    MAX_STRING,
    items_left_out,
    jsonready,
)


def small_agent() -> Any:
    script = {"main": [delegate("job"), say("ok")], "general-purpose": ["done"]}
    model = ScriptedChatModel(script=script)
    return create_deep_agent(model)


PAYLOAD = {"messages": [HumanMessage("go")]}


def test_recording_attaches_to_every_run_and_ends_the_trace() -> None:
    agent = small_agent()
    model = ScriptedChatModel(script={"solo": ["hi"]})
    with recording() as tracer:
        assert isinstance(tracer, Tracer)
        assert not tracer.trace.finished
        agent.invoke(PAYLOAD)
        model.invoke("hello")
    assert tracer.trace.finished
    assert [(r.kind, r.name) for r in tracer.trace.roots] == [
        ("agent", "main"),
        ("model", "ScriptedChatModel"),
    ]
    assert len(tracer.trace.subagents) == 1
    before = len(tracer.trace)
    agent.invoke(PAYLOAD)  # after the block: not recorded
    assert len(tracer.trace) == before


async def test_recording_async_runs_and_concurrent_tasks() -> None:
    agent = small_agent()
    with recording() as tracer:
        await asyncio.gather(agent.ainvoke(PAYLOAD), agent.ainvoke(PAYLOAD))
        async for _ in agent.astream(PAYLOAD):
            pass
    roots = tracer.trace.roots
    assert [r.name for r in roots] == ["main", "main", "main"]
    assert all(r.status == "ok" for r in roots)
    assert len(tracer.trace.subagents) == 3
    for root in roots:
        subs = [s for s in tracer.trace.descendants(root) if s.kind == "subagent"]
        assert len(subs) == 1


def test_nested_recordings_both_see_inner_runs() -> None:
    agent = small_agent()
    with recording() as outer:
        agent.invoke(PAYLOAD)
        with recording() as inner:
            agent.invoke(PAYLOAD)
        assert inner.trace.finished and not outer.trace.finished
    assert len(outer.trace.roots) == 2
    assert len(inner.trace.roots) == 1
    assert inner.trace.roots[0].id == outer.trace.roots[1].id


def test_a_trace_names_the_tracer_that_records_it() -> None:
    with recording() as tracer:
        pass
    assert tracer.trace.recorder is tracer
    assert Tracer(title="x").trace.recorder is not None
    assert Trace().recorder is None
    assert Trace.from_json(tracer.trace.to_json()).recorder is None


def test_explicit_callback_inside_recording_is_not_doubled() -> None:
    agent = small_agent()
    alone = Tracer()
    agent.invoke(PAYLOAD, {"callbacks": [alone]})
    with recording() as tracer:
        agent.invoke(PAYLOAD, {"callbacks": [tracer]})
    assert len(tracer.trace) == len(alone.trace)
    assert tracer.trace.summary() == alone.trace.summary()


def test_runs_still_going_when_the_block_ends_are_marked() -> None:
    agent = small_agent()
    with recording() as tracer:
        stream = agent.stream(PAYLOAD)
        next(stream)
    root = tracer.trace.roots[0]
    assert root.status == "interrupted"
    assert root.error == "still running when the trace ended"
    stream.close()


def test_listeners_hear_every_start_and_end() -> None:
    agent = small_agent()
    tracer = Tracer()
    heard: list[int] = []
    tracer.trace.subscribe(lambda t: heard.append(len(t)))

    def broken(trace: Trace) -> None:
        raise RuntimeError("view failed")

    tracer.trace.subscribe(broken)
    agent.invoke(PAYLOAD, {"callbacks": [tracer]})
    assert len(heard) >= 2 * len(tracer.trace)
    assert heard[-1] == len(tracer.trace)


def test_a_failing_tracer_never_breaks_the_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import nbagents.tracing._writer as writer_module

    def explode(value: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("tracer bug")

    monkeypatch.setattr(writer_module, "deferred", explode)
    tracer = Tracer()
    with caplog.at_level(logging.ERROR, logger="nbagents.tracing"):
        result = small_agent().invoke(PAYLOAD, {"callbacks": [tracer]})
        # The failing events are applied when the trace is read: nor does the reader break.
        spans = tracer.trace.spans
    assert result["messages"][-1].text == "ok"
    assert spans and tracer.guard.failures > 1
    failures = [r for r in caplog.records if r.name == "nbagents.tracing"]
    assert len(failures) == 1
    assert "further failures are not logged" in failures[0].getMessage()


def test_llm_and_cache_read_tokens() -> None:
    llm = FakeListLLM(responses=["plain text"])
    reply = AIMessage(
        "cached",
        usage_metadata={
            "input_tokens": 100,
            "output_tokens": 5,
            "total_tokens": 105,
            "input_token_details": {"cache_read": 80},
        },
        response_metadata={"model_name": "fake-1"},
    )
    chat = GenericFakeChatModel(messages=iter([reply]))
    with recording() as tracer:
        llm.invoke("a prompt")
        chat.invoke("question")
    first, second = tracer.trace.roots
    assert (first.kind, first.inputs, first.outputs) == ("model", "a prompt", "plain text")
    assert second.kind == "model" and second.model == "fake-1"
    assert (second.usage.input, second.usage.output, second.usage.total) == (100, 5, 105)
    assert second.usage.cache_read == 80
    assert second.outputs == {"type": "ai", "content": "cached"}


# -- JSON-ready values ----------------------------------------------------------------------------


class Point(BaseModel):
    x: int
    y: int


@dataclasses.dataclass
class Box:
    label: str
    points: list[Point]


def test_jsonready_messages_models_and_commands() -> None:
    call = {"name": "lookup", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}
    value = {
        "ai": AIMessage("", tool_calls=[call]),
        "tool": ToolMessage("res", tool_call_id="c1", name="lookup", status="error", artifact=[1]),
        "box": Box("b", [Point(x=1, y=2)]),
        "command": Command(update={"n": 1}, goto="next"),
        "send": Send("tools", {"a": 1}),
        "keys": {1: "one", (2, 3): "pair"},
        "set": {3, 1, 2},
        "bytes": b"\x00\x01",
        "float": float("nan"),
        "other": object,
    }
    out = jsonready(value)
    assert out["ai"] == {
        "type": "ai",
        "content": "",
        "tool_calls": [{"name": "lookup", "args": {"q": "x"}, "id": "c1"}],
    }
    assert out["tool"] == {
        "type": "tool",
        "content": "res",
        "name": "lookup",
        "tool_call_id": "c1",
        "status": "error",
        "artifact": [1],
    }
    assert out["box"] == {"label": "b", "points": [{"x": 1, "y": 2}]}
    assert out["command"] == {"type": "command", "update": {"n": 1}, "goto": "next"}
    assert out["send"] == {"type": "send", "node": "tools", "arg": {"a": 1}}
    assert out["keys"] == {"1": "one", "(2, 3)": "pair"}
    assert out["set"] == [1, 2, 3]
    assert out["bytes"] == "<2 bytes>"
    assert out["float"] == "nan"
    assert out["other"] == "<class 'object'>"


def test_jsonready_is_bounded() -> None:
    huge = "x" * (MAX_STRING * 3)
    text = jsonready(huge)
    assert text.startswith("x" * MAX_STRING) and text.endswith(f"[{MAX_STRING * 2} more chars]")
    items = jsonready(list(range(MAX_ITEMS + 50)))
    head, tail = list(range(HEAD_ITEMS)), list(range(HEAD_ITEMS + 50, MAX_ITEMS + 50))
    assert items == [*head, "… 50 more items", *tail]
    assert items_left_out(items) == 50 and items_left_out(list(range(3))) == 0
    nested: Any = "leaf"
    for _ in range(50):
        nested = [nested]
    depth = 0
    out = jsonready(nested)
    while isinstance(out, list):
        out, depth = out[0], depth + 1
    assert depth < 20 and isinstance(out, str)
    budget = jsonready([huge] * 100, max_chars=50_000)
    assert sum(len(s) for s in budget) < 80_000


def test_a_long_conversation_keeps_its_newest_messages_and_its_first() -> None:
    """An agent's state ends with its final answer: a list too long or too large for the
    tracer's bounds loses messages from its middle, never its last ones."""
    turns = [HumanMessage("the question")]
    for i in range(MAX_ITEMS):
        turns.append(AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": f"c{i}"}]))
        turns.append(ToolMessage(f"result {i}", tool_call_id=f"c{i}"))
    turns.append(AIMessage("the final answer"))
    kept = jsonready({"messages": turns})["messages"]
    assert kept[0]["content"] == "the question"
    assert kept[-1] == {"type": "ai", "content": "the final answer"}
    assert kept[-2]["content"] == f"result {MAX_ITEMS - 1}"
    assert items_left_out(kept) == len(turns) - MAX_ITEMS
    # Over the character budget, the newest are the ones kept whole.
    big = [HumanMessage("q" * 5_000)] + [AIMessage(f"{i}" + "x" * 5_000) for i in range(60)]
    kept = jsonready(big, max_chars=100_000)
    assert kept[-1]["content"].startswith("59x") and kept[-1]["content"].endswith("x")
    assert kept[0]["content"] == "q" * 5_000 and items_left_out(kept) > 0


def test_state_sizes_read_as_words() -> None:
    values = ["abc", b"ab", [1], [1, 2], {"a": 1}, set(), 3, None]
    assert [describe_size(v) for v in values] == [
        "3 chars",
        "2 bytes",
        "1 item",
        "2 items",
        "1 item",
        "0 items",
        "int",
        "NoneType",
    ]


def test_what_a_run_returned_is_recorded_as_it_was_returned() -> None:
    # Spans convert what they keep when read; the caller's own input and result are copied
    # first, so changing them afterwards does not change the trace.
    tracer = Tracer()
    payload = {"messages": [HumanMessage("go")]}
    result = small_agent().invoke(payload, {"callbacks": [tracer]})
    payload["messages"].append(HumanMessage("added to the input later"))
    result["messages"].append(HumanMessage("added to the result later"))
    result["extra"] = "a key added later"
    root = tracer.trace.roots[0]
    assert [m["content"] for m in root.inputs["messages"]] == ["go"]
    assert [m["type"] for m in root.outputs["messages"]] == ["human", "ai", "tool", "ai"]
    assert "extra" not in root.outputs


def test_span_data_is_converted_once_when_read() -> None:
    tracer = Tracer()
    small_agent().invoke(PAYLOAD, {"callbacks": [tracer]})
    model = next(s for s in tracer.trace.spans if s.kind == "model")
    first = model.inputs
    assert isinstance(first, list) and first[-1] == {"type": "human", "content": "go"}
    assert model.inputs is first  # the same converted value, not a new conversion
    assert Trace.from_json(tracer.trace.to_json()).get(model.id).inputs == first


def test_a_trace_says_whether_it_holds_a_span_or_its_id() -> None:
    trace = Trace()
    span = Span(id="a1", parent_id=None, kind="agent", name="a", agent="a", depth=0, start=0.0)
    assert span not in trace and "a1" not in trace
    trace.add(span)
    assert span in trace and "a1" in trace and "b2" not in trace


def test_a_listener_that_unsubscribes_while_the_trace_changes_is_not_called_again() -> None:
    trace = Trace()
    heard: list[int] = []

    def once(changed: Trace) -> None:
        heard.append(len(changed))
        unsubscribe()

    unsubscribe = trace.subscribe(once)
    trace.changed()
    trace.changed()
    assert heard == [0]
