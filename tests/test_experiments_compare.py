"""Two experiments compared: paired by case, wins, losses and ties per scorer with a paired
interval, per sub-agent type deltas, one case opened as the comparison of its two runs, and the
views of an experiment and of a comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

import nbagents
from nbagents.comparison import Comparison
from nbagents.evaluation import Experiment, ExperimentComparison, scorers
from tests.experiments_support import CASES, agent


def correct(answer: str | None, expected: str) -> bool:
    return expected.lower() in (answer or "").lower()


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Experiment, Experiment]:
    db = tmp_path_factory.mktemp("history") / "runs.sqlite"
    checks = [correct, scorers.no_failures()]
    before = nbagents.evaluate(agent(), CASES, scorers=checks, repeats=2, name="before", store=db)
    after = nbagents.evaluate(
        agent(better=True), CASES, scorers=checks, repeats=2, name="after", store=db
    )
    return before, after


def test_paired_wins_losses_and_ties_per_scorer(pair: tuple[Experiment, Experiment]) -> None:
    cmp = nbagents.compare(*pair)
    assert isinstance(cmp, ExperimentComparison)
    rows = cmp.scores().set_index("scorer")
    assert rows.loc["correct", ["pairs", "wins", "losses", "ties"]].tolist() == [3, 1, 0, 2]
    assert rows.loc["correct", "a"] == pytest.approx(2 / 3)
    assert rows.loc["correct", "b"] == pytest.approx(1.0)
    assert rows.loc["correct", "delta"] == pytest.approx(1 / 3)
    assert rows.loc["correct", "ci_low"] <= 1 / 3 <= rows.loc["correct", "ci_high"]
    assert 0 < rows.loc["correct", "p_value"] <= 1
    reverse = nbagents.compare(pair[1], pair[0]).scores().set_index("scorer")
    assert reverse.loc["correct", ["wins", "losses"]].tolist() == [0, 1]


def test_per_sub_agent_type_deltas_name_what_changed(pair: tuple[Experiment, Experiment]) -> None:
    cmp = nbagents.compare(*pair)
    types = cmp.subagents().set_index("type")
    assert types.loc["researcher", "failure_rate_a"] == pytest.approx(0.5)
    assert types.loc["researcher", "failure_rate_b"] == pytest.approx(0.0)
    assert types.loc["writer", "spawns_per_run_a"] == pytest.approx(1 / 3)
    assert types.loc["writer", "spawns_per_run_b"] == 0
    lines = cmp.headline()
    assert any(line.startswith("sub-agent researcher: fails 50% -> 0%") for line in lines)
    assert any(line.startswith("sub-agent writer:") for line in lines)
    assert "correct: 0.67 -> 1.00" in repr(cmp)


def test_a_case_opens_as_the_comparison_of_its_two_runs(
    pair: tuple[Experiment, Experiment],
) -> None:
    one = nbagents.compare(*pair).case("hard")
    assert isinstance(one, Comparison)
    assert ("writer", "removed") in {(row.type, row.change) for row in one.rows}


def test_the_per_case_table(pair: tuple[Experiment, Experiment]) -> None:
    frame = nbagents.compare(*pair).to_dataframe().set_index("case_id")
    assert frame.loc["hard", ["correct_a", "correct_b", "correct_delta"]].tolist() == [0, 1, 1]


def test_experiments_share_no_case() -> None:
    a = nbagents.evaluate(lambda x: "a", [{"id": "1", "inputs": 1}], store=False)
    b = nbagents.evaluate(lambda x: "b", [{"id": "2", "inputs": 2}], store=False)
    with pytest.raises(ValueError, match="share no case"):
        nbagents.compare(a, b)
    with pytest.raises(TypeError, match="two experiments"):
        nbagents.compare(a, b, a)


def test_compare_still_lines_up_runs(pair: tuple[Experiment, Experiment]) -> None:
    found = nbagents.compare(pair[0].trace("hard"), pair[1].trace("hard"))
    assert isinstance(found, Comparison)


def test_the_views_carry_the_figures(pair: tuple[Experiment, Experiment]) -> None:
    before, after = pair
    html = before.to_html()
    assert "Experiment</b> before" in html
    assert "Sub-agent types" in html and "researcher" in html
    assert html.count("<tr>") >= 3 + 6  # a row per scorer, per type and per run
    bundle = nbagents.compare(before, after)._repr_mimebundle_()
    assert "Compare experiments" in bundle["text/html"]
    assert "fails 50% -&gt; 0%" not in bundle["text/html"]  # the table, not the text, shows it
    assert "50% → 0%" in bundle["text/html"]
    summary = before.summary(by="subagent").set_index("type")
    assert summary.loc["researcher", "failure_rate"] == pytest.approx(0.5)
    assert summary.loc["researcher", "corr_correct"] < 0


def test_experiments_listing(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    assert nbagents.experiments(store=db).empty
    exp = nbagents.evaluate(agent(), CASES, scorers=[correct], name="listed", store=db)
    listed = nbagents.experiments(store=db)
    row = listed.iloc[0]
    assert (row["id"], row["name"], row["runs"], row["status"]) == (exp.id, "listed", 3, "done")
    assert row["scores"] == {"correct": pytest.approx(2 / 3)}
