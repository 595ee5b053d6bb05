"""What the live view costs a run in a real notebook: JupyterLab in Chromium on this machine.

A notebook runs the same 500-way fan-out (``bench_views.build_agent``: each sub-agent calls a
tool and its model twice, zero latency, about 4,500 spans) with ``display=False``, with the live
view shown in the cell (built by the view worker beside the kernel, started once before), with
the view built in the kernel all along (``NBAGENTS_VIEW_WORKER=0``), and with the view built by
the worker but its output hidden, so that the page takes every update in and draws nothing;
alternated (each round starts with another arm), best of three each. Each run is the cell run
again, its output replacing the last run's, as when a user runs a cell again (a cell holding
every run's 500-way view would make the page restyle them all on each update). The CPU of every
process (kernel, view worker, server, Chromium) is printed. A run with the view counts its
``finish()`` (the final update and the saved output), since the cell waits for it. The browser
renders every update on the same cores as the kernel, as on a laptop. Beside it, the same runs
in a kernel with no browser attached (``bench_views.kernel_walls``): the difference is what the
front end costs the kernel (the widget messages it must send and the page's work competing for
the CPU). Last, the floor: the run with no view plus one whole build of its view and saved
output (``bench_views.view_floor``), the least any view of the run costs, since the notebook
saved from it holds the whole view. And what a busy second CPU costs a run on the first on this
machine (``bench_views.busy_core_cost``): the page and the view worker are such work, and on a
virtual machine no scheduling priority keeps it from slowing the kernel.

    python benchmarks/bench_live_browser.py [--workers 500] [--repeat 3]
    python benchmarks/bench_live_browser.py --page off,worker,off,worker

``--page`` measures only what the page does: each arm run once in the same cell, its output
replaced each time, with Chromium's CPU and Chrome's counters for its main thread (busy,
scripts, layout, style and the number of style passes).

Needs the test extra (JupyterLab, Playwright) and Debian's Chromium (``NBAGENTS_CHROMIUM``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import threading
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
ARMS = ("off", "worker", "kernel", "hidden")
"""``hidden``: the view built by the worker, its cell's output hidden (``display: none``), so
the page takes every update in but draws nothing: what drawing costs the run."""
HIDE_OUTPUTS = """(hide) => {
  let sheet = document.getElementById("nba-bench-hidden");
  if (hide && !sheet) {
    sheet = document.createElement("style");
    sheet.id = "nba-bench-hidden";
    sheet.textContent = ".jp-Cell-outputWrapper { display: none !important; }";
    document.head.appendChild(sheet);
  }
  if (!hide && sheet) sheet.remove();
}"""
SETTLE_SECONDS = 3
"""Pause before each measured run: the page draws a run's saved output (about a second of its
CPU at 500-way) after the run, which would otherwise slow the next one."""


@dataclass
class BrowserRun:
    off: float
    on: float
    in_kernel: float
    hidden: float
    """Best wall seconds of the runs without the view, with it (built by the view worker once
    the run is large), with it built in the kernel all along (``NBAGENTS_VIEW_WORKER=0``), and
    with it built by the worker and its output hidden (nothing drawn)."""
    kernel_cpu_off: float
    kernel_cpu_on: float
    kernel_cpu_in_kernel: float
    """The kernel's CPU seconds in those same runs (the worker's are its own)."""
    cpu: dict[str, float]
    """CPU seconds of each process while the measured cell ran."""
    messages: int
    megabytes: float
    """What the page received on its websockets."""
    sent: list[tuple[int, int, int, float, str]]
    """Per run with the view: widget updates, whole views among them, bytes of view state, the
    seconds its ``finish()`` took (inside the run's wall time: the cell waits for it), and where
    the view was built."""
    rounds: list[tuple[float, float, float]]
    """Per round (the arms run back to back): the run with the view built by the worker, the
    one built in the kernel and the one hidden, each over the run with no view of that round."""
    per_run: dict[str, dict[str, float]]
    """Per arm, medians over its runs: the CPU seconds of each process, and ``waits``: the
    seconds the kernel's threads spent runnable but waiting for a CPU (summed over them)."""


class CpuWaits:
    """Seconds the threads of ``pids`` spent runnable but not running (the scheduler's
    ``run_delay``, Linux's ``/proc/<pid>/task/<tid>/schedstat``), summed over the threads, while
    the block runs. Threads that end meanwhile are read every 0.1 s until they do. ``seconds``
    stays ``None`` where the kernel does not keep the figure."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.seconds: float | None = None
        self._first: dict[str, int] = {}
        self._last: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _read(self) -> dict[str, int]:
        out = {}
        for pid in self.pids:
            with contextlib.suppress(OSError):
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with contextlib.suppress(OSError, ValueError, IndexError):
                        stat = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text()
                        out[f"{pid}/{tid}"] = int(stat.split()[1])
        return out

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            for key, delay in self._read().items():
                self._first.setdefault(key, 0)  # born during the block
                self._last[key] = delay

    def __enter__(self) -> CpuWaits:
        self._first = self._read()
        self._last = dict(self._first)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._last.update(self._read())
        if self._first:
            total = sum(delay - self._first.get(key, 0) for key, delay in self._last.items())
            self.seconds = total / 1e9


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
        "b.view_worker().ready.wait(60)  # started once per kernel, on the other core\n"
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
    "    seconds = b.wall(agent, live=live, show=live, worker=arm != 'kernel')\n"
    "    sent = b.SENT[-1] if live else None\n"
    "    print(json.dumps([seconds, time.process_time() - cpu, sent]))\n"
    "armed = True"
)
"""The measured cell: one run of the arm named in ``arm_file`` (``off``, ``worker`` or
``kernel``) each time it runs, its output replacing the last one's, as when a user runs a cell
again; it prints the run's wall seconds, the kernel's CPU seconds and what the view sent. Run
All only arms it."""


def browser_walls(workers: int, repeat: int) -> BrowserRun:
    """The runs with the notebook open in Chromium, and what each process did meanwhile."""
    # Alternated, with the kernel's own CPU seconds per run: a run that takes longer while the
    # kernel did not work more was kept waiting by the other processes (page, server).
    traffic = {"messages": 0, "bytes": 0}

    def count(frame: str | bytes) -> None:
        traffic["messages"] += 1
        traffic["bytes"] += len(frame)

    def watch(page: Any) -> None:
        page.on("websocket", lambda ws: ws.on("framereceived", count))

    rows: list[tuple[str, float, float, Any]] = []
    per_run: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as base, running_lab(Path(base), None) as server:
        arm_file = Path(base) / "arm"
        arm_file.write_text("off")
        measure = ARM_CELL.format(arm_file=str(arm_file))
        with _opened(server, "bench_live", [_setup_cell(workers), measure], watch) as lab:
            lab_proc = psutil.Process(server.process.pid)
            kernels: list[psutil.Process] = []
            view_workers: list[psutil.Process] = []
            for proc in lab_proc.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    is_worker = "_viewworker" in " ".join(proc.cmdline())
                    (view_workers if is_worker else kernels).append(proc)
            processes = {
                "kernel": kernels,
                "view worker": view_workers,
                "JupyterLab server": [lab_proc],
                "Chromium": _chromium(),
            }
            cpu = dict.fromkeys(processes, 0.0)
            traffic.update(messages=0, bytes=0)
            for round_ in range(repeat):
                # Each round starts with another arm: a run made later in a round was 1.5-3.5%
                # slower than the first (four runs without the view per round, five rounds),
                # and the run without the view always came first.
                first = round_ % len(ARMS)
                for arm in ARMS[first:] + ARMS[:first]:
                    arm_file.write_text("worker" if arm == "hidden" else arm)
                    lab.page.evaluate(HIDE_OUTPUTS, arm == "hidden")
                    time.sleep(SETTLE_SECONDS)  # the page is done with the last run
                    before = _cpu(processes)
                    with CpuWaits([p.pid for p in kernels]) as waits:
                        seconds, kernel_cpu, sent = json.loads(_run_measured_cell(lab))
                    after = _cpu(processes)
                    spent = {name: after[name] - before[name] for name in cpu}
                    for name in cpu:
                        cpu[name] += spent[name]
                    if waits.seconds is not None:
                        spent["waits"] = waits.seconds
                    per_run.setdefault(arm, []).append(spent)
                    rows.append((arm, seconds, kernel_cpu, sent))
    off = [r for r in rows if r[0] == "off"]
    on = [r for r in rows if r[0] == "worker"]
    in_kernel = [r for r in rows if r[0] == "kernel"]
    hidden = [r for r in rows if r[0] == "hidden"]
    return BrowserRun(
        off=min(r[1] for r in off),
        on=min(r[1] for r in on),
        in_kernel=min(r[1] for r in in_kernel),
        hidden=min(r[1] for r in hidden),
        kernel_cpu_off=min(r[2] for r in off),
        kernel_cpu_on=min(r[2] for r in on),
        kernel_cpu_in_kernel=min(r[2] for r in in_kernel),
        cpu=cpu,
        messages=traffic["messages"],
        megabytes=traffic["bytes"] / 1e6,
        sent=[
            (int(u), int(w), int(n), float(f), str(where))
            for u, w, n, f, where in (r[3] for r in rows if r[3] is not None and r[0] != "hidden")
        ],
        rounds=[
            (w[1] / o[1], k[1] / o[1], h[1] / o[1])
            for o, w, k, h in zip(off, on, in_kernel, hidden, strict=True)
        ],
        per_run={
            arm: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
            for arm, runs in per_run.items()
        },
    )


PAGE_METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")
"""Chrome's own counters (``Performance.getMetrics``): seconds of the page's main thread busy,
running scripts, laying out and restyling."""


def page_costs(workers: int, arms: list[str]) -> list[tuple[str, float, float, dict[str, float]]]:
    """Each arm (``off``, ``worker`` or ``kernel``) run once in the same cell, its output
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--page",
        metavar="ARMS",
        help="only what the page does per run, e.g. off,worker,off,worker (see page_costs)",
    )
    args = parser.parse_args()
    if args.page:
        arms = args.page.split(",")
        unknown = sorted(set(arms) - {"off", "worker", "kernel"})
        if unknown:
            parser.error(f"arms are off, worker or kernel, not {', '.join(unknown)}")
        print_page_costs(args.workers, arms)
        return
    spans = args.workers * bench_views.SPANS_PER_WORKER
    best = f"best of {args.repeat}"
    print(f"{args.workers} parallel sub-agents (~{spans:,} spans), zero latency, {best}")
    print(f"{'where':<34} {'view shown':>10} {'display=False':>14} {'ratio':>6}")
    run = browser_walls(args.workers, args.repeat)
    ratio = run.on / run.off
    print(f"{'JupyterLab in Chromium':<34} {run.on:>9.2f}s {run.off:>13.2f}s {ratio:>5.2f}x")
    print(
        f"{'  the kernel CPU in those runs':<34} {run.kernel_cpu_on:>9.2f}s "
        f"{run.kernel_cpu_off:>13.2f}s {run.kernel_cpu_on / run.kernel_cpu_off:>5.2f}x"
    )
    print(
        f"{'  the view built in the kernel':<34} {run.in_kernel:>9.2f}s "
        f"{run.off:>13.2f}s {run.in_kernel / run.off:>5.2f}x"
    )
    print(
        f"{'    its kernel CPU':<34} {run.kernel_cpu_in_kernel:>9.2f}s "
        f"{run.kernel_cpu_off:>13.2f}s {run.kernel_cpu_in_kernel / run.kernel_cpu_off:>5.2f}x"
    )
    print(
        f"{'  the view hidden (nothing drawn)':<34} {run.hidden:>9.2f}s "
        f"{run.off:>13.2f}s {run.hidden / run.off:>5.2f}x"
    )
    # The best of each arm can pair one lucky run with another: the ratios of runs made back to
    # back, and their median, say how steady the figure is on a machine this noisy.
    arms = ("the view built by the worker", "the view built in the kernel", "the view hidden")
    for i, name in enumerate(arms):
        ratios = sorted(r[i] for r in run.rounds)
        listed = ", ".join(f"{r[i]:.2f}" for r in run.rounds)
        print(f"  {name}, round by round: {listed}x; median {statistics.median(ratios):.2f}x")
    busy = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in run.cpu.items())
    print(f"  CPU while the {len(ARMS) * args.repeat} runs went: {busy}")
    print(f"  the page received {run.messages:,} websocket messages, {run.megabytes:.1f} MB")
    print("  per run, until the cell was idle (medians): CPU seconds, and the kernel's threads'")
    print("  seconds runnable but waiting for a CPU (summed over its threads)")
    names = [name for name in next(iter(run.per_run.values())) if name != "waits"]
    print("    " + f"{'arm':<8}" + "".join(f"{name:>19}" for name in [*names, "kernel waits"]))
    for arm, medians in run.per_run.items():
        cells = [f"{medians[name]:>18.2f}s" for name in names]
        waits = medians.get("waits")
        cells.append(f"{waits:>18.2f}s" if waits is not None else f"{'n/a':>19}")
        print("    " + f"{arm:<8}" + "".join(cells))
    for updates, wholes, sent, finish, where in run.sent:
        print(
            f"  a run with the view built in the {where}: {updates} updates, {wholes} whole "
            f"views, {sent / 1e6:.1f} MB, finish() {finish:.2f} s"
        )
    koff, kon = bench_views.kernel_walls(args.workers, repeat=args.repeat)
    print(f"{'a kernel, no browser attached':<34} {kon:>9.2f}s {koff:>13.2f}s {kon / koff:>5.2f}x")
    off, build = bench_views.view_floor(args.workers, repeat=args.repeat)
    floor = f"{off + build:>9.2f}s {off:>13.2f}s {(off + build) / off:>5.2f}x"
    print(f"{'floor: the view built once, saved':<34} {floor}")
    print(
        f"  (this process, no kernel: the run with no view, plus the CPU of one whole build of "
        f"its view and saved output, {build:.2f} s, which any view of the run must spend)"
    )
    # The page and the view worker run beside the kernel. Where another CPU's work slows the
    # kernel's own CPU (threads of one core, a host shared with other machines), no priority
    # shields the run from them: this says how much, on this machine, now.
    contention = bench_views.busy_core_cost(args.workers, repeat=args.repeat)
    if contention is not None:
        alone, beside = contention
        print(
            f"{'the run on one CPU, another busy':<34} {beside:>9.2f}s {alone:>13.2f}s "
            f"{beside / alone:>5.2f}x"
        )
        print(
            "  (this process pinned to one CPU, no view; a process at the idle scheduling class "
            "spinning on another CPU, vs that CPU idle: medians)"
        )


if __name__ == "__main__":
    main()
