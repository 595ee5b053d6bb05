"""A state backend's files belong to one conversation, however the backend is passed.

deepagents users write ``create_deep_agent(model, backend=StateBackend(), checkpointer=...)`` and
serve many threads (users) from that one agent. The files of thread ``t1`` must never be seen in
``t2``: not by the main agent, not by a sub-agent. Each test runs under ``invoke`` and
``ainvoke``, for each way of passing the backend: the instance, the class, a factory, and a
composite whose default is a state backend.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.backends import CompositeBackend, DiskBackend, StateBackend
from nbagents.models import call, delegate, parallel, say

SECRET = "t1's secret"

Backends = Callable[[Path], Any]
WAYS: dict[str, Backends] = {
    "instance": lambda _: StateBackend(),
    "class": lambda _: StateBackend,
    "factory": lambda _: lambda runtime: StateBackend(runtime),
    "composite": lambda tmp: CompositeBackend(StateBackend(), {"/shared/": DiskBackend(tmp)}),
}


@pytest.fixture(params=list(WAYS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    return WAYS[request.param](tmp_path)


def tool_texts(result: dict[str, Any]) -> list[str]:
    return [m.text for m in result["messages"] if isinstance(m, ToolMessage)]


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


async def test_two_threads_never_see_each_others_files(run_agent: Any, backend: Any) -> None:
    model = ScriptedChatModel(
        script={
            "main": {
                "write": [
                    call("write_file", file_path="/notes.md", content=SECRET),
                    "saved",
                    # t1's next turn, on the same conversation
                    call("read_file", file_path="/notes.md"),
                    call("ls", path="/"),
                    "read",
                ],
                "read": [call("read_file", file_path="/notes.md"), call("ls", path="/"), "read"],
            }
        }
    )
    agent = create_deep_agent(model, backend=backend, checkpointer=InMemorySaver())

    first = await run_agent(agent, {"messages": [HumanMessage("write")]}, thread("t1"))
    second = await run_agent(agent, {"messages": [HumanMessage("read")]}, thread("t2"))

    assert first["files"]["/notes.md"]["content"] == SECRET
    assert "/notes.md" not in second.get("files", {})
    read, listing = tool_texts(second)
    assert SECRET not in read and "not found" in read
    assert "/notes.md" not in listing
    # ...and t1 still has its file on its next turn (the checkpointer keeps it with the thread).
    again = await run_agent(agent, {"messages": [HumanMessage("read")]}, thread("t1"))
    assert SECRET in tool_texts(again)[-2]


async def test_a_delete_in_one_thread_leaves_the_other_threads_files(
    run_agent: Any, backend: Any
) -> None:
    read = call("read_file", file_path="/notes.md")
    model = ScriptedChatModel(
        script={
            "main": {
                # Keyed by each thread's first message; one turn pair per run of that thread.
                "t1": [read, "read", call("delete", file_path="/notes.md"), "deleted", read, "?"],
                "t2": [read, "read", read, "still there"],
            }
        }
    )
    agent = create_deep_agent(model, backend=backend, checkpointer=InMemorySaver())
    given = {"/notes.md": {"content": SECRET, "encoding": "utf-8"}}

    async def turn(name: str, files: Any = None) -> dict[str, Any]:
        start = {"messages": [HumanMessage(name)], **({"files": files} if files else {})}
        result: dict[str, Any] = await run_agent(agent, start, thread(name))
        return result

    for name in ("t1", "t2"):
        await turn(name, given)
    deleted = await turn("t1")
    assert tool_texts(deleted)[-1] == "Deleted /notes.md."
    assert "/notes.md" not in deleted["files"]

    kept = await turn("t2")
    assert kept["files"]["/notes.md"]["content"] == SECRET
    assert tool_texts(kept)[-1] == f"1  {SECRET}"
    assert "not found" in tool_texts(await turn("t1"))[-1]


async def test_a_thread_sees_the_files_of_its_input(run_agent: Any, backend: Any) -> None:
    model = ScriptedChatModel(script={"main": [call("read_file", file_path="/in.md"), "ok"]})
    agent = create_deep_agent(model, backend=backend, checkpointer=InMemorySaver())
    given = {"/in.md": {"content": "given line", "encoding": "utf-8"}}

    result = await run_agent(
        agent, {"messages": [HumanMessage("go")], "files": given}, thread("t1")
    )
    other = await run_agent(agent, {"messages": [HumanMessage("go")]}, thread("t2"))

    assert tool_texts(result) == ["1  given line"]
    assert "not found" in tool_texts(other)[0]


async def test_subagents_see_their_parents_files_only(run_agent: Any, backend: Any) -> None:
    model = ScriptedChatModel(
        script={
            "main": {
                "write": [delegate("keep this", "general-purpose"), "ok"],
                "read": [delegate("look", "general-purpose"), "ok"],
            },
            "general-purpose": {
                "keep this": [call("write_file", file_path="/sub.md", content=SECRET), "kept"],
                "look": [call("read_file", file_path="/sub.md"), "looked"],
            },
        }
    )
    agent = create_deep_agent(model, backend=backend, checkpointer=InMemorySaver())

    first = await run_agent(agent, {"messages": [HumanMessage("write")]}, thread("t1"))
    assert first["files"]["/sub.md"]["content"] == SECRET  # handed back to the parent

    second = await run_agent(agent, {"messages": [HumanMessage("read")]}, thread("t2"))
    assert "/sub.md" not in second.get("files", {})
    (task_result,) = tool_texts(second)
    assert SECRET not in task_result
    # The sub-agent of t2 was told the file does not exist (its reply is its last message).
    assert task_result == "looked"


async def test_parallel_subagents_write_different_files_and_all_land(
    run_agent: Any, backend: Any
) -> None:
    model = ScriptedChatModel(
        script={
            "main": [parallel(*(delegate(f"file {n}", "general-purpose") for n in range(4))), "ok"],
            "general-purpose": {
                f"file {n}": [call("write_file", file_path=f"/out/{n}.md", content=str(n)), "done"]
                for n in range(4)
            },
        }
    )
    agent = create_deep_agent(model, backend=backend, checkpointer=InMemorySaver())
    result = await run_agent(agent, {"messages": [HumanMessage("go")]}, thread("t1"))
    assert {p: f["content"] for p, f in result["files"].items()} == {
        f"/out/{n}.md": str(n) for n in range(4)
    }


def test_without_a_checkpointer_each_run_starts_with_no_files() -> None:
    model = ScriptedChatModel(
        script={
            "main": {
                "write": [call("write_file", file_path="/a.md", content=SECRET), "ok"],
                "read": [call("read_file", file_path="/a.md"), "ok"],
            }
        }
    )
    agent = create_deep_agent(model, backend=StateBackend())
    agent.invoke({"messages": [HumanMessage("write")]})
    result = agent.invoke({"messages": [HumanMessage("read")]})
    assert SECRET not in tool_texts(result)[0]


@pytest.mark.parametrize(
    ("backend", "message"),
    [
        ("files", "must be a file backend"),
        ({"/a.md": "x"}, "must be a file backend"),
        (DiskBackend, "needs arguments"),
        (int, "not a file backend"),
    ],
)
def test_a_backend_that_cannot_work_fails_when_the_agent_is_built(
    backend: Any, message: str
) -> None:
    model = ScriptedChatModel(script={"main": [say("ok")]})
    with pytest.raises(TypeError, match=message):
        create_deep_agent(model, backend=backend)


def test_state_backend_takes_no_files_of_its_own() -> None:
    with pytest.raises(TypeError, match="Pass them in the agent's input"):
        StateBackend({"/a.md": {"content": "x", "encoding": "utf-8"}})  # type: ignore[arg-type]


def test_state_backend_outside_a_run_says_where_it_works() -> None:
    with pytest.raises(RuntimeError, match="inside a LangGraph graph execution"):
        StateBackend().read("/a.md")


def test_the_config_keys_the_state_backend_reads_are_langgraphs() -> None:
    from langgraph._internal import _constants

    from nbagents.backends import _state

    assert _state._READ == _constants.CONFIG_KEY_READ
    assert _state._SEND == _constants.CONFIG_KEY_SEND
