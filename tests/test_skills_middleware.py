"""SkillsMiddleware in a real agent: discovery into state, prompt listing, reading a skill."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage

from nbagents import ScriptedChatModel
from nbagents.backends import CompositeBackend, DiskBackend, FilesystemMiddleware, StateBackend
from nbagents.models import call
from nbagents.skills import (
    SKILLS_METADATA_KEY,
    SKILLS_PROMPT_SECTION,
    SKILLS_WARNINGS_KEY,
    SkillsMiddleware,
    SkillSource,
    skills_section,
)


def write_skill(root: Path, name: str, description: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n1. Do the thing.\n"
    )


def system_text(call_: Any) -> str:
    return str(call_.messages[0].content)


def test_prompt_lists_skills_and_the_agent_reads_one(tmp_path: Path, model_calls: Any) -> None:
    write_skill(tmp_path / "user", "web-research", "Structured web research.")
    write_skill(tmp_path / "user", "pdf", "User PDF handling.")
    write_skill(tmp_path / "project", "pdf", "Project PDF handling.")
    (tmp_path / "project" / "broken").mkdir()
    (tmp_path / "project" / "broken" / "SKILL.md").write_text("no frontmatter")
    disk = DiskBackend(tmp_path)

    def backend(runtime: Any) -> CompositeBackend:
        return CompositeBackend(StateBackend(), {"/skills/": disk})

    skills = SkillsMiddleware(
        backend,
        sources=[SkillSource("/skills/user", "user"), SkillSource("/skills/project", "project")],
    )
    model = ScriptedChatModel(
        script={"main": [call("read_file", file_path="/skills/project/pdf/SKILL.md"), "done"]}
    )
    agent = create_agent(
        model,
        system_prompt="Base.",
        middleware=[FilesystemMiddleware(backend=backend), skills],
        name="main",
    )
    result = agent.invoke(
        {"messages": [HumanMessage("read the pdf")]}, {"callbacks": [model_calls]}
    )

    assert [(s["name"], s["source"]) for s in result[SKILLS_METADATA_KEY]] == [
        ("pdf", "project"),
        ("web-research", "user"),
    ]
    (warning,) = result[SKILLS_WARNINGS_KEY]
    assert warning["path"] == "/skills/project/broken/SKILL.md" and warning["skipped"]
    first = system_text(model_calls.of("main")[0])
    assert first.startswith("Base.\n\n## Files")
    section = first[first.index("## Skills") :]
    assert "- **pdf**: Project PDF handling.\n  Read `/skills/project/pdf/SKILL.md`" in section
    assert "- **web-research**: Structured web research." in section
    assert "User PDF handling." not in section
    assert "Do the thing" not in section  # only metadata, never the body
    assert "`read_file`" in section
    assert (
        "These skills could not be loaded and are not available:\n"
        "- `/skills/project/broken/SKILL.md`: SKILL.md must start with a '---' line"
    ) in section
    read = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert "1. Do the thing." in read.text


async def test_discovery_runs_once_and_respects_existing_state(
    tmp_path: Path, run_agent: Any
) -> None:
    write_skill(tmp_path, "pdf", "PDF.")

    class CountingDisk(DiskBackend):
        listings = 0

        def ls(self, path: str) -> Any:
            CountingDisk.listings += 1
            return super().ls(path)

    skills = SkillsMiddleware(CountingDisk(tmp_path), sources=["/"])
    model = ScriptedChatModel(script={"main": [call("ls"), call("ls"), "done"]})
    agent = create_agent(
        model,
        middleware=[FilesystemMiddleware(backend=CountingDisk(tmp_path)), skills],
        name="main",
    )
    result = await run_agent(agent, {"messages": [HumanMessage("go")]})
    # One listing for discovery, two for the ls calls, none for the later model calls.
    assert CountingDisk.listings == 3
    assert [s["name"] for s in result[SKILLS_METADATA_KEY]] == ["pdf"]

    given = [{"name": "given", "description": "Given.", "path": "/given/SKILL.md", "source": "x"}]
    model = ScriptedChatModel(script={"main": ["done"]})
    agent = create_agent(model, middleware=[skills], name="main")
    result = await run_agent(agent, {"messages": [HumanMessage("go")], SKILLS_METADATA_KEY: given})
    assert result[SKILLS_METADATA_KEY] == given
    assert CountingDisk.listings == 3


async def test_skills_in_the_state_backend(run_agent: Any, model_calls: Any) -> None:
    memo = {"content": "---\nname: memo\ndescription: Memos.\n---\n", "encoding": "utf-8"}
    model = ScriptedChatModel(script={"main": ["done"]})
    agent = create_agent(
        model,
        middleware=[
            FilesystemMiddleware(),
            SkillsMiddleware(StateBackend(), sources=["/skills"]),
        ],
        name="main",
    )
    result = await run_agent(
        agent, {"messages": [HumanMessage("go")], "files": {"/skills/memo/SKILL.md": memo}}
    )
    assert [s["path"] for s in result[SKILLS_METADATA_KEY]] == ["/skills/memo/SKILL.md"]
    assert result[SKILLS_WARNINGS_KEY] == []
    assert "- **memo**: Memos." in system_text(model_calls.of("main")[0])


def test_no_skills_says_so(model_calls: Any, tmp_path: Path) -> None:
    model = ScriptedChatModel(script={"main": ["done"]})
    agent = create_agent(
        model, middleware=[SkillsMiddleware(DiskBackend(tmp_path), sources=["/"])], name="main"
    )
    agent.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [model_calls]})
    assert system_text(model_calls.of("main")[0]) == SKILLS_PROMPT_SECTION.format(
        skills_list="No skills are available.", warnings=""
    )


def test_a_single_string_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="list of paths"):
        SkillsMiddleware(DiskBackend(tmp_path), sources="/skills")


def test_the_listing_keeps_one_line_per_skill() -> None:
    skill = {
        "name": "pdf",
        "description": "Reads PDFs.\n\nAlso  tables.",
        "path": "/p/SKILL.md",
        "source": "u",
    }
    section = skills_section([skill])  # type: ignore[list-item]
    assert (
        "- **pdf**: Reads PDFs. Also tables.\n  Read `/p/SKILL.md` for its instructions." in section
    )
    assert section.endswith("for its instructions.")


def test_deepagents_path_label_sources_are_read_with_their_label(
    tmp_path: Path, model_calls: Any
) -> None:
    write_skill(tmp_path / "user", "pdf", "User PDF.")
    write_skill(tmp_path / "project", "pdf", "Project PDF.")
    skills = SkillsMiddleware(
        DiskBackend(tmp_path), sources=[("/user", "User"), ("/project", "Project")]
    )
    model = ScriptedChatModel(script={"main": ["done"]})
    agent = create_agent(model, middleware=[skills], name="main")
    result = agent.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [model_calls]})
    (skill,) = result[SKILLS_METADATA_KEY]
    assert (skill["source"], skill["description"]) == ("Project", "Project PDF.")


def test_no_system_prompt_adds_no_section(tmp_path: Path, model_calls: Any) -> None:
    write_skill(tmp_path, "pdf", "PDFs.")
    skills = SkillsMiddleware(DiskBackend(tmp_path), sources=["/"], system_prompt=None)
    model = ScriptedChatModel(script={"main": ["done"]})
    agent = create_agent(model, system_prompt="Base.", middleware=[skills], name="main")
    result = agent.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [model_calls]})
    assert system_text(model_calls.of("main")[0]) == "Base."
    assert [s["name"] for s in result[SKILLS_METADATA_KEY]] == ["pdf"]


def test_an_upstream_style_template_is_filled(tmp_path: Path, model_calls: Any) -> None:
    write_skill(tmp_path / "team", "pdf", "PDFs.")
    template = "Skills in:\n{skills_locations}\n\n{skills_list}{skills_load_warnings}"
    skills = SkillsMiddleware(
        DiskBackend(tmp_path), sources=[("/team", "Team")], system_prompt=template
    )
    model = ScriptedChatModel(script={"main": ["done"]})
    agent = create_agent(model, middleware=[skills], name="main")
    agent.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [model_calls]})
    text = system_text(model_calls.of("main")[0])
    assert text.startswith("Skills in:\n- Team: `/team`\n\n- **pdf**: PDFs.")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"system_prompt": "no list here"}, ValueError, r"\{skills_list\}"),
        ({"system_prompt": "{skills_list} {oops}"}, ValueError, "cannot be filled"),
        ({"sources": [("/a",)]}, TypeError, r"\(path, label\) pair"),
        ({"sources": [3]}, TypeError, "skill source"),
    ],
)
def test_bad_templates_and_sources_fail_at_construction(
    tmp_path: Path, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"sources": ["/"], **kwargs}
    with pytest.raises(error, match=message):
        SkillsMiddleware(DiskBackend(tmp_path), **arguments)
