"""Human approvals: answer a paused run without building ``Command(resume=...)`` by hand, and
resume it in the same trace.

An agent (or any sub-agent under it) with ``interrupt_on`` pauses before a gated tool call and
the run returns its pending requests under ``"__interrupt__"``. :func:`pending_approvals` reads
them into one flat list (whichever shape LangChain's ``HumanInTheLoopMiddleware`` used), takes a
decision per request, and builds the resume command::

    paused = agent.invoke(inputs, config)
    requests = pending_approvals(paused)
    print(requests)                    # which tool, which arguments, which decisions allowed
    requests[0].approve()
    requests[1].edit(target="staging")
    requests[2].reject("Not on a Friday.")
    agent.invoke(requests.resume(), config)

or, for a traced run, ``nbagents.resume(t, requests)``: the run continues the same tree.

This module is where pause and resume live, between tracing and the views: answering a pause (in
code with :func:`resume`, from the live view with :func:`answer`) and running the resumption
with the tracer that recorded the pause, shown by whatever follows the trace. The live view
registers itself as the trace's follower (:func:`follow`); nothing here imports a view. Below it,
reading the interrupts depends on LangGraph alone (``nbagents._interrupts``, re-exported here),
recording a pause is tracing's (``nbagents.tracing.pending``), and the agents of
``create_deep_agent`` note the thread they run on (``nbagents._resumable``).
"""

from __future__ import annotations

import json
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from langchain_core.runnables import Runnable, RunnableConfig

from nbagents import history
from nbagents._interrupts import (
    ApprovalError,
    ApprovalRequest,
    Approvals,
    DecisionType,
    pending_approvals,
)
from nbagents._resumable import agent_for
from nbagents.tracing import Tracer, active_tracers, recording
from nbagents.tracing.pending import AGENT, THREAD, waiting_root, waiting_thread

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = [
    "AnswerError",
    "ApprovalError",
    "ApprovalRequest",
    "Approvals",
    "DecisionType",
    "Follower",
    "answer",
    "follow",
    "follower_of",
    "pending_approvals",
    "resumable_agent",
    "resume",
]


class AnswerError(ValueError):
    """Decisions that cannot be applied to a paused run; the message says why."""


# -- who shows a resumed run -----------------------------------------------------------------------


class Follower(Protocol):
    """What shows a trace and follows the runs resumed in it: the live view."""

    def follow(self, resumption: Callable[[], Any]) -> Any:
        """Run ``resumption()`` while showing it; return what it returned."""
        ...


# Weak both ways: a view holds its trace, so a strong value would keep every trace ever shown
# alive for the kernel's lifetime.
_followers: weakref.WeakKeyDictionary[Trace, weakref.ref[Follower]] = weakref.WeakKeyDictionary()


def follow(trace: Trace, follower: Follower) -> None:
    """Make ``follower`` show the runs resumed in ``trace`` (instead of any earlier one)."""
    _followers[trace] = weakref.ref(follower)


def follower_of(trace: Trace) -> Follower | None:
    """What shows the runs resumed in ``trace``, if anything does."""
    ref = _followers.get(trace)
    return ref() if ref is not None else None


# -- the paused run --------------------------------------------------------------------------------


def resumable_agent(trace: Trace) -> Runnable[Any, Any] | None:
    """The agent that can resume ``trace``'s paused run here; ``None`` when the run is not
    paused or its agent is unknown (not built by ``create_deep_agent``, or deleted)."""
    found = _agent_of(trace)
    return found[0] if found is not None else None


def _agent_of(trace: Trace) -> tuple[Runnable[Any, Any], RunnableConfig] | None:
    # By the agent object as well as the thread: notebooks give every agent thread "1".
    root = waiting_root(trace)
    attrs = root.typed_attributes() if root is not None else {}
    thread, agent = attrs.get(THREAD), attrs.get(AGENT)
    return agent_for(thread, agent) if thread and agent else None


