"""What every file backend does the same way, checked on the state, disk and store backends.

The state backend runs inside a real graph step (``in_graph``): that is the only place it works.
The store backend runs on LangGraph's ``InMemoryStore`` and on a real PostgreSQL
(``PostgresStore``, on a server the ``postgres_url`` fixture starts on loopback).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from support.backend_kit import failed, in_graph, ok, paths, record

from nbagents.backends import (
    FILE_NOT_FOUND,
    IS_DIRECTORY,
    BackendProtocol,
    DiskBackend,
    StateBackend,
    StoreBackend,
    files_reducer,
)

PNG = b"\x89PNG\x00\x01"
FILES = {
    "/notes/a.md": "alpha\nbeta\ngamma",
    "/notes/deep/b.md": "beta again",
    "/img.png": PNG,
}

Run = Callable[[Callable[[BackendProtocol], Any]], Any]


def _state(files: Mapping[str, str | bytes]) -> Run:
    seeded = {
        path: record(base64.b64encode(v).decode(), "base64") if isinstance(v, bytes) else record(v)
        for path, v in files.items()
    }
    return lambda op: in_graph(seeded, op)[0]


def _disk(root: Path, files: Mapping[str, str | bytes]) -> Run:
    for path, content in files.items():
        host = root / path.lstrip("/")
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_bytes(content if isinstance(content, bytes) else content.encode())
    disk = DiskBackend(root)
    return lambda op: op(disk)


def _store(store: BaseStore, files: Mapping[str, str | bytes]) -> Run:
    # A namespace of its own per test: the PostgreSQL server is shared by the whole session.
    backend = StoreBackend(store=store, namespace=("tests", uuid.uuid4().hex))
    uploads = [(p, v if isinstance(v, bytes) else v.encode()) for p, v in files.items()]
    assert all(r.error is None for r in backend.upload_files(uploads))
    return lambda op: op(backend)


@pytest.fixture(scope="module")
def postgres_store(postgres_url: str) -> Iterator[BaseStore]:
    from langgraph.store.postgres import PostgresStore

    with PostgresStore.from_conn_string(postgres_url) as store:
        store.setup()
        yield store


@pytest.fixture(
    params=[
        "state",
        "disk",
        "store-memory",
        pytest.param("store-postgres", marks=pytest.mark.server),
    ]
)
def run(request: pytest.FixtureRequest, tmp_path: Path) -> Run:
    """``run(op)``: ``op(backend)`` on a backend holding FILES."""
    if request.param == "state":
        return _state(FILES)
    if request.param == "disk":
        return _disk(tmp_path, FILES)
    if request.param == "store-memory":
        return _store(InMemoryStore(), FILES)
    return _store(request.getfixturevalue("postgres_store"), FILES)


def test_ls_lists_direct_children_with_directories(run: Run) -> None:
    listing = ok(run(lambda b: b.ls("/")))
    assert [(e["path"], e.get("is_dir")) for e in listing.entries] == [
        ("/img.png", False),
        ("/notes/", True),
    ]
    assert paths(ok(run(lambda b: b.ls("/notes/"))).entries) == ["/notes/a.md", "/notes/deep/"]

    # A disk says a directory is missing; where directories are only prefixes of file paths
    # (state, store) an empty one and a missing one are the same, as upstream has it.
    def nowhere(b: BackendProtocol) -> Any:
        return b.ls("/nowhere"), getattr(b, "virtual_directories", True)

    missing, virtual = run(nowhere)
    if virtual:
        assert ok(missing).entries == []
    else:
        failed(missing, "Path '/nowhere': path_not_found")
    failed(run(lambda b: b.ls("/img.png")), "not_a_directory")


def test_read_windows_lines_and_gives_binary_whole(run: Run) -> None:
    part = ok(run(lambda b: b.read("/notes/a.md", offset=1, limit=1)))
    assert part.file_data["content"] == "beta\n"  # the file's own text, line ending kept
    assert (part.start_line, part.end_line, part.total_lines, part.next_offset) == (2, 2, 3, 2)
    last = ok(run(lambda b: b.read("/notes/a.md", offset=2)))
    assert (last.file_data["content"], last.next_offset) == ("gamma", None)
    binary = ok(run(lambda b: b.read("/img.png")))
    assert binary.file_data["encoding"] == "base64"
    assert base64.b64decode(binary.file_data["content"]) == PNG
    failed(run(lambda b: b.read("/missing.md")), "File '/missing.md' not found")
    failed(run(lambda b: b.read("/notes")), "is a directory")
    failed(
        run(lambda b: b.read("/notes/a.md", offset=9)),
        r"Line offset 9 exceeds file length \(3 lines\)",
    )


def test_a_negative_offset_or_empty_limit_is_no_error(run: Run) -> None:
    top = ok(run(lambda b: b.read("/notes/a.md", offset=-4, limit=1)))
    assert (top.file_data["content"], top.start_line) == ("alpha\n", 1)
    none = ok(run(lambda b: b.read("/notes/a.md", limit=0)))
    assert (none.file_data["content"], none.start_line) == ("", None)


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
def test_bad_paths_are_refused(run: Run, path: str, message: str) -> None:
    failed(run(lambda b: b.read(path)), message)
    failed(run(lambda b: b.write(path, "x")), message)


def test_a_write_is_seen_by_a_read_in_the_same_step(run: Run) -> None:
    def write_then_read(b: BackendProtocol) -> tuple[Any, Any]:
        return b.write("/notes/a.md", "new"), b.read("/notes/a.md")

    written, read = run(write_then_read)
    assert ok(written).path == "/notes/a.md"
    assert ok(read).file_data["content"] == "new"
    failed(run(lambda b: b.write("/notes", "x")), "is a directory")
    failed(run(lambda b: b.write("/notes/a.md/x", "x")), r"/notes/a\.md is a file, so")


def test_edit_requires_a_unique_match_unless_replace_all(run: Run) -> None:
    def edits(b: BackendProtocol) -> list[Any]:
        b.write("/a.txt", "x y x")
        return [
            b.edit("/a.txt", "x", "z"),
            b.edit("/a.txt", "q", "z"),
            b.edit("/a.txt", "", "z"),
            b.edit("/a.txt", "y", "w"),
            b.edit("/a.txt", "x", "z", replace_all=True),
            b.read("/a.txt"),
            b.edit("/img.png", "PNG", "GIF"),
        ]

    twice, absent, empty, once, every, read, binary = run(edits)
    failed(twice, r"appears 2 times.*replace_all")
    failed(absent, "not found")
    failed(empty, "empty")
    assert ok(once).occurrences == 1
    assert ok(every).occurrences == 2
    assert read.file_data["content"] == "z w z"
    failed(binary, "binary")


def test_glob_and_grep(run: Run) -> None:
    assert paths(run(lambda b: b.glob("**/*.md")).matches) == ["/notes/a.md", "/notes/deep/b.md"]
    # A pattern without '/' matches names at any depth; with '/', paths from the search root.
    assert paths(run(lambda b: b.glob("*.md", "/notes")).matches) == [
        "/notes/a.md",
        "/notes/deep/b.md",
    ]
    assert paths(run(lambda b: b.glob("/*.md", "/notes")).matches) == ["/notes/a.md"]
    assert paths(run(lambda b: b.glob("/notes/*/*.md")).matches) == ["/notes/deep/b.md"]
    hits = ok(run(lambda b: b.grep("beta")))
    assert [(m["path"], m["line"], m["text"]) for m in hits.matches] == [
        ("/notes/a.md", 2, "beta"),
        ("/notes/deep/b.md", 1, "beta again"),
    ]
    assert paths(run(lambda b: b.grep("beta", "/notes", glob="deep/*")).matches) == [
        "/notes/deep/b.md"
    ]
    # grep matches text literally, as upstream's: a regex metacharacter is just a character.
    assert ok(run(lambda b: b.grep("(unclosed"))).matches == []
    assert paths(run(lambda b: b.grep("a.p")).matches) == []
    failed(run(lambda b: b.glob("[abc")), "unclosed")


def test_upload_and_download_round_trip_text_and_bytes(run: Run) -> None:
    def round_trip(b: BackendProtocol) -> tuple[Any, Any]:
        up = b.upload_files([("/up/t.txt", b"text\n"), ("/up/b.bin", b"\x00\xff"), ("bad", b"")])
        down = b.download_files(["/up/t.txt", "/up/b.bin", "/nope", "/notes", "/img.png"])
        return up, down

    up, down = run(round_trip)
    assert [(r.path, r.error) for r in up] == [
        ("/up/t.txt", None),
        ("/up/b.bin", None),
        ("bad", "invalid_path"),
    ]
    assert [(d.content, d.error) for d in down] == [
        (b"text\n", None),
        (b"\x00\xff", None),
        (None, FILE_NOT_FOUND),
        (None, IS_DIRECTORY),
        (PNG, None),
    ]


def test_delete_removes_a_file(run: Run) -> None:
    def delete(b: BackendProtocol) -> tuple[Any, Any, Any]:
        return b.delete("/notes/a.md"), b.read("/notes/a.md"), b.delete("/nope.md")

    gone, read, missing = run(delete)
    assert ok(gone).path == "/notes/a.md"
    failed(read, "not found")
    failed(missing, "not found")


async def test_async_twins_give_the_same_results(run: Run) -> None:
    import asyncio

    def both(b: BackendProtocol) -> tuple[Any, Any]:
        async def go() -> Any:
            return await b.aread("/notes/a.md", 0, 1), await b.agrep("beta")

        return asyncio.run(go())

    read, grep = await asyncio.to_thread(run, both)
    assert read.file_data["content"] == "alpha\n"
    assert len(grep.matches) == 2


def test_a_write_keeps_the_creation_time() -> None:
    result, files = in_graph({"/a.md": record("old")}, lambda b: b.write("/a.md", "new"))
    assert ok(result).path == "/a.md"
    assert files["/a.md"]["content"] == "new"
    assert files["/a.md"]["created_at"] == "2026-01-01T00:00:00+00:00"
    assert files["/a.md"]["modified_at"] != files["/a.md"]["created_at"]


def test_files_written_as_lines_by_older_deepagents_are_read() -> None:
    legacy = {"/old.txt": {"content": ["hello", "world"], "encoding": "utf-8"}}
    result, _ = in_graph(legacy, lambda b: (b.read("/old.txt"), b.grep("world")))
    read, grep = result
    assert ok(read).file_data["content"] == "hello\nworld"
    assert grep.matches[0]["line"] == 2


def test_reducer_merges_and_deletes_with_none() -> None:
    a, b = record("a"), record("b")
    assert files_reducer(None, {"/a": a}) == {"/a": a}
    merged = files_reducer({"/a": a}, {"/b": b})
    assert merged == {"/a": a, "/b": b}
    assert files_reducer(merged, {"/a": None, "/zz": None}) == {"/b": b}


def test_state_backend_is_a_backend_protocol() -> None:
    assert isinstance(StateBackend(), BackendProtocol)
