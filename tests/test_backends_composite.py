"""The composite backend: longest prefix wins, merged listings and searches."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.backend_kit import failed, in_graph, ok, paths, record

from nbagents.backends import AccessRule, CompositeBackend, DiskBackend, StateBackend

Run = Callable[[Callable[[CompositeBackend], Any]], Any]


@pytest.fixture
def run(tmp_path: Path) -> Run:
    """``run(op)``: ``op(composite)`` in a graph step whose state holds two files."""
    (tmp_path / "skills" / "pdf").mkdir(parents=True)
    (tmp_path / "skills" / "pdf" / "SKILL.md").write_text("---\nname: pdf\n---\nuse pdf\n")
    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "old.md").write_text("use old\n")
    composite = CompositeBackend(
        StateBackend(),
        {
            "/skills/": DiskBackend(tmp_path / "skills"),
            "/skills/archive": DiskBackend(tmp_path / "archive"),
        },
    )
    files = {"/notes/a.md": record("use notes"), "/skills/shadowed.md": record("never seen")}
    return lambda op: in_graph(files, lambda _: op(composite))[0]


def test_longest_prefix_wins(run: Run) -> None:
    assert run(lambda c: c.read("/skills/archive/old.md")).file_data["content"] == "use old\n"
    assert run(lambda c: c.read("/notes/a.md")).file_data["content"] == "use notes"
    assert ok(run(lambda c: c.read("/skills/pdf/SKILL.md"))).total_lines == 4
    failed(run(lambda c: c.read("/skills/shadowed.md")), "not found")


def test_listing_at_root_merges_mounts(run: Run) -> None:
    listing = ok(run(lambda c: c.ls("/")))
    assert [(e["path"], e["is_dir"]) for e in listing.entries] == [
        ("/notes/", True),
        ("/skills/", True),
    ]
    assert paths(run(lambda c: c.ls("/skills")).entries) == ["/skills/pdf/"]


def test_glob_and_grep_span_backends(run: Run) -> None:
    assert paths(run(lambda c: c.glob("**/*.md")).matches) == [
        "/notes/a.md",
        "/skills/archive/old.md",
        "/skills/pdf/SKILL.md",
    ]
    assert paths(run(lambda c: c.glob("/skills/*/SKILL.md")).matches) == ["/skills/pdf/SKILL.md"]
    assert paths(run(lambda c: c.glob("*/SKILL.md", "/skills")).matches) == ["/skills/pdf/SKILL.md"]
    hits = ok(run(lambda c: c.grep("use ")))
    assert [(m["path"], m["line"]) for m in hits.matches] == [
        ("/notes/a.md", 1),
        ("/skills/archive/old.md", 1),
        ("/skills/pdf/SKILL.md", 4),
    ]
    assert paths(run(lambda c: c.grep("use", glob="/notes/**")).matches) == ["/notes/a.md"]
    assert paths(run(lambda c: c.grep("use", "/skills/pdf")).matches) == ["/skills/pdf/SKILL.md"]


def test_writes_route_to_their_backend(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    composite = CompositeBackend(StateBackend(), {"/skills/": DiskBackend(tmp_path / "skills")})

    def writes(c: CompositeBackend) -> tuple[Any, Any]:
        return c.write("/skills/new/SKILL.md", "x"), c.write("/notes/b.md", "y")

    (on_disk, in_state), files = in_graph({}, lambda _: writes(composite))
    assert ok(on_disk).path == "/skills/new/SKILL.md"
    assert (tmp_path / "skills" / "new" / "SKILL.md").read_text() == "x"
    assert ok(in_state).path == "/notes/b.md"
    assert list(files) == ["/notes/b.md"]


def test_upload_and_download_route_each_file(tmp_path: Path) -> None:
    composite = CompositeBackend(StateBackend(), {"/disk/": DiskBackend(tmp_path)})

    def batch(c: CompositeBackend) -> tuple[Any, Any]:
        up = c.upload_files([("/disk/a.bin", b"\x00A"), ("/s.txt", b"S"), ("x", b"")])
        return up, c.download_files(["/s.txt", "/disk/a.bin", "/disk/none"])

    (up, down), files = in_graph({}, lambda _: batch(composite))
    assert [r.error for r in up] == [None, None, "invalid_path"]
    assert (tmp_path / "a.bin").read_bytes() == b"\x00A"
    assert list(files) == ["/s.txt"]
    assert [(d.path, d.content, d.error) for d in down] == [
        ("/s.txt", b"S", None),
        ("/disk/a.bin", b"\x00A", None),
        ("/disk/none", None, "file_not_found"),
    ]


def test_root_route_and_non_backends_are_rejected() -> None:
    with pytest.raises(ValueError, match="cannot be '/'"):
        CompositeBackend(StateBackend(), {"/": StateBackend()})
    with pytest.raises(TypeError, match="not a backend instance"):
        CompositeBackend(StateBackend, {})  # type: ignore[arg-type]


def test_errors_name_the_path_the_caller_gave(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "SKILL.md").write_text("x x")
    disk = DiskBackend(tmp_path, rules=[AccessRule.deny("/**", "write")])
    composite = CompositeBackend(DiskBackend(tmp_path), {"/skills/": disk})
    failed(
        composite.edit("/skills/a/SKILL.md", "x", "y"),
        r"^Access denied: write of /skills/a/SKILL\.md ",
    )
    failed(composite.read("/skills/a/SKILL.mdx"), r"^File '/skills/a/SKILL\.mdx' not found$")
    failed(composite.ls("/skills/nope"), r"^Path '/skills/nope': path_not_found$")
    failed(composite.grep("x", "/skills/nope"), r"^Directory '/skills/nope' not found$")
