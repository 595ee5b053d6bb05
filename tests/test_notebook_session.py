"""``nbagents.trace()`` outside a notebook: it records every run in the block and shows nothing."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

import pytest

import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import delegate, parallel, say

INPUT = {"messages": [("user", "go")]}


def _agent() -> Any:
    model = ScriptedChatModel(
        script={
            "main": [parallel(delegate("a", "helper"), delegate("b", "helper")), say("done")],
            "helper": {"*": ["ok"]},
        }
    )
    helper = {"name": "helper", "description": "Helps.", "system_prompt": "Help."}
    return create_deep_agent(model, subagents=[helper])


def test_trace_records_sync_and_async_runs_as_separate_roots() -> None:
    agent = _agent()
    with nbagents.trace() as t:
        agent.invoke(INPUT)
        asyncio.run(agent.ainvoke(INPUT))
    assert [r.name for r in t.visible_roots()] == ["main", "main"]
    assert [r.description for r in t.subagents] == ["a", "b", "a", "b"]
    assert t.finished and t.status == "ok"


def test_trace_stops_recording_when_the_block_ends() -> None:
    agent = _agent()
    with nbagents.trace() as t:
        agent.invoke(INPUT)
    spans = len(t)
    agent.invoke(INPUT)
    assert len(t) == spans


def test_an_error_in_the_block_still_finishes_the_trace() -> None:
    try:
        with nbagents.trace() as t:
            raise KeyError("boom")
    except KeyError:
        pass
    assert t.finished


def test_a_broken_widget_install_still_records(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import nbagents._notebook as session

    monkeypatch.setattr(session, "_in_kernel", lambda: True)
    monkeypatch.setitem(sys.modules, "nbagents.display.live", None)  # import fails
    agent = _agent()
    with caplog.at_level(logging.ERROR, logger="nbagents"), nbagents.trace() as t:
        agent.invoke(INPUT)
    assert len(t.subagents) == 2 and t.finished
    assert any("live view is unavailable" in r.getMessage() for r in caplog.records)
