"""Skills and file tools wired into ``create_deep_agent``: who is offered what, and the trace.

The main agent and the general-purpose sub-agent share the main agent's skills; a custom
sub-agent is offered only the skills its spec names; a skill opened with ``read_file`` is a
``skill`` span named by the skill; files written by a sub-agent come back through ``files``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from nbagents import ScriptedChatModel, SubAgentMiddleware, create_deep_agent, load_subagents
from nbagents.backends import BackendProtocol, CompositeBackend, DiskBackend, StateBackend
from nbagents.display._viewmodel import build_view
from nbagents.models import call, delegate, parallel, say
from nbagents.tracing import Trace, recording


def write_skill(root: Path, name: str, description: str, body: str = "1. Do the thing.") -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8"
    )


THREAD: Any = {"configurable": {"thread_id": "t"}}


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    write_skill(tmp_path / "user", "web-research", "User web research.")
    write_skill(tmp_path / "user", "summarize", "Summarize a text in five bullets.")
    write_skill(tmp_path / "project", "web-research", "Research in three passes, citing sources.")
    (tmp_path / "project" / "broken").mkdir()
    (tmp_path / "project" / "broken" / "SKILL.md").write_text("no frontmatter here")
    write_skill(tmp_path / "review", "code-review", "Review a patch for bugs and tests.")
    return tmp_path


def backend_on(root: Path) -> Any:
    disk = DiskBackend(root)

    def backend(runtime: Any) -> BackendProtocol:
        return CompositeBackend(StateBackend(), {"/skills/": disk})

    return backend


SOURCES = ["/skills/user/", "/skills/project/"]
SUBAGENTS: list[Any] = [
    {
        "name": "reviewer",
        "description": "Reviews patches.",
        "system_prompt": "Review.",
        "skills": ["/skills/review/"],
    },
    {"name": "writer", "description": "Writes notes.", "system_prompt": "Write."},
]


def script() -> dict[str, Any]:
    return {
        "main": [
            call("read_file", file_path="/skills/project/web-research/SKILL.md"),
            parallel(
                delegate("Summarize the notes", "general-purpose"),
                delegate("Review the patch", "reviewer"),
                delegate("Write the note", "writer"),
            ),
            say("All done."),
        ],
        "general-purpose": [say("Summary.")],
        "reviewer": [
            call("read_file", file_path="/skills/review/code-review/SKILL.md"),
            say("Looks good."),
        ],
        "writer": [
            call("write_file", file_path="/notes/note.md", content="# Note\n"),
            say("Written."),
        ],
    }


def system_prompt_of(model_calls: Any, agent: str) -> str:
    return str(model_calls.of(agent)[0].messages[0].content)


async def test_main_and_general_purpose_share_skills_custom_agents_have_their_own(
    skills_dir: Path, run_agent: Any, model_calls: Any
) -> None:
    agent = create_deep_agent(
        ScriptedChatModel(script=script()),
        backend=backend_on(skills_dir),
        skills=SOURCES,
        subagents=SUBAGENTS,
        checkpointer=InMemorySaver(),
    )
    result = await run_agent(agent, {"messages": [HumanMessage("go")]}, THREAD)

    main = system_prompt_of(model_calls, "main")
    # The later source wins by name, the prompt lists paths, not bodies, and says how to read.
    assert "Research in three passes, citing sources." in main
    assert "User web research." not in main
    assert "/skills/project/web-research/SKILL.md" in main
    assert "/skills/user/summarize/SKILL.md" in main
    assert "1. Do the thing." not in main
    assert "read_file" in main
    assert "broken" in main  # the broken skill is a warning in the prompt, not a crash

    general = system_prompt_of(model_calls, "general-purpose")
    assert "/skills/project/web-research/SKILL.md" in general
    reviewer = system_prompt_of(model_calls, "reviewer")
    assert "/skills/review/code-review/SKILL.md" in reviewer
    assert "web-research" not in reviewer
    writer = system_prompt_of(model_calls, "writer")
    assert "SKILL.md" not in writer
    # Every built sub-agent has the file tools on the shared backend.
    for name in ("general-purpose", "reviewer", "writer"):
        assert {"ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep"} <= set(
            model_calls.of(name)[0].tools
        )

    assert "skills_metadata" not in result  # private, as in deepagents
    state = agent.get_state(THREAD).values
    assert [s["name"] for s in state["skills_metadata"]] == ["summarize", "web-research"]
    assert result["files"]["/notes/note.md"]["content"] == "# Note\n"
    # The reviewer's skill listing never reached the main agent's state.
    assert "code-review" not in str(state["skills_metadata"])


def traced_run(skills_dir: Path) -> Trace:
    """The trace of one run of the scripted agent with its skills and sub-agents."""
    agent = create_deep_agent(
        ScriptedChatModel(script=script()),
        backend=backend_on(skills_dir),
        skills=SOURCES,
        subagents=SUBAGENTS,
    )
    with recording() as tracer:
        agent.invoke({"messages": [HumanMessage("go")]})
    return tracer.trace


def test_the_trace_shows_offered_and_opened_skills_and_returned_files(skills_dir: Path) -> None:
    trace = traced_run(skills_dir)

    loads = [s for s in trace.spans if s.kind == "skill"]
    assert sorted((s.agent, s.name) for s in loads) == [
        ("main", "web-research"),
        ("reviewer", "code-review"),
    ]
    assert all(s.attributes["tool"] == "read_file" for s in loads)
    assert [s.name for s in trace.spans if s.typed_attributes() != s.attributes] == []
    assert not [s for s in trace.spans if s.kind == "tool" and s.name == "read_file"]

    agents = {s.name: s.attributes for s in trace.spans if s.kind in ("agent", "subagent")}
    assert agents["main"]["skills_offered"] == ["summarize", "web-research"]
    assert agents["main"]["skills_opened"] == ["web-research"]
    assert len(agents["main"]["skill_warnings"]) == 1
    assert "broken" in agents["main"]["skill_warnings"][0]
    assert agents["general-purpose"]["skills_offered"] == ["summarize", "web-research"]
    assert "skills_opened" not in agents["general-purpose"]
    assert agents["reviewer"]["skills_offered"] == ["code-review"]
    assert agents["reviewer"]["skills_opened"] == ["code-review"]
    assert "skills_offered" not in agents["writer"]

    writer = next(r for r in trace.subagents if r.type == "writer")
    assert writer.returned == ("files",)
    assert "files" in writer.passed
    assert {"skills_metadata", "skills_load_errors"} <= set(writer.withheld)

    view = build_view(trace)
    by_kind = [n for n in view["nodes"] if n["kind"] == "skill"]
    assert sorted(n["name"] for n in by_kind) == ["code-review", "web-research"]
    main_node = next(n for n in view["nodes"] if n["kind"] == "agent")
    fields = {f["label"]: f["value"] for f in main_node["details"]}
    assert fields["Skills offered"] == "summarize, web-research (opened)"
    assert "broken" in fields["Skill warnings"]
    html = trace.to_html()
    assert 'class="nba-kind">skill<' in html
    reloaded = type(trace).from_json(trace.to_json())
    assert [s.kind for s in reloaded.walk()] == [s.kind for s in trace.walk()]


def test_subagent_middleware_takes_deepagents_backend_form(skills_dir: Path) -> None:
    model = ScriptedChatModel(script={"reviewer": ["ok"]})
    spec: Any = {**SUBAGENTS[0], "model": model}
    middleware = SubAgentMiddleware(backend=backend_on(skills_dir), subagents=[spec])
    assert middleware.subagent_names == ["reviewer"]  # no default model: no general-purpose
    assert middleware.system_prompt is not None and "reviewer" in middleware.system_prompt

    with pytest.raises(ValueError, match=r"SubAgent 'writer' must specify 'model'.*default_model"):
        SubAgentMiddleware(backend=backend_on(skills_dir), subagents=[SUBAGENTS[1]])
    with pytest.raises(ValueError, match="general-purpose sub-agent runs on default_model"):
        SubAgentMiddleware(subagents=[spec], general_purpose_agent=True)


def test_skills_without_a_backend_or_of_the_wrong_shape_are_refused() -> None:
    model = ScriptedChatModel(script={"main": ["hi"]})
    with pytest.raises(ValueError, match=r"'reviewer' names skills \['/skills/review/'\].*backend"):
        create_deep_agent(model, subagents=SUBAGENTS)
    with pytest.raises(ValueError, match="'skills' must be a list of skill source directories"):
        create_deep_agent(
            model,
            backend=StateBackend,
            subagents=[{**SUBAGENTS[1], "skills": "/skills/a/"}],
        )
    with pytest.raises(ValueError, match="not one string"):
        create_deep_agent(model, skills="/skills/")  # type: ignore[arg-type]


def test_skills_in_the_state_backend_by_default() -> None:
    skill = "---\nname: notes\ndescription: Take notes.\n---\nx\n"
    model = ScriptedChatModel(script={"main": [say("ok")]})
    agent = create_deep_agent(model, skills=["/skills/"], checkpointer=InMemorySaver())
    seed = {"/skills/notes/SKILL.md": {"content": skill, "encoding": "utf-8"}}
    agent.invoke({"messages": [HumanMessage("go")], "files": seed}, THREAD)
    state = agent.get_state(THREAD).values
    assert [s["name"] for s in state["skills_metadata"]] == ["notes"]


def test_markdown_subagents_name_their_skills(tmp_path: Path) -> None:
    folder = tmp_path / "agents" / "reviewer"
    folder.mkdir(parents=True)
    (folder / "AGENTS.md").write_text(
        "---\nname: reviewer\ndescription: Reviews.\nskills: [/skills/review/]\n---\nReview.\n"
    )
    (tmp_path / "agents" / "critic").mkdir()
    (tmp_path / "agents" / "critic" / "AGENTS.md").write_text(
        "---\nname: critic\ndescription: Critiques.\nskills: /skills/critic/\n---\nCritique.\n"
    )
    specs = {s["name"]: s for s in load_subagents(tmp_path / "agents")}
    assert specs["reviewer"].get("skills") == ["/skills/review/"]
    assert specs["critic"].get("skills") == ["/skills/critic/"]


def test_a_transcript_shows_where_each_agent_loaded_a_skill(skills_dir: Path) -> None:
    trace = traced_run(skills_dir)

    main = trace.transcript()
    (load,) = [e for e in main.entries if e.skill]
    assert (load.kind, load.turn, load.skill) == ("tool", 1, "web-research")
    assert "Research in three passes, citing sources." in load.content  # what the agent read
    assert "loaded the skill `web-research`" in main.to_markdown()
    reviewer = trace.transcript(next(r for r in trace.subagents if r.type == "reviewer"))
    assert [(e.turn, e.skill) for e in reviewer.entries if e.skill] == [(1, "code-review")]
    writer = trace.transcript(next(r for r in trace.subagents if r.type == "writer"))
    assert not [e for e in writer.entries if e.skill]
    # and in the snapshot's conversation of the agent that loaded it
    assert "skill web-research loaded" in trace.to_html()
