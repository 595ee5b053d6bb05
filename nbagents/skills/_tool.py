"""The ``check_skill`` tool: an agent that writes a skill checks it as discovery will judge it."""

from __future__ import annotations

import posixpath
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from nbagents._runtime_tools import runtime_tool
from nbagents.backends import BackendLike, check_backend, resolve_backend
from nbagents.skills._discovery import acheck_skill, check_skill
from nbagents.skills._prompt import format_skills_list
from nbagents.skills._records import SkillCheck

CHECK_SKILL_TOOL = "check_skill"

CHECK_SKILL_TOOL_DESCRIPTION = """Check a skill folder the way skills are loaded: whether its \
SKILL.md is valid, how the skills list will show it, or what to fix.

Give `path`, the skill folder's absolute path (/skills/user/pdf-tools) or its SKILL.md. Call it \
after writing or editing a skill, and again after each fix, until it says the skill is valid."""

# What a backend may raise for a path it refuses; any other exception is a bug to surface.
_FAILS = (ValueError, OSError, NotImplementedError)


def describe_check(check: SkillCheck) -> str:
    """The tool's answer: the verdict, the listing line or the problem, and where it applies."""
    folder = posixpath.dirname(check.path)
    source = posixpath.dirname(folder).rstrip("/") + "/"
    if check.skill is None:
        why = "; ".join(w["message"] for w in check.warnings) or "it cannot be loaded"
        return (
            f"Error: {check.path} is not a valid skill: {why}. Fix it, then check it again; "
            "until then the skill is left out of the skills list."
        )
    lines = [
        f"{check.path} is a valid skill. Agents whose skills sources include {source} are "
        "offered it from their next run, listed as:",
        format_skills_list([check.skill]),
    ]
    ignored = [w["message"] for w in check.warnings]
    if ignored:
        lines.append("Ignored (the skill still loads; fix these to use them):")
        lines += [f"- {message}" for message in ignored]
    return "\n".join(lines)


def check_skill_tool(backend: BackendLike) -> BaseTool:
    """The ``check_skill`` tool on ``backend`` (an instance, a class or a factory of the tool
    runtime, as the file tools take it): give it to an agent that writes skills with
    ``skill-creator``. It judges one skill folder with the code discovery uses, so a skill it
    passes is offered to the next run whose skills sources hold its folder."""
    checked = check_backend(backend)

    def answer(runtime: ToolRuntime[Any, Any], text: str) -> ToolMessage:
        return ToolMessage(
            content=text,
            tool_call_id=runtime.tool_call_id or "",
            name=CHECK_SKILL_TOOL,
            status="error" if text.startswith("Error") else "success",
        )

    def check(runtime: ToolRuntime[Any, Any], path: str) -> ToolMessage:
        try:
            found = check_skill(resolve_backend(checked, runtime), path)
        except _FAILS as error:
            return answer(runtime, f"Error: {error}")
        return answer(runtime, describe_check(found))

    async def acheck(runtime: ToolRuntime[Any, Any], path: str) -> ToolMessage:
        try:
            found = await acheck_skill(resolve_backend(checked, runtime), path)
        except _FAILS as error:
            return answer(runtime, f"Error: {error}")
        return answer(runtime, describe_check(found))

    return runtime_tool(
        check, acheck, name=CHECK_SKILL_TOOL, description=CHECK_SKILL_TOOL_DESCRIPTION
    )
