"""`make workshop`: participant notebooks whose exercises fail their checks, facilitator notebooks
whose solutions pass them.

The fast tests read the notebooks `nbagents workshop` writes. The `kernel` test runs each
participant notebook in a fresh kernel: every check must fail after its starter, with the
exercise's hint, and pass once the facilitator's solution has run in the same kernel. The
facilitator notebooks are the tutorials byte for byte, so nbval's run of notebooks/ (which compares
each check's "✓ Correct.") covers them as files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.workshop import is_check, run_exercises, source

from nbagents.exercises import (
    SOLUTION_TAG,
    STARTER_TAG,
    build_workshop,
    participant_notebook,
)

REPO = Path(__file__).resolve().parent.parent
TUTORIALS = sorted((REPO / "notebooks").glob("[0-9]*.ipynb"))


def load(path: Path) -> dict[str, Any]:
    notebook: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return notebook


def tags(cell: dict[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


@pytest.fixture(scope="module")
def workshop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("workshop") / "build"
    build_workshop(REPO / "notebooks", out, also=[REPO / "examples"])
    return out


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_every_tutorial_has_one_tagged_solution_with_a_starter_before_its_check(
    path: Path,
) -> None:
    cells = load(path)["cells"]
    solutions = [i for i, c in enumerate(cells) if SOLUTION_TAG in tags(c)]
    checks = [i for i, c in enumerate(cells) if is_check(c)]
    assert len(solutions) == 1 and len(checks) == 1
    assert solutions[0] == checks[0] - 1, "the solution is the cell just before its check"
    assert "check(" in source(cells[checks[0]])
    starter = cells[solutions[0]]["metadata"]["nbagents"]["starter"]
    assert starter.strip() and starter != source(cells[solutions[0]])


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_a_participant_notebook_has_starters_and_no_solution_or_output(
    path: Path, workshop: Path
) -> None:
    tutorial = load(path)
    given = load(workshop / "participant" / path.name)
    solution = next(c for c in tutorial["cells"] if SOLUTION_TAG in tags(c))
    starters = [c for c in given["cells"] if STARTER_TAG in tags(c)]
    assert [source(c) for c in starters] == [solution["metadata"]["nbagents"]["starter"]]
    assert not any(SOLUTION_TAG in tags(c) for c in given["cells"])
    assert source(solution) not in [source(c) for c in given["cells"]]
    assert all(c.get("outputs", []) == [] for c in given["cells"])
    assert all(c.get("execution_count") is None for c in given["cells"] if "outputs" in c)
    text = "\n".join(source(c) for c in given["cells"])
    assert "one solution" not in text
    assert "Write your solution in the cell below" in text
    # every other cell as the tutorial has it, the check included, in the same order
    kept = [source(c) for c in tutorial["cells"] if SOLUTION_TAG not in tags(c)]
    assert [source(c) for c in given["cells"] if STARTER_TAG not in tags(c)] == [
        k.replace(*_pointer(k)) for k in kept
    ]
    assert len({c["id"] for c in given["cells"]}) == len(given["cells"])


def _pointer(text: str) -> tuple[str, str]:
    """The sentence that points at the solution, and what a participant reads instead."""
    from nbagents.exercises import _POINTS_AT_SOLUTION, _WRITE_YOURS

    found = _POINTS_AT_SOLUTION.search(text)
    return (found.group(0), _WRITE_YOURS) if found else ("", "")


def test_facilitator_notebooks_are_the_tutorials(workshop: Path) -> None:
    for path in TUTORIALS:
        assert (workshop / "facilitator" / path.name).read_bytes() == path.read_bytes()


def test_what_the_notebooks_read_goes_with_them(workshop: Path) -> None:
    for audience in ("participant", "facilitator"):
        assert (workshop / audience / "skills" / "user" / "summarize" / "SKILL.md").is_file()
    assert (workshop / "examples" / "research.py").is_file()
    assert (workshop / "examples" / "cassettes" / "research.json").is_file()


def test_participant_notebook_of_an_untagged_notebook_is_unchanged_but_for_outputs() -> None:
    notebook = {
        "cells": [
            {"cell_type": "code", "id": "a", "metadata": {}, "source": "1 + 1",
             "outputs": [{"output_type": "execute_result"}], "execution_count": 1},
        ],
        "metadata": {"widgets": {"state": {}}},
    }  # fmt: skip
    given = participant_notebook(notebook)
    assert given["cells"][0]["source"] == "1 + 1" and given["cells"][0]["outputs"] == []
    assert "widgets" not in given["metadata"]
    assert notebook["cells"][0]["outputs"], "the notebook given is not changed"


def test_the_cli_writes_the_workshop(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nbagents", "workshop", str(REPO / "notebooks"),
         str(tmp_path / "w"), "--also", str(REPO / "examples")],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert f"participant: {len(TUTORIALS)} notebooks" in done.stdout
    assert done.stderr == ""
    assert sorted(p.name for p in (tmp_path / "w" / "participant").glob("*.ipynb")) == [
        p.name for p in TUTORIALS
    ]


@pytest.mark.kernel
@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_unsolved_exercises_fail_their_checks_and_solutions_pass(
    path: Path, workshop: Path
) -> None:
    run = run_exercises(workshop / "participant" / path.name, workshop / "facilitator" / path.name)
    hint = _hint(load(path))
    assert run.unsolved == [f"ExerciseError: Not yet. Hint: {hint}"], run
    assert run.solved == ["passed"], run
    assert run.other_errors == [], run


def _hint(notebook: dict[str, Any]) -> str:
    """The hint the check cell gives, read from its source."""
    import ast

    check_cell = next(c for c in notebook["cells"] if is_check(c))
    for node in ast.walk(ast.parse(source(check_cell))):
        if isinstance(node, ast.keyword) and node.arg == "hint":
            value = ast.literal_eval(node.value)
            assert isinstance(value, str)
            return value
    raise AssertionError("the check cell gives no hint")


# --- each tutorial's first code cell installs nbagents where it is missing -----------------------


def install_cell(path: Path) -> dict[str, Any]:
    code = [c for c in load(path)["cells"] if c["cell_type"] == "code"]
    return code[0]


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_the_first_code_cell_does_nothing_where_nbagents_is_installed(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cell = install_cell(path)
    assert cell["id"] == "install-nbagents" and cell["outputs"] == []

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"ran {args}")

    monkeypatch.setattr(subprocess, "run", refuse)
    exec(compile(source(cell), path.name, "exec"), {})


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_the_first_code_cell_installs_our_distribution_where_nbagents_is_missing(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: ran.append(args))
    monkeypatch.setitem(sys.modules, "nbagents", None)  # `import nbagents` raises ImportError
    exec(compile(source(install_cell(path)), path.name, "exec"), {})
    ((python, *pip),) = ran
    assert python == sys.executable and pip[:4] == ["-m", "pip", "install", "-q"]
    assert pip[4].startswith("jupyter-nbagents")
    # the comment says what it runs
    assert f"# pip install {' '.join(pip[4:])}\n" in source(install_cell(path))
