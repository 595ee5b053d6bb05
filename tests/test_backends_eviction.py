"""``FilesystemMiddleware(tool_token_limit_before_evict=...)``: large tool results go to a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.store.memory import InMemoryStore

from nbagents import ScriptedChatModel
from nbagents.backends import (
    AccessRule,
    CompositeBackend,
    DiskBackend,
    FilesystemMiddleware,
    StateBackend,
    StoreBackend,
)
from nbagents.models import call

BIG = "\n".join(f"row {n}" for n in range(1, 20_001))  # 188,893 characters: over 20,000 tokens


@tool
def dump() -> str:
    """Return a large text."""
    return BIG


@tool
def small() -> str:
    """Return a short text."""
    return "short"


def run(middleware: FilesystemMiddleware, *turns: Any, **kwargs: Any) -> dict[str, Any]:
    model = ScriptedChatModel(script={"main": [*turns, "ok"]})
    agent = create_agent(model, tools=[dump, small], middleware=[middleware], **kwargs)
    result: dict[str, Any] = agent.invoke({"messages": [HumanMessage("go")]})
    return result


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


async def test_a_large_result_is_saved_to_the_state_and_replaced_by_a_note() -> None:
    result = run(FilesystemMiddleware(), call("dump"), call("small"))
    dumped, short = tool_messages(result)
    path = f"/large_tool_results/{dumped.tool_call_id}"
    assert result["files"][path]["content"] == BIG
    assert f"saved to the file {path}" in dumped.text
    assert f"({len(BIG)} characters)" in dumped.text
    assert "1  row 1\n" in dumped.text
    assert "... [19990 lines not shown] ..." in dumped.text
    assert dumped.text.endswith("20000  row 20000")
    assert len(dumped.text) < 1000
    assert (dumped.name, dumped.status) == ("dump", "success")
    assert short.text == "short"
    assert list(result["files"]) == [path]


async def test_the_saved_result_reads_back_with_read_file(tmp_path: Path) -> None:
    backend = DiskBackend(tmp_path)
    first = run(FilesystemMiddleware(backend=backend), call("dump"))
    (dumped,) = tool_messages(first)
    saved = tmp_path / "large_tool_results" / dumped.tool_call_id
    assert saved.read_text() == BIG
    path = f"/large_tool_results/{dumped.tool_call_id}"
    again = run(
        FilesystemMiddleware(backend=backend), call("read_file", file_path=path, offset=9, limit=2)
    )
    (read,) = tool_messages(again)
    assert read.text.startswith("10  row 10\n11  row 11\n")


async def test_results_stay_whole_without_a_limit_or_under_it() -> None:
    whole = run(FilesystemMiddleware(tool_token_limit_before_evict=None), call("dump"))
    assert [m.text for m in tool_messages(whole)] == [BIG]
    assert "files" not in whole or not whole["files"]
    roomy = run(FilesystemMiddleware(tool_token_limit_before_evict=50_000), call("dump"))
    assert [m.text for m in tool_messages(roomy)] == [BIG]


async def test_the_file_tools_own_answers_are_never_saved() -> None:
    start = {"/big.txt": {"content": "x" * 90_000, "encoding": "utf-8"}}
    model = ScriptedChatModel(script={"main": [call("read_file", file_path="/big.txt"), "ok"]})
    middleware = FilesystemMiddleware(tool_token_limit_before_evict=10)
    agent = create_agent(model, middleware=[middleware])
    result = agent.invoke({"messages": [HumanMessage("go")], "files": start})
    (read,) = tool_messages(result)
    assert read.text.startswith("1  xxx")
    assert list(result["files"]) == ["/big.txt"]


async def test_a_store_backend_keeps_the_result_and_adds_no_files_key() -> None:
    store = InMemoryStore()
    backend = StoreBackend(namespace=lambda _rt: ("results",), store=store)
    middleware = FilesystemMiddleware(backend=backend)
    result = run(middleware, call("dump"), store=store)
    (dumped,) = tool_messages(result)
    item = store.get(("results",), f"/large_tool_results/{dumped.tool_call_id}")
    assert item is not None
    assert item.value["content"] == BIG
    assert "files" not in result


async def test_a_result_that_cannot_be_saved_stays_whole(tmp_path: Path) -> None:
    backend = DiskBackend(tmp_path, rules=[AccessRule.deny("/large_tool_results/**", "write")])
    result = run(FilesystemMiddleware(backend=backend), call("dump"))
    assert [m.text for m in tool_messages(result)] == [BIG]
    assert not (tmp_path / "large_tool_results").exists()


async def test_ainvoke_saves_the_result_too() -> None:
    model = ScriptedChatModel(script={"main": [call("dump"), "ok"]})
    agent = create_agent(model, tools=[dump], middleware=[FilesystemMiddleware()])
    result = await agent.ainvoke({"messages": [HumanMessage("go")]})
    (dumped,) = tool_messages(result)
    path = f"/large_tool_results/{dumped.tool_call_id}"
    assert result["files"][path]["content"] == BIG
    assert path in dumped.text


async def test_a_composite_backend_saves_large_results_under_its_artifacts_root(
    tmp_path: Path,
) -> None:
    # deepagents' CompositeBackend(artifacts_root=...): a route there gives those files a
    # backend of their own, here a directory on disk beside the state.
    backend = CompositeBackend(
        StateBackend(), {"/scratch/": DiskBackend(tmp_path)}, artifacts_root="/scratch"
    )
    middleware = FilesystemMiddleware(backend=backend)
    result = run(middleware, call("dump"))
    (dumped,) = tool_messages(result)
    path = f"/scratch/large_tool_results/{dumped.tool_call_id}"
    assert f"saved to the file {path}" in dumped.text
    assert (tmp_path / "large_tool_results" / dumped.tool_call_id).read_text() == BIG
    assert not result.get("files")  # nothing went to the state
    descriptions = {t.name: t.description for t in middleware.tools}
    assert "/scratch/large_tool_results/" in descriptions["read_file"]
    assert "`/large_tool_results/`" not in descriptions["read_file"]
    again = run(FilesystemMiddleware(backend=backend), call("read_file", file_path=path, limit=1))
    assert tool_messages(again)[0].text.startswith("1  row 1")


async def test_the_artifacts_root_must_be_an_absolute_path() -> None:
    assert CompositeBackend(StateBackend(), {}).artifacts_root == "/"
    assert CompositeBackend(StateBackend(), {}, artifacts_root="/a/b/").artifacts_root == "/a/b"
    for bad in ("scratch", "/a/../b", ""):
        with pytest.raises(ValueError, match="artifacts_root"):
            CompositeBackend(StateBackend(), {}, artifacts_root=bad)
