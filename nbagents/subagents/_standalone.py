"""``create_sub_agent`` (upstream's name): one sub-agent built from its spec, to try it alone."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
from langchain_core.runnables import Runnable

from nbagents.subagents._registry import resolve_model
from nbagents.subagents._specs import SubAgent, validate_specs

__all__ = ["create_sub_agent"]


def create_sub_agent(
    spec: SubAgent,
    *,
    state_schema: Any = None,
    response_format: Any = None,
) -> Runnable[Any, Any]:
    """The agent ``spec`` describes: its model, tools, prompt, middleware and approvals.

    Nothing is inherited (no main model, tools, ``task`` or file tools): ``ValueError`` when the
    spec names no model, and for any spec a main agent would refuse. ``response_format``
    overrides the spec's.
    """
    name = spec.get("name") or "<unnamed>"
    model = spec.get("model")
    if model is None:
        raise ValueError(
            f"SubAgent {name!r} must specify 'model': create_sub_agent builds it on its own, "
            f"so there is no main agent's model to inherit."
        )
    # Trying a spec here is meant to tell whether a main agent would take it.
    validate_specs([spec])
    middleware: list[AgentMiddleware[Any, Any]] = list(spec.get("middleware", ()))
    if spec.get("interrupt_on"):
        middleware.append(HumanInTheLoopMiddleware(interrupt_on=spec["interrupt_on"]))
    return create_agent(
        resolve_model(model, f"Sub-agent {name!r}"),
        tools=list(spec.get("tools", ())),
        system_prompt=spec.get("system_prompt") or None,
        middleware=middleware,
        response_format=response_format
        if response_format is not None
        else spec.get("response_format"),
        state_schema=state_schema,
        name=name,
    )
