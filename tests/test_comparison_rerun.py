"""``nbagents.rerun``: one sub-agent of a recorded run, run again alone on the input it was
given (its task and the state its parent passed), changed or not, and compared with the
original spawn; where it cannot be exact, it says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents.structured_output import ToolStrategy
from langchain_core.tools import tool
from pydantic import BaseModel
from support.backend_kit import record

import nbagents
from nbagents import SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY, ScriptedChatModel, create_deep_agent
from nbagents.backends import StateBackend
from nbagents.history import run_id_of
from nbagents.models import call, delegate, parallel

WRITER = {"name": "writer", "description": "Writes.", "system_prompt": "Write."}
CRITIC = {"name": "critic", "description": "Judges.", "system_prompt": "Judge."}
RESEARCHER = {"name": "researcher", "description": "Finds facts.", "system_prompt": "Research."}
SCRIPT = {
    "main": [
        parallel(delegate("Draft the notes.", "writer"), delegate("Judge the plan.", "critic")),
        "done",
    ],
    "writer": [delegate("Find what changed.", "researcher"), "Notes: CSV export is new."],
    "researcher": ["CSV export."],
    "critic": ["The plan holds."],
}


def recorded(
    script: dict[str, Any] = SCRIPT, given: dict[str, Any] | None = None, **agent_args: Any
) -> tuple[Any, nbagents.Trace]:
    """The agent, and the trace of one run of it with ``given`` added to its input."""
    agent = create_deep_agent(
        ScriptedChatModel(script=script), subagents=[WRITER, CRITIC, RESEARCHER], **agent_args
    )
    with nbagents.trace(display=False, store=False) as t:
        agent.invoke({"messages": [("user", "go")], **(given or {})})
    return agent, t


def test_a_changed_prompt_reruns_the_sub_agent_and_its_own_sub_agents(tmp_path: Path) -> None:
    agent, t = recorded()
    store = tmp_path / "runs.sqlite"
    again = nbagents.rerun(t, "writer", agent, system_prompt="Write briefly.", store=store)
    assert again.exact and again.notes == []
    rows = [(r.depth, r.type, r.change) for r in again.comparison.rows]
    # The writer's prompt is longer (more tokens); the researcher it asks is untouched.
    assert rows == [(0, "writer", "changed"), (1, "researcher", "same")]
    writer = again.comparison.rows[0]
    assert writer.a.result == writer.b.result == "Notes: CSV export is new."
    assert (writer.delta("tokens") or 0) > 0
    # The new run is a run of its own in the history, tagged as a re-run.
    (row,) = nbagents.runs(store=store).itertuples()
    assert (row.run_id, row.name, row.tags) == (run_id_of(again.trace), "writer re-run", ["rerun"])
    assert again.trace.roots[0].name == "writer"
    # The original run is untouched.
    assert [r.type for r in t.subagents] == ["writer", "researcher", "critic"]


def test_a_changed_model_gives_another_answer_and_the_diff_shows_it() -> None:
    agent, t = recorded()
    brief = ScriptedChatModel(script={"writer": ["Notes, briefly: CSV export."]})
    again = nbagents.rerun(t, 0, agent, model=brief, name="brief writer")
    writer = again.comparison.rows[0]
    assert again.result == "Notes, briefly: CSV export."
    assert writer.change == "changed" and writer.diff is not None
    assert [(r.type, r.change) for r in again.comparison.rows] == [
        ("writer", "changed"),
        ("researcher", "removed"),  # this time it asked no researcher
    ]
    assert again.comparison.rows[0].b.tokens == again.trace.total_usage().total
    assert "Compare" in again.to_html() and "brief writer" in again.to_html()


def test_the_state_its_parent_passed_is_given_again() -> None:
    script = {
        "main": [delegate("Summarise /brief.md.", "writer"), "done"],
        "writer": [call("read_file", file_path="/brief.md"), "Summary."],
    }
    brief = {"/brief.md": record("Ship CSV export in 2.1.")}
    agent, t = recorded(script, backend=StateBackend(), given={"files": brief})
    read_before = next(s for s in t.spans if s.kind == "tool" and s.name == "read_file")
    assert "Ship CSV export in 2.1." in str(read_before.outputs)

    again = nbagents.rerun(t, "writer", agent)
    assert again.exact
    read_again = next(s for s in again.trace.spans if s.kind == "tool" and s.name == "read_file")
    assert "Ship CSV export in 2.1." in str(read_again.outputs)


def test_where_a_rerun_cannot_be_exact_it_says_why() -> None:
    script = {
        "main": [delegate("Summarise /big.md.", "writer"), "done"],
        "writer": [call("read_file", file_path="/big.md"), "Summary."],
    }
    big = {"/big.md": record("x" * 50_000)}  # over the trace's 20,000-character strings
    agent, t = recorded(script, backend=StateBackend(), given={"files": big})
    again = nbagents.rerun(t, "writer", agent)
    assert not again.exact
    assert again.notes == ["the recorded input was shortened (over the trace's size bounds)"]


@tool
def lookup(key: str) -> str:
    """Look ``key`` up."""
    return f"{key}: 42"


def test_a_rerun_without_a_tool_the_original_called_says_so() -> None:
    script = {
        "main": [delegate("Look up x.", "writer"), "done"],
        "writer": [call("lookup", key="x"), "42"],
    }
    agent, t = recorded(script, tools=[lookup])  # the writer inherits the main agent's tools
    assert nbagents.rerun(t, "writer", agent).exact
    guess = ScriptedChatModel(script={"writer": ["Probably 42."]})
    without = nbagents.rerun(t, "writer", agent, tools=[], model=guess)
    assert without.notes == ["the original called lookup, which this re-run does not have"]
    assert "Not an exact re-run: the original called lookup" in without.to_html()


def test_what_rerun_refuses() -> None:
    two_critics = {
        **SCRIPT,
        "main": [parallel(delegate("One.", "critic"), delegate("Two.", "critic")), "done"],
    }
    agent, t = recorded(two_critics)
    with pytest.raises(ValueError, match=r"spawned 'critic' 2 times \(positions \[0, 1\]"):
        nbagents.rerun(t, "critic", agent)
    with pytest.raises(KeyError, match="No spawn 'poet'"):
        nbagents.rerun(t, "poet", agent)
    with pytest.raises(IndexError, match="there is no spawn 5"):
        nbagents.rerun(t, 5, agent)
    with pytest.raises(TypeError, match="the agent create_deep_agent built"):
        nbagents.rerun(t, 0, object())
    with pytest.raises(TypeError, match="either spec= or changes"):
        nbagents.rerun(t, 0, agent, spec=CRITIC, system_prompt="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sytem_prompt"):
        nbagents.rerun(t, 0, agent, sytem_prompt="x")
    other = create_deep_agent(ScriptedChatModel(script={}), subagents=[WRITER])
    with pytest.raises(KeyError, match="no sub-agent 'critic'"):
        nbagents.rerun(t, 0, other)


def test_a_rerun_meets_the_depth_limit_where_the_original_did() -> None:
    # With max_subagent_depth=1 the writer (a sub-agent) may not delegate further.
    agent, t = recorded(max_subagent_depth=1)
    refused = [s for s in t.spans if s.kind == "task" and s.depth == 1]
    assert len(refused) == 1 and "depth limit" in str(refused[0].outputs)
    again = nbagents.rerun(t, "writer", agent)
    (task,) = [s for s in again.trace.spans if s.kind == "task"]
    assert "depth limit" in str(task.outputs)
    assert [r.type for r in again.comparison.rows] == ["writer"]


def test_a_rerun_keeps_the_limits_of_the_spec_it_runs() -> None:
    script = {
        **SCRIPT,
        "writer": [call("lookup", topic="CSV"), "Notes: CSV export is new."],
    }

    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return f"{topic} export."

    agent, t = recorded(script, tools=[lookup])
    again = nbagents.rerun(t, "writer", agent, limits={"model_calls": 1})
    writer = again.trace.roots[0]
    assert writer.status == "limit"
    assert "model_calls=1" in (writer.error or "")
    assert [s.kind for s in again.trace.spans].count("model") == 1
    assert again.comparison.rows[0].b.result is None
    # without the limit the same re-run answers
    assert nbagents.rerun(t, "writer", agent).result == "Notes: CSV export is new."


class Verdict(BaseModel):
    """A judgement."""

    verdict: str


def test_a_response_format_chosen_per_call_is_named_in_the_trace_and_by_the_rerun() -> None:
    script = {
        "main": [delegate("Judge the plan.", "critic"), "done"],
        "critic": [call("Verdict", verdict="holds")],
    }
    agent = create_deep_agent(ScriptedChatModel(script=script), subagents=[CRITIC])
    with nbagents.trace(display=False, store=False) as t:
        agent.invoke(
            {"messages": [("user", "go")]},
            {"configurable": {SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY: ToolStrategy(Verdict)}},
        )
    attributes = t.get(t.subagents[0].span_id).typed_attributes()
    assert attributes["response_format"] == "ToolStrategy(Verdict)"
    plain = ScriptedChatModel(script={"critic": ["The plan holds."]})
    again = nbagents.rerun(t, "critic", agent, model=plain)
    assert again.notes == [
        "the run asked this call for ToolStrategy(Verdict) (a response format chosen per call, "
        "which the trace names but does not keep): pass response_format= to ask for it again"
    ]
    assert nbagents.rerun(t, "critic", agent, response_format=ToolStrategy(Verdict)).exact


def test_a_spawn_without_a_format_of_its_own_names_none() -> None:
    _, t = recorded()
    assert all("response_format" not in t.get(s.span_id).typed_attributes() for s in t.subagents)
