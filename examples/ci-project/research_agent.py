"""The project's agent: a main agent that sends two researchers out in parallel, then a critic.

It runs on a real provider, by its string. ``recorded`` puts a cassette in front of the model:
with a key and ``NBAGENTS_CASSETTE_MODE=auto`` (or ``record``) it calls OpenAI and stores every
response; without a key, as in CI, it replays them, and a request the cassette lacks fails with
its name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.tools import tool

from nbagents import create_deep_agent
from nbagents.models import recorded

HERE = Path(__file__).resolve().parent
CASSETTE = HERE / "cassettes" / "research.json"
MODEL = "openai:gpt-4.1-mini"

QUESTION = "Should our team use SQLite or DuckDB for the analytics notebooks we run on laptops?"

_SOURCES = {
    "SQLite": "[sqlite.org/arch.html] SQLite stores each table as a B-tree of rows.",
    "DuckDB": "[duckdb.org/why_duckdb] DuckDB is a columnar, vectorised engine for analytics.",
}


@tool
def search(query: str) -> str:
    """Search the documentation; returns result lines as '[source] text'."""
    found = [line for name, line in _SOURCES.items() if name.lower() in query.lower()]
    return "\n".join(found) or f"No results for {query!r}."


SUBAGENTS: list[dict[str, Any]] = [
    {
        "name": "researcher",
        "description": "Finds facts about one database, with their sources.",
        "system_prompt": "Research the question with the search tool. Report facts with sources.",
        "tools": [search],
    },
    {
        "name": "critic",
        "description": "Reviews a draft answer and lists what is not backed by a source.",
        "system_prompt": "Review the draft. List claims without a source; be brief.",
        "tools": [],
    },
]


def build_agent(model: Any = None) -> Any:
    """The agent on ``model``; by default the provider model behind the project's cassette."""
    return create_deep_agent(
        model if model is not None else recorded(MODEL, CASSETTE),
        [search],
        subagents=SUBAGENTS,
        name="main",
    )
