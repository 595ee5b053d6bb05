"""Wall time of one AI message making 50 parallel ``task`` calls, each sub-agent's work taking 1 s.

Compares nbagents' ``create_deep_agent`` with upstream ``deepagents.create_deep_agent`` on the same
scripted model, under ``invoke`` and ``ainvoke``. The work is the sub-agent's model reply
(``--work model``) or a sync tool it calls (``--work tool``, e.g. an HTTP client without async).
The main agent's own turns take no time, so the ideal figure is one unit of work.

    python benchmarks/bench_parallel_subagents.py [-n 50] [--latency 1.0] [--work model|tool]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import time
from collections.abc import Callable
from typing import Any

from langchain_core.tools import tool

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import Turn, call, delegate, parallel


@tool
def wait(seconds: float) -> str:
    """Block for ``seconds``, as a sync network call would."""
    time.sleep(seconds)
    return "waited"


WORKER = {
    "name": "worker",
    "description": "Does one small job.",
    "system_prompt": "Do the job.",
    "tools": [wait],
}


def scripted_model(n: int, latency: float, work: str) -> ScriptedChatModel:
    fan_out = parallel(*(delegate(f"job {i}", "worker") for i in range(n)))
    # Only the sub-agents' work is slow, so the wall time measures how well they overlap.
    main = [dataclasses.replace(fan_out, latency=0.0), Turn(text="all done", latency=0.0)]
    if work == "tool":
        worker = [call("wait", seconds=latency), "done"]
        return ScriptedChatModel(script={"main": main, "worker": worker})
    return ScriptedChatModel(script={"main": main, "worker": ["done"]}, latency=latency)


def nbagents_agent(model: ScriptedChatModel) -> Any:
    return create_deep_agent(model, subagents=[WORKER])


def upstream_agent(model: ScriptedChatModel) -> Any:
    import deepagents

    return deepagents.create_deep_agent(model=model, subagents=[WORKER], name="main")


def measure(
    build: Callable[[ScriptedChatModel], Any], n: int, latency: float, work: str, mode: str
) -> float:
    agent = build(scripted_model(n, latency, work))
    request = {"messages": [("user", "go")]}
    started = time.perf_counter()
    result = asyncio.run(agent.ainvoke(request)) if mode == "ainvoke" else agent.invoke(request)
    elapsed = time.perf_counter() - started
    answers = [m for m in result["messages"] if m.type == "tool" and m.text == "done"]
    if len(answers) != n or result["messages"][-1].text != "all done":
        raise RuntimeError(f"unexpected run: {len(answers)} of {n} sub-agents answered")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=50, help="parallel sub-agents (default 50)")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds of work per sub-agent")
    parser.add_argument("--work", choices=("model", "tool"), default="model")
    args = parser.parse_args()

    what = "model latency" if args.work == "model" else "sync tool call"
    print(f"{args.n} parallel sub-agents, a {args.latency:g} s {what} each")
    print(f"{'library':<12}{'mode':<9}{'wall s':>8}{'x ideal':>9}")
    for label, build in (("nbagents", nbagents_agent), ("deepagents", upstream_agent)):
        for mode in ("invoke", "ainvoke"):
            seconds = measure(build, args.n, args.latency, args.work, mode)
            print(f"{label:<12}{mode:<9}{seconds:>8.2f}{seconds / args.latency:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
