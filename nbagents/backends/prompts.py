"""What the file tools tell the model: ``FILESYSTEM_PROMPT`` and each tool's description
(``FilesystemMiddleware`` can replace them), and how a middleware adds its section to the
system prompt.

The names are deepagents' (``READ_FILE_TOOL_DESCRIPTION``, ...); the texts are nbagents' own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage

FILESYSTEM_PROMPT = """## Files

You have file tools: `ls`, `read_file`, `write_file`, `edit_file`, `delete`, `glob` and `grep`. \
Paths are absolute and start with `/` (for example `/notes/plan.md`). Read a file before editing \
it; `edit_file` replaces exact text. Long files are read in pages: follow the offset the tool \
gives. `delete` cannot be undone."""

LARGE_TOOL_RESULTS_DIR = "/large_tool_results/"
"""Where ``FilesystemMiddleware`` saves a tool result too large to keep in the conversation."""

LIST_FILES_TOOL_DESCRIPTION = (
    "List the files and directories directly inside `path` (directories end with '/'). "
    "Use it to find your way before reading or editing."
)

READ_FILE_TOOL_DESCRIPTION = f"""Read a text file, with line numbers.

- Reads `limit` lines (2000 unless given) after the first `offset` lines (0 = from the top). \
Each line comes as its number, two spaces and the text; never copy the numbers into an edit.
- Long files say which `offset` to pass to go on. Binary files are reported, not shown.
- A tool result too large for the conversation is offloaded to a file under \
`{LARGE_TOOL_RESULTS_DIR}`, and the tool's message names it: read that file here, a page at a \
time with `offset` and `limit`.
- Read a file before editing it."""

WRITE_FILE_TOOL_DESCRIPTION = """Create a text file at the absolute path `file_path`, or \
replace it whole if it exists. Prefer edit_file to change part of an existing file."""

EDIT_FILE_TOOL_DESCRIPTION = """Replace the exact text `old_string` by `new_string` in a file.

`old_string` must occur exactly once (include surrounding lines to make it unique), unless \
`replace_all` is true. Read the file first and copy the text exactly, without line numbers."""

DELETE_TOOL_DESCRIPTION = """Delete the file at the absolute path `file_path`, or a directory \
with everything under it. There is no undo: delete only what you are sure is no longer needed, \
and a directory in one call rather than file by file. `/` itself cannot be deleted.

A missing path, or one you may not write (or a directory holding such a file), is an error \
and nothing is removed."""

GLOB_TOOL_DESCRIPTION = """Find files by name pattern under `path`, answering their absolute \
paths: `*` and `?` within a name, `**` across directories, `{a,b}` for alternatives. A pattern \
without '/' matches names at any depth (`*.md` finds every Markdown file); names starting with \
'.' match only a pattern that starts with '.'."""

GREP_TOOL_DESCRIPTION = f"""Search text files under `path` for lines containing the exact text \
`pattern`: a LITERAL text, not a regular expression (`a|b` looks for "a|b"; search once per \
alternative). `glob` limits the search to the files whose names match it.

`output_mode` shapes the answer: `files_with_matches` (the default) gives the matching files, \
one per line; `content` gives `path:line: text` per matching line; `count` gives `path: n` per \
file. `max_count` stops the search after that many matching lines (the answer then says there \
are more): use it to look at a few matches of a common word.

Offloaded large tool results are files under `{LARGE_TOOL_RESULTS_DIR}` (the artifacts root's \
`large_tool_results/`): grep there when you do not know which file holds what you look for."""

TOOL_DESCRIPTIONS = {
    "ls": LIST_FILES_TOOL_DESCRIPTION,
    "read_file": READ_FILE_TOOL_DESCRIPTION,
    "write_file": WRITE_FILE_TOOL_DESCRIPTION,
    "edit_file": EDIT_FILE_TOOL_DESCRIPTION,
    "delete": DELETE_TOOL_DESCRIPTION,
    "glob": GLOB_TOOL_DESCRIPTION,
    "grep": GREP_TOOL_DESCRIPTION,
}
"""The description of each file tool, by the tool's name."""


def with_prompt_section(request: ModelRequest[Any], section: str) -> ModelRequest[Any]:
    """``request`` with ``section`` after its system prompt."""
    if not section:
        return request
    current = request.system_message
    if current is None or not current.content:
        return request.override(system_message=SystemMessage(content=section))
    if isinstance(current.content, str):
        content: Any = f"{current.content}\n\n{section}"
    else:
        # Content blocks may carry provider settings (e.g. cache_control): keep them.
        content = [*current.content, {"type": "text", "text": section}]
    return request.override(system_message=current.model_copy(update={"content": content}))


class RequestEditor:
    """Middleware mix-in: every model call is made with ``modify_request(request)``. Put it
    before ``AgentMiddleware`` in the bases."""

    def modify_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        return request

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        return handler(self.modify_request(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(self.modify_request(request))


class PromptSection(RequestEditor):
    """Middleware mix-in: every model call gets ``system_prompt`` (if any) after the agent's
    system prompt."""

    system_prompt: str | None

    def modify_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        return with_prompt_section(request, self.system_prompt or "")
