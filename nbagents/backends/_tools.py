"""The file tools: ``ls``, ``read_file``, ``write_file``, ``edit_file``, ``delete``, ``glob``,
``grep``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from nbagents._contract import READ_FILE_TOOL
from nbagents._runtime_tools import runtime_tool
from nbagents.backends._evict import results_dir
from nbagents.backends._format import (
    NO_FILES,
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

ToolOutput = ToolMessage
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
    """One file tool: which backend method it calls with which arguments, and its answer.

    ``raised`` names what the answer says when the backend raises (``glob`` says "glob failed:
    ..." for any exception, as upstream's; the other tools turn only the usual failures,
    :data:`_FAILS`, into error results).
    """

    def __init__(
        self,
        name: str,
        method: str,
        backend: Any,
        shape: Shape,
        *,
        raised: str = "",
        calls: tuple[Callable[..., Any], Callable[..., Any]] | None = None,
    ) -> None:
        self.name, self.method, self.backend, self.shape = name, method, backend, shape
        self.raised = raised
        self.calls = calls
        """Functions of (backend, **args) to call instead of the method, sync and async."""
        self.catch: tuple[type[Exception], ...] = (Exception,) if raised else _FAILS

    def run(
        self, runtime: ToolRuntime[Any, Any], shown: Mapping[str, Any] | None = None, **args: Any
    ) -> ToolOutput:
        """Call the backend with ``args``; ``shown`` are arguments of the answer only."""
        try:
            backend = resolve_backend(self.backend, runtime)
            if self.calls is not None:
                result = self.calls[0](backend, **args)
            else:
                result = _method(backend, self.method)(**args)
        except self.catch as error:
            return self._failed(runtime, error)
        return self._answer(runtime, result, {**args, **(shown or {})})

    async def arun(
        self, runtime: ToolRuntime[Any, Any], shown: Mapping[str, Any] | None = None, **args: Any
    ) -> ToolOutput:
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
        return self._answer(runtime, result, {**args, **(shown or {})})

    def _failed(self, runtime: ToolRuntime[Any, Any], error: Exception) -> ToolMessage:
        why = f"{self.raised}: {error}" if self.raised else _why(error)
        return _message(runtime, self.name, truncate(why), ok=False)

    def _answer(self, runtime: ToolRuntime[Any, Any], result: Any, args: Any) -> ToolOutput:
        error = getattr(result, "error", None)
        if error and self.method == "grep" and result.matches:
            # A search that failed part of the way: the matches found so far still help.
            found = self.shape(result, args)
            text = f"{truncate(str(error))}\n\nPartial matches:\n{found}"
            return _message(runtime, self.name, text, ok=False)
        if error:
            return _message(runtime, self.name, truncate(str(error)), ok=False)
        return _message(runtime, self.name, self.shape(result, args), ok=True)


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
    if isinstance(error, OSError):
        return f"{type(error).__name__}: {error.strerror or error}"
    return str(error)


def _ls(result: Any, args: dict[str, Any]) -> str:
    return format_listing(result.entries or [], NO_FILES)


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
    return format_listing(result.matches or [], NO_FILES, truncated=result.truncated)


def _grep(result: Any, args: dict[str, Any]) -> str:
    matches = result.matches or []
    # A search can also stop at its time limit, before max_count matches.
    limit = args["max_count"]
    cut_at = limit if result.truncated and limit is not None and len(matches) >= limit else None
    text = format_matches(matches, args["output_mode"], truncated=result.truncated, cut_at=cut_at)
    hint = "" if matches or result.truncated else regex_hint(args["pattern"])
    return f"{NO_MATCHES}\n\n{hint}" if hint else text


# Each tool's signature is spelled out (not **kwargs) so LangChain can infer its argument schema
# and inject `runtime`. Its description is the one of TOOL_DESCRIPTIONS, or the caller's.


def build_file_tools(backend: Any, descriptions: Mapping[str, str] | None = None) -> list[BaseTool]:
    """The seven file tools bound to ``backend`` (an instance or a factory of the tool runtime).

    ``descriptions`` replaces the description of the tools it names (by tool name).
    """
    ls_ = _FileTool("ls", "ls", backend, _ls)
    read_ = _FileTool(READ_FILE_TOOL, "read", backend, _read)
    write_ = _FileTool("write_file", "write", backend, _write)
    edit_ = _FileTool("edit_file", "edit", backend, _edit)
    delete_ = _FileTool("delete", "delete", backend, _delete)
    glob_ = _FileTool("glob", "glob", backend, _glob, raised="glob failed")
    grep_ = _FileTool("grep", "grep", backend, _grep, calls=(grep_at_most, agrep_at_most))

    def ls(runtime: ToolRuntime[Any, Any], path: str = "/") -> ToolOutput:
        return ls_.run(runtime, path=path)

    async def als(runtime: ToolRuntime[Any, Any], path: str = "/") -> ToolOutput:
        return await ls_.arun(runtime, path=path)

    def read_file(
        runtime: ToolRuntime[Any, Any],
        file_path: str,
        offset: int = 0,
        limit: int = DEFAULT_READ_LIMIT,
    ) -> ToolOutput:
        return read_.run(runtime, file_path=file_path, offset=offset, limit=limit)

    async def aread_file(
        runtime: ToolRuntime[Any, Any],
        file_path: str,
        offset: int = 0,
        limit: int = DEFAULT_READ_LIMIT,
    ) -> ToolOutput:
        return await read_.arun(runtime, file_path=file_path, offset=offset, limit=limit)

    def write_file(runtime: ToolRuntime[Any, Any], file_path: str, content: str) -> ToolOutput:
        return write_.run(runtime, file_path=file_path, content=content)

    async def awrite_file(
        runtime: ToolRuntime[Any, Any], file_path: str, content: str
    ) -> ToolOutput:
        return await write_.arun(runtime, file_path=file_path, content=content)

    def edit_file(
        runtime: ToolRuntime[Any, Any],
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> ToolOutput:
        return edit_.run(
            runtime,
            file_path=file_path,
            old_string=old_string,
            new_string=new_string,
            replace_all=replace_all,
        )

    async def aedit_file(
        runtime: ToolRuntime[Any, Any],
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> ToolOutput:
        return await edit_.arun(
            runtime,
            file_path=file_path,
            old_string=old_string,
            new_string=new_string,
            replace_all=replace_all,
        )

    def delete(runtime: ToolRuntime[Any, Any], file_path: str) -> ToolOutput:
        return delete_.run(runtime, file_path=file_path)

    async def adelete(runtime: ToolRuntime[Any, Any], file_path: str) -> ToolOutput:
        return await delete_.arun(runtime, file_path=file_path)

    def glob(runtime: ToolRuntime[Any, Any], pattern: str, path: str = "/") -> ToolOutput:
        return glob_.run(runtime, pattern=pattern, path=path)

    async def aglob(runtime: ToolRuntime[Any, Any], pattern: str, path: str = "/") -> ToolOutput:
        return await glob_.arun(runtime, pattern=pattern, path=path)

    def grep(
        runtime: ToolRuntime[Any, Any],
        pattern: str,
        path: str = "/",
        glob: str | None = None,
        output_mode: GrepMode = "files_with_matches",
        max_count: int | None = None,
    ) -> ToolOutput:
        if max_count is not None and max_count < 1:
            return _message(runtime, "grep", BAD_MAX_COUNT, ok=False)
        shown = {"output_mode": output_mode}
        args = {"pattern": pattern, "path": path, "glob": glob, "max_count": max_count}
        return grep_.run(runtime, shown, **args)

    async def agrep(
        runtime: ToolRuntime[Any, Any],
        pattern: str,
        path: str = "/",
        glob: str | None = None,
        output_mode: GrepMode = "files_with_matches",
        max_count: int | None = None,
    ) -> ToolOutput:
        if max_count is not None and max_count < 1:
            return _message(runtime, "grep", BAD_MAX_COUNT, ok=False)
        shown = {"output_mode": output_mode}
        args = {"pattern": pattern, "path": path, "glob": glob, "max_count": max_count}
        return await grep_.arun(runtime, shown, **args)

    pairs: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (ls, als),
        (read_file, aread_file),
        (write_file, awrite_file),
        (edit_file, aedit_file),
        (delete, adelete),
        (glob, aglob),
        (grep, agrep),
    ]
    # The descriptions name where large results go: under the backend's own artifacts root.
    moved = results_dir(backend)
    chosen = {k: v.replace(LARGE_TOOL_RESULTS_DIR, moved) for k, v in TOOL_DESCRIPTIONS.items()}
    chosen.update(descriptions or {})
    return [runtime_tool(f, af, description=chosen[f.__name__].rstrip()) for f, af in pairs]
