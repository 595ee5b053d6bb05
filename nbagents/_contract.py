"""The contract between the agent side (sub-agents, file tools, skills) and the tracer.

The ``task`` tool writes a :class:`SpawnRecord` into the sub-agent run's metadata; the tracer
reads it back with :func:`read_spawn`. The skills middleware keeps what it offered in the state
keys named here, and an agent opens a skill by reading its ``SKILL.md`` with ``read_file``; the
tracer recognises both. Both sides import the names from here, so a field or a key cannot drift
between writer and reader. The wording of state sizes (:func:`describe_size`)
is part of the record: the tracer infers the same wording for runs nbagents did not spawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, cast

__all__ = [
    "DEPTH_KEY",
    "FORK_TASK_ID_PREFIX",
    "GENERAL_PURPOSE",
    "MAX_PARALLEL_SUBAGENTS",
    "MEMORY_CONTENTS_KEY",
    "READ_FILE_TOOL",
    "REMOTE_KEY",
    "SKILLS_ERRORS_KEY",
    "SKILLS_METADATA_KEY",
    "SKILL_FILE",
    "SPAWN_KEY",
    "STEP_KEY",
    "SUMMARIZATION_STEP",
    "TASK_TOOL",
    "WRITE_TODOS_TOOL",
    "LimitReached",
    "RemoteRecord",
    "SpawnRecord",
    "describe_size",
    "read_remote",
    "read_spawn",
    "skill_of_path",
    "spawn_call_id",
]

TASK_TOOL = "task"
"""The name of the tool through which an agent spawns a sub-agent (as in deepagents)."""
GENERAL_PURPOSE = "general-purpose"
"""The sub-agent type a ``task`` call without ``subagent_type`` gets."""
MAX_PARALLEL_SUBAGENTS = 4096
"""Parallel ``task`` calls one run may have in flight: ``create_deep_agent``'s default
``max_concurrency`` and the size of the thread pool that runs sub-agents' sync tools under
``ainvoke`` (a smaller pool would cap what the concurrency allows). Both pools start threads
only as calls need them, so the bound costs nothing below it; it is high enough that a
fan-out of thousands of sub-agents runs in one wave."""

DEPTH_KEY = "nbagents_depth"
"""Run metadata: how deep the running agent is (the main agent is 0)."""
SPAWN_KEY = "nbagents_spawn"
"""Run metadata of a sub-agent's run: its :class:`SpawnRecord`."""

REMOTE_KEY = "nbagents_remote"
"""Run metadata of a sub-agent that ran on a LangGraph server: its :class:`RemoteRecord`."""

READ_FILE_TOOL = "read_file"
"""The file tool an agent reads a file with (as in deepagents); reading a ``SKILL.md`` with it
opens that skill."""
SKILL_FILE = "SKILL.md"
"""The file that makes a folder a skill (the Agent Skills format)."""
SKILLS_METADATA_KEY = "skills_metadata"
"""State key of the skills offered to an agent: a list of records with ``name``, ``description``
and ``path``. Private, as in deepagents: not in a run's input or output, withheld from sub-agents
(each loads its own)."""
SKILLS_ERRORS_KEY = "skills_load_errors"
"""State key of the problems found loading skills, one line each (``path: why``); private like
``skills_metadata``."""

MEMORY_CONTENTS_KEY = "memory_contents"
"""State key of the memory files an agent loaded (path -> text); private, withheld from
sub-agents. The tracer records each file's path and size on the agent's span."""
WRITE_TODOS_TOOL = "write_todos"
"""LangChain's todo-list tool: each call replaces the agent's plan; the tracer follows the
items' statuses across calls."""
STEP_KEY = "nbagents_step"
"""Run metadata of a middleware's own step (a chain run the tracer shows instead of folding it
away as plumbing): which step it is, e.g. :data:`SUMMARIZATION_STEP`."""
SUMMARIZATION_STEP = "summarization"
"""The step in which summarization folds a conversation; its output is the fold's facts
(``messages_folded``, ``tokens_before``, ``tokens_after``, ``history_path``, ``summary``)."""

FORK_TASK_ID_PREFIX = "nbagents-fork-task-"
"""The id of the task message a forked sub-agent's conversation continues with (the prefix,
then the ``task`` call's id): where its own part of the conversation starts, for the scripted
model, which picks replies by task and turn."""


