"""Discovering skills on backends and in directories: sources, overrides, warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.backend_kit import in_graph, record

from nbagents.backends import AccessRule, CompositeBackend, DiskBackend, StateBackend
from nbagents.skills import SkillSource, discover_skill_dirs, discover_skills


def write_skill(
    root: Path, name: str, description: str = "Does things.", folder: str | None = None
) -> Path:
    directory = root / (folder or name)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\nSteps.\n"
    )
    return directory


def test_later_sources_override_earlier_ones_by_name(tmp_path: Path) -> None:
    write_skill(tmp_path / "user", "pdf", "User PDF.")
    write_skill(tmp_path / "user", "notes", "User notes.")
    write_skill(tmp_path / "project", "pdf", "Project PDF.")
    found = discover_skills(
        DiskBackend(tmp_path),
        [SkillSource("/user", "user"), SkillSource("/project", "project")],
    )
    assert [(s["name"], found.source_of(s), s["description"], s["path"]) for s in found.skills] == [
        ("notes", "user", "User notes.", "/user/notes/SKILL.md"),
        ("pdf", "project", "Project PDF.", "/project/pdf/SKILL.md"),
    ]
    assert [(s["name"], found.source_of(s)) for s in found.overridden] == [("pdf", "user")]
    # Reversed order, reversed winner; a source given as a path is labelled after its folder.
    found = discover_skills(DiskBackend(tmp_path), ["/project", "/user"])
    pdf = found.get("pdf")
    assert pdf is not None and found.source_of(pdf) == "User"


def test_broken_skills_are_warnings_and_the_rest_load(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "good")
    write_skill(root, "other-name", folder="mismatch")
    (root / "empty").mkdir()
    (root / "binary").mkdir()
    (root / "binary" / "SKILL.md").write_bytes(b"\x00\x01")
    (root / "yaml").mkdir()
    (root / "yaml" / "SKILL.md").write_text("---\nname: [\n---\n")
    write_skill(root, "odd")
    (root / "odd" / "SKILL.md").write_text("---\nname: odd\ndescription: d\nextra: 1\n---\n")
    (root / "README.md").write_text("not a skill folder")
    found = discover_skills(DiskBackend(root), ["/"])
    assert [s["name"] for s in found.skills] == ["good", "odd"]
    assert [(w["path"], w["skipped"], w["message"][:40]) for w in found.warnings] == [
        ("/binary/SKILL.md", True, "SKILL.md is not UTF-8 text"),
        ("/empty/SKILL.md", True, "folder 'empty' has no SKILL.md"),
        ("/mismatch/SKILL.md", True, "name 'other-name' must equal its folder'"),
        ("/odd/SKILL.md", False, "unknown frontmatter keys ignored: extra"),
        ("/yaml/SKILL.md", True, "frontmatter is not valid YAML (frontmatt"),
    ]


def test_denied_and_missing_sources(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "secret")
    disk = DiskBackend(tmp_path, rules=[AccessRule.deny("/skills/secret/**")])
    found = discover_skills(disk, ["/nowhere", "/skills", "../up"])
    assert found.skills == []
    assert [(w["path"], w["message"]) for w in found.warnings] == [
        (
            "/skills/secret/SKILL.md",
            "Access denied: read of /skills/secret/SKILL.md is not permitted.",
        ),
        (
            "../up",
            "Path '../up' contains '..', which is not allowed.",
        ),
    ]


def test_skills_on_the_state_backend_and_a_composite(tmp_path: Path) -> None:
    memo = record("---\nname: memo\ndescription: Memos.\n---\n")
    write_skill(tmp_path, "pdf")
    composite = CompositeBackend(StateBackend(), {"/disk-skills/": DiskBackend(tmp_path)})
    found, _ = in_graph(
        {"/skills/memo/SKILL.md": memo},
        lambda _: discover_skills(composite, ["/disk-skills", "/skills"]),
    )
    assert [(s["name"], s["path"]) for s in found.skills] == [
        ("memo", "/skills/memo/SKILL.md"),
        ("pdf", "/disk-skills/pdf/SKILL.md"),
    ]


def test_discovery_from_host_directories(tmp_path: Path) -> None:
    user, project = tmp_path / "user", tmp_path / "project"
    write_skill(user, "pdf", "User.")
    write_skill(project, "pdf", "Project.")
    found = discover_skill_dirs([("user", user), ("project", project), ("none", tmp_path / "no")])
    (skill,) = found.skills
    assert found.source_of(skill) == "project"
    assert skill["path"] == str(project / "pdf" / "SKILL.md")
    assert found.overridden[0]["path"] == str(user / "pdf" / "SKILL.md")


def test_an_os_error_on_one_skill_is_a_warning(tmp_path: Path) -> None:
    # Simulated, since the tests may run as root, who can read a file of any mode.
    class Unreadable(DiskBackend):
        def _get(self, path: str) -> Any:
            if path.startswith("/locked/"):
                raise PermissionError(13, "Permission denied", path)
            return super()._get(path)

    write_skill(tmp_path, "locked")
    write_skill(tmp_path, "open")
    found = discover_skills(Unreadable(tmp_path), ["/"])
    assert [s["name"] for s in found.skills] == ["open"]
    assert found.warnings[0]["path"] == "/locked/SKILL.md"
    assert "Permission denied" in found.warnings[0]["message"]
