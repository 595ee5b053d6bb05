"""Upstream deepagents' ``RubricMiddleware`` under nbagents' tracer, on the installed version.

A grader agent judges the answer each time the agent would finish; on ``needs_revision`` its
feedback goes back to the agent, which answers again. Each grading pass must be a step of its
own in the trace (named after its number and verdict, carrying the grader's explanation,
criteria and the feedback fed back), the grader an agent of its own, and both must reach the
views, the DataFrame and the OpenTelemetry export.
"""

from __future__ import annotations

import asyncio
import html
import warnings
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from nbagents import ScriptedChatModel, Trace, Tracer
from nbagents.display._viewmodel import build_view
from nbagents.models import call, fail, say

deepagents = pytest.importorskip("deepagents")
rubric_module = pytest.importorskip("deepagents.middleware.rubric")

QUESTION = "What is the capital of France?"
RUBRIC = "The answer names a source."
CRITERION = "Names a source for the answer"
GAP = "No source is named."
EXPLANATION = "The answer names no source."
FIRST, SECOND = "Paris.", "Paris (source: the CIA World Factbook)."


def verdict(result: str, explanation: str, *, passed: bool) -> Any:
    criterion: dict[str, Any] = {"name": CRITERION, "passed": passed}
    if not passed:
        criterion["gap"] = GAP
    return call("GraderResponse", result=result, explanation=explanation, criteria=[criterion])


