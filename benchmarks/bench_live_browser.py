"""What the live view costs a run in a real notebook: JupyterLab in Chromium on this machine.

A notebook runs the same 500-way fan-out (``bench_views.build_agent``: each sub-agent calls a
tool and its model twice, zero latency, about 4,500 spans) with ``display=False`` and with the
live view shown in the cell, in rounds that each start with the other arm. Each run is the cell
run again, its output replacing the last run's, as when a user runs a cell again (a cell holding
every run's 500-way view would make the page restyle them all on each update). A run with the
view counts its ``finish()`` (the final update and the saved output), since the cell waits for
it. The browser renders every update on the same cores as the kernel, as on a laptop.

It prints the live view's two figures, each the median over the rounds of the run with the
view over the run without it in the same round, with the rounds' ratios beside it:

- the kernel's CPU seconds (goal: at most 1.10x of ``display=False``);
- the run's wall seconds with the notebook open in Chromium (goal: at most 1.15x).

    python benchmarks/bench_live_browser.py [--workers 500] [--repeat 5]
    python benchmarks/bench_live_browser.py --page off,view,off,view

``--page`` measures only what the page does: each arm run once in the same cell, its output
replaced each time, with Chromium's CPU and Chrome's counters for its main thread (busy,
scripts, layout, style and the number of style passes).

Needs the test extra (JupyterLab, Playwright) and Debian's Chromium (``NBAGENTS_CHROMIUM``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent
# The browser tests' harness starts and stops JupyterLab and Chromium; the benchmark uses it as
# they do rather than keep a second copy.
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))

import bench_views  # noqa: E402
from labharness import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    CURRENT_NOTEBOOK,
    LabPage,
    running_lab,
)

RUN_TIMEOUT_MS = 15 * 60_000
ARMS = ("off", "view")
SETTLE_SECONDS = 3
"""Pause before each measured run: the page draws a run's saved output (about a second of its
CPU at 500-way) after the run, which would otherwise slow the next one."""
WALL_GOAL = 1.15
KERNEL_CPU_GOAL = 1.10


@dataclass
class Arm:
    """One arm's runs, in round order."""

    walls: list[float]
    kernel_cpu: list[float]
    cpu: list[dict[str, float]]
    """CPU seconds of each process while each run went."""


@dataclass
class BrowserRun:
    arms: dict[str, Arm]
    messages: int
    megabytes: float
    """What the page received on its websockets."""
    sent: list[tuple[int, int, int, float]]
    """Per run with the view: widget updates, whole views among them, bytes of view state, and
    the seconds its ``finish()`` took (inside the run's wall time: the cell waits for it)."""

    def ratios(self, field: str) -> list[float]:
        """``field`` of each round's run with the view over the one without."""
        on, off = getattr(self.arms["view"], field), getattr(self.arms["off"], field)
        return [a / b for a, b in zip(on, off, strict=True)]


def _cpu(processes: dict[str, list[psutil.Process]]) -> dict[str, float]:
    out = {}
    for name, procs in processes.items():
        total = 0.0
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                total += times.user + times.system
        out[name] = total
    return out


def _setup_cell(workers: int) -> str:
    return (
        f"import sys, json, pathlib; sys.path.insert(0, {str(HERE)!r})\n"
        "import bench_views as b\n"
        f"agent = b.build_agent({workers})\n"
        "b.wall(agent, live=False)  # warm: imports, first compilations\n"
        "'ready'"
    )


@contextlib.contextmanager
def _opened(
    server: Any, name: str, cells: list[str], watch: Callable[[Any], None] = lambda page: None
) -> Iterator[LabPage]:
    """The notebook of ``cells`` open in Chromium with Run All done: the setup cell ran, the
    measured cell (the second) only armed itself. ``watch`` gets the page before the notebook
    opens (its websockets start then)."""
    from playwright.sync_api import sync_playwright

    path = server.add_notebook(f"{name}.ipynb", cells)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            watch(page)
            lab = LabPage(page, server, name)
            lab.open_notebook(path)
            lab.run_all(timeout=RUN_TIMEOUT_MS)
            lab.wait_for_kernel_idle()
            yield lab
        finally:
            browser.close()


