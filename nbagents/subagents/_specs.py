"""Sub-agent specifications and their validation."""

from __future__ import annotations

import difflib
import re
import sys
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Literal, NotRequired, TypedDict

from langchain.agents.middleware import AgentMiddleware, InterruptOnConfig
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from nbagents._contract import GENERAL_PURPOSE, SKILLS_ERRORS_KEY, SKILLS_METADATA_KEY
from nbagents.middleware import SESSION_KEY
from nbagents.subagents.limits import Limits, check_limits

__all__ = [
    "DEFAULT_EXCLUDED_STATE_KEYS",
    "GENERAL_PURPOSE_SUBAGENT",
    "CompiledSubAgent",
    "RemoteSubAgent",
    "SubAgent",
    "describe",
    "tools_problem",
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
    """The tools themselves (or provider tool dicts), not their names."""
    model: NotRequired[str | BaseChatModel]
    """A chat model or a ``"provider:model"`` string for ``init_chat_model``."""
    middleware: NotRequired[Sequence[AgentMiddleware[Any, Any]]]
    interrupt_on: NotRequired[dict[str, bool | InterruptOnConfig]]
    response_format: NotRequired[Any]
    skills: NotRequired[Sequence[str]]
    """Skill source directories in the backend, read in order (a later one overrides by name)."""
    permissions: NotRequired[Sequence[Any]]
    """Upstream deepagents' ``FilesystemPermission`` rules: accepted so that its specs build,
    not enforced (a warning says so). Give the backend access rules instead
    (``DiskBackend(root, rules=[...])``)."""
    mode: NotRequired[Literal["isolated", "fork"]]
    """Upstream deepagents' context mode. ``"isolated"`` (the default) starts the sub-agent from
    its task alone; ``"fork"`` from the parent's conversation so far (the messages before the
    call) followed by its task, each fork with its own copy. The trace's state diff says how
    many messages it inherited."""
    limits: NotRequired[Limits]
    """What one run of this sub-agent may spend, its own sub-agents included (model calls,
    tokens, cost, seconds). Reaching one stops it before its next model call; the parent gets
    an error ToolMessage naming the limit."""


class CompiledSubAgent(TypedDict):
    """A ready-made runnable (e.g. a compiled LangGraph graph) used as a sub-agent.

    Its output state must have a ``messages`` key.
    """

    name: str
    description: str
    runnable: Runnable[Any, Any]
    mode: NotRequired[Literal["isolated", "fork"]]
    """As in ``SubAgent``: ``"fork"`` gives the runnable the parent's messages before its task."""
    limits: NotRequired[Limits]
    """As in ``SubAgent``, counted from the LangChain model calls the runnable makes with the
    config it is given (a ``create_agent`` graph does; a runnable that calls models without
    passing its config on is not limited)."""


class RemoteSubAgent(TypedDict):
    """A sub-agent that runs as a graph on a LangGraph server (``langgraph dev``, a deployment).

    The ``task`` tool sends it the isolated state a local sub-agent gets and streams the run
    (``langgraph_sdk``, the ``remote`` extra), so traces show its steps under the ``task`` call.
    The keys are a superset of upstream deepagents' ``AsyncSubAgent``.
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
    """New attempts after a refused or timed-out connection, with growing pauses (default 2)."""
    trace: NotRequired[Literal["steps", "events"]]
    """What the trace shows of a run: its model and tool calls from LangGraph's step records
    (``"steps"``, the default), or every run inside them too (``"events"``: exact model requests,
    streamed replies, at more server CPU; see docs/remote-subagents.md)."""
    background: NotRequired[bool]
    """Run it in the background: not through ``task`` but with ``start_async_task`` and its
    companions, which return at once (see ``BackgroundSubAgentMiddleware``)."""
    mode: NotRequired[Literal["isolated", "fork"]]
    """Only ``"isolated"`` is acted on: ``"fork"`` is accepted with a warning."""
    webhook: NotRequired[str]
    """Upstream ``AsyncSubAgent``'s: accepted, not passed to the server (a warning says so)."""
    update_strategy: NotRequired[Literal["interrupt", "enqueue"]]
    """For a background task, what ``update_async_task`` does while the task runs: cancel the
    run and start the follow-up (``"interrupt"``, the default) or queue it (``"enqueue"``)."""
    notify_parent: NotRequired[bool]
    """Only ``False``: a finished background task is announced before the parent's next model
    call rather than waking an idle parent, so ``True`` is refused with a ``ValueError``."""


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
        SESSION_KEY,
    }
)
"""Withheld from every sub-agent: each starts from its task, loads its own skills and keeps
its own summarized history."""

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")

