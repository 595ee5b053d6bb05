"""What running an experiment through nbagents costs beside running the cases by hand.

- **overhead**: ``nbagents.aevaluate`` over C cases x R repeats (each run traced, scored by two
  scorers and saved to a run history) beside the peer a user writes without it, an
  ``asyncio.gather`` of ``ainvoke`` calls under a semaphore of the same size, with no tracing,
  no scoring and nothing kept. The agent is a deep agent on the scripted model whose every reply
  takes ``--latency`` seconds (a main agent that delegates to one sub-agent that calls a tool).
  Arms alternate, each round starting with the other one; the medians are compared.
- **memory**: the peak of Python's allocations (``tracemalloc``) while an experiment of 200 and of
  2,000 cases runs with no latency, and per case.
- **view**: the bytes of the results view (``exp.to_html()``) at 2,000 rows.

Figures vary with the machine and its load; read them side by side, not against a constant.

    python benchmarks/bench_experiments.py [--cases 200] [--repeats 3] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from langchain_core.tools import tool

import nbagents
from nbagents import ScriptedChatModel, create_deep_agent, scorers
from nbagents.models import call, delegate


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


def build_agent(latency: float) -> Any:
    model = ScriptedChatModel(
        script={
            "main": {"*": [delegate("find it", "researcher"), "done"]},
            "researcher": [call("lookup", topic="it"), "found it"],
        },
        latency=latency,
    )
    researcher = {"name": "researcher", "description": "Finds", "system_prompt": "Find."}
    return create_deep_agent(model, [lookup], subagents=[researcher])


def cases(n: int) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "inputs": f"question {i}", "expected": "done"} for i in range(n)]


def correct(answer: str | None, expected: str) -> bool:
    return expected in (answer or "")


async def by_hand(agent: Any, n: int, repeats: int, concurrency: int) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> Any:
        async with gate:
            return await agent.ainvoke({"messages": [{"role": "user", "content": f"question {i}"}]})

    await asyncio.gather(*(one(i) for i in range(n) for _ in range(repeats)))


async def with_nbagents(agent: Any, n: int, repeats: int, concurrency: int, db: Path) -> None:
    exp = await nbagents.aevaluate(
        agent,
        cases(n),
        scorers=[correct, scorers.spawned("researcher")],
        repeats=repeats,
        max_concurrency=concurrency,
        store=db,
        progress=False,
    )
    assert len(exp.results) == n * repeats and exp.status == "done"


def overhead(args: argparse.Namespace) -> None:
    agent = build_agent(args.latency)
    folder = Path(tempfile.mkdtemp())
    times: dict[str, list[float]] = {"asyncio.gather": [], "nbagents.aevaluate": []}
    for round_ in range(args.rounds):
        arms = list(times)
        if round_ % 2:
            arms.reverse()
        for arm in arms:
            start = time.perf_counter()
            if arm == "asyncio.gather":
                asyncio.run(by_hand(agent, args.cases, args.repeats, args.concurrency))
            else:
                db = folder / f"runs-{round_}.sqlite"
                asyncio.run(with_nbagents(agent, args.cases, args.repeats, args.concurrency, db))
            times[arm].append(time.perf_counter() - start)
    runs = args.cases * args.repeats
    print(
        f"\n{runs} runs ({args.cases} cases x {args.repeats}), {args.concurrency} at once, "
        f"{args.latency} s per model reply, {args.rounds} rounds (medians):"
    )
    base = statistics.median(times["asyncio.gather"])
    for arm, seen in times.items():
        median = statistics.median(seen)
        print(
            f"  {arm:<20} {median:7.2f} s  ({', '.join(f'{t:.2f}' for t in seen)})  "
            f"{median / base:.3f}x"
        )


def memory() -> None:
    agent = build_agent(0.0)
    print("\nmemory (tracemalloc peak while the experiment runs, no latency):")
    for n in (200, 2000):
        db = Path(tempfile.mkdtemp()) / "runs.sqlite"
        tracemalloc.start()
        exp = nbagents.evaluate(
            agent, cases(n), scorers=[correct], store=db, progress=False, max_concurrency=8
        )
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"  {n:>5} cases: peak {peak / 2**20:7.1f} MiB, {peak / n / 1024:6.1f} KiB per case")
        if n == 2000:
            html = exp.to_html()
            print(
                f"\nresults view at {len(exp.results):,} rows: {len(html) / 1024:,.0f} KiB "
                "(rows past 500 are counted, not drawn)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, nbagents {nbagents.__version__}")
    overhead(args)
    if not args.skip_memory:
        memory()


if __name__ == "__main__":
    main()
