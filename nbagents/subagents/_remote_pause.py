"""Remote runs that stop for a person: the parent pauses with what they ask, and its resumption
continues them on the same thread of the server.

A remote graph that calls ``interrupt`` ends its run paused. The ``task`` call then calls
``interrupt`` itself with each remote request, so the parent pauses with the same requests a
local sub-agent's pause would give. On resumption LangGraph runs the call again from its start;
``interrupt`` now returns the answers, and the call resumes the remote thread with them. To find
that thread again its id is derived (:class:`ThreadKey`) from the parent's thread, the ``tools``
step's checkpoint namespace and the tool call id; a thread of that id that is not waiting (the
parent was cut off and continued) moves the call on to the next derived id. LangGraph hands out
answers by position, so a call answered over several pauses asks again as many times as it was
answered before: that count is kept on the remote thread (``ANSWERED_KEY``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.types import Interrupt, interrupt

from nbagents._contract import read_spawn
from nbagents._interrupts import allowed_by_schema, pending_approvals

__all__ = [
    "ANSWERED_KEY",
    "ThreadKey",
    "answered_before",
    "ask_parent",
    "asked_for",
    "shorten",
    "waiting_for",
]

ANSWERED_KEY = "nbagents_answered"
"""Remote thread metadata: how many answers the parent's ``task`` call got before the thread's
current pause."""

_NAMESPACE = uuid.UUID("5b0e7c52-9d6c-4f0e-8a51-2f7d3c1e9a40")
"""uuid5 namespace of the remote thread ids derived for ``task`` calls."""

_REPLAYED = {"nbagents": "an answer this sub-agent's earlier pause was given"}
"""The value of an ``interrupt`` asked again only to reach the next answers (LangGraph returns
the answer it already has; a person would see this only if the parent had lost it)."""


@dataclass(frozen=True)
class ThreadKey:
    """What identifies one ``task`` call's remote thread across its parent's pauses."""

    seed: str

    @classmethod
    def of(cls, config: RunnableConfig, url: str, graph_id: str) -> ThreadKey | None:
        """The key of the call running with ``config``, or ``None`` when its parent run has no
        checkpointer (it cannot pause, so a remote pause cannot be answered)."""
        try:  # the configurable of the LangGraph task the call runs in (what interrupt reads)
            parent = get_config().get("configurable")
        except RuntimeError:  # outside a graph
            return None
        if not isinstance(parent, Mapping) or parent.get(CONFIG_KEY_CHECKPOINTER) is None:
            return None
        thread = parent.get("thread_id")
        if thread in (None, ""):
            return None
        spawn = read_spawn(config.get("metadata") or {})
        call = spawn["tool_call_id"] if spawn is not None else ""
        parts = (url, graph_id, str(thread), str(parent.get("checkpoint_ns") or ""), call)
        return cls("\n".join(parts))

    def thread_id(self, attempt: int) -> str:
        """The id of the call's ``attempt``-th thread (0 first; the next after a run cut off)."""
        return str(uuid.uuid5(_NAMESPACE, f"{self.seed}\n{attempt}"))


def waiting_for(state: Mapping[str, Any]) -> tuple[Interrupt, ...]:
    """What a thread waits for, ordered by id so that every run of the call asks in one order.

    From its state, which lists the interrupts of graphs run inside a step too (a remote deep
    agent's sub-agents); the thread's own ``interrupts`` may leave them out."""
    found = state.get("interrupts")
    listed = found if isinstance(found, list) else []
    read = {str(i["id"]): i for i in listed if isinstance(i, Mapping) and i.get("id")}
    return tuple(
        Interrupt(i.get("value"), key, response_schema=schema if isinstance(schema, dict) else None)
        for key, i in sorted(read.items())
        for schema in [i.get("response_schema")]
    )


def asked_for(interrupts: Sequence[Interrupt]) -> str:
    """What a paused remote run asks, in a line: ``approve deploy({'target': 'prod'})``."""
    approvals = pending_approvals(list(interrupts))
    if approvals:
        return ", ".join(f"approve {r.tool}({shorten(repr(r.args))})" for r in approvals)
    return ", ".join(shorten(repr(i.value)) for i in interrupts) or "an interrupt"


