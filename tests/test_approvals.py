"""Answering approval pauses with ``pending_approvals``: every decision, through sub-agents,
parallel and nested pauses, under invoke and ainvoke, in both of LangChain's interrupt shapes."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.approvals import ApprovalError, pending_approvals
from nbagents.models import call, delegate, parallel, say

deployed: list[str] = []
_threads = itertools.count()


@tool
def deploy(target: str, version: str = "1.0") -> str:
    """Deploy ``version`` of the service to ``target``."""
    deployed.append(f"{target}@{version}")
    return f"deployed {version} to {target}"


OPS = {"name": "ops", "description": "Deploys.", "system_prompt": "Deploy."}


def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"approvals-{next(_threads)}"}}


def agent_with(script: dict[str, Any], subagents: list[dict[str, Any]] | None = None) -> Any:
    deployed.clear()
    return create_deep_agent(
        ScriptedChatModel(script=script),
        [deploy],
        subagents=subagents or [OPS],
        interrupt_on={"deploy": True},
        checkpointer=InMemorySaver(),
    )


def tool_results_seen_by(model_calls: Any, agent: str) -> list[str]:
    """What the ``deploy`` call answered, as the agent's model read it on its next turn."""
    return [
        m.text
        for c in model_calls.of(agent)
        for m in c.messages
        if isinstance(m, ToolMessage) and m.name == "deploy"
    ]


ONE_SUBAGENT = {
    "main": [delegate("Ship it.", "ops"), "done"],
    "ops": [call("deploy", target="prod"), say("Shipped.")],
}


@pytest.mark.parametrize(
    ("decide", "runs", "ops_reads"),
    [
        (lambda r: r.approve(), ["prod@1.0"], "deployed 1.0 to prod"),
        (lambda r: r.edit(target="staging"), ["staging@1.0"], "deployed 1.0 to staging"),
        (lambda r: r.edit({"target": "eu", "version": "2"}), ["eu@2"], "deployed 2 to eu"),
        (lambda r: r.reject("Not on a Friday."), [], "Not on a Friday."),
        (lambda r: r.respond("Already deployed by hand."), [], "Already deployed by hand."),
    ],
    ids=["approve", "edit-one-arg", "edit-all-args", "reject", "respond"],
)
async def test_each_decision_reaches_the_paused_subagent(
    run_agent: Any, model_calls: Any, decide: Any, runs: list[str], ops_reads: str
) -> None:
    agent, config = agent_with(ONE_SUBAGENT), thread()
    paused = await run_agent(agent, {"messages": [("user", "release")]}, config)

    requests = pending_approvals(paused)
    (request,) = requests
    assert (request.tool, request.args) == ("deploy", {"target": "prod"})
    assert request.allowed == ("approve", "edit", "reject", "respond")
    assert deployed == []
    decide(request)
    resumed = await run_agent(agent, requests.resume(), config)

    assert resumed["messages"][-1].text == "done"
    assert deployed == runs
    (seen,) = tool_results_seen_by(model_calls, "ops")
    assert ops_reads in seen
    assert not pending_approvals(resumed)


async def test_parallel_pauses_are_answered_by_one_resume(run_agent: Any, model_calls: Any) -> None:
    script = {
        "main": [
            parallel(
                delegate("Ship A.", "ops"), delegate("Ship B.", "ops"), delegate("Ship C.", "ops")
            ),
            "done",
        ],
        "ops": {
            "Ship A.": [call("deploy", target="a"), say("A handled.")],
            "Ship B.": [call("deploy", target="b"), say("B handled.")],
            "Ship C.": [call("deploy", target="c"), say("C handled.")],
        },
    }
    agent, config = agent_with(script), thread()
    paused = await run_agent(agent, {"messages": [("user", "release")]}, config)
    requests = pending_approvals(paused)
    assert sorted(r.args["target"] for r in requests) == ["a", "b", "c"]
    assert len({r.interrupt_id for r in requests}) == 3  # three sub-agents, three interrupts

    by_target = {r.args["target"]: r for r in requests}
    by_target["a"].approve()
    by_target["b"].edit(version="2")
    by_target["c"].reject()
    resumed = await run_agent(agent, requests.resume(), config)

    assert sorted(deployed) == ["a@1.0", "b@2"]
    assert resumed["messages"][-1].text == "done"
    results = sorted(m.text for m in resumed["messages"] if isinstance(m, ToolMessage))
    assert results == ["A handled.", "B handled.", "C handled."]
    rejected = [t for t in tool_results_seen_by(model_calls, "ops") if "rejected" in t]
    assert len(rejected) == 1 and "deploy" in rejected[0]


