"""nbagents.testing's assertions on one run: each passes on what the run did and fails, with a
message naming what it did instead, on anything else."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool

import nbagents
from nbagents import ScriptedChatModel, Trace, create_deep_agent
from nbagents.models import call, delegate, fail, parallel, say
from nbagents.testing import (
    TraceAssertionError,
    assert_max_depth,
    assert_no_failures,
    assert_spawned,
    assert_tool_called,
    assert_within_budget,
    problems,
    spawns,
    tool_calls,
)


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


SUBAGENTS: list[Any] = [
    {"name": "researcher", "description": "Researches one topic", "system_prompt": "Research."},
    {"name": "writer", "description": "Writes text", "system_prompt": "Write.", "tools": []},
]


def run(script: dict[str, Any], **options: Any) -> Trace:
    agent = create_deep_agent(
        ScriptedChatModel(script=script), [search], subagents=SUBAGENTS, **options
    )
    with nbagents.trace(display=False, store=False) as t:
        agent.invoke({"messages": [("user", "go")]})
    return t


@pytest.fixture(scope="module")
def quickstart() -> Trace:
    """The README's run: two researchers and a writer at once, one search, then a lone writer."""
    return run(
        {
            "main": [
                parallel(
                    delegate("Research A", "researcher"),
                    delegate("Research B", "researcher"),
                    delegate("Write C", "writer"),
                ),
                delegate("Polish C", "writer"),
                say("Done."),
            ],
            "researcher": {
                "Research A": [call("search", query="A"), say("A is fine")],
                "Research B": ["B is fine"],
            },
            "writer": ["C written"],
        }
    )


def failure(check: Any) -> str:
    with pytest.raises(TraceAssertionError) as caught:
        check()
    assert isinstance(caught.value, AssertionError)  # pytest reports it as a failed check
    return str(caught.value)


def test_spawns_are_read_in_call_order_with_parallel_marked(quickstart: Trace) -> None:
    found = [(s.type, s.description, s.parent, s.depth, s.parallel) for s in spawns(quickstart)]
    assert found == [
        ("researcher", "Research A", "main", 1, True),
        ("researcher", "Research B", "main", 1, True),
        ("writer", "Write C", "main", 1, True),
        ("writer", "Polish C", "main", 1, False),
    ]
    results = [s.result for s in spawns(quickstart)]
    assert results == ["A is fine", "B is fine", "C written", "C written"]


def test_assert_spawned_passes_on_what_the_run_did(quickstart: Trace) -> None:
    found = assert_spawned(quickstart, "researcher", times=2, parallel=True, by="main")
    assert [s.description for s in found] == ["Research A", "Research B"]
    assert len(assert_spawned(quickstart, "writer")) == 2
    assert assert_spawned(quickstart, "critic", times=0) == []


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        (
            lambda t: assert_spawned(t, "researcher", times=3),
            "expected 'researcher' to be spawned 3 times, it was spawned twice.",
        ),
        (lambda t: assert_spawned(t, "critic"), "expected 'critic' to be spawned, it never was."),
        (
            lambda t: assert_spawned(t, "writer", times=0),
            "expected 'writer' to be spawned never, it was spawned twice.",
        ),
        (
            lambda t: assert_spawned(t, "researcher", by="writer", times=2),
            "expected 'researcher' by 'writer' to be spawned twice, it was never spawned.",
        ),
        (
            lambda t: assert_spawned(t, "writer", parallel=True),
            "expected every spawn of 'writer' to run in parallel with another sub-agent; "
            "1 of 2 did not.",
        ),
        (
            lambda t: assert_spawned(t, "researcher", parallel=False),
            "expected every spawn of 'researcher' to run alone (not in parallel); 2 of 2 did not.",
        ),
    ],
)
def test_assert_spawned_fails_with_the_runs_spawns(
    quickstart: Trace, check: Any, expected: str
) -> None:
    message = failure(lambda: check(quickstart))
    first, *listed = message.splitlines()
    assert first == expected
    assert listed[1:] == [
        "  main → researcher 'Research A': ok, parallel, 681 tokens",
        "  main → researcher 'Research B': ok, parallel, 329 tokens",
        "  main → writer 'Write C': ok, parallel, 327 tokens",
        "  main → writer 'Polish C': ok, 327 tokens",
    ]


def test_assert_tool_called_counts_by_agent_and_arguments(quickstart: Trace) -> None:
    assert [(c.tool, c.agent, c.args) for c in tool_calls(quickstart)] == [
        ("search", "researcher", {"query": "A"})
    ]
    assert_tool_called(quickstart, "search", times=1, by="researcher", args={"query": "A"})
    assert_tool_called(quickstart, "search", times=0, by="main")
    message = failure(lambda: assert_tool_called(quickstart, "search", args={"query": "B"}))
    assert message.splitlines() == [
        "expected a call of 'search' with {'query': 'B'}, there was none.",
        "Tool calls in this run (agent: tool(arguments) status):",
        "  researcher: search(\"{'query': 'A'}\") ok",
    ]
    assert failure(lambda: assert_tool_called(quickstart, "search", times=2)).startswith(
        "expected 'search' to be called twice, it was called once."
    )


def test_assert_max_depth_names_the_deeper_spawns() -> None:
    nested = run(
        {
            "main": [delegate("Outline", "writer"), "ok"],
            "writer": [delegate("Find facts", "researcher"), "outlined"],
            "researcher": ["facts"],
        },
        max_subagent_depth=2,
    )
    assert_max_depth(nested, 2)
    message = failure(lambda: assert_max_depth(nested, 1))
    assert (
        message.splitlines()[0]
        == "expected sub-agents at most 1 deep, 1 ran deeper (down to depth 2)."
    )
    assert "    writer → researcher 'Find facts': ok, 328 tokens" in message
    assert failure(lambda: assert_max_depth(nested, 0)).startswith(
        "expected sub-agents at most 0 deep, 2 ran deeper"
    )


