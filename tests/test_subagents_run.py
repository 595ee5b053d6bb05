"""Running sub-agents: isolation, results, artifacts, nesting, errors, HITL, compiled sub-agents."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import operator
from typing import Annotated, Any, NotRequired

import pytest
from langchain.agents import AgentState
from langchain.agents.middleware import AgentMiddleware
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command
from pydantic import BaseModel

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import Turn, call, delegate, fail, parallel, say

RESEARCHER = {"name": "researcher", "description": "Researches.", "system_prompt": "Research."}


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def costing(turn: Turn | str, tokens_in: int, tokens_out: int) -> Turn:
    turn = say(turn) if isinstance(turn, str) else turn
    return dataclasses.replace(turn, usage={"input_tokens": tokens_in, "output_tokens": tokens_out})


@tool
def search(query: str) -> str:
    """Search the web for ``query``."""
    return f"results for {query}"


# -- isolation --------------------------------------------------------------------------------


class NotesState(AgentState):
    notes: NotRequired[str]
    secret: NotRequired[str]
    todos: NotRequired[list[str]]


PARENT_INPUT = {
    "messages": [HumanMessage("start")],
    "notes": "parent notes",
    "secret": "parent secret",
    "todos": ["parent todo"],
}


async def test_compiled_child_gets_only_the_brief_and_non_excluded_keys(run_agent: Any) -> None:
    received: list[dict[str, Any]] = []

    def child(state: dict[str, Any]) -> dict[str, Any]:
        received.append(state)
        return {
            "messages": [*state["messages"], AIMessage("child done")],
            "notes": "child notes",
            "secret": "child secret",
            "todos": ["child todo"],
        }

    spec = {"name": "child", "description": "d", "runnable": RunnableLambda(child)}
    model = ScriptedChatModel(script={"main": [delegate("The brief.", "child"), say("ok")]})
    agent = create_deep_agent(
        model, subagents=[spec], state_schema=NotesState, excluded_state_keys=["secret"]
    )
    result = await run_agent(agent, PARENT_INPUT)

    assert received == [{"messages": [HumanMessage("The brief.")], "notes": "parent notes"}]
    # Changed keys come back, except the excluded ones.
    assert result["notes"] == "child notes"
    assert result["secret"] == "parent secret"
    assert result["todos"] == ["parent todo"]
    (answer,) = tool_messages(result)
    assert answer.text == "child done"
    state = answer.artifact["state"]
    assert sorted(state["withheld"]) == ["messages", "secret", "todos"]
    assert state["passed"] == {"notes": "12 chars"}
    assert state["returned"] == ["notes"]


class StateSpy(AgentMiddleware[Any, Any]):
    """Records the state a sub-agent starts from and writes a note when it ends."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[dict[str, Any]] = []

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.seen.append(dict(state))
        return None

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return {"notes": "child notes", "secret": "child secret"}


async def test_built_subagent_shares_the_state_schema_and_honours_middleware(
    run_agent: Any,
) -> None:
    spy = StateSpy()
    spec = {**RESEARCHER, "middleware": [spy]}
    model = ScriptedChatModel(
        script={"main": [delegate("The brief.", "researcher"), say("ok")], "researcher": ["done"]}
    )
    agent = create_deep_agent(
        model, subagents=[spec], state_schema=NotesState, excluded_state_keys=["secret"]
    )
    result = await run_agent(agent, PARENT_INPUT)

    (seen,) = spy.seen
    assert seen == {
        "messages": [HumanMessage("The brief.", id=seen["messages"][0].id)],
        "notes": "parent notes",
    }
    assert result["notes"] == "child notes"
    assert result["secret"] == "parent secret"
    assert tool_messages(result)[0].artifact["state"]["returned"] == ["notes"]


class LogState(AgentState):
    log: Annotated[list[str], operator.add]
    files: Annotated[dict[str, str], lambda old, new: {**(old or {}), **new}]


