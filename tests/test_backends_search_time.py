"""A glob or grep over a huge directory stops at the backend's ``search_seconds`` and says so,
instead of holding the agent for minutes (upstream deepagents times its glob out at 10 s)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage

import nbagents.backends._base as base_module
from nbagents import ScriptedChatModel
from nbagents.backends import DiskBackend, FilesystemMiddleware, StateBackend
from nbagents.models import call

FILES = 30


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for n in range(FILES):
        (tmp_path / f"d{n:02}").mkdir()
        (tmp_path / f"d{n:02}" / "notes.md").write_text(f"note {n}\nTODO: item {n}\n")
    return tmp_path


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """A clock that moves 0.2 s each time the backend reads it: once per file walked, and
    again per file grep reads."""
    now = [0.0]

    def tick() -> float:
        now[0] += 0.2
        return now[0]

    monkeypatch.setattr(base_module, "monotonic", tick)
    yield now


def ask(backend: object, *turns: object) -> list[str]:
    model = ScriptedChatModel(script={"main": [*turns, "ok"]})
    agent = create_agent(model, middleware=[FilesystemMiddleware(backend=backend)])
    result = agent.invoke({"messages": [HumanMessage("go")]})
    return [m.text for m in result["messages"] if isinstance(m, ToolMessage)]


def test_glob_answers_what_it_found_before_its_time_limit(tree: Path, clock: list[float]) -> None:
    backend = DiskBackend(tree)
    backend.search_seconds = 3  # walks 15 of the 30 files
    result = backend.glob("*.md")
    assert result.error is None and result.truncated
    assert 0 < len(result.matches or []) < FILES
    (answer,) = ask(backend, call("glob", pattern="*.md"))
    assert answer.startswith("/d00/notes.md\n")
    assert answer.endswith("Narrow the path or the pattern to see it all.]")


def test_grep_answers_what_it_found_before_its_time_limit(tree: Path, clock: list[float]) -> None:
    backend = DiskBackend(tree)
    backend.search_seconds = 10  # walks all 30 files in 6 s, then reads about 20
    result = backend.grep("TODO")
    assert result.error is None and result.truncated
    assert 0 < len(result.matches or []) < FILES
    # Fewer than max_count were found: the answer must not blame max_count.
    (answer,) = ask(backend, call("grep", pattern="TODO", output_mode="content", max_count=25))
    assert "max_count" not in answer and "stopped early" in answer


def test_a_search_that_found_nothing_in_time_says_why(tree: Path, clock: list[float]) -> None:
    backend = DiskBackend(tree)
    backend.search_seconds = 3
    for result in (backend.glob("*.py"), backend.grep("nowhere")):
        assert result.error is not None and not result.matches
        assert "in 3 s, its time limit" in result.error
    (answer,) = ask(backend, call("glob", pattern="*.py"))
    assert "narrower path" in answer


def test_no_limit_walks_everything(tree: Path, clock: list[float]) -> None:
    backend = DiskBackend(tree)
    backend.search_seconds = None
    assert len(backend.glob("*.md").matches or []) == FILES
    assert len(backend.grep("TODO").matches or []) == FILES
    state = StateBackend()
    assert state.search_seconds == 10.0  # the default, upstream's glob timeout
