"""What ``Span.attributes`` holds: each key the tracer writes, the type of its value, and a read
of a span's attributes that keeps only the values of that type.

``Span.attributes`` stays a plain ``dict``: it is what the trace file stores, and a loaded file
is anyone's JSON. Readers take :meth:`Span.typed_attributes` instead, whose keys and value
types mypy checks, and which leaves out a value of another type (a hand-edited file's
``"description": 42``) rather than hand it on to break a view.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypedDict, cast, get_type_hints

from pydantic import TypeAdapter

__all__ = ["SpanAttributes", "typed_attribute", "typed_attributes"]


class SpanAttributes(TypedDict, total=False):
    """The facts a span records besides its fields, by key; which keys a span has depends on its
    kind. The value types are those the tracer writes."""

    # -- a task call and the sub-agent it spawned
    description: str
    """The task the sub-agent was given (the ``task`` call's ``description``)."""
    subagent_type: str
    """The sub-agent type the ``task`` call named (the general-purpose one if it named none)."""
    tool_call_id: str | None
    """The id of the tool call the span runs (for a sub-agent: the ``task`` call that spawned
    it; ``None`` when it is unknown)."""
    parent_agent: str
    """A sub-agent's: the name of the agent that spawned it."""
    withheld: dict[str, str]
    """A sub-agent's: parent state keys it was not given → their size (``"12 items"``)."""
    passed: dict[str, str]
    """A sub-agent's: parent state keys it was given → their size."""
    returned: list[str]
    """A sub-agent's: the state keys it sent back besides its one ToolMessage."""
    result: str | None
    """A sub-agent's: the text it returned to its parent (``None`` if its answer had none)."""
    state_diff: Literal["inferred"]
    """A sub-agent's, when ``withheld``/``passed`` were inferred from the parent's state rather
    than recorded by nbagents' ``task`` tool (upstream deepagents)."""
    remote: dict[str, Any]
    """A remote sub-agent's: the server, thread and run it ran as (a ``RemoteRecord``)."""
    response_format: str
    """A sub-agent's, when its caller chose the format of its answer for this call alone: the
    format's name (the object itself is not kept in the trace)."""

    # -- parallel calls
    batch: str
    """The id of the model call whose reply made this tool call (with ``call_index``: the order
    the views show parallel siblings in)."""
    call_index: int
    """The call's position among its reply's tool calls."""

    # -- skills
    skills_offered: list[str]
    """An agent's: the skills it was offered."""
    skill_warnings: list[str]
    """An agent's: why the skills that failed to load did."""
    skills_opened: list[str]
    """An agent's: the skills it opened (read the ``SKILL.md`` of)."""
    skill: str
    """A skill span's: the skill opened."""
    path: str
    """A skill span's: the ``SKILL.md`` read."""
    tool: str
    """A skill span's: the tool that read it."""

    # -- the deep-agent stack
    plan: list[dict[str, Any]]
    """An agent's: its todo list after its latest ``write_todos`` call, each item's
    ``content``, ``status`` and the times it was ``added``, ``started`` and ``finished``
    (seconds since the trace began, ``None`` until then)."""
    memory: dict[str, int]
    """An agent's: the memory files it loaded (path → characters)."""
    step: str
    """A middleware's own step's: which one (``summarization``)."""
    summarization: dict[str, Any]
    """A summarization step's facts: ``messages_folded``, ``tokens_before``,
    ``tokens_after``, ``history_path`` (``None`` if it could not be saved), ``summary``."""

    # -- models, tools
    tools: list[str]
    """A model call's: the names of the tools bound to it."""
    streamed: str
    """A model call's while it streams: the end of its reply so far (``STREAMED``)."""
    retriever: bool
    """A tool span that is a retriever run."""

    # -- upstream deepagents' rubric loop (``RubricMiddleware``)
    rubric_pass: int
    """A grading pass's: its number in the grading run, from 1."""
    rubric_verdict: str
    """A grading pass's: ``satisfied``, ``needs_revision``, ``failed``,
    ``max_iterations_reached`` or ``grader_error``."""
    rubric_explanation: str
    """A grading pass's: the grader's summary of its verdict (or why the grader failed)."""
    rubric_criteria: list[dict[str, Any]]
    """A grading pass's: the grader's per-criterion verdicts (``name``, ``passed``, ``gap``)."""
    rubric_feedback: str | None
    """A grading pass's: the message fed back to the agent to revise its answer (``None`` when
    the pass ended the loop)."""

    # -- pauses
    pending: list[dict[str, Any]]
    """What a paused run waits for at this span: ``PendingRequest`` records (``PENDING``)."""
    approvals: list[dict[str, Any]]
    """What a resumption answered at this span: each ``pending`` request with its
    ``decision`` (``approve``, ``edit``, ``reject``, ``respond``; ``answered`` for a plain
    interrupt, whose ``answer`` is kept) and, when given, its ``message`` or ``edited_args``
    (``APPROVALS``)."""
    thread_id: str
    """A root's: the LangGraph thread the run is on, which a resumption names (``THREAD``)."""
    agent_ref: str
    """A root's, for agents built by ``create_deep_agent``: which agent object ran the run in
    this process (``main-3``), so a resumption from the trace answers that agent even when
    others used the same thread id (``AGENT``)."""
    paused: list[list[float]]
    """A resumed span's: each pause as ``[start, end]`` in seconds since the trace began."""


def typed_attributes(attributes: Mapping[str, Any]) -> SpanAttributes:
    """The entries of ``attributes`` that :class:`SpanAttributes` names, with a value of its
    type; the values are the same objects, not copies."""
    typed = {k: v for k, v in attributes.items() if (check := _CHECKS.get(k)) and check(v)}
    return cast(SpanAttributes, typed)  # each value was checked against its key's type


def typed_attribute(attributes: Mapping[str, Any], key: str) -> Any:
    """``typed_attributes(attributes).get(key)``, without checking every other entry: a
    transcript reads one fact of each of hundreds of spans (a wide run's main agent's
    conversation is rebuilt at each of the live view's updates)."""
    value = attributes.get(key)
    check = _CHECKS.get(key)
    return value if value is not None and check is not None and check(value) else None


# pydantic's strict validation, which checks without building a copy: an int is a float (JSON
# has one number type), a bool is no number, a tuple is no list.
_CHECKS: dict[str, Callable[[Any], bool]] = {
    key: functools.partial(TypeAdapter(hint).validator.isinstance_python, strict=True)
    for key, hint in get_type_hints(SpanAttributes).items()
}
