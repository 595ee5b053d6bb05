"""``nbagents.compare``: two runs aligned agent by agent (nested, parallel, reordered, with
agents added or removed), their DataFrame and snapshot; several runs as one table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.compare_fixtures import team_run

import nbagents
from nbagents.comparison import Comparison, RunsTable, word_diff
from nbagents.history import run_id_of

CAREFUL = "Research carefully, citing every source you used."


def changes(comparison: Comparison) -> list[tuple[int, str, str]]:
    return [(r.depth, r.type, r.change) for r in comparison.rows]


def test_a_changed_prompt_changes_only_its_agent_and_its_ancestors() -> None:
    before, after = team_run(), team_run(researcher_prompt=CAREFUL)
    comparison = nbagents.compare(before, after)
    assert isinstance(comparison, Comparison)
    assert changes(comparison) == [
        (0, "main", "changed"),
        (1, "writer", "changed"),
        (2, "researcher", "changed"),
        (1, "critic", "same"),
    ]
    researcher = comparison.rows[2]
    grew = researcher.delta("tokens")
    assert grew is not None and grew > 0
    # Each ancestor's total grew by exactly the researcher's change; the critic's did not move.
    assert [r.delta("tokens") for r in comparison.rows] == [grew, grew, grew, 0]
    assert [r.diff for r in comparison.rows] == [None] * 4  # same answers
    assert comparison.totals[1].tokens - comparison.totals[0].tokens == grew


def test_parallel_spawns_align_by_task_whatever_their_order() -> None:
    comparison = nbagents.compare(team_run(critics=2), team_run(critics=2, swap=True))
    assert {r.change for r in comparison.rows} == {"same"}
    assert [(r.type, r.description) for r in comparison.rows[1:]] == [
        ("writer", "Draft the release notes."),
        ("researcher", "Find what changed in 2.1."),
        ("critic", "Judge the plan, pass 1."),
        ("critic", "Judge the plan, pass 2."),
    ]


def test_spawns_one_run_has_are_added_or_removed() -> None:
    two, one = team_run(critics=2), team_run(critics=1)
    assert changes(nbagents.compare(one, two))[-1] == (1, "critic", "added")
    removed = nbagents.compare(two, one)
    assert changes(removed)[-1] == (1, "critic", "removed")
    row = removed.rows[-1]
    assert row.b.tokens is None and row.a.tokens and row.delta("tokens") is None
    frame = removed.to_dataframe()
    assert list(frame["change"]) == ["changed", "same", "same", "same", "removed"]
    assert frame["tokens_b"].isna().tolist() == [False] * 4 + [True]


def test_a_changed_result_is_diffed_word_by_word() -> None:
    old = "Notes: CSV export is new; the Safari login is fixed."
    new = "Notes: CSV export is new; the Safari and Firefox logins are fixed."
    comparison = nbagents.compare(team_run(writer_reply=old), team_run(writer_reply=new))
    writer = next(r for r in comparison.rows if r.type == "writer")
    assert writer.change == "changed" and writer.diff is not None
    assert [p for p in writer.diff if p[0] != "same"] == [
        ("del", "login is"),
        ("ins", "and Firefox logins are"),
    ]
    assert "".join(t for k, t in writer.diff if k != "del") == new
    assert "".join(t for k, t in writer.diff if k != "ins") == old
    html = comparison.to_html()
    assert "<del " in html and "<ins " in html and "result differs" in html


def test_the_dataframe_holds_both_sides_and_the_deltas() -> None:
    frame = nbagents.compare(team_run(), team_run(researcher_prompt=CAREFUL)).to_dataframe()
    assert list(frame.columns) == [
        "depth", "agent", "description", "change",
        "status_a", "status_b",
        "tokens_a", "tokens_b", "tokens_delta",
        "cost_a", "cost_b", "cost_delta",
        "seconds_a", "seconds_b", "seconds_delta",
        "result_a", "result_b",
    ]  # fmt: skip
    assert (frame["tokens_b"] - frame["tokens_a"] == frame["tokens_delta"]).all()
    assert frame.loc[1, "result_a"] == "Notes: CSV export is new; the Safari login is fixed."


def test_runs_from_the_history_by_id(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    before = team_run(store=store, name="prompt v1")
    after = team_run(store=store, name="prompt v2", researcher_prompt=CAREFUL)
    ids = [run_id_of(before), run_id_of(after)]
    comparison = nbagents.compare(*ids, store=store)
    assert isinstance(comparison, Comparison)
    assert comparison.labels == ("A: prompt v1", "B: prompt v2")
    assert changes(comparison) == changes(nbagents.compare(before, after))
    assert "A: prompt v1" in comparison.to_html()
    assert isinstance(
        nbagents.compare(list(nbagents.runs(store=store)["run_id"]), store=store), Comparison
    )


def test_more_runs_make_one_table() -> None:
    runs = [team_run(critics=n) for n in (1, 2, 3)]
    table = nbagents.compare(*runs)
    assert isinstance(table, RunsTable)
    frame = table.to_dataframe()
    assert list(frame["run"]) == ["A", "B", "C"]
    assert list(frame["spawns"]) == [3, 4, 5]
    critic = list(frame["critic tokens"])
    assert (
        critic[0] < critic[1] < critic[2] and list(frame["researcher tokens"]).count(critic[0]) == 0
    )
    assert list(frame["tokens"]) == [t.total_usage().total for t in runs]
    html = table.to_html()
    assert html.count("<tr><th>critic</th>") == 1 and "Per agent type" in html


def test_what_compare_refuses() -> None:
    with pytest.raises(ValueError, match="two runs or more"):
        nbagents.compare(team_run())
    with pytest.raises(TypeError, match="traces or run ids"):
        nbagents.compare(team_run(), 3)  # type: ignore[arg-type]


def test_text_from_the_runs_is_escaped() -> None:
    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script> & done'
    comparison = nbagents.compare(
        team_run(),
        team_run(writer_reply=hostile),
    )
    html = comparison.to_html()
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "onerror=&quot;" in html
    # Times vary: each is wrapped for notebooks/sanitize.cfg.
    assert not re.search(r"\d\.\d\d s(?!</span>)", html.replace('<span class="nba-t">', ""))


def test_word_diff_keeps_both_texts() -> None:
    parts = word_diff("a b  c\nd", "a x  c\nd e")
    assert "".join(t for k, t in parts if k != "del") == "a x  c\nd e"
    assert "".join(t for k, t in parts if k != "ins") == "a b  c\nd"
    assert word_diff("same", "same") == [("same", "same")]
