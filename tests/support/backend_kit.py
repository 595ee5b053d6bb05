"""Helpers for backend tests: a state backend run inside a real graph, result checks."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypedDict, TypeVar

from langgraph.graph import START, StateGraph

from nbagents.backends import FileData, StateBackend, files_reducer

R = TypeVar("R")


class _State(TypedDict, total=False):
    files: Annotated[dict[str, FileData], files_reducer]
    out: Any


def in_graph(
    files: Mapping[str, Any], operation: Callable[[StateBackend], R]
) -> tuple[R, dict[str, FileData]]:
    """``operation(StateBackend())`` run as a graph node over ``files``; its result and the files
    after the step (the backend's writes applied by the reducer)."""

    def node(state: _State) -> dict[str, Any]:
        return {"out": operation(StateBackend())}

    graph = StateGraph(_State)
    graph.add_node("node", node)
    graph.add_edge(START, "node")
    final = graph.compile().invoke({"files": dict(files)})
    return final["out"], final.get("files", {})


def record(content: str, encoding: str = "utf-8") -> FileData:
    return {
        "content": content,
        "encoding": encoding,
        "created_at": "2026-01-01T00:00:00+00:00",
        "modified_at": "2026-01-01T00:00:00+00:00",
    }


def ok(result: R) -> R:
    """``result`` after checking it carries no error."""
    error = getattr(result, "error", None)
    assert error is None, f"unexpected error: {error}"
    return result


def failed(result: Any, pattern: str) -> None:
    """Check that ``result`` failed with an error matching ``pattern``."""
    assert result.error is not None, f"expected an error matching {pattern!r}, got {result!r}"
    assert re.search(pattern, result.error), f"{result.error!r} does not match {pattern!r}"


def paths(entries: list[Any] | None) -> list[str]:
    assert entries is not None
    return [e["path"] for e in entries]