def shorten(what: object, limit: int = 80) -> str:
    text = str(what)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def answered_before(thread: Mapping[str, Any]) -> int:
    """How many answers the ``task`` call used before its thread's current pause."""
    metadata = thread.get("metadata")
    answered = metadata.get(ANSWERED_KEY, 0) if isinstance(metadata, Mapping) else 0
    return answered if isinstance(answered, int) else 0


def ask_parent(interrupts: Sequence[Interrupt], replay: int = 0) -> tuple[dict[str, Any], int]:
    """The answers to ``interrupts`` by remote id, and how many ``interrupt`` calls that took.

    ``GraphInterrupt`` (the parent pauses) for the first request not answered yet. Approvals are
    asked for as one batch (:class:`_Batch`), so the parent pauses once, as for local sub-agents
    paused in one step; other interrupts in turn. ``replay``: answers already used, asked first.
    """
    for _ in range(replay):
        interrupt(_REPLAYED)
    batch = _Batch.of(interrupts)
    answers: dict[str, Any] = {}
    asked = 0
    if batch is not None:
        answers.update(batch.split(interrupt(batch.value())))
        asked += 1
    for request in interrupts:
        if request.id not in answers:
            answers[request.id] = interrupt(request.value, response_schema=request.response_schema)
            asked += 1
    return answers, asked


@dataclass(frozen=True)
class _Approval:
    """One remote approval interrupt, read as a part of a batch."""

    request: Interrupt
    actions: list[Any]
    configs: list[Any]
    batched: bool
    """Answered ``{"decisions": [...]}`` (a batched approval), else by its one decision."""

    @classmethod
    def of(cls, request: Interrupt) -> _Approval | None:
        value = request.value
        if not isinstance(value, Mapping):
            return None
        if value.get("type") == "tool_approval":  # interrupt_mode="per_call"
            name = value.get("name")
            action = {k: value[k] for k in ("name", "args", "description") if k in value}
            allowed = list(allowed_by_schema(request.response_schema))
            config = {"action_name": name, "allowed_decisions": allowed}
            return cls(request, [action], [config], batched=False)
        actions, configs = value.get("action_requests"), value.get("review_configs")
        if isinstance(actions, list) and actions and isinstance(configs, list):
            return cls(request, actions, configs, batched=True)
        return None


@dataclass(frozen=True)
class _Batch:
    """Several remote approvals asked for as one batched approval, and its answer split back.

    Only when each tool's review settings agree across them: a batch names one setting per
    tool, and a decision one remote graph refuses must not be offered for it."""

    parts: list[_Approval]
    configs: dict[Any, Any]
    """The review settings of each tool, by name."""

    @classmethod
    def of(cls, interrupts: Sequence[Interrupt]) -> _Batch | None:
        parts = [p for p in map(_Approval.of, interrupts) if p is not None]
        if len(parts) < 2:
            return None
        by_tool: dict[Any, Any] = {}
        for part in parts:
            for config in part.configs:
                name = config.get("action_name") if isinstance(config, Mapping) else None
                if by_tool.setdefault(name, config) != config:
                    return None
        return cls(parts, by_tool)

    def value(self) -> dict[str, Any]:
        actions = [action for part in self.parts for action in part.actions]
        return {"action_requests": actions, "review_configs": list(self.configs.values())}

    def split(self, answer: Any) -> dict[str, Any]:
        """Each remote interrupt's share of ``answer`` (``{"decisions": [...]}``, one per
        action, in the batch's order)."""
        decisions = answer.get("decisions") if isinstance(answer, Mapping) else None
        count = sum(len(part.actions) for part in self.parts)
        if not isinstance(decisions, list) or len(decisions) != count:
            raise ValueError(
                f"The answer to the remote sub-agent's approvals must be {{'decisions': [...]}} "
                f"with one decision for each of its {count} requests, not {answer!r}: build it "
                "with nbagents.pending_approvals(...).resume()."
            )
        shares: dict[str, Any] = {}
        start = 0
        for part in self.parts:
            mine = decisions[start : start + len(part.actions)]
            start += len(part.actions)
            shares[part.request.id] = {"decisions": mine} if part.batched else mine[0]
        return shares
