"""Scorers: asked by parameter name, openevals' evaluators unchanged, the built-in trajectory,
budget and judge scorers, a scorer that raises, and rescoring saved runs without the agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool

import nbagents
from nbagents import ScriptedChatModel, Trace
from nbagents.evaluation import scorers
from nbagents.models.replay import recorded
from nbagents.testing import TraceAssertionError, assert_experiment
from tests.experiments_support import CASES, agent


def test_a_scorer_gets_what_it_asks_for_by_name(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def everything(
        inputs: Any, outputs: Any, expected: Any, reference_outputs: Any, answer: Any, trace: Any
    ) -> float:
        seen.append(
            dict(
                inputs=inputs,
                outputs=outputs,
                expected=expected,
                reference=reference_outputs,
                answer=answer,
                trace=trace,
            )
        )
        return 0.5

    exp = nbagents.evaluate(agent(), CASES[:1], scorers=[everything], store=tmp_path / "r.db")
    (got,) = seen
    assert got["inputs"] == "What is 2+2?"
    assert got["expected"] == got["reference"] == "4"
    assert got["answer"] == "The answer is 4"
    assert got["outputs"]["messages"][-1].text == "The answer is 4"
    assert isinstance(got["trace"], Trace)
    assert [s.type for s in got["trace"].subagents] == ["researcher"]
    assert exp.to_dataframe()["everything"].tolist() == [0.5]
    assert exp.summary().loc[0, "kind"] == "mean"


def test_a_scorer_asking_for_something_unknown_is_refused_before_running() -> None:
    ran: list[int] = []

    def odd(answer: str, mood: str) -> bool:
        return True

    with pytest.raises(TypeError, match="asks for 'mood'"):
        nbagents.evaluate(lambda x: ran.append(1), [{"inputs": 1}], scorers=[odd], store=False)
    assert ran == []


@pytest.mark.parametrize(
    ("said", "value", "passed", "comment"),
    [
        (True, 1.0, True, None),
        (False, 0.0, False, None),
        (0.25, 0.25, None, None),
        (3, 3.0, None, None),
        ({"score": True, "comment": "fine"}, 1.0, True, "fine"),
        ({"key": "k", "score": 0.5, "comment": "half"}, 0.5, None, "half"),
        ([{"key": "k", "score": False, "comment": "no"}], 0.0, False, "no"),
    ],
)
def test_what_a_scorer_may_return(said: Any, value: float, passed: Any, comment: Any) -> None:
    from nbagents.evaluation._scoring import read_score

    score = read_score(said)
    assert (score.value, score.passed, score.comment) == (value, passed, comment)


def test_a_scorer_that_raises_is_an_error_on_that_run_and_the_others_go_on() -> None:
    def fussy(answer: str | None) -> bool:
        if "Paris" in (answer or ""):
            raise RuntimeError("no French")
        return True

    def text_length(answer: str | None) -> int:
        return len(answer or "")

    exp = nbagents.evaluate(
        agent(), CASES, scorers=[fussy, text_length, lambda: "nope"], store=False
    )
    capital = exp.result("capital")
    assert capital.scores["fussy"].error == "RuntimeError: no French"
    assert capital.scores["fussy"].value is None
    assert capital.scores["text_length"].value == 5.0
    assert capital.scores["scorer_3"].error is not None  # a string is no score
    frame = exp.to_dataframe()
    assert frame["fussy"].isna().tolist() == [False, True, False]
    assert exp.summary().set_index("scorer").loc["fussy", "errors"] == 1
    assert "no French" in exp.to_html()


def test_openevals_evaluators_work_unchanged() -> None:
    from openevals.exact import exact_match

    target = RunnableLambda(lambda inputs: {"answer": inputs["question"].strip("?")})
    cases = [
        {"id": "same", "inputs": {"question": "yes?"}, "expected": {"answer": "yes"}},
        {"id": "other", "inputs": {"question": "no?"}, "expected": {"answer": "maybe"}},
    ]
    exp = nbagents.evaluate(target, cases, scorers=[exact_match], store=False)
    assert exp.to_dataframe().set_index("case_id")["exact_match"].to_dict() == {
        "same": 1.0,
        "other": 0.0,
    }
    assert exp.is_yes_no("exact_match")


# -- built-in scorers on the delegation tree and the budget ----------------------------------------


def scored(*checks: Any, better: bool = False) -> dict[str, dict[str, Any]]:
    exp = nbagents.evaluate(agent(better=better), CASES, scorers=list(checks), store=False)
    frame = exp.to_dataframe().set_index("case_id")
    return {name: frame[name].to_dict() for name in exp.scorers}


def test_trajectory_scorers_see_the_sub_agents() -> None:
    got = scored(
        scorers.spawned("researcher"),
        scorers.spawned("writer", min=0, max=0),
        scorers.spawn_count(),
        scorers.tool_called("lookup", by="researcher"),
        scorers.tool_called("lookup", by="main"),
        scorers.max_depth(1),
        scorers.no_failures(),
        scorers.no_limits(),
    )
    assert got["spawned_researcher"] == {"add": 1.0, "capital": 0.0, "hard": 1.0}
    assert got["spawned_writer"] == {"add": 1.0, "capital": 1.0, "hard": 0.0}
    assert got["spawns"] == {"add": 1.0, "capital": 0.0, "hard": 2.0}
    # The child called the tool, never the parent: who called it is what the scorer checks.
    assert got["called_lookup_by_researcher"] == {"add": 1.0, "capital": 0.0, "hard": 0.0}
    assert got["called_lookup_by_main"] == {"add": 0.0, "capital": 0.0, "hard": 0.0}
    assert got["max_depth_1"] == {"add": 1.0, "capital": 1.0, "hard": 1.0}
    assert got["no_failures"] == {"add": 1.0, "capital": 1.0, "hard": 0.0}
    assert got["no_limits"] == {"add": 1.0, "capital": 1.0, "hard": 1.0}


@tool
def noop() -> str:
    """Do nothing."""
    return "ok"


def test_a_limit_reached_fails_no_limits() -> None:
    limited = nbagents.create_deep_agent(
        ScriptedChatModel(
            script={
                "main": [
                    nbagents.models.delegate("loop", "looper"),
                    nbagents.models.say("gave up"),
                ],
                "looper": [nbagents.models.call("noop"), nbagents.models.call("noop"), "done"],
            }
        ),
        [noop],
        subagents=[
            {
                "name": "looper",
                "description": "Loops",
                "system_prompt": "Loop.",
                "limits": {"model_calls": 1},
            }
        ],
    )
    exp = nbagents.evaluate(
        limited,
        [{"id": "x", "inputs": "go"}],
        scorers=[scorers.no_limits(), scorers.no_failures()],
        store=False,
    )
    assert exp.to_dataframe()[["no_limits"]].values.tolist() == [[0.0]]
    assert "model_calls" in (exp.result("x").scores["no_limits"].comment or "")


def test_budget_scorers() -> None:
    got = scored(scorers.max_tokens(700), scorers.max_cost(1.0, prices={"scripted-model": (1, 1)}))
    assert got["max_tokens"] == {"add": 0.0, "capital": 1.0, "hard": 0.0}
    assert got["max_cost"] == {"add": 1.0, "capital": 1.0, "hard": 1.0}
    unknown = nbagents.evaluate(agent(), CASES[:1], scorers=[scorers.max_cost(1.0)], store=False)
    assert "no price for scripted-model" in (unknown.results[0].scores["max_cost"].error or "")


def test_answer_scorers() -> None:
    got = scored(scorers.answer_contains(), scorers.answer_equals())
    assert got["answer_contains"] == {"add": 1.0, "capital": 1.0, "hard": 0.0}
    assert got["answer_equals"] == {"add": 0.0, "capital": 1.0, "hard": 0.0}


def test_an_llm_judge_replays_from_a_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "judge.json"
    judge_model = ScriptedChatModel(script={"main": ['{"score": true, "comment": "right"}']})
    judge = scorers.llm_judge(
        recorded(judge_model, cassette, mode="record"), "the answer names the number"
    )
    first = nbagents.evaluate(agent(), CASES[:1], scorers=[judge], store=False)
    assert first.results[0].scores["judge"].passed is True
    assert first.results[0].scores["judge"].comment == "right"
    assert json.loads(cassette.read_text())
    # In CI: no model behind the cassette; the judge's verdict is replayed.
    replayed = scorers.llm_judge(
        recorded(None, cassette, mode="replay"), "the answer names the number"
    )
    again = nbagents.evaluate(agent(), CASES[:1], scorers=[replayed], store=False)
    assert again.results[0].scores["judge"].passed is True


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ('{"score": false, "comment": "wrong"}', False),
        ("Yes, it is.", True),
        ('Verdict: {"score": "pass"}', True),
        ("FAIL", False),
    ],
)
def test_a_judge_reply_is_read_as_a_verdict(reply: str, score: bool) -> None:
    assert scorers.read_verdict(reply)["score"] is score


def test_a_judge_reply_that_is_no_verdict_is_an_error() -> None:
    with pytest.raises(ValueError, match="not a verdict"):
        scorers.read_verdict("Let me think about it")


# -- rescoring -------------------------------------------------------------------------------------


def test_rescore_scores_saved_runs_again_without_the_agent(tmp_path: Path) -> None:
    calls: list[str] = []
    base = agent()

    async def counted(inputs: Any) -> Any:
        calls.append(str(inputs))
        return await base.ainvoke(inputs)

    exp = nbagents.evaluate(
        RunnableLambda(counted),
        [
            {
                "id": c["id"],
                "inputs": {"messages": [("user", c["inputs"])]},
                "expected": c["expected"],
            }
            for c in CASES
        ],
        store=tmp_path / "r.db",
    )
    assert len(calls) == 3
    loaded = nbagents.load_experiment(exp.id, store=tmp_path / "r.db")

    def mentions(answer: str | None, expected: str) -> bool:
        return expected in (answer or "")

    loaded.rescore([mentions, scorers.spawned("researcher")])
    assert len(calls) == 3  # the agent was not called again
    frame = loaded.to_dataframe().set_index("case_id")
    assert frame["mentions"].to_dict() == {"add": 1.0, "capital": 1.0, "hard": 0.0}
    assert frame["spawned_researcher"].to_dict() == {"add": 1.0, "capital": 0.0, "hard": 1.0}
    reopened = nbagents.load_experiment(exp.id, store=tmp_path / "r.db")
    assert reopened.scorers == ["mentions", "spawned_researcher"]
    assert reopened.to_dataframe()["mentions"].tolist() == [1.0, 1.0, 0.0]


def test_assert_experiment_passes_and_fails_with_the_cases_named() -> None:
    def correct(answer: str | None, expected: str) -> bool:
        return expected in (answer or "")

    exp = nbagents.evaluate(agent(), CASES, scorers=[correct], store=False)
    assert_experiment(exp, min_pass_rate=0.6, scorer="correct")
    with pytest.raises(TraceAssertionError, match=r"correct: pass rate 0.667 is below 0.9.*hard"):
        assert_experiment(exp, min_pass_rate=0.9)
    with pytest.raises(TypeError, match="min_pass_rate"):
        assert_experiment(exp, min_mean=0.9, scorer="correct")


def test_the_results_view_escapes_what_the_cases_and_scorers_said() -> None:
    hostile = "<img src=x onerror=alert(1)>"

    def says(answer: str | None) -> dict[str, Any]:
        raise ValueError(hostile)

    exp = nbagents.evaluate(
        lambda inputs: hostile,
        [{"id": hostile, "inputs": {"q": hostile}}],
        scorers=[says],
        name=hostile,
        store=False,
    )
    html = exp.to_html()
    assert hostile not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script" not in html


def test_an_upstream_deepagents_agent_is_scored_per_sub_agent() -> None:
    from test_tracing_agents import upstream_agent

    exp = nbagents.evaluate(
        upstream_agent(),
        [{"id": "go", "inputs": "go"}],
        store=False,
        scorers=[
            scorers.spawned("researcher", min=2, max=2),
            scorers.max_depth(2),
            scorers.tool_called("write_file", by="researcher"),
        ],
    )
    assert exp.to_dataframe().iloc[0][
        ["status", "spawned_researcher", "max_depth_2", "called_write_file_by_researcher"]
    ].tolist() == ["ok", 1.0, 1.0, 1.0]
    types = exp.summary(by="subagent").set_index("type")
    assert types.loc["researcher", "spawns_per_run"] == 2
    assert types.loc["general-purpose", "spawns_per_run"] == 2
