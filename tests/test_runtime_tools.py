"""Tools built with ``runtime_tool``: the injected runtime arrives, sync and async, in an agent.

``runtime_tool`` gives nbagents' own tools (``task``, the file tools, the background-task
tools) a schema of the model's arguments only and methods LangChain passes nothing extra to.
These run such tools the way an agent does, under ``invoke`` and ``ainvoke``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime

from nbagents import ScriptedChatModel
from nbagents._runtime_tools import _RuntimeTool, runtime_tool
from nbagents.models import call


class Calls:
    def __init__(self) -> None:
        self.seen: list[tuple[str, int, int]] = []
        """(argument, messages in the state the runtime carried, thread)"""

    def sync(self, word: str, runtime: ToolRuntime) -> str:
        """Echo a word."""
        self.seen.append((word, len(runtime.state["messages"]), threading.get_ident()))
        return f"sync {word} {runtime.tool_call_id}"

    async def coroutine(self, word: str, runtime: ToolRuntime) -> str:
        """Echo a word."""
        self.seen.append((word, len(runtime.state["messages"]), threading.get_ident()))
        return f"async {word} {runtime.tool_call_id}"


def _agent(tool: Any) -> Any:
    model = ScriptedChatModel(script={"main": [call("echo", word="hi"), "done"]})
    return create_agent(model, [tool], name="main")


def _echo_result(result: dict[str, Any]) -> str:
    (message,) = [m for m in result["messages"] if m.type == "tool"]
    assert message.status == "success", message.content
    return str(message.content)


def test_a_sync_runtime_tool_gets_its_arguments_and_the_runtime_under_invoke() -> None:
    calls = Calls()
    tool = runtime_tool(calls.sync, name="echo", description="Echo a word.")
    assert isinstance(tool, _RuntimeTool)
    assert set(tool.tool_call_schema.model_fields) == {"word"}  # type: ignore[union-attr]
    result = _agent(tool).invoke({"messages": [("user", "go")]})
    assert _echo_result(result).startswith("sync hi call_")
    assert [(w, n) for w, n, _ in calls.seen] == [("hi", 2)]


@pytest.mark.parametrize("with_coroutine", [False, True])
def test_ainvoke_runs_the_coroutine_or_the_sync_function_off_the_event_loop(
    with_coroutine: bool,
) -> None:
    calls = Calls()
    coroutine = calls.coroutine if with_coroutine else None
    tool = runtime_tool(calls.sync, coroutine, name="echo", description="Echo a word.")
    assert isinstance(tool, _RuntimeTool)

    async def run() -> tuple[dict[str, Any], int]:
        result = await _agent(tool).ainvoke({"messages": [("user", "go")]})
        return result, threading.get_ident()

    result, loop_thread = asyncio.run(run())
    expected = "async" if with_coroutine else "sync"
    assert _echo_result(result).startswith(f"{expected} hi call_")
    ((word, messages, thread),) = calls.seen
    assert (word, messages) == ("hi", 2)
    # A sync function must not block the event loop: it runs on the loop's executor.
    assert (thread == loop_thread) is with_coroutine


def test_arun_of_a_sync_only_tool_runs_it_off_the_event_loop() -> None:
    # ``ainvoke`` of a tool with no coroutine runs ``invoke`` on a thread; ``arun`` (what
    # LangChain's agents called before, and callers still may) goes through ``_arun``.
    calls = Calls()
    tool = runtime_tool(calls.sync, name="echo", description="Echo a word.")
    runtime = ToolRuntime(
        state={"messages": ["a", "b", "c"]},
        context=None,
        config={},
        stream_writer=lambda _: None,
        tool_call_id="call_1",
        store=None,
    )

    async def run() -> tuple[Any, int]:
        return await tool.arun({"word": "hi", "runtime": runtime}), threading.get_ident()

    output, loop_thread = asyncio.run(run())
    assert output == "sync hi call_1"
    ((word, messages, thread),) = calls.seen
    assert (word, messages) == ("hi", 3)
    assert thread != loop_thread
