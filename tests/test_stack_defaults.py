"""create_deep_agent's default stack: summarization that keeps what it folds, memory files on the
main agent only, dangling tool calls patched; all on the embedded scripted model."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.memory import InMemorySaver
from support.long_task import STEPS, ContextOverflow, LongTask, long_task_model, step

from nbagents import create_deep_agent
from nbagents.backends import FilesystemBackend, StateBackend, WriteResult
from nbagents.middleware import SummarizationMiddleware
from nbagents.models import ScriptedChatModel, Turn, call, delegate, say


def _history(files: dict[str, Any]) -> str:
    texts = [f["content"] for path, f in files.items() if path.startswith("/conversation_history/")]
    assert len(texts) == 1, sorted(files)
    content = texts[0]
    return content if isinstance(content, str) else "\n".join(content)


def _all_steps_kept(history: str, messages: Sequence[BaseMessage]) -> None:
    """Every step's result is in the saved history or still in the conversation."""
    remaining = " ".join(m.text for m in messages)
    for n in range(1, STEPS + 1):
        marker = f"result of step {n}:"
        assert marker in history or marker in remaining, f"step {n} was lost"


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_a_long_run_summarizes_and_keeps_what_it_folded(mode: str) -> None:
    replies = LongTask(worker="main")
    agent = create_deep_agent(long_task_model(replies), tools=[step])
    inputs = {"messages": [HumanMessage("Run the long task.")]}
    result = agent.invoke(inputs) if mode == "invoke" else asyncio.run(agent.ainvoke(inputs))

    assert result["messages"][-1].text == f"All {STEPS} steps done."
    assert replies.summaries >= 2
    summary = result["messages"][0]
    assert summary.additional_kwargs["lc_source"] == "summarization"
    path = re.search(r"(/conversation_history/\S+\.md)", summary.text)
    assert path is not None and path.group(1) in result["files"]
    _all_steps_kept(_history(result["files"]), result["messages"])


def test_without_summarization_the_same_run_overflows() -> None:
    agent = create_deep_agent(
        long_task_model(LongTask(worker="main")),
        tools=[step],
        excluded_middleware=["SummarizationMiddleware"],
    )
    with pytest.raises(ContextOverflow):
        agent.invoke({"messages": [HumanMessage("Run the long task.")]})


def test_the_history_goes_to_the_given_backend(tmp_path: Path) -> None:
    agent = create_deep_agent(
        long_task_model(LongTask(worker="main")),
        tools=[step],
        backend=FilesystemBackend(root_dir=tmp_path, virtual_mode=True),
    )
    result = agent.invoke({"messages": [HumanMessage("Run the long task.")]})

    (saved,) = (tmp_path / "conversation_history").iterdir()
    assert f"/conversation_history/{saved.name}" in result["messages"][0].text
    _all_steps_kept(saved.read_text(), result["messages"])


def test_a_subagent_summarizes_its_own_context() -> None:
    replies = LongTask(worker="general-purpose")
    agent = create_deep_agent(long_task_model(replies), tools=[step])
    result = agent.invoke({"messages": [HumanMessage("Please run the long task.")]})

    assert result["messages"][-1].text == "The long task is done."
    # The main agent's own conversation was never folded; the sub-agent's was, into a file
    # that came back with its files.
    assert not any(m.additional_kwargs.get("lc_source") for m in result["messages"])
    assert replies.summaries >= 2
    worker_calls = replies.seen["general-purpose"]
    assert any(m.additional_kwargs.get("lc_source") for m in worker_calls[-1])
    _all_steps_kept(_history(result["files"]), worker_calls[-1])


def test_a_replacement_summarization_reaches_the_general_purpose_subagent() -> None:
    replies = LongTask(worker="general-purpose")
    model = long_task_model(replies)
    never = SummarizationMiddleware(model, trigger=("tokens", 10**9))
    agent = create_deep_agent(model, tools=[step], middleware=[never], on_subagent_error="raise")
    with pytest.raises(ContextOverflow):
        agent.invoke({"messages": [HumanMessage("Please run the long task.")]})


MEMORY = "The user prefers answers in French."


