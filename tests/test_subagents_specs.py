"""Sub-agent specs: validation, what the main agent is told, and what sub-agents inherit."""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool

from nbagents import (
    GENERAL_PURPOSE_SUBAGENT,
    BackgroundSubAgentMiddleware,
    ScriptedChatModel,
    SubAgentMiddleware,
    create_deep_agent,
    create_sub_agent,
)
from nbagents.backends import StateBackend
from nbagents.models import _providers as providers_module
from nbagents.models import call, delegate, parallel, say

RESEARCHER = {
    "name": "researcher",
    "description": "Researches a question and reports findings with sources.",
    "system_prompt": "You research.",
}
WRITER = {
    "name": "writer",
    "description": "Writes a short, polished text from notes.",
    "system_prompt": "You write.",
    "tools": [],
}


@tool
def search(query: str) -> str:
    """Search the web for ``query``."""
    return f"results for {query}"


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    return expression


def agent_list(text: str) -> list[str]:
    return re.findall(r"^- ([\w-]+): (.+)$", text, flags=re.MULTILINE)


# -- validation -------------------------------------------------------------------------------

NOOP = RunnableLambda(lambda state: state)


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ([{"description": "d", "system_prompt": "p"}], r"Sub-agent #1: missing 'name'"),
        ([{"name": "", "description": "d", "system_prompt": "p"}], r"Sub-agent #1: missing 'name'"),
        ([{"name": "a", "system_prompt": "p"}], r"Sub-agent 'a': missing 'description'"),
        ([{"name": "a", "description": " ", "system_prompt": "p"}], r"'a': missing 'description'"),
        ([{"name": "a", "description": "d"}], r"Sub-agent 'a': missing 'system_prompt'"),
        (
            [RESEARCHER, {**WRITER, "name": "researcher"}],
            r"Sub-agent 'researcher': duplicate name",
        ),
        (
            [{"name": "web search", "description": "d", "system_prompt": "p"}],
            r"Sub-agent 'web search': the name may only use letters, digits, '-' and '_'",
        ),
        (
            [{"name": "a.b", "description": "d", "system_prompt": "p"}],
            r"Sub-agent 'a.b': the name may only use",
        ),
        (
            [{"name": "c", "description": "d", "runnable": NOOP, "model": ScriptedChatModel()}],
            r"Sub-agent 'c': give either 'runnable' .* or 'model' .*, not both",
        ),
        (
            [{"name": "c", "description": "d", "runnable": "not a runnable"}],
            r"Sub-agent 'c': 'runnable' must be a LangChain Runnable",
        ),
        (
            [{"name": "a", "description": "d", "system_prompt": "p", "model": 42}],
            r"Sub-agent 'a': 'model' must be a chat model or a 'provider:model' string",
        ),
        ([RESEARCHER, "writer"], r"Sub-agent spec #2 must be a dict"),
    ],
)
def test_invalid_specs_fail_at_construction_naming_spec_and_problem(
    specs: list[Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        create_deep_agent(ScriptedChatModel(), subagents=specs)
    with pytest.raises(ValueError, match=message):
        SubAgentMiddleware(default_model=ScriptedChatModel(), subagents=specs)


def test_valid_names_use_letters_digits_dash_and_underscore() -> None:
    spec = {**RESEARCHER, "name": "Web_search-2"}
    middleware = SubAgentMiddleware(default_model=ScriptedChatModel(), subagents=[spec])
    assert middleware.subagent_names == ["general-purpose", "Web_search-2"]


def test_an_unresolvable_model_string_fails_at_construction_naming_the_spec() -> None:
    spec = {**RESEARCHER, "model": "no-such-provider:model-x"}
    with pytest.raises(ValueError, match=r"Sub-agent 'researcher': cannot initialise model"):
        create_deep_agent(ScriptedChatModel(), subagents=[spec])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {**RESEARCHER, "modle": "openai:gpt-4o"},
            "Sub-agent 'researcher': unknown key 'modle' (did you mean 'model'?).",
        ),
        (
            {"name": "researcher", "description": "d", "sytem_prompt": "p"},
            "Sub-agent 'researcher': missing 'system_prompt' (a non-empty string); "
            "unknown key 'sytem_prompt' (did you mean 'system_prompt'?).",
        ),
        (
            {**RESEARCHER, "tool": [search], "middlewares": []},
            "Sub-agent 'researcher': unknown key 'tool' (did you mean 'tools'?); "
            "unknown key 'middlewares' (did you mean 'middleware'?).",
        ),
        (
            {"nmae": "researcher", "description": "d", "system_prompt": "p"},
            "Sub-agent #1: missing 'name' (a non-empty string); "
            "unknown key 'nmae' (did you mean 'name'?).",
        ),
        (
            {**RESEARCHER, "temperature": 0},
            "Sub-agent 'researcher': unknown key 'temperature' (a SubAgent takes 'name', "
            "'description', 'system_prompt', 'tools', 'model', 'middleware', 'interrupt_on', "
            "'response_format', 'skills', 'permissions', 'mode', 'limits').",
        ),
        (
            {"name": "c", "description": "d", "runable": NOOP},
            "Sub-agent 'c': missing 'system_prompt' (a non-empty string); "
            "unknown key 'runable' (did you mean 'runnable'?).",
        ),
        (
            {"name": "w", "description": "d", "url": "http://h", "graph_id": "g", "header": {}},
            "Sub-agent 'w': unknown key 'header' (did you mean 'headers'?).",
        ),
        (
            {"name": "c", "description": "d", "runnable": NOOP, "tools": [search]},
            "Sub-agent 'c': a CompiledSubAgent runs its runnable as it was built; ['tools'] "
            "belong to a SubAgent or a RemoteSubAgent.",
        ),
        (
            {**RESEARCHER, "headers": {"x-key": "k"}},
            "Sub-agent 'researcher': only a RemoteSubAgent (with 'url' and 'graph_id') "
            "takes ['headers'].",
        ),
        (
            {**RESEARCHER, "mode": "forked"},
            "Sub-agent 'researcher': 'mode' must be 'isolated' or 'fork'.",
        ),
    ],
)
def test_an_unknown_or_misplaced_key_is_named_with_the_key_it_resembles(
    spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        create_deep_agent(ScriptedChatModel(), subagents=[spec])
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        SubAgentMiddleware(default_model=ScriptedChatModel(), subagents=[spec])


def test_every_key_of_upstream_deepagents_specs_is_accepted() -> None:
    # Read from the installed deepagents, so a key a new release adds fails here (KeyError)
    # until nbagents knows it.
    upstream = pytest.importorskip("deepagents.middleware.subagents")
    upstream_async = pytest.importorskip("deepagents.middleware.async_subagents")
    permission = pytest.importorskip("deepagents.middleware.filesystem").FilesystemPermission
    values: dict[str, Any] = {
        "description": "d",
        "system_prompt": "p",
        "tools": [search],
        "model": ScriptedChatModel(),
        "middleware": [],
        "interrupt_on": {"search": True},
        "skills": ["/skills/"],
        "permissions": [permission(operations=["write"], paths=["/**"], mode="deny")],
        "response_format": {"type": "object", "properties": {"a": {"type": "string"}}},
        "mode": "isolated",
        "runnable": NOOP,
        "graph_id": "worker",
        "url": "http://127.0.0.1:9",
        "headers": {"x-key": "k"},
        "webhook": "http://127.0.0.1:9/done",
        "update_strategy": "interrupt",
        "notify_parent": False,
    }

    def spec(kind: Any, name: str) -> dict[str, Any]:
        keys = [k for k in kind.__annotations__ if k != "name"]
        return {"name": name, **{k: values[k] for k in keys}}

    local = spec(upstream.SubAgent, "local")
    compiled = spec(upstream.CompiledSubAgent, "compiled")
    remote = spec(upstream_async.AsyncSubAgent, "remote")
    with pytest.warns(UserWarning) as warned:
        create_deep_agent(
            ScriptedChatModel(), subagents=[local, compiled, remote], backend=StateBackend()
        )
    # A word for each setting nbagents does not act on, at the line that built the agent; none
    # for the values it follows anyway (mode='isolated', update_strategy='interrupt', ...).
    assert [str(w.message) for w in warned] == [
        "Sub-agent 'local': nbagents accepts 'permissions' from upstream deepagents but does not "
        "act on it: its file tools reach whatever the backend allows; give the backend access "
        "rules instead, e.g. DiskBackend(root, rules=[AccessRule.deny('/secrets/**')]).",
        "Sub-agent 'remote': nbagents accepts 'webhook' from upstream deepagents but does not "
        "act on it: the server is not told to call it.",
    ]
    assert {w.filename for w in warned} == {__file__}


REMOTE = {"name": "w", "description": "d", "url": "http://127.0.0.1:9", "graph_id": "g"}
NO_WAKING = (
    "Sub-agent 'w': 'notify_parent': {!r} asks the finished task to wake the agent that "
    "started it, which nbagents does not do. Instead, a task that finished is announced to the "
    "agent before its next model call, and check_async_task reads it at any time. Set "
    "'notify_parent': False or leave the key out."
)


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ({"mode": "fork"}, "it starts from its task alone, as mode='isolated'"),
        ({"webhook": "http://h/done"}, "the server is not told to call it"),
    ],
)
def test_an_upstream_setting_nbagents_does_not_act_on_is_a_warning(
    spec: dict[str, Any], said: str
) -> None:
    with pytest.warns(UserWarning, match=re.escape(said)):
        create_deep_agent(ScriptedChatModel(), subagents=[{**REMOTE, **spec}])


