"""Sub-agents defined as Markdown files: ``<dir>/<name>/AGENTS.md`` with YAML frontmatter.

The layout is the DeepAgents CLI's (``.deepagents/agents/researcher/AGENTS.md``); the Markdown
body is the sub-agent's system prompt::

    ---
    name: researcher
    description: Researches a question with web search and reports the facts found.
    model: anthropic:claude-haiku-4-5   # optional: the main model when absent
    tools: [search]                     # optional: the main agent's tools when absent
    skills: [/skills/research/]         # optional: skill source directories in the backend
    ---
    You are a research assistant. ...
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

import yaml
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from nbagents.subagents._specs import SubAgent, describe, validate_specs

__all__ = ["AGENTS_FILE", "SubAgentFileError", "load_subagents"]

AGENTS_FILE = "AGENTS.md"

ToolLike: TypeAlias = BaseTool | Callable[..., Any] | dict[str, Any]
ModelFactory: TypeAlias = Callable[[str], "str | BaseChatModel"]

_FIELDS = ("name", "description", "model", "tools", "skills")
# The frontmatter must open the file: a `---` line, the YAML, a closing `---` line.
_FRONTMATTER = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.DOTALL | re.MULTILINE
)

logger = logging.getLogger(__name__)


class SubAgentFileError(ValueError):
    """An ``AGENTS.md`` file that cannot become a sub-agent; ``path`` is the file."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def load_subagents(
    *dirs: str | os.PathLike[str],
    tools: Mapping[str, ToolLike] | Sequence[ToolLike] | None = None,
    model_factory: ModelFactory | None = None,
) -> list[SubAgent]:
    """Read the sub-agents defined in ``<dir>/<name>/AGENTS.md`` files, sorted by name.

    Give the directories from the most general to the most specific (the user's
    ``~/.deepagents/agents``, then the project's): a later definition replaces an earlier one of
    the same name. A directory that does not exist is skipped; a path that is not a directory is
    an error. Sub-directories without an ``AGENTS.md``, or named ``.*`` or ``_*``, are skipped.

    ``tools`` resolves the names in a file's ``tools`` list: a name → tool mapping, or tools
    looked up by their names. A file without ``tools`` inherits the main agent's tools;
    ``tools: []`` gives none. ``model_factory`` turns each file's ``model`` string into the
    spec's model (e.g. ``lambda m: recorded(m, "run.json")``).

    Raises :class:`SubAgentFileError` (a ``ValueError``) naming the file for missing or invalid
    frontmatter, a missing field, an unknown tool name, or a name that differs from its directory.
    """
    registry = _tool_registry(tools)
    found: dict[str, SubAgent] = {}
    origin: dict[str, Path] = {}
    for raw in dirs:
        directory = Path(raw).expanduser()
        if not directory.exists():
            logger.debug("Sub-agent directory %s does not exist; skipped.", directory)
            continue
        if not directory.is_dir():
            raise NotADirectoryError(
                f"{directory} is not a directory: load_subagents expects directories holding "
                f"<name>/{AGENTS_FILE} files."
            )
        for path in _agent_files(directory):
            spec = _load_file(path, registry, tools is not None, model_factory)
            if spec["name"] in origin:
                logger.debug("%s overrides %s.", path, origin[spec["name"]])
            found[spec["name"]] = spec
            origin[spec["name"]] = path
    return [found[name] for name in sorted(found)]


def _agent_files(directory: Path) -> list[Path]:
    files = []
    for child in sorted(directory.iterdir(), key=lambda p: p.name):
        if not child.is_dir() or child.name.startswith((".", "_")):
            continue
        path = child / AGENTS_FILE
        if path.is_file():
            files.append(path)
            continue
        # A misspelt file name would otherwise drop the sub-agent without a word.
        near = [p.name for p in child.iterdir() if p.name.lower() == AGENTS_FILE.lower()]
        if near:
            raise SubAgentFileError(
                child / near[0], f"rename it to {AGENTS_FILE} (the name is case-sensitive)."
            )
    return files


def _load_file(
    path: Path,
    registry: Mapping[str, ToolLike],
    tools_given: bool,
    model_factory: ModelFactory | None,
) -> SubAgent:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise SubAgentFileError(path, f"not UTF-8 text ({error}).") from error
    meta, body = _split_frontmatter(path, text)
    _check_keys(path, meta)
    name = _required_str(path, meta, "name")
    description = _required_str(path, meta, "description")
    if name != path.parent.name:
        raise SubAgentFileError(
            path,
            f"name {name!r} does not match its directory {path.parent.name!r}; rename one so "
            f"they agree (the directory name is how overrides find it).",
        )
    prompt = body.strip()
    if not prompt:
        raise SubAgentFileError(
            path, "the body after the frontmatter is empty; it is the sub-agent's system prompt."
        )
    spec: SubAgent = {"name": name, "description": description, "system_prompt": prompt}
    if meta.get("model") is not None:
        model = _required_str(path, meta, "model")
        spec["model"] = model_factory(model) if model_factory is not None else model
    if meta.get("tools") is not None:
        spec["tools"] = _resolve_tools(path, meta["tools"], registry, tools_given)
    if meta.get("skills") is not None:
        skills = meta["skills"]
        if isinstance(skills, str):  # ``skills: /skills/a/`` names one directory
            skills = [skills]
        if not isinstance(skills, list) or not all(isinstance(s, str) for s in skills):
            raise SubAgentFileError(
                path, f"'skills' must be a list of skill directories, not {describe(skills)}."
            )
        spec["skills"] = [s.strip() for s in skills]
    try:
        validate_specs([spec])
    except ValueError as error:
        raise SubAgentFileError(path, str(error)) from error
    return spec


