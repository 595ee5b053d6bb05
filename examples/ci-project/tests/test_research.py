"""What the research agent must keep doing, checked on the recorded run (no key, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest
from research_agent import QUESTION, build_agent

import nbagents
from nbagents import Trace
from nbagents.testing import (
    assert_matches,
    assert_max_depth,
    assert_no_failures,
    assert_spawned,
    assert_tool_called,
    assert_within_budget,
)

BASELINE = Path(__file__).parent / "baselines" / "research.json"


@pytest.fixture(scope="module")
def run() -> Trace:
    with nbagents.trace(display=False) as t:
        build_agent().invoke({"messages": [("user", QUESTION)]})
    return t


def test_the_researchers_work_in_parallel_then_the_critic_reviews(run: Trace) -> None:
    assert_spawned(run, "researcher", times=2, parallel=True, by="main")
    assert_spawned(run, "critic", times=1, parallel=False)
    assert_max_depth(run, 1)


def test_each_researcher_searches(run: Trace) -> None:
    assert_tool_called(run, "search", times=2, by="researcher")
    assert_tool_called(run, "search", times=0, by="main")


def test_nothing_fails_and_it_stays_in_budget(run: Trace) -> None:
    assert_no_failures(run)
    assert_within_budget(run, tokens=20_000)


def test_the_run_keeps_the_committed_structure(run: Trace) -> None:
    # The tree, tasks, statuses and results of the committed run; tokens within 10 %.
    # After an intended change: NBAGENTS_UPDATE_BASELINES=1 pytest tests, and review the diff.
    assert_matches(run, BASELINE)
