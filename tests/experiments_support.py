"""What the experiment tests share: a scripted deep agent whose answers differ by question,
and its cases."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import call, delegate, fail, say


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


SUBAGENTS: list[Any] = [
    {"name": "researcher", "description": "Researches", "system_prompt": "Research."},
    {"name": "writer", "description": "Writes", "system_prompt": "Write.", "tools": []},
]

CASES: list[dict[str, Any]] = [
    {"id": "add", "inputs": "What is 2+2?", "expected": "4"},
    {"id": "capital", "inputs": "Capital of France?", "expected": "Paris"},
    {"id": "hard", "inputs": "Meaning of life?", "expected": "42"},
]


def agent(*, better: bool = False, latency: float = 0.0) -> Any:
    """The "before" agent answers two of three right; ``better=True`` answers all three, with a
    researcher that fails less and a writer it no longer needs."""
    hard = (
        [delegate("find the meaning", "researcher"), say("It is 42")]
        if better
        else [
            delegate("find the meaning", "researcher"),
            delegate("write it", "writer"),
            say("Nobody knows"),
        ]
    )
    model = ScriptedChatModel(
        script={
            "main": {
                "What is 2+2?": [delegate("add 2 and 2", "researcher"), say("The answer is 4")],
                "Capital of France?": [say("Paris")],
                "Meaning of life?": hard,
            },
            "researcher": {
                "add 2 and 2": [call("lookup", topic="sums"), say("4")],
                "find the meaning": ["42"] if better else [fail("the source is down")],
            },
            "writer": {"write it": ["Nobody knows"]},
        },
        latency=latency,
    )
    return create_deep_agent(model, [lookup], subagents=SUBAGENTS)
