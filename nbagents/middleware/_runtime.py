"""The backend a middleware hook works on, when the backend is a factory of the tool runtime."""

from __future__ import annotations

from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config

from nbagents.backends import BackendProtocol, is_backend, resolve_backend


def hook_runtime(state: Any, runtime: Any, config: RunnableConfig | None = None) -> ToolRuntime:
    """A tool runtime for a hook, which has no tool call: the hook's state, context and store."""
    if config is None:
        try:
            config = get_config()
        except RuntimeError:
            config = {}
    return ToolRuntime(
        state=state,
        context=getattr(runtime, "context", None),
        config=config,
        stream_writer=getattr(runtime, "stream_writer", None) or _no_stream,
        tool_call_id=None,
        store=getattr(runtime, "store", None),
    )


def backend_for_hook(backend: Any, state: Any, runtime: Any) -> BackendProtocol:
    """``backend`` itself, or what the factory builds for a hook of the running node."""
    if is_backend(backend):
        return backend  # type: ignore[no-any-return]
    return resolve_backend(backend, hook_runtime(state, runtime))


def _no_stream(_chunk: Any) -> None:
    return None
