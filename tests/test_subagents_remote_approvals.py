"""Remote sub-agents that pause for a person, against a real ``langgraph dev`` server on loopback.

The served graphs (``tests/remote_graph/more_graphs.py``) gate their ``deploy`` calls with
``HumanInTheLoopMiddleware`` (``approver``: one interrupt per model turn; ``approver_per_call``:
one per call; ``approving_lead``: a deep agent whose two workers are ``approver``) or stop in a
tool with a plain ``interrupt`` (``asker``). The main agent, here, pauses with what they ask,
which reads as a local sub-agent's pause; its resumption resumes the same remote thread with the
decisions.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from remote_graph.serve import LANGGRAPH, Server

import nbagents
from nbagents import (
    RemoteSubAgent,
    ScriptedChatModel,
    Trace,
    create_deep_agent,
    pending_approvals,
)
from nbagents.approvals import answer
from nbagents.models import call, delegate, parallel, say
from nbagents.tracing import Span, recording

pytestmark = pytest.mark.server  # starts a `langgraph dev` server

pytest.importorskip("langgraph_sdk")
if not Path(LANGGRAPH).exists():
    pytest.skip("langgraph-cli[inmem] is not installed (the test extra)", allow_module_level=True)

_threads = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(
        tmp_path_factory.mktemp("langgraph-approvals"),
        graphs=("worker", "asker", "approver", "approver_per_call", "approving_lead"),
    )
    yield running
    running.stop()


def remote(server: Server, graph: str = "approver", name: str = "approver") -> RemoteSubAgent:
    return {
        "name": name,
        "description": f"The {graph} graph on the team's server.",
        "url": server.url,
        "graph_id": graph,
    }


def main_agent(
    main: list[Any], *specs: Any, checkpointer: bool = True, script: dict[str, Any] | None = None
) -> Any:
    return create_deep_agent(
        ScriptedChatModel(script={"main": main, **(script or {})}),
        [deploy],
        subagents=list(specs),
        checkpointer=InMemorySaver() if checkpointer else None,
    )


def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"remote-approvals-{next(_threads)}"}}


def results(result: dict[str, Any]) -> dict[str, ToolMessage]:
    """The ``task`` results by the description of the call they answer."""
    asked = {
        c["id"]: c["args"]["description"]
        for m in result["messages"]
        for c in getattr(m, "tool_calls", ())
    }
    return {asked[m.tool_call_id]: m for m in result["messages"] if isinstance(m, ToolMessage)}


def remote_record(trace: Trace, description: str) -> dict[str, Any]:
    span = next(s for s in subagents(trace) if s.attributes["description"] == description)
    return dict(span.attributes["remote"])


def subagents(trace: Trace) -> list[Span]:
    return [s for s in trace.spans if s.kind == "subagent"]


def server_json(server: Server, path: str) -> Any:
    with urllib.request.urlopen(f"{server.url}{path}", timeout=10) as response:
        return json.load(response)


def message_types(server: Server, thread_id: str) -> list[str]:
    state = server_json(server, f"/threads/{thread_id}/state")
    return [m["type"] for m in state["values"]["messages"]]


async def approve_each_pause(
    run_agent: Any, agent: Any, paused: dict[str, Any], config: dict[str, Any]
) -> tuple[list[list[str]], dict[str, Any]]:
    """Approve what each pause asks for until the run ends: the targets asked about, pause by
    pause, and the final result."""
    asked: list[list[str]] = []
    while "__interrupt__" in paused:
        requests = pending_approvals(paused)
        asked.append([request.args["target"] for request in requests])
        requests.approve_all()
        paused = await run_agent(agent, requests.resume(), config)
    return asked, paused


@tool
def deploy(target: str) -> str:
    """Deploy the service to ``target`` (the local twin of the served graphs' tool)."""
    return f"deployed to {target}"


# -- the pause reads as a local one ----------------------------------------------------------------


@pytest.mark.parametrize("graph", ["approver", "approver_per_call"])
async def test_a_remote_pause_reads_as_a_local_subagents_pause(
    server: Server, run_agent: Any, graph: str
) -> None:
    remote_main = main_agent([delegate("prod", "approver"), "done"], remote(server, graph))
    local_spec = {
        "name": "approver",
        "description": "Deploys here.",
        "system_prompt": "Deploy.",
        "interrupt_on": {"deploy": True},
    }
    if graph == "approver_per_call":
        # The same middleware, as the served graph has it: one interrupt per call.
        local_spec = {
            **local_spec,
            "interrupt_on": {},
            "middleware": [HumanInTheLoopMiddleware({"deploy": True}, interrupt_mode="per_call")],
        }
    local_main = main_agent(
        [delegate("prod", "approver"), "done"],
        local_spec,
        script={"approver": [call("deploy", target="prod"), say("deployed")]},
    )

    remote_paused = await run_agent(remote_main, {"messages": [("user", "go")]}, thread())
    local_paused = await run_agent(local_main, {"messages": [("user", "go")]}, thread())

    def read(paused: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [
            (r.tool, r.args, r.allowed, r.description, r.interrupt_id == i.id)
            for r, i in zip(pending_approvals(paused), paused["__interrupt__"], strict=True)
        ]

    assert read(remote_paused) == read(local_paused)
    assert read(remote_paused) == [
        (
            "deploy",
            {"target": "prod"},
            ("approve", "edit", "reject", "respond"),
            "Tool execution requires approval\n\nTool: deploy\nArgs: {'target': 'prod'}",
            True,
        )
    ]


# -- resuming it -----------------------------------------------------------------------------------


@pytest.mark.parametrize("graph", ["approver", "approver_per_call"])
@pytest.mark.parametrize(
    ("decide", "reads"),
    [
        (lambda r: r.approve(), "deployed to prod"),
        (lambda r: r.edit(target="staging"), "deployed to staging"),
        (lambda r: r.reject("Not on a Friday."), "Not on a Friday."),
        (lambda r: r.respond("Deployed by hand."), "Deployed by hand."),
    ],
    ids=["approve", "edit", "reject", "respond"],
)
async def test_each_decision_resumes_the_same_remote_thread(
    server: Server, run_agent: Any, graph: str, decide: Any, reads: str
) -> None:
    agent, config = (
        main_agent([delegate("prod", "approver"), "done"], remote(server, graph)),
        thread(),
    )
    with recording() as tracer:
        paused = await run_agent(agent, {"messages": [("user", "go")]}, config)
        before = remote_record(tracer.trace, "prod")
        assert server_json(server, f"/threads/{before['thread_id']}")["status"] == "interrupted"
        requests = pending_approvals(paused)
        decide(requests[0])
        resumed = await run_agent(agent, requests.resume(), config)
    after = remote_record(tracer.trace, "prod")

    assert "__interrupt__" not in resumed
    assert resumed["messages"][-1].text == "done"
    [message] = results(resumed).values()
    assert message.status == "success"
    assert message.text.startswith("approver says: ") and reads in message.text
    assert message.artifact["status"] == "ok"
    # The same thread, continued by a second run: the task was not started again.
    assert after["thread_id"] == before["thread_id"]
    assert after["run_id"] != before["run_id"]
    runs = server_json(server, f"/threads/{after['thread_id']}/runs")
    assert sorted(r["run_id"] for r in runs) == sorted([before["run_id"], after["run_id"]])
    assert message_types(server, after["thread_id"]) == ["human", "ai", "tool", "ai"]
    assert not pending_approvals(resumed)


def test_two_conversations_with_one_thread_id_resume_their_own_remote_threads(
    server: Server,
) -> None:
    # Two kernels, each with its own checkpointer and trace, the same thread id and the same
    # script (so the same tool call ids): each pause and resumption stays on its own thread.
    config = {"configurable": {"thread_id": "release-1"}}
    kernels = [main_agent([delegate("prod", "approver"), "done"], remote(server)) for _ in "ab"]
    threads, requests = [], []
    for agent in kernels:
        with recording() as tracer:
            paused = agent.invoke({"messages": [("user", "go")]}, config)
        threads.append(remote_record(tracer.trace, "prod")["thread_id"])
        requests.append(pending_approvals(paused))
    requests[0][0].edit(target="staging")
    requests[1][0].approve()
    said = [
        results(agent.invoke(asked.resume(), config))["prod"].text
        for agent, asked in zip(kernels, requests, strict=True)
    ]
    assert threads[0] != threads[1]
    assert "deployed to staging" in said[0] and "deployed to prod" not in said[0]
    assert "deployed to prod" in said[1] and "staging" not in said[1]
    for thread_id in threads:
        assert message_types(server, thread_id) == ["human", "ai", "tool", "ai"]


async def test_remote_subagents_paused_together_are_answered_by_one_resume(
    server: Server, run_agent: Any
) -> None:
    local = {
        "name": "local",
        "description": "Deploys here.",
        "system_prompt": "Deploy.",
        "interrupt_on": {"deploy": True},
    }
    fan_out = parallel(
        delegate("a", "batched"),
        delegate("b", "per_call"),
        delegate("c", "batched"),
        delegate("d", "local"),
    )
    agent = main_agent(
        [fan_out, "done"],
        remote(server, "approver", name="batched"),
        remote(server, "approver_per_call", name="per_call"),
        local,
        script={"local": [call("deploy", target="d"), say("local says: deployed to d")]},
    )
    config = thread()
    paused = await run_agent(agent, {"messages": [("user", "go")]}, config)

    requests = pending_approvals(paused)
    by_target = {r.args["target"]: r for r in requests}
    assert sorted(by_target) == ["a", "b", "c", "d"]
    assert len({r.interrupt_id for r in requests}) == 4
    by_target["a"].approve()
    by_target["b"].edit(target="b2")
    by_target["c"].reject("Not c.")
    by_target["d"].approve()
    resumed = await run_agent(agent, requests.resume(), config)

    assert "__interrupt__" not in resumed
    answers = {description: m.text for description, m in results(resumed).items()}
    assert answers["a"] == "approver says: deployed to a"
    assert "deployed to b2" in answers["b"]
    assert "Not c." in answers["c"] and "deployed" not in answers["c"]
    assert answers["d"] == "local says: deployed to d"


async def test_a_remote_subagent_of_a_local_one_is_answered_from_the_top(
    server: Server, run_agent: Any
) -> None:
    lead = {"name": "lead", "description": "Leads releases.", "system_prompt": "Lead."}
    agent = main_agent(
        [delegate("Release.", "lead"), "done"],
        lead,
        remote(server),
        script={"lead": [delegate("prod", "approver"), say("Release led.")]},
    )
    config = thread()
    paused = await run_agent(agent, {"messages": [("user", "go")]}, config)
    requests = pending_approvals(paused)
    [request] = requests
    assert (request.tool, request.args) == ("deploy", {"target": "prod"})
    request.edit(target="canary")
    resumed = await run_agent(agent, requests.resume(), config)

    assert resumed["messages"][-1].text == "done"
    assert results(resumed)["Release."].text == "Release led."
    state = agent.get_state(config)
    assert not state.interrupts


async def test_a_remote_run_that_pauses_again_asks_again(server: Server, run_agent: Any) -> None:
    agent, config = (
        main_agent([delegate("prod twice", "approver"), "done"], remote(server)),
        thread(),
    )
    first = pending_approvals(await run_agent(agent, {"messages": [("user", "go")]}, config))
    [request] = first
    assert request.args == {"target": "prod"}
    request.approve()

    second = pending_approvals(await run_agent(agent, first.resume(), config))
    [again] = second
    assert again.args == {"target": "prod again"}
    assert again.interrupt_id != request.interrupt_id
    again.edit(target="prod later")

    done = await run_agent(agent, second.resume(), config)
    [message] = results(done).values()
    assert message.text.startswith("approver says: deployed to prod / ")
    assert message.text.endswith("deployed to prod later")


async def test_requests_of_one_remote_run_are_asked_for_at_once(
    server: Server, run_agent: Any
) -> None:
    # One interrupt per gated call: the remote run waits for two, and the parent pauses once
    # with both, as one batched approval (a batched pause of the same calls, below, too).
    agent = main_agent(
        [delegate("a and b", "approver"), "done"], remote(server, "approver_per_call")
    )
    config = thread()
    paused = await run_agent(agent, {"messages": [("user", "go")]}, config)
    requests = pending_approvals(paused)
    assert sorted(r.args["target"] for r in requests) == ["a", "b"]
    assert len({r.interrupt_id for r in requests}) == 1
    by_target = {r.args["target"]: r for r in requests}
    by_target["a"].approve()
    by_target["b"].edit(target="b2")
    paused = await run_agent(agent, requests.resume(), config)
    assert "__interrupt__" not in paused
    [message] = results(paused).values()
    said = message.text  # LangChain's per-call edit adds a note before the tool's answer
    assert said.startswith("approver says: deployed to a / ") and said.endswith("deployed to b2")
    assert "deployed to b\n" not in said and not said.endswith("deployed to b")

    agent = main_agent(
        [delegate("a and b", "approver"), "done"], remote(server, "approver_per_call")
    )
    config = thread()
    paused = await run_agent(agent, {"messages": [("user", "go")]}, config)
    asked, paused = await approve_each_pause(run_agent, agent, paused, config)
    assert [sorted(targets) for targets in asked] == [["a", "b"]]
    [message] = results(paused).values()
    assert message.text == "approver says: deployed to a / deployed to b"

    batched = main_agent([delegate("a and b", "approver"), "done"], remote(server))
    config = thread()
    paused = await run_agent(batched, {"messages": [("user", "go")]}, config)
    requests = pending_approvals(paused)
    assert [r.args["target"] for r in requests] == ["a", "b"]
    requests.approve_all()
    [message] = results(await run_agent(batched, requests.resume(), config)).values()
    assert message.text == "approver says: deployed to a / deployed to b"


async def test_pauses_inside_a_remote_deep_agent_are_asked_for_and_resume_it(
    server: Server, run_agent: Any
) -> None:
    # The remote lead's two workers both wait: the thread's state lists both interrupts (its
    # own status and interrupts would name one), asked for at once, resumed together.
    spec = remote(server, "approving_lead", name="lead")
    agent, config = main_agent([delegate("ship", "lead"), "done"], spec), thread()
    paused = await run_agent(agent, {"messages": [("user", "go")]}, config)
    asked, paused = await approve_each_pause(run_agent, agent, paused, config)

    assert [sorted(targets) for targets in asked] == [["ship part A", "ship part B"]]
    [message] = results(paused).values()
    assert message.text == (
        "lead says: worker says: deployed to ship part A / worker says: deployed to ship part B"
    )


async def test_a_plain_remote_interrupt_is_passed_up_and_answered(
    server: Server, run_agent: Any
) -> None:
    agent = main_agent([delegate("jump", "asker"), "done"], remote(server, "asker", name="asker"))
    config = thread()
    paused = await run_agent(agent, {"messages": [("user", "go")]}, config)

    [asked] = paused["__interrupt__"]
    assert asked.value == {"question": "May I jump?"}
    assert not pending_approvals(paused)  # not an approval: answered as its graph expects
    resumed = await run_agent(agent, Command(resume={asked.id: "yes, go"}), config)
    [message] = results(resumed).values()
    assert message.text == "asker says: jump: yes, go"


@pytest.mark.parametrize("how", ["view", "code"])
def test_the_live_view_and_resume_in_code_answer_a_remote_pause(server: Server, how: str) -> None:
    agent, config = main_agent([delegate("prod", "approver"), "done"], remote(server)), thread()
    with nbagents.trace(display=False) as t:
        paused = agent.invoke({"messages": [("user", "go")]}, config)
    [asked] = paused["__interrupt__"]
    if how == "view":  # what the Submit button sends
        edit = {"key": f"{asked.id}:0", "decision": "edit", "args_json": '{"target": "eu"}'}
        result = answer(t, [edit])
    else:
        requests = pending_approvals(paused)
        requests[0].edit(target="eu")
        result = nbagents.resume(t, requests)

    [message] = results(result).values()
    assert "deployed to eu" in message.text
    (root,) = t.visible_roots()
    assert root.status == "ok" and len(root.attributes["paused"]) == 1
    [sub] = subagents(t)
    [answered] = sub.attributes["approvals"]
    assert answered["decision"] == "edit" and answered["edited_args"] == {"target": "eu"}


# -- the trace -------------------------------------------------------------------------------------


@pytest.mark.parametrize("detail", ["steps", "events"])
async def test_the_trace_continues_the_remote_subagent_across_the_pause(
    server: Server, run_agent: Any, detail: str
) -> None:
    spec = {**remote(server), "trace": detail}
    fan_out = parallel(delegate("a", "approver"), delegate("b", "approver"))
    agent, config = main_agent([fan_out, "done"], spec), thread()
    with recording() as tracer:
        paused = await run_agent(agent, {"messages": [("user", "go")]}, config)
        while_paused = Trace.from_json(tracer.trace.to_json())
        requests = pending_approvals(paused)
        requests.approve_all()
        await run_agent(agent, requests.resume(), config)
    trace = tracer.trace

    assert while_paused.status == "interrupted"
    for sub in subagents(while_paused):
        assert sub.status == "interrupted" and sub.error is None
        [pending] = sub.attributes["pending"]
        assert pending["tool"] == "deploy" and pending["args"] == {
            "target": sub.attributes["description"]
        }
        assert all(s.status != "running" for s in while_paused.descendants(sub))
    # After the resume: one root, the same task and sub-agent spans, every step finished.
    (root,) = trace.roots
    assert root.id == while_paused.roots[0].id
    assert trace.status == "ok"
    assert {s.status for s in trace.spans if not s.hidden} == {"ok"}
    assert sorted(s.id for s in subagents(trace)) == sorted(s.id for s in subagents(while_paused))
    tasks = {s.attributes["tool_call_id"]: s.id for s in trace.spans if s.kind == "task"}
    assert tasks == {
        s.attributes["tool_call_id"]: s.id for s in while_paused.spans if s.kind == "task"
    }
    for sub in subagents(trace):
        target = sub.attributes["description"]
        (pause,) = sub.attributes["paused"]
        [answered] = sub.attributes["approvals"]
        assert answered["tool"] == "deploy" and answered["decision"] == "approve"
        assert "pending" not in sub.attributes
        kids = [s for s in trace.descendants(sub) if not s.hidden]
        assert [s.kind for s in kids if s.start < pause[0]] == ["model"]
        assert [s.kind for s in kids if s.start >= pause[1]] == ["tool", "model"]
        [deployed] = [s for s in kids if s.kind == "tool"]
        assert deployed.name == "deploy" and deployed.inputs == {"target": target}
        assert sub.attributes["result"] == f"approver says: deployed to {target}"
        assert sub.attributes["remote"]["steps"] == "streamed"


@pytest.mark.parametrize("detail", ["steps", "events"])
def test_a_rejected_remote_call_is_no_tool_call_in_the_trace(server: Server, detail: str) -> None:
    # As for a local sub-agent: the tool never ran; the rejection is the agent's tool result,
    # written by the approval middleware, not a call of the tool.
    spec = {**remote(server), "trace": detail}
    agent, config = main_agent([delegate("prod", "approver"), "done"], spec), thread()
    with recording() as tracer:
        requests = pending_approvals(agent.invoke({"messages": [("user", "go")]}, config))
        requests[0].reject("Not today.")
        agent.invoke(requests.resume(), config)

    [sub] = subagents(tracer.trace)
    kids = [s for s in tracer.trace.descendants(sub) if not s.hidden]
    assert [s.kind for s in kids] == ["model", "model"]
    assert {s.status for s in kids} == {"ok"} and sub.status == "ok"
    assert "Not today." in sub.attributes["result"]


# -- without a checkpointer ------------------------------------------------------------------------


async def test_a_remote_pause_without_a_checkpointer_is_a_clear_error(
    server: Server, run_agent: Any
) -> None:
    agent = main_agent([delegate("prod", "approver"), "done"], remote(server), checkpointer=False)
    with recording() as tracer:
        result = await run_agent(agent, {"messages": [("user", "go")]})

    assert result["messages"][-1].text == "done"  # the main agent carried on
    [message] = results(result).values()
    assert message.status == "error"
    assert "paused for a decision (approve deploy({'target': 'prod'}))" in message.text
    assert "checkpointer" in message.text
    [sub] = subagents(tracer.trace)
    assert sub.status == "error"
    assert all(s.status != "running" for s in tracer.trace.descendants(sub))
    thread_id = sub.attributes["remote"]["thread_id"]
    assert thread_id in message.text
    assert server_json(server, f"/threads/{thread_id}")["status"] == "interrupted"


# -- finding the thread again ----------------------------------------------------------------------


async def test_a_task_call_run_again_after_a_cancel_starts_on_a_fresh_thread(
    server: Server,
) -> None:
    # Cancelled mid-run, the parent continues from its last checkpoint: the same task call runs
    # again, finds the thread it ran on cancelled (not waiting) and starts over on the next one
    # rather than add the task to the cut-off conversation.
    worker: RemoteSubAgent = {
        "name": "worker",
        "description": "Works on a LangGraph server.",
        "url": server.url,
        "graph_id": "worker",
    }
    agent, config = main_agent([delegate("job sleep=3", "worker"), "done"], worker), thread()
    with recording() as tracer:
        running = asyncio.ensure_future(agent.ainvoke({"messages": [("user", "go")]}, config))
        for _ in range(400):  # until the remote tool call is under way
            if any(s.name == "work" for s in tracer.trace.spans):
                break
            await asyncio.sleep(0.05)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        assert agent.get_state(config).next == ("tools",)
        [cut] = [s.attributes["remote"]["thread_id"] for s in subagents(tracer.trace)]
        continued = await agent.ainvoke(None, config)

    assert results(continued)["job sleep=3"].text == "worker says: worked on: job sleep=3"
    # (The tracer continues the cancelled sub-agent's span: same task run.)
    [fresh] = [s.attributes["remote"]["thread_id"] for s in subagents(tracer.trace)]
    assert cut != fresh
    assert message_types(server, fresh) == ["human", "ai", "tool", "ai"]
    assert message_types(server, cut).count("human") == 1