@tool
def note(text: str, runtime: ToolRuntime) -> Command[Any]:
    """Append ``text`` to the shared log and write it to a file of the same name."""
    return Command(
        update={
            "log": [text],
            "files": {f"{text}.md": text},
            "messages": [ToolMessage(f"noted {text}", tool_call_id=runtime.tool_call_id)],
        }
    )


async def test_keys_with_a_reducer_get_only_what_each_sibling_added(run_agent: Any) -> None:
    # The parent's reducer combines the update with what it has: sending a sub-agent's whole
    # final list back would repeat the parent's items once per sibling.
    model = ScriptedChatModel(
        script={
            "main": [parallel(delegate("b", "researcher"), delegate("c", "researcher")), "ok"],
            "researcher": {
                "b": [call("note", text="b"), "done"],
                "c": [call("note", text="c"), "done"],
            },
        }
    )
    spec = {**RESEARCHER, "tools": [note]}
    agent = create_deep_agent(model, subagents=[spec], state_schema=LogState)
    start = {"messages": [HumanMessage("go")], "log": ["a"], "files": {"a.md": "a"}}
    result = await run_agent(agent, start)
    assert sorted(result["log"]) == ["a", "b", "c"]
    assert result["files"] == {"a.md": "a", "b.md": "b", "c.md": "c"}
    assert [m.artifact["state"]["returned"] for m in tool_messages(result)] == [
        ["files", "log"],
        ["files", "log"],
    ]


async def test_unchanged_keys_of_parallel_siblings_do_not_collide(run_agent: Any) -> None:
    # Both siblings hand back the same `notes` untouched; only changed keys may be sent back,
    # or LangGraph would reject two updates of one key in a step.
    model = ScriptedChatModel(
        script={
            "main": [parallel(delegate("a", "researcher"), delegate("b", "researcher")), "ok"],
            "researcher": ["done"],
        }
    )
    agent = create_deep_agent(model, subagents=[RESEARCHER], state_schema=NotesState)
    result = await run_agent(agent, PARENT_INPUT)
    assert [m.artifact["state"]["returned"] for m in tool_messages(result)] == [[], []]
    assert result["notes"] == "parent notes"


# -- results ----------------------------------------------------------------------------------


class Verdict(BaseModel):
    ok: bool
    reason: str


async def test_result_is_json_of_structured_response(run_agent: Any, model_calls: Any) -> None:
    judge = {**RESEARCHER, "name": "judge", "response_format": Verdict}
    model = ScriptedChatModel(
        script={
            "main": [delegate("Is it fine?", "judge"), say("ok")],
            "judge": [call("Verdict", ok=True, reason="all tests pass")],
        }
    )
    result = await run_agent(
        create_deep_agent(model, subagents=[judge]), {"messages": [("user", "go")]}
    )
    (answer,) = tool_messages(result)
    assert json.loads(answer.text) == {"ok": True, "reason": "all tests pass"}
    assert answer.status == "success"
    assert "structured_response" not in result
    assert "Verdict" in model_calls.of("judge")[0].tools


@dataclasses.dataclass
class Booking:
    day: datetime.date
    price: decimal.Decimal


async def test_a_structured_response_with_dates_and_decimals_is_still_a_result(
    run_agent: Any,
) -> None:
    def booker(state: dict[str, Any]) -> dict[str, Any]:
        booking = Booking(datetime.date(2026, 11, 22), decimal.Decimal("12.50"))
        return {"messages": [AIMessage("booked")], "structured_response": booking}

    spec = {"name": "booker", "description": "Books.", "runnable": RunnableLambda(booker)}
    model = ScriptedChatModel(script={"main": [delegate("Book it", "booker"), say("ok")]})
    result = await run_agent(
        create_deep_agent(model, subagents=[spec]), {"messages": [("user", "go")]}
    )
    (answer,) = tool_messages(result)
    assert answer.status == "success"
    assert json.loads(answer.text) == {"day": "2026-11-22", "price": "12.50"}


