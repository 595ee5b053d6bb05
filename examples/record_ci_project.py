"""Regenerate ``examples/ci-project/cassettes/research.json``, the example CI project's cassette.

No API key was at hand, so the cassette is recorded from nbagents' ``ScriptedChatModel``
standing in for ``openai:gpt-4.1-mini``: the responses are the script below, in the shape a
provider's would have, and the cassette's note says so. A user of the project records from the
real model instead (see ``ci-project/README.md``)::

    python examples/record_ci_project.py
    cd examples/ci-project && NBAGENTS_UPDATE_BASELINES=1 pytest tests   # then review the diff
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "ci-project"))

from research_agent import CASSETTE, QUESTION, build_agent

from nbagents import ScriptedChatModel
from nbagents.models import call, delegate, parallel, recorded, say

ASK = (
    "Find how well {db} suits analytical queries (large scans, GROUP BY, joins) on a laptop. "
    "Report facts with their sources."
)
DRAFT = "Use DuckDB for the notebooks: it is columnar and much faster for scans than SQLite."
SCRIPT = {
    "main": [
        parallel(
            delegate(ASK.format(db="SQLite"), "researcher"),
            delegate(ASK.format(db="DuckDB"), "researcher"),
        ),
        delegate(f"Review this draft answer to {QUESTION!r}:\n\n{DRAFT}", "critic"),
        say(
            "Use DuckDB for the analytics notebooks: it stores data by column and runs "
            "vectorised, so scans and GROUP BY queries run faster than in SQLite, which stores "
            "rows in B-trees. Benchmark one real notebook before switching."
        ),
    ],
    "researcher": {
        ASK.format(db="SQLite"): [
            call("search", query="SQLite storage layout"),
            say("- SQLite stores each table as a B-tree of rows (sqlite.org/arch.html)."),
        ],
        ASK.format(db="DuckDB"): [
            call("search", query="DuckDB storage layout"),
            say("- DuckDB is a columnar, vectorised engine (duckdb.org/why_duckdb)."),
        ],
    },
    "critic": ["1. 'much faster' has no measurement behind it: suggest a benchmark."],
}
NOTE = (
    "Recorded from nbagents' ScriptedChatModel standing in for openai:gpt-4.1-mini (no API key "
    "was at hand) by examples/record_ci_project.py."
)


def main() -> None:
    CASSETTE.unlink(missing_ok=True)
    model = recorded(ScriptedChatModel(script=SCRIPT), CASSETTE, "record", note=NOTE)
    result = build_agent(model).invoke({"messages": [("user", QUESTION)]})
    print(f"Recorded {CASSETTE}\n\n{result['messages'][-1].text}")


if __name__ == "__main__":
    main()
