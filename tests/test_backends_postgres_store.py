"""LangGraph's PostgresStore works on the test server behind ``postgres_url``
(``support/postgres.py``).

These tests exist so a store-backed feature can be tested on a real PostgreSQL: they prove the
harness gives one (sync and async stores, data kept across store objects) and pin down where
``PostgresStore`` and ``InMemoryStore`` answer alike and where they differ. The server is shared
by the session, so every test writes under a namespace of its own.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.postgres import IN_CI

try:
    import psycopg
    from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
except ImportError as error:  # pragma: no cover - depends on the installed extras
    if IN_CI:
        raise
    pytest.skip(
        f"{error.name} is not installed (the test extra: langgraph-checkpoint-postgres, psycopg)",
        allow_module_level=True,
    )
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

pytestmark = pytest.mark.server  # starts a PostgreSQL server


def own_namespace() -> tuple[str, ...]:
    """A namespace no other test writes under (the database outlives each test)."""
    return ("test", uuid.uuid4().hex)


def keys(items: Any) -> list[tuple[tuple[str, ...], str]]:
    return sorted((tuple(item.namespace), item.key) for item in items)


def test_server_is_a_fresh_cluster_on_loopback(postgres_url: str) -> None:
    url = urlsplit(postgres_url)
    assert url.scheme == "postgresql" and url.hostname == "127.0.0.1" and url.path == "/postgres"
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute(
            "SELECT current_setting('listen_addresses'), current_setting('port'),"
            " current_setting('data_directory'), current_setting('fsync'),"
            " current_setting('unix_socket_directories'), current_user, usesuper"
            " FROM pg_user WHERE usename = current_user"
        ).fetchone()
    assert row is not None
    listen, port, data_dir, fsync, sockets, user, superuser = row
    assert listen == "127.0.0.1" and int(port) == url.port
    # Its own temporary cluster, not a system one under /var/lib/postgresql.
    assert Path(data_dir).parent.name.startswith("nbagents-pg-")
    assert sockets == str(Path(data_dir).parent)
    assert fsync == "off"
    assert user == "postgres" and superuser


def test_put_get_search_by_namespace_prefix(postgres_url: str) -> None:
    root = own_namespace()
    with PostgresStore.from_conn_string(postgres_url) as store:
        store.setup()
        store.put((*root, "docs", "a"), "one", {"text": "first", "n": 1})
        store.put((*root, "docs", "b"), "two", {"text": "second", "n": 2})
        store.put((*root, "other"), "three", {"text": "third", "n": 3})

        item = store.get((*root, "docs", "a"), "one")
        assert item is not None
        assert item.value == {"text": "first", "n": 1}
        assert tuple(item.namespace) == (*root, "docs", "a") and item.key == "one"
        assert store.get((*root, "docs", "a"), "two") is None  # keys live in their namespace

        assert keys(store.search((*root, "docs"))) == [
            ((*root, "docs", "a"), "one"),
            ((*root, "docs", "b"), "two"),
        ]
        assert len(store.search(root)) == 3
        # A prefix matches whole namespace labels, not the start of a label.
        assert store.search((*root, "doc")) == []
        assert keys(store.search(root, filter={"n": 2})) == [((*root, "docs", "b"), "two")]
        assert sorted(store.list_namespaces(prefix=root)) == [
            (*root, "docs", "a"),
            (*root, "docs", "b"),
            (*root, "other"),
        ]

        store.put((*root, "docs", "a"), "one", {"text": "first, edited", "n": 1})
        edited = store.get((*root, "docs", "a"), "one")
        assert edited is not None and edited.value["text"] == "first, edited"
        assert edited.updated_at >= edited.created_at
        assert len(store.search(root)) == 3  # a put on an existing key replaces, never adds

        store.delete((*root, "other"), "three")
        assert store.get((*root, "other"), "three") is None
        assert len(store.search(root)) == 2


def test_data_outlives_the_store_object_that_wrote_it(postgres_url: str) -> None:
    root = own_namespace()
    with PostgresStore.from_conn_string(postgres_url) as writer:
        writer.setup()
        writer.put(root, "kept", {"text": "written by the first store"})

    # A second store on a new connection: the tables exist, so no setup() is needed.
    with PostgresStore.from_conn_string(postgres_url) as reader:
        item = reader.get(root, "kept")
        assert item is not None and item.value == {"text": "written by the first store"}
        assert keys(reader.search(root)) == [(root, "kept")]

        # Two stores open at once: a write through one is visible through the other at once.
        with PostgresStore.from_conn_string(postgres_url) as writer:
            writer.put(root, "live", {"text": "while both are open"})
            fresh = reader.get(root, "live")
            assert fresh is not None and fresh.value == {"text": "while both are open"}
            reader.delete(root, "kept")
            assert writer.get(root, "kept") is None


async def test_async_store(postgres_url: str) -> None:
    root = own_namespace()
    async with AsyncPostgresStore.from_conn_string(postgres_url) as store:
        await store.setup()
        await store.aput((*root, "docs"), "one", {"text": "async"})
        await store.aput((*root, "other"), "two", {"text": "elsewhere"})

        item = await store.aget((*root, "docs"), "one")
        assert item is not None and item.value == {"text": "async"}
        assert keys(await store.asearch((*root, "docs"))) == [((*root, "docs"), "one")]
        assert len(await store.asearch(root)) == 2

    # What the async store wrote, a sync store on another connection reads.
    with PostgresStore.from_conn_string(postgres_url) as reader:
        item = reader.get((*root, "docs"), "one")
        assert item is not None and item.value == {"text": "async"}


@pytest.fixture(params=["memory", "postgres"])
def store(request: pytest.FixtureRequest) -> Iterator[BaseStore]:
    """Each of the two stores a store-backed feature is tested on, empty of this test's data."""
    if request.param == "memory":
        yield InMemoryStore()
        return
    # Asked for here, not as an argument: the "memory" case must not need a server.
    url = request.getfixturevalue("postgres_url")
    with PostgresStore.from_conn_string(url) as postgres:
        postgres.setup()
        yield postgres


def test_both_stores_answer_alike(store: BaseStore) -> None:
    root = own_namespace()
    for i in range(15):
        store.put((*root, "docs"), f"k{i:02}", {"i": i})
    store.put((*root, "docs"), "k03", {"i": 3, "edited": True})

    item = store.get((*root, "docs"), "k03")
    assert item is not None and item.value == {"i": 3, "edited": True}
    # Both return at most `limit` items (10 unless given): listing everything means paging.
    assert len(store.search(root)) == 10
    found = store.search(root, limit=10) + store.search(root, limit=10, offset=10)
    assert sorted(i.key for i in found) == [f"k{i:02}" for i in range(15)]
    # The orders differ: PostgresStore returns the latest update first, InMemoryStore the order
    # of first insertion. A feature on top of either must sort what it shows.
    order = [i.key for i in store.search(root, limit=20)]
    if isinstance(store, PostgresStore):
        assert order[0] == "k03"
    else:
        assert order == [f"k{i:02}" for i in range(15)]