async def test_result_is_the_last_non_empty_ai_text(run_agent: Any) -> None:
    findings = Turn(
        text="Findings: cats sleep 16 hours.", tool_calls=call("search", query="cats").tool_calls
    )
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(delegate("cats", "researcher"), delegate("dogs", "researcher")),
                "ok",
            ],
            "researcher": {"cats": [findings, say("  ")], "dogs": [say("")]},
        }
    )
    agent = create_deep_agent(model, [search], subagents=[RESEARCHER])
    result = await run_agent(agent, {"messages": [("user", "go")]})
    cats, dogs = tool_messages(result)
    assert cats.text == "Findings: cats sleep 16 hours."
    assert dogs.text == "Sub-agent 'researcher' finished without a text answer."


async def test_artifact_names_the_subagent_and_carries_status_duration_and_tokens(
    run_agent: Any,
) -> None:
    model = ScriptedChatModel(
        script={
            "main": [delegate("Look it up.", "researcher"), say("ok")],
            "researcher": [
                costing(call("search", query="q"), 40, 5),
                costing(Turn(text="Found it.", latency=0.05), 60, 7),
            ],
        }
    )
    result = await run_agent(
        create_deep_agent(model, [search], subagents=[RESEARCHER]), {"messages": [("user", "go")]}
    )
    (answer,) = tool_messages(result)
    artifact = answer.artifact
    assert artifact["subagent"] == "researcher"
    assert artifact["description"] == "Look it up."
    assert artifact["status"] == "ok"
    assert artifact["depth"] == 1
    assert artifact["error"] is None
    assert 0.05 <= artifact["duration_s"] < 30
    assert artifact["tokens"] == {"input": 100, "output": 12, "total": 112}
    assert artifact["tokens_including_descendants"] == artifact["tokens"]


async def test_tokens_including_descendants_sum_nested_subagents_exactly(
    run_agent: Any, model_calls: Any
) -> None:
    model = ScriptedChatModel(
        script={
            "main": [delegate("Plan the trip.", "planner"), say("ok")],
            "planner": [
                costing(
                    parallel(delegate("flights", "finder"), delegate("hotels", "finder")), 10, 1
                ),
                costing("Trip planned.", 20, 2),
            ],
            "finder": {
                "flights": [
                    costing(delegate("compare fares", "finder"), 100, 10),
                    costing("Flight.", 200, 20),
                ],
                "hotels": [costing("Hotel.", 1000, 100)],
                "compare fares": [costing("Cheapest fare.", 3000, 300)],
            },
        }
    )
    specs = [
        {"name": "planner", "description": "Plans.", "system_prompt": "Plan."},
        {"name": "finder", "description": "Finds.", "system_prompt": "Find."},
    ]
    result = await run_agent(
        create_deep_agent(model, subagents=specs), {"messages": [("user", "go")]}
    )
    (planner,) = tool_messages(result)
    assert planner.artifact["tokens"] == {"input": 30, "output": 3, "total": 33}
    assert planner.artifact["tokens_including_descendants"] == {
        "input": 30 + 300 + 3000 + 1000,
        "output": 3 + 30 + 300 + 100,
        "total": 33 + 330 + 3300 + 1100,
    }
    # The planner saw its children's artifacts: depth 2, each with its own subtree.
    last = model_calls.of("planner")[-1].messages
    children = {m.artifact["description"]: m.artifact for m in last if isinstance(m, ToolMessage)}
    assert {d: a["depth"] for d, a in children.items()} == {"flights": 2, "hotels": 2}
    assert children["flights"]["tokens"]["total"] == 330
    assert children["flights"]["tokens_including_descendants"]["total"] == 3630
    assert children["hotels"]["tokens_including_descendants"]["total"] == 1100


