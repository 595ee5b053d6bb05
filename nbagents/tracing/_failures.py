"""How many failures a run had: each counted once, where it started."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = ["count_failures", "trace_failures"]


def trace_failures(trace: Trace) -> int:
    """``Trace.failures()``: the failed visible steps, each linked to its nearest visible parent."""
    with trace.lock:
        failed = [s for s in trace.spans if s.status == "error" and not s.hidden]
        up = {s.id: next((a.id for a in trace.ancestors(s) if not a.hidden), None) for s in failed}
    return count_failures({s.id: s.error for s in failed}, up)


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