# Each kind's keys, in declaration order; upstream deepagents' SubAgent, CompiledSubAgent and
# AsyncSubAgent keys are all among them, so its specs are accepted as they are.
_KEYS: dict[str, tuple[str, ...]] = {
    "SubAgent": tuple(SubAgent.__annotations__),
    "CompiledSubAgent": tuple(CompiledSubAgent.__annotations__),
    "RemoteSubAgent": tuple(RemoteSubAgent.__annotations__),
}
_KNOWN = frozenset(key for keys in _KEYS.values() for key in keys)
_SHARED = frozenset(_KEYS["CompiledSubAgent"]) - {"runnable"}
_LOCAL_ONLY = frozenset(_KEYS["SubAgent"]) - _SHARED
_REMOTE_ONLY = frozenset(_KEYS["RemoteSubAgent"]) - _SHARED
# Upstream deepagents' keys nbagents accepts but does not act on: the values that ask for
# something it does not do, and what happens instead. Upstream specs build; nothing is ignored
# without a word.
_NOT_ACTED_ON: dict[str, tuple[Callable[[Any], bool], str]] = {
    "permissions": (
        bool,
        "its file tools reach whatever the backend allows; give the backend access rules "
        "instead, e.g. DiskBackend(root, rules=[AccessRule.deny('/secrets/**')])",
    ),
    "mode": (lambda v: v == "fork", "it starts from its task alone, as mode='isolated'"),
    "webhook": (bool, "the server is not told to call it"),
}
_TOOL_KINDS = "a BaseTool, a @tool function or a plain callable"
_MODES = ("isolated", "fork")
_STRATEGIES = ("interrupt", "enqueue")


def validate_specs(specs: Sequence[Mapping[str, Any]], *, background: bool = False) -> None:
    """Raise ``ValueError`` naming the spec and the problem for any invalid sub-agent spec, and
    warn about upstream keys not acted on. ``background``: the specs run as background tasks."""
    seen: set[str] = set()
    for position, spec in enumerate(specs):
        if not isinstance(spec, Mapping):
            raise ValueError(
                f"Sub-agent spec #{position + 1} must be a dict (SubAgent, CompiledSubAgent or "
                f"RemoteSubAgent), not {type(spec).__name__}."
            )
        label = f"Sub-agent {spec['name']!r}" if spec.get("name") else f"Sub-agent #{position + 1}"
        _validate_spec(spec, label)
        if spec.get("update_strategy") == "enqueue" and not background:
            raise ValueError(
                f"{label}: 'update_strategy': 'enqueue' queues the follow-ups of a background "
                f"task, but this sub-agent runs through the task tool, which sends none. Run it "
                f'in the background ("background": True with create_deep_agent, or '
                f"BackgroundSubAgentMiddleware) or leave the key out."
            )
        if spec["name"] in seen:
            raise ValueError(f"{label}: duplicate name; every sub-agent needs its own.")
        seen.add(spec["name"])
        remote = "graph_id" in spec or "url" in spec
        for key, (asks, instead) in _NOT_ACTED_ON.items():
            if key == "mode" and not remote:
                continue  # local sub-agents fork
            if key in spec and asks(spec[key]):
                warnings.warn(
                    f"{label}: nbagents accepts {key!r} from upstream deepagents "
                    f"but does not act on it: {instead}.",
                    UserWarning,
                    stacklevel=_outside_nbagents(),
                )


def _outside_nbagents() -> int:
    """The ``stacklevel`` that points a warning at the user's line that built the agent."""
    level, frame = 1, sys._getframe(1)
    while (
        frame.f_back is not None and frame.f_globals.get("__name__", "").split(".")[0] == "nbagents"
    ):
        level, frame = level + 1, frame.f_back
    return level


