"""Background remote sub-agents against a real ``langgraph dev`` server on loopback.

The main agent starts tasks that return at once, keeps working, checks them, sends one a
follow-up, cancels another and lists them: the tools named as upstream deepagents' async
sub-agent tools, tasks kept in the agent state.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from remote_graph.serve import LANGGRAPH, Server, free_port

from nbagents import RemoteSubAgent, ScriptedChatModel, Tracer, create_deep_agent
from nbagents.models import call, say
from nbagents.subagents._background import NOTICE_TOOL

pytestmark = pytest.mark.server  # starts a `langgraph dev` server

pytest.importorskip("langgraph_sdk")
if not Path(LANGGRAPH).exists():
    pytest.skip("langgraph-cli[inmem] is not installed (the test extra)", allow_module_level=True)

STARTED = re.compile(r"Started background task (\S+) \(")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("langgraph-background"), graphs=("worker", "approver"))
    serving.append(running.url)
    yield running
    serving.remove(running.url)
    running.stop()


serving: list[str] = []


def background(url: str) -> RemoteSubAgent:
    return {
        "name": "worker",
        "description": "Works on a LangGraph server, in the background.",
        "url": url,
        "graph_id": "worker",
        "background": True,
    }


notes: list[str] = []


@tool
def note(text: str) -> str:
    """Write a note: work the main agent does while its background tasks run."""
    notes.append(text)
    return "noted"


@tool
def pause(seconds: float) -> str:
    """Wait, as a main agent busy with other work would."""
    time.sleep(seconds)
    # A loaded machine runs the server's jobs late: wait for them, so the check after the
    # pause sees each finished, whatever the load.
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=serving[-1])
    deadline = time.monotonic() + 60
    while client.threads.search(status="busy", limit=1) and time.monotonic() < deadline:
        time.sleep(0.2)
    return "paused"


def _steps(messages: list[BaseMessage]) -> list[Any]:
    """The main agent's plan, one turn per AI message; task ids read from earlier answers."""
    ids = [m for t in messages if isinstance(t, ToolMessage) for m in STARTED.findall(t.text)]
    alpha, gamma = [*ids, "?", "?"][:2]
    return [
        call("start_async_task", description="alpha sleep=2", subagent_type="worker"),
        call("start_async_task", description="gamma sleep=60", subagent_type="worker"),
        call("note", text="kept working"),
        call("check_async_task", task_id=alpha),
        call("cancel_async_task", task_id=gamma),
        call("pause", seconds=3.5),
        call("check_async_task", task_id=alpha),
        call("update_async_task", task_id=alpha, message="delta"),
        call("pause", seconds=2.5),
        call("check_async_task", task_id=alpha),
        call("check_async_task", task_id="no-such-task"),
        call("list_async_tasks"),
        say("all checked"),
    ]


