"""Fixture module (no tests): an independent record of each agent's conversation.

``Conversations`` is a callback handler of its own (not nbagents' tracer): for every chat model
call it keeps the messages the model was given and the reply it gave, keyed by the calling
agent's name and its task (the first human message). An agent's conversation is then its last
call's messages plus that call's reply: what a transcript must equal. ``canonical`` puts
messages in a form two sources can be compared in (type, text, tool calls, tool call id).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import LLMResult

__all__ = ["Conversations", "canonical"]


class Conversations(BaseCallbackHandler):
    """Every chat model call's prompt and reply, by (agent, task)."""

    def __init__(self) -> None:
        self._open: dict[Any, tuple[tuple[str, str], list[BaseMessage]]] = {}
        self.last: dict[tuple[str, str], tuple[list[BaseMessage], BaseMessage | None]] = {}
        self._lock = threading.Lock()

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: Any,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        agent = str((metadata or {}).get("lc_agent_name"))
        prompt = list(messages[0])
        task = next((m.text for m in prompt if isinstance(m, HumanMessage)), "")
        with self._lock:
            self._open[run_id] = ((agent, task), prompt)
            self.last[(agent, task)] = (prompt, None)

    def on_llm_end(self, response: LLMResult, *, run_id: Any, **kwargs: Any) -> None:
        reply = response.generations[0][0].message  # type: ignore[attr-defined]
        with self._lock:
            key, prompt = self._open.pop(run_id)
            self.last[key] = (prompt, reply)

    def of(self, agent: str, task: str) -> list[BaseMessage]:
        """The agent's conversation: its last call's messages and that call's reply."""
        prompt, reply = self.last[(agent, task)]
        return [*prompt, reply] if reply is not None else list(prompt)


def canonical(messages: Iterable[BaseMessage]) -> list[tuple[Any, ...]]:
    """Messages as comparable tuples: type, text, tool calls (name, args), tool call id."""
    out: list[tuple[Any, ...]] = []
    for m in messages:
        calls = ()
        if isinstance(m, AIMessage):
            calls = tuple((c["name"], json.dumps(c["args"], sort_keys=True)) for c in m.tool_calls)
        call_id = m.tool_call_id if isinstance(m, ToolMessage) else None
        out.append((m.type, m.text, calls, call_id))
    return out
