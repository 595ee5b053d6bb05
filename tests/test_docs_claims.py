"""The quickstart code in the README and the getting-started page runs, and says what it does.

Both pages show the same program and make claims about it (what it prints, that the three
sub-agents overlap, how many model turns the run waits for); these tests run the code as printed
and check each claim against the trace, so the pages cannot drift from the library.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = ["README.md", "docs/getting-started.md"]


def first_python_block(page: str) -> str:
    text = (REPO / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, f"{page} has no python code block"
    return str(blocks[0])


def run_block(code: str) -> tuple[dict[str, Any], str]:
    namespace: dict[str, Any] = {"__name__": "quickstart"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "quickstart", "exec"), namespace)
    return namespace, out.getvalue()


def test_both_pages_show_the_same_quickstart() -> None:
    readme, guide = (first_python_block(p) for p in PAGES)

    def program(block: str) -> list[str]:
        """The code up to the printed answer; the pages differ only in the exports after it."""
        lines = [line.split("#")[0].rstrip() for line in block.splitlines()]
        code = [line for line in lines if line]
        end = next(i for i, line in enumerate(code) if line.startswith("print("))
        return code[: end + 1]

    assert program(readme) == program(guide)


@pytest.mark.parametrize("page", PAGES)
def test_quickstart_prints_what_the_page_says(page: str) -> None:
    namespace, printed = run_block(first_python_block(page))
    assert printed.strip() == "Done: A and B are fine, C is written."
    assert "Done: A and B are fine, C is written." in (REPO / page).read_text(encoding="utf-8")
    usage = namespace["t"].token_usage().set_index("agent")
    assert usage.loc["researcher", "spawns"] == 2
    assert usage.loc["writer", "spawns"] == 1


def test_getting_started_turn_counts() -> None:
    """Four turns in a row (main 2 + the longest sub-agent 2) instead of six one after another."""
    namespace, _ = run_block(first_python_block("docs/getting-started.md"))
    trace = namespace["t"]
    subagents = [s for s in trace.spans if s.kind == "subagent"]
    assert len(subagents) == 3
    # The three sub-agents overlap: each starts before every other one ends.
    assert max(s.start for s in subagents) < min(s.end for s in subagents)

    def model_turns(agent_span_id: str) -> int:
        own = [s for s in trace.spans if s.kind == "model"]
        return sum(1 for s in own if nearest_agent(trace, s) == agent_span_id)

    main = next(s for s in trace.spans if s.kind == "agent")
    per_subagent = {s.attributes["description"]: model_turns(s.id) for s in subagents}
    assert model_turns(main.id) == 2
    assert per_subagent == {"Research A": 2, "Research B": 1, "Write C": 1}
    in_a_row = model_turns(main.id) + max(per_subagent.values())
    one_after_another = model_turns(main.id) + sum(per_subagent.values())
    guide = (REPO / "docs/getting-started.md").read_text(encoding="utf-8")
    latency = namespace["model"].latency
    assert f"takes four model turns of latency (about {in_a_row * latency:.1f} s" in guide
    assert in_a_row == 4
    assert f"take six turns ({one_after_another * latency:.1f} s)" in guide
    assert one_after_another == 6


def nearest_agent(trace: Any, span: Any) -> str:
    by_id = {s.id: s for s in trace.spans}
    current = by_id.get(span.parent_id)
    while current is not None and current.kind not in ("agent", "subagent"):
        current = by_id.get(current.parent_id)
    assert current is not None
    return str(current.id)
