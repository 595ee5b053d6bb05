"""What tracing costs: one run of N parallel sub-agents (each a tool call and two model turns),
with no callbacks, with a callback handler that does nothing (the floor: what LangChain spends
calling any handler at all), with LangChain's own run collector (the peer: every LangChain
tracer builds on it), with nbagents' ``Tracer``, and with the ``Tracer`` feeding a live view.

The model takes no time, so the figures are pure framework and tracing overhead. Each mode runs
``--repeat`` times, the modes taking turns so that a change in the machine's load reaches all
of them alike, in each of ``--processes`` fresh interpreters one after the other (the same
code measured in two processes differs by up to 0.1x: hash seeds and memory layout). The table
shows the median over all runs of wall time and process CPU time (steadier on a shared
machine), their ratios to the untraced run, the spread of the Tracer's ratio between
processes, and the CPU cost per span over the untraced run. A trace's queued events are
applied within the timed run (``len(trace)`` reads it).

    python benchmarks/bench_tracer_overhead.py [-n 100] [--repeat 5] [--processes 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from _fanout import fanout_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

from nbagents import Tracer


def run_plain(agent: Any) -> int:
    agent.invoke({"messages": [("user", "go")]})
    return 0


class NoOpHandler(BaseCallbackHandler):
    """Takes every callback and does nothing: the cost of being called at all."""


def run_noop(agent: Any) -> int:
    agent.invoke({"messages": [("user", "go")]}, {"callbacks": [NoOpHandler()]})
    return 0


def run_collector(agent: Any) -> int:
    collector = RunCollectorCallbackHandler()
    agent.invoke({"messages": [("user", "go")]}, {"callbacks": [collector]})
    return _count_runs(collector.traced_runs)


def run_tracer(agent: Any) -> int:
    tracer = Tracer()
    agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    return len(tracer.trace)


def run_tracer_live(agent: Any) -> int:
    from nbagents.display.live import LiveView

    tracer = Tracer()
    view = LiveView(tracer.trace).start()  # follows the trace as in a notebook, without a kernel
    agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    view.finish()
    return len(tracer.trace)


def _count_runs(runs: list[Any]) -> int:
    return sum(1 + _count_runs(r.child_runs) for r in runs)


MODES: list[tuple[str, Callable[[Any], int]]] = [
    ("no callbacks", run_plain),
    ("no-op handler (floor)", run_noop),
    ("RunCollector (peer)", run_collector),
    ("nbagents Tracer", run_tracer),
    ("Tracer + live view", run_tracer_live),
]


def measure(n: int, repeat: int) -> dict[str, Any]:
    """Wall and CPU times of every run of each mode, the modes run in turn, and span counts."""
    agent = fanout_agent(n)
    run_plain(agent)  # warm up imports and graph compilation
    walls: dict[str, list[float]] = {label: [] for label, _ in MODES}
    cpus: dict[str, list[float]] = {label: [] for label, _ in MODES}
    spans: dict[str, int] = {}
    for _ in range(repeat):
        for label, fn in MODES:
            gc.collect()  # the garbage of the mode before (a whole trace) is not this one's cost
            cpu, started = time.process_time(), time.perf_counter()
            spans[label] = fn(agent)
            walls[label].append(time.perf_counter() - started)
            cpus[label].append(time.process_time() - cpu)
    return {"walls": walls, "cpus": cpus, "spans": spans}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=100, help="parallel sub-agents")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each mode per process")
    parser.add_argument("--processes", type=int, default=5, help="fresh interpreters, in turn")
    parser.add_argument("--one-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_process:
        print(json.dumps(measure(args.n, args.repeat)))
        return
    results = []
    for i in range(args.processes):
        command = [sys.executable, __file__, "-n", str(args.n), "--repeat", str(args.repeat)]
        done = subprocess.run(
            [*command, "--one-process"], capture_output=True, text=True, check=True
        )
        results.append(json.loads(done.stdout))
        print(f"process {i + 1}/{args.processes} measured", file=sys.stderr, flush=True)
    labels = [label for label, _ in MODES]
    walls = {label: [w for r in results for w in r["walls"][label]] for label in labels}
    cpus = {label: [c for r in results for c in r["cpus"][label]] for label in labels}
    spans = max(n for r in results for n in r["spans"].values())
    base_wall = statistics.median(walls[labels[0]])
    base_cpu = statistics.median(cpus[labels[0]])
    per_process = [
        statistics.median(r["walls"]["nbagents Tracer"])
        / statistics.median(r["walls"]["no callbacks"])
        for r in results
    ]
    runs = args.repeat * args.processes
    print(
        f"{args.n} parallel sub-agents, {spans} spans, median of {runs} runs "
        f"({args.repeat} in each of {args.processes} processes)"
    )
    print(f"{'mode':<24}{'wall s':>8}{'vs none':>9}{'CPU s':>8}{'vs none':>9}{'µs/span':>9}")
    for label in labels:
        wall, cpu = statistics.median(walls[label]), statistics.median(cpus[label])
        per_span = (cpu - base_cpu) / spans * 1e6 if spans else 0.0
        print(
            f"{label:<24}{wall:>8.3f}{wall / base_wall:>8.2f}x"
            f"{cpu:>8.3f}{cpu / base_cpu:>8.2f}x{per_span:>9.0f}"
        )
    print(
        "Tracer vs no callbacks (wall) in each process: "
        + ", ".join(f"{r:.2f}x" for r in per_process)
    )


if __name__ == "__main__":
    main()
