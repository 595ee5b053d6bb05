"""Checks on agent runs for pytest: what was delegated and how, what failed, which tools ran,
tokens and cost, and a run's structure against a saved one.

::

    from nbagents.testing import assert_matches, assert_no_failures, assert_spawned

    with nbagents.trace(display=False) as t:
        agent.invoke({"messages": [("user", QUESTION)]})

    assert_spawned(t, "researcher", times=2, parallel=True, by="main")
    assert_no_failures(t)
    assert_within_budget(t, tokens=20_000)
    assert_matches(t, Path(__file__).parent / "baselines" / "research.json")

Every assertion raises :class:`TraceAssertionError`, an ``AssertionError`` whose message says
what was expected and lists what the run did. ``spawns(t)``, ``tool_calls(t)`` and
``problems(t)`` give the same facts as records, for checks of your own.
"""

from __future__ import annotations

from nbagents.testing._assertions import (
    TraceAssertionError,
    assert_max_depth,
    assert_no_failures,
    assert_spawned,
    assert_tool_called,
    assert_within_budget,
)
from nbagents.testing._experiments import assert_experiment
from nbagents.testing._facts import Problem, SpawnFact, ToolCall, problems, spawns, tool_calls
from nbagents.testing._structure import (
    UPDATE_ENV,
    Difference,
    StructuralDiff,
    assert_matches,
    structural_diff,
)

__all__ = [
    "UPDATE_ENV",
    "Difference",
    "Problem",
    "SpawnFact",
    "StructuralDiff",
    "ToolCall",
    "TraceAssertionError",
    "assert_experiment",
    "assert_matches",
    "assert_max_depth",
    "assert_no_failures",
    "assert_spawned",
    "assert_tool_called",
    "assert_within_budget",
    "problems",
    "spawns",
    "structural_diff",
    "tool_calls",
]
