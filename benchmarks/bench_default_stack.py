"""What create_deep_agent's default stack (summarization, patched tool calls, prompt caching)
costs per model call, against the same agent with only the sub-agent middleware.

A main agent makes N tool calls in a row on the scripted model at zero latency (so the figure
is the middleware's own work: counting the conversation's tokens before each call, scanning it
for unanswered tool calls), then answers. Rounds alternate between the two agents and the
median is kept. The goal is a ratio at most 1.10. Figures only; nothing is asserted.

    python benchmarks/bench_default_stack.py [-n 50] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import call, say

DEFAULTS = [
    "SummarizationMiddleware",
    "PatchToolCallsMiddleware",
    "AnthropicPromptCachingMiddleware",
]


@tool
def note(n: int) -> str:
    """Write note n."""
    return f"note {n}: " + "text " * 30


def agent(steps: int, *, defaults: bool) -> Any:
    model = ScriptedChatModel(
        script={"main": [*(call("note", n=i) for i in range(steps)), say("done")]}
    )
    excluded = () if defaults else DEFAULTS
    return create_deep_agent(model, tools=[note], excluded_middleware=excluded)


def seconds(graph: Any) -> float:
    start = time.perf_counter()
    graph.invoke({"messages": [HumanMessage("Write the notes.")]})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=50, help="tool calls in the run")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with_stack, bare = agent(args.n, defaults=True), agent(args.n, defaults=False)
    seconds(with_stack), seconds(bare)  # warm-up: imports, schema conversions
    stack_times, bare_times = [], []
    for _ in range(args.rounds):
        stack_times.append(seconds(with_stack))
        bare_times.append(seconds(bare))
    calls = args.n + 1
    s, b = statistics.median(stack_times), statistics.median(bare_times)
    print(f"{calls} model calls, median of {args.rounds} rounds")
    print(f"  sub-agent middleware only: {b * 1000 / calls:.2f} ms per model call")
    print(f"  default stack:             {s * 1000 / calls:.2f} ms per model call")
    print(f"  ratio: {s / b:.2f}x (goal <= 1.10x)")


if __name__ == "__main__":
    main()
