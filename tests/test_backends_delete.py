"""The ``delete`` file tool, through real agent runs on the scripted model (invoke and ainvoke).

What it does on each backend, what it refuses and how (an error result, never an exception), that
a read-only setup stays read-only, that a sub-agent's delete reaches its parent's files, and that
its name, order and argument are upstream deepagents'.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.approvals import pending_approvals
from nbagents.backends import (
    DELETE_TOOL_DESCRIPTION,
    FILESYSTEM_PROMPT,
    AccessRule,
    BackendProtocol,
    CompositeBackend,
    DiskBackend,
    FilesystemMiddleware,
    LsResult,
    StateBackend,
    StoreBackend,
    build_file_tools,
)
from nbagents.models import Turn, call, delegate, parallel

FILE_TOOLS = ["ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep"]
"""Upstream deepagents' file tools, in its order (without ``execute``: no sandbox backends)."""


def record(content: str) -> dict[str, str]:
    return {"content": content, "encoding": "utf-8"}


def answers(result: dict[str, Any], name: str = "delete") -> list[tuple[str, str]]:
    return [
        (m.status, m.text)
        for m in result["messages"]
        if isinstance(m, ToolMessage) and m.name == name
    ]


def with_files(backend: Any, *turns: Turn | str) -> Any:
    model = ScriptedChatModel(script={"main": list(turns)})
    return create_agent(model, middleware=[FilesystemMiddleware(backend=backend)], name="main")


def go(files: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"messages": [HumanMessage("go")], **({"files": files} if files else {})}


# -- what it deletes, on each backend ------------------------------------------------------------


async def test_a_file_and_a_directory_leave_the_state(run_agent: Any) -> None:
    agent = with_files(
        StateBackend(),
        call("delete", file_path="/notes/a.md"),
        call("delete", file_path="/notes/old/"),
        call("ls", path="/"),
        "done",
    )
    start = {
        "/notes/a.md": record("a"),
        "/notes/old/b.md": record("b"),
        "/notes/old/deep/c.md": record("c"),
        "/notes/older.md": record("kept: only a prefix of /notes/old"),
        "/keep.md": record("k"),
    }
    result = await run_agent(agent, go(start))
    assert answers(result) == [
        ("success", "Deleted /notes/a.md."),
        ("success", "Deleted /notes/old."),
    ]
    assert sorted(result["files"]) == ["/keep.md", "/notes/older.md"]
    assert answers(result, "ls") == [("success", "/keep.md\n/notes/")]


async def test_on_disk_a_file_and_a_directory_are_removed(run_agent: Any, tmp_path: Path) -> None:
    (tmp_path / "dir" / "sub").mkdir(parents=True)
    for name in ("a.txt", "dir/b.txt", "dir/sub/c.txt", "keep.txt"):
        (tmp_path / name).write_text(name)
    os.symlink(tmp_path / "keep.txt", tmp_path / "link.txt")
    agent = with_files(
        DiskBackend(tmp_path),
        call("delete", file_path="/a.txt"),
        call("delete", file_path="/dir"),
        call("delete", file_path="/a.txt"),
        call("delete", file_path="/link.txt"),
        "done",
    )
    result = await run_agent(agent, go())
    assert answers(result) == [
        ("success", "Deleted /a.txt."),
        ("success", "Deleted /dir."),
        ("error", "Error: File '/a.txt' not found"),
        ("success", "Deleted /link.txt."),  # the link, not the file it points to
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


async def test_in_a_store_only_the_paths_under_it_go(run_agent: Any) -> None:
    store = InMemoryStore()
    for path in ("/a.md", "/dir/b.md", "/dir/c/d.md", "/dirt.md"):
        store.put(("files",), path, record(path))
    store.put(("files", "other"), "/a.md", record("another namespace's"))
    agent = with_files(
        StoreBackend(namespace=("files",), store=store),
        call("delete", file_path="/a.md"),
        call("delete", file_path="/dir"),
        "done",
    )
    result = await run_agent(agent, go())
    assert answers(result) == [("success", "Deleted /a.md."), ("success", "Deleted /dir.")]
    assert [i.key for i in store.search(("files",)) if i.namespace == ("files",)] == ["/dirt.md"]
    assert store.get(("files", "other"), "/a.md") is not None


async def test_a_composite_deletes_in_the_backend_of_each_path(
    run_agent: Any, tmp_path: Path
) -> None:
    (tmp_path / "report.txt").write_text("r")
    store = InMemoryStore()
    store.put(("memories",), "/tea.md", record("green"))
    store.put(("memories",), "/coffee.md", record("black"))
    backend = CompositeBackend(
        StateBackend(),
        {
            "/disk/": DiskBackend(tmp_path),
            "/memories/": StoreBackend(namespace=("memories",), store=store),
        },
    )
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(
                    call("delete", file_path="/draft.md"),
                    call("delete", file_path="/disk/report.txt"),
                    call("delete", file_path="/memories/tea.md"),
                ),
                call("delete", file_path="/memories/tea.md"),
                "done",
            ]
        }
    )
    agent = create_deep_agent(model, backend=backend)
    result = await run_agent(agent, go({"/draft.md": record("d"), "/plan.md": record("p")}))
    assert answers(result) == [
        ("success", "Deleted /draft.md."),
        ("success", "Deleted /disk/report.txt."),
        ("success", "Deleted /memories/tea.md."),
        # The routed backend's error names the path the model gave, not the inner one.
        ("error", "Error: File '/memories/tea.md' not found"),
    ]
    assert list(result["files"]) == ["/plan.md"]
    assert not (tmp_path / "report.txt").exists()
    assert [i.key for i in store.search(("memories",))] == ["/coffee.md"]


