"""The research example: a main agent with the ``researcher`` and ``critic`` sub-agents.

The sub-agents are defined in ``examples/subagents/*/AGENTS.md``. ``search`` is a canned,
offline tool so that the run is reproducible; ``SCRIPT`` is what ``ScriptedChatModel`` answers
when no real model is used. ``record_cassette.py`` records this run to
``cassettes/research.json`` and the tests and tutorial 9 replay it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import tool

from nbagents import ScriptedChatModel, create_deep_agent, load_subagents
from nbagents.models import call, delegate, parallel, say

HERE = Path(__file__).resolve().parent
SUBAGENTS_DIR = HERE / "subagents"
CASSETTE = HERE / "cassettes" / "research.json"

QUESTION = "Should our team use SQLite or DuckDB for the analytics notebooks we run on laptops?"

ASK_SQLITE = (
    "Find how well SQLite suits analytical queries (large scans, GROUP BY, joins) on a "
    "laptop: its storage layout and what limits it. Report facts with their sources."
)
ASK_DUCKDB = (
    "Find how well DuckDB suits analytical queries (large scans, GROUP BY, joins) on a "
    "laptop: its storage layout and what limits it. Report facts with their sources."
)
DRAFT = (
    "Use DuckDB for the notebooks: its columnar, vectorised engine runs scans and "
    "aggregations much faster than SQLite, and it reads Parquet and pandas frames directly. "
    "Keep SQLite for small transactional app data."
)
ASK_REVIEW = f"Review this draft answer to the question {QUESTION!r}:\n\n{DRAFT}"
FINAL = (
    "Use DuckDB for the analytics notebooks: it stores data by column and runs vectorised, "
    "so scans and GROUP BY queries are much faster than in SQLite, and it queries Parquet "
    "files and pandas DataFrames in place. SQLite remains the better fit for small "
    "transactional data inside applications. Benchmark one real notebook before switching."
)

_RESULTS = {
    "SQLite analytical query performance": (
        "[sqlite.org/arch.html] SQLite stores each table as a B-tree of rows.\n"
        "[sqlite.org/whentouse.html] Suited to embedded and application storage; one writer "
        "at a time."
    ),
    "DuckDB analytical query performance": (
        "[duckdb.org/why_duckdb] DuckDB is a columnar, vectorised engine built for analytics.\n"
        "[duckdb.org/docs/data/parquet] Reads Parquet files and pandas DataFrames in place."
    ),
}


@tool
def search(query: str) -> str:
    """Search the web; returns result lines as '[source] text'."""
    return _RESULTS.get(query, f"No results for {query!r}.")


TOOLS = [search]

SCRIPT: dict[str, Any] = {
    "main": [
        parallel(delegate(ASK_SQLITE, "researcher"), delegate(ASK_DUCKDB, "researcher")),
        delegate(ASK_REVIEW, "critic"),
        say(FINAL),
    ],
    "researcher": {
        ASK_SQLITE: [
            call("search", query="SQLite analytical query performance"),
            say(
                "- SQLite stores tables as row-oriented B-trees (sqlite.org/arch.html), so a "
                "scan reads whole rows.\n- It targets embedded application storage with one "
                "writer at a time (sqlite.org/whentouse.html)."
            ),
        ],
        ASK_DUCKDB: [
            call("search", query="DuckDB analytical query performance"),
            say(
                "- DuckDB is a columnar, vectorised engine built for analytics "
                "(duckdb.org/why_duckdb).\n- It reads Parquet files and pandas DataFrames in "
                "place (duckdb.org/docs/data/parquet)."
            ),
        ],
    },
    "critic": [
        say(
            "1. 'much faster' is not backed by a measurement: say it holds for scans and "
            "aggregations, and suggest benchmarking one real notebook.\n2. Otherwise sound."
        )
    ],
}


def scripted_model() -> ScriptedChatModel:
    """The model the committed cassette was recorded from (no API key was at hand)."""
    return ScriptedChatModel(script=SCRIPT)


def build_agent(model: str | BaseChatModel) -> Any:
    """The research agent on ``model``, with the sub-agents loaded from their Markdown files."""
    subagents = load_subagents(SUBAGENTS_DIR, tools=TOOLS)
    return create_deep_agent(model, TOOLS, subagents=subagents, name="main")
