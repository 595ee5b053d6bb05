"""``SpanAttributes`` names every attribute the tracer writes, with the type it writes; the typed
read (``Span.typed_attributes()``) keeps a loaded file's values of other types from the views."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from support.export_scenario import run

from nbagents import ScriptedChatModel, Span, Trace, create_deep_agent, pending_approvals
from nbagents.comparison import compare
from nbagents.display._viewmodel import build_view
from nbagents.export import to_otel_spans
from nbagents.models import call, delegate, say
from nbagents.tracing import SpanAttributes, recording

_threads = itertools.count()

PAUSES = {"pending", "thread_id", "paused"}
READ_ELSEWHERE = {
    "description",
    "subagent_type",
    "tool_call_id",
    "parent_agent",
    "withheld",
    "passed",
    "returned",
    "result",
    "call_index",
    "tools",
    "skills_offered",
    "skills_opened",
    "skill_warnings",
    "streamed",
    *PAUSES,
}
"""The attributes display, export, comparison and re-runs read."""


def untyped(trace: Trace) -> list[tuple[str, str, str]]:
    """(span, key, value) of every attribute ``SpanAttributes`` does not type as it is."""
    return [
        (span.name, key, repr(value)[:60])
        for span in trace.spans
        for key, value in span.attributes.items()
        if span.typed_attributes().get(key, ...) is not value
    ]


def test_a_run_with_parallel_and_nested_sub_agents_writes_only_typed_attributes() -> None:
    trace, _ = run(latency=0.0)
    assert untyped(trace) == []
    written = {key for span in trace.spans for key in span.attributes}
    not_in_this_run = {"skills_offered", "skills_opened", "skill_warnings", "streamed"}
    assert READ_ELSEWHERE - PAUSES - not_in_this_run <= written


@tool
def deploy(target: str) -> str:
    """Deploy the service to ``target``."""
    return f"deployed to {target}"


def test_a_paused_and_resumed_run_writes_only_typed_attributes() -> None:
    ops = {"name": "ops", "description": "Deploys.", "system_prompt": "Deploy."}
    script = {
        "main": [delegate("Ship it", "ops"), say("done")],
        "ops": [call("deploy", target="prod"), say("shipped")],
    }
    agent = create_deep_agent(
        ScriptedChatModel(script=script),
        [deploy],
        subagents=[ops],
        interrupt_on={"deploy": True},
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": f"typed-{next(_threads)}"}}
    with recording() as tracer:
        paused = agent.invoke({"messages": [("user", "ship")]}, config)
        while_paused = Trace.from_json(tracer.trace.to_json())
        requests = pending_approvals(paused)
        requests.approve_all()
        agent.invoke(requests.resume(), config)
    assert untyped(while_paused) == []
    assert untyped(tracer.trace) == []
    written = {
        k for trace in (while_paused, tracer.trace) for s in trace.spans for k in s.attributes
    }
    assert written >= PAUSES


def test_every_key_other_layers_read_is_typed() -> None:
    # A type the typed read cannot check fails at import.
    assert set(get_type_hints(SpanAttributes)) >= READ_ELSEWHERE


# Loading a file already rejects a ``batch`` or ``call_index`` the views could not order by.
WRONG: dict[str, Any] = {
    "description": 42,
    "subagent_type": ["w"],
    "tool_call_id": 7,
    "parent_agent": {"x": 1},
    "withheld": 5,
    "passed": ["a", 1],
    "returned": "files",
    "result": ["text"],
    "skills_offered": "one",
    "skills_opened": [1],
    "skill_warnings": 3,
    "remote": "server",
    "state_diff": "guessed",
    "pending": ["pending"],
    "thread_id": 9,
    "paused": [[1, "x"]],
    "streamed": ["a"],
}


def test_values_of_the_wrong_type_are_left_out() -> None:
    wrong = {**WRONG, "call_index": True, "batch": 3}
    span = Span("s", None, "subagent", "w", "w", 1, 0.0, 1.0, "ok", attributes=wrong)
    assert span.typed_attributes() == {}
    right: dict[str, Any] = {"description": "d", "withheld": {"messages": "3 items"}, "n": 1}
    span.attributes = right
    assert span.typed_attributes() == {"description": "d", "withheld": {"messages": "3 items"}}
    assert span.typed_attributes()["withheld"] is right["withheld"]  # not a copy


@pytest.mark.parametrize("kind", ["agent", "subagent", "task", "skill", "model", "tool"])
def test_a_loaded_trace_with_wrong_types_still_renders_exports_and_compares(
    tmp_path: Path, kind: Any
) -> None:
    spans = [
        Span("root", None, "agent", "main", "main", 0, 0.0, 3.0, "ok", attributes=dict(WRONG)),
        Span("t", "root", "task", "task", "main", 0, 0.5, 2.5, "ok", attributes=dict(WRONG)),
        Span("s", "t", kind, "w", "w", 1, 1.0, 2.0, "error", error="E", attributes=dict(WRONG)),
    ]
    Trace(spans).save(tmp_path / "t.json")
    loaded = Trace.load(tmp_path / "t.json")
    assert loaded.to_html().startswith('<div class="nba-root')
    assert len(build_view(loaded)["nodes"]) == 3
    assert "digraph" in loaded.to_graphviz().source
    assert "failed" in repr(loaded)
    assert len(loaded.subagents) == (kind == "subagent")
    assert len(to_otel_spans(loaded)) == 3
    assert compare(loaded, loaded).to_html()
