"""What a paused run waits for, kept on the span where it waits.

When a run pauses (``interrupt_on``, or a graph's own ``interrupt(...)``), LangGraph raises
``GraphInterrupt`` through every run between the pause and the root, carrying the interrupts.
The tracer records a pause as ``interrupted`` with no error text, and puts each pending request
on the nearest visible span the interrupt passed (the sub-agent whose tool call waits, or the
agent itself): ``span.attributes["pending"]``, a list of :class:`PendingRequest`. The views
show them there, and the live view answers them. A resumption of the thread clears them.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from nbagents.tracing._jsonready import jsonready

__all__ = ["PENDING", "THREAD", "PendingRequest", "is_pause", "pending_requests"]

PENDING = "pending"
"""Span attribute: the requests a paused run waits for at this span."""
THREAD = "thread_id"
"""Root span attribute: the LangGraph thread the run is on (what a resume must name)."""


class PendingRequest(TypedDict):
    """One request a paused run waits for."""

    interrupt_id: str
    position: int
    """Its place among its interrupt's requests (a batched approval lists several)."""
    kind: Literal["approval", "interrupt"]
    """An approval of a gated tool call, or another ``interrupt(value)``."""
    tool: str
    args: Any
    description: str
    allowed: list[str]
    value: Any
    """The interrupt's value, for a plain ``interrupt(value)``."""


def is_pause(error: BaseException) -> bool:
    return any(cls.__name__ == "GraphInterrupt" for cls in type(error).__mro__)


def pending_requests(error: BaseException) -> list[PendingRequest]:
    """The requests a ``GraphInterrupt`` carries, approvals read as ``pending_approvals`` does."""
    from langgraph.types import Interrupt

    from nbagents.approvals import pending_approvals

    found = error.args[0] if error.args else ()
    if not isinstance(found, list | tuple):
        return []
    interrupts = [i for i in found if isinstance(i, Interrupt)]
    requests: list[PendingRequest] = []
    for interrupt in interrupts:
        approvals = list(pending_approvals([interrupt]))
        if not approvals:
            requests.append(
                PendingRequest(
                    interrupt_id=interrupt.id,
                    position=0,
                    kind="interrupt",
                    tool="",
                    args={},
                    description="",
                    allowed=[],
                    value=jsonready(interrupt.value),
                )
            )
        for position, approval in enumerate(approvals):
            requests.append(
                PendingRequest(
                    interrupt_id=interrupt.id,
                    position=position,
                    kind="approval",
                    tool=approval.tool,
                    args=jsonready(approval.args),
                    description=approval.description,
                    allowed=list(approval.allowed),
                    value=None,
                )
            )
    return requests