def rubric_agent(grader: dict[str, list[Any]], *, max_iterations: int = 3) -> Any:
    """An upstream deep agent with the rubric loop; one scripted model for agent and grader.

    Upstream runs the grader with the agent's own metadata, so the scripted model sees the
    grader's calls as the agent's: they are told apart by the grader's task, which names its
    iteration ("This is grader iteration 0. ...").
    """
    model = ScriptedChatModel(script={"main": {"*": [say(FIRST), say(SECOND)], **grader}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the middleware is beta upstream, and says so
        middleware = deepagents.RubricMiddleware(model=model, max_iterations=max_iterations)
    return deepagents.create_deep_agent(model, name="main", middleware=[middleware])


REVISE_THEN_PASS = {
    "grader iteration 0": [verdict("needs_revision", EXPLANATION, passed=False)],
    "grader iteration 1": [verdict("satisfied", "A source is named.", passed=True)],
}


def run(agent: Any, *, use_async: bool = False, rubric: str | None = RUBRIC) -> tuple[Trace, Any]:
    tracer = Tracer()
    given: dict[str, Any] = {"messages": [HumanMessage(QUESTION)]}
    if rubric is not None:
        given["rubric"] = rubric
    config: Any = {"callbacks": [tracer]}
    result = asyncio.run(agent.ainvoke(given, config)) if use_async else agent.invoke(given, config)
    tracer.finish()
    return tracer.trace, result


def shape(trace: Trace, span: Any = None) -> list[Any]:
    out: list[Any] = []
    for child in trace.visible_children(span):
        kids = shape(trace, child)
        out.append((child.kind, child.name, kids) if kids else (child.kind, child.name))
    return out


def passes(trace: Trace) -> list[Any]:
    return [s for s in trace.walk() if "rubric_pass" in s.attributes]


GRADED_TWICE = [
    (
        "agent",
        "main",
        [
            ("model", "ScriptedChatModel"),
            (
                "chain",
                "rubric pass 1: needs_revision",
                [("agent", "rubric_grader", [("model", "ScriptedChatModel")])],
            ),
            ("model", "ScriptedChatModel"),
            (
                "chain",
                "rubric pass 2: satisfied",
                [("agent", "rubric_grader", [("model", "ScriptedChatModel")])],
            ),
        ],
    )
]


@pytest.mark.parametrize("use_async", [False, True], ids=["invoke", "ainvoke"])
def test_each_grader_pass_is_a_step_with_its_verdict_and_the_feedback_fed_back(
    use_async: bool,
) -> None:
    trace, result = run(rubric_agent(REVISE_THEN_PASS), use_async=use_async)

    assert shape(trace) == GRADED_TWICE
    first, second = passes(trace)
    fed_back = [m for m in result["messages"] if m.name == "rubric_grader"]
    assert len(fed_back) == 1  # the agent was sent back once, with the first pass's feedback
    assert first.attributes == {
        "rubric_pass": 1,
        "rubric_verdict": "needs_revision",
        "rubric_explanation": EXPLANATION,
        "rubric_criteria": [{"name": CRITERION, "passed": False, "gap": GAP}],
        "rubric_feedback": fed_back[0].text,
    }
    assert EXPLANATION in fed_back[0].text and GAP in fed_back[0].text
    assert second.typed_attributes() == {
        "rubric_pass": 2,
        "rubric_verdict": "satisfied",
        "rubric_explanation": "A source is named.",
        "rubric_criteria": [{"name": CRITERION, "passed": True}],
        "rubric_feedback": None,
    }
    assert result["messages"][-1].text == SECOND
    assert first.status == second.status == "ok" and not first.hidden

    # The grader is an agent of its own: its tokens are not the answering agent's.
    graders = [s for s in trace.walk() if s.kind == "agent" and s.name == "rubric_grader"]
    assert [g.depth for g in graders] == [1, 1]
    assert all(m.agent == "rubric_grader" for g in graders for m in trace.own_model_spans(g))
    usage = trace.token_usage().set_index("agent")
    main = trace.roots[0]
    grader_tokens = sum(trace.own_usage(g).total for g in graders)
    assert usage.loc["rubric_grader", "total_tokens"] == grader_tokens > 0
    assert usage.loc["main", "total_tokens"] == trace.own_usage(main).total
    assert trace.usage_including_descendants(main).total == (
        trace.own_usage(main).total + grader_tokens
    )


def test_the_views_dataframe_and_export_carry_each_pass() -> None:
    from nbagents.export import to_otel_spans

    trace, result = run(rubric_agent(REVISE_THEN_PASS))
    feedback = next(m.text for m in result["messages"] if m.name == "rubric_grader")

    nodes = {n["name"]: n for n in build_view(trace)["nodes"]}
    first = nodes["rubric pass 1: needs_revision"]
    assert first["preview"] == EXPLANATION
    assert {f["label"]: f["value"] for f in first["details"]} == {
        "Verdict": "needs_revision",
        "Grader's explanation": EXPLANATION,
        "Criteria": f"\u2717 {CRITERION}: {GAP}",
        "Fed back to the agent": feedback,
    }
    second = {f["label"]: f["value"] for f in nodes["rubric pass 2: satisfied"]["details"]}
    assert second["Criteria"] == f"\u2713 {CRITERION}" and "Fed back to the agent" not in second

    page = trace.to_html()
    assert "rubric pass 1: needs_revision" in page and "rubric pass 2: satisfied" in page
    assert html.escape(GAP) in page and html.escape(feedback.splitlines()[0]) in page

    frame = trace.to_dataframe()
    shown = frame[~frame["hidden"] & (frame["kind"] == "chain")]
    assert shown["name"].tolist() == ["rubric pass 1: needs_revision", "rubric pass 2: satisfied"]

    exported = {s.name: dict(s.attributes or {}) for s in to_otel_spans(trace)}
    plain = exported["rubric pass 1: needs_revision"]
    assert plain["nbagents.rubric.pass"] == 1
    assert plain["nbagents.rubric.verdict"] == "needs_revision"
    assert "nbagents.rubric.feedback" not in plain  # the grader's words are content
    full = {s.name: s.attributes for s in to_otel_spans(trace, include_content=True)}
    assert full["rubric pass 1: needs_revision"]["nbagents.rubric.feedback"] == feedback
    assert full["rubric pass 1: needs_revision"]["nbagents.rubric.explanation"] == EXPLANATION
    assert "nbagents.rubric.feedback" not in full["rubric pass 2: satisfied"]
    assert exported["invoke_agent rubric_grader"]["gen_ai.agent.name"] == "rubric_grader"

    # The trace file keeps them.
    loaded = Trace.from_json(trace.to_json())
    assert [s.attributes for s in passes(loaded)] == [s.attributes for s in passes(trace)]


def test_the_last_allowed_pass_says_the_cap_was_reached_and_feeds_nothing_back() -> None:
    never = {
        "grader iteration 0": [verdict("needs_revision", EXPLANATION, passed=False)],
        "grader iteration 1": [verdict("needs_revision", "Still no source.", passed=False)],
    }
    trace, result = run(rubric_agent(never, max_iterations=2))

    assert [s.name for s in passes(trace)] == [
        "rubric pass 1: needs_revision",
        "rubric pass 2: max_iterations_reached",
    ]
    last = passes(trace)[-1]
    assert last.attributes["rubric_explanation"] == "Still no source."
    assert last.attributes["rubric_feedback"] is None
    assert len([m for m in result["messages"] if m.name == "rubric_grader"]) == 1


def test_a_grader_that_raises_is_a_grader_error_pass_and_a_failed_grader_agent() -> None:
    broken = {"grader iteration 0": [fail(RuntimeError("grader is down"))]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace, _ = run(rubric_agent(broken))

    [only] = passes(trace)
    assert only.name == "rubric pass 1: grader_error" and only.status == "ok"
    assert "grader is down" in only.attributes["rubric_explanation"]
    [grader] = [s for s in trace.walk() if s.name == "rubric_grader"]
    assert grader.kind == "agent" and grader.status == "error"


def test_without_a_rubric_the_hook_stays_plumbing() -> None:
    trace, _ = run(rubric_agent(REVISE_THEN_PASS), rubric=None)

    assert shape(trace) == [("agent", "main", [("model", "ScriptedChatModel")])]
    assert not passes(trace)
