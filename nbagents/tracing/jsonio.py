"""The trace's versioned JSON format."""

from __future__ import annotations

import json
from typing import Any

from nbagents.tracing.model import Span, Trace

__all__ = ["FORMAT", "VERSION", "TraceFormatError", "trace_from_json", "trace_to_json"]

FORMAT = "nbagents.trace"
VERSION = 1


class TraceFormatError(ValueError):
    """A trace file is corrupt, truncated, not a trace, or from a newer nbagents."""


def trace_to_json(trace: Trace, *, indent: int | None = None) -> str:
    with trace.lock:
        payload = {
            "format": FORMAT,
            "version": VERSION,
            "title": trace.title,
            "finished": trace.finished,
            "spans": [s.to_dict() for s in trace.spans],
        }
    return json.dumps(payload, indent=indent, ensure_ascii=False, default=_fallback)


def trace_from_json(text: str) -> Trace:
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        hint = " (the file looks truncated)" if error.pos >= len(text.rstrip()) - 1 else ""
        raise TraceFormatError(f"not valid JSON{hint}: {error}") from error
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise TraceFormatError(f"not an nbagents trace (no \"format\": \"{FORMAT}\" field).")
    version = payload.get("version")
    if not isinstance(version, int):
        raise TraceFormatError("the trace has no integer \"version\".")
    if version > VERSION:
        raise TraceFormatError(
            f"the trace has format version {version}, newer than this nbagents reads "
            f"({VERSION}); upgrade nbagents to load it."
        )
    spans = payload.get("spans")
    if not isinstance(spans, list):
        raise TraceFormatError("the trace has no \"spans\" list.")
    trace = Trace(title=str(payload.get("title", "")))
    for position, data in enumerate(spans):
        try:
            span = Span.from_dict(data)
        except (TypeError, ValueError, AttributeError) as error:
            raise TraceFormatError(f"span #{position} is malformed: {error}") from error
        if span.parent_id is not None and span.parent_id not in trace._spans:
            raise TraceFormatError(
                f"span #{position} ({span.id!r}) names a parent {span.parent_id!r} that is "
                f"not before it in the file."
            )
        trace.add(span)
    trace.finished = bool(payload.get("finished", True))
    return trace


def _fallback(value: Any) -> Any:
    # Inputs and outputs are made JSON-ready by the tracer; anything left is shown as text.
    return repr(value)
