"""``ScriptedChatModel``: a deterministic tool-calling chat model needing no key and no network."""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, field_validator

from nbagents._contract import FORK_TASK_ID_PREFIX
from nbagents.models._caller import calling_agent
from nbagents.models._canned import Call, CannedChatModel
from nbagents.models._turns import Turn, to_turn

__all__ = ["ScriptExhaustedError", "ScriptedChatModel", "estimate_tokens"]

DEFAULT_AGENT = "main"
ANY_TASK = "*"


_SCRIPT_SHAPE = (
    "A script maps each agent's name to its replies, turn by turn: "
    "script={'main': ['first reply', 'second reply']} for an agent named 'main' "
    "(create_deep_agent's default name); a sub-agent type may map task descriptions to "
    "replies: {'researcher': {'Research A': ['A is fine'], '*': ['anything else']}}."
)


class ScriptExhaustedError(LookupError):
    """The script has no reply for this agent, task and turn."""


def estimate_tokens(text: str) -> int:
    """A deterministic token estimate (about four characters a token), so usage is reproducible."""
    return (len(text) + 3) // 4


class ScriptedChatModel(CannedChatModel):
    """A chat model that replies from a script, for tutorials, tests and benchmarks.

    ``script`` maps an agent's name (the ``name`` given to ``create_deep_agent`` or a sub-agent's
    name) to its replies. The replies are a list, used turn by turn in every conversation of that
    agent, or a mapping from a task description to a list, so that several sub-agents of the same
    type running at once each get their own answers; the key ``"*"`` serves any other task.
    A reply is a string, a :class:`~nbagents.models.Turn` (see ``say``, ``call``, ``delegate``,
    ``parallel`` and ``fail``), an ``AIMessage`` or a list of turns made at once.

    The turn is the number of AI messages already in the conversation, so replies do not depend
    on timing or on which thread runs first. Called directly, outside an agent,
    ``model.invoke("hi")`` therefore answers with turn 1 every time; pass the conversation so far
    (``model.invoke([HumanMessage("hi"), first_reply, HumanMessage("and then?")])``) for turn 2.

    Example: ``ScriptedChatModel(script={"main": ["Hello!"]})`` answers ``Hello!`` to the agent
    named ``main`` (the default name of ``create_deep_agent``'s agent).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Mapping[str, Any] = Field(default_factory=dict)
    """Agent name → replies (a list, or a mapping from task description to a list)."""
    latency: float = 0.0
    """Seconds every reply takes, to make parallelism and live views visible."""
    model_name: str = "scripted-model"
    """Reported in ``response_metadata`` like a real provider's model name."""
    responder: Callable[[str, list[BaseMessage]], Any] | None = None
    """Optional fallback ``(agent, messages) -> reply`` for conversations the script lacks."""

    @field_validator("script", mode="before")
    @classmethod
    def _script_is_a_mapping(cls, script: Any) -> Any:
        if isinstance(script, Mapping):
            bad = [k for k in script if not isinstance(k, str)]
            if bad:
                raise ValueError(
                    f"script keys are agent names (strings); got {bad[0]!r}. {_SCRIPT_SHAPE}"
                )
            return script
        raise ValueError(f"script must be a dict, not a {type(script).__name__}. {_SCRIPT_SHAPE}")

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools; the script's tool calls are checked against them at reply time."""
        return self.bind(tools=[_tool_schema(t) for t in tools], **kwargs)

    # -- replying ------------------------------------------------------------------------------

    def _reply(self, call: Call) -> tuple[AIMessage, float]:
        messages = call.messages
        # A model called outside any named agent: a one-agent script is unambiguous.
        only = next(iter(self.script)) if len(self.script) == 1 else DEFAULT_AGENT
        agent = calling_agent(call.run_manager) or only
        own = _own_part(messages)
        task = next((m.text for m in own if isinstance(m, HumanMessage)), "")
        turn_index = sum(isinstance(m, AIMessage) for m in own)
        turn = self._turn(agent, task, turn_index, messages)
        if turn.error is not None:
            # A fresh copy per raise: one instance shared by parallel conversations would race
            # on its traceback.
            raise copy.copy(turn.error)
        message = turn.to_message(f"{agent}|{task}|{turn_index}")
        _check_tools(message, call.kwargs.get("tools"), agent, turn_index)
        message.usage_metadata = _usage(messages, message, turn.usage)
        message.response_metadata = {"model_name": self.model_name, "finish_reason": "stop"}
        message.name = None
        latency = self.latency if turn.latency is None else turn.latency
        return message, latency

    def _turn(self, agent: str, task: str, index: int, messages: list[BaseMessage]) -> Turn:
        replies = self._replies_for(agent, task)
        if replies is not None and index < len(replies):
            return to_turn(replies[index])
        if self.responder is not None:
            return to_turn(self.responder(agent, messages))
        if replies is None:
            raise ScriptExhaustedError(
                f"ScriptedChatModel has no script for agent {agent!r} (task {_preview(task)!r}, "
                f"turn {index + 1}); scripted: {_describe(self.script, agent)}."
            )
        raise ScriptExhaustedError(
            f"ScriptedChatModel's script for agent {agent!r} (task {_preview(task)!r}) has "
            f"{len(replies)} turn(s), but the agent asked for turn {index + 1}. Add a reply, "
            f"e.g. say('...'), to end the agent's loop."
        )

    def _replies_for(self, agent: str, task: str) -> Sequence[Any] | None:
        entry = self.script.get(agent)
        if entry is None:
            return None
        if isinstance(entry, Mapping):
            if task in entry:
                return _as_list(entry[task])
            matches = [k for k in entry if k != ANY_TASK and k in task]
            if len(matches) == 1:
                return _as_list(entry[matches[0]])
            if len(matches) > 1:
                raise ScriptExhaustedError(
                    f"Task {_preview(task)!r} of agent {agent!r} matches several script keys: "
                    f"{matches}; use the exact task description as the key."
                )
            return _as_list(entry[ANY_TASK]) if ANY_TASK in entry else None
        return _as_list(entry)

    # -- CannedChatModel hooks -----------------------------------------------------------------

    def _respond(self, call: Call) -> AIMessage:
        message, latency = self._reply(call)
        if latency > 0:
            time.sleep(latency)
        return message

    async def _arespond(self, call: Call) -> AIMessage:
        message, latency = self._reply(call)
        if latency > 0:
            await asyncio.sleep(latency)
        return message


