"""The built-in ``skill-creator`` skill: shipped valid, one template with ``nbagents skills
create``, one check with discovery, and an agent that follows it makes a skill the next run is
offered."""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents._cli import main as nbagents_cli
from nbagents.backends import BackendProtocol, CompositeBackend, DiskBackend, StateBackend
from nbagents.models import Turn, call, say
from nbagents.skills import (
    BUILT_IN_SKILLS_DIR,
    BUILT_IN_SKILLS_SOURCE,
    CHECK_SKILL_TOOL,
    SKILL_CREATOR,
    SKILL_TEMPLATE_FILE,
    SkillSource,
    acheck_skill,
    built_in_skills_backend,
    check_skill,
    check_skill_tool,
    cli,
    discover_skill_dirs,
    discover_skills,
    skill_template,
)

CREATOR_MD = f"{BUILT_IN_SKILLS_SOURCE}{SKILL_CREATOR}/SKILL.md"
USER = "/skills/user/"
TEMPLATE_DESCRIPTION = re.compile(r"^description: .*$", re.MULTILINE)
DESCRIPTION = "Turn a CSV file into a one-page report of its columns. Use when given a CSV."


def backend_with_creator(user_dir: Path) -> CompositeBackend:
    """What the docs tell a user to build: skill-creator mounted read-only beside their own."""
    return CompositeBackend(
        StateBackend(),
        {BUILT_IN_SKILLS_SOURCE: built_in_skills_backend(), USER: DiskBackend(user_dir)},
    )


def agent_on(backend: BackendProtocol, model: ScriptedChatModel) -> Any:
    return create_deep_agent(
        model,
        backend=backend,
        skills=[BUILT_IN_SKILLS_SOURCE, USER],
        tools=[check_skill_tool(backend)],
    )


# -- what ships --------------------------------------------------------------------------------


def test_the_shipped_skill_creator_passes_the_check_and_discovery() -> None:
    check = check_skill(built_in_skills_backend(), f"/{SKILL_CREATOR}")
    assert check.ok and check.warnings == []
    assert check.skill is not None and check.skill["name"] == SKILL_CREATOR

    found = discover_skill_dirs([("built-in", BUILT_IN_SKILLS_DIR)])
    assert [s["name"] for s in found.skills] == [SKILL_CREATOR]
    assert found.warnings == []
    assert SkillSource(BUILT_IN_SKILLS_SOURCE).name == "Built-in"

    # What its steps name exists: the template it points to, and the tool it calls.
    text = (BUILT_IN_SKILLS_DIR / SKILL_CREATOR / "SKILL.md").read_text(encoding="utf-8")
    template = SKILL_TEMPLATE_FILE.relative_to(BUILT_IN_SKILLS_DIR / SKILL_CREATOR).as_posix()
    assert f"`{template}`" in text
    assert SKILL_TEMPLATE_FILE.is_file()
    assert f"`{CHECK_SKILL_TOOL}`" in text
    assert "nbagents skills create" in text and "nbagents skills info" in text


def test_the_built_in_skills_are_read_only() -> None:
    disk = built_in_skills_backend()
    assert disk.write(f"/{SKILL_CREATOR}/notes.md", "x").error is not None
    assert disk.edit(f"/{SKILL_CREATOR}/SKILL.md", "Skill creator", "Other").error is not None
    assert disk.read(f"/{SKILL_CREATOR}/SKILL.md").error is None