# -- nesting ----------------------------------------------------------------------------------


def chain_script(levels: int) -> dict[str, Any]:
    """``deep`` sub-agents that each delegate one level further."""
    script: dict[str, Any] = {"main": [delegate("level 1", "deep"), say("ok")], "deep": {}}
    for level in range(1, levels + 1):
        script["deep"][f"level {level}"] = [
            delegate(f"level {level + 1}", "deep"),
            say(f"done {level}"),
        ]
    return script


DEEP = {"name": "deep", "description": "Goes deeper.", "system_prompt": "Delegate."}


@pytest.mark.parametrize("limit", [None, 1, 2])
async def test_at_the_depth_limit_task_answers_with_an_error_and_spawns_nothing(
    run_agent: Any, model_calls: Any, limit: int | None
) -> None:
    depth = 3 if limit is None else limit
    model = ScriptedChatModel(script=chain_script(depth + 1))
    options = {} if limit is None else {"max_subagent_depth": limit}
    agent = create_deep_agent(model, subagents=[DEEP], **options)
    result = await run_agent(agent, {"messages": [("user", "go")]})

    assert result["messages"][-1].text == "ok"
    tasks = [c.messages[1].text for c in model_calls.of("deep")]
    # Every level up to the limit ran twice (delegate, then answer); nothing beyond it ran.
    assert sorted(set(tasks)) == [f"level {n}" for n in range(1, depth + 1)]
    assert len(tasks) == 2 * depth
    deepest = [c for c in model_calls.of("deep") if c.messages[1].text == f"level {depth}"][-1]
    refusal = deepest.messages[-1]
    assert isinstance(refusal, ToolMessage)
    assert refusal.status == "error"
    assert f"depth limit (max_subagent_depth={depth})" in refusal.text
    assert refusal.artifact is None


async def test_max_depth_zero_means_no_subagents(run_agent: Any, model_calls: Any) -> None:
    model = ScriptedChatModel(script={"main": [delegate("x", "researcher"), say("ok")]})
    agent = create_deep_agent(model, subagents=[RESEARCHER], max_subagent_depth=0)
    result = await run_agent(agent, {"messages": [("user", "go")]})
    (refusal,) = tool_messages(result)
    assert refusal.status == "error" and "depth limit" in refusal.text
    assert model_calls.agents() == ["main"]


# -- errors -----------------------------------------------------------------------------------


def failing_script() -> dict[str, Any]:
    return {
        "main": [
            parallel(delegate("break", "researcher"), delegate("slow", "researcher")),
            "recovered",
        ],
        "researcher": {
            "break": [fail(ConnectionError("provider unreachable"))],
            "slow": [Turn(text="slow done", latency=0.2)],
        },
    }


async def test_a_raising_subagent_becomes_an_error_tool_message(run_agent: Any) -> None:
    agent = create_deep_agent(ScriptedChatModel(script=failing_script()), subagents=[RESEARCHER])
    result = await run_agent(agent, {"messages": [("user", "go")]})
    broken, slow = tool_messages(result)
    expected = "Sub-agent 'researcher' failed: ConnectionError: provider unreachable"
    assert broken.text == expected
    assert broken.status == "error"
    assert broken.artifact["status"] == "error"
    assert broken.artifact["error"] == expected
    # The sibling finished and the main agent went on.
    assert slow.text == "slow done" and slow.status == "success"
    assert result["messages"][-1].text == "recovered"


async def test_on_subagent_error_raise_fails_fast(run_agent: Any, model_calls: Any) -> None:
    agent = create_deep_agent(
        ScriptedChatModel(script=failing_script()),
        subagents=[RESEARCHER],
        on_subagent_error="raise",
    )
    with pytest.raises(ConnectionError, match="provider unreachable"):
        await run_agent(agent, {"messages": [("user", "go")]})
    assert len(model_calls.of("main")) == 1


