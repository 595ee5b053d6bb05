"""nbagents: the DeepAgents sub-agent pattern for LangChain, made visible inside Jupyter."""

from nbagents.models import ScriptedChatModel
from nbagents.subagents import (
    GENERAL_PURPOSE_SUBAGENT,
    CompiledSubAgent,
    SubAgent,
    SubAgentMiddleware,
    create_deep_agent,
    load_subagents,
)

__all__ = [
    "GENERAL_PURPOSE_SUBAGENT",
    "CompiledSubAgent",
    "ScriptedChatModel",
    "SubAgent",
    "SubAgentMiddleware",
    "create_deep_agent",
    "load_subagents",
]
__version__ = "0.1.0"
