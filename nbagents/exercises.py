"""The tutorials' workshop exercises: their checks, and participant and facilitator notebooks.

Every tutorial ends with an exercise: a markdown cell that asks, a solution cell tagged
``solution``, and a check cell that calls :func:`check`. A workshop hands out two versions of
each notebook (``nbagents workshop SRC OUT``, or ``make workshop``):

- **participant**: each solution cell is replaced by its *starter*, a code cell with a hint that
  runs but does not solve the exercise, so the check cell after it says what is missing; the
  sentence that points at the solution goes, and every output is cleared.
- **facilitator**: the notebook as it is, solutions and outputs included.

A solution cell carries its starter in its own metadata, ``metadata["nbagents"]["starter"]``
(a cell without one gets a generic starter), so the tutorial stays one file.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "SOLUTION_TAG",
    "STARTER_TAG",
    "ExerciseError",
    "build_workshop",
    "check",
    "exercise_count",
    "facilitator_notebook",
    "is_solution",
    "participant_notebook",
    "starter_source",
]

SOLUTION_TAG = "solution"
"""The cell tag that marks a solution cell (JupyterLab shows tags in the property inspector)."""
STARTER_TAG = "starter"
"""The tag a participant notebook's starter cells carry, in place of the solution's."""

GENERIC_STARTER = "# Your solution here: the check in the next cell says what is missing.\n"
# "The cell below holds one solution: clear it, write yours, and run the check." and its variants
_POINTS_AT_SOLUTION = re.compile(r"\s*The\s+cells?\s+below\s+holds?\s+one\s+solution[^.]*\.")
_WRITE_YOURS = " Write your solution in the cell below, then run the check after it."


class ExerciseError(AssertionError):
    """An exercise's answer is not right yet; the message is a hint."""


def check(correct: bool, *, hint: str) -> None:
    """Print a tick when ``correct``, else raise :class:`ExerciseError` carrying ``hint``."""
    if not correct:
        raise ExerciseError(f"Not yet. Hint: {hint}")
    print("✓ Correct.")


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _lines(text: str) -> list[str]:
    """Cell source as nbformat stores it: a list of lines, each but the last with its newline."""
    return text.splitlines(keepends=True)


def is_solution(cell: dict[str, Any]) -> bool:
    """Whether ``cell`` is tagged as an exercise's solution."""
    tags = cell.get("metadata", {}).get("tags", [])
    return isinstance(tags, list) and SOLUTION_TAG in tags


def starter_source(cell: dict[str, Any]) -> str:
    """The starter a solution cell carries in its metadata, or a generic one."""
    starter = cell.get("metadata", {}).get("nbagents", {}).get("starter")
    return starter if isinstance(starter, str) and starter.strip() else GENERIC_STARTER


def participant_notebook(notebook: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``notebook`` for participants: starters for solutions, no outputs.

    A tagged code cell becomes its starter (a code cell tagged ``starter``); a tagged markdown
    cell is dropped. In the markdown cell before a solution, a sentence pointing at the solution
    ("The cell below holds one solution…") becomes an invitation to write one.
    """
    nb = copy.deepcopy(notebook)
    cells: list[dict[str, Any]] = []
    for cell in nb["cells"]:
        if is_solution(cell):
            if cell["cell_type"] != "code":
                continue
            cell = {
                "cell_type": "code",
                "execution_count": None,
                "id": f"{cell.get('id', 'solution')}-starter"[:64],
                "metadata": {"tags": [STARTER_TAG]},
                "outputs": [],
                "source": _lines(starter_source(cell)),
            }
        elif cell["cell_type"] == "markdown" and _POINTS_AT_SOLUTION.search(_source(cell)):
            cell["source"] = _lines(_POINTS_AT_SOLUTION.sub(_WRITE_YOURS, _source(cell), count=1))
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
            cell.get("metadata", {}).pop("execution", None)
        cells.append(cell)
    nb["cells"] = cells
    nb.get("metadata", {}).pop("widgets", None)  # saved widget state belongs to the outputs
    return nb


def facilitator_notebook(notebook: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``notebook`` for facilitators: the tutorial as it is, solutions and outputs."""
    return copy.deepcopy(notebook)


def build_workshop(
    source: Path | str, out: Path | str, *, also: Iterable[Path | str] = ()
) -> dict[str, list[Path]]:
    """Write ``out/participant/`` and ``out/facilitator/`` from the notebooks in ``source``.

    Every other file and folder in ``source`` (data a notebook reads, such as ``skills/``) is
    copied beside the notebooks of both; each path in ``also`` is copied into ``out`` itself, for
    what a notebook reaches with ``../`` (tutorial 9 imports ``../examples/research.py``).
    ``out`` is replaced. Returns the notebooks written, by audience.
    """
    source, out = Path(source), Path(out)
    notebooks = sorted(source.glob("*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks in {source}")
    if out.exists():
        shutil.rmtree(out)
    written: dict[str, list[Path]] = {"participant": [], "facilitator": []}
    makers = {"participant": participant_notebook, "facilitator": facilitator_notebook}
    for audience, make in makers.items():
        folder = out / audience
        folder.mkdir(parents=True)
        for path in notebooks:
            notebook = json.loads(path.read_text(encoding="utf-8"))
            # nbformat's own layout, so that a notebook written here diffs cleanly against its
            # source
            text = json.dumps(make(notebook), sort_keys=True, indent=1, ensure_ascii=False)
            (folder / path.name).write_text(text + "\n", encoding="utf-8")
            written[audience].append(folder / path.name)
        for extra in source.iterdir():
            if extra.suffix != ".ipynb" and not extra.name.startswith("."):
                _copy(extra, folder)
    for extra in map(Path, also):
        _copy(extra, out)
    return written


def _copy(path: Path, folder: Path) -> None:
    if path.is_dir():
        ignored = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.pyc")
        shutil.copytree(path, folder / path.name, ignore=ignored)
    else:
        shutil.copy2(path, folder / path.name)


def exercise_count(notebook: dict[str, Any]) -> int:
    """How many solution cells ``notebook`` has."""
    return sum(1 for cell in notebook["cells"] if is_solution(cell) and cell["cell_type"] == "code")
