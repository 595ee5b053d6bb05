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


class _FileTool:
    """One file tool: the backend method it calls, and how it answers.

    ``raised`` prefixes the answer to any exception (``glob failed: ...``, as upstream's); other
    tools turn only :data:`_FAILS` into error results. ``calls`` are (sync, async) functions of
    (backend, **args) called instead of the method; ``shown`` names arguments of the answer only.
    """

    def __init__(
        self,
        method: str,
        shape: Shape,
        *,
        raised: str = "",
        calls: tuple[Callable[..., Any], Callable[..., Any]] | None = None,
        shown: tuple[str, ...] = (),
    ) -> None:
        self.method, self.shape, self.raised, self.calls = method, shape, raised, calls
        self.shown = shown
        self.name, self.backend = method, None
        self.catch: tuple[type[Exception], ...] = (Exception,) if raised else _FAILS

    def tool(self, backend: Any, signature: Callable[..., Any], description: str) -> BaseTool:
        """The tool named and typed as ``signature`` (whose body is never run)."""
        self.name, self.backend = signature.__name__, backend
        parameters = inspect.signature(signature)

        def split(args: Any, kwargs: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
            bound = parameters.bind(*args, **kwargs)
            bound.apply_defaults()
            given = dict(bound.arguments)
            runtime = given.pop("runtime")
            shown = {k: given.pop(k) for k in self.shown}
            return runtime, given, shown

        @functools.wraps(signature)
        def run(*args: Any, **kwargs: Any) -> ToolMessage:
            runtime, given, shown = split(args, kwargs)
            return self._refused(runtime, given) or self._answer(runtime, given, shown)

        @functools.wraps(signature)
        async def arun(*args: Any, **kwargs: Any) -> ToolMessage:
            runtime, given, shown = split(args, kwargs)
            return self._refused(runtime, given) or await self._aanswer(runtime, given, shown)

        return runtime_tool(run, arun, description=description)

    def _refused(self, runtime: ToolRuntime[Any, Any], args: dict[str, Any]) -> ToolMessage | None:
        if args.get("max_count") is not None and args["max_count"] < 1:
            return _message(runtime, self.name, BAD_MAX_COUNT, ok=False)
        return None

    def _answer(self, runtime: ToolRuntime[Any, Any], args: Any, shown: Any) -> ToolMessage:
        try:
            backend = resolve_backend(self.backend, runtime)
            if self.calls is not None:
                result = self.calls[0](backend, **args)
            else:
                result = _method(backend, self.method)(**args)
        except self.catch as error:
            return self._failed(runtime, error)
        return self._shaped(runtime, result, {**args, **shown})

    async def _aanswer(self, runtime: ToolRuntime[Any, Any], args: Any, shown: Any) -> ToolMessage:
        try:
            backend = resolve_backend(self.backend, runtime)
            if self.calls is not None:
                result = await self.calls[1](backend, **args)
            elif (twin := getattr(backend, "a" + self.method, None)) is not None:
                result = await twin(**args)
            else:
                result = await asyncio.to_thread(_method(backend, self.method), **args)
        except self.catch as error:
            return self._failed(runtime, error)
        return self._shaped(runtime, result, {**args, **shown})

    def _failed(self, runtime: ToolRuntime[Any, Any], error: Exception) -> ToolMessage:
        why = f"{self.raised}: {error}" if self.raised else _why(error)
        return _message(runtime, self.name, truncate(why), ok=False)

    def _shaped(self, runtime: ToolRuntime[Any, Any], result: Any, args: Any) -> ToolMessage:
        error = getattr(result, "error", None)
        if not error:
            return _message(runtime, self.name, self.shape(result, args), ok=True)
        text = truncate(str(error))
        if self.method == "grep" and result.matches:
            # A search that failed part of the way: the matches found so far still help.
            text += f"\n\nPartial matches:\n{self.shape(result, args)}"
        return _message(runtime, self.name, text, ok=False)


def _method(backend: Any, name: str) -> Callable[..., Any]:
    method = getattr(backend, name, None)
    if not callable(method):
        # A backend needs only ls, read, write, edit, glob and grep (see is_backend): one
        # without ``delete`` answers as one whose ``delete`` raises NotImplementedError.
        raise NotImplementedError(name)
    return method  # type: ignore[no-any-return]


def _why(error: Exception) -> str:
    if isinstance(error, NotImplementedError):
        return "this backend does not support the operation."
    return failure_text(error)


def _ls(result: Any, args: dict[str, Any]) -> str:
    return format_listing(result.entries or [])


def _read(result: Any, args: dict[str, Any]) -> str:
    return format_read(args["file_path"], result, args["offset"], args["limit"])


def _write(result: Any, args: dict[str, Any]) -> str:
    return f"Wrote {result.path or args['file_path']} ({len(args['content'])} characters)."


def _edit(result: Any, args: dict[str, Any]) -> str:
    count = result.occurrences or 0
    times = "1 occurrence" if count == 1 else f"{count} occurrences"
    return f"Replaced {times} in {result.path or args['file_path']}."


def _delete(result: Any, args: dict[str, Any]) -> str:
    return f"Deleted {result.path or args['file_path']}."


def _glob(result: Any, args: dict[str, Any]) -> str:
    return format_listing(result.matches or [], truncated=result.truncated)


def _grep(result: Any, args: dict[str, Any]) -> str:
    matches = result.matches or []
    # A search can also stop at its time limit, before max_count matches.
    limit = args["max_count"]
    cut_at = limit if result.truncated and limit is not None and len(matches) >= limit else None
    text = format_matches(matches, args["output_mode"], truncated=result.truncated, cut_at=cut_at)
    hint = "" if matches or result.truncated else regex_hint(args["pattern"])
    return f"{NO_MATCHES}\n\n{hint}" if hint else text


# Each tool's signature is spelled out (not **kwargs) so LangChain can infer its argument schema
# and inject `runtime`; the bodies are never run (see _FileTool.tool).


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
    tools: list[tuple[_FileTool, Callable[..., Any]]] = [
        (_FileTool("ls", _ls), ls),
        (_FileTool("read", _read), read_file),
        (_FileTool("write", _write), write_file),
        (_FileTool("edit", _edit), edit_file),
        (_FileTool("delete", _delete), delete),
        (_FileTool("glob", _glob, raised="glob failed"), glob),
        (
            _FileTool("grep", _grep, calls=(grep_at_most, agrep_at_most), shown=("output_mode",)),
            grep,
        ),
    ]
    # The descriptions name where large results go: under the backend's own artifacts root.
    moved = results_dir(backend)
    chosen = {k: v.replace(LARGE_TOOL_RESULTS_DIR, moved) for k, v in TOOL_DESCRIPTIONS.items()}
    chosen.update(descriptions or {})
    return [t.tool(backend, f, chosen[f.__name__].rstrip()) for t, f in tools]