# -- what it refuses -----------------------------------------------------------------------------


async def test_refusals_are_error_results_and_nothing_is_removed(
    run_agent: Any, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    (root / "locked").mkdir(parents=True)
    (root / "mixed").mkdir()
    for name in ("locked/key.txt", "mixed/free.txt", "mixed/keep.lock", "notes.md"):
        (root / name).write_text(name)
    (tmp_path / "outside.txt").write_text("not the backend's")
    os.symlink(tmp_path / "outside.txt", root / "escape.txt")
    disk = DiskBackend(
        root, rules=[AccessRule.deny("/locked/**", "write"), AccessRule.deny("/**/*.lock", "write")]
    )
    agent = with_files(
        disk,
        call("delete", file_path="/missing.md"),
        call("delete", file_path="/../outside.txt"),
        call("delete", file_path="notes.md"),
        call("delete", file_path="/"),
        call("delete", file_path="/outside.txt"),
        call("delete", file_path="/escape.txt"),
        call("delete", file_path="/locked/key.txt"),
        call("delete", file_path="/mixed"),
        "I give up",
    )
    result = await run_agent(agent, go())
    assert answers(result) == [
        ("error", "Error: File '/missing.md' not found"),
        ("error", "Error: Path '/../outside.txt' contains '..', which is not allowed."),
        ("error", "Error: Path 'notes.md' is relative: give an absolute path such as /notes.md."),
        ("error", "Error: / cannot be deleted."),
        # Every absolute path is inside the root: the host's file is not even looked at.
        ("error", "Error: File '/outside.txt' not found"),
        ("error", "Error: /escape.txt resolves outside the backend root (symlink escape)."),
        ("error", "Error: Access denied: write of /locked/key.txt is not permitted."),
        # A directory goes whole or not at all.
        ("error", "Error: Access denied: write of /mixed/keep.lock is not permitted."),
    ]
    assert result["messages"][-1].text == "I give up"
    assert (tmp_path / "outside.txt").read_text() == "not the backend's"
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir()) == [
        "escape.txt",
        "locked/key.txt",
        "mixed/free.txt",
        "mixed/keep.lock",
        "notes.md",
    ]


async def test_a_composite_keeps_its_mounts_whole(run_agent: Any, tmp_path: Path) -> None:
    (tmp_path / "cache.txt").write_text("c")
    backend = CompositeBackend(StateBackend(), {"/data/cache/": DiskBackend(tmp_path)})
    agent = with_files(
        backend,
        call("delete", file_path="/data/cache"),
        call("delete", file_path="/data"),
        call("delete", file_path="/"),
        "done",
    )
    result = await run_agent(agent, go({"/data/table.csv": record("t")}))
    assert answers(result) == [
        (
            "error",
            "Error: /data/cache/ is where another backend is mounted, so it cannot be deleted; "
            "delete the files in it instead.",
        ),
        (
            "error",
            "Error: /data holds /data/cache/, where another backend is mounted, so it cannot be "
            "deleted whole; delete what else is in it instead.",
        ),
        ("error", "Error: / cannot be deleted."),
    ]
    assert list(result["files"]) == ["/data/table.csv"]
    assert (tmp_path / "cache.txt").exists()


