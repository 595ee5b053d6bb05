"""The file tools through a real ``create_agent`` loop on the scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage

from nbagents import ScriptedChatModel
from nbagents.backends import (
    FILESYSTEM_PROMPT,
    AccessRule,
    CompositeBackend,
    DiskBackend,
    FilesystemMiddleware,
    StateBackend,
)
from nbagents.models import Turn, call, parallel, say


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def agent_with(turns: list[Turn | str], middleware: FilesystemMiddleware) -> Any:
    model = ScriptedChatModel(script={"main": turns})
    return create_agent(model, middleware=[middleware], name="main")


async def test_state_backend_write_lands_in_the_final_state(run_agent: Any) -> None:
    agent = agent_with(
        [
            call("write_file", file_path="/notes/plan.md", content="step one\nstep two"),
            call("edit_file", file_path="/notes/plan.md", old_string="two", new_string="2"),
            call("read_file", file_path="/notes/plan.md"),
            "done",
        ],
        FilesystemMiddleware(),
    )
    result = await run_agent(agent, {"messages": [HumanMessage("plan")]})
    record = result["files"]["/notes/plan.md"]
    assert record["content"] == "step one\nstep 2"
    assert record["encoding"] == "utf-8"
    wrote, edited, read = tool_messages(result)
    assert wrote.text == "Wrote /notes/plan.md (17 characters)."
    assert edited.text == "Replaced 1 occurrence in /notes/plan.md."
    assert read.text == "1  step one\n2  step 2"
    assert all(m.status == "success" for m in (wrote, edited, read))


async def test_parallel_writes_from_one_message_both_land(run_agent: Any) -> None:
    agent = agent_with(
        [
            parallel(
                call("write_file", file_path="/a.md", content="A"),
                call("write_file", file_path="/b.md", content="B"),
            ),
            "done",
        ],
        FilesystemMiddleware(),
    )
    start = {"messages": [HumanMessage("go")], "files": {"/old.md": _record("old")}}
    result = await run_agent(agent, start)
    assert {p: r["content"] for p, r in result["files"].items()} == {
        "/old.md": "old",
        "/a.md": "A",
        "/b.md": "B",
    }


def _record(content: str) -> dict[str, str]:
    return {
        "content": content,
        "encoding": "utf-8",
        "created_at": "2026-01-01T00:00:00+00:00",
        "modified_at": "2026-01-01T00:00:00+00:00",
    }


async def test_failures_are_error_results_and_the_run_goes_on(
    run_agent: Any, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("s")
    (tmp_path / "twice.txt").write_text("x x")
    (tmp_path / "blob.bin").write_bytes(b"\x00\xff")
    disk = DiskBackend(tmp_path, rules=[AccessRule.deny("/secret.txt")])
    agent = agent_with(
        [
            call("read_file", file_path="/missing.md"),
            call("read_file", file_path="/../etc/passwd"),
            call("read_file", file_path="/secret.txt"),
            call("edit_file", file_path="/twice.txt", old_string="x", new_string="y"),
            call("edit_file", file_path="/blob.bin", old_string="a", new_string="b"),
            call("grep", pattern="(oops"),
            call("read_file", file_path="/twice.txt", offset=5),
            call("read_file", file_path="/blob.bin"),
            "I give up",
        ],
        FilesystemMiddleware(backend=disk),
    )
    result = await run_agent(agent, {"messages": [HumanMessage("try")]})
    messages = tool_messages(result)
    errors = [(m.name, m.text) for m in messages if m.status == "error"]
    assert errors == [
        ("read_file", "Error: File '/missing.md' not found"),
        ("read_file", "Error: Path '/../etc/passwd' contains '..', which is not allowed."),
        ("read_file", "Error: Access denied: read of /secret.txt is not permitted."),
        (
            "edit_file",
            "Error: old_string appears 2 times in /twice.txt: include more surrounding lines to "
            "make it unique, or pass replace_all=true to replace every occurrence.",
        ),
        ("edit_file", "Error: /blob.bin is a binary file; it cannot be edited as text."),
        ("read_file", "Error: Line offset 5 exceeds file length (1 lines)"),
    ]
    # grep takes its pattern literally (as upstream's): no regex error to make.
    assert [m.text for m in messages if m.name == "grep"] == ["No matches found"]
    assert messages[-1].status == "success"
    assert messages[-1].text.startswith("/blob.bin is a binary file (2 bytes)")
    assert result["messages"][-1].text == "I give up"
    assert (tmp_path / "twice.txt").read_text() == "x x"


async def test_huge_files_are_paged_with_a_note(run_agent: Any) -> None:
    lines = "\n".join(f"line {n}" for n in range(1, 5001))
    agent = agent_with(
        [
            call("read_file", file_path="/big.txt"),
            call("read_file", file_path="/big.txt", offset=4998, limit=10),
            call("read_file", file_path="/wide.txt"),
            call("read_file", file_path="/heavy.txt"),
            call("read_file", file_path="/big.txt", limit=0),
            "ok",
        ],
        FilesystemMiddleware(),
    )
    start = {
        "messages": [HumanMessage("go")],
        "files": {
            "/big.txt": _record(lines),
            "/wide.txt": _record("w" * 5000),
            # 300 lines of 1,000 characters: over the 100,000 characters one read returns.
            "/heavy.txt": _record("\n".join("h" * 1000 for _ in range(300))),
        },
    }
    first, last, wide, heavy, nothing = tool_messages(await run_agent(agent, start))
    assert first.text.splitlines()[0] == "   1  line 1"
    assert first.text.endswith(
        "[Showing lines 1-2000 of 5000. To read more, call read_file with offset=2000.]"
    )
    assert last.text == "4999  line 4999\n5000  line 5000"
    assert wide.text.endswith("… [line cut at 2000 characters]")
    assert len(wide.text) < 2100
    assert heavy.text.endswith(
        "[Showing lines 1-99 of 300. To read more, call read_file with offset=99.]"
    )
    assert len(heavy.text) <= 100_200
    assert nothing.status == "success"
    assert nothing.text == (
        "No lines of /big.txt were read: `limit` was 0, so the file was not looked at. "
        "Call read_file with a limit of 1 or more to read it."
    )


async def test_listing_and_searching_a_composite_backend(run_agent: Any, tmp_path: Path) -> None:
    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "SKILL.md").write_text("---\nname: pdf\n---\nExtract text.\n")

    backend = CompositeBackend(StateBackend(), {"/skills/": DiskBackend(tmp_path)})

    agent = agent_with(
        [
            call("write_file", file_path="/notes/a.md", content="Extract later"),
            call("ls", path="/"),
            call("glob", pattern="**/*.md"),
            call("grep", pattern="Extract", output_mode="content"),
            call("glob", pattern="*.txt"),
            call("grep", pattern="Extract"),
            call("grep", pattern="e", output_mode="count"),
            "ok",
        ],
        FilesystemMiddleware(backend=backend),
    )
    result = await run_agent(agent, {"messages": [HumanMessage("go")]})
    _, ls, glob, grep, nothing, files, counts = (m.text for m in tool_messages(result))
    assert ls == "/notes/\n/skills/"
    assert glob == "/notes/a.md\n/skills/pdf/SKILL.md"
    assert grep == "/notes/a.md:1: Extract later\n/skills/pdf/SKILL.md:4: Extract text."
    assert nothing == "No files found"
    assert files == "/notes/a.md\n/skills/pdf/SKILL.md"  # the default output_mode
    assert counts == "/notes/a.md: 1\n/skills/pdf/SKILL.md: 2"
    assert list(result["files"]) == ["/notes/a.md"]


async def test_the_prompt_section_keeps_content_blocks(model_calls: Any) -> None:
    model = ScriptedChatModel(script={"main": [say("hi")]})
    system = SystemMessage(
        content=[{"type": "text", "text": "Base.", "cache_control": {"type": "x"}}]
    )
    agent = create_agent(
        model, system_prompt=system, middleware=[FilesystemMiddleware()], name="main"
    )
    agent.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [model_calls]})
    (sent,) = model_calls.of("main")
    assert sent.tools == ["ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep"]
    assert sent.messages[0].content == [
        {"type": "text", "text": "Base.", "cache_control": {"type": "x"}},
        {"type": "text", "text": FILESYSTEM_PROMPT},
    ]


@pytest.mark.parametrize("prompt", [None, "Custom."])
def test_the_prompt_section_can_be_replaced_or_dropped(
    model_calls: Any, prompt: str | None
) -> None:
    model = ScriptedChatModel(script={"main": [say("hi")]})
    agent = create_agent(
        model,
        system_prompt="Base.",
        middleware=[FilesystemMiddleware(system_prompt=prompt)],
        name="main",
    )
    agent.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [model_calls]})
    (sent,) = model_calls.of("main")
    assert sent.messages[0].content == ("Base." if prompt is None else "Base.\n\nCustom.")


async def test_parallel_subagents_writing_different_files_both_land(run_agent: Any) -> None:
    from nbagents import create_deep_agent
    from nbagents.models import delegate

    writer = {
        "name": "writer",
        "description": "Writes.",
        "system_prompt": "Write.",
        "middleware": [FilesystemMiddleware()],
    }
    model = ScriptedChatModel(
        script={
            "main": [parallel(delegate("a", "writer"), delegate("b", "writer")), "ok"],
            "writer": {
                # The second sibling leaves /old.md alone: were it to send back its whole
                # `files`, its stale copy would undo the first sibling's edit.
                "a": [
                    call("edit_file", file_path="/old.md", old_string="old", new_string="new"),
                    call("write_file", file_path="/a.md", content="A"),
                    "done",
                ],
                "b": [call("write_file", file_path="/b.md", content="B"), "done"],
            },
        }
    )
    agent = create_deep_agent(model, subagents=[writer], middleware=[FilesystemMiddleware()])
    start = {"messages": [HumanMessage("go")], "files": {"/old.md": _record("old")}}
    result = await run_agent(agent, start)
    assert {p: r["content"] for p, r in result["files"].items()} == {
        "/old.md": "new",
        "/a.md": "A",
        "/b.md": "B",
    }