async def test_a_nested_subagent_pause_is_answered_from_the_top(run_agent: Any) -> None:
    lead = {"name": "lead", "description": "Leads releases.", "system_prompt": "Lead."}
    script = {
        "main": [delegate("Release.", "lead"), "done"],
        "lead": [delegate("Ship it.", "ops"), say("Release led.")],
        "ops": [call("deploy", target="prod"), say("Shipped.")],
    }
    agent, config = agent_with(script, [lead, OPS]), thread()
    paused = await run_agent(agent, {"messages": [("user", "release")]}, config)
    requests = pending_approvals(paused)
    (request,) = requests
    assert request.args == {"target": "prod"}
    request.edit(target="canary")
    resumed = await run_agent(agent, requests.resume(), config)
    assert deployed == ["canary@1.0"]
    results = [m.text for m in resumed["messages"] if isinstance(m, ToolMessage)]
    assert results == ["Release led."]
    assert resumed["messages"][-1].text == "done"


async def test_a_fresh_read_carries_no_decisions_and_resume_refuses(run_agent: Any) -> None:
    agent, config = agent_with(ONE_SUBAGENT), thread()
    paused = await run_agent(agent, {"messages": [("user", "release")]}, config)
    requests = pending_approvals(paused)
    with pytest.raises(ApprovalError, match=r"1 request\(s\) have no decision yet: deploy"):
        requests.resume()
    requests.approve_all()
    resumed = await run_agent(agent, requests.resume(), config)
    assert deployed == ["prod@1.0"]
    assert resumed["messages"][-1].text == "done"


def test_per_call_interrupts_offer_only_their_allowed_decisions() -> None:
    deployed.clear()
    model = ScriptedChatModel(
        script={"main": [parallel(call("deploy", target="x"), call("deploy", target="y")), "ok"]}
    )
    agent = create_agent(
        model,
        [deploy],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"deploy": {"allowed_decisions": ["approve", "reject"]}},
                interrupt_mode="per_call",
            )
        ],
        checkpointer=InMemorySaver(),
        name="main",
    )
    config = thread()
    paused = agent.invoke({"messages": [("user", "ship")]}, config)
    requests = pending_approvals(paused)
    assert sorted(r.args["target"] for r in requests) == ["x", "y"]
    assert all(r.allowed == ("approve", "reject") for r in requests)
    assert all(r.tool_call_id for r in requests)
    with pytest.raises(ApprovalError, match="'edit' is not allowed for the 'deploy' call"):
        requests[0].edit(target="z")
    by_target = {r.args["target"]: r for r in requests}
    by_target["x"].approve()
    by_target["y"].reject("no")
    result = agent.invoke(requests.resume(), config)
    assert deployed == ["x@1.0"]
    assert result["messages"][-1].text == "ok"


def test_what_is_not_a_paused_run() -> None:
    assert len(pending_approvals({"messages": []})) == 0
    assert repr(pending_approvals([])) == "<Approvals: nothing pending>"
    with pytest.raises(TypeError, match="takes what invoke\\(\\) returned"):
        pending_approvals(42)


async def test_the_listing_says_what_each_request_would_do(run_agent: Any) -> None:
    agent, config = agent_with(ONE_SUBAGENT), thread()
    requests = pending_approvals(
        await run_agent(agent, {"messages": [("user", "release")]}, config)
    )
    assert repr(requests) == (
        "<Approvals: 1 pending>\n  [0] deploy(target='prod')  [approve/edit/reject/respond]  "
        "undecided"
    )
    requests[0].reject()
    assert repr(requests).endswith("reject")
    # The state snapshot holds the same requests as the run's result.
    (again,) = pending_approvals(agent.get_state(config))
    assert again.args == {"target": "prod"}
