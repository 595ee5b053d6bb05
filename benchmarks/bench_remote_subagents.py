"""Wall time of 50 parallel sub-agents on a LangGraph server vs the same sub-agents in-process.

Each sub-agent is ``tests/remote_graph/worker_graph.py`` (a scripted model calling a ``work``
tool that takes ``--latency`` seconds). Remote: a ``RemoteSubAgent`` on a ``langgraph dev`` server
this script starts on loopback (``--n-jobs-per-worker`` 64). In-process: the same compiled
graph as a ``CompiledSubAgent``. The ideal figure is one unit of work. Prints figures only.

    python benchmarks/bench_remote_subagents.py [-n 50] [--latency 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from nbagents import CompiledSubAgent, RemoteSubAgent, ScriptedChatModel, Tracer, create_deep_agent
from nbagents.models import delegate, parallel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from remote_graph.serve import Server
from remote_graph.worker_graph import graph


def main_model(n: int, latency: float) -> ScriptedChatModel:
    jobs = (delegate(f"job {i} sleep={latency:g}", "worker") for i in range(n))
    return ScriptedChatModel(script={"main": [parallel(*jobs), "all done"]})


def measure(spec: Any, n: int, latency: float, mode: str) -> tuple[float, int]:
    agent = create_deep_agent(main_model(n, latency), subagents=[spec])
    tracer = Tracer()
    config = {"callbacks": [tracer]}
    request = {"messages": [("user", "go")]}
    started = time.perf_counter()
    if mode == "ainvoke":
        result = asyncio.run(agent.ainvoke(request, config))
    else:
        result = agent.invoke(request, config)
    elapsed = time.perf_counter() - started
    ok = [m for m in result["messages"] if m.type == "tool" and m.status != "error"]
    if len(ok) != n:
        failed = [m.text for m in result["messages"] if m.type == "tool" and m.status == "error"]
        raise RuntimeError(f"{n - len(ok)} of {n} sub-agents failed, e.g. {failed[:1]}")
    return elapsed, len(tracer.trace.spans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=50, help="parallel sub-agents (default 50)")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds of work each")
    args = parser.parse_args()

    local: CompiledSubAgent = {"name": "worker", "description": "Works.", "runnable": graph}
    with tempfile.TemporaryDirectory() as scratch:
        server = Server(Path(scratch))
        try:
            remote: RemoteSubAgent = {
                "name": "worker",
                "description": "Works.",
                "url": server.url,
                "graph_id": "worker",
            }
            measure(remote, 2, 0.0, "invoke")  # the server loads the graph on its first run
            print(f"{args.n} parallel sub-agents, {args.latency:g} s of work each")
            print(f"{'where':<12}{'mode':<9}{'wall s':>8}{'x ideal':>9}{'spans':>7}")
            for label, spec in (("in-process", local), ("remote", remote)):
                for mode in ("invoke", "ainvoke"):
                    seconds, spans = measure(spec, args.n, args.latency, mode)
                    ratio = seconds / args.latency
                    print(f"{label:<12}{mode:<9}{seconds:>8.2f}{ratio:>9.1f}{spans:>7}", flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
