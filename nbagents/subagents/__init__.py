"""The sub-agent system: specs, the ``task`` tool's middleware and ``create_deep_agent``."""

from nbagents.subagents.factory import create_deep_agent
from nbagents.subagents.loader import SubAgentFileError, load_subagents
from nbagents.subagents.middleware import SubAgentMiddleware
from nbagents.subagents.results import StateDiff, SubAgentArtifact
from nbagents.subagents.specs import (
    DEFAULT_EXCLUDED_STATE_KEYS,
    GENERAL_PURPOSE_SUBAGENT,
    CompiledSubAgent,
    SubAgent,
)

__all__ = [
    "DEFAULT_EXCLUDED_STATE_KEYS",
    "GENERAL_PURPOSE_SUBAGENT",
    "CompiledSubAgent",
    "StateDiff",
    "SubAgent",
    "SubAgentArtifact",
    "SubAgentFileError",
    "SubAgentMiddleware",
    "create_deep_agent",
    "load_subagents",
]
