"""The store backend in agents: files that outlive a thread and an agent rebuild, per user.

Run on LangGraph's ``InMemoryStore`` and on a real PostgreSQL (``PostgresStore`` on a server the
``postgres_url`` fixture starts on loopback), under ``invoke`` and ``ainvoke``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any, TypedDict

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.backends import CompositeBackend, StateBackend, StoreBackend
from nbagents.models import call


class User(TypedDict):
    user_id: str


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.server)])
def store(request: pytest.FixtureRequest) -> Iterator[BaseStore]:
    if request.param == "memory":
        yield InMemoryStore()
        return
    from langgraph.store.postgres import PostgresStore

    with PostgresStore.from_conn_string(request.getfixturevalue("postgres_url")) as pg:
        pg.setup()
        yield pg


def texts(result: dict[str, Any]) -> list[str]:
    return [m.text for m in result["messages"] if isinstance(m, ToolMessage)]


def script() -> ScriptedChatModel:
    return ScriptedChatModel(
        script={
            "main": {
                "remember": [
                    call("write_file", file_path="/memories/pref.md", content="likes tea"),
                    call("write_file", file_path="/scratch.md", content="draft"),
                    "noted",
                ],
                "recall": [
                    call("read_file", file_path="/memories/pref.md"),
                    call("read_file", file_path="/scratch.md"),
                    "recalled",
                ],
            }
        }
    )


def build(store: BaseStore, tag: str) -> Any:
    # /memories/ is per user and kept in the store; every other path is the thread's own.
    backend = CompositeBackend(
        StateBackend(),
        {"/memories/": StoreBackend(namespace=lambda rt: (tag, rt.context["user_id"], "memories"))},
    )
    return create_deep_agent(
        script(),
        backend=backend,
        store=store,
        checkpointer=InMemorySaver(),
        context_schema=User,
    )


async def run(agent: Any, text: str, thread: str, user: str, mode: str) -> dict[str, Any]:
    payload = {"messages": [HumanMessage(text)]}
    config = {"configurable": {"thread_id": thread}}
    if mode == "ainvoke":
        return await agent.ainvoke(payload, config, context={"user_id": user})  # type: ignore[no-any-return]
    return agent.invoke(payload, config, context={"user_id": user})  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_store_files_outlive_the_thread_and_the_agent_per_user(
    store: BaseStore, mode: str
) -> None:
    tag = uuid.uuid4().hex  # the PostgreSQL server is shared by the session
    await run(build(store, tag), "remember", "t1", "ada", mode)

    # A new thread and a rebuilt agent: the store's file is there, the thread's scratch is not.
    later = await run(build(store, tag), "recall", "t2", "ada", mode)
    memory, scratch = texts(later)
    assert memory == "1  likes tea"
    assert "not found" in scratch

    # Another user on the same store sees neither.
    other = await run(build(store, tag), "recall", "t3", "bob", mode)
    assert all("likes tea" not in text for text in texts(other))

    item = store.get((tag, "ada", "memories"), "/pref.md")
    assert item is not None and item.value["content"] == "likes tea"


def test_a_store_backend_needs_a_store_or_says_so() -> None:
    backend = StoreBackend(namespace=("files",))
    with pytest.raises(RuntimeError, match="StoreBackend has no store"):
        backend.read("/a.md")


@pytest.mark.parametrize(
    "namespace", [(), ("ok", ""), ("users", "*"), ("a/b",), ["list"], ("x", 1)]
)
def test_unsafe_namespaces_are_refused(namespace: Any) -> None:
    with pytest.raises((ValueError, TypeError), match="namespace"):
        StoreBackend(namespace=namespace, store=InMemoryStore())


def test_a_namespace_factory_outside_a_run() -> None:
    store = InMemoryStore()
    # One that ignores the runtime works (upstream's tests use them so); one that reads it says
    # why it cannot.
    plain = StoreBackend(namespace=lambda _: ("x",), store=store)
    assert plain.write("/a.md", "a").error is None
    assert store.get(("x",), "/a.md") is not None
    reading = StoreBackend(namespace=lambda rt: (rt.context["user_id"],), store=store)
    with pytest.raises(RuntimeError, match="give a tuple"):
        reading.ls("/")
