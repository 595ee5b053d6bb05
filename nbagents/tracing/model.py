"""The trace data model: ``Trace``, the spans of a run in a parent/child tree.

Plain data only: views render it, the tracer fills it, JSON stores it. ``Span``,
``AgentRecord`` and the failure count are re-exported here, where nbagents imports them from.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Callable, Container, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nbagents._guard import Guard
from nbagents._tokens import TokenUsage
from nbagents.tracing._attributes import SpanAttributes
from nbagents.tracing._failures import count_failures, trace_failures
from nbagents.tracing._lock import TraceLock
from nbagents.tracing._records import AgentRecord, SubAgentRecord, agent_records
from nbagents.tracing.span import STREAMED, STREAMED_CHARS, Span, SpanKind, SpanStatus, call_order

if TYPE_CHECKING:
    import graphviz
    import pandas as pd

    from nbagents.cost import Prices
    from nbagents.tracing._tracer import Tracer
    from nbagents.tracing._transcript import Transcript, TranscriptMatch

__all__ = [
    "STREAMED",
    "STREAMED_CHARS",
    "AgentRecord",
    "Span",
    "SpanAttributes",
    "SpanKind",
    "SpanStatus",
    "SubAgentRecord",
    "TokenUsage",
    "Trace",
    "call_order",
    "count_failures",
]


Listener = Callable[["Trace"], None]
Applier = Callable[[float, Callable[..., None], tuple[Any, ...]], None]
"""Applies one queued event: ``apply(when, event, args)``."""


class Trace:
    """A recorded run: every span, in a parent/child tree. Thread-safe to read while it grows.

    Build one with ``nbagents.trace()`` or ``Tracer``; load one with ``Trace.load``.
    """

    def __init__(self, spans: list[Span] | None = None, *, title: str = "") -> None:
        self._spans: dict[str, Span] = {}
        self._children: dict[str | None, list[str]] = {}
        self._lock = TraceLock()
        self._listeners: tuple[Listener, ...] = ()
        """Replaced whole, never changed in place: every callback reads it, without the lock."""
        self._listener_guard = Guard("A trace listener failed: {name}; the run goes on.")
        self.title = title
        self.finished = False
        """True once the traced block or run has ended."""
        self._recorder: Tracer | None = None
        self._queued: deque[tuple[Applier, float, Callable[..., None], tuple[Any, ...]]] = deque()
        """Events a tracer took down and the trace has not applied yet (see ``_catch_up``)."""
        self._applying: int | None = None
        """The thread applying queued events, if one is: it tells no listener, who heard of
        each event when it was queued (and a listener that reads would be called inside)."""
        for span in spans or []:
            self.add(span)

    # -- building (the tracer calls these) -----------------------------------------------------

    def _catch_up(self) -> None:
        """Apply the events the tracer queued, in order: every read starts here, so a reader
        sees the trace as it is (``nbagents.tracing._tracer`` says why they wait)."""
        queued = self._queued
        if not queued:
            return
        with self._lock:
            if self._applying is not None:  # applying an event reads the trace too
                return
            self._applying = threading.get_ident()
            try:
                while queued:
                    apply, at, event, args = queued.popleft()
                    apply(at, event, args)
            finally:
                self._applying = None

    def add(self, span: Span) -> None:
        """Add a span (its parent may come later) and tell the listeners. For tracers."""
        self._catch_up()  # after what a tracer took down before it
        with self._lock:
            if span.id in self._spans:
                raise ValueError(f"A span with id {span.id!r} is already in the trace.")
            self._spans[span.id] = span
            self._children.setdefault(span.parent_id, []).append(span.id)
        self.changed()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(trace)`` after every change (on the run's thread, one event at a
        time: keep it cheap); returns a function that unsubscribes."""
        with self._lock:
            self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            with self._lock:
                kept = list(self._listeners)
                if listener in kept:
                    kept.remove(listener)
                self._listeners = tuple(kept)

        return unsubscribe

    def changed(self) -> None:
        """Tell listeners the trace changed. A failing listener never breaks the traced run."""
        if self._applying is not None and self._applying == threading.get_ident():
            return
        for listener in self._listeners:
            self._listener_guard.run(listener, self)

    @property
    def recorder(self) -> Tracer | None:
        """The :class:`~nbagents.Tracer` writing this trace (the last one made for it), or
        ``None`` for a trace built or loaded by hand: a resumed run continues with it."""
        return self._recorder

    @property
    def lock(self) -> TraceLock:
        """Hold it to read several spans consistently while the run goes on."""
        return self._lock

    # -- reading -------------------------------------------------------------------------------

    @property
    def spans(self) -> list[Span]:
        """Every span, in the order they started."""
        self._catch_up()
        with self._lock:
            return list(self._spans.values())

    def spans_from(self, start: int) -> list[Span]:
        """The spans after the first ``start``, in the order they started: with ``len(trace)``
        remembered, a reader takes only what was added since it last looked."""
        self._catch_up()
        with self._lock:
            return list(itertools.islice(self._spans.values(), start, None))

    def __len__(self) -> int:
        self._catch_up()
        return len(self._spans)

    def __iter__(self) -> Iterator[Span]:
        return iter(self.spans)

    def get(self, span_id: str) -> Span:
        """The span with this id (``KeyError`` if none)."""
        self._catch_up()
        return self._spans[span_id]

    def __contains__(self, span: object) -> bool:
        """Whether a span, or a span with this id, is in the trace."""
        self._catch_up()
        return (span.id if isinstance(span, Span) else span) in self._spans

    @property
    def roots(self) -> list[Span]:
        """Spans with no parent: one per traced run."""
        return self.children(None)

    def children(self, span: Span | str | None) -> list[Span]:
        """Direct children of ``span`` (all of them, hidden plumbing included), in call order."""
        key = span.id if isinstance(span, Span) else span
        self._catch_up()
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
        """Every span depth first, in call order: the same for equal runs (``spans`` is not)."""
        with self._lock:
            return [span for root in self.roots for span in (root, *self.descendants(root))]

    def descendants(self, span: Span) -> Iterator[Span]:
        """Every span under ``span``, depth first in call order (hidden plumbing included)."""
        for child in self.children(span):
            yield child
            yield from self.descendants(child)

    def parent(self, span: Span) -> Span | None:
        """The span ``span`` ran under, or ``None`` for a root."""
        self._catch_up()
        return self._spans.get(span.parent_id) if span.parent_id else None

    def ancestors(self, span: Span) -> Iterator[Span]:
        """The spans ``span`` ran under, nearest first."""
        while (parent := self.parent(span)) is not None:
            yield parent
            span = parent

    @property
    def status(self) -> SpanStatus:
        """``running`` while any root runs, ``error`` if any root failed, ``limit`` if a
        run-wide limit stopped one, else the last root's (a run paused and then resumed in the
        same block ends ``ok``)."""
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
        return sum((s.usage for s in self.spans if s.kind == "model"), TokenUsage())

    def own_spans(self, agent_span: Span) -> list[Span]:
        """The steps of this agent span itself, not of the sub-agents it spawned: the one
        definition of an agent's own scope, for its tokens, its cost and its transcript."""
        out: list[Span] = []
        stack = list(self.children(agent_span))
        while stack:
            span = stack.pop()
            if span.kind in ("agent", "subagent"):
                continue
            out.append(span)
            stack.extend(self.children(span))
        return out

    def own_model_spans(self, agent_span: Span) -> list[Span]:
        """The model calls among :meth:`own_spans`."""
        return [span for span in self.own_spans(agent_span) if span.kind == "model"]

    def own_usage(self, agent_span: Span) -> TokenUsage:
        """Tokens of the model calls that belong to this agent span itself (not sub-agents)."""
        return sum((span.usage for span in self.own_model_spans(agent_span)), TokenUsage())

    def usage_including_descendants(self, span: Span) -> TokenUsage:
        """Tokens of ``span`` and of every model call under it, sub-agents' included."""
        spans = (span, *self.descendants(span))
        return sum((s.usage for s in spans if s.kind == "model"), TokenUsage())

    def agents(self) -> list[AgentRecord]:
        """The run's agents as one tree: each run's main agent, with the agents under it."""
        return agent_records(self)

    @property
    def subagents(self) -> list[AgentRecord]:
        """One record per sub-agent spawn, in call order (the same for equal runs)."""
        return [r for top in self.agents() for r in top.walk() if r.kind == "subagent"]

    # -- transcripts ---------------------------------------------------------------------------

    def transcript(self, agent: Any = None) -> Transcript:
        """What one agent saw and said, in order: a sequence of LangChain messages with
        ``.entries`` (turns, tokens, approvals, links to sub-agents' transcripts) and
        ``.to_markdown()``. ``agent``: the main agent when omitted, else a ``SubAgentRecord``,
        a span (an agent's, or any step of one), a span id, or an agent's name when unique.
        """
        from nbagents.tracing._transcript_read import find_agent_span, transcript_of

        return transcript_of(self, find_agent_span(self, agent))

    def transcripts(self) -> list[Transcript]:
        """Every agent's transcript: each run's agent, then every spawn, in call order."""
        from nbagents.tracing._transcript_read import transcript_of

        with self._lock:
            return [transcript_of(self, s) for s in self.walk() if s.kind in ("agent", "subagent")]

    def search(self, text: str) -> list[TranscriptMatch]:
        """Where ``text`` occurs (case-insensitive) in any message of any agent's transcript:
        each match names the transcript (which agent), the entry (which turn) and a snippet."""
        return [m for t in self.transcripts() for m in t.find(text)]

    # -- exports -------------------------------------------------------------------------------

    def token_usage(
        self,
        per: Literal["agent", "spawn"] = "agent",
        *,
        cost: bool = False,
        prices: Prices | None = None,
    ) -> pd.DataFrame:
        """Tokens per agent (main and each sub-agent type), or per spawn with ``per="spawn"``.

        ``total_tokens_incl_descendants`` counts every step under a type's spawns once (a
        researcher inside a researcher is in that one's total), so no row exceeds the run's
        total. ``reasoning_tokens`` (part of ``output_tokens``) appears when a call reported
        some. ``cost=True`` or ``prices`` adds ``cost``, ``cost_incl_descendants`` and
        ``unknown_models`` (see :func:`nbagents.tracing.cost.trace_cost`).
        """
        if cost or prices is not None:
            from nbagents.tracing.cost import trace_cost

            return trace_cost(self, prices, per)
        from nbagents.tracing._frames import token_usage_frame

        return token_usage_frame(self, per)

    def todos(self) -> pd.DataFrame:
        """Each agent's plan (its latest todo list): a row per item with its ``status`` and
        when it was ``added``, ``started`` and ``finished`` (seconds since the trace began)."""
        from nbagents.tracing._frames import todos_frame

        return todos_frame(self)

    def summarizations(self) -> pd.DataFrame:
        """A row per summarization: messages folded, context tokens before and after, where
        the folded history was saved, and the summary."""
        from nbagents.tracing._frames import summarizations_frame

        return summarizations_frame(self)

    def memory(self) -> pd.DataFrame:
        """A row per memory file (``AGENTS.md``) an agent loaded, with its size."""
        from nbagents.tracing._frames import memory_frame

        return memory_frame(self)

    def tool_usage(
        self, per: Literal["tool", "agent", "call"] = "tool", *, prices: Prices | None = None
    ) -> pd.DataFrame:
        """Calls, agents, failures, time and the asking turns' tokens and cost per tool (or per
        tool and agent, or per call): see :func:`nbagents.tracing.tools.tool_usage_frame`."""
        from nbagents.tracing.tools import tool_usage_frame

        return tool_usage_frame(self, per, prices)

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

    def to_chrome_trace(self, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """The trace in the Chrome trace event format (ui.perfetto.dev, chrome://tracing): a
        track per agent, its model, tool and ``task`` calls as nested slices. Returns the JSON
        object; with ``path``, also writes it there (UTF-8)."""
        import json

        from nbagents.tracing._chrome import chrome_trace

        data = chrome_trace(self)
        if path is not None:
            Path(path).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        return data

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the trace to ``path`` as JSON (UTF-8); ``Trace.load`` reads it back."""
        Path(path).write_text(self.to_json(indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Trace:
        """Read a trace ``save`` wrote; ``TraceFormatError`` names the file if it is not one."""
        from nbagents.tracing._jsonio import TraceFormatError

        file = Path(path)
        try:
            return cls.from_json(file.read_text(encoding="utf-8"))
        except UnicodeDecodeError as error:
            raise TraceFormatError(f"{file}: not a text file ({error}).") from error
        except TraceFormatError as error:
            raise TraceFormatError(f"{file}: {error}") from error

    def to_html(self) -> str:
        """A self-contained static HTML view (inline CSS, no network, readable without JS)."""
        from nbagents.display import trace_html

        return trace_html(self)

    def to_graphviz(self) -> graphviz.Digraph:
        """A ``graphviz.Digraph`` of agents and spawns; edges carry the task and its tokens."""
        from nbagents.display import trace_graphviz

        return trace_graphviz(self)

    def _repr_mimebundle_(
        self, include: Container[str] | None = None, exclude: Container[str] | None = None
    ) -> dict[str, str]:
        """What Jupyter shows: the static HTML snapshot and the one-line summary."""
        from nbagents._notebook import trace_bundle

        return trace_bundle(self, include, exclude)

    def failures(self) -> int:
        """How many failures the run had (the views' "failed" count): each once, where it
        started, not again on the steps it failed on its way up (see :func:`count_failures`)."""
        return trace_failures(self)

    def summary(self) -> str:
        """One line: status, agents, spawns, failures, tokens."""
        # Counted, not read from ``subagents``: building its records is slow for a wide run.
        spawns = sum(1 for s in self.spans if s.kind == "subagent")
        tokens = self.total_usage().total
        roots = self.visible_roots()
        agents = ", ".join(sorted({r.name for r in roots})) or "no run"
        failures = self.failures()
        failed = f"; {failures} failed" if failures else ""
        return (
            f"<Trace {self.status}: {agents}; {spawns} sub-agent spawn(s){failed}; "
            f"{tokens} tokens; {len(self)} spans>"
        )

    def __repr__(self) -> str:
        return self.summary()
