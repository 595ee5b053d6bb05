"""What the tracer reads out of callback payloads: names, model results, tool outputs, spawns.

Pure functions over what LangChain hands a callback handler; the tracer decides where the
results go.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from nbagents._contract import (
    GENERAL_PURPOSE,
    SKILLS_ERRORS_KEY,
    SKILLS_METADATA_KEY,
    read_remote,
    read_spawn,
    skill_of_path,
)
from nbagents._tokens import TokenUsage
from nbagents.tracing._attributes import SpanAttributes
from nbagents.tracing._runs import AgentFrame, RunFrame
from nbagents.tracing._statediff import infer_diff, node_updates
from nbagents.tracing.messages import call_parts
from nbagents.tracing.model import SpanStatus

__all__ = [
    "ModelResult",
    "error_text",
    "model_request",
    "model_result",
    "offered_skills",
    "returned_keys",
    "run_name",
    "skill_arguments",
    "subagent_attributes",
    "task_arguments",
    "tool_call_of",
    "tool_outcome",
]

ERROR_CHARS = 20_000


def run_name(serialized: Mapping[str, Any] | None, kwargs: Mapping[str, Any], default: str) -> str:
    name = kwargs.get("name")
    if name:
        return str(name)
    if serialized:
        if serialized.get("name"):
            return str(serialized["name"])
        ident = serialized.get("id")
        if isinstance(ident, list) and ident:
            return str(ident[-1])
    return default


def model_request(md: Mapping[str, Any], kwargs: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """The model name and the names of the bound tools, from a model run's start."""
    params: Mapping[str, Any] = kwargs.get("invocation_params") or {}
    model = md.get("ls_model_name") or _first(params, "model", "model_name", "model_id")
    tools = [_tool_name(t) for t in params.get("tools") or ()]
    return (str(model) if model else None), tools


@dataclass
class ModelResult:
    """What a model run produced."""

    produced: Any
    """The message (or text), or the list of them when there were several."""
    usage: TokenUsage
    model: str | None
    calls: list[tuple[str, int]] = field(default_factory=list)
    """(tool call id, position among the message's tool calls)."""


def model_result(response: LLMResult) -> ModelResult:
    messages: list[BaseMessage] = []
    texts: list[str] = []
    for generations in response.generations:
        for generation in generations:
            if isinstance(generation, ChatGeneration):
                messages.append(generation.message)
            else:
                texts.append(generation.text)
    usage = TokenUsage.from_messages(messages)
    model: str | None = None
    calls: list[tuple[str, int]] = []
    for message in messages:
        meta = message.response_metadata or {}
        model = model or _first(meta, "model_name", "model", "model_id")
        calls.extend(
            (str(c.get("id")), i)
            for i, c in enumerate(getattr(message, "tool_calls", None) or [])
            if c.get("id")
        )
    llm_output = response.llm_output or {}
    if not usage:
        usage = _legacy_usage(llm_output.get("token_usage") or llm_output.get("usage"))
    model = model or _first(llm_output, "model_name", "model", "model_id")
    produced: list[Any] = messages or texts
    one = produced[0] if len(produced) == 1 else produced
    return ModelResult(one, usage, str(model) if model else None, calls)


def _legacy_usage(usage: Any) -> TokenUsage:
    """Token counts from ``llm_output`` of providers that report no ``usage_metadata``."""
    if not isinstance(usage, Mapping):
        return TokenUsage()
    inp = int(usage.get("prompt_tokens", usage.get("input_tokens", 0)) or 0)
    out = int(usage.get("completion_tokens", usage.get("output_tokens", 0)) or 0)
    total = int(usage.get("total_tokens", inp + out) or 0)
    return TokenUsage(input=inp, output=out, total=total)


