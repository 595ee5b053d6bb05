"""Reading LangGraph's approval interrupts, and the command that answers them.

LangChain's ``HumanInTheLoopMiddleware`` words a pause in one of two shapes (one interrupt per
model turn listing every gated call, or one interrupt per call), and the answer must match that
shape and be keyed by interrupt id when several sub-agents pause at once. This module depends on
LangGraph alone, so that tracing can read a pause the same way (``tracing/pending.py``);
:mod:`nbagents.approvals`, the public module, re-exports it and resumes a traced run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from langgraph.types import Command, Interrupt
from pydantic import TypeAdapter

__all__ = [
    "ApprovalError",
    "ApprovalRequest",
    "Approvals",
    "DecisionType",
    "allowed_by_schema",
    "pending_approvals",
]

DecisionType = Literal["approve", "edit", "reject", "respond"]
_ALL_DECISIONS: tuple[DecisionType, ...] = ("approve", "edit", "reject", "respond")


class ApprovalError(ValueError):
    """A decision that cannot be sent: not allowed for its request, or some request undecided."""


@dataclass
class ApprovalRequest:
    """One gated tool call waiting for a person: what it would do and what may be decided."""

    tool: str
    args: dict[str, Any]
    description: str
    allowed: tuple[DecisionType, ...]
    interrupt_id: str
    tool_call_id: str | None = None
    decision: dict[str, Any] | None = field(default=None, repr=False)

    def approve(self) -> None:
        """Run the tool call as the model asked."""
        self._decide({"type": "approve"})

    def edit(self, args: Mapping[str, Any] | None = None, /, **changes: Any) -> None:
        """Run the tool with other arguments: ``edit(target="staging")`` changes one argument
        and keeps the rest; ``edit({...})`` replaces them all."""
        new_args = {**(self.args if args is None else args), **changes}
        self._decide({"type": "edit", "edited_action": {"name": self.tool, "args": new_args}})

    def reject(self, message: str | None = None) -> None:
        """Do not run the tool; the agent is told it was rejected (and why, given a message)."""
        decision: dict[str, Any] = {"type": "reject"}
        if message:
            decision["message"] = message
        self._decide(decision)

    def respond(self, message: str) -> None:
        """Do not run the tool; ``message`` is given to the agent as the tool's result."""
        self._decide({"type": "respond", "message": message})

    def _decide(self, decision: dict[str, Any]) -> None:
        kind = decision["type"]
        if kind not in self.allowed:
            raise ApprovalError(
                f"{kind!r} is not allowed for the {self.tool!r} call; allowed: "
                f"{', '.join(self.allowed)}."
            )
        self.decision = decision

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        state = self.decision["type"] if self.decision else "undecided"
        return f"{self.tool}({args})  [{'/'.join(self.allowed)}]  {state}"


@dataclass(frozen=True)
class _Pause:
    """One interrupt and how its answer is shaped."""

    interrupt_id: str
    batched: bool
    requests: tuple[ApprovalRequest, ...]


class Approvals(tuple[ApprovalRequest, ...]):
    """The pending requests of a paused run, in the order the run reported them."""

    _pauses: tuple[_Pause, ...]

    def __new__(cls, pauses: Sequence[_Pause]) -> Approvals:
        made = super().__new__(cls, [r for pause in pauses for r in pause.requests])
        made._pauses = tuple(pauses)
        return made

    def approve_all(self) -> None:
        """Approve every request that has no decision yet."""
        for request in self:
            if request.decision is None:
                request.approve()

    def resume(self) -> Command[Any]:
        """The command that continues the run with every decision: ``agent.invoke(it, config)``
        on the same thread (``config``) the run paused on."""
        undecided = [str(r) for r in self if r.decision is None]
        if undecided:
            raise ApprovalError(
                f"{len(undecided)} request(s) have no decision yet: " + "; ".join(undecided)
            )
        answers: dict[str, Any] = {}
        for pause in self._pauses:
            decisions = [r.decision for r in pause.requests]
            answers[pause.interrupt_id] = (
                {"decisions": decisions} if pause.batched else decisions[0]
            )
        return Command(resume=answers)

    def __repr__(self) -> str:
        if not self:
            return "<Approvals: nothing pending>"
        lines = [f"<Approvals: {len(self)} pending>"]
        lines += [f"  [{i}] {request}" for i, request in enumerate(self)]
        return "\n".join(lines)


