"""The file tools: ``ls``, ``read_file``, ``write_file``, ``edit_file``, ``glob``, ``grep``."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command

from nbagents._contract import READ_FILE_TOOL
from nbagents.backends._format import format_listing, format_matches, format_read
from nbagents.backends._protocol import (
    BackendError,
    BackendLike,
    BackendProtocol,
    WriteResult,
    resolve_backend,
)
from nbagents.backends._state import FILES_KEY

DEFAULT_READ_LIMIT = 2000

ToolOutput = str | ToolMessage | Command[Any]


def _error(runtime: ToolRuntime[Any, Any], name: str, message: str) -> ToolMessage:
    return ToolMessage(
        content=f"Error: {message}",
        tool_call_id=runtime.tool_call_id or "",
        name=name,
        status="error",
    )


def _written(
    runtime: ToolRuntime[Any, Any], name: str, result: WriteResult, text: str
) -> ToolOutput:
    if result.files_update is None:
        return text
    message = ToolMessage(content=text, tool_call_id=runtime.tool_call_id or "", name=name)
    return Command(update={FILES_KEY: result.files_update, "messages": [message]})


def _guarded(
    name: str, backend: BackendLike, run: Callable[..., ToolOutput]
) -> Callable[..., ToolOutput]:
    """``run(backend, runtime, **args)`` with every backend failure made an error result."""

    def call(runtime: ToolRuntime[Any, Any], **args: Any) -> ToolOutput:
        try:
            return run(resolve_backend(backend, runtime), runtime, **args)
        except (BackendError, ValueError) as error:
            return _error(runtime, name, str(error))
        except OSError as error:
            # Permission bits, a full disk, a file that vanished: the model may try something else.
            return _error(runtime, name, f"{type(error).__name__}: {error.strerror or error}")

    return call


def _ls(backend: BackendProtocol, runtime: ToolRuntime[Any, Any], path: str = "/") -> ToolOutput:
    return format_listing(backend.ls(path), f"{path} is empty.")


def _read(
    backend: BackendProtocol,
    runtime: ToolRuntime[Any, Any],
    file_path: str,
    offset: int = 0,
    limit: int = DEFAULT_READ_LIMIT,
) -> ToolOutput:
    if limit < 1:
        return _error(runtime, "read_file", f"limit must be at least 1, got {limit}.")
    content = backend.read(file_path, offset=offset, limit=limit)
    if content.total_lines and offset >= content.total_lines:
        return _error(
            runtime,
            "read_file",
            f"offset {offset} is past the end of {content.path}, which has "
            f"{content.total_lines} lines.",
        )
    return format_read(content)


def _write(
    backend: BackendProtocol, runtime: ToolRuntime[Any, Any], file_path: str, content: str
) -> ToolOutput:
    result = backend.write(file_path, content)
    return _written(
        runtime, "write_file", result, f"Wrote {result.path} ({len(content)} characters)."
    )


def _edit(
    backend: BackendProtocol,
    runtime: ToolRuntime[Any, Any],
    file_path: str,
    old_string: str,
    new_string: str,
    replace_all: bool = False,
) -> ToolOutput:
    result = backend.edit(file_path, old_string, new_string, replace_all=replace_all)
    times = "1 occurrence" if result.replacements == 1 else f"{result.replacements} occurrences"
    return _written(runtime, "edit_file", result, f"Replaced {times} in {result.path}.")


def _glob(
    backend: BackendProtocol, runtime: ToolRuntime[Any, Any], pattern: str, path: str = "/"
) -> ToolOutput:
    return format_listing(backend.glob(pattern, path), f"No files match {pattern!r} under {path}.")


def _grep(
    backend: BackendProtocol,
    runtime: ToolRuntime[Any, Any],
    pattern: str,
    path: str = "/",
    glob: str | None = None,
) -> ToolOutput:
    return format_matches(backend.grep(pattern, path, glob=glob))


# Each tool's signature is spelled out (not **kwargs) so LangChain can infer its argument schema
# and inject `runtime`.


def build_file_tools(backend: BackendLike) -> list[BaseTool]:
    """The six file tools bound to ``backend`` (an instance or a factory of the tool runtime)."""
    ls_ = _guarded("ls", backend, _ls)
    read_ = _guarded(READ_FILE_TOOL, backend, _read)
    write_ = _guarded("write_file", backend, _write)
    edit_ = _guarded("edit_file", backend, _edit)
    glob_ = _guarded("glob", backend, _glob)
    grep_ = _guarded("grep", backend, _grep)

    def ls(runtime: ToolRuntime, path: str = "/") -> ToolOutput:
        """List the files and directories directly inside ``path`` (directories end with '/')."""
        return ls_(runtime, path=path)

    async def als(runtime: ToolRuntime, path: str = "/") -> ToolOutput:
        return await asyncio.to_thread(ls_, runtime, path=path)

    def read_file(
        runtime: ToolRuntime, file_path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT
    ) -> ToolOutput:
        """Read a text file, with line numbers.

        Reads ``limit`` lines starting after ``offset`` lines (0 = from the top). Long files say
        which offset to pass to continue. Binary files are reported, not shown.
        """
        return read_(runtime, file_path=file_path, offset=offset, limit=limit)

    async def aread_file(
        runtime: ToolRuntime, file_path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT
    ) -> ToolOutput:
        return await asyncio.to_thread(
            read_, runtime, file_path=file_path, offset=offset, limit=limit
        )

    def write_file(runtime: ToolRuntime, file_path: str, content: str) -> ToolOutput:
        """Create a text file at the absolute path ``file_path``, or overwrite it."""
        return write_(runtime, file_path=file_path, content=content)

    async def awrite_file(runtime: ToolRuntime, file_path: str, content: str) -> ToolOutput:
        return await asyncio.to_thread(write_, runtime, file_path=file_path, content=content)

    def edit_file(
        runtime: ToolRuntime,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> ToolOutput:
        """Replace the exact text ``old_string`` by ``new_string`` in a file.

        ``old_string`` must occur exactly once (include surrounding lines to make it unique),
        unless ``replace_all`` is true. Read the file first and copy the text exactly.
        """
        return edit_(
            runtime,
            file_path=file_path,
            old_string=old_string,
            new_string=new_string,
            replace_all=replace_all,
        )

    async def aedit_file(
        runtime: ToolRuntime,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> ToolOutput:
        return await asyncio.to_thread(
            edit_,
            runtime,
            file_path=file_path,
            old_string=old_string,
            new_string=new_string,
            replace_all=replace_all,
        )

    def glob(runtime: ToolRuntime, pattern: str, path: str = "/") -> ToolOutput:
        """Find files by name pattern under ``path``: ``*`` and ``?`` within a name, ``**`` across
        directories (``**/*.md`` is every Markdown file)."""
        return glob_(runtime, pattern=pattern, path=path)

    async def aglob(runtime: ToolRuntime, pattern: str, path: str = "/") -> ToolOutput:
        return await asyncio.to_thread(glob_, runtime, pattern=pattern, path=path)

    def grep(
        runtime: ToolRuntime, pattern: str, path: str = "/", glob: str | None = None
    ) -> ToolOutput:
        """Search text files under ``path`` for lines matching the regular expression ``pattern``,
        optionally only in files matching ``glob``. Answers ``path:line: text`` per match."""
        return grep_(runtime, pattern=pattern, path=path, glob=glob)

    async def agrep(
        runtime: ToolRuntime, pattern: str, path: str = "/", glob: str | None = None
    ) -> ToolOutput:
        return await asyncio.to_thread(grep_, runtime, pattern=pattern, path=path, glob=glob)

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