@pytest.mark.parametrize("value", [True, "yes"])
@pytest.mark.parametrize("background", [True, False], ids=["background", "through-task"])
def test_notify_parent_asking_to_wake_the_parent_is_refused(value: Any, background: bool) -> None:
    spec = {**REMOTE, "background": background, "notify_parent": value}
    message = f"^{re.escape(NO_WAKING.format(value))}$"
    with pytest.raises(ValueError, match=message):
        create_deep_agent(ScriptedChatModel(), subagents=[spec])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=message):
        BackgroundSubAgentMiddleware([spec])  # type: ignore[list-item]


def test_enqueue_is_taken_for_background_tasks_and_refused_where_no_follow_up_comes() -> None:
    queued = {**REMOTE, "background": True, "update_strategy": "enqueue", "notify_parent": False}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # acted on: not a word
        create_deep_agent(ScriptedChatModel(), subagents=[queued])  # type: ignore[list-item]
        middleware = BackgroundSubAgentMiddleware([queued])  # type: ignore[list-item]
    [update] = [t for t in middleware.tools if t.name == "update_async_task"]
    assert "the follow-up waits" in update.description
    assert "interrupted" not in update.description

    # Through task there is no follow-up to queue: the key would do nothing.
    through_task = {k: v for k, v in queued.items() if k != "background"}
    with pytest.raises(ValueError, match=r"^Sub-agent 'w': 'update_strategy': 'enqueue' queues"):
        create_deep_agent(ScriptedChatModel(), subagents=[through_task])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="runs through the task tool, which sends none"):
        SubAgentMiddleware(default_model=ScriptedChatModel(), subagents=[through_task])  # type: ignore[list-item]


