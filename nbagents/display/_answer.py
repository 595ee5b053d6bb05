"""Answering a paused run from the live view: decisions in, the same run resumed and traced.

The widget sends ``{"type": "decide", "decisions": [...]}``, one entry per pending request
(``key`` = ``interrupt id:position`` as in :class:`~nbagents.display._records.PendingView`,
``decision``, and ``args_json`` for an edit or ``message`` for a reject or respond). The thread
of the paused root names the agent to resume (``nbagents._resumable``); the pending requests are
read again from the agent's state, so a decision can only answer what the run really waits for,
through :mod:`nbagents.approvals` (which checks the allowed decisions). The resumption is
recorded by the view's own tracer, so the tree continues where it paused, in the same output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from nbagents._resumable import AnswerError, paused_agent
from nbagents.approvals import ApprovalError, ApprovalRequest, pending_approvals

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = ["decide"]


def decide(trace: Trace, decisions: Sequence[Mapping[str, Any]]) -> tuple[Any, Any, Any]:
    """Apply the view's decisions; returns ``(agent, command, config)`` to resume with."""
    agent, config = paused_agent(trace)
    approvals = pending_approvals(cast(Any, agent).get_state(config))
    by_key = _keyed(approvals)
    for entry in decisions:
        key = str(entry.get("key", ""))
        request = by_key.get(key)
        if request is None:
            raise AnswerError("A decision answers a request the run no longer waits for.")
        _apply(request, entry)
    try:
        command = approvals.resume()
    except ApprovalError as error:
        raise AnswerError(str(error)) from error
    return agent, command, config


def _keyed(approvals: Sequence[ApprovalRequest]) -> dict[str, ApprovalRequest]:
    keyed: dict[str, ApprovalRequest] = {}
    positions: dict[str, int] = {}
    for request in approvals:
        position = positions.get(request.interrupt_id, 0)
        positions[request.interrupt_id] = position + 1
        keyed[f"{request.interrupt_id}:{position}"] = request
    return keyed


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
