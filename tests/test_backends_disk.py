"""The disk backend: confinement to its root, access rules, binary and huge files;
``FilesystemBackend``, its deepagents-named form."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.backend_kit import failed, ok, paths

from nbagents.backends import AccessRule, DiskBackend, FilesystemBackend


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
    assert [(i["path"], i["is_dir"]) for i in ok(disk.ls("/")).entries] == [
        ("/docs/", True),
        ("/secrets/", True),
    ]
    content = ok(disk.read("/docs/a.md", offset=1, limit=5))
    assert content.file_data["content"] == "two\nthree\n" and content.total_lines == 3
    ok(disk.write("/new/dir/b.md", "bee"))
    assert (root / "new" / "dir" / "b.md").read_text() == "bee"
    assert ok(disk.edit("/new/dir/b.md", "bee", "wasp")).occurrences == 1
    assert (root / "new" / "dir" / "b.md").read_text() == "wasp"


def test_dotdot_and_nul_are_refused(root: Path) -> None:
    disk = DiskBackend(root)
    failed(disk.read("/docs/../../outside.txt"), r"'\.\.'")
    failed(disk.write("/../outside.txt", "overwrite"), r"'\.\.'")
    failed(disk.read("/docs/a.md\x00.png"), "NUL")
    assert (root.parent / "outside.txt").read_text() == "not yours"


def test_absolute_host_paths_stay_inside_the_root(root: Path) -> None:
    disk = DiskBackend(root)
    outside = str(root.parent / "outside.txt")
    # A host path is read as a virtual path under the root: it can never reach the host file.
    failed(disk.read(outside), "not found")
    failed(disk.read("/etc/passwd"), "not found")


def test_symlinks_leaving_the_root_are_refused(root: Path) -> None:
    os.symlink(root.parent / "outside.txt", root / "docs" / "link.txt")
    os.symlink(root.parent, root / "escape")
    os.symlink(root / "docs" / "a.md", root / "docs" / "inner-link.md")
    disk = DiskBackend(root)
    failed(disk.read("/docs/link.txt"), "outside the backend root")
    failed(disk.write("/escape/planted.txt", "x"), "outside the backend root")
    failed(disk.ls("/escape"), "outside the backend root")
    assert not (root.parent / "planted.txt").exists()
    # Links that stay inside work; escaping ones are left out of listings and searches.
    assert ok(disk.read("/docs/inner-link.md")).file_data["content"].startswith("one")
    assert "/docs/link.txt" not in paths(disk.ls("/docs").entries)
    assert disk.grep("not yours").matches == []
    assert "/docs/link.txt" not in paths(disk.glob("**").matches)


def test_access_rules_last_match_wins(root: Path) -> None:
    disk = DiskBackend(
        root,
        rules=[
            AccessRule.deny("/secrets/**"),
            AccessRule.allow("/secrets/public.txt", "read"),
            AccessRule.deny("/docs/**", "write"),
        ],
    )
    failed(disk.read("/secrets/key.txt"), r"read of /secrets/key.txt is not permitted")
    assert disk.read("/secrets/public.txt").file_data["content"] == "hello"
    failed(disk.write("/secrets/public.txt", "x"), r"write of /secrets/public.txt")
    failed(disk.edit("/docs/a.md", "one", "1"), r"write of /docs/a.md")
    failed(disk.delete("/docs/a.md"), r"write of /docs/a.md")
    assert disk.read("/docs/a.md").file_data["content"].startswith("one")
    # Denied files are hidden from listings, searches and downloads.
    assert paths(disk.ls("/secrets").entries) == ["/secrets/public.txt"]
    assert disk.grep("hunter2").matches == []
    assert paths(disk.glob("/secrets/*").matches) == ["/secrets/public.txt"]
    assert disk.download_files(["/secrets/key.txt"])[0].error == "permission_denied"
    assert disk.upload_files([("/docs/b.md", b"x")])[0].error == "permission_denied"


def test_default_deny_with_an_allow_list(root: Path) -> None:
    disk = DiskBackend(root, rules=[AccessRule.allow("/docs/**")], default="deny")
    assert disk.read("/docs/a.md").total_lines == 3
    failed(disk.read("/secrets/public.txt"), "not permitted")
    failed(disk.write("/top.md", "x"), "not permitted")


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
    blob = ok(disk.read("/blob.bin"))
    assert blob.file_data["encoding"] == "base64" and blob.start_line is None
    assert disk.download_files(["/blob.bin"])[0].content == b"\x00\x01\x02\xff"
    assert disk.read("/latin1.txt").file_data["encoding"] == "base64"
    failed(disk.read("/huge.txt"), "2000 bytes, over this backend's limit of 1000")
    assert disk.grep("x").matches == []


def test_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a directory"):
        DiskBackend(tmp_path / "missing")


def test_filesystem_backend_is_a_confined_disk_backend_by_default(root: Path) -> None:
    fs = FilesystemBackend(root_dir=root)
    assert fs.virtual_mode is True
    assert ok(fs.read("/docs/a.md")).total_lines == 3
    failed(fs.read("/../outside.txt"), r"'\.\.'")
    failed(fs.read(str(root.parent / "outside.txt")), "not found")


def test_filesystem_backend_defaults_to_the_working_directory(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root)
    assert FilesystemBackend().cwd == root.resolve()
    assert ok(FilesystemBackend().read("/docs/a.md")).total_lines == 3


def test_filesystem_backend_without_virtual_mode_uses_host_paths(root: Path) -> None:
    fs = FilesystemBackend(root_dir=root, virtual_mode=False)
    outside = root.parent / "outside.txt"
    # No confinement: an absolute path is the host's, a relative one is under root_dir.
    assert ok(fs.read(str(outside))).file_data["content"] == "not yours"
    assert ok(fs.read("docs/a.md")).total_lines == 3
    assert ok(fs.read("docs/../../outside.txt")).file_data["content"] == "not yours"
    ok(fs.write(str(root / "made.md"), "made"))
    assert (root / "made.md").read_text() == "made"
    assert str(root / "docs" / "a.md") in paths(fs.glob("**/*.md", str(root)).matches)
