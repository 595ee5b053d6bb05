"""Tools that take LangGraph's ``ToolRuntime`` without paying for it on every call.

``StructuredTool.from_function`` puts an injected ``runtime: ToolRuntime`` parameter into the
tool's argument schema. On every call LangChain validates the arguments with that schema and
then ``model_dump()``s the result only to list its keys, which serializes the runtime: the
whole graph state. For the main agent's ``task`` tool that is every message of the
conversation, including the AI message holding all the parallel calls, so each of N parallel
``task`` calls cost O(N) and a wide fan-out spent most of its time dumping state it never
read. It also resolves the function's type hints (``eval`` of string annotations) on every call
to look for a ``RunnableConfig`` parameter.

:func:`runtime_tool` builds the same tool (the same name, description and model-facing schema)
with an argument schema of the model's arguments only, and a ``_run``/``_arun`` that call the
function directly. LangChain and LangGraph still find the ``runtime`` parameter, and inject
it, from the function's signature, as they do for every tool.
"""

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables.config import run_in_executor
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel

__all__ = ["runtime_tool"]


class _RuntimeTool(StructuredTool):
    """A ``StructuredTool`` whose function takes no ``config`` or ``callbacks`` parameter
    (:func:`runtime_tool` checked once). ``_run`` and ``_arun`` take neither, so LangChain,
    which reads their type hints on every call, passes them neither; this module's annotations
    are not postponed so that those hints need no evaluation."""

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        if self.func is None:
            raise NotImplementedError(f"Tool {self.name!r} does not support sync invocation.")
        return self.func(*args, **kwargs)

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        if self.coroutine is None:
            # As LangChain's default: the sync function on the event loop's executor.
            return await run_in_executor(None, self._run, *args, **kwargs)
        return await self.coroutine(*args, **kwargs)


def runtime_tool(
    func: Callable[..., Any] | None,
    coroutine: Callable[..., Awaitable[Any]] | None = None,
    *,
    description: str,
    name: str | None = None,
) -> BaseTool:
    """A tool of ``func``/``coroutine`` (which take an injected ``runtime``), cheap to call.

    Its argument schema is the schema the model sees (``tool_call_schema``): the injected
    parameters are left out, so validating a call never touches the graph state.
    """
    inferred = StructuredTool.from_function(
        func=func, coroutine=coroutine, name=name, description=description
    )
    schema = inferred.tool_call_schema
    if not (isinstance(schema, type) and issubclass(schema, BaseModel) and schema.model_fields):
        # LangChain calls a tool whose schema has no fields with no arguments at all, which
        # would leave out the runtime too: only the inferred schema (which holds it) works.
        return inferred
    passed = {"config", "callbacks", "run_manager"}
    for fn in (func, coroutine):
        if fn is not None and passed & set(_parameters(fn)):
            # Such a function needs StructuredTool's own injection of those objects.
            return inferred
    return _RuntimeTool(
        name=inferred.name,
        description=inferred.description,
        args_schema=schema,
        func=func,
        coroutine=coroutine,
        return_direct=inferred.return_direct,
        response_format=inferred.response_format,
    )


def _parameters(fn: Callable[..., Any]) -> list[str]:
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # a builtin without a signature takes none of them
        return []
