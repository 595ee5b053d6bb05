"""The default middleware stack equals installed deepagents' for the same arguments, by name and
order, for the main agent and each sub-agent (both libraries' create_agent calls recorded)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import TodoListMiddleware

import nbagents
from nbagents.models import ScriptedChatModel

deepagents = pytest.importorskip("deepagents")

NOT_BUILT = {"_ParentNotifierMiddleware", "UnsupportedContentMiddleware"}
"""Upstream middleware nbagents does not build (docs/coming-from-deepagents.md says why)."""
NESTING = "SubAgentMiddleware"
"""nbagents' sub-agents can delegate further (upstream's cannot): their stack ends with it."""

Stacks = dict[str, list[str]]


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Stacks]]:
    """Replaces create_agent where both libraries call it; returns the stacks per agent name."""
    stacks: dict[str, Stacks] = {"upstream": {}, "nbagents": {}}

    def recorder(side: str) -> Callable[..., Any]:
        def record(*args: Any, **kwargs: Any) -> Any:
            names = [m.name for m in kwargs.get("middleware", ())]
            stacks[side][kwargs.get("name") or "main"] = names
            return create_agent(*args, **kwargs)

        return record

    for module in ("deepagents.graph", "deepagents.middleware.subagents"):
        monkeypatch.setattr(f"{module}.create_agent", recorder("upstream"))
    for module in ("nbagents.subagents._factory", "nbagents.subagents._registry"):
        monkeypatch.setattr(f"{module}.create_agent", recorder("nbagents"))
    yield stacks.__getitem__


def _upstream(stacks: Stacks) -> Stacks:
    return {name: [m for m in names if m not in NOT_BUILT] for name, names in stacks.items()}


def _ours(stacks: Stacks) -> Stacks:
    out = {}
    for name, names in stacks.items():
        if name != "main":
            assert names[-1] == NESTING, names
            names = names[:-1]
        out[name] = names
    return out


SPEC = {"name": "researcher", "description": "Researches.", "system_prompt": "Research."}


def _build(kwargs: dict[str, Any], upstream_backend: Any, our_backend: Any) -> None:
    model = ScriptedChatModel(script={})
    deepagents.create_deep_agent(model, backend=upstream_backend, **kwargs)
    nbagents.create_deep_agent(model, backend=our_backend, **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({}, id="defaults"),
        pytest.param({"subagents": [SPEC]}, id="a-custom-subagent"),
        pytest.param(
            {
                "memory": ["/AGENTS.md"],
                "skills": ["/skills/"],
                "interrupt_on": {"write_file": True},
                "subagents": [{**SPEC, "skills": ["/skills/"]}],
            },
            id="memory-skills-approvals",
        ),
    ],
)
def test_the_stacks_match_upstream(
    kwargs: dict[str, Any], recorded: Callable[[str], Stacks]
) -> None:
    from deepagents.backends import StateBackend as UpstreamState

    _build(kwargs, UpstreamState(), nbagents.backends.StateBackend())
    assert _ours(recorded("nbagents")) == _upstream(recorded("upstream"))


def test_callers_middleware_replaces_by_name_and_lands_before_the_tail(
    recorded: Callable[[str], Stacks],
) -> None:
    from deepagents.backends import StateBackend as UpstreamState
    from deepagents.middleware.patch_tool_calls import PatchToolCallsMiddleware as UpstreamPatch

    model = ScriptedChatModel(script={})
    deepagents.create_deep_agent(
        model,
        backend=UpstreamState(),
        memory=["/AGENTS.md"],
        middleware=[TodoListMiddleware(), UpstreamPatch()],
    )
    nbagents.create_deep_agent(
        model,
        backend=nbagents.backends.StateBackend(),
        memory=["/AGENTS.md"],
        middleware=[TodoListMiddleware(), nbagents.middleware.PatchToolCallsMiddleware()],
    )
    ours, upstream = _ours(recorded("nbagents")), _upstream(recorded("upstream"))
    assert ours == upstream
    assert ours["main"].index("TodoListMiddleware") < ours["main"].index("MemoryMiddleware")
    assert "TodoListMiddleware" not in ours["general-purpose"]


def test_excluded_middleware_removes_a_default_and_refuses_the_required(
    recorded: Callable[[str], Stacks],
) -> None:
    model = ScriptedChatModel(script={})
    nbagents.create_deep_agent(
        model, excluded_middleware=["SummarizationMiddleware", "PatchToolCallsMiddleware"]
    )
    for names in recorded("nbagents").values():
        assert "AnthropicPromptCachingMiddleware" in names
        assert not {"SummarizationMiddleware", "PatchToolCallsMiddleware"} & set(names)
    with pytest.raises(ValueError, match="SubAgentMiddleware"):
        nbagents.create_deep_agent(model, excluded_middleware=["SubAgentMiddleware"])


def test_the_defaults_add_no_graph_node() -> None:
    """They act inside the model call: a short run traces as it would without them."""
    model = ScriptedChatModel(script={})
    bare = nbagents.create_deep_agent(
        model,
        excluded_middleware=[
            "SummarizationMiddleware",
            "PatchToolCallsMiddleware",
            "AnthropicPromptCachingMiddleware",
        ],
    )
    assert set(nbagents.create_deep_agent(model).get_graph().nodes) == set(bare.get_graph().nodes)
