"""The file tools: ``ls``, ``read_file``, ``write_file``, ``edit_file``, ``glob``, ``grep``."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from nbagents._contract import READ_FILE_TOOL
from nbagents.backends._format import format_listing, format_matches, format_read
from nbagents.backends._protocol import resolve_backend

DEFAULT_READ_LIMIT = 2000

ToolOutput = str | ToolMessage
Shape = Callable[[Any, dict[str, Any]], str]
"""Turns a backend result (without error) and the tool's arguments into the tool's answer."""


def _error(runtime: ToolRuntime[Any, Any], name: str, message: str) -> ToolMessage:
    text = message if message.startswith("Error") else f"Error: {message}"
    return ToolMessage(
        content=text, tool_call_id=runtime.tool_call_id or "", name=name, status="error"
    )


def _answer(
    name: str, runtime: ToolRuntime[Any, Any], result: Any, shape: Shape, args: Any
) -> ToolOutput:
    error = getattr(result, "error", None)
    if error:
        return _error(runtime, name, str(error))
    return shape(result, args)


class _FileTool:
    """One file tool: which backend method it calls with which arguments, and its answer."""

    def __init__(self, name: str, method: str, backend: Any, shape: Shape) -> None:
        self.name, self.method, self.backend, self.shape = name, method, backend, shape

    def run(self, runtime: ToolRuntime[Any, Any], **args: Any) -> ToolOutput:
        try:
            backend = resolve_backend(self.backend, runtime)
            result = getattr(backend, self.method)(**args)
        except (ValueError, OSError, NotImplementedError) as error:
            return _error(runtime, self.name, _why(error))
        return _answer(self.name, runtime, result, self.shape, args)

    async def arun(self, runtime: ToolRuntime[Any, Any], **args: Any) -> ToolOutput:
        try:
            backend = resolve_backend(self.backend, runtime)
            twin = getattr(backend, "a" + self.method, None)
            if twin is not None:
                result = await twin(**args)
            else:
                result = await asyncio.to_thread(getattr(backend, self.method), **args)
        except (ValueError, OSError, NotImplementedError) as error:
            return _error(runtime, self.name, _why(error))
        return _answer(self.name, runtime, result, self.shape, args)


def _why(error: Exception) -> str:
    if isinstance(error, NotImplementedError):
        return "this backend does not support the operation."
    if isinstance(error, OSError):
        return f"{type(error).__name__}: {error.strerror or error}"
    return str(error)


def _ls(result: Any, args: dict[str, Any]) -> str:
    return format_listing(result.entries or [], f"{args['path']} is empty.")


def _read(result: Any, args: dict[str, Any]) -> str:
    return format_read(args["file_path"], result, args["limit"])


def _write(result: Any, args: dict[str, Any]) -> str:
    return f"Wrote {result.path or args['file_path']} ({len(args['content'])} characters)."


def _edit(result: Any, args: dict[str, Any]) -> str:
    count = result.occurrences or 0
    times = "1 occurrence" if count == 1 else f"{count} occurrences"
    return f"Replaced {times} in {result.path or args['file_path']}."


def _glob(result: Any, args: dict[str, Any]) -> str:
    return format_listing(
        result.matches or [],
        f"No files match {args['pattern']!r} under {args['path']}.",
        truncated=result.truncated,
    )


def _grep(result: Any, args: dict[str, Any]) -> str:
    return format_matches(result.matches or [], truncated=result.truncated)


# Each tool's signature is spelled out (not **kwargs) so LangChain can infer its argument schema
# and inject `runtime`.


def build_file_tools(backend: Any) -> list[BaseTool]:
    """The six file tools bound to ``backend`` (an instance or a factory of the tool runtime)."""
    ls_ = _FileTool("ls", "ls", backend, _ls)
    read_ = _FileTool(READ_FILE_TOOL, "read", backend, _read)
    write_ = _FileTool("write_file", "write", backend, _write)
    edit_ = _FileTool("edit_file", "edit", backend, _edit)
    glob_ = _FileTool("glob", "glob", backend, _glob)
    grep_ = _FileTool("grep", "grep", backend, _grep)

    def ls(runtime: ToolRuntime[Any, Any], path: str = "/") -> ToolOutput:
        """List the files and directories directly inside ``path`` (directories end with '/')."""
        return ls_.run(runtime, path=path)

    async def als(runtime: ToolRuntime[Any, Any], path: str = "/") -> ToolOutput:
        return await ls_.arun(runtime, path=path)

    def read_file(
        runtime: ToolRuntime[Any, Any],
        file_path: str,
        offset: int = 0,
        limit: int = DEFAULT_READ_LIMIT,
    ) -> ToolOutput:
        """Read a text file, with line numbers.

        Reads ``limit`` lines starting after ``offset`` lines (0 = from the top). Long files say
        which offset to pass to continue. Binary files are reported, not shown.
        """
        return read_.run(runtime, file_path=file_path, offset=offset, limit=limit)

    async def aread_file(
        runtime: ToolRuntime[Any, Any],
        file_path: str,
        offset: int = 0,
        limit: int = DEFAULT_READ_LIMIT,
    ) -> ToolOutput:
        return await read_.arun(runtime, file_path=file_path, offset=offset, limit=limit)

    def write_file(runtime: ToolRuntime[Any, Any], file_path: str, content: str) -> ToolOutput:
        """Create a text file at the absolute path ``file_path``, or overwrite it."""
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
        """Replace the exact text ``old_string`` by ``new_string`` in a file.

        ``old_string`` must occur exactly once (include surrounding lines to make it unique),
        unless ``replace_all`` is true. Read the file first and copy the text exactly.
        """
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

    def glob(runtime: ToolRuntime[Any, Any], pattern: str, path: str = "/") -> ToolOutput:
        """Find files by name pattern under ``path``: ``*`` and ``?`` within a name, ``**`` across
        directories (``**/*.md`` is every Markdown file)."""
        return glob_.run(runtime, pattern=pattern, path=path)

    async def aglob(runtime: ToolRuntime[Any, Any], pattern: str, path: str = "/") -> ToolOutput:
        return await glob_.arun(runtime, pattern=pattern, path=path)

    def grep(
        runtime: ToolRuntime[Any, Any], pattern: str, path: str = "/", glob: str | None = None
    ) -> ToolOutput:
        """Search text files under ``path`` for lines containing the exact text ``pattern`` (not
        a regular expression), optionally only in files matching ``glob``. Answers
        ``path:line: text`` per match."""
        return grep_.run(runtime, pattern=pattern, path=path, glob=glob)

    async def agrep(
        runtime: ToolRuntime[Any, Any], pattern: str, path: str = "/", glob: str | None = None
    ) -> ToolOutput:
        return await grep_.arun(runtime, pattern=pattern, path=path, glob=glob)

    pairs: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (ls, als),
        (read_file, aread_file),
        (write_file, awrite_file),
        (edit_file, aedit_file),
        (glob, aglob),
        (grep, agrep),
    ]
    return [
        StructuredTool.from_function(
            func=f, coroutine=af, description=inspect.cleandoc(f.__doc__ or "")
        )
        for f, af in pairs
    ]