def test_the_cli_creates_skills_from_the_template_skill_creator_ships(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert nbagents_cli(["skills", "create", "pdf-tools", "--user-dir", str(tmp_path)]) == 0
    written = (tmp_path / "pdf-tools" / "SKILL.md").read_text(encoding="utf-8")
    shipped = SKILL_TEMPLATE_FILE.read_text(encoding="utf-8")
    assert written == skill_template("pdf-tools")
    assert written == shipped.replace("{name}", "pdf-tools").replace("{title}", "Pdf tools")
    assert "{" not in written
    # One copy of the template: the CLI's module holds none of its text.
    assert "## When to use" in shipped and "## When to use" not in inspect.getsource(cli)
    # The template is a valid skill as written, and `info` shows it without a warning.
    assert check_skill(DiskBackend(tmp_path), "/pdf-tools").warnings == []
    assert nbagents_cli(["skills", "info", "pdf-tools", "--user-dir", str(tmp_path)]) == 0
    assert "Warning" not in capsys.readouterr().out
    with pytest.raises(ValueError, match="invalid skill name"):
        skill_template("PDF_tools")


# -- one check: check_skill judges a folder as discovery does ------------------------------------


def write(root: Path, folder: str, text: str | bytes) -> None:
    (root / folder).mkdir(parents=True)
    path = root / folder / "SKILL.md"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A source of valid, half-valid and broken skills."""
    write(tmp_path, "good", "---\nname: good\ndescription: Fine.\n---\nBody.\n")
    write(tmp_path, "noted", "---\nname: noted\ndescription: Ok.\ncolour: red\n---\n")
    write(tmp_path, "renamed", "---\nname: other\ndescription: Wrong folder.\n---\n")
    write(tmp_path, "no-yaml", "Just text.\n")
    write(tmp_path, "binary", b"---\nname: binary\x00\n---\n")
    write(tmp_path, "bad-yaml", "---\nname: bad-yaml\ndescription: a: b: c\n---\n")
    (tmp_path / "empty").mkdir()
    return tmp_path


async def test_check_skill_agrees_with_discovery_on_every_folder(mixed: Path) -> None:
    disk = DiskBackend(mixed)
    found = discover_skills(disk, [SkillSource("/", "Project")])
    loaded = {s["path"] for s in found.skills}
    folders = sorted(p.name for p in mixed.iterdir())
    # Two load (one with an ignored key); every folder but `good` has one warning.
    assert len(loaded) == 2 and len(found.warnings) == len(folders) - 1

    for folder in folders:
        check = check_skill(disk, f"/{folder}/")
        assert check == await acheck_skill(disk, f"/{folder}/SKILL.md")
        assert check.ok == (check.path in loaded), folder
        ours = [(w["message"], w["skipped"]) for w in check.warnings]
        theirs = [(w["message"], w["skipped"]) for w in found.warnings if w["path"] == check.path]
        assert ours == theirs, folder
    assert "must equal its folder's name" in check_skill(disk, "/renamed").warnings[0]["message"]


@pytest.mark.parametrize("path", ["/", "", "skills/user/pdf-tools", "/SKILL.md"])
def test_check_skill_refuses_a_path_that_names_no_folder(path: str) -> None:
    with pytest.raises(ValueError, match="is not a skill folder"):
        check_skill(StateBackend(), path)


def test_the_tool_answers_the_verdict(mixed: Path) -> None:
    tool = check_skill_tool(CompositeBackend(StateBackend(), {USER: DiskBackend(mixed)}))

    def run(path: str) -> ToolMessage:
        runtime = ToolRuntime(
            state={"messages": []},
            context=None,
            config={},
            stream_writer=lambda _: None,
            tool_call_id="call_1",
            store=None,
        )
        answer = tool.invoke({"path": path, "runtime": runtime})
        assert isinstance(answer, ToolMessage) and answer.tool_call_id == "call_1"
        return answer

    good = run(f"{USER}good")
    assert good.status == "success"
    assert "is a valid skill" in good.text and f"sources include {USER}" in good.text
    assert f"- **good**: Fine.\n  Read `{USER}good/SKILL.md`" in good.text
    noted = run(f"{USER}noted")
    assert noted.status == "success" and "unknown frontmatter keys ignored: colour" in noted.text
    renamed = run(f"{USER}renamed/SKILL.md")
    assert renamed.status == "error"
    assert renamed.text.startswith(f"Error: {USER}renamed/SKILL.md is not a valid skill: name")
    missing = run(f"{USER}absent")
    assert missing.status == "error" and "has no SKILL.md" in missing.text
    assert run("relative/path").status == "error"


# -- an agent makes a skill with skill-creator; the next run is offered it ------------------------


def numbered(read: str) -> str:
    """A file's text from ``read_file``'s numbered lines."""
    return "\n".join(re.sub(r"^ *\d+  ", "", row) for row in read.splitlines()) + "\n"


def follow_skill_creator(agent: str, messages: list[BaseMessage]) -> Turn:
    """A model that follows skill-creator's steps, each from what the agent has read so far."""
    turn = sum(isinstance(m, AIMessage) for m in messages)
    last = messages[-1].text if isinstance(messages[-1], ToolMessage) else ""
    if turn == 0:
        # The skill is found in the prompt's listing, as a real model would find it.
        (creator,) = re.findall(r"Read `(\S+/skill-creator/SKILL\.md)`", messages[0].text)
        return call("read_file", file_path=creator)
    if turn == 1:
        assert "# Skill creator" in last
        (asset,) = set(re.findall(r"`(assets/[\w.-]+)`", last))
        return call("read_file", file_path=CREATOR_MD.replace("SKILL.md", asset))
    if turn == 2:
        return call("ls", path=USER)
    if turn == 3:
        assert "csv-report" not in last  # no folder of that name yet
        template = numbered(next(m.text for m in messages if "name: {name}" in m.text))
        text = template.replace("{name}", "csv-report").replace("{title}", "Csv report")
        text = TEMPLATE_DESCRIPTION.sub(f"description: {DESCRIPTION}", text, count=1)
        return call("write_file", file_path=f"{USER}csv-report/SKILL.md", content=text)
    if turn == 4:
        return call(CHECK_SKILL_TOOL, path=f"{USER}csv-report")
    assert "is a valid skill" in last
    return say(f"Created the skill csv-report at {USER}csv-report/SKILL.md.")


async def test_an_agent_makes_a_skill_with_skill_creator_and_the_next_run_is_offered_it(
    tmp_path: Path, run_agent: Any, model_calls: Any
) -> None:
    user_dir = tmp_path / "user"
    user_dir.mkdir()
    backend = backend_with_creator(user_dir)
    maker = agent_on(backend, ScriptedChatModel(responder=follow_skill_creator))
    ask = HumanMessage("Make me a skill that turns a CSV file into a report.")
    result = await run_agent(maker, {"messages": [ask]})

    first = str(model_calls.of("main")[0].messages[0].content)
    assert f"- **{SKILL_CREATOR}**:" in first and f"Read `{CREATOR_MD}`" in first
    assert "csv-report" not in first
    assert CHECK_SKILL_TOOL in model_calls.of("main")[0].tools
    tools = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in tools] == ["read_file", "read_file", "ls", "write_file", "check_skill"]
    assert all(m.status == "success" for m in tools), [m.text for m in tools]

    # On disk: the CLI's template, its description filled in; it lives outside the conversation.
    written = (user_dir / "csv-report" / "SKILL.md").read_text(encoding="utf-8")
    expected = TEMPLATE_DESCRIPTION.sub(
        f"description: {DESCRIPTION}", skill_template("csv-report"), count=1
    )
    assert written == expected

    calls_before = len(model_calls.of("main"))
    nxt = agent_on(backend_with_creator(user_dir), ScriptedChatModel(script={"main": ["Ready."]}))
    await run_agent(nxt, {"messages": [HumanMessage("What skills do you have?")]})
    offered = str(model_calls.of("main")[calls_before].messages[0].content)
    assert f"- **csv-report**: {DESCRIPTION}" in offered
    assert f"Read `{USER}csv-report/SKILL.md`" in offered
    assert f"- **{SKILL_CREATOR}**:" in offered
    assert "could not be loaded" not in offered and "skill_load_problems" not in offered


