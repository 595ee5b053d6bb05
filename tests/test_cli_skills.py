"""``nbagents skills list|create|info`` run as a real command (``python -m nbagents``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nbagents.skills import parse_skill

pytestmark = pytest.mark.slow  # each test runs the command, a fresh Python process

REPO = Path(__file__).resolve().parents[1]


class Shell:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        (self.project / ".git").mkdir(parents=True)
        (self.project / "src").mkdir()
        self.home.mkdir()
        self.user_skills = self.home / ".nbagents" / "skills"
        self.project_skills = self.project / ".nbagents" / "skills"

    def run(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        environment = {
            key: value for key, value in os.environ.items() if key != "NBAGENTS_SKILLS_HOME"
        }
        environment |= {"HOME": str(self.home), "PYTHONPATH": str(REPO), **(env or {})}
        return subprocess.run(
            [sys.executable, "-m", "nbagents", *args],
            cwd=self.project / "src",
            env=environment,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def skill(self, base: Path, name: str, description: str) -> None:
        (base / name).mkdir(parents=True)
        (base / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"
        )


@pytest.fixture
def shell(tmp_path: Path) -> Shell:
    return Shell(tmp_path)


def test_create_writes_a_valid_template_in_the_user_dir(shell: Shell) -> None:
    done = shell.run("skills", "create", "pdf-tools")
    assert done.returncode == 0, done.stderr
    path = shell.user_skills / "pdf-tools" / "SKILL.md"
    assert f"Created skill 'pdf-tools' at {path}" in done.stdout
    skill, warnings = parse_skill(path.read_text(), folder="pdf-tools", path=str(path))
    assert skill["name"] == "pdf-tools" and warnings == []
    assert "## Steps" in path.read_text()


def test_create_in_the_project_found_from_a_subdirectory(shell: Shell) -> None:
    done = shell.run("skills", "create", "notes", "--project")
    assert done.returncode == 0, done.stderr
    assert (shell.project_skills / "notes" / "SKILL.md").is_file()


@pytest.mark.parametrize("name", ["Bad_Name", "-lead", "double--hyphen", "x" * 65])
def test_create_refuses_bad_names(shell: Shell, name: str) -> None:
    # "--" ends the options, so a name starting with "-" reaches the command.
    done = shell.run("skills", "create", "--", name)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("nbagents skills: error: invalid skill name:")
    assert not shell.user_skills.exists()


def test_create_refuses_an_existing_skill(shell: Shell) -> None:
    shell.skill(shell.user_skills, "pdf", "Mine.")
    done = shell.run("skills", "create", "pdf")
    assert done.returncode == 1
    assert "already exists" in done.stderr
    assert "Mine." in (shell.user_skills / "pdf" / "SKILL.md").read_text()


def test_list_shows_sources_overrides_and_warnings(shell: Shell) -> None:
    shell.skill(shell.user_skills, "pdf", "User PDF.")
    shell.skill(shell.user_skills, "web-research", "Research the web.")
    shell.skill(shell.project_skills, "pdf", "Project PDF.")
    (shell.project_skills / "broken").mkdir()
    (shell.project_skills / "broken" / "SKILL.md").write_text("---\nname: [\n---\n")
    done = shell.run("skills", "list")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"User skills: {shell.user_skills}",
        f"Project skills: {shell.project_skills}",
        "",
        "pdf           project  Project PDF.  [overrides user]",
        "web-research  user     Research the web.",
    ]
    assert done.stderr.startswith(
        f"warning: {shell.project_skills / 'broken' / 'SKILL.md'}: frontmatter is not valid YAML"
    )
    assert done.stderr.rstrip().endswith("(skill skipped)")

    only_project = shell.run("skills", "list", "--project")
    assert "web-research" not in only_project.stdout
    assert "pdf  project  Project PDF." in only_project.stdout.splitlines()


def test_user_dir_from_the_option_and_the_environment(shell: Shell, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    shell.skill(elsewhere, "memo", "Memos.")
    by_env = shell.run("skills", "list", "--user", env={"NBAGENTS_SKILLS_HOME": str(elsewhere)})
    by_option = shell.run("skills", "list", "--user", "--user-dir", str(elsewhere))
    for done in (by_env, by_option):
        assert done.returncode == 0
        assert f"User skills: {elsewhere}" in done.stdout
        assert "memo  user     Memos." in done.stdout
    empty = shell.run("skills", "list", "--user")
    assert "does not exist" in empty.stdout and "No skills found." in empty.stdout


def test_info_shows_path_description_files_and_skill_md(shell: Shell) -> None:
    shell.skill(shell.user_skills, "pdf", "User PDF.")
    shell.skill(shell.project_skills, "pdf", "Project PDF.")
    (shell.project_skills / "pdf" / "scripts").mkdir()
    (shell.project_skills / "pdf" / "scripts" / "extract.py").write_text("print()\n")
    done = shell.run("skills", "info", "pdf")
    assert done.returncode == 0, done.stderr
    path = shell.project_skills / "pdf" / "SKILL.md"
    assert done.stdout.splitlines()[:7] == [
        "Name:        pdf",
        "Source:      project (overrides user)",
        f"Path:        {path}",
        "Description: Project PDF.",
        "Files:",
        "  SKILL.md",
        "  scripts/extract.py",
    ]
    assert done.stdout.endswith("--- SKILL.md ---\n" + path.read_text())
    user_only = shell.run("skills", "info", "pdf", "--user")
    assert "Description: User PDF." in user_only.stdout


def test_info_of_missing_broken_or_invalid_names(shell: Shell) -> None:
    (shell.user_skills / "broken").mkdir(parents=True)
    (shell.user_skills / "broken" / "SKILL.md").write_text("no frontmatter\n")
    missing = shell.run("skills", "info", "nothing")
    assert missing.returncode == 1 and missing.stdout == ""
    assert "no skill named 'nothing' (looked in" in missing.stderr
    broken = shell.run("skills", "info", "broken")
    assert broken.returncode == 1
    assert (
        "skill 'broken'" in broken.stderr
        and "cannot be loaded: SKILL.md must start" in broken.stderr
    )
    invalid = shell.run("skills", "info", "Not/A/Name")
    assert invalid.returncode == 1 and "invalid skill name" in invalid.stderr


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("skills",),
        ("skills", "list", "--bogus"),
        ("skills", "create"),
        ("nope",),
        ("skills", "list", "--project", "--user"),
    ],
)
def test_usage_errors_exit_2(shell: Shell, args: tuple[str, ...]) -> None:
    done = shell.run(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "usage: nbagents" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("skills", "--help"),
        ("skills", "list", "--help"),
        ("skills", "create", "--help"),
        ("skills", "info", "--help"),
    ],
)
def test_help_on_every_command(shell: Shell, args: tuple[str, ...]) -> None:
    done = shell.run(*args)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: nbagents")
