"""Run a workshop's participant notebook in a fresh kernel, unsolved and then solved.

One kernel per notebook: the participant notebook's cells run in order; at each exercise the
check runs after the starter (it must fail), then the facilitator's solution runs in the same
kernel and the check runs again (it must pass), and the notebook goes on from there.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHECK_IMPORT = "from nbagents.exercises import check"
# What `make notebooks` sets too: cassettes only replay, runs are not kept in a user's history.
KERNEL_ENV = {"NBAGENTS_CASSETTE_MODE": "replay", "NBAGENTS_RUNS": "off"}


@dataclass
class Run:
    """What one notebook's exercises said, unsolved and solved, and every other cell's errors."""

    unsolved: list[str] = field(default_factory=list)
    """Per check, what it said after the starter: "passed" or ``ename: evalue``."""
    solved: list[str] = field(default_factory=list)
    """Per check, what it said after the facilitator's solution."""
    other_errors: list[str] = field(default_factory=list)
    """``cell N: ename: evalue`` for every other cell that raised."""
    seconds: float = 0.0


def source(cell: Any) -> str:
    text = cell.get("source", "")
    return text if isinstance(text, str) else "".join(text)


def is_check(cell: Any) -> bool:
    return bool(cell.get("cell_type") == "code" and CHECK_IMPORT in source(cell))


def _outcome(cell: Any) -> str:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output['ename']}: {output['evalue']}"
    printed = "".join(o.get("text", "") for o in cell.get("outputs", []))
    return "passed" if "✓ Correct." in printed else "no tick printed"


def run_exercises(participant: Path, facilitator: Path, timeout: int = 600) -> Run:
    """Execute ``participant`` in its folder, and each solution of ``facilitator`` after it."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(participant, as_version=4)
    solutions = {
        f"{c['id']}-starter"[:64]: c
        for c in nbformat.read(facilitator, as_version=4).cells
        if "solution" in c.get("metadata", {}).get("tags", [])
    }
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(participant.parent)}},
    )
    run = Run()
    saved = {k: os.environ.get(k) for k in KERNEL_ENV}
    os.environ.update(KERNEL_ENV)
    start = time.perf_counter()
    try:
        with client.setup_kernel():
            starter = None
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                client.execute_cell(cell, index)
                if is_check(cell):
                    run.unsolved.append(_outcome(cell))
                    if starter is None:
                        run.solved.append("no starter cell before this check")
                        continue
                    solution = copy.deepcopy(solutions[starter])
                    client.execute_cell(solution, index)
                    if any(o.get("output_type") == "error" for o in solution.outputs):
                        run.other_errors.append(f"solution of cell {index}: {_outcome(solution)}")
                    again = copy.deepcopy(cell)
                    client.execute_cell(again, index)
                    run.solved.append(_outcome(again))
                    starter = None
                    continue
                starter = cell.get("id") if "starter" in cell.metadata.get("tags", []) else None
                if any(o.get("output_type") == "error" for o in cell.outputs):
                    run.other_errors.append(f"cell {index}: {_outcome(cell)}")
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    run.seconds = time.perf_counter() - start
    return run
