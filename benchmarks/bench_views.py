"""What the trace views cost on large runs, at 1,000 / 3,000 / 10,000 spans.

For each size, one real run (a main agent fanning out to sub-agents that each call a tool and
their model twice, on the scripted model) is recorded, and then:

- **live update of a one-span change**: Python time and bytes sent by the incremental view
  (``ViewBuilder.update`` + ``patch`` + JSON), beside a full rebuild of the view (what every
  update cost before patches);
- **static HTML**: build time and size of ``trace.to_html()`` (bounded snapshot);
- **trace memory**: what the recorder keeps, nbagents' ``Tracer`` beside LangChain's
  ``RunCollectorCallbackHandler`` (the peer every LangChain tracer builds on), same run;
- **agent wall time** with a live view following the trace vs without one (``display=False``).

Figures vary with the machine and its load; read them side by side, not against a constant.

    python benchmarks/bench_views.py [--sizes 1000,3000,10000]
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from langchain_core.tools import tool
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

from nbagents import ScriptedChatModel, Tracer, create_deep_agent
from nbagents.display._viewmodel import ViewBuilder
from nbagents.display.live import LiveView
from nbagents.models import call, delegate, parallel, say
from nbagents.tracing import Trace

SPANS_PER_WORKER = 9
"""Spans a worker adds to the trace (task, sub-agent, model calls, tool, graph nodes)."""


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}: " + "lorem ipsum " * 20


def build_agent(workers: int) -> Any:
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(*(delegate(f"job {i}: look up k{i}", "worker") for i in range(workers))),
                say("done"),
            ],
            "worker": [call("lookup", key="k"), say("found it: " + "result text " * 10)],
        }
    )
    worker = {"name": "worker", "description": "Looks things up.", "system_prompt": "Look up."}
    return create_deep_agent(model, [lookup], subagents=[worker])


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def record(agent: Any, handler: Any) -> float:
    """Retained memory (MB) of ``handler``'s data after one run."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    agent.invoke({"messages": [("user", "go")]}, {"callbacks": [handler]})
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / 1e6


def one_span_update(trace: Trace) -> tuple[float, int, float, int]:
    builder = ViewBuilder(trace)
    builder.update()
    # A task's result changing: a step that is not settled (finished model and tool calls are
    # never looked at again).
    target = next(s for s in reversed(trace.spans) if s.kind == "task")

    def incremental() -> str:
        target.outputs = {"content": f"changed at {time.perf_counter()}"}
        return json.dumps(builder.patch(builder.update()), separators=(",", ":"))

    def full() -> str:
        target.outputs = {"content": f"changed at {time.perf_counter()}"}
        fresh = ViewBuilder(trace)
        fresh.update()
        return json.dumps(fresh.view(), separators=(",", ":"))

    inc = min(timed(incremental)[0] for _ in range(5))
    inc_bytes = len(incremental())
    whole = min(timed(full)[0] for _ in range(2))
    return inc, inc_bytes, whole, len(full())


def wall(agent: Any, live: bool) -> float:
    gc.collect()  # each run starts from the same heap: garbage of the last one costs it nothing
    tracer = Tracer(Trace())
    view = LiveView(tracer.trace).start() if live else None
    seconds, _ = timed(
        lambda: agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    )
    if view is not None:
        view.finish()
        # A displayed widget lives as long as its output; this one was never displayed, and
        # keeping it would make every later run's garbage collections walk its trace.
        view.widget.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,3000,10000")
    args = parser.parse_args()
    header = (
        f"{'spans':>6} | {'patch ms':>8} {'patch KB':>8} | {'full ms':>8} {'full KB':>8} | "
        f"{'html s':>6} {'html KB':>7} | {'trace MB':>8} {'peer MB':>7} | "
        f"{'live s':>6} {'off s':>6} {'ratio':>5}"
    )
    print(header)
    print("-" * len(header))
    for size in (int(s) for s in args.sizes.split(",")):
        agent = build_agent(max(size // SPANS_PER_WORKER, 1))
        tracer = Tracer(Trace())
        ours_mb = record(agent, tracer)
        peer_mb = record(agent, RunCollectorCallbackHandler())
        trace = tracer.trace
        inc, inc_bytes, whole, whole_bytes = one_span_update(trace)
        html_s, html = timed(trace.to_html)
        # Alternated, best of three: the machine's load drifts during a benchmark.
        runs = [(wall(agent, live=False), wall(agent, live=True)) for _ in range(3)]
        off, on = min(r[0] for r in runs), min(r[1] for r in runs)
        print(
            f"{len(trace):>6} | {inc * 1e3:>8.1f} {inc_bytes / 1e3:>8.1f} | "
            f"{whole * 1e3:>8.0f} {whole_bytes / 1e3:>8.0f} | "
            f"{html_s:>6.2f} {len(html) / 1e3:>7.0f} | "
            f"{ours_mb:>8.1f} {peer_mb:>7.1f} | {on:>6.2f} {off:>6.2f} {on / off:>5.2f}"
        )


if __name__ == "__main__":
    main()
