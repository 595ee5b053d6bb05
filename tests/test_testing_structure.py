"""assert_matches: a run against a saved one. Equal runs match (their times and ids differ);
a changed result, a sub-agent gone or added, a changed status or tokens beyond the tolerance
fail, and the message shows the two trees aligned with what changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.compare_fixtures import team_run

from nbagents import Trace
from nbagents.testing import (
    UPDATE_ENV,
    TraceAssertionError,
    assert_matches,
    structural_diff,
)


@pytest.fixture(scope="module")
def baseline() -> Trace:
    return team_run()


@pytest.fixture
def saved(baseline: Trace, tmp_path: Path) -> Path:
    path = tmp_path / "baseline.json"
    baseline.save(path)
    return path


def mismatch(run: Trace, baseline: Trace | Path, **options: object) -> str:
    with pytest.raises(TraceAssertionError) as caught:
        assert_matches(run, baseline, **options)  # type: ignore[arg-type]
    return str(caught.value)


def test_an_equal_run_matches_its_saved_baseline(baseline: Trace, saved: Path) -> None:
    again = team_run()
    assert {s.id for s in again}.isdisjoint({s.id for s in baseline})
    assert [s.start for s in again] != [s.start for s in baseline]
    assert_matches(again, saved)
    assert_matches(again, baseline)
    assert not structural_diff(again, saved)
    assert structural_diff(again, saved).report() == f"The run matches {saved}."


def test_a_changed_result_shows_the_aligned_trees_and_the_word_diff(saved: Path) -> None:
    changed = team_run(writer_reply="Notes: CSV export is new; the Safari login still fails.")
    assert mismatch(changed, saved, tokens=None) == "\n".join(
        [
            f"The run differs from {saved} at 1 of 4 agents (= same, ~ changed, - only in "
            f"{saved}, + only in this run):",
            "  = main: ok, 2,262 tokens",
            "  ~   writer 'Draft the release notes.': ok, 1,071 tokens",
            "        result: Notes: CSV export is new; the Safari login "
            "[-is fixed.-]{+still fails.+}",
            "  =     researcher 'Find what changed in 2.1.': ok, 339 tokens",
            "  =   critic 'Judge the plan, pass 1.': ok, 333 tokens",
            f"If the change is intended, rewrite the baseline with {UPDATE_ENV}=1.",
        ]
    )
    assert_matches(changed, saved, results=False)


def test_a_sub_agent_no_longer_called_is_a_removed_row(saved: Path) -> None:
    message = mismatch(team_run(critics=0), saved)
    assert "  -   critic 'Judge the plan, pass 1.': ok, 333 tokens" in message.splitlines()
    assert "      tokens: 2,260 → 1,879 (-17%; tolerance 10%)" in message.splitlines()
    diff = structural_diff(team_run(critics=0), saved)
    assert [(d.path, d.what) for d in diff.differences] == [
        ("main", "tokens"),
        ("main > critic 'Judge the plan, pass 1.'", "removed"),
    ]


def test_a_new_sub_agent_is_an_added_row(saved: Path) -> None:
    message = mismatch(team_run(critics=2), saved, tokens=None)
    assert "  +   critic 'Judge the plan, pass 2.': ok, 333 tokens" in message.splitlines()
    assert "  =   critic 'Judge the plan, pass 1.': ok, 333 tokens" in message.splitlines()


def test_tokens_are_compared_within_the_tolerance(baseline: Trace) -> None:
    wordier = team_run(researcher_prompt="Research. " * 40)
    grown = structural_diff(wordier, baseline, tokens=None)
    assert not grown
    researcher = wordier.subagents[1]
    before = baseline.subagents[1].tokens_total.total
    after = researcher.tokens_total.total
    assert after > before
    change = (after - before) / before
    assert_matches(wordier, baseline, tokens=change + 0.01, results=True)
    message = mismatch(wordier, baseline, tokens=change / 2)
    assert f"tokens: {before:,} → {after:,} (+{change:.0%}" in message


def test_a_failed_sub_agent_changes_the_status(baseline: Trace) -> None:
    failed = team_run()
    failed.get(failed.subagents[0].span_id).status = "error"
    failed.get(failed.subagents[0].span_id).error = "ValueError: disk full"
    message = mismatch(failed, baseline)
    assert "        status: ok → error (ValueError: disk full)" in message.splitlines()


def test_a_missing_baseline_says_how_to_write_it(
    baseline: Trace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "baselines" / "team.json"
    monkeypatch.delenv(UPDATE_ENV, raising=False)
    with pytest.raises(TraceAssertionError, match=f"No baseline at {path}.*{UPDATE_ENV}=1"):
        assert_matches(baseline, path)
    monkeypatch.setenv(UPDATE_ENV, "1")
    assert_matches(baseline, path)  # written, not checked
    assert path.exists()
    monkeypatch.setenv(UPDATE_ENV, "0")
    assert_matches(team_run(), path)
    with pytest.raises(TraceAssertionError):
        assert_matches(team_run(critics=0), path)


def test_update_rewrites_a_stale_baseline(saved: Path) -> None:
    fewer = team_run(critics=0)
    assert_matches(fewer, saved, update=True)
    assert_matches(team_run(critics=0), saved)
    with pytest.raises(ValueError, match="needs a path"):
        assert_matches(fewer, fewer, update=True)


def test_a_negative_tolerance_is_refused(baseline: Trace) -> None:
    with pytest.raises(ValueError, match="relative tolerance"):
        assert_matches(baseline, baseline, tokens=-0.1)
