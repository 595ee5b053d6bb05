"""The store backend: files in a LangGraph ``BaseStore``, kept across threads and restarts."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, TypeAlias

from langgraph.config import get_store
from langgraph.runtime import Runtime, get_runtime
from langgraph.store.base import BaseStore, PutOp

from nbagents.backends._base import FileBackend, file_info
from nbagents.backends._paths import is_under
from nbagents.backends._protocol import FileData, FileInfo

NamespaceFactory: TypeAlias = Callable[[Runtime[Any]], tuple[str, ...]]
"""Picks the namespace of a call from its runtime: ``lambda rt: (rt.context.user, "files")``."""

# Store namespaces are matched by prefix and some stores treat "*" or "." specially: a component
# taken from a user id must not widen a lookup to someone else's files.
_COMPONENT = re.compile(r"^[A-Za-z0-9_\-.@+:~]+$")
_PAGE = 100


def check_namespace(namespace: tuple[str, ...]) -> tuple[str, ...]:
    """``namespace`` if every component is a safe, non-empty string; else a ``ValueError``."""
    if not isinstance(namespace, tuple) or not namespace:
        raise ValueError(f"A store namespace is a non-empty tuple of strings, not {namespace!r}.")
    for component in namespace:
        if not isinstance(component, str):
            raise TypeError(
                f"Store namespace components are strings, got {type(component).__name__} "
                f"{component!r}."
            )
        if not _COMPONENT.match(component):
            raise ValueError(
                f"Store namespace component {component!r} is empty or has disallowed characters: "
                "use letters, digits and - _ . @ + : ~ only (no wildcards)."
            )
    return namespace


class StoreBackend(FileBackend):
    """Files kept in a LangGraph store, one item per file, under a namespace.

    **Shared by nature**: every thread, agent and process that uses the same store and namespace
    sees the same files, so they outlive a conversation and an agent rebuild (a
    ``PostgresStore`` keeps them across restarts). Scope them with ``namespace``: a tuple, or a
    factory called with the run's ``Runtime`` each time, such as
    ``lambda rt: ("users", rt.context["user_id"], "files")`` for files per user.

    ``store`` defaults to the store the agent was compiled with (``create_deep_agent(...,
    store=...)``), found when an operation runs; pass one to use the backend outside an agent.
    """

    def __init__(
        self,
        *,
        namespace: tuple[str, ...] | NamespaceFactory,
        store: BaseStore | None = None,
    ) -> None:
        if isinstance(namespace, tuple):
            check_namespace(namespace)
        elif not callable(namespace):
            raise TypeError(
                "StoreBackend(namespace=...) takes a tuple of strings or a function of the "
                f"runtime that returns one, not {type(namespace).__name__}."
            )
        self._namespace = namespace
        self._store = store

    def __repr__(self) -> str:
        return f"StoreBackend(namespace={self._namespace!r}, store={self._store!r})"

    @property
    def store(self) -> BaseStore:
        if self._store is not None:
            return self._store
        try:
            return get_store()
        except (RuntimeError, KeyError, AttributeError):
            raise RuntimeError(
                "StoreBackend has no store: give the agent one (create_deep_agent(..., "
                "store=InMemoryStore())) or the backend (StoreBackend(store=..., namespace=...))."
            ) from None

    @property
    def namespace(self) -> tuple[str, ...]:
        """The namespace of the running call."""
        if isinstance(self._namespace, tuple):
            return self._namespace
        try:
            runtime: Runtime[Any] | None = get_runtime()
        except (RuntimeError, KeyError):
            # Outside a run (the backend used directly) a factory that ignores its argument
            # still works, as upstream's does.
            runtime = None
        try:
            namespace = self._namespace(runtime)  # type: ignore[arg-type]
        except (AttributeError, TypeError) as error:
            # Only reading the missing runtime is explained; the function's own errors pass.
            if runtime is not None:
                raise
            raise RuntimeError(
                "StoreBackend's namespace function reads the run's runtime, and there is none "
                "outside a LangGraph graph execution (the backend used directly). Use it in an "
                "agent, or give a tuple: StoreBackend(namespace=(...))."
            ) from error
        return check_namespace(namespace)

    def _get(self, path: str) -> FileData | None:
        item = self.store.get(self.namespace, path)
        return None if item is None else _as_data(item.value)

    def _put(self, path: str, data: FileData) -> None:
        self.store.put(self.namespace, path, dict(data))

    def _remove(self, path: str) -> list[str]:
        store, namespace = self.store, self.namespace
        gone = [info["path"] for info in self._items(store, namespace, path)]
        # One round trip for a whole directory: a remote store answers each call over the network.
        if gone:
            store.batch([PutOp(namespace, name, None) for name in gone])
        return gone

    def _files(self, base: str) -> list[FileInfo]:
        return list(self._items(self.store, self.namespace, base))

    @staticmethod
    def _items(store: BaseStore, namespace: tuple[str, ...], base: str) -> Iterator[FileInfo]:
        offset = 0
        while True:
            page = store.search(namespace, limit=_PAGE, offset=offset)
            for item in page:
                # search matches by prefix: a longer namespace is someone else's.
                if tuple(item.namespace) == namespace and is_under(item.key, base):
                    yield file_info(item.key, _as_data(item.value))
            if len(page) < _PAGE:
                return
            offset += _PAGE


def _as_data(value: dict[str, Any]) -> FileData:
    data: FileData = {
        "content": value.get("content", ""),
        "encoding": value.get("encoding", "utf-8"),
    }
    for stamp in ("created_at", "modified_at"):
        if isinstance(value.get(stamp), str):
            data[stamp] = value[stamp]  # type: ignore[literal-required]
    return data
