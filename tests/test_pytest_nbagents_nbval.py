"""A notebook written as the README's quickstart, with a trace in its outputs, in a project
whose only nbagents setup is one line of pytest configuration: nbval passes on it twice in a
row, keeps its runs out of the project, and still fails when the agent's result or tree
changes. Without the line, the same notebook fails: the line is what makes it pass.

nbval runs in a subprocess, as a user's CI runs it: a kernel per notebook, the project's own
pyproject.toml, and an environment without the variables this test session set.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.kernel  # nbval runs the notebook in a kernel

SETUP = '''\
from langchain_core.tools import tool

import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import call, delegate, parallel, say


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


model = ScriptedChatModel(
    script={
        "main": [
            parallel(
                delegate("Research A", "researcher"),
                delegate("Research B", "researcher"),
                delegate("Write C", "writer"),
            ),
            say("Done: A and B are fine, C is written."),
        ],
        "researcher": {
            "Research A": [call("search", query="A"), say("A is fine")],
            "Research B": ["B is fine"],
        },
        "writer": ["C written"],
    },
    latency=0.05,
)

agent = create_deep_agent(
    model,
    [search],
    subagents=[
        {"name": "researcher", "description": "Researches one topic", "system_prompt": "Research."},
        {"name": "writer", "description": "Writes text", "system_prompt": "Write.", "tools": []},
    ],
)'''
RUN = """\
with nbagents.trace() as t:
    result = agent.invoke({"messages": [("user", "Research A and B, write C")]})

print(result["messages"][-1].content)"""
EXECUTE = ["--inplace", "--log-level=ERROR", "research.ipynb"]
ONE_LINE = "[tool.pytest.ini_options]\nnbagents_ci = true\n"


def clean_env() -> dict[str, str]:
    # This session's own CI setup must not leak into the user's project.
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("NBAGENTS_RUNS", "NBAGENTS_CASSETTE_MODE", "PYTEST_ADDOPTS")
    }


def nbval(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "-p", "no:cacheprovider", "research.ipynb"],
        cwd=project,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def failed_cells(result: subprocess.CompletedProcess[str]) -> list[str]:
    return re.findall(r"^FAILED research\.ipynb::(Cell \d+)", result.stdout, flags=re.M)


def edit(project: Path, old: str, new: str) -> None:
    """Change the notebook's code, not its saved outputs: the agent now does something else."""
    import nbformat  # here, not at the top: its import costs every test process of `make quick`

    path = project / "research.ipynb"
    notebook = nbformat.read(path, as_version=4)
    assert old in notebook.cells[0].source
    notebook.cells[0].source = notebook.cells[0].source.replace(old, new)
    nbformat.write(notebook, path)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's project: the notebook, run and saved as Jupyter would save it."""
    import nbformat

    root = tmp_path_factory.mktemp("user-project")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(c) for c in (SETUP, RUN, "print(t)", "t")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, root / "research.ipynb")
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", *EXECUTE],
        cwd=root,
        env={**clean_env(), "NBAGENTS_RUNS": "off"},  # the author's history is not the point
        check=True,
        capture_output=True,
        timeout=300,
    )
    return root


def test_without_the_line_nbval_fails_on_a_traced_notebook(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    try:
        result = nbval(project)
    finally:
        (project / "pyproject.toml").unlink()
        # nbval without nbagents' setup keeps the runs where the notebook is, in the project
        assert (project / ".nbagents").is_dir()
        for path in sorted((project / ".nbagents").rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        (project / ".nbagents").rmdir()
    assert result.returncode == 1, result.stdout
    assert "nba-t" in result.stdout or "nbagents live view" in result.stdout


def test_with_the_line_nbval_passes_twice_and_a_real_change_fails(project: Path) -> None:
    (project / "pyproject.toml").write_text(ONE_LINE)
    for _ in range(2):
        result = nbval(project)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "nbagents CI: 14 nbval sanitize rules for trace outputs" in result.stdout
        assert "4 passed" in result.stdout
    assert not (project / ".nbagents").exists()  # the runs went to a throwaway history

    # The same number of characters, so the same tokens: only the result's text differs.
    edit(project, '"writer": ["C written"]', '"writer": ["D written"]')
    reworded = nbval(project)
    assert reworded.returncode == 1
    assert failed_cells(reworded) == ["Cell 3"]  # `t`: the snapshot shows each result
    assert "mismatch 'text/html'" in reworded.stdout

    edit(project, '"writer": ["D written"]', '"writer": ["C written"]')
    edit(project, 'delegate("Research B", "researcher"),', "")
    smaller = nbval(project)
    assert failed_cells(smaller) == ["Cell 2", "Cell 3"]
    assert "2 sub-agent spawn(s)" in smaller.stdout  # print(t): the tree has one spawn less