def test_the_update_tool_says_which_sub_agents_queue_follow_ups() -> None:
    interrupting = {**REMOTE, "name": "fast", "background": True}
    queueing = {**interrupting, "name": "careful", "update_strategy": "enqueue"}
    middleware = BackgroundSubAgentMiddleware([interrupting, queueing])  # type: ignore[list-item]
    [update] = [t for t in middleware.tools if t.name == "update_async_task"]
    assert update.description.endswith(
        "A task still running is interrupted and starts on the follow-up at once, except on "
        "careful: there it waits for the current job to end."
    )
    alone = BackgroundSubAgentMiddleware([interrupting])  # type: ignore[list-item]
    [update] = [t for t in alone.tools if t.name == "update_async_task"]
    assert update.description.endswith("starts on the follow-up at once.")


@pytest.mark.parametrize(
    ("tools", "problem"),
    [
        (
            ["search"],
            "item #1 is the name 'search': pass the tool itself (a BaseTool, a @tool function "
            "or a plain callable), not its name.",
        ),
        (
            "search",
            "must be a list of tools (a BaseTool, a @tool function or a plain callable each), "
            "not str 'search'.",
        ),
        (search, "must be a list of tools, not one tool: write [search]."),
        (
            [search, None],
            "item #2 must be a BaseTool, a @tool function or a plain callable, not NoneType None.",
        ),
    ],
)
def test_a_tool_given_by_name_fails_at_build_naming_who_and_what_to_pass(
    tools: Any, problem: str
) -> None:
    def exactly(text: str) -> str:
        return f"^{re.escape(text)}$"

    spec = {**RESEARCHER, "tools": tools}
    with pytest.raises(ValueError, match=exactly(f"Sub-agent 'researcher': 'tools' {problem}")):
        create_deep_agent(ScriptedChatModel(), subagents=[spec])
    with pytest.raises(TypeError, match=exactly(f"create_deep_agent: tools= {problem}")):
        create_deep_agent(ScriptedChatModel(), tools=tools)
    with pytest.raises(TypeError, match=exactly(f"SubAgentMiddleware: default_tools= {problem}")):
        SubAgentMiddleware(default_model=ScriptedChatModel(), default_tools=tools)


