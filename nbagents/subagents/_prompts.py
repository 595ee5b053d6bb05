"""What the main agent is told about the ``task`` tool."""

from __future__ import annotations

from collections.abc import Iterable

TASK_SYSTEM_PROMPT = """## Delegating with the `task` tool

You can hand a self-contained job to a sub-agent with the `task` tool. A sub-agent starts with a
clean context: it sees only the description you write, works on its own, and sends back a single
answer. Its intermediate steps never enter your context.

Delegate when:
- the job needs several steps and can be described completely up front;
- jobs are independent of each other: then call `task` several times in the same message, and the
  sub-agents run at the same time;
- the job would fill your context with material you only need a summary of.

Do it yourself when:
- it takes one or two tool calls, or is a quick lookup;
- you need to watch or steer the intermediate steps;
- writing the description would take as long as doing the job.

Write each description as a full brief: the goal, everything the sub-agent needs to know, and the
form the answer should take. A sub-agent cannot ask you questions and cannot be sent a follow-up.

Sub-agent types:
{available_agents}"""

TASK_TOOL_DESCRIPTION = """Start a short-lived sub-agent that works on one self-contained job in its
own context and returns one answer.

Sub-agent types (pass the name as `subagent_type`):
{available_agents}

Write `description` as a complete brief; the sub-agent sees nothing else. Independent jobs go as
several `task` calls in one message so they run in parallel."""


def list_agents(entries: Iterable[tuple[str, str]]) -> str:
    """The ``- name: description`` list both texts show."""
    return "\n".join(f"- {name}: {' '.join(description.split())}" for name, description in entries)
