"""The state backend and the ``files`` reducer."""

from __future__ import annotations

import base64

import pytest

from nbagents.backends import (
    BinaryFileError,
    EditConflictError,
    FileMissingError,
    FileRecord,
    InvalidPathError,
    InvalidPatternError,
    StateBackend,
    files_reducer,
)


def record(content: str, encoding: str = "utf-8") -> FileRecord:
    return {
        "content": content,
        "encoding": encoding,  # type: ignore[typeddict-item]
        "created_at": "2026-01-01T00:00:00+00:00",
        "modified_at": "2026-01-01T00:00:00+00:00",
    }


@pytest.fixture
def backend() -> StateBackend:
    return StateBackend(
        {
            "/notes/a.md": record("alpha\nbeta\ngamma"),
            "/notes/deep/b.md": record("beta again"),
            "/img.png": record(base64.b64encode(b"\x89PNG\x00\x01").decode(), "base64"),
        }
    )


def test_ls_lists_direct_children_with_directories(backend: StateBackend) -> None:
    assert [(i.path, i.is_dir) for i in backend.ls("/")] == [
        ("/img.png", False),
        ("/notes", True),
    ]
    assert [i.path for i in backend.ls("/notes/")] == ["/notes/a.md", "/notes/deep"]
    with pytest.raises(FileMissingError, match="Directory /nowhere does not exist"):
        backend.ls("/nowhere")
    with pytest.raises(InvalidPathError, match="is a file"):
        backend.ls("/img.png")


def test_read_windows_lines_and_reports_binary(backend: StateBackend) -> None:
    part = backend.read("/notes/a.md", offset=1, limit=1)
    assert (part.lines, part.offset, part.total_lines) == (("beta",), 1, 3)
    binary = backend.read("/img.png")
    assert binary.is_binary and binary.lines == () and binary.size == 6
    with pytest.raises(FileMissingError, match=r"File /missing.md does not exist"):
        backend.read("/missing.md")
    with pytest.raises(FileMissingError, match="is a directory"):
        backend.read("/notes")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("notes/a.md", "relative"),
        ("/notes/../etc/passwd", r"'\.\.'"),
        ("/a\x00b", "NUL"),
        ("", "empty"),
        ("\\notes\\a.md", "backslash"),
    ],
)
def test_bad_paths_are_refused(backend: StateBackend, path: str, message: str) -> None:
    with pytest.raises(InvalidPathError, match=message):
        backend.read(path)


def test_write_returns_the_update_and_keeps_created_at(backend: StateBackend) -> None:
    result = backend.write("/notes/a.md", "new")
    assert result.files_update is not None
    (new,) = result.files_update.values()
    assert new is not None and new["content"] == "new"
    assert new["created_at"] == "2026-01-01T00:00:00+00:00"
    assert new["modified_at"] != new["created_at"]
    # The backend sees its own write.
    assert backend.read("/notes/a.md").text == "new"
    with pytest.raises(InvalidPathError, match="is a directory"):
        backend.write("/notes", "x")


def test_edit_requires_a_unique_match_unless_replace_all() -> None:
    backend = StateBackend({"/a.txt": record("x y x")})
    with pytest.raises(EditConflictError, match=r"occurs 2 times.*replace_all"):
        backend.edit("/a.txt", "x", "z")
    with pytest.raises(EditConflictError, match="not found"):
        backend.edit("/a.txt", "q", "z")
    with pytest.raises(EditConflictError, match="empty"):
        backend.edit("/a.txt", "", "z")
    assert backend.edit("/a.txt", "y", "w").replacements == 1
    result = backend.edit("/a.txt", "x", "z", replace_all=True)
    assert result.replacements == 2
    assert backend.read("/a.txt").text == "z w z"


def test_edit_of_binary_is_refused(backend: StateBackend) -> None:
    with pytest.raises(BinaryFileError, match="binary"):
        backend.edit("/img.png", "PNG", "GIF")


def test_glob_and_grep(backend: StateBackend) -> None:
    assert [i.path for i in backend.glob("**/*.md")] == ["/notes/a.md", "/notes/deep/b.md"]
    assert [i.path for i in backend.glob("*.md", "/notes")] == ["/notes/a.md"]
    assert [i.path for i in backend.glob("/notes/*/*.md")] == ["/notes/deep/b.md"]
    hits = backend.grep("beta")
    assert [(m.path, m.line, m.text) for m in hits] == [
        ("/notes/a.md", 2, "beta"),
        ("/notes/deep/b.md", 1, "beta again"),
    ]
    assert [m.path for m in backend.grep("beta", "/notes", glob="deep/*")] == ["/notes/deep/b.md"]
    with pytest.raises(InvalidPatternError, match="Invalid regular expression"):
        backend.grep("(unclosed")
    with pytest.raises(InvalidPatternError, match="unclosed"):
        backend.glob("[abc")


def test_reducer_merges_and_deletes_with_none() -> None:
    a, b = record("a"), record("b")
    assert files_reducer(None, {"/a": a}) == {"/a": a}
    merged = files_reducer({"/a": a}, {"/b": b})
    assert merged == {"/a": a, "/b": b}
    assert files_reducer(merged, {"/a": None, "/zz": None}) == {"/b": b}


def test_a_file_cannot_become_a_directory(backend: StateBackend) -> None:
    with pytest.raises(InvalidPathError, match=r"/notes/a\.md is a file, so /notes/a\.md/x cannot"):
        backend.write("/notes/a.md/x", "x")