def test_memory_is_loaded_into_the_main_agent_and_not_into_subagents() -> None:
    seen: dict[str, list[BaseMessage]] = {}

    def replies(agent: str, messages: list[BaseMessage]) -> Turn:
        seen.setdefault(agent, messages)
        if agent == "main" and not any(isinstance(m, ToolMessage) for m in messages):
            return delegate("Look something up.")
        return say("Fait.")

    agent = create_deep_agent(
        ScriptedChatModel(script={}, responder=replies), memory=["/AGENTS.md", "/missing.md"]
    )
    result = agent.invoke(
        {
            "messages": [HumanMessage("Hello")],
            "files": {"/AGENTS.md": {"content": MEMORY, "encoding": "utf-8"}},
        }
    )

    assert result["messages"][-1].text == "Fait."
    main_prompt = seen["main"][0]
    assert isinstance(main_prompt, SystemMessage) and MEMORY in main_prompt.text
    assert "/AGENTS.md" in main_prompt.text
    assert not any(MEMORY in m.text for m in seen["general-purpose"])
    assert "memory_contents" not in result  # private, as upstream's


def test_a_dangling_tool_call_is_patched_before_the_next_model_call() -> None:
    sent: list[list[BaseMessage]] = []

    def replies(agent: str, messages: list[BaseMessage]) -> Turn:
        sent.append(messages)
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        for m in messages:  # as a provider does: a tool call without its result is refused
            for c in getattr(m, "tool_calls", None) or []:
                if c["id"] not in answered:
                    raise ValueError(f"tool call {c['id']} has no result")
        if isinstance(messages[-1], HumanMessage) and "step 1" in messages[-1].text:
            return call("step", n=1)
        return say("Carrying on.")

    agent = create_deep_agent(
        ScriptedChatModel(script={}, responder=replies),
        tools=[step],
        checkpointer=InMemorySaver(),
        interrupt_on={"step": True},
    )
    thread = {"configurable": {"thread_id": "t"}}
    paused = agent.invoke({"messages": [HumanMessage("Run step 1.")]}, thread)
    assert paused["__interrupt__"]  # stopped between the tool call and its result

    # The user moves on with a new message instead of answering the approval.
    result = agent.invoke({"messages": [HumanMessage("Never mind, go on.")]}, thread)

    assert result["messages"][-1].text == "Carrying on."
    call_id = next(m for m in result["messages"] if isinstance(m, AIMessage)).tool_calls[0]["id"]
    patch = next(m for m in sent[-1] if isinstance(m, ToolMessage))
    assert patch.tool_call_id == call_id and patch.status == "error"
    assert "has no result" in patch.text


def test_without_the_patch_the_next_run_fails() -> None:
    def replies(agent: str, messages: list[BaseMessage]) -> Turn:
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        if any(
            c["id"] not in answered for m in messages for c in getattr(m, "tool_calls", None) or []
        ):
            raise ValueError("a tool call has no result")
        return say("Carrying on.")

    agent = create_deep_agent(
        ScriptedChatModel(script={}, responder=replies),
        tools=[step],
        excluded_middleware=["PatchToolCallsMiddleware"],
    )
    dangling = AIMessage("", tool_calls=[{"name": "step", "args": {"n": 1}, "id": "c1"}])
    with pytest.raises(ValueError, match="no result"):
        agent.invoke({"messages": [HumanMessage("Run step 1."), dangling, HumanMessage("Go on.")]})


class _Full(StateBackend):
    """A backend that refuses every write."""

    def write(self, file_path: str, content: str) -> WriteResult:
        return WriteResult(error=f"{file_path}: no space left")


def test_a_history_that_cannot_be_saved_is_said_so_and_the_run_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = create_deep_agent(
        long_task_model(LongTask(worker="main")), tools=[step], backend=_Full()
    )
    result = agent.invoke({"messages": [HumanMessage("Run the long task.")]})

    assert result["messages"][-1].text == f"All {STEPS} steps done."
    assert "could not be saved" in result["messages"][0].text
    assert "no space left" in caplog.text
    assert not any(p.startswith("/conversation_history/") for p in result.get("files") or {})
