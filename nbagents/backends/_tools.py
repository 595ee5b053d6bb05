"""The file tools: ``ls``, ``read_file``, ``write_file``, ``edit_file``, ``delete``, ``glob``,
``grep``."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from nbagents._runtime_tools import runtime_tool
from nbagents.backends._base import failure_text
from nbagents.backends._evict import results_dir
from nbagents.backends._format import (
    NO_MATCHES,
    GrepMode,
    format_listing,
    format_matches,
    format_read,
    regex_hint,
    truncate,
)
from nbagents.backends._protocol import agrep_at_most, grep_at_most, resolve_backend
from nbagents.backends.prompts import LARGE_TOOL_RESULTS_DIR, TOOL_DESCRIPTIONS

DEFAULT_READ_LIMIT = 2000
BAD_MAX_COUNT = "Error: max_count must be 1 or more (leave it out for every match)."

Shape = Callable[[Any, dict[str, Any]], str]
"""Turns a backend result (without error) and the tool's arguments into the tool's answer."""

_FAILS = (ValueError, OSError, NotImplementedError)
"""What a backend raises for a request that cannot be done: an error result, not a crash."""


def _message(runtime: ToolRuntime[Any, Any], name: str, text: str, *, ok: bool) -> ToolMessage:
    if not ok and not text.startswith("Error"):
        text = f"Error: {text}"
    return ToolMessage(
        content=text,
        tool_call_id=runtime.tool_call_id or "",
        name=name,
        status="success" if ok else "error",
    )


def _file_tool(
    backend: Any, signature: Callable[..., Any], shape: Shape, description: str
) -> BaseTool:
    """The file tool named and typed as ``signature`` (whose body is never run): it calls the
    backend's method of that name (``read`` for ``read_file``) and answers with ``shape`` of
    the result.

    ``glob`` prefixes the answer to any exception (``glob failed: ...``, as upstream's); the
    other tools turn only :data:`_FAILS` into error results. ``grep`` calls
    :func:`grep_at_most` (:func:`agrep_at_most`), and ``output_mode`` is for its answer only.
    """
    name = signature.__name__
    method = name.removesuffix("_file")
    parameters = inspect.signature(signature)
    catch: tuple[type[Exception], ...] = (Exception,) if method == "glob" else _FAILS

    def split(args: Any, kwargs: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
        bound = parameters.bind(*args, **kwargs)
        bound.apply_defaults()
        given = dict(bound.arguments)
        runtime = given.pop("runtime")
        extra = {"output_mode": given.pop("output_mode")} if method == "grep" else {}
        return runtime, given, extra

    def failed(runtime: ToolRuntime[Any, Any], error: Exception) -> ToolMessage:
        if method == "glob":
            why = f"glob failed: {error}"
        elif isinstance(error, NotImplementedError):
            why = "this backend does not support the operation."
        else:
            why = failure_text(error)
        return _message(runtime, name, truncate(why), ok=False)

    def shaped(runtime: ToolRuntime[Any, Any], result: Any, args: Any) -> ToolMessage:
        error = getattr(result, "error", None)
        if not error:
            return _message(runtime, name, shape(result, args), ok=True)
        text = truncate(str(error))
        if method == "grep" and result.matches:
            # A search that failed part of the way: the matches found so far still help.
            text += f"\n\nPartial matches:\n{shape(result, args)}"
        return _message(runtime, name, text, ok=False)

    @functools.wraps(signature)
    def run(*args: Any, **kwargs: Any) -> ToolMessage:
        runtime, given, extra = split(args, kwargs)
        try:
            if given.get("max_count") is not None and given["max_count"] < 1:
                raise ValueError(BAD_MAX_COUNT)
            found = resolve_backend(backend, runtime)
            if method == "grep":
                result = grep_at_most(found, **given)
            else:
                result = _method(found, method)(**given)
        except catch as error:
            return failed(runtime, error)
        return shaped(runtime, result, {**given, **extra})

    @functools.wraps(signature)
    async def arun(*args: Any, **kwargs: Any) -> ToolMessage:
        runtime, given, extra = split(args, kwargs)
        try:
            if given.get("max_count") is not None and given["max_count"] < 1:
                raise ValueError(BAD_MAX_COUNT)
            found = resolve_backend(backend, runtime)
            if method == "grep":
                result = await agrep_at_most(found, **given)
            elif (twin := getattr(found, "a" + method, None)) is not None:
                result = await twin(**given)
            else:
                result = await asyncio.to_thread(_method(found, method), **given)
        except catch as error:
            return failed(runtime, error)
        return shaped(runtime, result, {**given, **extra})

    return runtime_tool(run, arun, description=description)


def _method(backend: Any, name: str) -> Callable[..., Any]:
    method = getattr(backend, name, None)
    if not callable(method):
        # A backend needs only ls, read, write, edit, glob and grep (see is_backend): one
        # without ``delete`` answers as one whose ``delete`` raises NotImplementedError.
        raise NotImplementedError(name)
    return method  # type: ignore[no-any-return]


def _read(result: Any, args: dict[str, Any]) -> str:
    return format_read(args["file_path"], result, args["offset"], args["limit"])


def _edit(result: Any, args: dict[str, Any]) -> str:
    count = result.occurrences or 0
    times = "1 occurrence" if count == 1 else f"{count} occurrences"
    return f"Replaced {times} in {result.path or args['file_path']}."


def _grep(result: Any, args: dict[str, Any]) -> str:
    matches = result.matches or []
    # A search can also stop at its time limit, before max_count matches.
    limit = args["max_count"]
    cut_at = limit if result.truncated and limit is not None and len(matches) >= limit else None
    text = format_matches(matches, args["output_mode"], truncated=result.truncated, cut_at=cut_at)
    hint = "" if matches or result.truncated else regex_hint(args["pattern"])
    return f"{NO_MATCHES}\n\n{hint}" if hint else text


# Each tool's signature is spelled out (not **kwargs) so LangChain can infer its argument schema
# and inject `runtime`; the bodies are never run (see _file_tool).


def ls(runtime: ToolRuntime[Any, Any], path: str = "/") -> Any: ...


def read_file(
    runtime: ToolRuntime[Any, Any],
    file_path: str,
    offset: int = 0,
    limit: int = DEFAULT_READ_LIMIT,
) -> Any: ...


def write_file(runtime: ToolRuntime[Any, Any], file_path: str, content: str) -> Any: ...


def edit_file(
    runtime: ToolRuntime[Any, Any],
    file_path: str,
    old_string: str,
    new_string: str,
    replace_all: bool = False,
) -> Any: ...


def delete(runtime: ToolRuntime[Any, Any], file_path: str) -> Any: ...


def glob(runtime: ToolRuntime[Any, Any], pattern: str, path: str = "/") -> Any: ...


def grep(
    runtime: ToolRuntime[Any, Any],
    pattern: str,
    path: str = "/",
    glob: str | None = None,
    output_mode: GrepMode = "files_with_matches",
    max_count: int | None = None,
) -> Any: ...


def build_file_tools(backend: Any, descriptions: Mapping[str, str] | None = None) -> list[BaseTool]:
    """The seven file tools bound to ``backend`` (an instance or a factory of the tool runtime).

    ``descriptions`` replaces the description of the tools it names (by tool name).
    """
    # The descriptions name where large results go: under the backend's own artifacts root.
    moved = results_dir(backend)
    chosen = {k: v.replace(LARGE_TOOL_RESULTS_DIR, moved) for k, v in TOOL_DESCRIPTIONS.items()}
    chosen.update(descriptions or {})
    shapes: list[tuple[Callable[..., Any], Shape]] = [
        (ls, lambda result, args: format_listing(result.entries or [])),
        (read_file, _read),
        (
            write_file,
            lambda result, args: (
                f"Wrote {result.path or args['file_path']} ({len(args['content'])} characters)."
            ),
        ),
        (edit_file, _edit),
        (delete, lambda result, args: f"Deleted {result.path or args['file_path']}."),
        (
            glob,
            lambda result, args: format_listing(result.matches or [], truncated=result.truncated),
        ),
        (grep, _grep),
    ]
    return [_file_tool(backend, f, shape, chosen[f.__name__].rstrip()) for f, shape in shapes]
