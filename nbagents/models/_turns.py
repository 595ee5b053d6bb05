"""The vocabulary of a script: what a scripted model says or calls on one turn."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from langchain_core.messages import AIMessage
from langchain_core.messages.tool import tool_call

from nbagents._contract import GENERAL_PURPOSE, TASK_TOOL

__all__ = ["Turn", "TurnLike", "call", "delegate", "fail", "parallel", "say", "to_turn"]


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call a scripted turn makes."""

    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class Turn:
    """One reply of a :class:`~nbagents.ScriptedChatModel`.

    ``text`` is the reply's content, ``tool_calls`` the calls it makes (several calls run in
    parallel), ``usage`` overrides the estimated token counts (``input_tokens``,
    ``output_tokens``, and as providers report them ``reasoning``, part of the output, and
    ``cache_read``, part of the input), ``latency`` overrides the model's
    simulated latency for this turn, and ``error`` makes the model raise instead of replying.
    """

    text: str = ""
    tool_calls: tuple[ToolCallSpec, ...] = ()
    usage: Mapping[str, int] | None = None
    latency: float | None = None
    error: BaseException | None = field(default=None, compare=False)

    def to_message(self, call_id_seed: str) -> AIMessage:
        """The ``AIMessage`` this turn produces; tool call ids are derived from ``call_id_seed``."""
        calls = [
            tool_call(name=spec.name, args=dict(spec.args), id=_call_id(call_id_seed, i, spec))
            for i, spec in enumerate(self.tool_calls)
        ]
        return AIMessage(content=self.text, tool_calls=calls)


TurnLike: TypeAlias = "str | Turn | AIMessage | Sequence[Turn]"


def say(text: str, *, usage: Mapping[str, int] | None = None) -> Turn:
    """A turn that answers with ``text`` and calls no tool (it ends the agent's loop)."""
    return Turn(text=text, usage=usage)


def call(tool: str, /, **args: Any) -> Turn:
    """A turn that calls the tool named ``tool`` with ``args``."""
    return Turn(tool_calls=(ToolCallSpec(tool, args),))


def delegate(description: str, subagent_type: str = GENERAL_PURPOSE) -> Turn:
    """A turn that calls ``task``: hands ``description`` to a ``subagent_type`` sub-agent."""
    return call(TASK_TOOL, description=description, subagent_type=subagent_type)


def parallel(*turns: Turn, text: str = "") -> Turn:
    """One turn that makes every tool call of ``turns`` at once, so they run in parallel."""
    return Turn(text=text, tool_calls=tuple(c for t in turns for c in t.tool_calls))


def fail(error: BaseException | str) -> Turn:
    """A turn on which the model raises ``error`` (a ``RuntimeError`` when given a string)."""
    return Turn(error=RuntimeError(error) if isinstance(error, str) else error)


def to_turn(item: Any) -> Turn:
    """Normalise a script entry: a string, a :class:`Turn`, an ``AIMessage`` or a list of turns."""
    if isinstance(item, Turn):
        return item
    if isinstance(item, str):
        return say(item)
    if isinstance(item, AIMessage):
        usage = item.usage_metadata
        return Turn(
            text=item.text,
            tool_calls=tuple(ToolCallSpec(c["name"], c["args"]) for c in item.tool_calls),
            usage={"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"]}
            if usage
            else None,
        )
    if isinstance(item, Iterable) and not isinstance(item, Mapping):
        return parallel(*(to_turn(t) for t in item))
    raise TypeError(
        f"A script entry must be a str, a Turn, an AIMessage or a list of turns, "
        f"not {type(item).__name__}: {item!r}"
    )


def _call_id(seed: str, index: int, spec: ToolCallSpec) -> str:
    payload = json.dumps([seed, index, spec.name, dict(spec.args)], sort_keys=True, default=str)
    return "call_" + hashlib.sha256(payload.encode()).hexdigest()[:16]
