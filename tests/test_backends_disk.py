"""The disk backend: confinement to its root, access rules, binary and huge files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nbagents.backends import (
    AccessDeniedError,
    AccessRule,
    DiskBackend,
    FileMissingError,
    FileTooLargeError,
    InvalidPathError,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "docs").mkdir(parents=True)
    (tmp_path / "root" / "docs" / "a.md").write_text("one\ntwo\nthree\n")
    (tmp_path / "root" / "secrets").mkdir()
    (tmp_path / "root" / "secrets" / "key.txt").write_text("hunter2")
    (tmp_path / "root" / "secrets" / "public.txt").write_text("hello")
    (tmp_path / "outside.txt").write_text("not yours")
    return tmp_path / "root"


def test_reads_lists_and_writes_inside_the_root(root: Path) -> None:
    disk = DiskBackend(root)
    assert [(i.path, i.is_dir) for i in disk.ls("/")] == [("/docs", True), ("/secrets", True)]
    content = disk.read("/docs/a.md", offset=1, limit=5)
    assert content.lines == ("two", "three") and content.total_lines == 3
    disk.write("/new/dir/b.md", "bee")
    assert (root / "new" / "dir" / "b.md").read_text() == "bee"
    assert disk.edit("/new/dir/b.md", "bee", "wasp").replacements == 1
    assert (root / "new" / "dir" / "b.md").read_text() == "wasp"
    assert disk.write("/x.md", "x").files_update is None


def test_dotdot_and_nul_are_refused(root: Path) -> None:
    disk = DiskBackend(root)
    with pytest.raises(InvalidPathError, match=r"'\.\.'"):
        disk.read("/docs/../../outside.txt")
    with pytest.raises(InvalidPathError, match=r"'\.\.'"):
        disk.write("/../outside.txt", "overwrite")
    with pytest.raises(InvalidPathError, match="NUL"):
        disk.read("/docs/a.md\x00.png")
    assert (root.parent / "outside.txt").read_text() == "not yours"


def test_absolute_host_paths_stay_inside_the_root(root: Path) -> None:
    disk = DiskBackend(root)
    outside = str(root.parent / "outside.txt")
    # A host path is read as a virtual path under the root: it can never reach the host file.
    with pytest.raises(FileMissingError, match="does not exist"):
        disk.read(outside)
    with pytest.raises(FileMissingError):
        disk.read("/etc/passwd")


def test_symlinks_leaving_the_root_are_refused(root: Path) -> None:
    os.symlink(root.parent / "outside.txt", root / "docs" / "link.txt")
    os.symlink(root.parent, root / "escape")
    os.symlink(root / "docs" / "a.md", root / "docs" / "inner-link.md")
    disk = DiskBackend(root)
    with pytest.raises(InvalidPathError, match="outside the backend root"):
        disk.read("/docs/link.txt")
    with pytest.raises(InvalidPathError, match="outside the backend root"):
        disk.write("/escape/planted.txt", "x")
    with pytest.raises(InvalidPathError, match="outside the backend root"):
        disk.ls("/escape")
    assert not (root.parent / "planted.txt").exists()
    # Links that stay inside work; escaping ones are left out of listings and searches.
    assert disk.read("/docs/inner-link.md").lines[0] == "one"
    assert "/docs/link.txt" not in [i.path for i in disk.ls("/docs")]
    assert [m.path for m in disk.grep("not yours")] == []
    assert "/docs/link.txt" not in [i.path for i in disk.glob("**")]


def test_access_rules_last_match_wins(root: Path) -> None:
    disk = DiskBackend(
        root,
        rules=[
            AccessRule.deny("/secrets/**"),
            AccessRule.allow("/secrets/public.txt", "read"),
            AccessRule.deny("/docs/**", "write"),
        ],
    )
    with pytest.raises(AccessDeniedError, match=r"read of /secrets/key.txt is not permitted"):
        disk.read("/secrets/key.txt")
    assert disk.read("/secrets/public.txt").text == "hello"
    with pytest.raises(AccessDeniedError, match=r"write of /secrets/public.txt"):
        disk.write("/secrets/public.txt", "x")
    with pytest.raises(AccessDeniedError, match=r"write of /docs/a.md"):
        disk.edit("/docs/a.md", "one", "1")
    assert disk.read("/docs/a.md").lines[0] == "one"
    # Denied files are hidden from listings and searches.
    assert [i.path for i in disk.ls("/secrets")] == ["/secrets/public.txt"]
    assert [m.path for m in disk.grep("hunter2")] == []
    assert [i.path for i in disk.glob("/secrets/*")] == ["/secrets/public.txt"]


def test_default_deny_with_an_allow_list(root: Path) -> None:
    disk = DiskBackend(root, rules=[AccessRule.allow("/docs/**")], default="deny")
    assert disk.read("/docs/a.md").total_lines == 3
    with pytest.raises(AccessDeniedError):
        disk.read("/secrets/public.txt")
    with pytest.raises(AccessDeniedError):
        disk.write("/top.md", "x")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("deny", "secrets/**"), "must be absolute"),
        (("block", "/x"), "'allow' or 'deny'"),
        (("deny", "/x", ("delete",)), "'read' and/or 'write'"),
    ],
)
def test_bad_rules_are_rejected(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AccessRule(*args)  # type: ignore[arg-type]


def test_binary_and_huge_files(root: Path) -> None:
    (root / "blob.bin").write_bytes(b"\x00\x01\x02\xff")
    (root / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (root / "huge.txt").write_text("x" * 2000)
    disk = DiskBackend(root, max_file_bytes=1000)
    blob = disk.read("/blob.bin")
    assert blob.is_binary and blob.size == 4 and blob.lines == ()
    assert disk.read("/latin1.txt").is_binary
    with pytest.raises(FileTooLargeError, match="2000 bytes, over this backend's limit of 1000"):
        disk.read("/huge.txt")
    assert disk.grep("x") == []


def test_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a directory"):
        DiskBackend(tmp_path / "missing")
