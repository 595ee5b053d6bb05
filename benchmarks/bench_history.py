"""What the run history costs: saving a large run, listing many runs, loading one back.

One real run of about 10,000 spans (a main agent fanning out to sub-agents that each call a
tool and their model, on the scripted model) is recorded, then:

- **save**: ``RunStore.save`` (what ends every ``nbagents.trace()`` block) beside the peer a
  user has without the history, ``Trace.save`` to a JSON file; time and bytes on disk;
- **load**: ``load_run`` beside ``Trace.load`` of that file;
- **list**: ``runs()`` over a history of 1,000 runs (the large one among 999 small ones);
- **compare**: ``compare`` of two large runs and its HTML, beside what a user has without it,
  ``difflib.unified_diff`` of the two runs' JSON files.

Figures vary with the machine and its load; read them side by side, not against a constant.

    python benchmarks/bench_history.py [--workers 1100] [--runs 1000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_views import build_agent

from nbagents import ScriptedChatModel, Tracer, compare, create_deep_agent
from nbagents.history import RunStore
from nbagents.history._record import describe
from nbagents.tracing import Trace


def best_of(times: int, fn: Callable[[], Any]) -> float:
    """The fastest of ``times`` runs: the least disturbed by other load on the machine."""
    best = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def recorded(agent: Any) -> Trace:
    tracer = Tracer()
    agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    tracer.trace.finished = True
    return tracer.trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=1100, help="sub-agents in the large run")
    parser.add_argument("--runs", type=int, default=1000, help="runs in the listed history")
    args = parser.parse_args()

    big = recorded(build_agent(args.workers))
    small = recorded(create_deep_agent(ScriptedChatModel(script={"main": ["done"]})))
    print(f"large run: {len(big):,} spans; small run: {len(small)} spans")

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        history = RunStore(folder / "runs.sqlite")
        info = describe(big, run_id="big", started_at=time.time())
        file = folder / "run.json"

        save_store = best_of(3, lambda: history.save(info, big))
        save_file = best_of(3, lambda: big.save(file))
        store_bytes = sum(p.stat().st_size for p in folder.glob("runs.sqlite*"))
        print("\nsave the large run            seconds     MB on disk")
        print(f"  RunStore.save (history)     {save_store:7.3f}     {store_bytes / 1e6:8.2f}")
        print(
            f"  Trace.save (a JSON file)    {save_file:7.3f}     {file.stat().st_size / 1e6:8.2f}"
        )

        load_store = best_of(3, lambda: history.load("big"))
        load_file = best_of(3, lambda: Trace.load(file))
        print("\nload the large run            seconds")
        print(f"  load_run (history)          {load_store:7.3f}")
        print(f"  Trace.load (the JSON file)  {load_file:7.3f}")

        started = time.time()
        for number in range(args.runs - 1):
            history.save(describe(small, run_id=f"r{number}", started_at=started + number), small)
        listing = best_of(3, history.list)
        print(f"\nlist {len(history):,} runs (runs())   seconds")
        print(f"  RunStore.list               {listing:7.3f}")
        filtered = best_of(3, lambda: history.list(name="*7*", limit=50))
        print(f"  ... name='*7*', limit=50    {filtered:7.3f}")

    other = recorded(build_agent(args.workers))
    aligned = best_of(1, lambda: compare(big, other))
    drawn = best_of(1, lambda: compare(big, other).to_html())
    print(f"\ncompare two runs of {len(big):,} spans   seconds")
    print(f"  compare (aligned rows)      {aligned:7.3f}")
    print(f"  compare + to_html           {drawn:7.3f}", flush=True)
    print(f"  difflib on the JSON files   {diff_json_files(big, other, PEER_LIMIT)}")


PEER_LIMIT = 60.0
"""Seconds the peer may take: a line diff of two large JSON files can run for many minutes."""


def diff_json_files(a: Trace, b: Trace, limit: float) -> str:
    """Time ``difflib.unified_diff`` over the two traces' JSON files, in a process of its own
    that is stopped after ``limit`` seconds."""
    with tempfile.TemporaryDirectory() as scratch:
        left, right = Path(scratch) / "a.json", Path(scratch) / "b.json"
        a.save(left)
        b.save(right)
        script = (
            "import difflib, sys, time\n"
            "a = open(sys.argv[1]).read().splitlines()\n"
            "b = open(sys.argv[2]).read().splitlines()\n"
            "start = time.perf_counter()\n"
            "sum(1 for _ in difflib.unified_diff(a, b, lineterm=''))\n"
            "print(time.perf_counter() - start)\n"
        )
        try:
            done = subprocess.run(
                [sys.executable, "-c", script, str(left), str(right)],
                capture_output=True,
                text=True,
                timeout=limit,
            )
        except subprocess.TimeoutExpired:
            return f"> {limit:.0f} (stopped)"
        return f"{float(done.stdout):7.3f}"


if __name__ == "__main__":
    main()
