"""The fan-out most benchmarks run: a main agent hands ``n`` jobs to sub-agents at once; each
sub-agent looks a key up with one tool call and answers. Zero latency: the scripted model."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool

from nbagents import ScriptedChatModel, SubAgent, create_deep_agent
from nbagents.models import call, delegate, parallel, say

WORKER: SubAgent = {
    "name": "worker",
    "description": "Looks things up.",
    "system_prompt": "Look up.",
}


@tool("lookup")
def _lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool("lookup")
def _wordy_lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}: " + "lorem ipsum " * 20


def fanout_agent(n: int, *, wordy: bool = False) -> Any:
    """The compiled agent. ``wordy``: each task, tool result and answer carries a sentence or
    a few, as a real one would, which is what a view of the run has to show."""
    jobs = (f"job {i}: look up k{i}" if wordy else f"job {i}" for i in range(n))
    answer = "found it: " + "result text " * 10 if wordy else "found it"
    model = ScriptedChatModel(
        script={
            "main": [parallel(*(delegate(job, "worker") for job in jobs)), say("done")],
            "worker": [call("lookup", key="k"), say(answer)],
        }
    )
    return create_deep_agent(model, [_wordy_lookup if wordy else _lookup], subagents=[WORKER])
