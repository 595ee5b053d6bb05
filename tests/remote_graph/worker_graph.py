"""The sub-agent graph the remote tests serve with ``langgraph dev``: no API key needed.

A ``create_agent`` agent on nbagents' ``ScriptedChatModel``: its first turn calls ``work`` with
the task it was given, its second answers with what ``work`` returned. ``work`` sleeps for the
seconds a task names (``"sleep=1.5"``), so tests and benchmarks can make runs slow.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from nbagents.models import ScriptedChatModel, call, say

_SLEEP = re.compile(r"sleep=([0-9.]+)")


async def work(job: str) -> str:
    """Do the job and report on it."""
    found = _SLEEP.search(job)
    if found:
        await asyncio.sleep(float(found.group(1)))
    return f"worked on: {job}"


def _reply(agent: str, messages: list[BaseMessage]) -> Any:
    turn = sum(isinstance(m, AIMessage) for m in messages)
    if turn == 0:
        return call("work", job=messages[0].text)
    done = [m.text for m in messages if isinstance(m, ToolMessage)]
    return say(f"{agent} says: {done[-1]}")


graph = create_agent(
    ScriptedChatModel(responder=_reply, model_name="scripted-remote"),
    tools=[work],
    name="worker",
)