class NoDelete(BackendProtocol):
    """A backend written without ``delete``, as the protocol allows."""

    def ls(self, path: str) -> LsResult:
        return LsResult(entries=[])


class DuckBackend:
    """Not a subclass: an object with the six methods that make a backend, and no ``delete``."""

    def __getattr__(self, name: str) -> Any:
        if name in ("ls", "read", "write", "edit", "glob", "grep"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)


@pytest.mark.parametrize("backend", [NoDelete(), DuckBackend()], ids=["subclass", "duck"])
async def test_a_backend_that_cannot_delete_says_so(run_agent: Any, backend: Any) -> None:
    composite = CompositeBackend(StateBackend(), {"/other/": backend})
    plain = await run_agent(with_files(backend, call("delete", file_path="/a.md"), "ok"), go())
    routed = await run_agent(
        with_files(composite, call("delete", file_path="/other/a.md"), "ok"), go()
    )
    assert answers(plain) == [("error", "Error: this backend does not support the operation.")]
    assert answers(routed) == [
        ("error", "Error: /other/a.md is on a backend that cannot delete files.")
    ]
    assert plain["messages"][-1].text == routed["messages"][-1].text == "ok"


async def test_a_read_only_skills_directory_stays_read_only(
    run_agent: Any, model_calls: Any, tmp_path: Path
) -> None:
    # The setup of docs/backends-and-skills.md: skills on disk, write denied everywhere there.
    (tmp_path / "user" / "pdf").mkdir(parents=True)
    skill = tmp_path / "user" / "pdf" / "SKILL.md"
    skill.write_text("---\nname: pdf\ndescription: Reads PDFs.\n---\nUse it.\n")
    disk = DiskBackend(tmp_path, rules=[AccessRule.deny("/**", "write")])
    backend = CompositeBackend(StateBackend(), {"/skills/": disk})
    model = ScriptedChatModel(
        script={
            "main": [
                call("delete", file_path="/skills/user/pdf/SKILL.md"),
                delegate("Tidy up /skills/", "general-purpose"),
                "done",
            ],
            "general-purpose": [
                call("delete", file_path="/skills/user/pdf"),
                call("delete", file_path="/skills/user/pdf/SKILL.md"),
                "could not",
            ],
        }
    )
    agent = create_deep_agent(model, backend=backend, skills=["/skills/user/"])
    result = await run_agent(agent, go())
    denied = "Error: Access denied: write of /skills/user/pdf{} is not permitted."
    assert answers(result) == [("error", denied.format("/SKILL.md"))]
    # The sub-agent's own conversation, as its last model call saw it.
    seen = {"messages": model_calls.of("general-purpose")[-1].messages}
    assert answers(seen) == [("error", denied.format("")), ("error", denied.format("/SKILL.md"))]
    assert skill.exists()
    assert result["messages"][-1].text == "done"


async def test_a_human_can_be_asked_before_each_delete(run_agent: Any, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b.md").write_text("b")
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(call("delete", file_path="/a.md"), call("delete", file_path="/b.md")),
                "done",
            ]
        }
    )
    agent = create_deep_agent(
        model,
        backend=DiskBackend(tmp_path),
        interrupt_on={"write_file": True, "edit_file": True, "delete": True},
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "approve-deletes"}}
    requests = pending_approvals(await run_agent(agent, go(), config))
    assert sorted(r.args["file_path"] for r in requests) == ["/a.md", "/b.md"]
    assert (tmp_path / "a.md").exists() and (tmp_path / "b.md").exists()

    by_path = {r.args["file_path"]: r for r in requests}
    by_path["/a.md"].approve()
    by_path["/b.md"].reject("Keep b.")
    result = await run_agent(agent, requests.resume(), config)
    assert ("success", "Deleted /a.md.") in answers(result)
    assert [p.name for p in tmp_path.iterdir()] == ["b.md"]


