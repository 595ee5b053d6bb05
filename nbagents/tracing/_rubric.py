"""Upstream deepagents' ``RubricMiddleware``: each grading pass as a step of its own.

When an agent would finish, the middleware's ``after_agent`` hook runs a grader agent on the
transcript; on ``needs_revision`` it feeds the grader's feedback back as a ``HumanMessage`` and
sends the agent back to its model. Left to the generic rules, the hook is folded-away plumbing
and the grader's model calls look like the agent's own (upstream invokes the grader with the
agent's metadata, ``lc_agent_name`` included). Here the hook becomes a visible pass named after
its number and verdict, and the graph it starts becomes an agent of its own.

These rules read what deepagents 0.7 writes: the hook's node name, the ``rubric`` state key,
and the private ``_rubric_iterations`` / ``_rubric_evaluations`` keys of its state update.
When a release changes those, this module changes; ``tests/test_upstream_rubric.py`` runs
against the installed version. deepagents is not imported: it is an optional install.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage

from nbagents.tracing._attributes import SpanAttributes, typed_attribute
from nbagents.tracing._jsonready import jsonready
from nbagents.tracing._statediff import node_updates

__all__ = ["RUBRIC_HOOK", "grader_pass", "is_grading_pass", "pass_name", "verdict_of"]

RUBRIC_HOOK = "RubricMiddleware.after_agent"
"""The node ``create_agent`` makes of the middleware's ``after_agent`` hook (sync or async)."""
_GRADER_SOURCE = "rubric_grader"
"""How upstream tags the revision message it feeds back (its ``name`` and ``lc_source``)."""


def grader_pass(name: str, md: Mapping[str, Any], inputs: Any) -> SpanAttributes | None:
    """At a chain run's start: the pass it is, when it is the rubric hook with a rubric to grade.

    Without a ``rubric`` in the state the hook does nothing, and stays plumbing.
    """
    if name != RUBRIC_HOOK or md.get("langgraph_node") != name:
        return None
    if not isinstance(inputs, Mapping) or not inputs.get("rubric"):
        return None
    return {"rubric_pass": (_count(inputs.get("_rubric_iterations")) or 0) + 1}


def is_grading_pass(attributes: Mapping[str, Any]) -> bool:
    """Whether a span is a grading pass: the runs it starts directly are the grader's."""
    return typed_attribute(attributes, "rubric_pass") is not None


def verdict_of(outputs: Any) -> SpanAttributes:
    """At the hook's end: the verdict it recorded, the grader's explanation and per-criterion
    verdicts, and the message fed back to the agent (``None`` when the loop ends).

    The verdict is the one the middleware settled on, not the grader's raw answer: at the last
    allowed pass a ``needs_revision`` becomes ``max_iterations_reached``, and a grader that
    raised is ``grader_error``.
    """
    found: SpanAttributes = {}
    for update in node_updates(outputs):
        evaluations = update.get("_rubric_evaluations")
        if isinstance(evaluations, list | tuple) and evaluations:
            last = evaluations[-1]
            if isinstance(last, Mapping):
                found.update(_evaluation(last))
        messages = update.get("messages")
        fed_back = [
            m.text
            for m in (messages if isinstance(messages, list | tuple) else [messages])
            if isinstance(m, HumanMessage) and _from_grader(m)
        ]
        if fed_back:
            found["rubric_feedback"] = "\n\n".join(fed_back)
    if "rubric_verdict" in found:
        found.setdefault("rubric_feedback", None)
    return found


def pass_name(attributes: Mapping[str, Any]) -> str:
    """``rubric pass 2``, and once graded ``rubric pass 2: satisfied``."""
    number = typed_attribute(attributes, "rubric_pass")
    verdict = typed_attribute(attributes, "rubric_verdict")
    name = f"rubric pass {number}"
    return f"{name}: {verdict}" if verdict else name


def _evaluation(evaluation: Mapping[str, Any]) -> SpanAttributes:
    attrs: SpanAttributes = {
        "rubric_verdict": str(evaluation.get("result") or "unknown"),
        "rubric_explanation": str(evaluation.get("explanation") or ""),
    }
    iteration = _count(evaluation.get("iteration"))
    if iteration is not None:
        # The pass number the middleware counted, should the hook's input not have said.
        attrs["rubric_pass"] = iteration + 1
    criteria = evaluation.get("criteria")
    if isinstance(criteria, list | tuple):
        attrs["rubric_criteria"] = [jsonready(dict(c)) for c in criteria if isinstance(c, Mapping)]
    return attrs


def _from_grader(message: HumanMessage) -> bool:
    source = message.additional_kwargs.get("lc_source")
    return message.name == _GRADER_SOURCE or source == _GRADER_SOURCE


def _count(value: Any) -> int | None:
    """``value`` when it is a count (a state may hold anything under a private key)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None
