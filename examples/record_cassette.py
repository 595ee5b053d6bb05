"""Regenerate ``examples/cassettes/research.json``, the cassette tutorial 9 and the tests replay.

The committed cassette was recorded from nbagents' ``ScriptedChatModel``, because no API key was
at hand: its responses are the script in ``research.py``, not a real model's. Re-run this after
changing the sub-agent files, the prompts or the ``task`` tool, since any of them changes the
requests and so the cassette's keys::

    python examples/record_cassette.py

To record the same run from a real model instead (needs its package and key, see
docs/providers.md), name it and write to another file, since the tests expect the scripted one::

    python examples/record_cassette.py --model openai:gpt-4.1-mini --out research-openai.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from research import CASSETTE, QUESTION, build_agent, scripted_model

from nbagents.models import recorded

SCRIPTED_NOTE = (
    "Recorded from nbagents' ScriptedChatModel (no API key was at hand) by "
    "examples/record_cassette.py; the responses are the script in examples/research.py."
)


def record(out: Path, model: str | None = None) -> str:
    """Record one run of the research agent into ``out`` (replacing it); return the answer."""
    out.unlink(missing_ok=True)
    note = (
        SCRIPTED_NOTE if model is None else f"Recorded from {model} by examples/record_cassette.py."
    )
    inner = scripted_model() if model is None else model
    agent = build_agent(recorded(inner, out, "record", note=note))
    result = agent.invoke({"messages": [("user", QUESTION)]})
    return str(result["messages"][-1].text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help='a "provider:model" string; default: the scripted model')
    parser.add_argument("--out", type=Path, default=CASSETTE, help=f"default: {CASSETTE}")
    args = parser.parse_args()
    answer = record(args.out, args.model)
    print(f"Recorded {args.out}\n\n{answer}")


if __name__ == "__main__":
    main()
