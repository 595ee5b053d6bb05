"""What the trace views cost on large runs, at 1,000 / 3,000 / 10,000 spans.

For each size, one real run (a main agent fanning out to sub-agents that each call a tool and
their model twice, on the scripted model) is recorded, and then:

- **live update of a one-span change**: Python time and bytes sent by the incremental view
  (``ViewBuilder.update`` + ``patch`` + JSON), beside a full rebuild of the view (what every
  update cost before patches);
- **static HTML**: build time and size of ``trace.to_html()`` (bounded snapshot);
- **trace memory**: what the recorder keeps, nbagents' ``Tracer`` beside LangChain's
  ``RunCollectorCallbackHandler`` (the peer every LangChain tracer builds on), same run;
- **agent wall time** with a live view following the trace vs without one (``display=False``);
  with ``--kernel`` also inside a real IPython kernel, the view shown in a cell, so every update
  goes out as a widget message as in a notebook;
- with ``--cpu``, **the live view's own CPU per span** over a run (:func:`view_cpu`): the figure
  to compare two versions of the view code by;
- with ``--build``, **the whole view built once** from the recorded run (:func:`build_cost`):
  ``update()``, ``view_json()`` and the saved output ``finish()`` writes, each timed apart, and
  the objects the builder keeps for the garbage collector to walk.

Figures vary with the machine and its load; read them side by side, not against a constant.

    python benchmarks/bench_views.py [--sizes 1000,3000,10000] [--kernel] [--cpu] [--build]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _fanout import fanout_agent
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

from nbagents import Tracer
from nbagents.display._saved import saved_html
from nbagents.display._viewmodel import ViewBuilder
from nbagents.display.live import LiveView
from nbagents.tracing import Trace

SPANS_PER_WORKER = 9
"""Spans a worker adds to the trace (task, sub-agent, model calls, tool, graph nodes)."""


def build_agent(workers: int) -> Any:
    """The fan-out these benchmarks run, with text in its tasks, results and answers."""
    return fanout_agent(workers, wordy=True)


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


def view_cpu(agent: Any, *, every: int = 450, repeat: int = 3) -> tuple[float, int]:
    """Least CPU seconds the live view's updates took over one run, and the run's spans.

    An update (and the widget state it sends) every ``every`` trace changes, made on the agent
    thread whose change it was, plus the first and the final whole view; the agent runs one
    tool call at a time (``max_concurrency=1``). So one run is like the next, whatever the
    machine's load: the flusher's own timing follows the load, and with parallel sub-agents the
    spans an update finds still running vary from run to run. Thread CPU time, with the garbage
    collector off meanwhile: its collections land on whichever thread allocates at the time.
    """
    best, spans = float("inf"), 0
    for _ in range(repeat):
        tracer = Tracer(Trace())
        view = LiveView(tracer.trace)
        spent = [0.0]
        changes = itertools.count(1)

        def sync(*, whole: bool = False, view: LiveView = view, spent: list[float] = spent) -> None:
            start = time.thread_time()
            view.sync(whole=whole)
            spent[0] += time.thread_time() - start

        def on_change(trace: Trace, changes: Iterator[int] = changes) -> None:
            if next(changes) % every == 0:
                sync()

        tracer.trace.subscribe(on_change)
        gc.collect()
        gc.disable()
        try:
            sync()
            config = {"callbacks": [tracer], "max_concurrency": 1}
            agent.invoke({"messages": [("user", "go")]}, config)
            tracer.trace.finished = True
            sync(whole=True)
        finally:
            gc.enable()
        view.widget.close()
        best, spans = min(best, spent[0]), len(tracer.trace)
    return best, spans


def build_cost(trace: Trace, repeat: int = 7) -> tuple[float, float, float, int]:
    """Least CPU seconds of a fresh builder's ``update()``, then ``view_json()``, then the saved
    output (:func:`~nbagents.display._saved.saved_html`), and the objects it keeps that the
    garbage collector tracks.

    The spans' recorded inputs and outputs are read once first: their conversion is the
    tracer's, paid once by whichever reader comes first. Thread CPU time, collector off.
    """
    for span in trace.spans:
        _ = span.inputs, span.outputs
    best = [float("inf")] * 3
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            builder = ViewBuilder(trace)
            marks = [time.thread_time()]
            builder.update()
            marks.append(time.thread_time())
            builder.view_json()
            marks.append(time.thread_time())
            saved_html(builder)
            marks.append(time.thread_time())
            best = [min(b, marks[i + 1] - marks[i]) for i, b in enumerate(best)]
    finally:
        gc.enable()
    del builder
    gc.collect()
    before = len(gc.get_objects())
    builder = ViewBuilder(trace)
    builder.update()
    builder.view_json()
    gc.collect()
    kept = len(gc.get_objects()) - before
    return best[0], best[1], best[2], kept


SENT: list[tuple[int, int, int, float]] = []
"""Per run with a view: widget updates, how many of them were whole views, bytes sent, and the
seconds ``finish()`` took (the final update and the saved output)."""


def wall(agent: Any, live: bool, show: bool = False) -> float:
    """Seconds of one run, the view's ``finish()`` included: the cell ends only after it."""
    gc.collect()  # each run starts from the same heap: garbage of the last one costs it nothing
    tracer = Tracer(Trace())
    view = None
    if live:
        view = LiveView(tracer.trace)
        view.show(auto_finish=False) if show else view.start()
    started = time.perf_counter()
    agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    finishing = time.perf_counter()
    if view is not None:
        view.finish()
    ended = time.perf_counter()
    if view is not None:
        SENT.append((view.updates, view.wholes, view.sent_bytes, ended - finishing))
        # A displayed widget lives as long as its output; keeping these would make every
        # later run's garbage collections walk their traces.
        view.widget.close()
    return ended - started