async def test_unknown_subagent_type_names_it_and_lists_allowed_types(
    run_agent: Any, model_calls: Any
) -> None:
    model = ScriptedChatModel(script={"main": [delegate("x", "astrologer"), say("ok")]})
    result = await run_agent(
        create_deep_agent(model, subagents=[RESEARCHER]), {"messages": [("user", "go")]}
    )
    (answer,) = tool_messages(result)
    assert answer.status == "error"
    assert answer.text == (
        "Unknown subagent_type 'astrologer'. Allowed types: 'general-purpose', 'researcher'."
    )
    assert model_calls.agents() == ["main"]


# -- compiled sub-agents ----------------------------------------------------------------------


async def test_a_hand_built_state_graph_with_messages_works(run_agent: Any) -> None:
    model = ScriptedChatModel(
        script={
            "main": [delegate("Summarise the report.", "summarizer"), say("ok")],
            "summarizer": [costing("A short summary.", 50, 5)],
        }
    )

    def summarise(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = (
        StateGraph(MessagesState)
        .add_node("summarise", summarise)
        .add_edge(START, "summarise")
        .compile()
    )
    spec = {"name": "summarizer", "description": "Summarises.", "runnable": graph}
    result = await run_agent(
        create_deep_agent(model, subagents=[spec]), {"messages": [("user", "go")]}
    )
    (answer,) = tool_messages(result)
    assert answer.text == "A short summary."
    assert answer.artifact["tokens"] == {"input": 50, "output": 5, "total": 55}


@pytest.mark.parametrize(
    ("output", "got"), [({"answer": 42}, "keys ['answer']"), ("plain text", "str")]
)
async def test_a_runnable_without_messages_in_its_output_is_an_error_saying_so(
    run_agent: Any, output: Any, got: str
) -> None:
    spec = {
        "name": "calc",
        "description": "Computes.",
        "runnable": RunnableLambda(lambda _: output),
    }
    model = ScriptedChatModel(script={"main": [delegate("2+2", "calc"), say("ok")]})
    result = await run_agent(
        create_deep_agent(model, subagents=[spec]), {"messages": [("user", "go")]}
    )
    (answer,) = tool_messages(result)
    assert answer.status == "error"
    assert answer.text == (
        "Sub-agent 'calc' failed: ValueError: Sub-agent 'calc' must return a state with a "
        f"'messages' key; it returned {got}."
    )


# -- human in the loop ------------------------------------------------------------------------

deployed: list[str] = []


@tool
def deploy(target: str) -> str:
    """Deploy the service to ``target``."""
    deployed.append(target)
    return f"deployed to {target}"


def hitl_agent(checkpointer: Any) -> Any:
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(delegate("Ship it.", "ops"), delegate("Notes.", "researcher")),
                "done",
            ],
            "ops": [call("deploy", target="prod"), say("Shipped.")],
            "researcher": ["Release notes written."],
        }
    )
    ops = {
        "name": "ops",
        "description": "Deploys.",
        "system_prompt": "Deploy.",
        "interrupt_on": {"deploy": True},
    }
    return create_deep_agent(
        model, [deploy], subagents=[ops, RESEARCHER], checkpointer=checkpointer
    )


