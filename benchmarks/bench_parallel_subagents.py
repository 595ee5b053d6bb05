"""Wide fan-out: one AI message making N parallel ``task`` calls, nbagents beside deepagents.

Compares nbagents' ``create_deep_agent`` with upstream ``deepagents.create_deep_agent`` on the
same scripted model, under ``invoke`` and ``ainvoke``. The main agent's own turns take no time.

With no arguments it prints the two tables of the README's performance section, in one run:

1. **wall time** of N sub-agents whose model reply takes 1 s (``--wide``, default 500 and
   2,000): the ideal is one second plus the CPU the spawns need;
2. **cost per spawn** with no latency at all (``--widths``, default 50 to 2,000): the wall time
   of the whole run divided by N, and the process's CPU time divided by N (steadier on a shared
   machine). A cost that stays flat as N grows means nothing is O(N) per spawn. The floor is
   LangGraph's own cost of one of N parallel tool calls (``create_agent`` with a tool that
   returns at once, no sub-agent): what every spawn pays before its sub-agent starts, and it
   grows with N (LangGraph checks all N calls after each one finishes).

deepagents under ``invoke`` runs a few sub-agents at a time (LangGraph's default thread pool),
so its one-second rows at 2,000-way would take minutes: they are skipped unless ``--all``.
Each figure is the best of ``--repeat`` runs (default 3): other load on the machine only adds.

The old single figure is still there: ``-n 50 [--latency 1.0] [--work model|tool]`` times one
run of each library and mode, the work being the sub-agent's model reply or a sync tool it
calls (``--work tool``, e.g. an HTTP client without async).

    python benchmarks/bench_parallel_subagents.py [--wide 500,2000] [--widths 50,100,500,2000]
    python benchmarks/bench_parallel_subagents.py -n 50 [--latency 1.0] [--work model|tool]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import time
from collections.abc import Callable
from functools import partial
from typing import Any, cast

from langchain.agents import create_agent
from langchain_core.tools import tool

from nbagents import ScriptedChatModel, SubAgent, create_deep_agent
from nbagents.models import Turn, call, delegate, parallel


@tool
def wait(seconds: float) -> str:
    """Block for ``seconds``, as a sync network call would."""
    time.sleep(seconds)
    return "waited"


@tool
def noop(job: str) -> str:
    """Return at once: the floor's tool."""
    return "done"


WORKER: SubAgent = {
    "name": "worker",
    "description": "Does one small job.",
    "system_prompt": "Do the job.",
    "tools": [wait],
}

Build = Callable[[ScriptedChatModel], Any]


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
    from deepagents.middleware.subagents import SubAgent as UpstreamSubAgent

    # WORKER uses only keys deepagents' own SubAgent has (name, description, prompt, tools).
    spec = cast(UpstreamSubAgent, WORKER)
    return deepagents.create_deep_agent(model=model, subagents=[spec], name="main")


def measure(build: Build, n: int, latency: float, work: str, mode: str) -> float:
    return measure_with_cpu(build, n, latency, work, mode)[0]


def measure_with_cpu(
    build: Build, n: int, latency: float, work: str, mode: str
) -> tuple[float, float]:
    """Wall and process CPU seconds of one run (the agent is built before the clocks start)."""
    agent = build(scripted_model(n, latency, work))
    request: Any = {"messages": [("user", "go")]}
    cpu, started = time.process_time(), time.perf_counter()
    result = asyncio.run(agent.ainvoke(request)) if mode == "ainvoke" else agent.invoke(request)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    answers = [m for m in result["messages"] if m.type == "tool" and m.text == "done"]
    if len(answers) != n or result["messages"][-1].text != "all done":
        raise RuntimeError(f"unexpected run: {len(answers)} of {n} sub-agents answered")
    return elapsed, cpu


def measure_floor(n: int, mode: str) -> tuple[float, float]:
    """LangGraph alone: one AI message of N parallel calls of a tool that returns at once."""
    calls = parallel(*(call("noop", job=f"job {i}") for i in range(n)))
    model = ScriptedChatModel(script={"main": [calls, "all done"]})
    agent = create_agent(model, [noop], name="main")
    request: Any = {"messages": [("user", "go")]}
    config: Any = {"max_concurrency": n}  # as create_deep_agent allows, so the pool is no cap
    cpu, started = time.process_time(), time.perf_counter()
    if mode == "ainvoke":
        result = asyncio.run(agent.ainvoke(request, config))
    else:
        result = agent.invoke(request, config)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if sum(m.type == "tool" for m in result["messages"]) != n:
        raise RuntimeError("unexpected floor run")
    return elapsed, cpu