def test_create_sub_agent_refuses_what_a_main_agent_would() -> None:
    spec: Any = {**RESEARCHER, "model": ScriptedChatModel(), "tools": ["search"]}
    with pytest.raises(ValueError, match="'researcher': 'tools' item #1 is the name 'search'"):
        create_sub_agent(spec)
    with pytest.raises(ValueError, match="unknown key 'modle' \\(did you mean 'model'\\?\\)"):
        create_sub_agent({**spec, "tools": [search], "modle": "x"})


# -- what the main agent is told --------------------------------------------------------------


def test_task_tool_description_lists_every_subagent() -> None:
    middleware = SubAgentMiddleware(
        default_model=ScriptedChatModel(), subagents=[RESEARCHER, WRITER]
    )
    (task,) = middleware.tools
    assert task.name == "task"
    assert agent_list(task.description) == [
        ("general-purpose", " ".join(GENERAL_PURPOSE_SUBAGENT["description"].split())),
        ("researcher", RESEARCHER["description"]),
        ("writer", WRITER["description"]),
    ]
    assert "several `task` calls in one message" in task.description
    assert set(task.args) == {"description", "subagent_type"}
    assert task.args["subagent_type"]["default"] == "general-purpose"


async def test_main_system_prompt_gets_a_delegation_section_listing_every_subagent(
    run_agent: Any, model_calls: Any
) -> None:
    model = ScriptedChatModel(script={"main": ["Nothing to delegate."]})
    agent = create_deep_agent(
        model, [search], system_prompt="You are the lead.", subagents=[RESEARCHER, WRITER]
    )
    await run_agent(agent, {"messages": [("user", "hi")]})
    (only,) = model_calls.calls
    system = only.messages[0]
    assert isinstance(system, SystemMessage)
    assert system.text.startswith("You are the lead.\n\n")
    assert [name for name, _ in agent_list(system.text)] == [
        "general-purpose",
        "researcher",
        "writer",
    ]
    for when in ("Delegate when", "Do it yourself when", "in the same message"):
        assert when in system.text
    assert sorted(only.tools) == ["search", "task"]