async def test_interrupt_on_pauses_the_run_and_resumes_into_the_subagent(
    run_agent: Any, model_calls: Any
) -> None:
    deployed.clear()
    agent = hitl_agent(InMemorySaver())
    config = {"configurable": {"thread_id": "hitl"}}
    paused = await run_agent(agent, {"messages": [("user", "release")]}, config)

    (interrupt,) = paused["__interrupt__"]
    (request,) = interrupt.value["action_requests"]
    assert (request["name"], request["args"]) == ("deploy", {"target": "prod"})
    assert deployed == []
    assert len(model_calls.of("main")) == 1

    resumed = await run_agent(agent, Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert "__interrupt__" not in resumed
    assert deployed == ["prod"]
    assert sorted(m.text for m in tool_messages(resumed)) == ["Release notes written.", "Shipped."]
    assert resumed["messages"][-1].text == "done"
    # The sub-agent resumed where it paused: its first model call was not repeated,
    # and the sibling that had finished did not run again.
    assert len(model_calls.of("ops")) == 2
    assert len(model_calls.of("researcher")) == 1


async def test_interrupt_on_without_checkpointer_surfaces_but_cannot_resume(run_agent: Any) -> None:
    deployed.clear()
    paused = await run_agent(hitl_agent(None), {"messages": [("user", "release")]})
    assert paused["__interrupt__"][0].value["action_requests"][0]["name"] == "deploy"
    assert deployed == []
    assert paused["messages"][-1].text != "done"


@pytest.mark.parametrize(("own", "pauses"), [(None, True), ({}, False), ({"deploy": False}, False)])
async def test_subagents_keep_the_main_interrupt_on_unless_their_spec_sets_one(
    run_agent: Any, own: dict[str, bool] | None, pauses: bool
) -> None:
    deployed.clear()
    model = ScriptedChatModel(
        script={
            "main": [delegate("Ship it.", "ops"), "done"],
            "ops": [call("deploy", target="prod"), say("Shipped.")],
        }
    )
    ops: dict[str, Any] = {"name": "ops", "description": "Deploys.", "system_prompt": "Deploy."}
    if own is not None:
        ops["interrupt_on"] = own
    agent = create_deep_agent(
        model,
        [deploy],
        subagents=[ops],
        interrupt_on={"deploy": True},
        checkpointer=InMemorySaver(),
    )
    result = await run_agent(
        agent, {"messages": [("user", "release")]}, {"configurable": {"thread_id": "t"}}
    )
    assert ("__interrupt__" in result) is pauses
    assert deployed == ([] if pauses else ["prod"])


# -- streaming --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["stream", "astream"])
async def test_streamed_runs_give_each_subagent_its_own_script(mode: str) -> None:
    model = ScriptedChatModel(
        script={
            "main": [parallel(delegate("a", "researcher"), delegate("b", "writer")), "done"],
            "researcher": ["Researched."],
            "writer": ["Written."],
        }
    )
    writer = {"name": "writer", "description": "Writes.", "system_prompt": "Write."}
    agent = create_deep_agent(model, subagents=[RESEARCHER, writer])
    payload = {"messages": [("user", "go")]}
    # "messages" mode makes LangGraph stream every model call, including the sub-agents'.
    if mode == "astream":
        events = [
            e
            async for e in agent.astream(
                payload, stream_mode=["messages", "values"], subgraphs=True
            )
        ]
    else:
        events = list(agent.stream(payload, stream_mode=["messages", "values"], subgraphs=True))
    streamed = {
        (meta["lc_agent_name"], chunk.text)
        for _, mode, (chunk, meta) in (e for e in events if e[1] == "messages")
        if chunk.type == "AIMessageChunk" and chunk.text
    }
    assert {("researcher", "Researched."), ("writer", "Written.")} <= streamed
    final = [data for namespace, mode, data in events if mode == "values" and not namespace][-1]
    assert [m.text for m in tool_messages(final)] == ["Researched.", "Written."]


async def test_the_middleware_works_in_a_plain_create_agent(run_agent: Any) -> None:
    from langchain.agents import create_agent

    from nbagents import SubAgentMiddleware

    model = ScriptedChatModel(
        script={"main": [delegate("Look it up.", "researcher"), "ok"], "researcher": ["Found."]}
    )
    middleware = SubAgentMiddleware(default_model=model, subagents=[RESEARCHER])
    agent = create_agent(model, middleware=[middleware], name="main")
    result = await run_agent(agent, {"messages": [("user", "go")]})
    assert [m.text for m in tool_messages(result)] == ["Found."]
    assert result["messages"][-1].text == "ok"