def main_reply(agent: str, messages: list[BaseMessage]) -> Any:
    return _steps(messages)[sum(isinstance(m, AIMessage) for m in messages)]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_background_tasks_run_while_the_main_agent_works(server: Server, mode: str) -> None:
    notes.clear()
    agent = create_deep_agent(
        ScriptedChatModel(responder=main_reply), [note, pause], subagents=[background(server.url)]
    )
    tracer = Tracer()
    config = {"callbacks": [tracer]}
    payload = {"messages": [("user", "go")]}
    started = time.monotonic()
    if mode == "ainvoke":
        result = await agent.ainvoke(payload, config)
    else:
        result = agent.invoke(payload, config)
    took = time.monotonic() - started
    answers = [m.text for m in result["messages"] if isinstance(m, ToolMessage)]
    started_alpha, started_gamma, _, first, cancelled, _, second, updated, _, third = answers[:10]
    unknown, listing = answers[10:12]
    alpha = STARTED.findall(started_alpha)[0]
    gamma = STARTED.findall(started_gamma)[0]
    # start returned at once: the main agent noted and checked while alpha still ran
    assert notes == ["kept working"]
    assert "is still" in first, first
    assert cancelled == f"Task {gamma} (worker): cancelled."
    assert "succeeded. Result:\nworker says: worked on: alpha sleep=2" in second
    assert "Sent the follow-up" in updated
    assert "succeeded. Result:\nworker says: worked on: delta" in third
    assert unknown.startswith("Unknown task id 'no-such-task'.") and alpha in unknown
    assert f"{alpha} · worker · success" in listing and f"{gamma} · worker · cancelled" in listing
    tasks = result["background_tasks"]
    assert {t["status"] for t in tasks.values()} == {"success", "cancelled"}
    assert result["messages"][-1].text == "all checked"
    # gamma would have slept 60 s: the run was cancelled on the server, not waited for
    assert took < 45
    assert _run_status(server.url, gamma, tasks[gamma]["run_id"]) in {"interrupted", "error"}
    tool_spans = [s.name for s in tracer.trace.spans if s.kind == "tool"]
    assert tool_spans.count("start_async_task") == 2 and "list_async_tasks" in tool_spans
    # told, not polled: each run that finished is announced once, before the next model call
    # (gamma is not: the agent cancelled it itself)
    notices = [m for m in result["messages"] if m.type == "human" and m.name == NOTICE_TOOL]
    assert [n.text.splitlines()[0] for n in notices] == [
        f"Background task {alpha} (worker) finished: success. Result:",
    ] * 2, notices
    assert "worker says: worked on: alpha sleep=2" in notices[0].text
    assert "worker says: worked on: delta" in notices[-1].text
    steps = [s for s in tracer.trace.spans if s.name == NOTICE_TOOL]
    assert [s.kind for s in steps] == ["tool"] * len(notices)
    assert {s.agent for s in steps} == {tracer.trace.roots[0].agent}
    assert [s.outputs for s in steps] == [n.text for n in notices]


def _run_status(url: str, thread_id: str, run_id: str) -> str:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=url)
    return str(client.runs.get(thread_id, run_id)["status"])


def _queued_steps(messages: list[BaseMessage]) -> list[Any]:
    ids = [m for t in messages if isinstance(t, ToolMessage) for m in STARTED.findall(t.text)]
    alpha, gamma = [*ids, "?", "?"][:2]
    return [
        call("start_async_task", description="alpha sleep=3", subagent_type="worker"),
        call("start_async_task", description="gamma sleep=60", subagent_type="worker"),
        call("update_async_task", task_id=alpha, message="delta"),
        call("update_async_task", task_id=gamma, message="epsilon sleep=60"),
        call("check_async_task", task_id=alpha),
        call("cancel_async_task", task_id=gamma),
        call("pause", seconds=5),
        call("check_async_task", task_id=alpha),
        say("all queued"),
    ]


def queued_reply(agent: str, messages: list[BaseMessage]) -> Any:
    return _queued_steps(messages)[sum(isinstance(m, AIMessage) for m in messages)]


def test_with_enqueue_a_follow_up_waits_for_the_run_and_cancel_ends_both(server: Server) -> None:
    from langgraph_sdk import get_sync_client

    spec = {**background(server.url), "update_strategy": "enqueue"}
    agent = create_deep_agent(
        ScriptedChatModel(responder=queued_reply),
        [pause],
        subagents=[spec],  # type: ignore[list-item]
    )
    started = time.monotonic()
    result = agent.invoke({"messages": [("user", "go")]})
    took = time.monotonic() - started
    answers = [m.text for m in result["messages"] if isinstance(m, ToolMessage)]
    started_alpha, started_gamma, queued, _, pending, cancelled, _, done = answers[:8]
    alpha = STARTED.findall(started_alpha)[0]
    gamma = STARTED.findall(started_gamma)[0]
    assert queued.startswith(f"Queued the follow-up to task {alpha} behind its current run")
    assert pending == f"Task {alpha} (worker) is still pending."
    assert cancelled == f"Task {gamma} (worker): cancelled."
    assert "succeeded. Result:\nworker says: worked on: delta" in done

    client = get_sync_client(url=server.url)
    # Queued, not interrupting: the first job ran to its end before the follow-up's began.
    worked = [
        m["content"]
        for m in client.threads.get_state(alpha)["values"]["messages"]
        if m["type"] == "tool"
    ]
    assert worked == ["worked on: alpha sleep=3", "worked on: delta"]
    assert [r["status"] for r in client.runs.list(alpha)] == ["success", "success"]
    # Cancelling the task ended its run and the follow-up queued behind it, which never ran.
    statuses = [r["status"] for r in client.runs.list(gamma)]
    assert len(statuses) == 2 and not {"pending", "running", "success"} & set(statuses)
    assert "epsilon" not in str(client.threads.get_state(gamma)["values"])
    assert took < 45


