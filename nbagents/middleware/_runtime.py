"""The backend a middleware hook works on, when the backend is a factory of the tool runtime."""

from __future__ import annotations

from typing import Any

from langchain.tools import ToolRuntime
from langgraph.config import get_config

from nbagents.backends import BackendProtocol, is_backend, resolve_backend


def backend_for_hook(backend: Any, state: Any, runtime: Any) -> BackendProtocol:
    """``backend`` itself, or what the factory builds for a hook of the running node.

    nbagents accepts a factory called with each tool call's runtime; a hook has no tool call, so
    the factory gets a runtime made of the hook's state, context and store.
    """
    if is_backend(backend):
        return backend  # type: ignore[no-any-return]
    try:
        config = get_config()
    except RuntimeError:
        config = {}
    tool_runtime = ToolRuntime(
        state=state,
        context=getattr(runtime, "context", None),
        config=config,
        stream_writer=getattr(runtime, "stream_writer", None) or _no_stream,
        tool_call_id=None,
        store=getattr(runtime, "store", None),
    )
    return resolve_backend(backend, tool_runtime)


def _no_stream(_chunk: Any) -> None:
    return None