def test_general_purpose_exists_unless_the_user_defines_one() -> None:
    default = SubAgentMiddleware(default_model=ScriptedChatModel(), subagents=[RESEARCHER])
    assert default.subagent_names == ["general-purpose", "researcher"]

    mine = {"name": "general-purpose", "description": "My own helper.", "system_prompt": "Help."}
    custom = SubAgentMiddleware(default_model=ScriptedChatModel(), subagents=[RESEARCHER, mine])
    assert custom.subagent_names == ["researcher", "general-purpose"]
    assert ("general-purpose", "My own helper.") in agent_list(custom.tools[0].description)
    assert GENERAL_PURPOSE_SUBAGENT["description"] not in custom.tools[0].description

    none = SubAgentMiddleware(
        default_model=ScriptedChatModel(), subagents=[RESEARCHER], general_purpose_agent=False
    )
    assert none.subagent_names == ["researcher"]


async def test_a_user_defined_general_purpose_agent_is_the_one_that_runs(
    run_agent: Any, model_calls: Any
) -> None:
    mine = {"name": "general-purpose", "description": "Mine.", "system_prompt": "MY PROMPT"}
    model = ScriptedChatModel(
        script={"main": [delegate("do it"), say("ok")], "general-purpose": ["done"]}
    )
    await run_agent(create_deep_agent(model, subagents=[mine]), {"messages": [("user", "go")]})
    (child,) = model_calls.of("general-purpose")
    assert child.messages[0].text.startswith("MY PROMPT")


async def test_without_general_purpose_a_lone_subagent_is_the_default_type(
    run_agent: Any, model_calls: Any
) -> None:
    model = ScriptedChatModel(
        script={"main": [call("task", description="find it"), say("ok")], "researcher": ["found"]}
    )
    agent = create_deep_agent(model, subagents=[RESEARCHER], general_purpose_agent=False)
    result = await run_agent(agent, {"messages": [("user", "go")]})
    assert result["messages"][2].text == "found"
    assert len(model_calls.of("researcher")) == 1
    lone = SubAgentMiddleware(
        default_model=model, subagents=[RESEARCHER], general_purpose_agent=False
    )
    assert lone.tools[0].args["subagent_type"]["default"] == "researcher"


def test_a_structured_system_prompt_keeps_its_blocks() -> None:
    # Content blocks can carry provider settings such as Anthropic's cache_control.
    seen: list[Any] = []
    block = {"type": "text", "text": "Base prompt.", "cache_control": {"type": "ephemeral"}}
    middleware = SubAgentMiddleware(default_model=ScriptedChatModel(), subagents=[RESEARCHER])

    class Request:
        system_message = SystemMessage(content=[block])

        def override(self, **changes: Any) -> Any:
            seen.append(changes["system_message"])
            return self

    middleware.wrap_model_call(Request(), lambda request: request)  # type: ignore[arg-type]
    (system,) = seen
    assert system.content[0] == block
    assert system.content[1]["type"] == "text" and "`task`" in system.content[1]["text"]


# -- what sub-agents inherit ------------------------------------------------------------------


async def test_subagents_without_tools_inherit_the_main_tools(
    run_agent: Any, model_calls: Any
) -> None:
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(
                    delegate("find", "researcher"), delegate("draft", "writer"), delegate("any")
                ),
                say("ok"),
            ],
            "researcher": [call("search", query="q"), say("found")],
            "writer": ["drafted"],
            "general-purpose": [call("calculator", expression="1+1"), say("2")],
        }
    )
    agent = create_deep_agent(model, [search, calculator], subagents=[RESEARCHER, WRITER])
    result = await run_agent(agent, {"messages": [("user", "go")]})
    assert [m.text for m in result["messages"] if m.type == "tool"] == ["found", "drafted", "2"]
    tools = {c.agent: sorted(c.tools) for c in model_calls.calls}
    assert tools["researcher"] == ["calculator", "search", "task"]
    assert tools["general-purpose"] == ["calculator", "search", "task"]
    # `tools: []` means no tools of its own; delegating stays possible.
    assert tools["writer"] == ["task"]


