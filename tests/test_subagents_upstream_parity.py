"""Where nbagents now behaves as upstream deepagents does (issue: upstream parity).

- the caller's tags and metadata reach every sub-agent, also one that is not a LangGraph graph;
- sub-agent runs are marked for LangSmith (``ls_agent_type="subagent"``, its filter) through
  LangSmith's tracing context only, and nothing is added to the ``tags`` or ``metadata`` the
  user's tools and callbacks see but the sub-agent's name and nbagents' own keys;
- a structured response keeps the field order of its schema;
- ``SubAgentMiddleware.system_prompt`` is the section it adds to the main agent's prompt;
- LangGraph's stream projections of sub-agents (``run.subagents``, the ``lifecycle`` channel),
  which upstream agents stream through, report a sub-agent that failed as ``failed`` although
  nbagents hands the failure to the parent as an error ToolMessage;
- the caller may choose the response format of a ``task`` call through upstream's config key;
- a compiled sub-agent configured with its own smaller ``recursion_limit`` keeps it;
- mistakes upstream also refuses are refused in texts that start with upstream's words;
- ``BackgroundSubAgentMiddleware`` takes upstream ``AsyncSubAgentMiddleware``'s arguments.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ToolCallRequest, wrap_tool_call
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from pydantic import BaseModel

from nbagents import (
    SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY,
    BackgroundSubAgentMiddleware,
    ScriptedChatModel,
    SubAgentMiddleware,
    create_deep_agent,
    create_sub_agent,
    pending_approvals,
)
from nbagents.models import Turn, call, delegate, fail, parallel, say
from nbagents.subagents._stream import SubAgentFailureTransformer
from nbagents.tracing import Tracer, recording

TASK = "task"
CALLER = {"tags": ["team-a"], "metadata": {"customer_id": "c-42"}}


def test_a_plain_runnable_subagent_sees_the_callers_tags_and_metadata() -> None:
    seen: list[RunnableConfig] = []

    def child(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        seen.append(config)
        return {"messages": [*state["messages"], AIMessage("done")]}

    spec = {"name": "child", "description": "d", "runnable": RunnableLambda(child)}
    model = ScriptedChatModel(script={"main": [delegate("Brief.", "child"), say("ok")]})
    agent = create_deep_agent(model, subagents=[spec])
    agent.invoke({"messages": [("user", "go")]}, CALLER)

    (config,) = seen
    assert config["metadata"]["customer_id"] == "c-42"
    assert "team-a" in config["tags"]
    assert "ls_agent_type" not in config["metadata"]  # LangSmith's only, as upstream
    assert config["metadata"]["lc_agent_name"] == "child"


class TagSpy(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tool_tags: dict[str, list[str]] = {}
        self.tool_metadata: dict[str, dict[str, Any]] = {}

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = serialized.get("name", "")
        self.tool_tags[name] = list(tags or [])
        self.tool_metadata[name] = dict(metadata or {})


@tool
def lookup(query: str) -> str:
    """Look ``query`` up."""
    return f"found {query}"


def test_subagent_runs_are_marked_for_langsmith_not_in_the_users_tags_or_metadata() -> None:
    model = ScriptedChatModel(
        script={
            "main": [delegate("Find it.", "researcher"), say("ok")],
            "researcher": [call("lookup", query="x"), say("found")],
        }
    )
    researcher = {"name": "researcher", "description": "Finds.", "system_prompt": "Find."}
    agent = create_deep_agent(model, [lookup], subagents=[researcher])
    spy = TagSpy()
    with recording() as tracer:  # the tracer still finds the sub-agent without a tag
        agent.invoke({"messages": [("user", "go")]}, {**CALLER, "callbacks": [spy]})

    assert spy.tool_tags["lookup"].count("team-a") == 1  # passed on once, not duplicated
    assert not any(t.startswith("nbagents") for t in spy.tool_tags["lookup"])
    assert "ls_agent_type" not in spy.tool_metadata["lookup"]  # LangSmith's only, as upstream
    assert spy.tool_metadata["lookup"]["customer_id"] == "c-42"
    (record,) = tracer.trace.subagents
    assert (record.type, record.depth) == ("researcher", 1)
    lookup_span = next(s for s in tracer.trace.spans if s.name == "lookup")
    assert lookup_span.agent == "researcher"


class Verdict(BaseModel):
    verdict: str
    confidence: float
    alternatives: list[str]


def test_a_structured_response_keeps_the_schema_field_order() -> None:
    judge = {
        "name": "judge",
        "description": "Judges.",
        "system_prompt": "Judge.",
        "response_format": Verdict,
    }
    model = ScriptedChatModel(
        script={
            "main": [delegate("Judge it.", "judge"), say("ok")],
            "judge": [
                call("Verdict", verdict="yes", confidence=0.9, alternatives=["no"]),
                say("judged"),
            ],
        }
    )
    result = create_deep_agent(model, subagents=[judge]).invoke({"messages": [("user", "go")]})
    (answer,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert list(json.loads(answer.text)) == ["verdict", "confidence", "alternatives"]
    assert answer.text.startswith('{"verdict": "yes"')


def test_the_middleware_exposes_the_prompt_section_it_adds() -> None:
    researcher = {"name": "researcher", "description": "Finds facts.", "system_prompt": "Find."}
    middleware = SubAgentMiddleware(default_model=ScriptedChatModel(), subagents=[researcher])
    assert middleware.system_prompt is not None
    assert "researcher" in middleware.system_prompt
    assert "Finds facts." in middleware.system_prompt
    silent = SubAgentMiddleware(
        default_model=ScriptedChatModel(), subagents=[researcher], system_prompt=None
    )
    assert silent.system_prompt is None


def test_create_sub_agent_builds_one_spec_on_its_own() -> None:
    model = ScriptedChatModel(script={"researcher": [call("lookup", query="x"), say("found x")]})
    spec: Any = {
        "name": "researcher",
        "description": "Finds.",
        "system_prompt": "Find.",
        "model": model,
        "tools": [lookup],
    }
    result = create_sub_agent(spec).invoke({"messages": [("user", "find x")]})
    assert result["messages"][-1].text == "found x"
    assert [m.text for m in result["messages"] if isinstance(m, ToolMessage)] == ["found x"]
    # On its own: no task tool to delegate with.
    (first_call,) = [m for m in result["messages"] if isinstance(m, AIMessage) and m.tool_calls]
    assert [c["name"] for c in first_call.tool_calls] == ["lookup"]


def test_create_sub_agent_takes_a_response_format_override() -> None:
    judge: Any = {
        "name": "judge",
        "description": "Judges.",
        "system_prompt": "Judge.",
        "model": ScriptedChatModel(
            script={"judge": [call("Verdict", verdict="yes", confidence=1.0, alternatives=[])]}
        ),
    }
    result = create_sub_agent(judge, response_format=Verdict).invoke({"messages": [("user", "?")]})
    assert result["structured_response"] == Verdict(verdict="yes", confidence=1.0, alternatives=[])


def test_create_sub_agent_needs_a_model_and_keeps_its_approvals() -> None:
    with pytest.raises(ValueError, match="SubAgent 'critic' must specify 'model'"):
        create_sub_agent({"name": "critic", "description": "d", "system_prompt": "p"})
    spec: Any = {
        "name": "researcher",
        "description": "Finds.",
        "system_prompt": "Find.",
        "model": ScriptedChatModel(script={"researcher": [call("lookup", query="x"), "done"]}),
        "tools": [lookup],
        "interrupt_on": {"lookup": True},
    }
    paused = create_sub_agent(spec).invoke({"messages": [("user", "find x")]})
    (request,) = pending_approvals(paused)
    assert (request.tool, request.args) == ("lookup", {"query": "x"})


# -- a failed sub-agent, as stream consumers see it ----------------------------------------------

FAILED = "Sub-agent 'researcher' failed: ConnectionError: provider unreachable"


def one_fails_one_finishes() -> Any:
    researcher = {"name": "researcher", "description": "Finds.", "system_prompt": "Find."}
    script = {
        "main": [
            parallel(delegate("break", "researcher"), delegate("slow", "researcher")),
            "recovered",
        ],
        "researcher": {
            "break": [fail(ConnectionError("provider unreachable"))],
            "slow": [Turn(text="slow done", latency=0.05)],
        },
    }
    return create_deep_agent(ScriptedChatModel(script=script), subagents=[researcher])


def status_by_call(messages: list[Any]) -> dict[str, str]:
    """``"break"``/``"slow"`` → the tool call id that delegated it."""
    (ask,) = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
    return {c["args"]["description"]: c["id"] for c in ask.tool_calls}


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
def test_stream_consumers_see_a_failed_subagent_as_failed() -> None:
    tracer = Tracer()
    run = one_fails_one_finishes().stream_events(
        {"messages": [("user", "go")]}, {"callbacks": [tracer]}, version="v3"
    )
    handles = list(run.subagents)  # LangChain's projection for agents built with create_agent
    messages = run.output["messages"]

    calls = status_by_call(messages)
    by_call = {h.cause["tool_call_id"]: h for h in handles if h.cause}
    assert len(by_call) == 2
    broken, slow = by_call[calls["break"]], by_call[calls["slow"]]
    assert (broken.name, broken.status, broken.error) == ("researcher", "failed", FAILED)
    assert (slow.status, slow.error) == ("completed", None)

    # The parent still got the failure as its tool result, and went on.
    answers = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert (answers[calls["break"]].text, answers[calls["break"]].status) == (FAILED, "error")
    assert answers[calls["slow"]].status == "success"
    assert messages[-1].text == "recovered"

    # nbagents' own trace agrees.
    task_spans = {
        s.attributes.get("tool_call_id"): s for s in tracer.trace.spans if s.name == "task"
    }
    assert task_spans[calls["break"]].status == "error"
    assert task_spans[calls["slow"]].status == "ok"


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
def test_the_lifecycle_channel_of_remote_clients_says_failed_too() -> None:
    run = one_fails_one_finishes().stream_events({"messages": [("user", "go")]}, version="v3")
    ends = [e for e in run.lifecycle if e["event"] != "started"]
    assert sorted((e["event"], e.get("error")) for e in ends) == [
        ("completed", None),
        ("failed", FAILED),
    ]


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
async def test_async_stream_consumers_see_a_failed_subagent_as_failed() -> None:
    run = await one_fails_one_finishes().astream_events(
        {"messages": [("user", "go")]}, version="v3"
    )
    handles = [h async for h in run.subagents]
    assert sorted((h.status, h.error) for h in handles) == [
        ("completed", None),
        ("failed", FAILED),
    ]


def test_only_a_subagent_that_ran_and_failed_marks_its_task_failed() -> None:
    # An unknown type or the depth limit is a mistake the model corrects: no sub-agent ran,
    # so none failed, and the stream keeps reporting the tool task as it finished.
    script = {
        "main": [
            parallel(delegate("break", "researcher"), delegate("x", "nobody")),
            delegate("slow", "researcher"),
            "recovered",
        ],
        "researcher": {
            "break": [fail(ConnectionError("provider unreachable"))],
            "slow": ["slow done"],
        },
    }
    researcher = {"name": "researcher", "description": "Finds.", "system_prompt": "Find."}
    agent = create_deep_agent(ScriptedChatModel(script=script), subagents=[researcher])
    marker = SubAgentFailureTransformer(())
    errors: dict[str, str | None] = {}
    for part in agent.stream({"messages": [("user", "go")]}, stream_mode="tasks"):
        if part.get("name") != "tools" or "result" not in part:
            continue
        event: Any = {"type": "event", "method": "tasks", "params": {"namespace": [], "data": part}}
        assert marker.process(event) is True  # never hidden from the main event log
        (answer,) = part["result"]["messages"]
        errors[answer.text] = event["params"]["data"]["error"]
        assert part["error"] is None  # the payload other stream modes share is left alone

    assert errors == {
        FAILED: FAILED,
        "Unknown subagent_type 'nobody'. Allowed types: 'general-purpose', 'researcher'.": None,
        "slow done": None,
    }


# -- a response format chosen per task call ------------------------------------------------------


class Summary(BaseModel):
    headline: str
    points: list[str]


def per_call(response_format: Any) -> dict[str, Any]:
    return {"configurable": {SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY: response_format}}


def judging_agent() -> Any:
    researcher = {"name": "researcher", "description": "Finds.", "system_prompt": "Find."}
    script = {
        "main": [delegate("Judge it.", "researcher"), say("ok")],
        "researcher": [
            delegate("Dig.", "general-purpose"),
            call("Verdict", verdict="yes", confidence=0.5, alternatives=[]),
            say("judged"),
        ],
        "general-purpose": ["dug up the facts"],
    }
    return create_deep_agent(ScriptedChatModel(script=script), subagents=[researcher])


async def test_the_caller_chooses_a_task_calls_response_format(
    run_agent: Any, model_calls: Any
) -> None:
    result = await run_agent(judging_agent(), {"messages": [("user", "go")]}, per_call(Verdict))
    (answer,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answer.text == '{"verdict": "yes", "confidence": 0.5, "alternatives": []}'
    assert answer.status == "success"
    assert all("Verdict" in c.tools for c in model_calls.of("researcher"))
    # The format is the caller's wish for this call: the sub-agent's own delegation and the
    # main agent answer as they would without it.
    assert not any("Verdict" in c.tools for c in model_calls.of("general-purpose"))
    assert not any("Verdict" in c.tools for c in model_calls.of("main"))


def test_a_chosen_format_overrides_the_specs_and_is_built_once() -> None:
    judge: Any = {
        "name": "judge",
        "description": "Judges.",
        "system_prompt": "Judge.",
        "response_format": Verdict,
    }
    script = {
        "main": [
            parallel(delegate("Sum up A.", "judge"), delegate("Sum up B.", "judge")),
            say("ok"),
        ],
        "judge": {
            "Sum up A.": [call("Summary", headline="A", points=["a"])],
            "Sum up B.": [call("Summary", headline="B", points=[])],
        },
    }
    agent = create_deep_agent(ScriptedChatModel(script=script), subagents=[judge])
    result = agent.invoke({"messages": [("user", "go")]}, per_call(Summary))
    answers = sorted(m.text for m in result["messages"] if isinstance(m, ToolMessage))
    assert answers == [
        '{"headline": "A", "points": ["a"]}',
        '{"headline": "B", "points": []}',
    ]

    middleware = SubAgentMiddleware(default_model=ScriptedChatModel(), subagents=[judge])
    registry = middleware._registry
    assert registry.graph_for("judge", Summary) is registry.graph_for("judge", Summary)
    assert registry.graph_for("judge", Summary) is not registry.graph_for("judge", Verdict)
    assert registry.graph_for("judge") is registry.graphs["judge"]


def test_a_compiled_subagent_cannot_take_a_chosen_format() -> None:
    def child(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [*state["messages"], AIMessage("done")]}

    spec = {"name": "child", "description": "d", "runnable": RunnableLambda(child)}
    model = ScriptedChatModel(script={"main": [delegate("Brief.", "child"), say("ok")]})
    agent = create_deep_agent(model, subagents=[spec])
    with pytest.raises(
        ValueError, match='response_schema cannot be used with compiled subagent "child"'
    ):
        agent.invoke({"messages": [("user", "go")]}, per_call(Verdict))


@wrap_tool_call
def verdicts_for_judging(
    request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
) -> Any:
    """Chooses the format for one task call: the caller's code decides, never the model."""
    args = request.tool_call["args"]
    if request.tool_call["name"] == TASK and args["description"].startswith("Judge"):
        config = request.runtime.config
        configurable = {
            **config.get("configurable", {}),
            SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY: Verdict,
        }
        runtime = dataclasses.replace(
            request.runtime, config={**config, "configurable": configurable}
        )
        request = dataclasses.replace(request, runtime=runtime)
    return handler(request)


