"""Fixture module (no tests): a nested run whose tool calls have known counts and tokens.

The main agent asks, in one turn, for ``search`` and two ``task`` spawns of a researcher. The
first researcher asks for ``search`` twice in one turn, then for ``broken``, which raises: that
researcher fails, and with it its ``task``. The second delegates to a general-purpose sub-agent,
which calls ``fetch``. Every turn that asks for a tool reports fixed tokens (``TURNS``), so a
tool's numbers can be worked out by hand (``EXPECTED``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from nbagents.tracing import Trace, recording

__all__ = ["EXPECTED", "PRICES", "TURNS", "make_tool_agent", "tool_trace"]

TURNS = {
    "main asks": (100, 10),
    "researcher A asks": (50, 5),
    "researcher A breaks": (60, 6),
    "researcher B asks": (70, 7),
    "general-purpose asks": (30, 3),
}
"""Input and output tokens of each turn that asks for tools."""

PRICES = {"scripted-model": (1.0, 2.0)}
"""USD per million input and output tokens."""

# tool -> calls, agents (most calls first), failures, turns, turn input and output tokens
EXPECTED: dict[str, tuple[int, str, int, int, int, int]] = {
    # main's turn once, though it asked for search once and task twice; researcher A's once,
    # though it asked for search twice
    "search": (3, "researcher, main", 0, 2, 150, 15),
    "task": (3, "main, researcher", 1, 2, 170, 17),
    "broken": (1, "researcher", 1, 1, 60, 6),
    "fetch": (1, "general-purpose", 0, 1, 30, 3),
}


def make_tool_agent(payload: str = "", model_name: str = "scripted-model") -> Any:
    """The agent of the run; ``payload`` goes into the arguments and results of ``search``;
    ``model_name`` is the name the model reports (``gpt-4o`` has a price)."""
    from langchain_core.tools import tool

    from nbagents import ScriptedChatModel, create_deep_agent
    from nbagents.models import Turn, call, delegate, parallel, say

    def used(turn: Turn, name: str) -> Turn:
        inp, out = TURNS[name]
        return dataclasses.replace(turn, usage={"input_tokens": inp, "output_tokens": out})

    def answer(text: str) -> Turn:
        return say(text, usage={"input_tokens": 1, "output_tokens": 1})

    @tool
    def search(query: str) -> str:
        """Search the web."""
        return f"found {query}"

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        return f"page {url}"

    @tool
    def broken() -> str:
        """Always fails."""
        raise ValueError("broken on purpose")

    asks = parallel(
        call("search", query="q" + payload),
        delegate("Research A", "researcher"),
        delegate("Research B", "researcher"),
    )
    model = ScriptedChatModel(
        script={
            "main": [used(asks, "main asks"), answer("done")],
            "researcher": {
                "Research A": [
                    used(
                        parallel(call("search", query="a1"), call("search", query="a2")),
                        "researcher A asks",
                    ),
                    used(call("broken"), "researcher A breaks"),
                    answer("A"),
                ],
                "Research B": [used(delegate("Deeper"), "researcher B asks"), answer("B")],
            },
            "general-purpose": [used(call("fetch", url="u"), "general-purpose asks"), answer("d")],
        },
        model_name=model_name,
    )
    researcher = {"name": "researcher", "description": "Researches", "system_prompt": "r"}
    return create_deep_agent(model, [search, fetch, broken], subagents=[researcher])


def tool_trace(payload: str = "", model_name: str = "scripted-model") -> Trace:
    """The run, traced."""
    agent = make_tool_agent(payload, model_name)
    with recording() as tracer:
        agent.invoke({"messages": [("user", "go")]})
    return tracer.trace
