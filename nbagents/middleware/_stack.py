"""The default middleware of a deep agent, merged with the caller's by name as deepagents does."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware

__all__ = ["REQUIRED_MIDDLEWARE", "check_excluded", "drop_excluded", "merge_by_name"]

Middleware = AgentMiddleware[Any, Any]

REQUIRED_MIDDLEWARE = frozenset({"FilesystemMiddleware", "SubAgentMiddleware"})
"""What ``excluded_middleware`` may not remove: the file tools and the ``task`` tool rest on
them (deepagents refuses the same two)."""


def merge_by_name(
    base: Sequence[Middleware],
    custom: Iterable[Middleware],
    *,
    core: Collection[str] | None = None,
) -> list[Middleware]:
    """``base`` with each ``custom`` middleware that shares a name with one of it put in its
    place; the others go right after the last middleware named in ``core`` (ahead of the
    stack's tail: skills, prompt caching, memory), or at the end without ``core``.

    LangChain's ``create_agent`` refuses two middleware of one name, so a caller's
    ``SummarizationMiddleware(...)`` must replace the default one, not join it.
    """
    names = {m.name for m in base}
    replacing: dict[str, Middleware] = {}
    adding: list[Middleware] = []
    for m in custom:
        (replacing.__setitem__(m.name, m) if m.name in names else adding.append(m))
    merged = [replacing.get(m.name, m) for m in base]
    if core is None:
        return merged + adding
    at = max((i + 1 for i, m in enumerate(merged) if m.name in core), default=len(merged))
    return [*merged[:at], *adding, *merged[at:]]


def drop_excluded(stack: Sequence[Middleware], excluded: Collection[str]) -> list[Middleware]:
    """``stack`` without the middleware named in ``excluded``."""
    return [m for m in stack if m.name not in excluded]


def check_excluded(excluded: Iterable[str]) -> frozenset[str]:
    """``excluded`` as a set of names, refusing the required middleware."""
    if isinstance(excluded, str):
        raise TypeError("excluded_middleware must be a list of middleware names, not one string.")
    names = frozenset(excluded)
    required = sorted(names & REQUIRED_MIDDLEWARE)
    if required:
        raise ValueError(
            f"excluded_middleware cannot remove {required}: the file tools and the task tool "
            f"rest on them. Leave out backend= for an agent without file tools."
        )
    return names
