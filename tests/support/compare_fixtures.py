"""Runs to compare: a main agent with a writer (who asks a researcher) and a critic in
parallel, on the scripted model; each argument changes one thing between two runs."""

from __future__ import annotations

from typing import Any

import nbagents
from nbagents import ScriptedChatModel, Trace, create_deep_agent
from nbagents.models import delegate, parallel


def team_run(
    *,
    researcher_prompt: str = "Research.",
    writer_reply: str = "Notes: CSV export is new; the Safari login is fixed.",
    critics: int = 1,
    swap: bool = False,
    store: Any = False,
    name: str = "",
) -> Trace:
    """One run of the team. ``researcher_prompt`` changes the researcher's system prompt (its
    tokens, and so its ancestors' totals), ``writer_reply`` the writer's result, ``critics``
    how many critics the main agent spawns, ``swap`` the order of the parallel calls."""
    calls = [delegate("Draft the release notes.", "writer")]
    calls += [delegate(f"Judge the plan, pass {i + 1}.", "critic") for i in range(critics)]
    if swap:
        calls.reverse()
    script = {
        "main": [parallel(*calls), "Release 2.1 is ready."],
        "writer": [delegate("Find what changed in 2.1.", "researcher"), writer_reply],
        "researcher": ["CSV export; Safari login fix."],
        "critic": ["The plan holds."],
    }
    subagents = [
        {"name": "writer", "description": "Writes.", "system_prompt": "Write."},
        {"name": "critic", "description": "Judges.", "system_prompt": "Judge."},
        {"name": "researcher", "description": "Finds facts.", "system_prompt": researcher_prompt},
    ]
    agent = create_deep_agent(ScriptedChatModel(script=script), subagents=subagents)
    with nbagents.trace(display=False, store=store, title=name) as t:
        agent.invoke({"messages": [("user", "Prepare release 2.1.")]})
    return t
