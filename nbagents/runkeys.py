"""The run metadata and tags through which the ``task`` tool tells the tracer about a spawn.

One definition for both sides: the sub-agent system writes them, the tracer reads them.
"""

from __future__ import annotations

__all__ = ["DEPTH_KEY", "SPAWN_KEY", "SUBAGENT_TAG"]

DEPTH_KEY = "nbagents_depth"
"""How deep the running agent is (the main agent is 0)."""
SPAWN_KEY = "nbagents_spawn"
"""On a sub-agent's run: its type, description, depth, tool call id and state diff."""
SUBAGENT_TAG = "nbagents:subagent"
"""Tags a sub-agent's run."""
