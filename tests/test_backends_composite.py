"""The composite backend: longest prefix wins, merged listings and searches."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagents.backends import (
    AccessDeniedError,
    AccessRule,
    CompositeBackend,
    DiskBackend,
    FileMissingError,
    StateBackend,
)


@pytest.fixture
def composite(tmp_path: Path) -> CompositeBackend:
    (tmp_path / "skills" / "pdf").mkdir(parents=True)
    (tmp_path / "skills" / "pdf" / "SKILL.md").write_text("---\nname: pdf\n---\nuse pdf\n")
    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "old.md").write_text("use old\n")
    state = StateBackend()
    state.write("/notes/a.md", "use notes")
    state.write("/skills/shadowed.md", "never seen")
    return CompositeBackend(
        state,
        {
            "/skills/": DiskBackend(tmp_path / "skills"),
            "/skills/archive": DiskBackend(tmp_path / "archive"),
        },
    )


def test_longest_prefix_wins(composite: CompositeBackend) -> None:
    assert composite.read("/skills/pdf/SKILL.md").path == "/skills/pdf/SKILL.md"
    assert composite.read("/skills/archive/old.md").text == "use old"
    assert composite.read("/notes/a.md").text == "use notes"
    with pytest.raises(FileMissingError):
        composite.read("/skills/shadowed.md")


def test_listing_at_root_merges_mounts(composite: CompositeBackend) -> None:
    assert [(i.path, i.is_dir) for i in composite.ls("/")] == [("/notes", True), ("/skills", True)]
    assert [i.path for i in composite.ls("/skills")] == ["/skills/pdf"]


def test_glob_and_grep_span_backends(composite: CompositeBackend) -> None:
    assert [i.path for i in composite.glob("**/*.md")] == [
        "/notes/a.md",
        "/skills/archive/old.md",
        "/skills/pdf/SKILL.md",
    ]
    assert [i.path for i in composite.glob("/skills/*/SKILL.md")] == ["/skills/pdf/SKILL.md"]
    assert [i.path for i in composite.glob("*/SKILL.md", "/skills")] == ["/skills/pdf/SKILL.md"]
    assert [(m.path, m.line) for m in composite.grep("^use")] == [
        ("/notes/a.md", 1),
        ("/skills/archive/old.md", 1),
        ("/skills/pdf/SKILL.md", 4),
    ]
    assert [m.path for m in composite.grep("use", glob="/notes/**")] == ["/notes/a.md"]
    assert [m.path for m in composite.grep("use", "/skills/pdf")] == ["/skills/pdf/SKILL.md"]


def test_writes_route_and_carry_the_state_update(
    composite: CompositeBackend, tmp_path: Path
) -> None:
    result = composite.write("/skills/new/SKILL.md", "x")
    assert result.path == "/skills/new/SKILL.md" and result.files_update is None
    assert (tmp_path / "skills" / "new" / "SKILL.md").read_text() == "x"
    state_write = composite.write("/notes/b.md", "y")
    assert state_write.files_update is not None and "/notes/b.md" in state_write.files_update


def test_root_route_is_rejected() -> None:
    with pytest.raises(ValueError, match="cannot be '/'"):
        CompositeBackend(StateBackend(), {"/": StateBackend()})


def test_errors_name_the_path_the_caller_gave(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "SKILL.md").write_text("x x")
    disk = DiskBackend(tmp_path, rules=[AccessRule.deny("/**", "write")])
    composite = CompositeBackend(StateBackend(), {"/skills/": disk})
    with pytest.raises(AccessDeniedError, match=r"^Access denied: write of /skills/a/SKILL\.md "):
        composite.edit("/skills/a/SKILL.md", "x", "y")
    with pytest.raises(FileMissingError, match=r"^File /skills/a/SKILL\.mdx does not exist\.$"):
        composite.read("/skills/a/SKILL.mdx")
    with pytest.raises(FileMissingError, match=r"^Directory /skills/nope does not exist\.$"):
        composite.ls("/skills/nope")
    with pytest.raises(FileMissingError, match=r"^Directory /skills/nope does not exist\.$"):
        composite.grep("x", "/skills/nope")
