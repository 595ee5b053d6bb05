"""What tracing costs: one run of N parallel sub-agents (each a tool call and two model turns),
with no callbacks, with LangChain's own run collector (the peer: every LangChain tracer builds on
it), with nbagents' ``Tracer``, and with the ``Tracer`` feeding a live view.

The model takes no time, so the figures are pure framework and tracing overhead. Each mode runs
``--repeat`` times; the table shows the median and the cost per span over the untraced run.

    python benchmarks/bench_tracer_overhead.py [-n 100] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from langchain_core.tools import tool
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

from nbagents import ScriptedChatModel, Tracer, create_deep_agent
from nbagents.models import call, delegate, parallel, say


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def build_agent(n: int) -> Any:
    model = ScriptedChatModel(
        script={
            "main": [parallel(*(delegate(f"job {i}", "worker") for i in range(n))), say("done")],
            "worker": [call("lookup", key="k"), say("found it")],
        }
    )
    worker = {"name": "worker", "description": "Looks things up.", "system_prompt": "Look up."}
    return create_deep_agent(model, [lookup], subagents=[worker])


def run_plain(agent: Any) -> int:
    agent.invoke({"messages": [("user", "go")]})
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


def measure(fn: Callable[[Any], int], agent: Any, repeat: int) -> tuple[float, int]:
    times, spans = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        spans = fn(agent)
        times.append(time.perf_counter() - started)
    return statistics.median(times), spans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=100, help="parallel sub-agents")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    agent = build_agent(args.n)
    run_plain(agent)  # warm up imports and graph compilation
    modes = [
        ("no callbacks", run_plain),
        ("RunCollector (peer)", run_collector),
        ("nbagents Tracer", run_tracer),
        ("Tracer + live view", run_tracer_live),
    ]
    results = [(label, *measure(fn, agent, args.repeat)) for label, fn in modes]
    base = results[0][1]
    spans = max(s for _, _, s in results)
    print(f"{args.n} parallel sub-agents, {spans} spans, median of {args.repeat} runs")
    print(f"{'mode':<22}{'wall s':>9}{'vs none':>9}{'µs/span':>10}")
    for label, seconds, _ in results:
        per_span = (seconds - base) / spans * 1e6 if spans else 0.0
        print(f"{label:<22}{seconds:>9.3f}{seconds / base:>8.2f}x{per_span:>10.0f}")


if __name__ == "__main__":
    main()