def _validate_spec(spec: Mapping[str, Any], label: str) -> None:
    _check_keys(spec, label)
    for key in ("name", "description"):
        if not isinstance(spec.get(key), str) or not spec[key].strip():
            raise ValueError(f"{label}: missing {key!r} (a non-empty string).")
    if not _NAME.match(spec["name"]):
        raise ValueError(
            f"{label}: the name may only use letters, digits, '-' and '_' "
            f"(it is what the main agent passes as subagent_type)."
        )
    for key, allowed in (("mode", _MODES), ("update_strategy", _STRATEGIES)):
        if key in spec and spec[key] not in allowed:
            raise ValueError(f"{label}: {key!r} must be {' or '.join(map(repr, allowed))}.")
    if "graph_id" in spec or "url" in spec:
        _validate_remote(spec, label)
        return
    if "limits" in spec:
        check_limits(spec["limits"], label)
    if "runnable" in spec:
        if "model" in spec:
            raise ValueError(
                f"{label}: give either 'runnable' (a CompiledSubAgent) or 'model' "
                f"(a SubAgent), not both."
            )
        foreign = sorted(set(spec) - set(_KEYS["CompiledSubAgent"]))
        if foreign:
            raise ValueError(
                f"{label}: a CompiledSubAgent runs its runnable as it was built; {foreign} "
                f"belong to a SubAgent or a RemoteSubAgent."
            )
        if not isinstance(spec["runnable"], Runnable):
            raise ValueError(f"{label}: 'runnable' must be a LangChain Runnable.")
        return
    prompt = spec.get("system_prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(f"{label}: missing 'system_prompt' (a non-empty string).")
    remote = sorted(_REMOTE_ONLY & set(spec))
    if remote:
        raise ValueError(
            f"{label}: only a RemoteSubAgent (with 'url' and 'graph_id') takes {remote}."
        )
    if "tools" in spec:
        problem = tools_problem(spec["tools"])
        if problem is not None:
            raise ValueError(f"{label}: 'tools' {problem}")
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
    if "limits" in spec:
        raise ValueError(
            f"{label}: a RemoteSubAgent's model calls run on the server, where nbagents cannot "
            f"stop them: 'limits' is for local sub-agents (use 'timeout' to bound its time)."
        )
    local = sorted((_LOCAL_ONLY | {"runnable"}) & set(spec))
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
    if spec.get("notify_parent", False) is not False:
        # Upstream wakes an idle parent by starting a run on its thread on the Agent Server;
        # a parent in a notebook has no server thread to start a run on.
        raise ValueError(
            f"{label}: 'notify_parent': {spec['notify_parent']!r} asks the finished task to "
            f"wake the agent that started it, which nbagents does not do. Instead, a task "
            f"that finished is announced to the agent before its next model call, and "
            f"check_async_task reads it at any time. Set 'notify_parent': False or leave the "
            f"key out."
        )
    if not isinstance(spec.get("background", False), bool):
        raise ValueError(f"{label}: 'background' must be True or False.")
    if spec.get("trace", "steps") not in ("steps", "events"):
        raise ValueError(f"{label}: 'trace' must be 'steps' or 'events', not {spec['trace']!r}.")
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


def tools_problem(tools: Any) -> str | None:
    """What is wrong with ``tools`` as a list of tools, worded to follow its name, or ``None``
    (a tool given by name would fail deep inside LangGraph)."""
    if isinstance(tools, BaseTool) or callable(tools):
        name = getattr(tools, "name", None) or getattr(tools, "__name__", "tool")
        return f"must be a list of tools, not one tool: write [{name}]."
    if isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Collection):
        return f"must be a list of tools ({_TOOL_KINDS} each), not {describe(tools)}."
    for position, tool in enumerate(tools):
        if isinstance(tool, BaseTool | dict) or callable(tool):
            continue
        if isinstance(tool, str):
            return (
                f"item #{position + 1} is the name {tool!r}: pass the tool itself "
                f"({_TOOL_KINDS}), not its name."
            )
        return f"item #{position + 1} must be {_TOOL_KINDS}, not {describe(tool)}."
    return None


def _check_keys(spec: Mapping[Any, Any], label: str) -> None:
    """Name every key no kind of spec has, with the known key it most resembles: a misspelt
    optional key would otherwise be ignored without a word."""
    unknown = [key for key in spec if key not in _KNOWN]
    if not unknown:
        return
    local = not {"runnable", "graph_id", "url"} & set(spec)
    required = ("name", "description", "system_prompt") if local else ("name", "description")
    problems = [
        f"missing {key!r} (a non-empty string)"
        for key in required
        if not isinstance(spec.get(key), str) or not spec[key].strip()
    ]
    kind = "SubAgent" if local else "CompiledSubAgent" if "runnable" in spec else "RemoteSubAgent"
    for key in unknown:
        close = _closest(key) if isinstance(key, str) else None
        listing = ", ".join(repr(key) for key in _KEYS[kind])
        hint = f"did you mean {close!r}?" if close else f"a {kind} takes {listing}"
        problems.append(f"unknown key {key!r} ({hint})")
    raise ValueError(f"{label}: {'; '.join(problems)}.")


def _closest(key: str) -> str | None:
    typed = key.lower()
    # difflib scores two swapped letters below one dropped letter ('modle' is nearer 'mode' than
    # 'model'), yet a swap is the commoner slip: a known key with the same letters wins.
    swapped = [k for k in sorted(_KNOWN) if sorted(k) == sorted(typed)]
    if swapped:
        return swapped[0]
    # 0.7 keeps real misspellings ('respons_schema') and drops look-alikes that mean something
    # else ('instructions' is not 'interrupt_on').
    close = difflib.get_close_matches(typed, sorted(_KNOWN), n=1, cutoff=0.7)
    return close[0] if close else None


def describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"