def walls(agent: Any, *, show: bool = False, repeat: int = 3) -> tuple[float, float]:
    """Best (off, on) wall times of ``repeat`` runs each, alternated: the machine's load drifts
    meanwhile."""
    runs = [(wall(agent, live=False), wall(agent, live=True, show=show)) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def kernel_walls(workers: int, repeat: int = 3) -> tuple[float, float]:
    """:func:`walls` run in a fresh IPython kernel with the view displayed in the cell."""
    from jupyter_client.manager import start_new_kernel

    here = str(Path(__file__).resolve().parent)
    code = (
        f"import sys; sys.path.insert(0, {here!r})\n"
        "import json, bench_views as b\n"
        f"agent = b.build_agent({workers}); b.wall(agent, live=False)\n"
        f"print(json.dumps(b.walls(agent, show=True, repeat={repeat})))\n"
    )
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        reply = client.execute_interactive(code, timeout=1800, output_hook=_keep_stdout)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"the kernel run failed: {reply['content'].get('evalue')}")
        off, on = json.loads(_stdout.pop())
        return float(off), float(on)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


_stdout: list[str] = []


def _keep_stdout(msg: dict[str, Any]) -> None:
    if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
        _stdout.append(msg["content"]["text"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,3000,10000")
    parser.add_argument(
        "--kernel", action="store_true", help="also time the run with the view shown in a kernel"
    )
    parser.add_argument(
        "--cpu", action="store_true", help="also measure the live view's CPU per span"
    )
    parser.add_argument(
        "--build", action="store_true", help="also time one whole build of the view, by part"
    )
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
        off, on = walls(agent)
        print(
            f"{len(trace):>6} | {inc * 1e3:>8.1f} {inc_bytes / 1e3:>8.1f} | "
            f"{whole * 1e3:>8.0f} {whole_bytes / 1e3:>8.0f} | "
            f"{html_s:>6.2f} {len(html) / 1e3:>7.0f} | "
            f"{ours_mb:>8.1f} {peer_mb:>7.1f} | {on:>6.2f} {off:>6.2f} {on / off:>5.2f}"
        )
        if args.build:
            update_s, view_s, saved_s, kept = build_cost(trace)
            print(
                f"{'':>6}   whole build: update {update_s * 1e3:.0f} ms, view_json "
                f"{view_s * 1e3:.0f} ms, saved output {saved_s * 1e3:.0f} ms, total "
                f"{(update_s + view_s + saved_s) * 1e3:.0f} ms; {kept:,} objects kept"
            )
        if args.cpu:
            cpu, spans = view_cpu(agent)
            print(f"{'':>6}   live view CPU: {cpu:.2f} s, {cpu / spans * 1e6:.0f} µs per span")
        if args.kernel:
            off, on = kernel_walls(max(size // SPANS_PER_WORKER, 1))
            print(f"{'':>6}   in a kernel, the view shown: {on:>6.2f} {off:>6.2f} {on / off:>5.2f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
