"""Pauses in a trace: what a paused run waits for, and continuing its spans when it resumes.

When a run pauses (``interrupt_on``, or a graph's own ``interrupt(...)``), LangGraph raises
``GraphInterrupt`` through every run between the pause and the root, carrying the interrupts.
The tracer records a pause as ``interrupted`` with no error text, and puts each pending request
on the nearest visible span the interrupt passed (the sub-agent whose tool call waits, or the
agent itself): ``span.attributes["pending"]``, a list of :class:`PendingRequest`. The views
show them there, and the live view answers them. A resumption of the thread clears them.

A resumed run is one trace with its pause. Resumed on the same LangGraph thread, LangGraph
starts the paused runs again: a new root, the same ``task`` tool calls (same tool call ids) and
the same sub-agents, which carry on from their checkpoints. Recorded naively that is a second
tree beside the first, with every paused sub-agent spawned twice. Instead the tracer asks
:class:`PausedSpans`, at each agent, ``task`` and sub-agent start, whether the span the pause
left is waiting for it, and if so reopens that span: the tree continues where it stopped. Keys:
a root is found by its thread and the agent object that ran it; a ``task`` by its thread, step
and tool call id; a sub-agent by the ``task`` span it runs under.

Answering a pause and running the resumption is not tracing's: see :mod:`nbagents.approvals`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict

from langgraph.types import Command, Interrupt

from nbagents._interrupts import pending_approvals
from nbagents.tracing._jsonready import jsonready
from nbagents.tracing.model import Span

if TYPE_CHECKING:
    from nbagents.tracing._runs import RunFrame
    from nbagents.tracing.model import Trace

__all__ = [
    "AGENT",
    "APPROVALS",
    "PENDING",
    "THREAD",
    "PausedSpans",
    "PendingRequest",
    "is_pause",
    "is_resume",
    "pending_requests",
    "thread_of",
    "waiting_root",
    "waiting_thread",
]

PENDING: Final = "pending"
"""Span attribute: the requests a paused run waits for at this span."""
APPROVALS: Final = "approvals"
"""Span attribute: the requests a resumption answered here, each with its ``decision``."""
THREAD: Final = "thread_id"
"""Root span attribute: the LangGraph thread the run is on (what a resume must name)."""
AGENT: Final = "agent_ref"
"""Root span attribute: which agent object ran the run in this process (``main-3``), for a
resumption from the trace; agents built by ``create_deep_agent`` have one."""


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


# -- recording a pause -----------------------------------------------------------------------------


def is_pause(error: BaseException) -> bool:
    """``error`` is LangGraph's ``GraphInterrupt`` (matched by name: subclasses vary by version)."""
    return any(cls.__name__ == "GraphInterrupt" for cls in type(error).__mro__)


def pending_requests(error: BaseException) -> list[PendingRequest]:
    """The requests a ``GraphInterrupt`` carries, approvals read as ``pending_approvals`` does."""
    found = error.args[0] if error.args else ()
    if not isinstance(found, list | tuple):
        return []
    requests: list[PendingRequest] = []
    for interrupt in (i for i in found if isinstance(i, Interrupt)):
        approvals = list(pending_approvals([interrupt]))
        for position, approval in enumerate(approvals or [None]):
            requests.append(
                PendingRequest(
                    interrupt_id=interrupt.id,
                    position=position,
                    kind="interrupt" if approval is None else "approval",
                    tool="" if approval is None else approval.tool,
                    args={} if approval is None else jsonready(approval.args),
                    description="" if approval is None else approval.description,
                    allowed=[] if approval is None else list(approval.allowed),
                    value=jsonready(interrupt.value) if approval is None else None,
                )
            )
    return requests


def waiting_root(trace: Trace) -> Span | None:
    """The root span of the trace's last run, if that run is paused."""
    roots = trace.visible_roots()
    last = roots[-1] if roots else None
    paused = last is not None and last.status == "interrupted" and last.error is None
    return last if paused else None


def waiting_thread(trace: Trace) -> str | None:
    """The thread of the trace's paused run, if its last run is paused on one."""
    root = waiting_root(trace)
    return None if root is None else root.typed_attributes().get(THREAD)


# -- continuing it ---------------------------------------------------------------------------------


def is_resume(inputs: Any) -> bool:
    """A root run started with ``Command(resume=...)``: it continues a pause. New input on the
    same thread is a new run, even while a pause is pending."""
    return isinstance(inputs, Command) and inputs.resume is not None


