"""The trace's versioned JSON format."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any, get_args

from nbagents._versioned import VersionedJSON, escape_surrogates
from nbagents.tracing.model import Span, SpanKind, SpanStatus, TokenUsage, Trace

__all__ = ["FORMAT", "VERSION", "TraceFormatError", "trace_from_json", "trace_to_json"]

FORMAT = "nbagents.trace"
VERSION = 1


class TraceFormatError(ValueError):
    """A trace file is corrupt, truncated, not a trace, or from a newer nbagents."""


_FILE = VersionedJSON(
    format=FORMAT,
    version=VERSION,
    error=TraceFormatError,
    empty="the file is empty.",
    not_json="not valid JSON{hint}: {error}",
    not_ours='not an nbagents trace (no "format": "{format}" field).',
    bad_version='the trace has no valid "version" (got {version!r}).',
    too_new=(
        "the trace has format version {version}, newer than this nbagents reads ({current}); "
        "upgrade nbagents to load it."
    ),
)


def trace_to_json(trace: Trace, *, indent: int | None = None) -> str:
    # Encoded under the lock: the dicts share the spans' values, which a running trace changes.
    with trace.lock:
        payload = {
            **_FILE.header(),
            "title": trace.title,
            "finished": trace.finished,
            "spans": [s.to_dict() for s in trace.spans],
        }
        # Inputs and outputs are made JSON-ready by the tracer; anything left is shown as text.
        text = json.dumps(payload, indent=indent, ensure_ascii=False, default=repr)
    return escape_surrogates(text)


def trace_from_json(text: str) -> Trace:
    payload = _FILE.parse(text)
    spans = payload.get("spans")
    if not isinstance(spans, list):
        raise TraceFormatError('the trace has no "spans" list.')
    trace = Trace(title=str(payload.get("title", "")))
    for position, data in enumerate(spans):
        _check_span(data, position)
        try:
            span = Span.from_dict(data)
        except (TypeError, ValueError, AttributeError) as error:
            raise TraceFormatError(f"span #{position} is malformed: {error}") from error
        if span.id in trace._spans:
            raise TraceFormatError(f"span #{position} repeats the id {span.id!r}.")
        if span.parent_id is not None and span.parent_id not in trace._spans:
            raise TraceFormatError(
                f"span #{position} ({span.id!r}) names a parent {span.parent_id!r} that is "
                f"not before it in the file."
            )
        trace.add(span)
    finished = payload.get("finished", True)
    if not isinstance(finished, bool):
        raise TraceFormatError(f'"finished" should be true or false, got {finished!r:.60}.')
    trace.finished = finished
    return trace


_NUMBER = (int, float)
_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    # name: (accepted types, may be null)
    "id": ((str,), False),
    "parent_id": ((str,), True),
    "kind": ((str,), False),
    "name": ((str,), False),
    "agent": ((str,), False),
    "depth": ((int,), False),
    "start": (_NUMBER, False),
    "end": (_NUMBER, True),
    "status": ((str,), False),
    "error": ((str,), True),
    "model": ((str,), True),
    "hidden": ((bool,), False),
    "usage": ((dict,), True),
    "attributes": ((dict,), False),
}
_OPTIONAL = {"parent_id", "end", "error", "model", "hidden", "usage", "attributes"}


def _check_span(data: Any, position: int) -> None:
    """Reject a span the views could not use, naming the field."""
    if not isinstance(data, dict):
        raise TraceFormatError(f"span #{position} is not an object (got {type(data).__name__}).")
    for name, (types, nullable) in _FIELDS.items():
        if name not in data:
            if name in _OPTIONAL:
                continue
            raise TraceFormatError(f"span #{position} has no {name!r} field.")
        value = data[name]
        if value is None and nullable:
            continue
        wrong_bool = isinstance(value, bool) and bool not in types
        if wrong_bool or not isinstance(value, types):
            expected = " or ".join(t.__name__ for t in types) + (" or null" if nullable else "")
            raise TraceFormatError(
                f"span #{position}: {name!r} should be {expected}, got {value!r:.60}."
            )
    for name in ("start", "end"):
        value = data.get(name)
        if isinstance(value, float | int) and not -MAX_SECONDS <= value <= MAX_SECONDS:
            raise TraceFormatError(f"span #{position}: {name!r} is out of range: {value!r:.60}.")
    for name in ("inputs", "outputs", "attributes"):
        if _too_deep(data.get(name)):
            raise TraceFormatError(
                f"span #{position}: {name!r} is nested more than {MAX_NESTING} levels deep."
            )
    if data["kind"] not in get_args(SpanKind):
        raise TraceFormatError(f"span #{position}: unknown kind {data['kind']!r}.")
    if data["status"] not in get_args(SpanStatus):
        raise TraceFormatError(f"span #{position}: unknown status {data['status']!r}.")
    usage = data.get("usage") or {}
    for key, value in usage.items():
        if key not in _USAGE_KEYS or not isinstance(value, int) or isinstance(value, bool):
            raise TraceFormatError(f"span #{position}: bad token usage entry {key!r}: {value!r}.")


_USAGE_KEYS = frozenset(f.name for f in fields(TokenUsage))

MAX_SECONDS = 1e9
"""Times are seconds since the trace began; anything beyond ~30 years is not a time."""
MAX_NESTING = 64
"""The tracer writes at most a dozen levels; deeper data could not be saved again or shown."""


def _too_deep(value: Any) -> bool:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_NESTING:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False
