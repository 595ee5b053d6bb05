"""The trace data model: spans in a parent/child tree, and the per-spawn sub-agent records.

Plain data only: views render it, the tracer fills it, JSON stores it.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Container, Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nbagents._guard import Guard
from nbagents._tokens import TokenUsage

if TYPE_CHECKING:
    import graphviz
    import pandas as pd

    from nbagents.tracing._tracer import Tracer

__all__ = [
    "STREAMED",
    "STREAMED_CHARS",
    "Span",
    "SpanKind",
    "SpanStatus",
    "SubAgentRecord",
    "TokenUsage",
    "Trace",
    "count_failures",
]

SpanKind = Literal["agent", "subagent", "task", "skill", "model", "tool", "chain"]
SpanStatus = Literal["running", "ok", "error", "interrupted", "limit"]
"""``limit``: stopped by one of its limits (model calls, tokens, cost, seconds), not a failure."""

STREAMED = "streamed"
"""A model call's attribute holding the reply as it streams (its last ``STREAMED_CHARS``);
dropped when the call ends and the reply is in ``outputs``."""
STREAMED_CHARS = 20_000


@dataclass
class Span:
    """One step of a run: an agent, a sub-agent, a ``task`` call, a model call or a tool call.

    ``start``/``end`` are seconds since the trace began. ``hidden`` marks LangGraph plumbing
    (node wrappers, middleware hooks) that views fold away; it stays in the data.
    ``inputs``/``outputs`` hold JSON-ready data (messages as dicts, not only strings).
    """

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
    """``running``, ``ok``, ``error``, or ``interrupted`` (paused for a human, or stopped with
    its agent)."""
    error: str | None = None
    """What failed (``"ValueError: boom"``); ``None`` unless the step failed or was stopped."""
    inputs: Any = None
    """What the step was given, as bounded JSON data."""
    outputs: Any = None
    """What the step returned, as bounded JSON data."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    """Tokens of a model call (zero for other kinds: see ``Trace.own_usage`` for an agent's)."""
    model: str | None = None
    """The model a model call named, as the provider reported it."""
    hidden: bool = False
    """LangGraph plumbing (node wrappers, middleware hooks) that views fold away."""
    attributes: dict[str, Any] = field(default_factory=dict)
    """Kind-specific facts: a task's ``description``/``subagent_type``/``tool_call_id``, a
    sub-agent's state diff (``withheld``, ``passed``, ``returned``), the order of a parallel call
    in its message (``call_index``)."""

    @property
    def duration(self) -> float | None:
        """Seconds from start to end; ``None`` while the step runs."""
        return None if self.end is None else self.end - self.start

    def to_dict(self) -> dict[str, Any]:
        """The span as JSON-ready data, as the trace file stores it. Values are the span's own,
        not copies: encode them while the trace's lock is held if the run may still change them."""
        data = {name: getattr(self, name) for name in _SPAN_FIELDS}
        data["usage"] = asdict(self.usage)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Span:
        """The span ``to_dict`` gave; keys this version does not know are ignored."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["usage"] = TokenUsage(**(data.get("usage") or {}))
        return cls(**values)


_SPAN_FIELDS = tuple(f.name for f in fields(Span))


@dataclass(frozen=True)
class SubAgentRecord:
    """One spawn of a sub-agent: what it was asked, what it cost, what it was (not) given."""

    span_id: str
    """The id of the sub-agent's span."""
    type: str
    """The sub-agent's type (its spec's name): ``"researcher"``, ``"general-purpose"``, …"""
    description: str
    """The task it was given (the ``task`` tool's ``description``)."""
    parent_agent: str
    """The name of the agent that spawned it."""
    depth: int
    """1 for a sub-agent of the main agent, one more per level of nesting."""
    start: float
    """Seconds since the trace began."""
    end: float | None
    """Seconds since the trace began; ``None`` while it runs."""
    status: SpanStatus
    """Its span's status."""
    result: str | None
    """The text it returned to its parent; ``None`` until it did."""
    tokens_own: TokenUsage
    """Tokens of its own model calls (not of the sub-agents it spawned)."""
    tokens_total: TokenUsage
    """Tokens of the sub-agent and every sub-agent it spawned, recursively."""
    withheld: Mapping[str, str]
    """Parent state keys withheld from the sub-agent → their size (``{"messages": "12 items"}``)."""
    passed: Mapping[str, str]
    """Parent state keys given to the sub-agent → their size."""
    returned: tuple[str, ...]
    """State keys the sub-agent sent back to the parent (besides its one ToolMessage)."""
    error: str | None = None
    """Why the spawn failed; ``None`` unless it did."""
    task_span_id: str | None = None
    """The id of the ``task`` call that spawned it."""

    @property
    def duration(self) -> float | None:
        """Seconds the sub-agent ran; ``None`` while it runs."""
        return None if self.end is None else self.end - self.start

    @property
    def result_preview(self) -> str:
        """The result on one line, cut to 80 characters."""
        text = " ".join((self.result or "").split())
        return text if len(text) <= 80 else text[:79] + "…"


Listener = Callable[["Trace"], None]
Costing = Callable[["Trace", Any, Literal["agent", "spawn"]], "pd.DataFrame"]
"""``trace_cost(trace, prices, per)``: token usage with cost columns."""
_costing: Costing | None = None


def cost_token_usage_with(costing: Costing) -> None:
    """Let ``Trace.token_usage(cost=True)`` price its rows with ``costing``.

    Prices belong to ``nbagents.export``, a layer above tracing: export registers its
    ``trace_cost`` here rather than tracing importing it.
    """
    global _costing
    _costing = costing


class Trace:
    """A recorded run: every span, in a parent/child tree. Thread-safe to read while it grows.

    Build one with ``nbagents.trace()`` or ``Tracer``; load one with ``Trace.load``.
    """

    def __init__(self, spans: list[Span] | None = None, *, title: str = "") -> None:
        self._spans: dict[str, Span] = {}
        self._children: dict[str | None, list[str]] = {}
        self._lock = threading.RLock()
        self._listeners: list[Listener] = []
        self._listener_guard = Guard("A trace listener failed: {name}; the run goes on.")
        self.title = title
        self.finished = False
        """True once the traced block or run has ended."""
        self._recorder: Tracer | None = None
        for span in spans or []:
            self.add(span)

    # -- building (the tracer calls these) -----------------------------------------------------

    def add(self, span: Span) -> None:
        """Add a span (its parent may come later) and tell the listeners. For tracers."""
        with self._lock:
            if span.id in self._spans:
                raise ValueError(f"A span with id {span.id!r} is already in the trace.")
            self._spans[span.id] = span
            self._children.setdefault(span.parent_id, []).append(span.id)
        self.changed()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(trace)`` after every change; returns a function that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def changed(self) -> None:
        """Tell listeners the trace changed. A failing listener never breaks the traced run."""
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            self._listener_guard.run(listener, self)

    @property
    def recorder(self) -> Tracer | None:
        """The :class:`~nbagents.Tracer` writing this trace (the last one made for it), or
        ``None`` for a trace built or loaded by hand: a resumed run continues with it."""
        return self._recorder

    @property
    def lock(self) -> threading.RLock:
        """Hold it to read several spans consistently while the run goes on."""
        return self._lock

    # -- reading -------------------------------------------------------------------------------

    @property
    def spans(self) -> list[Span]:
        """Every span, in the order they started."""
        with self._lock:
            return list(self._spans.values())

    def spans_from(self, start: int) -> list[Span]:
        """The spans after the first ``start``, in the order they started: with ``len(trace)``
        remembered, a reader takes only what was added since it last looked."""
        with self._lock:
            return list(itertools.islice(self._spans.values(), start, None))

    def __len__(self) -> int:
        return len(self._spans)

    def __iter__(self) -> Iterator[Span]:
        return iter(self.spans)

    def get(self, span_id: str) -> Span:
        """The span with this id (``KeyError`` if none)."""
        return self._spans[span_id]

    @property
    def roots(self) -> list[Span]:
        """Spans with no parent: one per traced run."""
        return self.children(None)

    def children(self, span: Span | str | None) -> list[Span]:
        """Direct children of ``span`` (all of them, hidden plumbing included), in call order."""
        key = span.id if isinstance(span, Span) else span
        with self._lock:
            kids = [self._spans[i] for i in self._children.get(key, [])]
        return call_order(kids)

    def visible_children(self, span: Span | str | None) -> list[Span]:
        """Children as a user thinks of them: hidden plumbing spans are looked through."""
        out: list[Span] = []
        for child in self.children(span):
            if child.hidden:
                out.extend(self.visible_children(child))
            else:
                out.append(child)
        return call_order(out)

    def visible_roots(self) -> list[Span]:
        """The roots as a user thinks of them: hidden plumbing looked through."""
        return self.visible_children(None)

    def walk(self) -> list[Span]:
        """Every span depth first, in call order: the same order for equal runs.

        (``spans`` is in start order, which varies between runs for parallel siblings.)
        """
        with self._lock:
            out: list[Span] = []
            stack = list(reversed(self.roots))
            while stack:
                span = stack.pop()
                out.append(span)
                stack.extend(reversed(self.children(span)))
            return out

    def descendants(self, span: Span) -> Iterator[Span]:
        """Every span under ``span``, depth first in call order (hidden plumbing included)."""
        for child in self.children(span):
            yield child
            yield from self.descendants(child)

    def parent(self, span: Span) -> Span | None:
        """The span ``span`` ran under, or ``None`` for a root."""
        return self._spans.get(span.parent_id) if span.parent_id else None

    @property
    def status(self) -> SpanStatus:
        """``running`` while any root runs, ``error`` if any root failed, ``limit`` if a
        run-wide limit stopped one, else the last root's.

        The last root decides between ``ok`` and ``interrupted``: a run paused for a human and
        then resumed in the same block ends ``ok``.
        """
        roots = self.roots
        if any(r.status == "running" for r in roots) or (not roots and not self.finished):
            return "running"
        if any(r.status == "error" for r in roots):
            return "error"
        if any(r.status == "limit" for r in roots):
            return "limit"
        return roots[-1].status if roots else "ok"

    @property
    def duration(self) -> float:
        """Seconds from the trace's start to the last end recorded so far."""
        ends = [s.end for s in self.spans if s.end is not None]
        return max(ends, default=0.0)

    def total_usage(self) -> TokenUsage:
        """Tokens of every model call in the trace."""
        total = TokenUsage()
        for span in self.spans:
            if span.kind == "model":
                total = total + span.usage
        return total

    def own_model_spans(self, agent_span: Span) -> list[Span]:
        """The model calls of this agent span itself, not of the sub-agents it spawned.

        The one definition of an agent's own scope: ``own_usage`` sums their tokens and
        ``nbagents.export`` prices them, so tokens and costs always cover the same calls.
        """
        out: list[Span] = []
        stack = list(self.children(agent_span))
        while stack:
            span = stack.pop()
            if span.kind in ("agent", "subagent"):
                continue
            if span.kind == "model":
                out.append(span)
            stack.extend(self.children(span))
        return out

    def own_usage(self, agent_span: Span) -> TokenUsage:
        """Tokens of the model calls that belong to this agent span itself (not sub-agents)."""
        return sum((span.usage for span in self.own_model_spans(agent_span)), TokenUsage())

    def usage_including_descendants(self, span: Span) -> TokenUsage:
        """Tokens of ``span`` (if a model call) and of every model call under it, sub-agents'
        included."""
        total = span.usage if span.kind == "model" else TokenUsage()
        for d in self.descendants(span):
            if d.kind == "model":
                total = total + d.usage
        return total

    @property
    def subagents(self) -> list[SubAgentRecord]:
        """One record per sub-agent spawn, in call order (the same for equal runs)."""
        from nbagents.tracing._records import subagent_records

        return subagent_records(self)

    # -- exports -------------------------------------------------------------------------------

    def token_usage(
        self,
        per: Literal["agent", "spawn"] = "agent",
        *,
        cost: bool = False,
        prices: Any = None,
    ) -> pd.DataFrame:
        """Tokens per agent (main and each sub-agent type), or per spawn with ``per="spawn"``.

        Per agent, ``total_tokens`` adds up the spawns' own tokens, and
        ``total_tokens_incl_descendants`` counts every step under the type's spawns once: a
        spawn inside another of the same type (a researcher that delegates to a researcher) is
        in that one's total already. So no row exceeds the run's total.

        With ``cost=True`` (or ``prices``), adds ``cost``, ``cost_incl_descendants`` and
        ``unknown_models``: see :func:`nbagents.export.trace_cost`, which this calls.
        ``prices`` is what ``trace_cost`` takes: a ``PriceTable``, another ``PriceSource``, or a
        mapping of model name to price.
        """
        if cost or prices is not None:
            if _costing is None:
                raise RuntimeError("Cost needs nbagents.export: import it first.")
            return _costing(self, prices, per)
        from nbagents.tracing._frames import token_usage_frame

        return token_usage_frame(self, per)

    def to_dataframe(self) -> pd.DataFrame:
        """One row per span, depth first in call order, plumbing included (see ``hidden``)."""
        from nbagents.tracing._frames import spans_frame

        return spans_frame(self)

    def to_json(self, *, indent: int | None = None) -> str:
        """The trace as JSON text, in the versioned trace file format."""
        from nbagents.tracing._jsonio import trace_to_json

        return trace_to_json(self, indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Trace:
        """The trace ``to_json`` wrote (``TraceFormatError`` if the text is not one)."""
        from nbagents.tracing._jsonio import trace_from_json

        return trace_from_json(text)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the trace to ``path`` as JSON (UTF-8); ``Trace.load`` reads it back."""
        Path(path).write_text(self.to_json(indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Trace:
        """Read a trace ``save`` wrote; ``TraceFormatError`` names the file if it is not one."""
        from nbagents.tracing._jsonio import TraceFormatError

        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise TraceFormatError(f"{file}: not a text file ({error}).") from error
        try:
            return cls.from_json(text)
        except TraceFormatError as error:
            raise TraceFormatError(f"{file}: {error}") from error

    def to_html(self) -> str:
        """A self-contained static HTML view (inline CSS, no network, readable without JS)."""
        from nbagents.display._html import trace_html

        html: str = trace_html(self)
        return html

    def to_graphviz(self) -> graphviz.Digraph:
        """A ``graphviz.Digraph`` of agents and spawns; edges carry the task and its tokens."""
        from nbagents.display._graph import trace_graphviz

        return trace_graphviz(self)

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, str]:
        """What Jupyter shows: the static HTML snapshot and the one-line summary."""
        from nbagents._notebook import trace_bundle

        return trace_bundle(self, include, exclude)

    def failures(self) -> int:
        """How many failures the run had: the views' "failed" count.

        A failure is counted once, at the step where it started; the steps it then failed on its
        way up (the sub-agent, its ``task``, the agent, when ``on_subagent_error="raise"``) are
        marked failed but not counted again. See :func:`count_failures`.
        """
        with self._lock:
            failed = {s.id: s for s in self._spans.values() if s.status == "error" and not s.hidden}
            up: dict[str, str | None] = {}
            for sid in failed:
                parent = self._spans.get(self._spans[sid].parent_id or "")
                while parent is not None and parent.hidden:
                    parent = self._spans.get(parent.parent_id or "")
                up[sid] = parent.id if parent is not None else None
        return count_failures({sid: s.error for sid, s in failed.items()}, up)

    def summary(self) -> str:
        """One line: status, agents, spawns, failures, tokens."""
        subs = self.subagents
        tokens = self.total_usage().total
        roots = self.visible_roots()
        agents = ", ".join(sorted({r.name for r in roots})) or "no run"
        failures = self.failures()
        failed = f"; {failures} failed" if failures else ""
        return (
            f"<Trace {self.status}: {agents}; {len(subs)} sub-agent spawn(s){failed}; "
            f"{tokens} tokens; {len(self)} spans>"
        )

    def __repr__(self) -> str:
        return self.summary()


def count_failures(errors: Mapping[str, str | None], parent: Mapping[str, str | None]) -> int:
    """Failed steps (id -> error text) counted where each failure started.

    A step whose error text ends with the error of one of its failed children (``parent`` maps
    each failed step to its nearest visible parent) is that child's failure passing up:
    ``"Sub-agent 'w' failed: ValueError: boom"`` above ``"ValueError: boom"``.
    """
    below: dict[str, list[str]] = {}
    for sid, error in errors.items():
        up = parent.get(sid)
        if up is not None and error:
            below.setdefault(up, []).append(error)
    return sum(
        1
        for sid, error in errors.items()
        if not (error and any(error.endswith(child) for child in below.get(sid, ())))
    )


def call_order(spans: list[Span]) -> list[Span]:
    # Parallel siblings start in thread order, which varies from run to run; their position in
    # the AI message that called them (``batch`` + ``call_index``) does not. Ordering a batch by
    # that position, and batches by their first start, makes equal runs render identically.
    batch_start: dict[Any, float] = {}
    for span in spans:
        batch = span.attributes.get("batch")
        if batch is not None:
            batch_start[batch] = min(batch_start.get(batch, span.start), span.start)

    def key(span: Span) -> tuple[float, int, float]:
        batch = span.attributes.get("batch")
        if batch is None:
            return (span.start, 0, span.start)
        return (batch_start[batch], int(span.attributes.get("call_index", 0)), span.start)

    return sorted(spans, key=key)