class LimitReached(RuntimeError):
    """A limit (model calls, tokens, cost, seconds) stopped an agent before a model call.

    The ``task`` tool turns it into an error ToolMessage and the tracer into the status
    ``"limit"``, so it lives here where both see it. The run-wide limit of
    ``create_deep_agent(limits=...)`` raises it from ``invoke`` when it stops the main agent.
    """

    def __init__(self, owner: str, limit: str, value: float, spent: str) -> None:
        self.owner = owner
        """Whose limit it is: ``"sub-agent 'researcher'"`` or ``"the run"``."""
        self.limit = limit
        """The key of the limit reached: ``model_calls``, ``tokens``, ``cost`` or ``seconds``."""
        self.value = value
        self.spent = spent
        """What was spent, in words (``"3 model calls made"``)."""
        super().__init__(f"the limit {limit}={value:g} of {owner} is reached ({spent})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.owner, self.limit, self.value, self.spent))


class SpawnRecord(TypedDict):
    """What nbagents' ``task`` tool tells the tracer about one spawn."""

    subagent: str
    description: str
    depth: int
    tool_call_id: str
    withheld: dict[str, str]
    """Parent state keys withheld from the sub-agent → their size (:func:`describe_size`)."""
    passed: dict[str, str]
    """Parent state keys given to the sub-agent → their size."""
    response_format: str | None
    """The name of the response format the caller chose for this call
    (``SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY``), or ``None`` when the spec's own holds."""


def read_spawn(metadata: Mapping[str, Any]) -> SpawnRecord | None:
    """The spawn record in a run's metadata, or None (not spawned by nbagents, or malformed)."""
    found = metadata.get(SPAWN_KEY)
    if not isinstance(found, Mapping) or found.get("tool_call_id") is None:
        return None
    return SpawnRecord(
        subagent=str(found.get("subagent", "")),
        description=str(found.get("description", "")),
        depth=int(found.get("depth", 0)),
        tool_call_id=str(found["tool_call_id"]),
        withheld=dict(found.get("withheld") or {}),
        passed=dict(found.get("passed") or {}),
        response_format=None if (chosen := found.get("response_format")) is None else str(chosen),
    )


def spawn_call_id(metadata: Mapping[str, Any]) -> str | None:
    """The ``task`` call id of the spawn record in a run's metadata (``read_spawn(...)``'s
    ``tool_call_id``), without building the record: every run inside a sub-agent inherits its
    metadata, and the tracer asks this of each."""
    found = metadata.get(SPAWN_KEY)
    call_id = found.get("tool_call_id") if isinstance(found, Mapping) else None
    return None if call_id is None else str(call_id)


class RemoteRecord(TypedDict):
    """Where a remote sub-agent ran, as the ``task`` tool tells the tracer."""

    url: str
    graph_id: str
    thread_id: str
    run_id: str
    steps: str
    """``"streamed"`` when the server's inner steps follow in the trace, else why they do not."""
    trace: str
    """What they were streamed as: ``"steps"`` (LangGraph's tasks: model and tool calls) or
    ``"events"`` (every run inside them); ``""`` in traces recorded before nbagents said."""


def read_remote(metadata: Mapping[str, Any]) -> RemoteRecord | None:
    """The remote record in a run's metadata, or None."""
    found = metadata.get(REMOTE_KEY)
    if not isinstance(found, Mapping):
        return None
    return cast(RemoteRecord, {k: str(found.get(k, "")) for k in RemoteRecord.__annotations__})


def describe_size(value: Any) -> str:
    """A short, human size of a state value: ``"12 items"``, ``"340 chars"``, ``"int"``."""
    if isinstance(value, str):
        return f"{len(value)} chars"
    if isinstance(value, bytes):
        return f"{len(value)} bytes"
    # A list or a dict (most state values) spares the abstract-class checks.
    if type(value) in (list, dict) or isinstance(value, Mapping | Sequence | set | frozenset):
        n = len(value)
        return f"{n} item" if n == 1 else f"{n} items"
    return type(value).__name__


def skill_of_path(path: Any) -> str | None:
    """The skill a ``SKILL.md`` path opens (its folder's name), or ``None`` for any other file."""
    if not isinstance(path, str):
        return None
    parts = path.replace("\\", "/").rstrip("/").split("/")
    if len(parts) < 2 or parts[-1] != SKILL_FILE or not parts[-2]:
        return None
    return parts[-2]
