"""Which spans of a trace changed since the last look, found without copying the others.

A cheap fingerprint per span says whether it changed. A model, tool or step call that ended ok
or failed never changes again: it is read in place once and then forgotten, so most of a large
run is never looked at again. Any other span changed is handed over as a copy the tracer's
threads cannot change under the view. An agent, task or sub-agent that ended may still change
(a late result, a resumption): it is fingerprinted at every look.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbagents.tracing.model import STREAMED
from nbagents.tracing.span import set_value

if TYPE_CHECKING:
    from nbagents.tracing.model import Span, Trace

__all__ = ["SpanFingerprints", "copy_span"]

_FINAL = frozenset({"ok", "error", "limit"})
_SETTLING = frozenset({"model", "tool", "chain", "skill"})
"""Kinds the tracer never touches once they ended ok or failed (an agent, a task or a sub-agent
may still get a result, a pause or a resumption; an interrupted step may be answered)."""


class SpanFingerprints:
    """The fingerprints of the spans of one trace that may still change."""

    def __init__(self) -> None:
        self._fp: dict[str, tuple[Any, ...]] = {}
        self._seen = 0
        """How many of the trace's spans have been taken in."""
        self._open: dict[str, Span] = {}
        """Spans taken in that may still change (the trace's own objects): fingerprinted at
        every look."""

    def changed(self, trace: Trace) -> list[tuple[Span, bool]]:
        """The spans new or changed since the last call, each with whether it is final (the
        trace's own object, never to change again) or a copy. Call it under ``trace.lock``."""
        fresh = trace.spans_from(self._seen)
        self._seen += len(fresh)
        dirty: list[tuple[Span, bool]] = []
        for span in [*self._open.values(), *fresh]:
            sid = span.id
            # A call that settled changed since it was last seen (it was open, or is new): most
            # spans of a wide run are new and settled when first seen, and need no fingerprint.
            if span.end is not None and span.status in _FINAL and span.kind in _SETTLING:
                self._open.pop(sid, None)
                self._fp.pop(sid, None)
                dirty.append((span, True))
                continue
            fp = _fingerprint(span)
            if self._fp.get(sid) == fp:
                continue
            self._open[sid] = span
            self._fp[sid] = fp
            dirty.append((copy_span(span), False))
        return dirty


def _fingerprint(span: Span) -> tuple[Any, ...]:
    # What the tracer changes on a span after adding it: its end, status and results, its
    # usage, and attributes (a sub-agent's result, an agent's plan, a streaming reply). Every
    # update takes this of every open span (a finished sub-agent or task stays open), so it
    # reads the raw values: no typed read of the attributes, no JSON conversion of the outputs.
    attrs = span.attributes
    streamed = attrs.get(STREAMED)
    return (
        span.status,
        span.end,
        span.usage,
        span.model,
        span.error,
        id(set_value(span, "outputs")),
        len(attrs),
        id(attrs.get("result")),
        id(attrs.get("plan")),  # replaced, never changed in place, at each write_todos
        len(streamed) if isinstance(streamed, str) else 0,
    )


def copy_span(span: Span) -> Span:
    """A copy of ``span``, much faster than ``copy.copy`` (which goes through pickling)."""
    copied = object.__new__(type(span))
    copied.__dict__.update(span.__dict__)
    copied.attributes = dict(span.attributes)
    return copied