def _split_frontmatter(path: Path, text: str) -> tuple[dict[str, Any], str]:
    match = _FRONTMATTER.match(text)
    if match is None:
        if re.match(r"\A\ufeff?---[ \t]*\r?\n", text):
            problem = "the YAML frontmatter has no closing '---' line."
        else:
            problem = (
                "no YAML frontmatter: the file must start with a '---' line, then the name, "
                "description and optional model and tools fields, then a closing '---' line."
            )
        raise SubAgentFileError(path, problem)
    source = match.group(1)
    try:
        meta = yaml.safe_load(source) if source.strip() else {}
    except yaml.YAMLError as error:
        problem = str(error)
        if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
            # The mark counts from the frontmatter's first line, which is the file's second.
            line = error.problem_mark.line + 2
            problem = f"{error.problem or error.context} (line {line} of the file)."
        raise SubAgentFileError(path, f"malformed YAML frontmatter: {problem}") from error
    if not isinstance(meta, dict):
        raise SubAgentFileError(
            path,
            f"the frontmatter must be a YAML mapping (key: value lines), not a "
            f"{type(meta).__name__}.",
        )
    return meta, text[match.end() :]


def _check_keys(path: Path, meta: Mapping[Any, Any]) -> None:
    # Unknown keys are allowed (other tools' files carry extra metadata), but a near miss of a
    # known one would silently change the sub-agent, e.g. ``tool:`` giving it every tool.
    for key in meta:
        if not isinstance(key, str) or key in _FIELDS:
            continue
        close = [f for f in _FIELDS if f == key.lower()] or difflib.get_close_matches(
            key, _FIELDS, n=1, cutoff=0.75
        )
        if close:
            raise SubAgentFileError(path, f"unknown field {key!r}; did you mean {close[0]!r}?")


def _required_str(path: Path, meta: Mapping[str, Any], key: str) -> str:
    value = meta.get(key)
    if value is None:
        raise SubAgentFileError(path, f"the frontmatter has no {key!r} field.")
    if not isinstance(value, str) or not value.strip():
        raise SubAgentFileError(path, f"{key!r} must be a non-empty string, not {describe(value)}.")
    return value.strip()


def _resolve_tools(
    path: Path, value: Any, registry: Mapping[str, ToolLike], tools_given: bool
) -> list[ToolLike]:
    if isinstance(value, str):
        # ``tools: search, fetch`` is how Claude Code sub-agent files list tools.
        names = [n.strip() for n in value.split(",") if n.strip()]
    elif isinstance(value, list) and all(isinstance(n, str) for n in value):
        names = [n.strip() for n in value]
    else:
        raise SubAgentFileError(
            path, f"'tools' must be a list of tool names, not {describe(value)}."
        )
    if names and not tools_given:
        raise SubAgentFileError(
            path,
            f"it names tools {names}, but load_subagents was not given tools=...; pass the "
            f"tools (a list or a name → tool mapping) so the names can be resolved.",
        )
    resolved = []
    for name in names:
        if name not in registry:
            known = ", ".join(sorted(registry)) or "none"
            raise SubAgentFileError(path, f"unknown tool {name!r}; the known tools are: {known}.")
        resolved.append(registry[name])
    return resolved


def _tool_registry(
    tools: Mapping[str, ToolLike] | Sequence[ToolLike] | None,
) -> dict[str, ToolLike]:
    if tools is None:
        return {}
    if isinstance(tools, Mapping):
        return dict(tools)
    registry: dict[str, ToolLike] = {}
    for tool in tools:
        name = _tool_name(tool)
        if name in registry and registry[name] is not tool:
            raise ValueError(f"Two different tools are named {name!r}; tool names must be unique.")
        registry[name] = tool
    return registry


def _tool_name(tool: ToolLike) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, dict):
        function = tool.get("function")
        name = function.get("name") if isinstance(function, dict) else tool.get("name")
        if isinstance(name, str):
            return name
        raise ValueError(f"Tool schema without a name: {tool!r}")
    name = getattr(tool, "__name__", None)
    if isinstance(name, str):
        return name
    raise ValueError(f"Cannot tell the name of tool {tool!r}; pass a name → tool mapping.")