def _gated_steps(messages: list[BaseMessage]) -> list[Any]:
    ids = [m for t in messages if isinstance(t, ToolMessage) for m in STARTED.findall(t.text)]
    task_id = [*ids, "?"][0]
    return [
        call("start_async_task", description="prod", subagent_type="approver"),
        call("pause", seconds=4),
        call("check_async_task", task_id=task_id),
        call("list_async_tasks"),
        say("it waits"),
        call("check_async_task", task_id=task_id),
        say("it is done"),
    ]


def gated_reply(agent: str, messages: list[BaseMessage]) -> Any:
    return _gated_steps(messages)[sum(isinstance(m, AIMessage) for m in messages)]


def test_a_task_that_paused_for_a_decision_is_waiting_not_done(server: Server) -> None:
    # The server ends a run that stopped at an interrupt as "success", with no answer in its
    # thread: read as finished, a deploy waiting for approval would be reported as done.
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph_sdk import get_sync_client

    spec = {**background(server.url), "name": "approver", "graph_id": "approver"}
    agent = create_deep_agent(
        ScriptedChatModel(responder=gated_reply),
        [pause],
        subagents=[spec],  # type: ignore[list-item]
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "waiting-task"}}
    result = agent.invoke({"messages": [("user", "deploy")]}, config)
    answers = [m.text for m in result["messages"] if isinstance(m, ToolMessage)]
    task_id = STARTED.findall(answers[0])[0]
    (notice,) = [m.text for m in result["messages"] if m.type == "human" and m.name == NOTICE_TOOL]
    checked, listing = answers[2:4]
    for told in (notice, checked):
        assert "finished:" not in told and "succeeded" not in told
        assert "waiting for a person's decision" in told and "'target': 'prod'" in told
        assert f"thread {task_id}" in told
    assert f"{task_id} · approver · waiting · prod" in listing
    assert result["background_tasks"][task_id]["status"] == "waiting"

    # A person answers it on the server; the agent's next check sees the run it resumed.
    client = get_sync_client(url=server.url)
    (waiting,) = client.threads.get_state(task_id)["interrupts"]
    client.runs.wait(
        task_id,
        "approver",
        command={"resume": {waiting["id"]: {"decisions": [{"type": "approve"}]}}},
    )
    result = agent.invoke({"messages": [("user", "and now?")]}, config)
    last_check = [m.text for m in result["messages"] if isinstance(m, ToolMessage)][-1]
    assert last_check.startswith(f"Task {task_id} (approver) succeeded. Result:")
    assert "deployed to prod" in last_check
    assert result["background_tasks"][task_id]["status"] == "success"


def test_a_server_that_is_down_is_an_error_naming_it() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    spec = {**background(url), "connect_timeout": 0.5}
    model = ScriptedChatModel(
        script={
            "main": [
                call("start_async_task", description="x", subagent_type="worker"),
                "gave up",
            ]
        }
    )
    result = create_deep_agent(model, subagents=[spec]).invoke({"messages": [("user", "go")]})  # type: ignore[list-item]
    (answer,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answer.status == "error"
    assert f"LangGraph server {url} cannot be reached" in answer.text


def test_unknown_background_subagent_and_local_specs_are_refused() -> None:
    model = ScriptedChatModel(
        script={"main": [call("start_async_task", description="x", subagent_type="nope"), "ok"]}
    )
    spec = background("http://127.0.0.1:9")
    result = create_deep_agent(model, subagents=[spec]).invoke({"messages": [("user", "go")]})
    (answer,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert answer.status == "error" and "Allowed: 'worker'" in answer.text
    local = {"name": "w", "description": "W.", "system_prompt": "W.", "background": True}
    with pytest.raises(ValueError, match="only a RemoteSubAgent"):
        create_deep_agent(model, subagents=[local])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="'background' must be True or False"):
        create_deep_agent(model, subagents=[{**spec, "background": "yes"}])  # type: ignore[list-item]