def _paused_agent(trace: Trace) -> tuple[Runnable[Any, Any], RunnableConfig]:
    thread = waiting_thread(trace)
    if thread is None:
        raise AnswerError("The run is not waiting for a decision any more.")
    found = _agent_of(trace)
    if found is None:
        raise AnswerError(
            f"The agent that paused on thread {thread!r} is not known here: only agents built "
            "by create_deep_agent can be resumed from the view (or it was deleted). Answer in "
            "code: nbagents.pending_approvals(...)."
        )
    return found


# -- answering it ----------------------------------------------------------------------------------


def resume(trace: Trace, decisions: Approvals) -> Any:
    """Resume the paused run recorded in ``trace`` with ``decisions``; returns its result.

    The code twin of the live view's Submit button: the run continues the same tree (recorded
    by the tracer that recorded the pause), in the live view if one shows the trace.
    ``decisions`` is what :func:`~nbagents.pending_approvals` returned, every request decided::

        requests = nbagents.pending_approvals(paused)
        requests[0].approve()
        result = nbagents.resume(t, requests)
    """
    agent, config = _paused_agent(trace)
    return _continue(trace, agent, decisions.resume(), config)


def answer(trace: Trace, decisions: Sequence[Mapping[str, Any]]) -> Any:
    """Resume ``trace``'s paused run with the decisions the live view sent; returns its result.

    One entry per pending request: ``key`` (``interrupt id:position``, as the view's
    ``PendingView`` names it), ``decision``, and ``args_json`` for an edit or ``message`` for a
    reject or respond. The requests are read again from the agent's state, so a decision can
    only answer what the run really waits for. Raises :class:`AnswerError`, resuming nothing,
    when the decisions cannot be applied.
    """
    agent, config = _paused_agent(trace)
    approvals = pending_approvals(cast(Any, agent).get_state(config))
    positions: Counter[str] = Counter()
    by_key: dict[str, ApprovalRequest] = {}
    for pending in approvals:
        by_key[f"{pending.interrupt_id}:{positions[pending.interrupt_id]}"] = pending
        positions[pending.interrupt_id] += 1
    for entry in decisions:
        request = by_key.get(str(entry.get("key", "")))
        if request is None:
            raise AnswerError("A decision answers a request the run no longer waits for.")
        _apply(request, entry)
    try:
        command = approvals.resume()
    except ApprovalError as error:
        raise AnswerError(str(error)) from error
    return _continue(trace, agent, command, config)


def _apply(request: ApprovalRequest, entry: Mapping[str, Any]) -> None:
    kind = entry.get("decision")
    message = str(entry.get("message") or "").strip()
    try:
        if kind == "approve":
            request.approve()
        elif kind == "edit":
            request.edit(_edited_args(request, entry.get("args_json")))
        elif kind == "reject":
            request.reject(message or None)
        elif kind == "respond":
            if not message:
                raise AnswerError(f"Respond to {request.tool!r}: the answer text is empty.")
            request.respond(message)
        else:
            raise AnswerError(f"No decision for the {request.tool!r} call.")
    except ApprovalError as error:
        raise AnswerError(str(error)) from error


def _edited_args(request: ApprovalRequest, text: Any) -> dict[str, Any]:
    try:
        args = json.loads(str(text))
    except json.JSONDecodeError as error:
        raise AnswerError(
            f"The edited arguments of {request.tool!r} are not valid JSON: {error.msg} "
            f"(line {error.lineno}, column {error.colno})."
        ) from error
    if not isinstance(args, dict):
        raise AnswerError(f"The edited arguments of {request.tool!r} must be a JSON object.")
    return args


# -- continuing the same tree ----------------------------------------------------------------------


def _continue(trace: Trace, agent: Any, command: Any, config: Any) -> Any:
    recorder = trace.recorder
    tracer = recorder if recorder is not None else Tracer(trace)

    def resumption() -> Any:
        tracer.trace.finished = False
        # Inside the recording() block that made the trace its tracer is attached already;
        # attaching it twice would record every step twice.
        if any(t is tracer for t in active_tracers()):
            return agent.invoke(command, config)
        try:
            with recording(tracer):
                return agent.invoke(command, config)
        finally:
            # A run kept in the history is saved again when it resumes: one run, one record.
            history.save(tracer.trace)

    follower = follower_of(trace)
    return follower.follow(resumption) if follower is not None else resumption()
