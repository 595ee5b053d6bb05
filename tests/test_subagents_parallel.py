"""Parallel ``task`` calls: each sub-agent gets its own answer, and all of them really overlap."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from typing import Any, ClassVar, NotRequired

import pytest
from langchain.agents import AgentState
from langchain.agents.middleware import AgentMiddleware
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.graph.message import add_messages
from pydantic import BaseModel, PrivateAttr, model_serializer

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents import _gc as gc_policy
from nbagents.models import call, delegate, parallel, say
from nbagents.subagents._messages import BatchedMessages

RESEARCHER = {"name": "researcher", "description": "Researches.", "system_prompt": "Research."}


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


async def test_three_parallel_subagents_of_one_type_each_get_their_own_answer(
    run_agent: Any, model_calls: Any
) -> None:
    topics = ["cats", "dogs", "owls"]
    model = ScriptedChatModel(
        script={
            "main": [parallel(*(delegate(f"Research {t}", "researcher") for t in topics)), "ok"],
            "researcher": {
                "Research cats": [delegate("Sleep habits of cats", "researcher"), "Cats: sleepy."],
                "Research dogs": [say("Dogs: loyal.")],
                "Research owls": [say("Owls: nocturnal.")],
                "Sleep habits of cats": ["16 hours a day."],
            },
        },
        latency=0.05,
    )
    agent = create_deep_agent(model, subagents=[RESEARCHER])
    result = await run_agent(agent, {"messages": [("user", "go")]})
    answers = {m.artifact["description"]: m.text for m in tool_messages(result)}
    assert answers == {
        "Research cats": "Cats: sleepy.",
        "Research dogs": "Dogs: loyal.",
        "Research owls": "Owls: nocturnal.",
    }
    assert len(model_calls.of("researcher")) == 5


N = 50


class GatedModel(ScriptedChatModel):
    """Holds every ``worker`` model call at a barrier until all N are running at once.

    If the calls do not overlap, the barrier times out and the sub-agents fail; the peak of
    simultaneous calls is recorded either way.
    """

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _running: int = PrivateAttr(default=0)
    _thread_barrier: threading.Barrier = PrivateAttr(
        default_factory=lambda: threading.Barrier(N, timeout=30)
    )
    _async_barrier: asyncio.Barrier | None = PrivateAttr(default=None)
    peak: int = 0

    def _enter(self) -> None:
        with self._lock:
            self._running += 1
            self.peak = max(self.peak, self._running)

    def _leave(self) -> None:
        with self._lock:
            self._running -= 1

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if run_manager and run_manager.metadata.get("lc_agent_name") == "worker":
            self._enter()
            try:
                self._thread_barrier.wait()
            finally:
                self._leave()
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if run_manager and run_manager.metadata.get("lc_agent_name") == "worker":
            if self._async_barrier is None:
                self._async_barrier = asyncio.Barrier(N)
            self._enter()
            try:
                await asyncio.wait_for(self._async_barrier.wait(), timeout=30)
            finally:
                self._leave()
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


async def test_fifty_parallel_subagents_all_run_at_once(run_agent: Any) -> None:
    # LangGraph's default pool would run min(32, cpus + 4) of them at a time under invoke.
    model = GatedModel(
        script={
            "main": [parallel(*(delegate(f"job {i}", "worker") for i in range(N))), "all done"],
            "worker": ["done"],
        }
    )
    worker = {"name": "worker", "description": "Does a job.", "system_prompt": "Work."}
    agent = create_deep_agent(model, subagents=[worker])
    result = await run_agent(agent, {"messages": [("user", "go")]})
    assert model.peak == N
    answers = tool_messages(result)
    assert [m.status for m in answers] == ["success"] * N
    assert [m.artifact["description"] for m in answers] == [f"job {i}" for i in range(N)]
    assert result["messages"][-1].text == "all done"


async def test_sync_tools_of_fifty_subagents_run_at_once_under_ainvoke() -> None:
    # LangChain runs a sync tool on the event loop's default executor, min(32, cpus + 4)
    # threads; the sub-agents nbagents builds run theirs on a pool as large as the fan-out.
    barrier = threading.Barrier(N, timeout=30)
    lock = threading.Lock()
    running = {"now": 0, "peak": 0}

    @tool
    def fetch(url: str) -> str:
        """Fetch a page (a sync tool)."""
        with lock:
            running["now"] += 1
            running["peak"] = max(running["peak"], running["now"])
        try:
            barrier.wait()
        finally:
            with lock:
                running["now"] -= 1
        return f"page {url}"

    model = ScriptedChatModel(
        script={
            "main": [parallel(*(delegate(f"job {i}", "worker") for i in range(N))), "all done"],
            "worker": [call("fetch", url="u"), "done"],
        }
    )
    worker = {
        "name": "worker",
        "description": "Fetches.",
        "system_prompt": "Fetch.",
        "tools": [fetch],
    }
    agent = create_deep_agent(model, subagents=[worker])
    result = await agent.ainvoke({"messages": [("user", "go")]})
    assert running["peak"] == N
    assert [m.status for m in tool_messages(result)] == ["success"] * N
    # The tool given in the spec is untouched: it is still sync-only.
    assert fetch.coroutine is None


class _Probe(BaseModel):
    """A state value that counts how often it is serialized."""

    dumps: ClassVar[list[int]] = []

    @model_serializer
    def _dump(self) -> dict[str, Any]:
        _Probe.dumps.append(1)
        return {}


class _ProbedState(AgentState[Any]):
    probe: NotRequired[Any]


async def test_a_task_call_does_not_serialize_the_parent_state(run_agent: Any) -> None:
    # LangChain validates a tool's arguments with its schema and dumps the result; a schema
    # holding the injected runtime dumped the whole state (every message of the conversation)
    # on each of N parallel calls, O(N) each.
    _Probe.dumps.clear()
    model = ScriptedChatModel(
        script={
            "main": [parallel(*(delegate(f"job {i}", "worker") for i in range(3))), "done"],
            "worker": ["ok"],
        }
    )
    worker = {"name": "worker", "description": "Works.", "system_prompt": "Work."}
    agent = create_deep_agent(model, subagents=[worker], state_schema=_ProbedState)
    result = await run_agent(agent, {"messages": [("user", "go")], "probe": _Probe()})
    assert [m.text for m in tool_messages(result)] == ["ok"] * 3
    assert _Probe.dumps == []


def test_full_garbage_collections_wait_while_a_wide_fan_out_runs() -> None:
    # Each full collection walks every object of every sub-agent in flight: at 2,000-way
    # they cost more than the rest of the run's garbage collection together.
    before = gc.get_threshold()
    with contextlib.ExitStack() as running:
        for _ in range(gc_policy.WIDE - 1):
            running.enter_context(gc_policy.in_flight())
        assert gc.get_threshold() == before  # a narrow run leaves the collector alone
        running.enter_context(gc_policy.in_flight())
        first, second, third = gc.get_threshold()
        assert (first, second) == before[:2] and third > before[2]
    assert gc.get_threshold() == before


def test_the_deferral_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(gc_policy.ENV, "0")
    before = gc.get_threshold()
    with contextlib.ExitStack() as running:
        for _ in range(gc_policy.WIDE + 1):
            running.enter_context(gc_policy.in_flight())
        assert gc.get_threshold() == before
    assert gc.get_threshold() == before


def test_a_threshold_set_during_a_wide_fan_out_is_kept() -> None:
    before = gc.get_threshold()
    try:
        with contextlib.ExitStack() as running:
            for _ in range(gc_policy.WIDE):
                running.enter_context(gc_policy.in_flight())
            gc.set_threshold(before[0], before[1], 7)
        assert gc.get_threshold() == (before[0], before[1], 7)
    finally:
        gc.set_threshold(*before)


def test_a_sub_agent_sees_the_same_system_prompt_with_or_without_a_per_call_hook() -> None:
    # Without other middleware the task section is written into a built sub-agent's system
    # prompt (no model-call hook to wrap per call); with a middleware that wraps model calls
    # the section is still appended per call. Both give the model the same text.
    class Passing(AgentMiddleware[Any, Any]):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request)

    seen: dict[str, list[str]] = {}

    def prompts_of(middleware: list[AgentMiddleware[Any, Any]], key: str) -> None:
        def reply(agent: str, messages: list[BaseMessage]) -> str:
            seen.setdefault(key, []).append(str(messages[0].content))
            return "done"

        model = ScriptedChatModel(
            script={"main": [delegate("job", "worker"), "ok"]}, responder=reply
        )
        worker = {
            "name": "worker",
            "description": "Works.",
            "system_prompt": "Work.",
            "middleware": middleware,
        }
        create_deep_agent(model, subagents=[worker]).invoke({"messages": [("user", "go")]})

    prompts_of([], "static")
    prompts_of([Passing()], "per call")
    assert seen["static"] == seen["per call"]
    assert seen["static"][0].startswith("Work.\n\n") and "`task`" in seen["static"][0]


def _merged(channel_type: type[BinaryOperatorAggregate], writes: list[Any]) -> list[Any]:
    channel = channel_type(list, add_messages)
    channel.update([[HumanMessage("go", id="h")]])
    channel.update(writes)
    return [(type(m).__name__, m.id, m.text) for m in channel.get()]


def test_a_step_of_message_writes_merges_as_langgraph_merges_it_one_by_one() -> None:
    # N parallel task calls ending in one step were merged one write at a time, each copying
    # and indexing the whole list: O(N^2). Batched, the result must be the same list.
    writes: list[Any] = [
        [ToolMessage("one", tool_call_id="a", id="t1")],
        ToolMessage("two", tool_call_id="b", id="t2"),  # a single message, not a list
        [AIMessage("replaces go", id="h"), ToolMessage("three", tool_call_id="c", id="t3")],
        [ToolMessage("two again", tool_call_id="b", id="t2")],  # replaces an earlier write
    ]
    assert _merged(BatchedMessages, writes) == _merged(BinaryOperatorAggregate, writes)
    removal = [[ToolMessage("one", tool_call_id="a", id="t1")], [RemoveMessage(id="h")]]
    assert _merged(BatchedMessages, removal) == _merged(BinaryOperatorAggregate, removal)


def test_the_agents_nbagents_builds_merge_a_step_of_messages_at_once() -> None:
    agent = create_deep_agent(ScriptedChatModel(script={}), subagents=[RESEARCHER])
    assert type(agent.channels["messages"]) is BatchedMessages
    assert (
        type(agent.subagent_registry.graphs["researcher"].channels["messages"]) is BatchedMessages
    )