def test_assert_no_failures_passes_on_a_clean_run(quickstart: Trace) -> None:
    assert_no_failures(quickstart)
    assert problems(quickstart) == []


def test_a_failed_sub_agent_is_named_once_where_it_failed() -> None:
    broken = run(
        {
            "main": [delegate("Write C", "writer"), "I could not write C."],
            "writer": [fail("ValueError: disk full")],
        }
    )
    assert broken.status == "ok"  # the main agent carried on: only the check sees the failure
    message = failure(lambda: assert_no_failures(broken))
    first, *rest = message.splitlines()
    assert first == "expected no failures, found 1 problem:"
    assert len(rest) == 1 and rest[0].startswith("  main > writer 'Write C'")
    assert "disk full" in rest[0]


def test_a_depth_limit_reached_is_named_as_a_limit() -> None:
    limited = run(
        {
            "main": [delegate("Outline", "writer"), "ok"],
            "writer": [delegate("Find facts", "researcher"), "outlined alone"],
        },
        max_subagent_depth=1,
    )
    message = failure(lambda: assert_no_failures(limited))
    assert message.splitlines() == [
        "expected no failures, found 1 problem, 1 of them a limit:",
        "  main > writer 'Outline' > task → researcher: the sub-agent depth limit was reached: "
        "Cannot start sub-agent 'researcher': the sub-agent depth limit (max_subagent_depth=1) "
        "is reached. Do this task yourself.",
    ]


def test_a_recursion_limit_fails_the_check() -> None:
    looping = {"main": [call("search", query=str(i)) for i in range(10)]}
    agent = create_deep_agent(ScriptedChatModel(script=looping), [search], subagents=SUBAGENTS)
    with pytest.raises(Exception), nbagents.trace(display=False, store=False) as t:  # noqa: B017
        agent.invoke({"messages": [("user", "go")]}, {"recursion_limit": 4})
    found = problems(t)
    assert [p.limit for p in found] == ["LangGraph's recursion limit"]
    assert "LangGraph's recursion limit was reached" in failure(lambda: assert_no_failures(t))


def test_a_spec_limit_reached_is_named_once_at_the_stopped_sub_agent() -> None:
    capped = [{**SUBAGENTS[0], "tools": [search], "limits": {"model_calls": 2}}, SUBAGENTS[1]]
    looping = {
        "main": [parallel(delegate("Dig", "researcher"), delegate("Write", "writer")), "done"],
        "researcher": [call("search", query=str(i)) for i in range(5)],
        "writer": ["written"],
    }
    agent = create_deep_agent(ScriptedChatModel(script=looping), [search], subagents=capped)
    with nbagents.trace(display=False, store=False) as t:
        agent.invoke({"messages": [("user", "go")]})
    assert t.status == "ok"  # the main agent carried on: only the check sees the limit
    assert failure(lambda: assert_no_failures(t)).splitlines() == [
        "expected no failures, found 1 problem, 1 of them a limit:",
        "  main > researcher 'Dig': the limit model_calls=2 of sub-agent 'researcher' was "
        "reached: 2 model calls made",
    ]


def test_a_run_wide_limit_is_named_where_it_stopped_each_agent() -> None:
    looping = {
        "main": [parallel(delegate("Dig", "researcher"), delegate("Write", "writer")), "done"],
        "researcher": [call("search", query=str(i)) for i in range(5)],
        "writer": [call("search", query="w"), "written"],
    }
    agent = create_deep_agent(
        ScriptedChatModel(script=looping), [search], subagents=SUBAGENTS, limits={"tokens": 1}
    )
    with pytest.raises(nbagents.LimitReached), nbagents.trace(display=False, store=False) as t:
        agent.invoke({"messages": [("user", "go")]})
    found = problems(t)
    assert [(p.where, p.limit) for p in found] == [
        ("main > researcher 'Dig'", "the limit tokens=1 of the run"),
        ("main > writer 'Write'", "the limit tokens=1 of the run"),
    ]


def test_an_empty_trace_is_not_a_clean_run() -> None:
    message = failure(lambda: assert_no_failures(Trace()))
    assert message == "expected a run that ended without failures, but the trace recorded no run."


def test_assert_within_budget_tokens_and_cost(quickstart: Trace) -> None:
    total = quickstart.total_usage().total
    assert_within_budget(quickstart, tokens=total)
    message = failure(lambda: assert_within_budget(quickstart, tokens=total - 1))
    assert message.splitlines()[0].startswith(
        f"expected at most {total - 1:,} tokens, the run used {total:,}"
    )
    assert "Tokens per agent:" in message and "researcher" in message
    prices = {"scripted-model": (1_000_000.0, 1_000_000.0)}  # one dollar a token
    assert_within_budget(quickstart, cost=float(total), prices=prices)
    message = failure(lambda: assert_within_budget(quickstart, cost=total - 0.5, prices=prices))
    assert message == f"expected a cost of at most {total - 0.5}, the run cost {total:.6g}."
    unknown = failure(lambda: assert_within_budget(quickstart, cost=1.0, prices={}))
    assert unknown.startswith(
        "expected a cost of at most 1.0, but the price of scripted-model is unknown"
    )
    with pytest.raises(TypeError, match="needs tokens"):
        assert_within_budget(quickstart)


def test_assertions_take_only_traces() -> None:
    with pytest.raises(TypeError, match=r"expected a nbagents\.Trace"):
        assert_spawned({"messages": []}, "writer")  # type: ignore[arg-type]