def pending_approvals(paused: Any) -> Approvals:
    """The approval requests of a paused run.

    ``paused`` is what ``invoke``/``ainvoke`` returned (a dict with ``"__interrupt__"``), a
    state snapshot (``agent.get_state(config)``, whose ``interrupts`` hold them), or a list of
    ``Interrupt``. Interrupts that are not approval requests are left out: answer those as
    their own code expects. An empty result means the run is not waiting for approval.
    """
    pauses = [pause for pause in map(_read, _interrupts(paused)) if pause is not None]
    return Approvals(pauses)


def _interrupts(paused: Any) -> list[Interrupt]:
    if isinstance(paused, Mapping):
        found = paused.get("__interrupt__", ())
    elif hasattr(paused, "interrupts"):
        found = paused.interrupts
    elif isinstance(paused, Sequence) and not isinstance(paused, str | bytes):
        found = paused
    else:
        raise TypeError(
            "pending_approvals() takes what invoke() returned, a state snapshot or a list of "
            f"Interrupt, not {type(paused).__name__}."
        )
    return [i for i in found if isinstance(i, Interrupt)]


def _read(interrupt: Interrupt) -> _Pause | None:
    value = interrupt.value
    if not isinstance(value, Mapping):
        return None
    # HumanInTheLoopMiddleware(interrupt_mode="per_call") pauses once per call, its decisions
    # in the response schema; the batched mode lists every call with their review configs.
    per_call = value.get("type") == "tool_approval"
    actions = [value] if per_call else value.get("action_requests")
    if not isinstance(actions, list):
        return None
    configs = {c.get("action_name"): c for c in value.get("review_configs") or []}
    requests = tuple(
        ApprovalRequest(
            tool=str(action.get("name", "")),
            args=dict(action.get("args") or {}),
            description=str(action.get("description", "")),
            allowed=allowed_by_schema(interrupt.response_schema)
            if per_call
            else _allowed(configs.get(action.get("name"), {}).get("allowed_decisions")),
            interrupt_id=interrupt.id,
            tool_call_id=action.get("tool_call_id") if per_call else None,
        )
        for action in actions
    )
    return _Pause(interrupt.id, batched=not per_call, requests=requests)


def _allowed(names: Any) -> tuple[DecisionType, ...]:
    if not names:
        return _ALL_DECISIONS
    return tuple(cast(DecisionType, n) for n in names if n in _ALL_DECISIONS)


def allowed_by_schema(schema: Any) -> tuple[DecisionType, ...]:
    """The decisions a per-call approval accepts, read from its response schema.

    The per-call interrupt carries them as a schema, not a list: the "type" constants of its
    branches, in the JSON schema LangGraph publishes to clients (or a type that makes one)."""
    if schema is None:
        return _ALL_DECISIONS
    try:
        json_schema = schema if isinstance(schema, dict) else TypeAdapter(schema).json_schema()
    except Exception:  # an unreadable schema: offer every decision; LangGraph checks the answer
        return _ALL_DECISIONS
    found = set(_type_constants(json_schema))
    return tuple(t for t in _ALL_DECISIONS if t in found) or _ALL_DECISIONS


def _type_constants(schema: Any) -> Iterator[str]:
    if isinstance(schema, Mapping):
        kind = schema.get("properties", {}).get("type", {})
        if isinstance(kind, Mapping) and isinstance(kind.get("const"), str):
            yield kind["const"]
        for value in schema.values():
            yield from _type_constants(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _type_constants(value)
