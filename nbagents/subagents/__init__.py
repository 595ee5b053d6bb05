"""The sub-agent system: specs, the ``task`` tool's middleware and ``create_deep_agent``."""

from nbagents.subagents._background import BackgroundSubAgentMiddleware, BackgroundTask
from nbagents.subagents._factory import create_deep_agent
from nbagents.subagents._loader import SubAgentFileError, load_subagents
from nbagents.subagents._middleware import SubAgentMiddleware
from nbagents.subagents._remote import RemoteGraphRunnable, RemoteSubAgentError
from nbagents.subagents._results import StateDiff, SubAgentArtifact
from nbagents.subagents._spawn import SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY
from nbagents.subagents._specs import (
    DEFAULT_EXCLUDED_STATE_KEYS,
    GENERAL_PURPOSE_SUBAGENT,
    CompiledSubAgent,
    RemoteSubAgent,
    SubAgent,
)
from nbagents.subagents._standalone import create_sub_agent
from nbagents.subagents.limits import LimitReached, Limits

__all__ = [
    "DEFAULT_EXCLUDED_STATE_KEYS",
    "GENERAL_PURPOSE_SUBAGENT",
    "SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY",
    "BackgroundSubAgentMiddleware",
    "BackgroundTask",
    "CompiledSubAgent",
    "LimitReached",
    "Limits",
    "RemoteGraphRunnable",
    "RemoteSubAgent",
    "RemoteSubAgentError",
    "StateDiff",
    "SubAgent",
    "SubAgentArtifact",
    "SubAgentFileError",
    "SubAgentMiddleware",
    "create_deep_agent",
    "create_sub_agent",
    "load_subagents",
]