async def test_a_broken_skill_is_caught_by_the_check_and_fixed_before_the_next_run(
    tmp_path: Path, run_agent: Any, model_calls: Any
) -> None:
    user_dir = tmp_path / "user"
    user_dir.mkdir()
    path = f"{USER}csv-report/SKILL.md"
    wrong = skill_template("csv-report").replace("name: csv-report", "name: csv_report")
    model = ScriptedChatModel(
        script={
            "main": [
                call("write_file", file_path=path, content=wrong),
                call(CHECK_SKILL_TOOL, path=path),
                call("edit_file", file_path=path, old_string="csv_report", new_string="csv-report"),
                call(CHECK_SKILL_TOOL, path=path),
                say("Fixed."),
            ]
        }
    )
    agent = agent_on(backend_with_creator(user_dir), model)
    result = await run_agent(agent, {"messages": [HumanMessage("Make a CSV report skill.")]})
    checks = [m for m in result["messages"] if getattr(m, "name", "") == CHECK_SKILL_TOOL]
    assert [m.status for m in checks] == ["error", "success"]
    assert "lowercase letters, digits and single hyphens" in checks[0].text

    found = discover_skills(backend_with_creator(user_dir), [BUILT_IN_SKILLS_SOURCE, USER])
    assert [s["name"] for s in found.skills] == ["csv-report", SKILL_CREATOR]
    assert found.warnings == []


# -- the wheel ships it -----------------------------------------------------------------------


@pytest.mark.install
def test_the_wheel_ships_the_built_in_skills(tmp_path: Path) -> None:
    """Built from a copy with setuptools' PEP 517 hook, as any installer builds it."""
    repo = Path(__file__).resolve().parent.parent
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(repo / name, source / name)
    for package in ("nbagents", "pytest_nbagents"):
        shutil.copytree(
            repo / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    out = tmp_path / "dist"
    build = "import sys; from setuptools import build_meta; build_meta.build_wheel(sys.argv[1])"
    subprocess.run(
        [sys.executable, "-c", build, str(out)],
        cwd=source,
        capture_output=True,
        check=True,
        timeout=300,
    )
    (wheel,) = out.glob("*.whl")
    shipped = {
        p.relative_to(repo).as_posix() for p in BUILT_IN_SKILLS_DIR.rglob("*") if p.is_file()
    }
    assert f"nbagents/skills/built_in_skills/{SKILL_CREATOR}/SKILL.md" in shipped
    assert SKILL_TEMPLATE_FILE.relative_to(repo).as_posix() in shipped
    with zipfile.ZipFile(wheel) as archive:
        assert shipped <= set(archive.namelist())
