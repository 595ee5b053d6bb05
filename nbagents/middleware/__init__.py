"""The middleware of deepagents' default stack that LangChain does not ship, under deepagents'
names: summarization that saves what it folds, patched tool calls, memory files, prompt
caching. ``create_deep_agent`` builds them with LangChain's own (``TodoListMiddleware``, ...)."""

from nbagents.middleware._caching import PromptCachingMiddleware, prompt_caching_for
from nbagents.middleware._memory import (
    MEMORY_CONTENTS_KEY,
    MEMORY_SYSTEM_PROMPT,
    MemoryMiddleware,
    MemoryState,
)
from nbagents.middleware._patch import PatchToolCallsMiddleware, patch_dangling_tool_calls
from nbagents.middleware._runtime import hook_runtime
from nbagents.middleware._stack import (
    REQUIRED_MIDDLEWARE,
    check_excluded,
    drop_excluded,
    merge_by_name,
)
from nbagents.middleware._summarization import (
    SESSION_KEY,
    SummarizationMiddleware,
    create_summarization_middleware,
    summarization_defaults,
)

__all__ = [
    "MEMORY_CONTENTS_KEY",
    "MEMORY_SYSTEM_PROMPT",
    "REQUIRED_MIDDLEWARE",
    "SESSION_KEY",
    "MemoryMiddleware",
    "MemoryState",
    "PatchToolCallsMiddleware",
    "PromptCachingMiddleware",
    "SummarizationMiddleware",
    "check_excluded",
    "create_summarization_middleware",
    "drop_excluded",
    "hook_runtime",
    "merge_by_name",
    "patch_dangling_tool_calls",
    "prompt_caching_for",
    "summarization_defaults",
]