def _run_measured_cell(lab: LabPage) -> str:
    """Run the measured cell again, in place (no new cell below); its last line of stdout."""
    lab.page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell .jp-InputPrompt").nth(1).click()
    lab.page.keyboard.press("Control+Enter")
    lab.wait_for_running()
    lab.wait_for_idle(timeout=RUN_TIMEOUT_MS)
    stdout = lab.page.locator("[data-mime-type='application/vnd.jupyter.stdout']")
    return str(lab.outputs(1).and_(stdout).inner_text().strip().splitlines()[-1])


def _chromium() -> list[psutil.Process]:
    me = psutil.Process()
    return [p for p in me.children(recursive=True) if "chrom" in p.name().lower()]


ARM_CELL = (
    "import time\n"
    "if globals().get('armed'):\n"
    "    arm = pathlib.Path({arm_file!r}).read_text()\n"
    "    live = arm != 'off'\n"
    "    cpu = time.process_time()\n"
    "    seconds = b.wall(agent, live=live, show=live)\n"
    "    sent = b.SENT[-1] if live else None\n"
    "    print(json.dumps([seconds, time.process_time() - cpu, sent]))\n"
    "armed = True"
)
"""The measured cell: one run of the arm named in ``arm_file`` (``off`` or ``view``) each time
it runs, its output replacing the last one's, as when a user runs a cell again; it
prints the run's wall seconds, the kernel's CPU seconds and what the view sent. Run All only arms
it."""


def browser_walls(workers: int, repeat: int) -> BrowserRun:
    """The runs with the notebook open in Chromium, and what each process did meanwhile."""
    traffic = {"messages": 0, "bytes": 0}

    def count(frame: str | bytes) -> None:
        traffic["messages"] += 1
        traffic["bytes"] += len(frame)

    def watch(page: Any) -> None:
        page.on("websocket", lambda ws: ws.on("framereceived", count))

    names = ARMS
    arms = {arm: Arm([], [], []) for arm in names}
    sent = []
    with tempfile.TemporaryDirectory() as base, running_lab(Path(base), None) as server:
        arm_file = Path(base) / "arm"
        arm_file.write_text("off")
        measure = ARM_CELL.format(arm_file=str(arm_file))
        with _opened(server, "bench_live", [_setup_cell(workers), measure], watch) as lab:
            lab_proc = psutil.Process(server.process.pid)
            processes = {
                "kernel": lab_proc.children(recursive=True),
                "JupyterLab server": [lab_proc],
                "Chromium": _chromium(),
            }
            traffic.update(messages=0, bytes=0)
            for round_ in range(repeat):
                # Each round starts with another arm: a run made later in a round is slower
                # than the first on this machine.
                turn = round_ % len(names)
                for arm in names[turn:] + names[:turn]:
                    arm_file.write_text(arm)
                    time.sleep(SETTLE_SECONDS)  # the page is done with the last run
                    before = _cpu(processes)
                    seconds, kernel_cpu, view_sent = json.loads(_run_measured_cell(lab))
                    after = _cpu(processes)
                    arms[arm].walls.append(seconds)
                    arms[arm].kernel_cpu.append(kernel_cpu)
                    arms[arm].cpu.append({name: after[name] - before[name] for name in after})
                    if view_sent is not None:
                        sent.append(tuple(view_sent))
    return BrowserRun(
        arms=arms,
        messages=traffic["messages"],
        megabytes=traffic["bytes"] / 1e6,
        sent=sent,
    )


PAGE_METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")
"""Chrome's own counters (``Performance.getMetrics``): seconds of the page's main thread busy,
running scripts, laying out and restyling."""