def _first(data: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = data.get(key)
        if value:
            return value
    return None


def _tool_name(tool: Any) -> str:
    """A bound tool's name: a tool object's, or a schema's in LangChain's or OpenAI's shape."""
    name = call_parts(tool)[0] if isinstance(tool, Mapping) else getattr(tool, "name", None)
    return str(name or "?")


def task_arguments(inputs: Any) -> SpanAttributes:
    """A ``task`` call's brief and sub-agent type (the default type when the call named none)."""
    given = inputs if isinstance(inputs, Mapping) else {}
    return {
        "description": str(given.get("description", "")),
        "subagent_type": str(given.get("subagent_type") or GENERAL_PURPOSE),
    }


def skill_arguments(inputs: Any) -> SpanAttributes:
    """Which skill a ``SKILL.md`` read opens, and the path read."""
    path = inputs.get("file_path") if isinstance(inputs, Mapping) else None
    return {"skill": skill_of_path(path) or "", "path": str(path or "")}


def offered_skills(state: Any) -> SpanAttributes | None:
    """The skills a state update offers an agent, and the warnings of those that failed to load.

    ``None`` when the update does not say (the skills middleware sets both keys together).
    """
    for update in node_updates(state):
        skills = update.get(SKILLS_METADATA_KEY)
        if not isinstance(skills, list | tuple):
            continue
        names = [str(s["name"]) for s in skills if isinstance(s, Mapping) and "name" in s]
        warnings = update.get(SKILLS_ERRORS_KEY)
        warned = warnings if isinstance(warnings, list | tuple) else ()
        return {"skills_offered": names, "skill_warnings": [str(w) for w in warned]}
    return None


def tool_call_of(inputs: Any) -> str | None:
    """The tool call id a LangGraph ``tools`` node run was sent (one ``Send`` per call)."""
    item = inputs
    if type(item) is not dict and isinstance(item, list | tuple) and len(item) == 1:
        item = item[0]
    if type(item) is dict or isinstance(item, Mapping):
        if item.get("__type") == "tool_call_with_context":
            item = item.get("tool_call")
        if isinstance(item, Mapping) and item.get("type") == "tool_call" and item.get("id"):
            return str(item["id"])
    return None


def tool_outcome(output: Any, call_id: Any) -> tuple[SpanStatus, str | None]:
    """Whether a tool run succeeded (``ok``, ``error`` or ``limit``), from the ToolMessage it
    produced (alone or in a Command), and that message's text, if it produced one."""
    message = _tool_message(output, call_id)
    text = str(message.text) if message is not None else None
    if message is not None and message.status == "error":
        artifact = message.artifact
        limited = isinstance(artifact, Mapping) and artifact.get("status") == "limit"
        return ("limit" if limited else "error"), text
    return "ok", text


def returned_keys(output: Any) -> list[str]:
    """The state keys a tool's ``Command`` updates, ``messages`` aside."""
    keys = {k for update in node_updates(output) for k in update if k != "messages"}
    return sorted(keys)


def _tool_message(output: Any, call_id: Any) -> ToolMessage | None:
    if isinstance(output, ToolMessage):
        return output
    messages: list[Any] = []
    for update in node_updates(output):
        found = update.get("messages")
        messages.extend(found if isinstance(found, list | tuple) else [found])
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    for message in tool_messages:
        if call_id and message.tool_call_id == call_id:
            return message
    return tool_messages[-1] if tool_messages else None


def subagent_attributes(
    agent: AgentFrame, md: Mapping[str, Any], parent: RunFrame, inputs: Any
) -> SpanAttributes:
    """A sub-agent span's brief and state diff: recorded by nbagents' ``task`` tool, or inferred.

    For other ``task`` tools (upstream deepagents) the diff is inferred: the child's input keys
    against the parent's state at the call, tracked from the parent graph's input and node
    outputs (``attributes["state_diff"] == "inferred"``).
    """
    task = parent if parent.span.kind == "task" else None
    spawn = read_spawn(md)
    attrs: SpanAttributes = {
        "description": "",
        "parent_agent": parent.agent.name,
        "tool_call_id": agent.spawn_id,
    }
    if task is not None:
        task_attrs = task.span.typed_attributes()
        attrs["description"] = task_attrs.get("description", "")
        attrs["subagent_type"] = task_attrs.get("subagent_type", agent.name)
    if spawn is not None and spawn["tool_call_id"] == agent.spawn_id:
        # nbagents' task tool says exactly what it withheld and passed.
        attrs["description"] = spawn["description"]
        attrs["withheld"] = spawn["withheld"]
        attrs["passed"] = spawn["passed"]
        if spawn["response_format"] is not None:
            attrs["response_format"] = spawn["response_format"]
    else:
        withheld, passed = infer_diff(
            parent.agent.state_input, parent.agent.updates, parent.step, inputs
        )
        attrs["withheld"], attrs["passed"] = withheld, passed
        attrs["state_diff"] = "inferred"
    remote = read_remote(md)
    if remote is not None:
        attrs["remote"] = dict(remote)
    return attrs


def error_text(error: BaseException) -> str:
    if isinstance(error, KeyboardInterrupt):
        return "interrupted by the user (KeyboardInterrupt)"
    if isinstance(error, asyncio.CancelledError):
        # Its message is often an internal sentinel ("<object object at 0x…>"), not a reason.
        return "cancelled"
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS] + "…"
