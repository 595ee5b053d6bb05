"""Seconds from Ctrl-C to ``KeyboardInterrupt`` in a sync ``invoke`` whose sub-agents are busy.

Three parallel sub-agents each call a sync tool that takes ``--tool`` seconds; a real SIGINT is
sent ``--after`` seconds into the run (once the tools are running). Compares nbagents'
``create_deep_agent`` with upstream ``deepagents.create_deep_agent`` on the same scripted model.
The ideal figure is 0: the user gets the prompt back at once.

    python benchmarks/bench_ctrl_c.py [--tool 10] [--after 1.5] [-n 3]
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
from typing import Any

from langchain_core.tools import tool

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import call, delegate, parallel


def run(make: Any, n: int, tool_seconds: float, after: float) -> tuple[float, int]:
    """Seconds from SIGINT to ``KeyboardInterrupt``, and how many tools had finished by then."""
    finished: list[int] = []

    @tool
    def work(x: str) -> str:
        """Sync work, as a blocking HTTP call would be."""
        time.sleep(tool_seconds)
        finished.append(1)
        return x

    model = ScriptedChatModel(
        script={
            "main": [parallel(*(delegate(f"job {i}", "worker") for i in range(n))), "done"],
            "worker": [call("work", x="1"), "ok"],
        }
    )
    worker = {
        "name": "worker",
        "description": "Works.",
        "system_prompt": "Work.",
        "tools": [work],
    }
    agent = make(model, worker)
    sent: list[float] = []

    def press() -> None:
        time.sleep(after)
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=press, daemon=True).start()
    try:
        agent.invoke({"messages": [("user", "go")]})
    except KeyboardInterrupt:
        return time.perf_counter() - sent[0], len(finished)
    raise SystemExit("the run ended before Ctrl-C: raise --tool or lower --after")


def nbagents_agent(model: ScriptedChatModel, worker: Any) -> Any:
    return create_deep_agent(model, subagents=[worker])


def upstream_agent(model: ScriptedChatModel, worker: Any) -> Any:
    import deepagents

    return deepagents.create_deep_agent(model=model, subagents=[worker], name="main")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3, help="parallel sub-agents")
    parser.add_argument("--tool", type=float, default=10.0, help="seconds each tool takes")
    parser.add_argument("--after", type=float, default=1.5, help="seconds before Ctrl-C")
    args = parser.parse_args()
    print(f"{args.n} sub-agents in a {args.tool:g} s tool, Ctrl-C after {args.after:g} s")
    for label, make in (("nbagents", nbagents_agent), ("deepagents", upstream_agent)):
        try:
            seconds, done = run(make, args.n, args.tool, args.after)
        except ImportError:
            print(f"  {label:<11} not installed (pip install deepagents)")
            continue
        print(f"  {label:<11} prompt back {seconds:6.2f} s after Ctrl-C ({done} tools finished)")
        time.sleep(args.tool)  # let the threads a stopped run left behind end before the next


if __name__ == "__main__":
    main()
