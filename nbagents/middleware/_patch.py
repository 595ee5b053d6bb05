"""``PatchToolCallsMiddleware``: an answer for every tool call left without one."""

from __future__ import annotations

from typing import Any

from langchain.agents import AgentState
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from nbagents.backends.prompts import RequestEditor

__all__ = ["PatchToolCallsMiddleware", "patch_dangling_tool_calls"]


def patch_dangling_tool_calls(messages: list[AnyMessage]) -> list[AnyMessage] | None:
    """``messages`` with an error ``ToolMessage`` after each AI tool call that has no answer,
    or ``None`` when every call has one.

    A run stopped between a tool call and its result (Ctrl-C, a crash, an approval answered
    with a new message instead of a resume) leaves such a call in the thread; providers refuse
    a conversation that holds one, so the next run would fail at its first model call.
    """
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    patched: list[AnyMessage] = []
    added = False
    for message in messages:
        patched.append(message)
        if not isinstance(message, AIMessage):
            continue
        for call in (*message.tool_calls, *message.invalid_tool_calls):
            call_id = call["id"]
            if call_id is None or call_id in answered:
                continue
            name = call["name"] or "unknown"
            if call.get("type") == "invalid_tool_call":
                text = (
                    f"Tool call {name} with id {call_id} was not run: its arguments could not "
                    f"be parsed."
                )
            else:
                text = (
                    f"Tool call {name} with id {call_id} has no result: the run stopped before "
                    f"it finished (interrupted or cancelled). Call it again if you still need it."
                )
            patched.append(
                ToolMessage(content=text, name=name, tool_call_id=call_id, status="error")
            )
            added = True
    return patched if added else None


class PatchToolCallsMiddleware(RequestEditor, AgentMiddleware[AgentState[Any], Any]):
    """Before each model call, answers the tool calls that an earlier, interrupted run left
    unanswered.

    Each such call gets an error ``ToolMessage`` right after the AI message that made it, in
    the messages the model is sent, so the conversation is well formed and the model knows the
    call did not complete. deepagents' middleware of the same name, built by
    ``create_deep_agent`` for every agent. Unlike deepagents', which rewrites the state once
    per run, it leaves the thread's messages as they are: patching the request needs no graph
    node, so an agent with nothing to patch runs and traces as it would without it.
    """

    # It changes the messages, never the system prompt (see SubAgentRegistry's prompt section).
    changes_prompt = False

    def modify_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        patched = patch_dangling_tool_calls(list(request.messages))
        return request if patched is None else request.override(messages=patched)
