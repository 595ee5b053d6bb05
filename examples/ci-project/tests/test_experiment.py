"""The agent over its cases, replayed from the cassette, held to a pass rate."""

from __future__ import annotations

from research_agent import QUESTION, build_agent

import nbagents
from nbagents import scorers
from nbagents.testing import assert_experiment

CASES = [{"id": "sqlite-or-duckdb", "inputs": QUESTION, "expected": "DuckDB"}]


def test_the_agent_recommends_from_two_researchers_every_time() -> None:
    exp = nbagents.evaluate(
        build_agent(),
        CASES,
        scorers=[
            scorers.answer_contains(),
            scorers.spawned("researcher", min=2, max=2),
            scorers.tool_called("search", by="researcher", min=2, max=2),
            scorers.no_failures(),
        ],
        repeats=2,
        store=False,  # CI keeps no history
    )
    assert_experiment(exp, min_pass_rate=1.0)
