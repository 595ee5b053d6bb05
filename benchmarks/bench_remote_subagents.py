"""Wall time of 50 parallel sub-agents on a LangGraph server, beside the SDK's own floor.

Each sub-agent is ``tests/remote_graph/worker_graph.py`` (a scripted model calling a ``work``
tool that takes ``--latency`` seconds). Remote: a ``RemoteSubAgent`` on a ``langgraph dev`` server
this script starts on loopback (``--n-jobs-per-worker`` 64), traced by a ``Tracer`` (its spans
are counted: the remote steps are in the trace). Floor: the same N runs of the same graph on the
same server made with ``langgraph_sdk`` directly, no nbagents and no agent: one client, a run
per job (``runs.wait``: create the run, wait for its result), all at once (``asyncio.gather``
for ``ainvoke``, a thread per run for ``invoke``). In-process: the same compiled graph as a
``CompiledSubAgent``. The ideal figure is one unit of work. Each figure is the best of
``--repeat`` runs. Prints figures only.

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


def floor(url: str, n: int, latency: float, mode: str) -> float:
    """The same N runs made with ``langgraph_sdk`` alone: what the server and the SDK cost."""
    from concurrent.futures import ThreadPoolExecutor

    from langgraph_sdk import get_client, get_sync_client

    inputs = [
        {"messages": [{"role": "user", "content": f"job {i} sleep={latency:g}"}]} for i in range(n)
    ]

    async def all_async() -> list[Any]:
        client = get_client(url=url)
        try:
            return list(
                await asyncio.gather(
                    *(client.runs.wait(None, "worker", input=given) for given in inputs)
                )
            )
        finally:
            await client.http.client.aclose()

    started = time.perf_counter()
    if mode == "ainvoke":
        results = asyncio.run(all_async())
    else:
        client = get_sync_client(url=url)
        with ThreadPoolExecutor(max_workers=n) as pool:
            results = list(
                pool.map(lambda given: client.runs.wait(None, "worker", input=given), inputs)
            )
        client.http.client.close()
    elapsed = time.perf_counter() - started
    answered = [r for r in results if isinstance(r, dict) and r.get("messages")]
    if len(answered) != n:
        raise RuntimeError(f"{n - len(answered)} of {n} floor runs failed")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=50, help="parallel sub-agents (default 50)")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds of work each")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, best shown")
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
            floor(server.url, 2, 0.0, "invoke")
            print(f"{args.n} parallel sub-agents, {args.latency:g} s of work each, ", end="")
            print(f"best of {args.repeat}")
            print(f"{'where':<22}{'mode':<9}{'wall s':>8}{'x ideal':>9}{'x floor':>9}{'spans':>7}")
            for mode in ("invoke", "ainvoke"):
                base = min(
                    floor(server.url, args.n, args.latency, mode) for _ in range(args.repeat)
                )
                rows = [("floor (langgraph_sdk)", base, 0)]
                for label, spec in (("remote (nbagents)", remote), ("in-process", local)):
                    runs = [measure(spec, args.n, args.latency, mode) for _ in range(args.repeat)]
                    seconds = min(r[0] for r in runs)
                    rows.append((label, seconds, runs[-1][1]))
                for label, seconds, spans in rows:
                    ratio, vs_floor = seconds / args.latency, seconds / base
                    print(
                        f"{label:<22}{mode:<9}{seconds:>8.2f}{ratio:>9.1f}{vs_floor:>8.2f}x"
                        f"{spans or '':>7}",
                        flush=True,
                    )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
