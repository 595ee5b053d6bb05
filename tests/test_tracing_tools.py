"""``Trace.tool_usage()``: calls, agents, failures and the tokens and cost of the turns that
asked for each tool, on a nested run whose numbers are known (``support/tool_run.py``)."""

from __future__ import annotations

import pandas as pd
import pytest
from support.tool_run import EXPECTED, PRICES, TURNS, tool_trace

from nbagents.tracing import Span, TokenUsage, Trace
from nbagents.tracing.tools import tool_calls, tool_turns


@pytest.fixture(scope="module")
def trace() -> Trace:
    return tool_trace()


def test_one_row_per_tool_with_its_calls_agents_failures_and_turns(trace: Trace) -> None:
    frame = trace.tool_usage()
    # most called first, ties by name
    assert list(frame["tool"]) == ["search", "task", "broken", "fetch"]
    for row in frame.itertuples():
        calls, agents, failures, turns, inp, out = EXPECTED[row.tool]
        got = (row.calls, row.agents, row.failures, row.turns)
        assert got == (calls, agents, failures, turns), row.tool
        assert (row.turn_input_tokens, row.turn_output_tokens) == (inp, out), row.tool
        assert row.turn_total_tokens == inp + out
        assert row.seconds > 0
    # the scripted model is in no price table: unknown, never a smaller number
    assert frame["turn_cost"].isna().all() and set(frame["unknown_models"]) == {"scripted-model"}


def test_a_turn_counts_once_per_tool_and_once_in_the_total(trace: Trace) -> None:
    frame = trace.tool_usage()
    turns = tool_turns(tool_calls(trace))
    assert len(turns) == len(TURNS)
    asked = sum(i + o for i, o in TURNS.values())
    assert sum(t.usage.total for t in turns) == asked
    # main's turn asked for search and task: it is in both rows, so they add up to more
    main_turn = sum(TURNS["main asks"])
    assert frame["turn_total_tokens"].sum() == asked + main_turn


def test_per_agent_splits_each_tool_by_who_called_it(trace: Trace) -> None:
    frame = trace.tool_usage("agent")
    rows = {(r.tool, r.agent): r for r in frame.itertuples()}
    assert list(zip(frame["tool"], frame["agent"], strict=True)) == [
        ("search", "researcher"),
        ("search", "main"),
        ("task", "main"),
        ("task", "researcher"),
        ("broken", "researcher"),
        ("fetch", "general-purpose"),
    ]
    assert "agents" not in frame.columns
    assert rows[("search", "researcher")].calls == 2
    assert rows[("search", "researcher")].turn_total_tokens == sum(TURNS["researcher A asks"])
    assert rows[("search", "main")].turn_total_tokens == sum(TURNS["main asks"])
    # the task researcher A ran in failed with it; researcher B's did not
    assert (rows[("task", "main")].calls, rows[("task", "main")].failures) == (2, 1)
    assert rows[("task", "researcher")].turn_total_tokens == sum(TURNS["researcher B asks"])
    by_tool = frame.groupby("tool", sort=False)["calls"].sum().to_dict()
    assert by_tool == {tool: e[0] for tool, e in EXPECTED.items()}


def test_cost_of_the_turns_from_a_price_table(trace: Trace) -> None:
    frame = trace.tool_usage(prices=PRICES).set_index("tool")
    per_in, per_out = PRICES["scripted-model"]
    for tool, (*_, inp, out) in EXPECTED.items():
        expected = (inp * per_in + out * per_out) / 1e6
        assert frame.loc[tool, "turn_cost"] == pytest.approx(expected), tool
        assert frame.loc[tool, "unknown_models"] == ""
    per_call = trace.tool_usage("call", prices=PRICES)
    assert per_call["turn_cost"].notna().all()


def test_each_call_with_its_arguments_result_agent_status_and_span(trace: Trace) -> None:
    calls = trace.tool_usage("call")
    assert len(calls) == sum(e[0] for e in EXPECTED.values())
    search = calls[calls["tool"] == "search"]
    assert sorted(a["query"] for a in search["arguments"]) == ["a1", "a2", "q"]
    assert sorted(search["result"]) == ["found a1", "found a2", "found q"]
    assert list(search["agent"]) == ["main", "researcher", "researcher"]  # depth first
    broken = calls[calls["tool"] == "broken"].iloc[0]
    assert broken["status"] == "error" and "broken on purpose" in broken["error"]
    for row in calls.itertuples():
        span = trace.get(row.span_id)
        assert span.kind in ("tool", "task") and span.agent == row.agent
        turn = trace.get(row.turn_span_id)
        assert turn.kind == "model" and turn.agent == row.agent and turn.end <= span.start
        assert row.turn_total_tokens == turn.usage.total
    fetch = calls[calls["tool"] == "fetch"].iloc[0]
    assert fetch["arguments"] == {"url": "u"} and fetch["result"] == "page u"


def test_a_saved_trace_gives_the_same_frames(trace: Trace) -> None:
    loaded = Trace.from_json(trace.to_json())
    for per in ("tool", "agent", "call"):
        pd.testing.assert_frame_equal(loaded.tool_usage(per), trace.tool_usage(per))


def test_a_tool_called_outside_a_model_turn_has_no_turn() -> None:
    trace = Trace(
        [
            Span("a", None, "agent", "main", "main", 0, 0.0, 1.0, "ok"),
            Span("m", "a", "model", "Chat", "main", 0, 0.0, 0.1, "ok", usage=TokenUsage(5, 5, 10)),
            Span("t", "a", "tool", "lookup", "main", 0, 0.2, 0.5, "ok", inputs='{"k": 1}'),
            Span("s", "a", "skill", "review", "main", 0, 0.6, 0.7, "ok", attributes={"batch": "m"}),
        ]
    )
    frame = trace.tool_usage().set_index("tool")
    assert frame.loc["lookup", "turns"] == 0 and frame.loc["lookup", "turn_total_tokens"] == 0
    assert frame.loc["lookup", "seconds"] == pytest.approx(0.3)
    # a skill load counts under the tool that read the file, with its turn
    assert frame.loc["read_file", "turn_total_tokens"] == 10
    call = trace.tool_usage("call").set_index("tool").loc["lookup"]
    assert call["arguments"] == {"k": 1} and call["result"] is None
    assert pd.isna(call["turn_span_id"]) and call["turn_cost"] == 0  # no turn, nothing to price


def test_an_empty_trace_gives_empty_frames_with_their_columns() -> None:
    for per in ("tool", "agent", "call"):
        frame = Trace().tool_usage(per)
        assert frame.empty and "tool" in frame.columns
    with pytest.raises(ValueError, match="per must be"):
        Trace().tool_usage("span")  # type: ignore[arg-type]