def test_a_middleware_can_choose_the_format_of_one_task_call() -> None:
    script = {
        "main": [
            parallel(delegate("Judge it.", "researcher"), delegate("Find it.", "researcher")),
            say("ok"),
        ],
        "researcher": {
            "Judge it.": [call("Verdict", verdict="no", confidence=1.0, alternatives=["yes"])],
            "Find it.": ["found it"],
        },
    }
    researcher = {"name": "researcher", "description": "Finds.", "system_prompt": "Find."}
    agent = create_deep_agent(
        ScriptedChatModel(script=script), subagents=[researcher], middleware=[verdicts_for_judging]
    )
    result = agent.invoke({"messages": [("user", "go")]})
    answers = [m.text for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answers == ['{"verdict": "no", "confidence": 1.0, "alternatives": ["yes"]}', "found it"]


# -- recursion limits of compiled sub-agents -------------------------------------------------------


@pytest.mark.parametrize(("own", "caller", "seen"), [(5, 50, 5), (500, 50, 50)])
def test_a_compiled_subagent_keeps_its_own_recursion_limit_when_smaller(
    own: int, caller: int, seen: int
) -> None:
    limits: list[int] = []

    def child(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        limits.append(config["recursion_limit"])
        return {"messages": [*state["messages"], AIMessage("done")]}

    runnable = RunnableLambda(child).with_config(recursion_limit=own)
    spec = {"name": "child", "description": "d", "runnable": runnable}
    model = ScriptedChatModel(script={"main": [delegate("Brief.", "child"), say("ok")]})
    agent = create_deep_agent(model, subagents=[spec])
    agent.invoke({"messages": [("user", "go")]}, {"recursion_limit": caller})
    assert limits == [seen]


# -- upstream's words ------------------------------------------------------------------------------


def test_mistakes_upstream_refuses_too_start_with_its_words() -> None:
    with pytest.raises(ValueError, match=r"^At least one subagent must be specified"):
        SubAgentMiddleware(subagents=[])
    spec: Any = {"name": "critic", "description": "d", "system_prompt": "p"}
    with pytest.raises(ValueError, match=r"^SubAgent 'critic' must specify 'model'"):
        SubAgentMiddleware(subagents=[spec])
    with pytest.raises(ValueError, match=r"^At least one async subagent must be specified"):
        BackgroundSubAgentMiddleware(async_subagents=[])
    with pytest.raises(ValueError, match=r"^Duplicate async subagent names: \['w'\]"):
        BackgroundSubAgentMiddleware([REMOTE, REMOTE])


# -- background sub-agents, in upstream's arguments ------------------------------------------------

REMOTE: Any = {
    "name": "w",
    "description": "Works remotely.",
    "url": "http://127.0.0.1:9",
    "graph_id": "w",
}


def test_the_background_middleware_takes_upstreams_arguments() -> None:
    quiet = BackgroundSubAgentMiddleware(async_subagents=[REMOTE])
    assert quiet.system_prompt is None  # upstream's default: the tool description lists them
    assert "- w: Works remotely." in quiet.tools[0].description
    told = BackgroundSubAgentMiddleware(async_subagents=[REMOTE], system_prompt="Delegate.")
    assert (
        told.system_prompt == "Delegate.\n\nAvailable async subagent types:\n\n- w: Works remotely."
    )
    with pytest.raises(TypeError, match="not both"):
        BackgroundSubAgentMiddleware([REMOTE], async_subagents=[REMOTE])


def test_the_background_middlewares_prompt_section_reaches_the_model(model_calls: Any) -> None:
    model = ScriptedChatModel(script={"main": ["ok"]})
    told = BackgroundSubAgentMiddleware(async_subagents=[REMOTE], system_prompt="Delegate.")
    agent = create_agent(model, middleware=[told], name="main")
    agent.invoke({"messages": [("user", "go")]}, {"callbacks": [model_calls]})
    (first,) = model_calls.calls
    assert first.messages[0].text.endswith(
        "Available async subagent types:\n\n- w: Works remotely."
    )