LIBRARIES: tuple[tuple[str, Build], ...] = (
    ("nbagents", nbagents_agent),
    ("deepagents", upstream_agent),
)
MODES = ("invoke", "ainvoke")


def best(repeat: int, run: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    """The least wall and the least CPU time of ``repeat`` runs (other load only adds)."""
    runs = [run() for _ in range(max(1, repeat))]
    return min(w for w, _ in runs), min(c for _, c in runs)


def wide_table(widths: list[int], latency: float, everything: bool, repeat: int) -> None:
    print(
        f"N parallel sub-agents, a {latency:g} s model reply each: wall seconds (ideal {latency:g})"
    )
    print(f"{'N':>6}  {'library':<12}{'invoke':>9}{'ainvoke':>9}")
    for n in widths:
        for label, build in LIBRARIES:
            cells = []
            for mode in MODES:
                if label == "deepagents" and mode == "invoke" and n > 500 and not everything:
                    cells.append("skipped")  # minutes: its thread pool runs a few at a time
                    continue
                # deepagents' invoke takes a minute and more: once is enough to see it.
                times = 1 if label == "deepagents" and mode == "invoke" else repeat
                wall, _ = best(times, partial(measure_with_cpu, build, n, latency, "model", mode))
                cells.append(f"{wall:.2f}")
            print(f"{n:>6}  {label:<12}{cells[0]:>9}{cells[1]:>9}", flush=True)


def per_spawn_table(widths: list[int], repeat: int) -> None:
    print("Cost per spawn with no latency: ms of wall time / ms of CPU time per sub-agent")
    print(f"{'N':>6}  {'who':<22}{'invoke':>15}{'ainvoke':>15}")
    rows: tuple[tuple[str, Callable[[int, str], tuple[float, float]]], ...] = (
        *(
            (label, lambda n, mode, b=build: measure_with_cpu(b, n, 0.0, "model", mode))
            for label, build in LIBRARIES
        ),
        ("floor (LangGraph call)", measure_floor),
    )
    for n in widths:
        for label, run in rows:
            cells = []
            for mode in MODES:
                wall, cpu = best(repeat, partial(run, n, mode))
                cells.append(f"{wall / n * 1e3:.2f} / {cpu / n * 1e3:.2f}")
            print(f"{n:>6}  {label:<22}{cells[0]:>15}{cells[1]:>15}", flush=True)


def single(n: int, latency: float, work: str) -> None:
    what = "model latency" if work == "model" else "sync tool call"
    print(f"{n} parallel sub-agents, a {latency:g} s {what} each")
    print(f"{'library':<12}{'mode':<9}{'wall s':>8}{'x ideal':>9}")
    for label, build in LIBRARIES:
        for mode in MODES:
            seconds = measure(build, n, latency, work, mode)
            ideal = f"{seconds / latency:>9.1f}" if latency > 0 else f"{'-':>9}"
            print(f"{label:<12}{mode:<9}{seconds:>8.2f}{ideal}", flush=True)


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, help="one width only: the old single table")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds of work per sub-agent")
    parser.add_argument("--work", choices=("model", "tool"), default="model")
    parser.add_argument("--wide", type=_ints, default=[500, 2000], help="widths of table 1")
    parser.add_argument(
        "--widths", type=_ints, default=[50, 100, 500, 2000], help="widths of table 2"
    )
    parser.add_argument("--all", action="store_true", help="also deepagents' slowest rows")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, best shown")
    args = parser.parse_args()
    if args.n is not None:
        single(args.n, args.latency, args.work)
        return
    print(f"best of {args.repeat} runs per figure (deepagents' invoke at {args.latency:g} s: one)")
    wide_table(args.wide, args.latency, args.all, args.repeat)
    print()
    per_spawn_table(args.widths, args.repeat)


if __name__ == "__main__":
    main()
