"""Wall time of 50 parallel sub-agents on a LangGraph server, beside the SDK's own floor.

Each sub-agent is ``tests/remote_graph/worker_graph.py`` (a scripted model calling a ``work``
tool that takes ``--latency`` seconds). Remote: a ``RemoteSubAgent`` on a ``langgraph dev`` server
this script starts on loopback (``--n-jobs-per-worker`` 64), traced by a ``Tracer`` (its spans
are counted: the remote steps are in the trace). Floor: the same N runs of the same graph on the
same server made with ``langgraph_sdk`` directly, no nbagents and no agent: one client, a run
per job (``runs.wait``: create the run, wait for its result), all at once (``asyncio.gather``
for ``ainvoke``, a thread per run for ``invoke``). Streamed: the same runs made with
``langgraph_sdk`` alone the way nbagents makes them, each on a thread of its own that the server
keeps, streaming ``tasks`` and ``values`` (parts read and dropped): what keeping threads and
streaming cost the server before nbagents does anything with the parts. In-process: the same
compiled graph as a ``CompiledSubAgent``. The ideal figure is one unit of work. Each figure is
the best of ``--repeat`` runs. Prints figures only.

``langgraph dev`` looks for new runs every half second (it takes a run created after a look
began at the look after next), so where a run starts in that cycle decides up to half a second
of its figure, and back-to-back runs keep much the same place in it. Each measured run therefore
starts just after the server has picked up a probe run: every figure waits the same for its
runs to be picked up. ``--unaligned`` measures without the probe (the figures then carry that
half second of chance).

    python benchmarks/bench_remote_subagents.py [-n 50] [--latency 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from nbagents import CompiledSubAgent, RemoteSubAgent, ScriptedChatModel, Tracer, create_deep_agent
from nbagents.models import delegate, parallel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from remote_graph.serve import Server
from remote_graph.worker_graph import graph


def main_model(n: int, latency: float) -> ScriptedChatModel:
    jobs = (delegate(f"job {i} sleep={latency:g}", "worker") for i in range(n))
    return ScriptedChatModel(script={"main": [parallel(*jobs), "all done"]})


def nothing() -> None:
    pass


def measure(
    spec: Any, n: int, latency: float, mode: str, ready: Callable[[], None] = nothing
) -> tuple[float, int]:
    agent = create_deep_agent(main_model(n, latency), subagents=[spec])
    tracer = Tracer()
    config: RunnableConfig = {"callbacks": [tracer]}
    request = {"messages": [("user", "go")]}
    ready()
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


def after_pickup(url: str) -> None:
    """Return once the server has picked up a (stateless, instant) probe run: a new look for
    runs has just begun, so the runs created next all start at the same point of its cycle."""
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=url)
    probe: dict[str, Any] = {"messages": [{"role": "user", "content": "probe"}]}
    try:
        for _ in client.runs.stream(None, "worker", input=probe, stream_mode="values"):
            break  # its first part comes when the run starts
    finally:
        client.http.client.close()


def floor(
    url: str, n: int, latency: float, mode: str, ready: Callable[[], None] = nothing
) -> float:
    """The same N runs made with ``langgraph_sdk`` alone: what the server and the SDK cost."""
    from concurrent.futures import ThreadPoolExecutor

    from langgraph_sdk import get_client, get_sync_client

    inputs: list[dict[str, Any]] = [
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

    ready()
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


def streamed(
    url: str, n: int, latency: float, mode: str, ready: Callable[[], None] = nothing
) -> float:
    """The same N runs streamed on kept threads with ``langgraph_sdk`` alone, as nbagents does."""
    import uuid
    from concurrent.futures import ThreadPoolExecutor

    from langgraph_sdk import get_client, get_sync_client

    options: dict[str, Any] = {
        "stream_mode": ["tasks", "values"],
        "stream_subgraphs": True,
        "if_not_exists": "create",
        "on_disconnect": "cancel",
    }
    inputs: list[dict[str, Any]] = [
        {"messages": [{"role": "user", "content": f"job {i} sleep={latency:g}"}]} for i in range(n)
    ]

    async def all_async() -> list[int]:
        client = get_client(url=url)

        async def one(given: dict[str, Any]) -> int:
            stream = client.runs.stream(str(uuid.uuid4()), "worker", input=given, **options)
            return sum([1 async for part in stream if part.event == "values"])

        try:
            return list(await asyncio.gather(*(one(given) for given in inputs)))
        finally:
            await client.http.client.aclose()

    ready()
    started = time.perf_counter()
    if mode == "ainvoke":
        counts = asyncio.run(all_async())
    else:
        sync = get_sync_client(url=url)

        def one(given: dict[str, Any]) -> int:
            stream = sync.runs.stream(str(uuid.uuid4()), "worker", input=given, **options)
            return sum(1 for part in stream if part.event == "values")

        with ThreadPoolExecutor(max_workers=n) as pool:
            counts = list(pool.map(one, inputs))
        sync.http.client.close()
    elapsed = time.perf_counter() - started
    if not all(counts):
        raise RuntimeError(f"{sum(1 for c in counts if not c)} of {n} streamed runs failed")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=50, help="parallel sub-agents (default 50)")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds of work each")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, best shown")
    parser.add_argument(
        "--trace",
        choices=["steps", "events"],
        default="steps",
        help="what the remote spec's trace streams (default steps)",
    )
    parser.add_argument(
        "--unaligned", action="store_true", help="start runs without waiting for a probe's pickup"
    )
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
                "trace": args.trace,
            }
            ready = nothing if args.unaligned else partial(after_pickup, server.url)
            measure(remote, 2, 0.0, "invoke")  # the server loads the graph on its first run
            floor(server.url, 2, 0.0, "invoke")
            print(f"{args.n} parallel sub-agents, {args.latency:g} s of work each, ", end="")
            print(f"best of {args.repeat}, remote steps traced from {args.trace}")
            print(f"{'where':<24}{'mode':<9}{'wall s':>8}{'x ideal':>9}{'x floor':>9}{'spans':>7}")
            for mode in ("invoke", "ainvoke"):
                rows: list[tuple[str, float, int]] = []
                for label, run in (
                    ("floor (langgraph_sdk)", floor),
                    ("streamed, kept threads", streamed),
                ):
                    walls = [
                        run(server.url, args.n, args.latency, mode, ready)
                        for _ in range(args.repeat)
                    ]
                    rows.append((label, min(walls), 0))
                for label, spec in (("remote (nbagents)", remote), ("in-process", local)):
                    waits = ready if spec is remote else nothing
                    runs = [
                        measure(spec, args.n, args.latency, mode, waits) for _ in range(args.repeat)
                    ]
                    rows.append((label, min(r[0] for r in runs), runs[-1][1]))
                base = rows[0][1]
                for label, seconds, spans in rows:
                    ratio, vs_floor = seconds / args.latency, seconds / base
                    print(
                        f"{label:<24}{mode:<9}{seconds:>8.2f}{ratio:>9.1f}{vs_floor:>8.2f}x"
                        f"{spans or '':>7}",
                        flush=True,
                    )
        finally:
            server.stop()


if __name__ == "__main__":
    main()
