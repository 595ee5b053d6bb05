"""A span, one step of a run, and the order sibling steps are shown in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final, Literal

from nbagents._tokens import NO_TOKENS, TokenUsage
from nbagents.tracing._attributes import SpanAttributes, typed_attribute, typed_attributes
from nbagents.tracing._jsonready import Deferred

__all__ = [
    "AGENT_KINDS",
    "STREAMED",
    "STREAMED_CHARS",
    "Span",
    "SpanKind",
    "SpanStatus",
    "call_order",
    "set_value",
]

SpanKind = Literal["agent", "subagent", "task", "skill", "model", "tool", "chain"]
SpanStatus = Literal["running", "ok", "error", "interrupted", "limit"]
"""``limit``: stopped by one of its limits (model calls, tokens, cost, seconds), not a failure."""
AGENT_KINDS: tuple[SpanKind, ...] = ("agent", "subagent")
"""Kinds whose span is an agent's own run."""

STREAMED: Final = "streamed"
"""A model call's attribute holding the reply as it streams (its last ``STREAMED_CHARS``);
dropped when the call ends and the reply is in ``outputs``."""
STREAMED_CHARS = 20_000


class _JsonData:
    """``Span.inputs``/``outputs``: what was set, a :class:`Deferred` made JSON-ready on read.

    A descriptor, so every reader (views, exports, the trace file, ``==``) gets the JSON data
    without knowing that the tracer kept a reference; the converted value stays in the
    ``Deferred``, which the slot keeps (nothing is written back that could race a new value).
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}"

    def __get__(self, span: Any, owner: type | None = None) -> Any:
        if span is None:
            return None  # the dataclass field's default
        value = span.__dict__.get(self._slot)
        return value.resolve() if type(value) is Deferred else value

    def __set__(self, span: Any, value: Any) -> None:
        span.__dict__[self._slot] = value


@dataclass
class Span:
    """One step of a run: an agent, a sub-agent, a ``task`` call, a model call or a tool call."""

    id: str
    """Unique in the trace: the LangChain run id, as text."""
    parent_id: str | None
    """The id of the span this one ran under; ``None`` for a root (one per traced run)."""
    kind: SpanKind
    """What the step is: an agent, a sub-agent, a ``task`` call, a model or tool call, …"""
    name: str
    """The run's name: the agent's or sub-agent's name, the tool's, the model class's."""
    agent: str
    """The name of the agent (or sub-agent) this step belongs to."""
    depth: int
    """How deep that agent is: 0 for a run's own agent, one more per agent it runs under."""
    start: float
    """Seconds since the trace began."""
    end: float | None = None
    """Seconds since the trace began; ``None`` while the step runs."""
    status: SpanStatus = "running"
    """``running``, ``ok``, ``error``, ``interrupted`` (paused for a human, or stopped with its
    agent), or ``limit`` (stopped by one of its limits)."""
    error: str | None = None
    """What failed (``"ValueError: boom"``); ``None`` unless the step failed or was stopped."""
    inputs: Any = _JsonData()
    """What the step was given, as bounded JSON data (messages as dicts, not only strings)."""
    outputs: Any = _JsonData()
    """What the step returned, as bounded JSON data."""
    usage: TokenUsage = NO_TOKENS
    """Tokens of a model call (zero for other kinds: see ``Trace.own_usage`` for an agent's)."""
    model: str | None = None
    """The model a model call named, as the provider reported it."""
    hidden: bool = False
    """LangGraph plumbing (node wrappers, middleware hooks) that views fold away; it stays in
    the data."""
    attributes: dict[str, Any] = field(default_factory=dict)
    """Kind-specific facts: a task's ``description``/``subagent_type``/``tool_call_id``, a
    sub-agent's state diff (``withheld``, ``passed``, ``returned``), the order of a parallel call
    in its message (``call_index``). :class:`SpanAttributes` names every key the tracer writes;
    read them with ``typed_attributes()``."""

    @property
    def duration(self) -> float | None:
        """Seconds from start to end; ``None`` while the step runs."""
        return None if self.end is None else self.end - self.start

    def typed_attributes(self) -> SpanAttributes:
        """``attributes`` as :class:`SpanAttributes` types them: the keys it names whose value has
        its type (a loaded trace is anyone's JSON: a value of another type is left out). The
        values are the span's own, not copies."""
        return typed_attributes(self.attributes)

    def to_dict(self) -> dict[str, Any]:
        """The span as JSON-ready data, as the trace file stores it. Values are the span's own,
        not copies: encode them while the trace's lock is held if the run may still change them."""
        data = {name: getattr(self, name) for name in _SPAN_FIELDS}
        data["usage"] = self.usage.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Span:
        """The span ``to_dict`` gave; keys this version does not know are ignored."""
        values = {k: v for k, v in data.items() if k in _SPAN_FIELDS}
        values["usage"] = TokenUsage(**(data.get("usage") or {}))
        return cls(**values)


_SPAN_FIELDS = tuple(f.name for f in fields(Span))


def set_value(span: Span, name: Literal["inputs", "outputs"]) -> Any:
    """What was last set as ``span.inputs`` or ``span.outputs``, not made JSON-ready: a reader
    that only asks whether it changed (by identity) has no conversion to pay for."""
    return span.__dict__.get(f"_{name}")


def call_order(spans: list[Span]) -> list[Span]:
    """Sibling spans in the order their agent called them.

    Parallel siblings start in thread order, which varies from run to run; their position in
    the AI message that called them (``batch`` + ``call_index``) does not. Ordering a batch by
    that position, and batches by their first start, makes equal runs render identically.
    """
    # Read typed: a loaded trace or a tool may hold anything under these names.
    batch_start: dict[str, float] = {}
    for span in spans:
        batch = typed_attribute(span.attributes, "batch")
        if batch is not None:
            batch_start[batch] = min(batch_start.get(batch, span.start), span.start)

    def key(span: Span) -> tuple[float, int, float]:
        batch = typed_attribute(span.attributes, "batch")
        if batch is None:
            return (span.start, 0, span.start)
        index = typed_attribute(span.attributes, "call_index") or 0
        return (batch_start[batch], index, span.start)

    return sorted(spans, key=key)
