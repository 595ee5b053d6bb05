"""Sync tools of built sub-agents run on nbagents' own threads when the run is async.

Under ``ainvoke`` LangChain runs a sync tool on the event loop's default executor, of
``min(32, cpus + 4)`` threads, which a wide fan-out of sub-agents would queue on. The tools given
to built sub-agents get a coroutine on a pool sized like ``max_concurrency`` instead.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tools import tool as as_tool

from nbagents._contract import MAX_PARALLEL_SUBAGENTS

__all__ = ["POOL_SIZE", "with_threaded_coroutines"]

POOL_SIZE = MAX_PARALLEL_SUBAGENTS
_pool = ThreadPoolExecutor(max_workers=POOL_SIZE, thread_name_prefix="nbagents-tool")
"""Made empty: its threads start with the first tool call it runs."""
# A function that takes these gets LangChain objects made for the sync path; leave it alone.
_RUN_PARAMETERS = frozenset({"callbacks", "run_manager", "config"})


def with_threaded_coroutines(tools: Sequence[Any]) -> list[Any]:
    """``tools`` with every sync-only ``StructuredTool`` given a coroutine on nbagents' pool."""
    return [_threaded(t) for t in tools]


def _threaded(tool: Any) -> Any:
    if callable(tool) and not isinstance(tool, BaseTool):
        tool = as_tool(tool)  # what create_agent would do with a plain function
    if not isinstance(tool, StructuredTool) or tool.func is None or tool.coroutine is not None:
        return tool
    if _RUN_PARAMETERS & set(inspect.signature(tool.func).parameters):
        return tool
    return tool.model_copy(update={"coroutine": _on_pool(tool.func)})


def _on_pool(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)  # the same signature, so argument injection sees the same parameters
    async def run(*args: Any, **kwargs: Any) -> Any:
        context = contextvars.copy_context()  # callbacks and config travel in context vars
        call = functools.partial(context.run, func, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(_pool, call)

    return run
