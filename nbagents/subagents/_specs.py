"""Sub-agent specifications and their validation."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from langchain.agents.middleware import AgentMiddleware, InterruptOnConfig
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from nbagents._contract import GENERAL_PURPOSE, SKILLS_METADATA_KEY, SKILLS_WARNINGS_KEY

__all__ = [
    "DEFAULT_EXCLUDED_STATE_KEYS",
    "GENERAL_PURPOSE_SUBAGENT",
    "CompiledSubAgent",
    "SubAgent",
    "validate_specs",
]


class SubAgent(TypedDict):
    """A sub-agent that nbagents builds with ``create_agent``.

    Without ``tools`` it inherits the main agent's tools; without ``model`` the main model.
    ``skills`` lists the skill source directories (backend paths such as ``"/skills/review/"``)
    whose skills this sub-agent is offered; without it, a custom sub-agent has no skills (the
    general-purpose sub-agent shares the main agent's).
    """

    name: str
    description: str
    """What it does: the main agent reads this to decide when to delegate."""
    system_prompt: str
    tools: NotRequired[Sequence[BaseTool | Callable[..., Any] | dict[str, Any]]]
    model: NotRequired[str | BaseChatModel]
    """A chat model or a ``"provider:model"`` string for ``init_chat_model``."""
    middleware: NotRequired[Sequence[AgentMiddleware[Any, Any]]]
    interrupt_on: NotRequired[dict[str, bool | InterruptOnConfig]]
    response_format: NotRequired[Any]
    skills: NotRequired[Sequence[str]]
    """Skill source directories in the backend, read in order (a later one overrides by name)."""


class CompiledSubAgent(TypedDict):
    """A ready-made runnable (e.g. a compiled LangGraph graph) used as a sub-agent.

    Its output state must have a ``messages`` key.
    """

    name: str
    description: str
    runnable: Runnable[Any, Any]


#: The spec of the ``general-purpose`` sub-agent that ``create_deep_agent`` adds unless a spec of
#: that name is given: the main model and tools, a generic prompt.
GENERAL_PURPOSE_SUBAGENT: SubAgent = {
    "name": GENERAL_PURPOSE,
    "description": (
        "General-purpose agent for researching complex questions, searching for information "
        "and carrying out multi-step tasks on its own, with the main agent's own tools."
    ),
    "system_prompt": (
        "You are a sub-agent. Complete the task you are given using the tools you have, then "
        "reply with one self-contained answer: it is the only thing the caller will see."
    ),
}

DEFAULT_EXCLUDED_STATE_KEYS: frozenset[str] = frozenset(
    {
        "messages",
        "todos",
        "structured_response",
        SKILLS_METADATA_KEY,
        SKILLS_WARNINGS_KEY,
        "memory_contents",
    }
)
"""Withheld from every sub-agent: each starts from its task and loads its own skills."""

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def validate_specs(specs: Sequence[Mapping[str, Any]]) -> None:
    """Raise ``ValueError`` naming the spec and the problem for any invalid sub-agent spec."""
    seen: set[str] = set()
    for position, spec in enumerate(specs):
        if not isinstance(spec, Mapping):
            raise ValueError(
                f"Sub-agent spec #{position + 1} must be a dict (SubAgent or CompiledSubAgent), "
                f"not {type(spec).__name__}."
            )
        label = f"Sub-agent {spec['name']!r}" if spec.get("name") else f"Sub-agent #{position + 1}"
        for key in ("name", "description"):
            if not isinstance(spec.get(key), str) or not spec[key].strip():
                raise ValueError(f"{label}: missing {key!r} (a non-empty string).")
        name = spec["name"]
        if not _NAME.match(name):
            raise ValueError(
                f"{label}: the name may only use letters, digits, '-' and '_' "
                f"(it is what the main agent passes as subagent_type)."
            )
        if name in seen:
            raise ValueError(f"{label}: duplicate name; every sub-agent needs its own.")
        seen.add(name)
        if "runnable" in spec:
            if "model" in spec:
                raise ValueError(
                    f"{label}: give either 'runnable' (a CompiledSubAgent) or 'model' "
                    f"(a SubAgent), not both."
                )
            if not isinstance(spec["runnable"], Runnable):
                raise ValueError(f"{label}: 'runnable' must be a LangChain Runnable.")
            continue
        prompt = spec.get("system_prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(f"{label}: missing 'system_prompt' (a non-empty string).")
        model = spec.get("model")
        if model is not None and not isinstance(model, str | BaseChatModel):
            raise ValueError(f"{label}: 'model' must be a chat model or a 'provider:model' string.")
        skills = spec.get("skills")
        if skills is not None and (
            isinstance(skills, str)
            or not isinstance(skills, Sequence)
            or not all(isinstance(s, str) and s.strip() for s in skills)
        ):
            raise ValueError(
                f"{label}: 'skills' must be a list of skill source directories "
                f"(e.g. ['/skills/review/']), not {skills!r}."
            )
