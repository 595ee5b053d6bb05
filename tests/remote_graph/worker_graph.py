"""The sub-agent graph the remote tests serve with ``langgraph dev``: no API key needed.

A ``create_agent`` agent on nbagents' ``ScriptedChatModel``: its first turn calls ``work`` with
the task it was given, its second answers with what ``work`` returned. ``work`` sleeps for the
seconds a task names (``"sleep=1.5"``), so tests and benchmarks can make runs slow.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool

from nbagents.models import ScriptedChatModel, call, say

_SLEEP = re.compile(r"sleep=([0-9.]+)")


def _seconds(job: str) -> float:
    found = _SLEEP.search(job)
    return float(found.group(1)) if found else 0.0


def _check(job: str) -> None:
    if "explode" in job:
        raise ValueError(f"cannot do {job!r}")


def _work(job: str) -> str:
    _check(job)
    time.sleep(_seconds(job))
    return f"worked on: {job}"


async def _awork(job: str) -> str:
    _check(job)
    await asyncio.sleep(_seconds(job))
    return f"worked on: {job}"


# Both forms, so the same graph also runs in-process under invoke (the benchmark's baseline);
# the server runs the async one.
work = StructuredTool.from_function(
    func=_work, coroutine=_awork, name="work", description="Do the job and report on it."
)


def _reply(agent: str, messages: list[BaseMessage]) -> Any:
    # Each user message (the task, or a follow-up on the same thread) is one job.
    asked = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    since = messages[asked + 1 :]
    if not any(isinstance(m, AIMessage) for m in since):
        return call("work", job=messages[asked].text)
    done = [m.text for m in since if isinstance(m, ToolMessage)]
    return say(f"{agent} says: {done[-1]}")


graph = create_agent(
    ScriptedChatModel(responder=_reply, model_name="scripted-remote"),
    tools=[work],
    name="worker",
)
