"""A long task on the scripted model: its tool results together are several times the model's
context, and the model refuses a conversation larger than its context, as a provider does."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool

from nbagents.models import ScriptedChatModel, Turn, call, delegate, say

CONTEXT = 2_000
"""The scripted model's context size, in approximate tokens (its profile's max_input_tokens)."""
STEPS = 30
"""Steps of the long task: their results together are several times the context."""


class ContextOverflow(RuntimeError):
    """What a provider answers to a conversation larger than the model's context."""


@tool
def step(n: int) -> str:
    """Run step n of the long task."""
    return f"result of step {n}: " + f"measurement {n} " * 40


def conversation(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    return [m for m in messages if not isinstance(m, SystemMessage)]


def last_step(messages: Sequence[BaseMessage]) -> int:
    for m in reversed(messages):
        if isinstance(m, ToolMessage) and (found := re.match(r"result of step (\d+)", m.text)):
            return int(found.group(1))
    return 0


class LongTask:
    """Replies of a model that works through STEPS steps and refuses an overflowing context."""

    def __init__(self, worker: str) -> None:
        self.worker = worker
        self.summaries = 0
        self.seen: dict[str, list[list[BaseMessage]]] = {}

    def __call__(self, agent: str, messages: list[BaseMessage]) -> Turn:
        if len(messages) == 1 and "<messages>" in messages[0].text:
            self.summaries += 1  # the summarization call: its prompt holds the folded messages
            return say(f"Summary {self.summaries}: steps up to {last_step_in(messages[0].text)}")
        self.seen.setdefault(agent, []).append(messages)
        if count_tokens_approximately(conversation(messages)) > CONTEXT:
            raise ContextOverflow(f"{agent}: the conversation exceeds {CONTEXT} tokens")
        if agent != self.worker:  # the main agent delegating the long task
            done = any(isinstance(m, ToolMessage) for m in messages)
            return say("The long task is done.") if done else delegate("Run the long task.")
        n = last_step(messages)
        return call("step", n=n + 1) if n < STEPS else say(f"All {STEPS} steps done.")


def last_step_in(text: str) -> int:
    found = re.findall(r"result of step (\d+)", text)
    return max(map(int, found)) if found else 0


def long_task_model(replies: LongTask) -> ScriptedChatModel:
    return ScriptedChatModel(script={}, responder=replies, profile={"max_input_tokens": CONTEXT})