# -- sub-agents ----------------------------------------------------------------------------------


async def test_a_subagents_delete_reaches_its_parents_files(run_agent: Any) -> None:
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(delegate("clean up", "general-purpose"), delegate("write", "writer")),
                call("ls", path="/"),
                "done",
            ],
            "general-purpose": [
                parallel(call("delete", file_path="/old.md"), call("delete", file_path="/drafts")),
                "cleaned",
            ],
            "writer": [call("write_file", file_path="/new.md", content="n"), "written"],
        }
    )
    writer = {"name": "writer", "description": "Writes.", "system_prompt": "Write."}
    agent = create_deep_agent(model, backend=StateBackend(), subagents=[writer])
    start = {
        "/old.md": record("o"),
        "/drafts/1.md": record("1"),
        "/drafts/2.md": record("2"),
        "/keep.md": record("k"),
    }
    result = await run_agent(agent, go(start))
    # Left out of what the sub-agent hands back, its deletes would leave the parent's copies.
    assert sorted(result["files"]) == ["/keep.md", "/new.md"]
    assert answers(result, "ls") == [("success", "/keep.md\n/new.md")]


# -- the tool itself -----------------------------------------------------------------------------


async def test_every_agent_with_file_tools_is_offered_delete(model_calls: Any) -> None:
    model = ScriptedChatModel(
        script={"main": [delegate("x", "writer"), delegate("y"), "ok"], "writer": ["w"]}
    )
    writer = {"name": "writer", "description": "Writes.", "system_prompt": "Write."}
    agent = create_deep_agent(model, backend=StateBackend(), subagents=[writer])
    await agent.ainvoke(go(), {"callbacks": [model_calls]})
    for name in ("main", "writer", "general-purpose"):
        (sent, *_) = model_calls.of(name)
        assert [t for t in sent.tools if t in FILE_TOOLS] == FILE_TOOLS, name
        assert "`delete`" in sent.messages[0].text
    assert "`delete`" in FILESYSTEM_PROMPT


def test_its_description_is_the_default_or_the_callers() -> None:
    (default,) = [t for t in FilesystemMiddleware().tools if t.name == "delete"]
    assert default.description == DELETE_TOOL_DESCRIPTION
    assert list(default.args) == ["file_path"]
    custom = FilesystemMiddleware(custom_tool_descriptions={"delete": "Remove a file."})
    built = build_file_tools(StateBackend(), {"delete": "Remove it."})
    assert [t.description for t in custom.tools if t.name == "delete"] == ["Remove a file."]
    assert [t.description for t in built if t.name == "delete"] == ["Remove it."]


async def test_name_order_argument_and_answers_are_upstreams(model_calls: Any) -> None:
    deepagents = pytest.importorskip("deepagents.middleware.filesystem")
    upstream_backends = pytest.importorskip("deepagents.backends")
    turns: list[Turn | str] = [
        call("write_file", file_path="/a.md", content="a"),
        call("delete", file_path="/a.md"),
        call("delete", file_path="/a.md"),
        "ok",
    ]
    ours = create_agent(
        ScriptedChatModel(script={"ours": turns}), middleware=[FilesystemMiddleware()], name="ours"
    )
    theirs = create_agent(
        ScriptedChatModel(script={"theirs": turns}),
        middleware=[deepagents.FilesystemMiddleware(backend=upstream_backends.StateBackend())],
        name="theirs",
    )
    config = {"callbacks": [model_calls]}
    our_result = await ours.ainvoke(go(), config)
    their_result = await theirs.ainvoke(go(), config)

    assert model_calls.of("ours")[0].tools == model_calls.of("theirs")[0].tools == FILE_TOOLS
    (their_tool,) = [t for t in deepagents.FilesystemMiddleware().tools if t.name == "delete"]
    assert list(their_tool.args) == ["file_path"]
    # nbagents' answers start with upstream's words (and end as sentences).
    for (status, text), (their_status, their_text) in zip(
        answers(our_result), answers(their_result), strict=True
    ):
        assert status == their_status
        assert text.startswith(their_text)
