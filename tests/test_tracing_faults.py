"""Faults in trace files and strings: what used to lose a trace or break every view.

- a lone surrogate (``os.fsdecode`` of a non-UTF-8 file name) made ``Trace.save`` raise;
- ``NaN``, ``Infinity`` and numbers of hundreds of digits loaded, then broke every view;
- a 5,000-digit integer or arrays nested 5,000 deep escaped as ``ValueError``/``RecursionError``,
  and arrays nested 500 deep loaded and could not be saved again;
- ``Tracer.finish()`` was not guarded like the callbacks.
Plus a property test: any Unicode in any string field survives save → load → save and renders.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbagents import Span, Trace, Tracer
from nbagents.display._viewmodel import build_view
from nbagents.tracing import TokenUsage, TraceFormatError


def small_trace(name: str = "tool", text: str = "result") -> Trace:
    return Trace(
        [
            Span("root", None, "agent", "main", "main", 0, 0.0, 2.0, "ok"),
            Span(
                "t",
                "root",
                "tool",
                name,
                "main",
                0,
                0.5,
                1.5,
                "ok",
                inputs={"path": text},
                outputs=text,
                usage=TokenUsage(3, 4, 7),
                model=text,
                attributes={"note": text, text: [text]},
            ),
        ]
    )


def test_a_file_name_that_is_not_utf8_saves_and_loads_losslessly(tmp_path: Path) -> None:
    name = os.fsdecode(b"report-\xff.txt")  # holds the lone surrogate "\udcff"
    trace = small_trace(name, f"wrote {name}")
    trace.save(tmp_path / "a.json")
    loaded = Trace.load(tmp_path / "a.json")
    assert loaded.get("t").name == name
    assert loaded.get("t").outputs == f"wrote {name}"
    loaded.save(tmp_path / "b.json")  # a loaded "\ud800" saves again
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert os.fsencode(Trace.load(tmp_path / "b.json").get("t").name) == b"report-\xff.txt"


def replace_start(text: str, value: str) -> str:
    return text.replace('"start": 0.5', f'"start": {value}', 1)


def replace_outputs(text: str, value: str) -> str:
    return text.replace('"outputs": "result"', f'"outputs": {value}', 1)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: replace_start(t, "NaN"), "NaN is not a number"),
        (lambda t: replace_start(t, "Infinity"), "Infinity is not a number"),
        (lambda t: replace_start(t, "-Infinity"), "-Infinity is not a number"),
        (lambda t: replace_start(t, "9" * 400), "400-digit integer"),
        (lambda t: replace_start(t, "9" * 400 + ".5"), "too large a number"),
        (lambda t: replace_start(t, "1e300"), "'start' is out of range"),
        (lambda t: replace_start(t, "9" * 5000), "5000-digit integer"),
        (lambda t: t.replace('"input": 3', '"input": ' + "7" * 400), "400-digit integer"),
        (lambda t: replace_outputs(t, "[" * 5000 + "]" * 5000), "nested too deep"),
        (lambda t: replace_outputs(t, "[" * 500 + "]" * 500), "'outputs' is nested more than"),
    ],
    ids=[
        "nan",
        "infinity",
        "minus-infinity",
        "400-digit-time",
        "400-digit-float",
        "huge-time",
        "5000-digit",
        "400-digit-tokens",
        "nested-5000",
        "nested-500",
    ],
)
def test_numbers_and_nesting_no_view_can_use_are_a_format_error_naming_the_file(
    tmp_path: Path, edit: Any, message: str
) -> None:
    text = small_trace().to_json(indent=1)
    bad = edit(text)
    assert bad != text
    path = tmp_path / "bad.json"
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(TraceFormatError, match=message) as caught:
        Trace.load(path)
    assert str(path) in str(caught.value)


def test_a_failing_finish_never_reaches_the_user(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    tracer = Tracer()

    def broken() -> None:
        raise RuntimeError("listener exploded")

    monkeypatch.setattr(tracer.trace, "changed", broken)
    with caplog.at_level(logging.ERROR, logger="nbagents.tracing"):
        tracer.finish()
        tracer.finish()
    assert tracer.trace.finished is True
    assert len([r for r in caplog.records if "finish" in r.getMessage()]) == 1


def test_a_failing_listener_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    trace = Trace()
    calls: list[int] = []

    def listener(_: Trace) -> None:
        calls.append(1)
        raise RuntimeError("boom")

    trace.subscribe(listener)
    with caplog.at_level(logging.ERROR, logger="nbagents"):
        for index in range(55):
            trace.add(Span(f"s{index}", None, "tool", "t", "main", 0, 0.0, 1.0, "ok"))
    assert len(calls) == 55
    assert len([r for r in caplog.records if "listener failed" in r.getMessage()]) == 1


# -- any Unicode anywhere -------------------------------------------------------------------------

HOSTILE_TEXT = st.text(
    alphabet=st.characters(codec=None, categories=None),  # every code point, surrogates too
    max_size=40,
) | st.sampled_from(
    ["\x00", "\u202e evil \u202c", "\ud800", "\udfff", "a" * 5000, "$x$ and $y$", "</script>"]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=HOSTILE_TEXT, text=HOSTILE_TEXT)
def test_any_string_survives_save_load_save_and_every_view(
    tmp_path_factory: pytest.TempPathFactory, name: str, text: str
) -> None:
    trace = small_trace(name, text)
    folder = tmp_path_factory.mktemp("prop")
    trace.save(folder / "a.json")
    loaded = Trace.load(folder / "a.json")
    again = loaded.to_json(indent=1)
    assert again == trace.to_json(indent=1)  # lossless
    span = loaded.get("t")
    assert (span.name, span.outputs, span.model) == (name, text, text)
    assert json.loads(again)["format"] == "nbagents.trace"
    # Every view renders, and shows the step.
    html = loaded.to_html()
    assert (
        html.startswith('<div class="nba-root nba-trace')
        and html.count('<span class="nba-kind">') == 2
    )
    assert [n["kind"] for n in build_view(loaded)["nodes"]] == ["agent", "tool"]
    assert len(loaded.to_dataframe()) == 2
    assert not loaded.token_usage().empty
    assert "digraph" in loaded.to_graphviz().source


def test_a_loaded_span_whose_pending_attribute_is_not_requests_still_renders(
    tmp_path: Path,
) -> None:
    # Found by the property test above: a tool named anything may record {"pending": [...]}.
    trace = small_trace("pending", "pending")
    trace.save(tmp_path / "t.json")
    loaded = Trace.load(tmp_path / "t.json")
    assert loaded.get("t").attributes["pending"] == ["pending"]
    assert "pending" in loaded.to_html()


# -- stopped from outside: Ctrl-C and cancellation ------------------------------------------------

WORKER = {"name": "w", "description": "Works.", "system_prompt": "Work."}


def test_ctrl_c_is_recorded_as_interrupted_with_a_reason_not_as_an_error() -> None:
    from langchain_core.tools import tool

    from nbagents import ScriptedChatModel, create_deep_agent
    from nbagents.models import call, delegate

    @tool
    def press_ctrl_c(x: str) -> str:
        """Stands for a user pressing Ctrl-C while the tool runs."""
        raise KeyboardInterrupt

    model = ScriptedChatModel(
        script={"main": [delegate("A", "w"), "done"], "w": [call("press_ctrl_c", x="1"), "ok"]}
    )
    agent = create_deep_agent(model, [press_ctrl_c], subagents=[WORKER])
    tracer = Tracer()
    with pytest.raises(KeyboardInterrupt):
        agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    stopped = {
        (s.kind, s.status, s.error)
        for s in tracer.trace.spans
        if not s.hidden and s.kind != "model"
    }
    reason = "interrupted by the user (KeyboardInterrupt)"
    assert stopped == {
        ("agent", "interrupted", reason),
        ("task", "interrupted", reason),
        ("subagent", "interrupted", reason),
        ("tool", "interrupted", reason),
    }
    assert tracer.trace.failures() == 0
    assert "failed" not in repr(tracer.trace)


async def test_a_cancelled_run_leaves_nothing_running_and_nothing_failed() -> None:
    import asyncio

    from langchain_core.tools import tool

    from nbagents import ScriptedChatModel, create_deep_agent
    from nbagents.models import call, delegate, parallel

    @tool
    async def slow(x: str) -> str:
        """Takes long."""
        await asyncio.sleep(30)
        return x

    model = ScriptedChatModel(
        script={
            "main": [parallel(delegate("A", "w"), delegate("B", "w")), "done"],
            "w": [call("slow", x="1"), "ok"],
        }
    )
    agent = create_deep_agent(model, [slow], subagents=[WORKER])
    tracer = Tracer()
    run = asyncio.create_task(
        agent.ainvoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    )
    while sum(1 for s in tracer.trace.spans if s.name == "slow") < 2:
        await asyncio.sleep(0.01)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    spans = [s for s in tracer.trace.spans if not s.hidden]
    assert [s for s in spans if s.status == "running"] == []
    assert tracer.trace.failures() == 0
    cut = [s for s in spans if s.kind in ("task", "subagent", "tool", "agent")]
    assert {s.status for s in cut} == {"interrupted"}
    assert all("cancelled" in (s.error or "") for s in cut)
    assert not any("object at 0x" in (s.error or "") for s in spans)