def page_costs(workers: int, arms: list[str]) -> list[tuple[str, float, float, dict[str, float]]]:
    """Each arm (``off`` or ``view``) run once in the same cell, its output
    replaced each time as when a user runs the cell again: the run's wall seconds, Chromium's
    CPU seconds meanwhile, and the change of :data:`PAGE_METRICS` and the number of style
    passes (``RecalcStyleCount``). What the page does per run, with no earlier output to
    restyle, as in ``browser_walls``."""
    out = []
    with tempfile.TemporaryDirectory() as base, running_lab(Path(base), None) as server:
        arm_file = Path(base) / "arm"
        arm_file.write_text("off")
        measure = ARM_CELL.format(arm_file=str(arm_file))
        with _opened(server, "bench_page", [_setup_cell(workers), measure]) as lab:
            cdp = lab.page.context.new_cdp_session(lab.page)
            cdp.send("Performance.enable")
            chromium = {"Chromium": _chromium()}

            def metrics() -> dict[str, float]:
                got = cdp.send("Performance.getMetrics")["metrics"]
                return {m["name"]: m["value"] for m in got}

            names = (*PAGE_METRICS, "RecalcStyleCount")
            for arm in arms:
                arm_file.write_text(arm)
                time.sleep(SETTLE_SECONDS)
                before, cpu = metrics(), _cpu(chromium)["Chromium"]
                seconds = float(json.loads(_run_measured_cell(lab))[0])
                cpu = _cpu(chromium)["Chromium"] - cpu
                after = metrics()
                out.append((arm, seconds, cpu, {n: after[n] - before[n] for n in names}))
    return out


def print_page_costs(workers: int, arms: list[str]) -> None:
    print(f"{workers} parallel sub-agents, one run per arm, the cell's output replaced each time")
    head = " ".join(f"{n.removesuffix('Duration'):>10}" for n in PAGE_METRICS)
    print(f"{'arm':<8} {'wall':>7} {'Chromium CPU':>13} {head} {'style passes':>13}")
    for arm, seconds, cpu, deltas in page_costs(workers, arms):
        cells = " ".join(f"{deltas[n]:>9.2f}s" for n in PAGE_METRICS)
        passes = int(deltas["RecalcStyleCount"])
        print(f"{arm:<8} {seconds:>6.2f}s {cpu:>12.2f}s {cells} {passes:>13}")
    print(
        "  (Chromium's CPU: all its processes, until the cell is idle; the rest: its main thread)"
    )


def _figure(name: str, ratios: list[float], goal: float) -> None:
    median = statistics.median(ratios)
    verdict = "met" if median <= goal else "NOT met"
    rounds = ", ".join(f"{r:.2f}" for r in ratios)
    print(f"{name:<34} {median:>5.2f}x  (goal <= {goal:.2f}x: {verdict}; rounds {rounds}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5, help="rounds (each runs both arms)")
    parser.add_argument(
        "--page",
        metavar="ARMS",
        help="only what the page does per run, e.g. off,view,off,view (see page_costs)",
    )
    args = parser.parse_args()
    if args.page:
        arms = args.page.split(",")
        unknown = sorted(set(arms) - set(ARMS))
        if unknown:
            parser.error(f"arms are off or view, not {', '.join(unknown)}")
        print_page_costs(args.workers, arms)
        return
    spans = args.workers * bench_views.SPANS_PER_WORKER
    print(f"{args.workers} parallel sub-agents (~{spans:,} spans), zero latency, ", end="")
    print(f"{args.repeat} rounds")
    load = psutil.getloadavg()
    print(f"  load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {psutil.cpu_count()} CPUs")
    run = browser_walls(args.workers, args.repeat)
    print("the live view over display=False, median of the rounds:")
    _figure("  kernel CPU", run.ratios("kernel_cpu"), KERNEL_CPU_GOAL)
    _figure("  wall time, JupyterLab in Chromium", run.ratios("walls"), WALL_GOAL)
    print("per arm, medians of the runs (seconds):")
    names = list(run.arms["off"].cpu[0])
    head = f"{'arm':<11}{'wall':>8}{'kernel CPU':>12}" + "".join(f"{n:>19}" for n in names)
    print("    " + head)
    for name, arm in run.arms.items():
        cpu = [statistics.median(c[n] for c in arm.cpu) for n in names]
        print(
            "    "
            + f"{name:<11}{statistics.median(arm.walls):>7.2f}s"
            + f"{statistics.median(arm.kernel_cpu):>11.2f}s"
            + "".join(f"{c:>18.2f}s" for c in cpu)
        )
    print("  (each process's CPU from the run's start until the cell was idle)")
    print(f"  the page received {run.messages:,} websocket messages, {run.megabytes:.1f} MB")
    for updates, wholes, sent, finish in run.sent:
        print(
            f"  a run with the view: {updates} updates, {wholes} whole views, "
            f"{sent / 1e6:.1f} MB, finish() {finish:.2f} s"
        )


if __name__ == "__main__":
    main()