async def test_subagents_without_model_use_the_main_model_and_others_their_own(
    run_agent: Any,
) -> None:
    own = ScriptedChatModel(script={"critic": ["Own model's critique."]})
    main = ScriptedChatModel(
        script={
            "main": [
                parallel(
                    delegate("find", "researcher"),
                    delegate("judge", "critic"),
                    delegate("x", "helper"),
                ),
                "ok",
            ],
            "researcher": ["Main model's findings."],
            "helper": ["Main model helping."],
        }
    )
    critic = {"name": "critic", "description": "Judges.", "system_prompt": "Judge.", "model": own}
    helper = {"name": "helper", "description": "Helps.", "system_prompt": "Help.", "model": None}
    agent = create_deep_agent(main, subagents=[RESEARCHER, critic, helper])
    result = await run_agent(agent, {"messages": [("user", "go")]})
    answers = [m.text for m in result["messages"] if m.type == "tool"]
    assert answers == ["Main model's findings.", "Own model's critique.", "Main model helping."]


class _Resolved:
    """Stands in for ``init_chat_model``: records the strings it resolves."""

    def __init__(self, model: BaseChatModel) -> None:
        self.model = model
        self.asked: list[str] = []

    def __call__(self, name: str, **kwargs: Any) -> BaseChatModel:
        self.asked.append(name)
        return self.model


async def test_a_provider_model_string_is_resolved_with_init_chat_model(
    run_agent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolved = _Resolved(ScriptedChatModel(script={"critic": ["Resolved model speaking."]}))
    monkeypatch.setattr(providers_module, "init_chat_model", resolved)
    critic = {
        "name": "critic",
        "description": "Judges.",
        "system_prompt": "Judge.",
        "model": "anthropic:claude-sonnet-4-5",
    }
    main = ScriptedChatModel(script={"main": [delegate("judge", "critic"), "ok"]})
    agent = create_deep_agent(main, subagents=[critic])
    assert resolved.asked == ["anthropic:claude-sonnet-4-5"]
    result = await run_agent(agent, {"messages": [("user", "go")]})
    assert [m.text for m in result["messages"] if m.type == "tool"] == ["Resolved model speaking."]


def test_a_real_provider_string_resolves_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    chat_anthropic = pytest.importorskip("langchain_anthropic").ChatAnthropic
    # Never sent: building the model makes no request (without a key it is refused, see
    # tests/test_models_strings.py).
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-never-sent")
    seen: list[BaseChatModel] = []
    real = providers_module.init_chat_model

    def spy(name: str, **kwargs: Any) -> BaseChatModel:
        seen.append(real(name, **kwargs))
        return seen[-1]

    monkeypatch.setattr(providers_module, "init_chat_model", spy)
    critic = {**RESEARCHER, "model": "anthropic:claude-sonnet-4-5"}
    create_deep_agent(ScriptedChatModel(), subagents=[critic])
    assert [type(m) for m in seen] == [chat_anthropic]


def test_create_deep_agent_takes_a_provider_model_string(monkeypatch: pytest.MonkeyPatch) -> None:
    resolved = _Resolved(ScriptedChatModel(script={"main": ["Hello from the string model."]}))
    monkeypatch.setattr(providers_module, "init_chat_model", resolved)
    agent = create_deep_agent("anthropic:claude-sonnet-4-5")
    assert resolved.asked == ["anthropic:claude-sonnet-4-5"]
    result = agent.invoke({"messages": [("user", "hi")]})
    assert result["messages"][-1].text == "Hello from the string model."