def thread_of(metadata: Mapping[str, Any]) -> str | None:
    """The LangGraph thread a run belongs to (LangChain copies it from the config's
    ``configurable`` into every run's metadata)."""
    thread = metadata.get("thread_id")
    return str(thread) if thread not in (None, "") else None


class PausedSpans:
    """What the tracer keeps about pauses: the requests it placed on spans, and the spans ended
    ``interrupted`` on a thread, waiting for that thread to be resumed.

    Not thread-safe by itself: the tracer calls it under the trace's lock.
    """

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str, str], Span] = {}
        self._keys: dict[str, tuple[str | None, str]] = {}
        """span id → (thread, key) under which a pause leaves it for its resumption."""
        self._placed: set[str] = set()
        """Interrupt ids whose requests are on a span."""
        self._holding: dict[str | None, list[Span]] = {}
        """Spans holding pending requests, by the thread of their run."""

    def resumable(self, span: Span, thread: str | None, key: str) -> None:
        """If ``span`` ends paused, a resumption of ``thread`` may continue it under ``key``."""
        self._keys[span.id] = (thread, key)

    def ended(self, span: Span) -> None:
        """``span`` ended: if paused and resumable, it waits for its thread's resumption."""
        found = self._keys.get(span.id)
        if span.status != "interrupted" or found is None:
            return
        thread, key = found
        if thread is not None and span.kind in ("agent", "task", "subagent"):
            self._waiting[(thread, span.kind, key)] = span

    def resume(self, thread: str | None, kind: str, key: str, now: float) -> Span | None:
        """The span to continue instead of opening a new one, reopened, or ``None``."""
        span = None if thread is None else self._waiting.pop((thread, kind, key), None)
        if span is None:
            return None
        pauses: list[list[float]] = span.attributes.setdefault("paused", [])
        pauses.append([span.end if span.end is not None else now, now])
        span.status = "running"
        span.end = None
        span.error = None
        return span

    def place(self, run: RunFrame, error: BaseException) -> None:
        """Put what the pause ``error`` waits for on the nearest visible span it passed, once."""
        requests = [r for r in pending_requests(error) if r["interrupt_id"] not in self._placed]
        if not requests:
            return
        frame: RunFrame | None = run
        while frame is not None and frame.span.hidden:
            frame = frame.parent
        if frame is None:
            return
        frame.span.attributes.setdefault(PENDING, []).extend(requests)
        self._placed.update(r["interrupt_id"] for r in requests)
        root = frame
        while root.parent is not None:
            root = root.parent
        self._holding.setdefault(root.span.attributes.get(THREAD), []).append(frame.span)

    def answered(self, thread: str | None, resume: Any = None) -> None:
        """Resuming a thread answers what it waited for (what is left unanswered pauses again).

        Each request moves to the span's ``approvals`` with the decision ``resume`` (the
        ``Command(resume=...)`` value) gave it, so the agent's transcript shows the approval
        where it happened.
        """
        for span in self._holding.pop(thread, ()):
            requests = span.attributes.pop(PENDING, ())
            for request in requests:
                self._placed.discard(request["interrupt_id"])
                answered = {**request, **_decision(resume, request, len(requests))}
                span.attributes.setdefault(APPROVALS, []).append(answered)


def _decision(resume: Any, request: Mapping[str, Any], count: int) -> dict[str, Any]:
    """What ``resume`` answered to ``request``: ``decision`` (``approve``, ``edit``, …) and,
    when given, the ``message`` or edited arguments; ``answer`` for a plain interrupt."""
    answer = resume.get(request["interrupt_id"]) if isinstance(resume, Mapping) else None
    if answer is None and not isinstance(resume, Mapping) and count == 1:
        answer = resume  # one interrupt resumed with its value alone
    if isinstance(answer, Mapping) and isinstance(answer.get("decisions"), list):
        decisions = answer["decisions"]
        position = int(request.get("position", 0))
        answer = decisions[position] if position < len(decisions) else None
    if request.get("kind") != "approval":
        return {"decision": "answered", "answer": jsonready(answer)}
    if not isinstance(answer, Mapping):
        return {"decision": "answered"}
    out: dict[str, Any] = {"decision": str(answer.get("type") or "answered")}
    if answer.get("message"):
        out["message"] = str(answer["message"])
    edited = answer.get("edited_action")
    if isinstance(edited, Mapping):
        out["edited_args"] = jsonready(edited.get("args"))
    return out
