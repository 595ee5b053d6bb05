"""One trace across a pause: a run resumed on the same thread continues the spans it left open.

A run that pauses for a human (``interrupt_on``) ends its root, the ``task`` calls on the way
down and their sub-agents as ``interrupted``. When it is resumed on the same LangGraph thread,
LangGraph starts those runs again: a new root, the same ``task`` tool calls (same tool call ids)
and the same sub-agents, which carry on from their checkpoints. Recorded naively that is a
second tree beside the first, with every paused sub-agent spawned twice. Instead the tracer asks
this registry, at each agent, ``task`` and sub-agent start, whether the span the pause left is
waiting for it, and if so reopens that span: the tree continues where it stopped.

Keys: a root is found by its thread; a ``task`` by its thread and tool call id; a sub-agent by
the ``task`` span it runs under.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nbagents.tracing.model import Span

__all__ = ["PausedSpans", "is_resume", "thread_of"]


def is_resume(inputs: Any) -> bool:
    """A root run started with ``Command(resume=...)``: it continues a pause. New input on the
    same thread is a new run, even while a pause is pending."""
    from langgraph.types import Command

    return isinstance(inputs, Command) and inputs.resume is not None


def thread_of(metadata: Mapping[str, Any]) -> str | None:
    """The LangGraph thread a run belongs to (LangChain copies it from the config's
    ``configurable`` into every run's metadata)."""
    thread = metadata.get("thread_id")
    return str(thread) if thread not in (None, "") else None


class PausedSpans:
    """Spans ended ``interrupted`` on a thread, waiting for that thread to be resumed.

    Not thread-safe by itself: the tracer calls it under the trace's lock.
    """

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str, str], Span] = {}

    def paused(self, span: Span, thread: str | None, key: str) -> None:
        """``span`` ended interrupted; a resumption of ``thread`` may continue it."""
        if thread is not None and span.kind in ("agent", "task", "subagent"):
            self._waiting[(thread, span.kind, key)] = span

    def resume(self, thread: str | None, kind: str, key: str, now: float) -> Span | None:
        """The span to continue instead of opening a new one, reopened, or ``None``."""
        if thread is None:
            return None
        span = self._waiting.pop((thread, kind, key), None)
        if span is None:
            return None
        pauses: list[list[float]] = span.attributes.setdefault("paused", [])
        pauses.append([span.end if span.end is not None else now, now])
        span.status = "running"
        span.end = None
        span.error = None
        return span
