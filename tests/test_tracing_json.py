"""The trace's JSON format: a lossless round trip, and clear errors for files that are not one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from nbagents import ScriptedChatModel, Trace, create_deep_agent
from nbagents.models import call, delegate, fail, parallel, say
from nbagents.tracing import TraceFormatError, recording
from nbagents.tracing._jsonio import VERSION


@tool
def lookup(query: str) -> str:
    """Look ``query`` up."""
    return f"facts about {query} " + "é€😀 " * 3


@pytest.fixture(scope="module")
def trace() -> Trace:
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(
                    delegate("Research alpha", "researcher"),
                    delegate("Research beta", "researcher"),
                    delegate("Break", "general-purpose"),
                ),
                say("All done."),
            ],
            "researcher": {
                "Research alpha": [call("lookup", query="alpha"), say("alpha")],
                "Research beta": [delegate("nested", "general-purpose"), say("beta")],
            },
            "general-purpose": {"nested": ["deep"], "Break": [fail("boom")]},
        }
    )
    agent = create_deep_agent(
        model,
        [lookup],
        subagents=[{"name": "researcher", "description": "R.", "system_prompt": "R."}],
    )
    with recording() as tracer:
        agent.invoke({"messages": [HumanMessage("go")]})
    tracer.trace.title = "round trip"
    return tracer.trace


def test_round_trip_is_lossless(trace: Trace, tmp_path: Path) -> None:
    text = trace.to_json()
    again = Trace.from_json(text)
    assert again.to_json() == text
    assert again.title == "round trip" and again.finished
    assert [s.to_dict() for s in again.spans] == [s.to_dict() for s in trace.spans]
    assert again.subagents == trace.subagents
    assert len(again.subagents) == 4
    assert {r.status for r in again.subagents} == {"ok", "error"}
    pd.testing.assert_frame_equal(again.token_usage(), trace.token_usage())
    pd.testing.assert_frame_equal(again.token_usage("spawn"), trace.token_usage("spawn"))
    pd.testing.assert_frame_equal(again.to_dataframe(), trace.to_dataframe())
    for span in trace.spans:
        assert [c.id for c in again.visible_children(span.id)] == [
            c.id for c in trace.visible_children(span)
        ]
    assert again.status == trace.status
    assert again.summary() == trace.summary()
    # every view of the reloaded trace is the view of the recorded one
    assert again.to_html() == trace.to_html()
    assert again.to_graphviz().source == trace.to_graphviz().source

    path = tmp_path / "run.trace.json"
    trace.save(path)
    loaded = Trace.load(path)
    assert loaded.to_json() == text
    assert "é€😀" in path.read_text(encoding="utf-8")


def test_json_is_plain_data(trace: Trace) -> None:
    payload = json.loads(trace.to_json())
    assert payload["format"] == "nbagents.trace" and payload["version"] == VERSION
    # Every value the tracer stored is JSON-native: dumping without a fallback works.
    json.dumps(payload, allow_nan=False)


def _valid(trace: Trace) -> dict[str, Any]:
    return dict(json.loads(trace.to_json()))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda t: "", "the file is empty"),
        (lambda t: t.to_json()[: len(t.to_json()) // 2], "looks truncated"),
        (lambda t: t.to_json()[:-1], "looks truncated"),
        (lambda t: t.to_json()[: t.to_json().index("true") + 2], "looks truncated"),
        (lambda t: t.to_json().replace('"spans": [', '"spans": [}', 1), "not valid JSON"),
        (lambda t: "[1, 2, 3]", "not an nbagents trace"),
        (lambda t: json.dumps({"cells": [], "nbformat": 4}), "not an nbagents trace"),
        (lambda t: json.dumps({**_valid(t), "version": VERSION + 1}), "newer than this"),
        (lambda t: json.dumps({**_valid(t), "version": "1"}), 'no valid "version"'),
        (lambda t: json.dumps({**_valid(t), "spans": {}}), 'no "spans" list'),
        (lambda t: json.dumps({**_valid(t), "finished": "false"}), "should be true or false"),
    ],
    ids=[
        "empty",
        "truncated-half",
        "truncated-end",
        "truncated-in-true",
        "corrupt",
        "list",
        "notebook",
        "newer",
        "string-version",
        "spans-not-list",
        "finished-string",
    ],
)
def test_bad_files_name_the_problem(trace: Trace, make: Any, message: str) -> None:
    with pytest.raises(TraceFormatError, match=message.replace("(", r"\(")):
        Trace.from_json(make(trace))


def _with_span(trace: Trace, position: int, **changes: Any) -> str:
    payload = _valid(trace)
    span = payload["spans"][position]
    for key, value in changes.items():
        if value is ...:
            del span[key]
        else:
            span[key] = value
    return json.dumps(payload)


@pytest.mark.parametrize(
    ("position", "changes", "message"),
    [
        (3, {"kind": "banana"}, r"span #3: unknown kind 'banana'"),
        (2, {"status": "done"}, r"span #2: unknown status 'done'"),
        (1, {"start": "soon"}, r"span #1: 'start' should be int or float"),
        (1, {"id": ...}, r"span #1 has no 'id' field"),
        (4, {"depth": True}, r"span #4: 'depth' should be int"),
        (2, {"usage": {"input": 1, "bananas": 2}}, r"span #2: bad token usage entry 'bananas'"),
        (2, {"parent_id": "nowhere"}, r"span #2 .* names a parent 'nowhere'"),
    ],
)
def test_malformed_spans_are_named(
    trace: Trace, position: int, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(TraceFormatError, match=message):
        Trace.from_json(_with_span(trace, position, **changes))


@pytest.mark.parametrize("attributes", [{"batch": ["m"]}, {"batch": "m", "call_index": "first"}])
def test_attributes_named_like_the_call_order_but_of_another_type_load_and_render(
    trace: Trace, attributes: dict[str, Any]
) -> None:
    # A tool may record any attribute, "batch" too (found by the property test in
    # test_tracing_faults): what save writes, load reads, and the views order such a step by
    # its start.
    for position in (2, 3):
        text = _with_span(trace, position, attributes=attributes)
        loaded = Trace.from_json(text)
        assert loaded.to_json() == Trace.from_json(loaded.to_json()).to_json()
        assert loaded.to_html().startswith('<div class="nba-root')
        assert len(loaded.to_dataframe()) == len(trace)


def test_repeated_span_id_is_an_error(trace: Trace) -> None:
    payload = _valid(trace)
    payload["spans"].append(payload["spans"][-1])
    with pytest.raises(TraceFormatError, match="repeats the id"):
        Trace.from_json(json.dumps(payload))


def test_load_names_the_file(trace: Trace, tmp_path: Path) -> None:
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    with pytest.raises(TraceFormatError, match=r"image\.png: not a text file"):
        Trace.load(binary)
    cut = tmp_path / "cut.json"
    cut.write_text(trace.to_json(indent=1)[:500], encoding="utf-8")
    with pytest.raises(TraceFormatError, match=r"cut.json: not valid JSON \(the file looks"):
        Trace.load(cut)
