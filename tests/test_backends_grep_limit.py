"""grep's ``max_count`` (upstream's argument): at most that many matches, and the answer says
there were more. Backends that take it stop searching early; any other backend's answer is cut
by the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage

from nbagents import ScriptedChatModel
from nbagents.backends import (
    BackendProtocol,
    CompositeBackend,
    DiskBackend,
    FilesystemMiddleware,
    StateBackend,
)
from nbagents.backends._protocol import GrepResult
from nbagents.models import Turn, call

MORE = (
    "[Stopped at max_count=2 matches: there are more. Raise max_count, or narrow the path, glob "
    "or pattern, to see the rest.]"
)


def grep_answers(turns: list[Turn | str], backend: Any) -> Any:
    model = ScriptedChatModel(script={"main": turns})
    middleware = FilesystemMiddleware(backend=backend)
    return create_agent(model, middleware=[middleware], name="main")


def answers(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage) and m.name == "grep"]


def notes_on_disk(tmp_path: Path) -> CompositeBackend:
    (tmp_path / "a.md").write_text("todo one\ntodo two\n")
    (tmp_path / "b.md").write_text("todo three\n")
    return CompositeBackend(StateBackend(), {"/disk/": DiskBackend(tmp_path)})


async def test_grep_stops_at_max_count_and_says_there_is_more(
    run_agent: Any, tmp_path: Path
) -> None:
    agent = grep_answers(
        [
            call("write_file", file_path="/notes.md", content="todo zero"),
            call("grep", pattern="todo", output_mode="content", max_count=2),
            call("grep", pattern="todo", output_mode="files_with_matches", max_count=2),
            call("grep", pattern="todo", output_mode="content", max_count=4),
            call("grep", pattern="todo", path="/disk/", output_mode="count", max_count=2),
            "done",
        ],
        notes_on_disk(tmp_path),
    )
    result = await run_agent(agent, {"messages": [HumanMessage("go")]})
    content, files, every, counts = (m.text for m in answers(result))
    assert content == f"/disk/a.md:1: todo one\n/disk/a.md:2: todo two\n{MORE}"
    assert files == f"/disk/a.md\n{MORE}"
    assert every == (
        "/disk/a.md:1: todo one\n/disk/a.md:2: todo two\n/disk/b.md:1: todo three\n"
        "/notes.md:1: todo zero"
    )
    assert counts == f"/disk/a.md: 2\n{MORE}"
    assert all(m.status == "success" for m in answers(result))


async def test_max_count_below_one_is_an_error_result(run_agent: Any, tmp_path: Path) -> None:
    agent = grep_answers(
        [call("grep", pattern="todo", max_count=0), "done"], notes_on_disk(tmp_path)
    )
    result = await run_agent(agent, {"messages": [HumanMessage("go")]})
    (answer,) = answers(result)
    assert answer.status == "error"
    assert answer.text == "Error: max_count must be 1 or more (leave it out for every match)."


class WithoutMaxCount(BackendProtocol):
    """A backend written before ``max_count``: its grep takes three arguments."""

    def grep(self, pattern: str, path: str | None = None, glob: str | None = None) -> GrepResult:
        lines = [{"path": "/log.txt", "line": n, "text": f"{pattern} {n}"} for n in (1, 2, 3)]
        return GrepResult(matches=lines)  # type: ignore[arg-type]


async def test_a_backend_whose_grep_has_no_max_count_is_cut_by_the_tool(
    run_agent: Any,
) -> None:
    agent = grep_answers(
        [call("grep", pattern="warn", output_mode="content", max_count=2), "done"],
        WithoutMaxCount(),
    )
    result = await run_agent(agent, {"messages": [HumanMessage("go")]})
    (answer,) = answers(result)
    assert answer.text == f"/log.txt:1: warn 1\n/log.txt:2: warn 2\n{MORE}"


def test_nbagents_backends_stop_searching_at_max_count(tmp_path: Path) -> None:
    disk = notes_on_disk(tmp_path).routes["/disk/"]
    found = disk.grep("todo", "/", None, max_count=1)
    assert found.matches == [{"path": "/a.md", "line": 1, "text": "todo one"}]
    assert found.truncated
    whole = disk.grep("todo", "/", None, max_count=3)
    assert whole.matches is not None and len(whole.matches) == 3 and not whole.truncated


def test_the_model_is_offered_max_count() -> None:
    (grep,) = [t for t in FilesystemMiddleware().tools if t.name == "grep"]
    assert "max_count" in grep.args
