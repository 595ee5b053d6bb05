"""Deterministic OpenTelemetry ids from nbagents span ids.

The same recorded trace exported twice, or streamed live and then exported whole, gets the same
trace id and span ids, so a backend deduplicates or links them instead of showing two runs.
"""

from __future__ import annotations

import hashlib
import uuid

__all__ = ["otel_span_id", "otel_trace_id"]

_SPAN_ID_BITS = 64
_TRACE_ID_BITS = 128


def otel_trace_id(first_span_id: str) -> int:
    """A 128-bit trace id for the trace whose first span has id ``first_span_id``.

    The tracer's span ids are LangChain run ids (UUIDs): one already is a unique 128-bit
    number, so it is used as is and can be searched for in a backend. Other ids are hashed.
    """
    try:
        value = uuid.UUID(first_span_id).int
    except ValueError:
        value = 0
    return value or _hashed("trace:" + first_span_id, _TRACE_ID_BITS)


def otel_span_id(span_id: str) -> int:
    """A 64-bit span id: a hash of the nbagents span id (never 0, which OTel reads as invalid)."""
    return _hashed("span:" + span_id, _SPAN_ID_BITS)


def _hashed(text: str, bits: int) -> int:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    value = int.from_bytes(digest[: bits // 8], "big")
    return value or 1
