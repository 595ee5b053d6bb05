"""Which agent is calling a chat model: the key both the scripted model and cassettes use."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables.config import ensure_config

__all__ = ["calling_agent"]


def calling_agent(run_manager: Any) -> str | None:
    """The ``lc_agent_name`` of the agent whose model call this is, if any.

    ``create_agent`` puts the name in the run's metadata. ``BaseChatModel.stream`` calls the
    model without its run manager, but the calling graph node's config is still in the context.
    """
    metadata = getattr(run_manager, "metadata", None)
    if metadata is None:
        metadata = ensure_config().get("metadata") or {}
    name = metadata.get("lc_agent_name")
    return name if isinstance(name, str) and name else None
