"""Sub-agent specifications and their validation."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from langchain.agents.middleware import AgentMiddleware, InterruptOnConfig
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from nbagents._contract import GENERAL_PURPOSE, SKILLS_ERRORS_KEY, SKILLS_METADATA_KEY

__all__ = [
    "DEFAULT_EXCLUDED_STATE_KEYS",
    "GENERAL_PURPOSE_SUBAGENT",
    "CompiledSubAgent",
    "RemoteSubAgent",
    "SubAgent",
    "validate_specs",
]


class SubAgent(TypedDict):
    """A sub-agent that nbagents builds with ``create_agent``.

    Without ``tools`` it inherits the main agent's tools; without ``model`` the main model.
    ``skills`` lists the skill source directories (backend paths such as ``"/skills/review/"``)
    whose skills this sub-agent is offered; without it, a custom sub-agent has no skills (the
    general-purpose sub-agent shares the main agent's).
    """

    name: str
    description: str
    """What it does: the main agent reads this to decide when to delegate."""
    system_prompt: str
    tools: NotRequired[Sequence[BaseTool | Callable[..., Any] | dict[str, Any]]]
    model: NotRequired[str | BaseChatModel]
    """A chat model or a ``"provider:model"`` string for ``init_chat_model``."""
    middleware: NotRequired[Sequence[AgentMiddleware[Any, Any]]]
    interrupt_on: NotRequired[dict[str, bool | InterruptOnConfig]]
    response_format: NotRequired[Any]
    skills: NotRequired[Sequence[str]]
    """Skill source directories in the backend, read in order (a later one overrides by name)."""


class CompiledSubAgent(TypedDict):
    """A ready-made runnable (e.g. a compiled LangGraph graph) used as a sub-agent.

    Its output state must have a ``messages`` key.
    """

    name: str
    description: str
    runnable: Runnable[Any, Any]


class RemoteSubAgent(TypedDict):
    """A sub-agent that runs as a graph on a LangGraph server (``langgraph dev``, a deployment).

    The ``task`` tool sends the graph the same isolated state a local sub-agent gets, streams
    the run through ``langgraph_sdk`` (the ``remote`` extra) and re-emits its steps as
    callbacks, so traces show them under the ``task`` call. The keys ``name``, ``description``,
    ``graph_id``, ``url`` and ``headers`` are those of upstream deepagents' ``AsyncSubAgent``.
    """

    name: str
    description: str
    url: str
    """The server's base URL, e.g. ``"http://127.0.0.1:2024"``."""
    graph_id: str
    """A graph name from the server's ``langgraph.json``, or an assistant id."""
    headers: NotRequired[Mapping[str, str]]
    """Sent with every request (e.g. a self-hosted server's own authentication header)."""
    api_key_env: NotRequired[str]
    """The environment variable holding the API key, read at each call and sent as
    ``x-api-key``. Without it the SDK reads ``LANGGRAPH_API_KEY``, ``LANGSMITH_API_KEY`` or
    ``LANGCHAIN_API_KEY``."""
    timeout: NotRequired[float]
    """Seconds one run may take, connecting included, before the call ends in an error and the
    remote run is cancelled (default 300)."""
    connect_timeout: NotRequired[float]
    """Seconds to wait for the server to accept a connection (default 5)."""
    connect_retries: NotRequired[int]
    """New attempts after a refused or timed-out connection, with growing pauses (default 2:
    a server that is not running is reported within about half a second; 5, the SDK's own
    client's setting, waits 7.5 s)."""
    background: NotRequired[bool]
    """Run it in the background: not through ``task`` but with ``start_async_task`` and its
    companions, which return at once (see ``BackgroundSubAgentMiddleware``)."""


#: The spec of the ``general-purpose`` sub-agent that ``create_deep_agent`` adds unless a spec of
#: that name is given: the main model and tools, a generic prompt.
GENERAL_PURPOSE_SUBAGENT: SubAgent = {
    "name": GENERAL_PURPOSE,
    "description": (
        "General-purpose agent for researching complex questions, searching for information "
        "and carrying out multi-step tasks on its own, with the main agent's own tools."
    ),
    "system_prompt": (
        "You are a sub-agent. Complete the task you are given using the tools you have, then "
        "reply with one self-contained answer: it is the only thing the caller will see."
    ),
}

DEFAULT_EXCLUDED_STATE_KEYS: frozenset[str] = frozenset(
    {
        "messages",
        "todos",
        "structured_response",
        SKILLS_METADATA_KEY,
        SKILLS_ERRORS_KEY,
        "memory_contents",
        "background_tasks",
    }
)
"""Withheld from every sub-agent: each starts from its task and loads its own skills."""

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def validate_specs(specs: Sequence[Mapping[str, Any]]) -> None:
    """Raise ``ValueError`` naming the spec and the problem for any invalid sub-agent spec."""
    seen: set[str] = set()
    for position, spec in enumerate(specs):
        if not isinstance(spec, Mapping):
            raise ValueError(
                f"Sub-agent spec #{position + 1} must be a dict (SubAgent, CompiledSubAgent or "
                f"RemoteSubAgent), "
                f"not {type(spec).__name__}."
            )
        label = f"Sub-agent {spec['name']!r}" if spec.get("name") else f"Sub-agent #{position + 1}"
        for key in ("name", "description"):
            if not isinstance(spec.get(key), str) or not spec[key].strip():
                raise ValueError(f"{label}: missing {key!r} (a non-empty string).")
        name = spec["name"]
        if not _NAME.match(name):
            raise ValueError(
                f"{label}: the name may only use letters, digits, '-' and '_' "
                f"(it is what the main agent passes as subagent_type)."
            )
        if name in seen:
            raise ValueError(f"{label}: duplicate name; every sub-agent needs its own.")
        seen.add(name)
        if "graph_id" in spec or "url" in spec:
            _validate_remote(spec, label)
            continue
        if "runnable" in spec:
            if "model" in spec:
                raise ValueError(
                    f"{label}: give either 'runnable' (a CompiledSubAgent) or 'model' "
                    f"(a SubAgent), not both."
                )
            if not isinstance(spec["runnable"], Runnable):
                raise ValueError(f"{label}: 'runnable' must be a LangChain Runnable.")
            continue
        prompt = spec.get("system_prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(f"{label}: missing 'system_prompt' (a non-empty string).")
        model = spec.get("model")
        if model is not None and not isinstance(model, str | BaseChatModel):
            raise ValueError(f"{label}: 'model' must be a chat model or a 'provider:model' string.")
        skills = spec.get("skills")
        if skills is not None and (
            isinstance(skills, str)
            or not isinstance(skills, Sequence)
            or not all(isinstance(s, str) and s.strip() for s in skills)
        ):
            raise ValueError(
                f"{label}: 'skills' must be a list of skill source directories "
                f"(e.g. ['/skills/review/']), not {skills!r}."
            )


def _validate_remote(spec: Mapping[str, Any], label: str) -> None:
    for key in ("url", "graph_id"):
        if not isinstance(spec.get(key), str) or not spec[key].strip():
            raise ValueError(f"{label}: a RemoteSubAgent needs {key!r} (a non-empty string).")
    if not spec["url"].startswith(("http://", "https://")):
        raise ValueError(f"{label}: 'url' must start with http:// or https://: {spec['url']!r}.")
    local = sorted({"runnable", "model", "system_prompt", "tools", "middleware"} & set(spec))
    if local:
        raise ValueError(
            f"{label}: a RemoteSubAgent runs the server's graph as it is deployed; {local} "
            f"belong to a local SubAgent."
        )
    headers = spec.get("headers")
    if headers is not None and (
        not isinstance(headers, Mapping)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
    ):
        raise ValueError(f"{label}: 'headers' must map header names to strings.")
    env = spec.get("api_key_env")
    if env is not None and (not isinstance(env, str) or not env.strip()):
        raise ValueError(f"{label}: 'api_key_env' must name an environment variable.")
    if not isinstance(spec.get("background", False), bool):
        raise ValueError(f"{label}: 'background' must be True or False.")
    retries = spec.get("connect_retries")
    if retries is not None and (
        isinstance(retries, bool) or not isinstance(retries, int) or retries < 0
    ):
        raise ValueError(f"{label}: 'connect_retries' must be a whole number, 0 or more.")
    for key in ("timeout", "connect_timeout"):
        value = spec.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
        ):
            raise ValueError(f"{label}: {key!r} must be a positive number of seconds.")
