"""nbagents: the DeepAgents sub-agent pattern for LangChain, made visible inside Jupyter."""

from nbagents._distribution import __version__ as __version__
from nbagents._distribution import warn_about_other_distribution
from nbagents._notebook import load_ipython_extension as load_ipython_extension
from nbagents._notebook import trace, wait_for_decisions
from nbagents._rerun import Rerun, rerun
from nbagents.approvals import ApprovalRequest, pending_approvals, resume
from nbagents.evaluation import (
    Experiment,
    aevaluate,
    compare,
    evaluate,
    experiments,
    load_experiment,
    scorers,
)
from nbagents.history import (
    RunStore,
    delete_runs,
    keep_runs,
    load_run,
    prune_runs,
    runs,
)
from nbagents.models import ScriptedChatModel
from nbagents.subagents import (
    GENERAL_PURPOSE_SUBAGENT,
    SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY,
    BackgroundSubAgentMiddleware,
    CompiledSubAgent,
    LimitReached,
    Limits,
    RemoteSubAgent,
    SubAgent,
    SubAgentMiddleware,
    create_deep_agent,
    create_sub_agent,
    load_subagents,
)
from nbagents.tracing import Span, TokenUsage, Trace, Tracer

__all__ = [
    "GENERAL_PURPOSE_SUBAGENT",
    "SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY",
    "ApprovalRequest",
    "BackgroundSubAgentMiddleware",
    "CompiledSubAgent",
    "Experiment",
    "LimitReached",
    "Limits",
    "RemoteSubAgent",
    "Rerun",
    "RunStore",
    "ScriptedChatModel",
    "Span",
    "SubAgent",
    "SubAgentMiddleware",
    "TokenUsage",
    "Trace",
    "Tracer",
    "aevaluate",
    "compare",
    "create_deep_agent",
    "create_sub_agent",
    "delete_runs",
    "evaluate",
    "experiments",
    "keep_runs",
    "load_experiment",
    "load_run",
    "load_subagents",
    "pending_approvals",
    "prune_runs",
    "rerun",
    "resume",
    "runs",
    "scorers",
    "trace",
    "wait_for_decisions",
]

warn_about_other_distribution()
