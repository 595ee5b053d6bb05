"""Inferring what an upstream sub-agent was given, from the callbacks of its parent's graph.

nbagents' own ``task`` tool records the state diff exactly. A graph it does not run (upstream
deepagents) only shows its input and its nodes' outputs in callbacks, so the parent's state at
a ``task`` call is rebuilt from those and compared with the child's input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nbagents._contract import describe_size

__all__ = ["infer_diff", "node_updates"]


def node_updates(output: Any) -> list[Mapping[str, Any]]:
    """The state updates a node's output carries (dicts, ``Command.update``, lists of them)."""
    cls = type(output)
    # Node outputs are dicts, lists of messages and Commands: these first, as a check against
    # an abstract class, or a missing attribute of a message, costs far more.
    if cls is dict:
        return [output]
    if isinstance(output, list | tuple):
        return [u for item in output for u in node_updates(item)]
    if cls.__name__ == "Command":
        update = getattr(output, "update", None)
        if isinstance(update, Mapping):
            return [update]
        if isinstance(update, list | tuple):
            return [dict(update)] if all(isinstance(p, tuple) for p in update) else []
        return []
    return [output] if isinstance(output, Mapping) else []


def _merge_messages(current: list[Any], new: Any) -> list[Any]:
    """``add_messages`` without its side effects: append, replace by id, honour removals."""
    incoming = new if isinstance(new, list | tuple) else [new]
    merged = list(current)
    index = {getattr(m, "id", None): i for i, m in enumerate(merged) if getattr(m, "id", None)}
    for message in incoming:
        ident = getattr(message, "id", None)
        if type(message).__name__ == "RemoveMessage":
            if ident == "__remove_all__":
                merged, index = [], {}
            elif ident in index:
                merged[index.pop(ident)] = None
            continue
        if ident is not None and ident in index:
            merged[index[ident]] = message
        else:
            if ident is not None:
                index[ident] = len(merged)
            merged.append(message)
    return [m for m in merged if m is not None]


def _state_at(given: Any, updates: list[tuple[int, Any]], step: int) -> dict[str, Any]:
    """The agent's state as a node of ``step`` saw it: its input plus earlier steps' updates.

    Messages follow ``add_messages``; a dict value is merged into a dict (as deepagents'
    ``files``); anything else is replaced. An inference for graphs nbagents does not run itself.
    """
    state: dict[str, Any] = dict(given) if isinstance(given, Mapping) else {}
    for update_step, output in sorted(updates, key=lambda u: u[0]):
        if update_step >= step:
            break
        for update in node_updates(output):
            for key, value in update.items():
                old = state.get(key)
                if key == "messages":
                    state[key] = _merge_messages(list(old or []), value)
                elif isinstance(value, Mapping) and isinstance(old, Mapping):
                    merged = {**old, **value}
                    state[key] = {k: v for k, v in merged.items() if v is not None}
                else:
                    state[key] = value
    return {k: v for k, v in state.items() if v is not None}


def infer_diff(
    state_input: Any, updates: list[tuple[int, Any]], step: int, child_input: Any
) -> tuple[dict[str, str], dict[str, str]]:
    """Withheld and passed keys: the child's input keys against the parent's state at the call.

    ``state_input`` is the parent graph's input and ``updates`` its nodes' outputs with their
    LangGraph step; ``step`` is the step of the call.
    """
    state = _state_at(state_input, updates, step)
    given = child_input if isinstance(child_input, Mapping) else {}
    passed: dict[str, str] = {}
    for key, value in given.items():
        if key == "messages" and not _same(value, state.get(key)):
            continue  # a fresh conversation, not the parent's
        passed[key] = describe_size(value)
    withheld = {k: describe_size(v) for k, v in state.items() if k not in passed}
    return withheld, passed


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False
