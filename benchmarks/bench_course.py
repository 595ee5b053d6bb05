"""How long each tutorial takes to run on the scripted model: the machine's share of a workshop.

Executes every tutorial in ``notebooks/`` (what facilitators hand out, with its solution) in a
fresh kernel of this interpreter, in the notebooks' own folder, as `make notebooks` does
(cassettes replayed, no run history), and prints the seconds from kernel start to the last
cell, and the whole course's. A participant's notebook runs the same cells but the solution.
The time people spend reading and solving is not the machine's: docs/teaching.md adds it.

    python benchmarks/bench_course.py [notebooks/01_quickstart.ipynb ...]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent


def run(path: Path) -> tuple[float, int, list[str]]:
    """Seconds to execute ``path``, its code cells, and the errors any raised."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    seconds = time.perf_counter() - start
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [
        f"{o['ename']}: {o['evalue']}"
        for c in code
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    return seconds, len(code), errors


def main() -> int:
    os.environ.update(NBAGENTS_CASSETTE_MODE="replay", NBAGENTS_RUNS="off")
    paths = [Path(p).resolve() for p in sys.argv[1:]] or sorted(
        (REPO / "notebooks").glob("[0-9]*.ipynb")
    )
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"{'tutorial':34} {'cells':>5} {'seconds':>8}")
    total = 0.0
    failed = 0
    for path in paths:
        seconds, cells, errors = run(path)
        total += seconds
        failed += bool(errors)
        note = f"  ERRORS: {errors}" if errors else ""
        print(f"{path.name:34} {cells:5d} {seconds:8.1f}{note}", flush=True)
    print(f"{'all':34} {'':5} {total:8.1f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