_SCHEMAS_KEPT = 512
_schemas: dict[int, tuple[Any, str, str, Any, dict[str, Any]]] = {}
_schemas_lock = threading.Lock()


def _tool_schema(tool: Any) -> dict[str, Any]:
    """``convert_to_openai_tool(tool)``, once per tool object (again if its name, description
    or schema changes): ``create_agent`` binds the tools for every model call, and converting
    them costs about as much as the scripted reply itself."""
    if not isinstance(tool, BaseTool):
        return convert_to_openai_tool(tool)
    key = (tool.name, tool.description, tool.args_schema)
    with _schemas_lock:
        kept = _schemas.get(id(tool))
    if kept is not None and kept[0] is tool and kept[1:4] == key:
        return kept[4]  # shared: LangChain passes bound tools on and reads them, never edits
    schema = convert_to_openai_tool(tool)
    with _schemas_lock:
        if len(_schemas) >= _SCHEMAS_KEPT:
            _schemas.pop(next(iter(_schemas)))
        _schemas[id(tool)] = (tool, *key, schema)
    return schema


def _own_part(messages: list[BaseMessage]) -> list[BaseMessage]:
    """A forked sub-agent's conversation from its task on: it is scripted by its task and its
    own turns, as an isolated one is, whatever it inherited."""
    for index in range(len(messages) - 1, -1, -1):
        if str(messages[index].id or "").startswith(FORK_TASK_ID_PREFIX):
            return messages[index:]
    return messages


def _as_list(entry: Any) -> Sequence[Any]:
    if isinstance(entry, str | Turn | AIMessage):
        return [entry]
    return list(entry)


def _check_tools(message: AIMessage, tools: Any, agent: str, index: int) -> None:
    if not message.tool_calls:
        return
    bound = [t.get("function", {}).get("name") for t in tools or []]
    for c in message.tool_calls:
        if c["name"] not in bound:
            have = ", ".join(repr(n) for n in bound) or "none"
            raise ValueError(
                f"Turn {index + 1} of agent {agent!r} calls tool {c['name']!r}, but that agent's "
                f"tools are: {have}."
            )


def _usage(
    messages: Sequence[BaseMessage], reply: AIMessage, override: Mapping[str, int] | None
) -> UsageMetadata:
    if override is None:
        inp, out = sum(_message_tokens(m) for m in messages), _message_tokens(reply)
    else:
        inp, out = int(override.get("input_tokens", 0)), int(override.get("output_tokens", 0))
    usage = UsageMetadata(input_tokens=inp, output_tokens=out, total_tokens=inp + out)
    # Where providers report them, in LangChain's shape: reasoning is part of the output tokens,
    # a cache read part of the input tokens.
    if override and override.get("reasoning"):
        usage["output_token_details"] = {"reasoning": int(override["reasoning"])}
    if override and override.get("cache_read"):
        usage["input_token_details"] = {"cache_read": int(override["cache_read"])}
    return usage


def _message_tokens(message: BaseMessage) -> int:
    calls = getattr(message, "tool_calls", None) or []
    extra = json.dumps([[c["name"], c["args"]] for c in calls]) if calls else ""
    return 4 + estimate_tokens(message.text) + estimate_tokens(extra)


def _preview(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(script: Mapping[str, Any], agent: str) -> str:
    entry = script.get(agent)
    if isinstance(entry, Mapping):
        return f"tasks {[_preview(k) for k in entry]} for {agent!r}"
    return f"agents {list(script)}"
