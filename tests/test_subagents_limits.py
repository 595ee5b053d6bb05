"""Limits: a sub-agent (or a whole run) that reaches one stops before its next model call."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from nbagents import LimitReached, ScriptedChatModel, Trace, Tracer, create_deep_agent
from nbagents.export import default_prices
from nbagents.models import Turn, call, delegate, parallel, say
from nbagents.subagents.limits import LimitGuard, Limits, admitted
from nbagents.tracing import TokenUsage

GO = {"messages": [("user", "go")]}


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


def worker(**limits: Any) -> dict[str, Any]:
    return {"name": "worker", "description": "Works.", "system_prompt": "Work.", "limits": limits}


def costing(turn: Turn, tokens_in: int, tokens_out: int) -> Turn:
    return dataclasses.replace(turn, usage={"input_tokens": tokens_in, "output_tokens": tokens_out})


def answers(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage) and m.name == "task"]


def pings(n: int) -> list[Turn]:
    """A worker script that would make ``n`` ping calls and then answer."""
    return [call("ping")] * n + [say("worked")]


async def test_model_calls_limit_stops_before_the_next_call(
    run_agent: Any, model_calls: Any
) -> None:
    model = ScriptedChatModel(
        script={"main": [delegate("Work.", "worker"), say("done")], "worker": pings(5)}
    )
    agent = create_deep_agent(model, [ping], subagents=[worker(model_calls=2)])
    result = await run_agent(agent, GO)
    (answer,) = answers(result)
    assert answer.status == "error"
    assert answer.content.startswith(
        "Sub-agent 'worker' stopped before its next model call: the limit model_calls=2 of "
        "sub-agent 'worker' is reached (2 model calls made)."
    )
    assert answer.artifact["status"] == "limit"
    assert len(model_calls.of("worker")) == 2
    assert result["messages"][-1].content == "done"


async def test_tokens_limit_counts_what_the_calls_reported(
    run_agent: Any, model_calls: Any
) -> None:
    script = [costing(call("ping"), 40, 10)] * 5 + [say("worked")]
    model = ScriptedChatModel(
        script={"main": [delegate("Work.", "worker"), say("done")], "worker": script}
    )
    agent = create_deep_agent(model, [ping], subagents=[worker(tokens=120)])
    (answer,) = answers(await run_agent(agent, GO))
    # 50 tokens a call: the third call takes it past 120, and no fourth one runs.
    assert "the limit tokens=120 of sub-agent 'worker' is reached (150 tokens used)" in (
        answer.content
    )
    assert len(model_calls.of("worker")) == 3


async def test_cost_limit_prices_calls_with_the_views_table(
    run_agent: Any, model_calls: Any
) -> None:
    per_call = default_prices().price_of("gpt-4o", TokenUsage(1_000_000, 100_000, 1_100_000))
    assert per_call is not None and per_call > 0
    script = [costing(call("ping"), 1_000_000, 100_000)] * 5 + [say("worked")]
    model = ScriptedChatModel(
        model_name="gpt-4o",
        script={"main": [delegate("Work.", "worker"), say("done")], "worker": script},
    )
    limit = float(per_call * Decimal("1.5"))
    agent = create_deep_agent(model, [ping], subagents=[worker(cost=limit)])
    (answer,) = answers(await run_agent(agent, GO))
    assert f"the limit cost={limit:g} of sub-agent 'worker' is reached" in answer.content
    assert f"({float(per_call * 2):.6g} spent)" in answer.content
    assert len(model_calls.of("worker")) == 2


async def test_a_cost_limit_on_a_model_without_a_price_stops_saying_so(run_agent: Any) -> None:
    model = ScriptedChatModel(
        model_name="no-such-model-anywhere",
        script={"main": [delegate("Work.", "worker"), say("done")], "worker": pings(3)},
    )
    agent = create_deep_agent(model, [ping], subagents=[worker(cost=100.0)])
    (answer,) = answers(await run_agent(agent, GO))
    assert "(no price for no-such-model-anywhere in the price table)" in answer.content


async def test_seconds_limit_stops_a_slow_subagent(run_agent: Any, model_calls: Any) -> None:
    slow = [dataclasses.replace(call("ping"), latency=0.3)] * 5 + [say("worked")]
    model = ScriptedChatModel(
        script={"main": [delegate("Work.", "worker"), say("done")], "worker": slow}
    )
    agent = create_deep_agent(model, [ping], subagents=[worker(seconds=0.5)])
    (answer,) = answers(await run_agent(agent, GO))
    assert "the limit seconds=0.5 of sub-agent 'worker' is reached (" in answer.content
    # The second call starts at about 0.3 s, within the limit, unless a loaded machine (another
    # test worker) delays it past 0.5 s; the third, at 0.6 s, never does.
    assert 1 <= len(model_calls.of("worker")) <= 2


async def test_parallel_siblings_finish_and_each_run_has_its_own_budget(
    run_agent: Any, model_calls: Any
) -> None:
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(
                    delegate("long", "worker"),
                    delegate("short", "worker"),
                    delegate("other", "general-purpose"),
                ),
                say("done"),
            ],
            "worker": {"long": pings(5), "short": pings(1)},
            "general-purpose": pings(4),
        }
    )
    agent = create_deep_agent(model, [ping], subagents=[worker(model_calls=3)])
    result = await run_agent(agent, GO)
    by_task = {m.artifact["description"]: m for m in answers(result)}
    assert by_task["long"].artifact["status"] == "limit"
    assert by_task["short"].artifact["status"] == "ok"
    assert by_task["short"].content == "worked"
    assert by_task["other"].content == "worked"
    assert len(model_calls.of("worker")) == 3 + 2
    assert len(model_calls.of("general-purpose")) == 5


async def test_a_nested_subagent_spends_its_parents_budget(
    run_agent: Any, model_calls: Any
) -> None:
    model = ScriptedChatModel(
        script={
            "main": [delegate("Lead.", "lead"), say("done")],
            "lead": [delegate("Help.", "helper"), say("led")],
            "helper": pings(5),
        }
    )
    lead = {**worker(model_calls=3), "name": "lead"}
    helper = {"name": "helper", "description": "Helps.", "system_prompt": "Help."}
    agent = create_deep_agent(model, [ping], subagents=[lead, helper])
    (answer,) = answers(await run_agent(agent, GO))
    # The helper stops at the lead's limit; then the lead's own next call is refused too.
    assert answer.artifact["status"] == "limit"
    assert "the limit model_calls=3 of sub-agent 'lead' is reached" in answer.content
    assert len(model_calls.of("lead")) == 1
    assert len(model_calls.of("helper")) == 2


async def test_the_run_wide_limit_stops_subagents_and_then_the_run(
    run_agent: Any, model_calls: Any
) -> None:
    model = ScriptedChatModel(
        script={"main": [delegate("Work.", "worker"), say("done")], "worker": pings(5)}
    )
    spec = {"name": "worker", "description": "Works.", "system_prompt": "Work."}
    agent = create_deep_agent(model, [ping], subagents=[spec], limits={"model_calls": 3})
    with pytest.raises(LimitReached, match=r"the limit model_calls=3 of the run is reached"):
        await run_agent(agent, GO)
    assert len(model_calls.of("main")) == 1
    assert len(model_calls.of("worker")) == 2
    # Each run has its own budget: a run that fits passes.
    short = ScriptedChatModel(script={"main": [say("hi")]})
    again = create_deep_agent(short, limits={"model_calls": 1}).with_config(recursion_limit=9)
    assert (await run_agent(again, GO))["messages"][-1].content == "hi"
    assert (await run_agent(again, GO))["messages"][-1].content == "hi"


async def test_a_compiled_subagent_stops_at_its_next_step(run_agent: Any, model_calls: Any) -> None:
    inner = ScriptedChatModel(script={"compiled": pings(5)})
    graph = create_agent(inner, tools=[ping], name="compiled")
    spec = {
        "name": "compiled",
        "description": "Ready-made.",
        "runnable": graph,
        "limits": {"model_calls": 2},
    }
    model = ScriptedChatModel(script={"main": [delegate("Work.", "compiled"), say("done")]})
    agent = create_deep_agent(model, subagents=[spec])
    (answer,) = answers(await run_agent(agent, GO))
    assert answer.artifact["status"] == "limit"
    assert "the limit model_calls=2 of sub-agent 'compiled' is reached" in answer.content
    assert len(model_calls.of("compiled")) == 2


async def test_recursion_limit_of_the_callers_config_reaches_subagents(run_agent: Any) -> None:
    model = ScriptedChatModel(
        script={"main": [delegate("Work.", "worker"), say("done")], "worker": pings(10)}
    )
    spec = {"name": "worker", "description": "Works.", "system_prompt": "Work."}
    agent = create_deep_agent(model, [ping], subagents=[spec])
    result = await run_agent(agent, GO, {"recursion_limit": 8})
    (answer,) = answers(result)
    assert answer.status == "error"
    assert "GraphRecursionError" in answer.content and "Recursion limit of 8" in answer.content


def test_the_trace_marks_the_stopped_spans_limit_and_keeps_it_saved(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        script={"main": [delegate("Work.", "worker"), say("done")], "worker": pings(5)}
    )
    agent = create_deep_agent(model, [ping], subagents=[worker(model_calls=1)])
    tracer = Tracer()
    agent.invoke(GO, {"callbacks": [tracer]})
    trace = tracer.trace
    statuses = {(s.kind, s.name): s.status for s in trace.walk()}
    assert statuses[("subagent", "worker")] == "limit"
    assert statuses[("task", "task")] == "limit"
    assert statuses[("agent", "main")] == "ok"
    assert trace.failures() == 0
    html = trace.to_html()
    assert 'class="nba-dot" title="limit">\u2298<' in html
    trace.save(tmp_path / "t.json")
    loaded = Trace.load(tmp_path / "t.json")
    assert {(s.kind, s.name): s.status for s in loaded.walk()} == statuses


def test_a_run_stopped_by_its_limit_has_the_status_limit() -> None:
    model = ScriptedChatModel(script={"main": [call("ping")] * 3 + [say("done")]})
    agent = create_deep_agent(model, [ping], limits={"model_calls": 2})
    tracer = Tracer()
    with pytest.raises(LimitReached):
        agent.invoke(GO, {"callbacks": [tracer]})
    assert tracer.trace.status == "limit"


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"model_call": 3}, "unknown limit 'model_call'; the limits are 'model_calls', "),
        ({"tokens": 0}, "the limit 'tokens' must be a whole number above 0, not 0."),
        ({"model_calls": 2.5}, "the limit 'model_calls' must be a whole number above 0"),
        ({"cost": "1"}, "the limit 'cost' must be a number above 0, not '1'."),
        ({"seconds": True}, "the limit 'seconds' must be a number above 0, not True."),
        ([("tokens", 3)], "'limits' must be a dict such as"),
    ],
)
def test_bad_limits_are_refused_at_build(limits: Any, message: str) -> None:
    model = ScriptedChatModel(script={})
    spec = {"name": "worker", "description": "Works.", "system_prompt": "Work.", "limits": limits}
    with pytest.raises(ValueError, match=f"^Sub-agent 'worker': {message}"):
        create_deep_agent(model, subagents=[spec])
    with pytest.raises(ValueError, match=f"^create_deep_agent: {message}"):
        create_deep_agent(model, limits=limits)


def test_limits_on_a_remote_subagent_are_refused_at_build() -> None:
    spec = {
        "name": "far",
        "description": "Remote.",
        "url": "http://127.0.0.1:2024",
        "graph_id": "far",
        "limits": {"model_calls": 3},
    }
    with pytest.raises(ValueError, match="a RemoteSubAgent's model calls run on the server"):
        create_deep_agent(ScriptedChatModel(script={}), subagents=[spec])


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
def test_stream_consumers_see_a_subagent_stopped_by_its_limit_as_failed() -> None:
    model = ScriptedChatModel(
        script={
            "main": [parallel(delegate("long", "worker"), delegate("short", "worker")), "done"],
            "worker": {"long": pings(5), "short": pings(1)},
        }
    )
    agent = create_deep_agent(model, [ping], subagents=[worker(model_calls=3)])
    run = agent.stream_events(GO, version="v3")
    handles = list(run.subagents)
    by_call = {m.tool_call_id: m for m in answers(run.output)}
    ended = {by_call[h.cause["tool_call_id"]].artifact["description"]: h for h in handles}
    assert (ended["long"].status, ended["short"].status) == ("failed", "completed")
    assert "the limit model_calls=3 of sub-agent 'worker' is reached" in (ended["long"].error or "")
    assert ended["short"].error is None


def test_a_call_is_counted_when_admitted_so_siblings_cannot_share_the_last_one() -> None:
    # Two parallel siblings asking for the last call a limit allows, both before either call
    # has started: the second is refused. The call's own start is not counted again; a call no
    # admission counted (a compiled sub-agent's) is.
    guard = LimitGuard(Limits(model_calls=2), "the run")
    config: Any = {"callbacks": [guard]}
    with admitted(config):
        with (
            pytest.raises(LimitReached, match=r"model_calls=2 of the run .*\(2 model calls made\)"),
            admitted(config),
            admitted(config),
        ):
            pass
        guard.on_chat_model_start({}, [[]], run_id=uuid4())
    assert guard.calls == 2
    guard.on_chat_model_start({}, [[]], run_id=uuid4())
    assert guard.calls == 3


def test_sub_agents_get_the_model_call_hook_only_when_a_run_has_limits_to_keep() -> None:
    # Without limits a built sub-agent runs with no model-call hook (the cheaper graph, for
    # wide fan-outs); a run with limits builds the admitting one, once per sub-agent type.
    free = {"name": "free", "description": "Works.", "system_prompt": "Work."}
    script = {"main": [parallel(delegate("A.", "free"), delegate("B.", "free")), say("done")]}
    agent = create_deep_agent(
        ScriptedChatModel(script={**script, "free": pings(1)}), [ping], subagents=[free]
    )
    agent.invoke(GO)
    registry = agent.subagent_registry
    assert registry._by_format == {}
    bounded = create_deep_agent(
        ScriptedChatModel(script={**script, "free": pings(1)}),
        [ping],
        subagents=[free],
        limits={"model_calls": 10},
    )
    bounded.invoke(GO)
    assert [key[0] for key in bounded.subagent_registry._by_format] == ["free"]
