"""Tracing: the ``Trace``/``Span`` data model, its JSON format and the callback handler."""

from nbagents.tracing._jsonio import TraceFormatError
from nbagents.tracing._recording import active_tracers, recording
from nbagents.tracing._tracer import Tracer
from nbagents.tracing._transcript import Transcript, TranscriptEntry, TranscriptMatch
from nbagents.tracing.model import (
    AgentRecord,
    Span,
    SpanAttributes,
    SubAgentRecord,
    TokenUsage,
    Trace,
)

__all__ = [
    "AgentRecord",
    "Span",
    "SpanAttributes",
    "SubAgentRecord",
    "TokenUsage",
    "Trace",
    "TraceFormatError",
    "Tracer",
    "Transcript",
    "TranscriptEntry",
    "TranscriptMatch",
    "active_tracers",
    "recording",
]
