"""deepagents' unit tests of its memory middleware, ported to nbagents' own (the summarization
cases, and the module docstring saying how, are in test_stack_ported.py).

Upstream file: ``libs/deepagents/tests/unit_tests/middleware/test_memory_middleware.py``, and
its ``_async`` twin, folded into the same tests by ``mode``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest
from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.runnables.config import var_child_runnable_config
from langgraph._internal._constants import CONFIG_KEY_RUNTIME
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.constants import CONF
from langgraph.runtime import Runtime, ServerInfo
from langgraph.store.memory import InMemoryStore

from nbagents import create_deep_agent
from nbagents.backends import FilesystemBackend, StateBackend, StoreBackend
from nbagents.middleware import (
    MemoryMiddleware,
)
from nbagents.models import ScriptedChatModel, Turn, say

_CACHE = "no cache breakpoint on the memory block: `add_cache_control` is accepted and ignored"
DIFFERENCES = {
    "test_memory_system_prompt_trust_and_investigation_balance": (
        "the memory section is nbagents' own text, without upstream's headings"
    ),
    "test_modify_request_tags_last_block_when_enabled_and_anthropic": _CACHE,
    "test_modify_request_preserves_existing_block_fields": _CACHE,
    "test_modify_request_cache_control_runs_with_system_prompt_none": _CACHE,
    "test_create_deep_agent_wires_cache_control_for_anthropic_memory": _CACHE,
}
"""Upstream cases nbagents does not share, and why (rows of docs/coming-from-deepagents.md)."""

MODES = ["sync", "async"]


def _memory_files(tmp_path: Path, **files: str) -> tuple[FilesystemBackend, list[str]]:
    """A real-disk backend (upstream's ``virtual_mode=False``) holding ``files`` by name."""
    backend = FilesystemBackend(root_dir=tmp_path, virtual_mode=False)
    paths = [str(tmp_path / name / "AGENTS.md") for name in files]
    uploads = [(p, text.encode()) for p, text in zip(paths, files.values(), strict=True)]
    assert all(r.error is None for r in backend.upload_files(uploads))
    return backend, paths


def _load(mw: MemoryMiddleware, state: dict[str, Any], mode: str) -> Any:
    if mode == "sync":
        return mw.before_agent(cast(Any, state), cast(Any, None))
    return asyncio.run(mw.abefore_agent(cast(Any, state), cast(Any, None)))


def _recording_model(prompts: list[BaseMessage]) -> ScriptedChatModel:
    def replies(_agent: str, messages: list[BaseMessage]) -> Turn:
        prompts.append(messages[0])
        return say("Understood.")

    return ScriptedChatModel(responder=replies)


# -- memory: formatting --------------------------------------------------------------------------


@pytest.mark.parametrize("sources", [[], ["/test/AGENTS.md"]])
def test_no_memory_shows_a_placeholder(sources: list[str]) -> None:
    """upstream: test_format_agent_memory_empty and test_format_agent_memory_empty_sources
    (nbagents' placeholder and section are its own words)."""
    assert MemoryMiddleware(sources=sources).format_memory({}) == "(no memory files yet)"


def test_each_file_is_shown_under_its_path_in_the_sources_order() -> None:
    """upstream: test_format_agent_memory_single, test_format_agent_memory_multiple,
    test_format_agent_memory_preserves_order and
    test_format_agent_memory_location_content_pairing."""
    mw = MemoryMiddleware(sources=["/first/AGENTS.md", "/second/AGENTS.md"])
    text = mw.format_memory({"/second/AGENTS.md": "Second content", "/first/AGENTS.md": "First"})
    places = [text.find(s) for s in ("/first/AGENTS.md", "First", "/second/", "Second content")]
    assert -1 not in places and places == sorted(places)


def test_a_source_without_content_is_left_out() -> None:
    # upstream: test_format_agent_memory_skips_missing_sources
    mw = MemoryMiddleware(sources=["/user/AGENTS.md", "/project/AGENTS.md"])
    text = mw.format_memory({"/user/AGENTS.md": "User content only"})
    assert "/user/AGENTS.md" in text and "User content only" in text
    assert "/project/AGENTS.md" not in text


# -- memory: loading -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_the_files_are_read_into_memory_contents(tmp_path: Path, mode: str) -> None:
    """upstream: test_load_memory_from_backend_single_source,
    test_load_memory_from_backend_multiple_sources, test_memory_content_with_special_characters,
    test_memory_content_with_unicode, test_memory_content_with_large_file, and their async
    twins test_load_memory_from_backend_single_source_async,
    test_load_memory_from_backend_multiple_sources_async,
    test_memory_content_with_special_characters_async, test_memory_content_with_unicode_async,
    test_memory_content_with_large_file_async."""
    texts = {
        "user": "# User\n- Always use type hints",
        "special": '- `backticks` <xml> "Quotes" {braces} [brackets]',
        "unicode": "- 日本語 中文 🚀 ∀x∈ℝ",  # noqa: RUF001
        "large": "Line of content\n" * 500,
    }
    backend, paths = _memory_files(tmp_path, **texts)
    loaded = _load(MemoryMiddleware(backend=backend, sources=paths), {}, mode)

    assert loaded["memory_contents"] == dict(zip(paths, texts.values(), strict=True))


@pytest.mark.parametrize("mode", MODES)
def test_a_missing_file_is_skipped_in_one_batched_read(tmp_path: Path, mode: str) -> None:
    """upstream: test_load_memory_handles_missing_file,
    test_before_agent_batch_skips_missing_keeps_found,
    test_before_agent_batches_download_into_single_call, and async:
    test_load_memory_handles_missing_file_async,
    test_abefore_agent_batches_download_into_single_call."""
    backend, (found,) = _memory_files(tmp_path, exists="# Exists")
    reads: list[list[str]] = []
    download, adownload = backend.download_files, backend.adownload_files

    def spy(paths: list[str]) -> Any:
        reads.append(paths)
        return download(paths)

    async def aspy(paths: list[str]) -> Any:
        reads.append(paths)
        return await adownload(paths)

    if mode == "sync":  # the async read may go through the sync one: count only the mode's
        backend.download_files = spy  # type: ignore[method-assign]
    else:
        backend.adownload_files = aspy  # type: ignore[method-assign]
    missing = str(tmp_path / "missing" / "AGENTS.md")
    loaded = _load(MemoryMiddleware(backend=backend, sources=[missing, found]), {}, mode)

    assert loaded["memory_contents"] == {found: "# Exists"}
    assert len(reads) == 1


@pytest.mark.parametrize("mode", MODES)
def test_memory_already_in_the_state_is_not_read_again(tmp_path: Path, mode: str) -> None:
    """upstream: test_before_agent_skips_if_already_loaded and
    test_before_agent_skips_if_already_loaded_async."""
    backend, paths = _memory_files(tmp_path, user="- Some content")
    state = {"memory_contents": {paths[0]: "Already loaded content"}}
    assert _load(MemoryMiddleware(backend=backend, sources=paths), state, mode) is None


@pytest.mark.parametrize("mode", MODES)
def test_no_sources_load_nothing(tmp_path: Path, mode: str) -> None:
    """upstream: test_load_memory_with_empty_sources and
    test_load_memory_with_empty_sources_async."""
    mw = MemoryMiddleware(backend=FilesystemBackend(root_dir=tmp_path), sources=[])
    assert _load(mw, {}, mode) == {"memory_contents": {}}


# -- memory: in an agent -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_gets_its_memory_in_the_system_prompt_in_order(tmp_path: Path, mode: str) -> None:
    """upstream: test_agent_with_memory_middleware_system_prompt,
    test_agent_with_memory_middleware_multiple_sources, test_agent_with_memory_middleware_async,
    test_memory_middleware_order_matters, and async:
    test_agent_with_memory_middleware_multiple_sources_async,
    test_memory_middleware_order_matters_async."""
    backend, paths = _memory_files(
        tmp_path, first="First memory content", second="Second memory content"
    )
    prompts: list[BaseMessage] = []
    agent = create_agent(
        model=_recording_model(prompts),
        middleware=[MemoryMiddleware(backend=backend, sources=paths)],
    )
    inputs: Any = {"messages": [HumanMessage("Hello")]}
    result = agent.invoke(inputs) if mode == "sync" else asyncio.run(agent.ainvoke(inputs))

    assert "memory_contents" not in result
    assert isinstance(prompts[0], SystemMessage)
    text = prompts[0].text
    assert all(p in text for p in paths)
    assert 0 < text.find("First memory content") < text.find("Second memory content")


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_without_memory_sources_still_runs(tmp_path: Path, mode: str) -> None:
    """upstream: test_agent_with_memory_middleware_empty_sources and
    test_agent_with_memory_middleware_empty_sources_async."""
    prompts: list[BaseMessage] = []
    mw = MemoryMiddleware(backend=FilesystemBackend(root_dir=tmp_path), sources=[])
    agent = create_agent(model=_recording_model(prompts), middleware=[mw])
    inputs: Any = {"messages": [HumanMessage("Hello")]}
    result = agent.invoke(inputs) if mode == "sync" else asyncio.run(agent.ainvoke(inputs))

    assert result["messages"][-1].text == "Understood."
    assert "(no memory files yet)" in prompts[0].text


def test_memory_takes_a_state_or_a_store_backend() -> None:
    """upstream: test_memory_middleware_with_state_backend and
    test_memory_middleware_with_store_backend_instance."""
    state = MemoryMiddleware(backend=StateBackend(), sources=["/memory/AGENTS.md"])
    store = MemoryMiddleware(
        backend=StoreBackend(store=InMemoryStore(), namespace=("filesystem",)), sources=[]
    )
    assert isinstance(state.backend, StateBackend) and state.sources == ["/memory/AGENTS.md"]
    assert isinstance(store.backend, StoreBackend)


@contextmanager
def _server(assistant_id: str | None) -> Iterator[None]:
    """A LangGraph runtime in context, as a LangGraph server sets it for a run."""
    info = ServerInfo(assistant_id=assistant_id, graph_id="g") if assistant_id is not None else None
    token = var_child_runnable_config.set({CONF: {CONFIG_KEY_RUNTIME: Runtime(server_info=info)}})
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


def _per_assistant(runtime: Runtime[Any]) -> tuple[str, ...]:
    assistant = runtime.server_info.assistant_id if runtime.server_info else None
    return (assistant, "filesystem") if assistant else ("filesystem",)


def test_a_store_namespace_per_assistant_keeps_memories_apart() -> None:
    """upstream: test_memory_middleware_with_store_backend_assistant_id and
    test_memory_middleware_with_store_backend_no_assistant_id."""
    store = InMemoryStore()
    mw = MemoryMiddleware(
        backend=StoreBackend(store=store, namespace=_per_assistant), sources=["/memory/AGENTS.md"]
    )

    def loaded(assistant: str | None) -> str | None:
        with _server(assistant):
            return cast(dict[str, str], _load(mw, {}, "sync")["memory_contents"]).get(
                "/memory/AGENTS.md"
            )

    def put(namespace: tuple[str, ...], text: str) -> None:
        store.put(namespace, "/memory/AGENTS.md", {"content": text, "encoding": "utf-8"})

    put(("assistant-123", "filesystem"), "Context for assistant 1")
    put(("filesystem",), "Default namespace context")
    assert loaded("assistant-123") == "Context for assistant 1"
    assert loaded("assistant-456") is None
    put(("assistant-456", "filesystem"), "Context for assistant 2")
    assert loaded("assistant-456") == "Context for assistant 2"
    assert loaded("assistant-123") == "Context for assistant 1"
    assert loaded(None) == loaded("") == "Default namespace context"


@pytest.mark.parametrize("exists", [True, False])
def test_create_deep_agent_runs_with_memory_on_disk(tmp_path: Path, exists: bool) -> None:
    """upstream: test_create_deep_agent_with_memory_and_filesystem_backend and
    test_create_deep_agent_with_memory_missing_files."""
    backend, paths = _memory_files(tmp_path, user="- Use deep agents wisely")
    if not exists:
        paths = [str(tmp_path / "nonexistent" / "AGENTS.md")]
    prompts: list[BaseMessage] = []
    agent = create_deep_agent(_recording_model(prompts), backend=backend, memory=paths)
    result = agent.invoke({"messages": [HumanMessage("What do you know?")]})

    assert result["messages"][-1].text == "Understood."
    assert ("Use deep agents wisely" in prompts[0].text) is exists


def test_create_deep_agent_reads_memory_from_the_state_files_without_a_backend() -> None:
    # upstream: test_create_deep_agent_with_memory_default_backend
    agent = create_deep_agent(
        _recording_model([]), memory=["/user/AGENTS.md"], checkpointer=InMemorySaver()
    )
    thread: Any = {"configurable": {"thread_id": "123"}}
    files = {"/user/AGENTS.md": {"content": "- Be helpful", "encoding": "utf-8"}}
    agent.invoke({"messages": [HumanMessage("What's in your memory?")], "files": files}, thread)

    values = agent.get_state(thread).values
    assert "/user/AGENTS.md" in values["files"]
    assert values["memory_contents"] == {"/user/AGENTS.md": "- Be helpful"}


# -- memory: the request -------------------------------------------------------------------------


def _request(model: Any = None, contents: dict[str, str] | None = None) -> ModelRequest[Any]:
    return ModelRequest(
        model=model or ScriptedChatModel(),
        messages=[HumanMessage("hi")],
        system_message=SystemMessage("base"),
        state=cast(Any, {"messages": [], "memory_contents": contents or {}}),
    )


def _anthropic() -> Any:
    anthropic = pytest.importorskip("langchain_anthropic")
    return anthropic.ChatAnthropic(model_name="claude-sonnet-4-6", api_key="fake")


@pytest.mark.parametrize("model", ["anthropic", "other"])
def test_no_cache_breakpoint_is_added_to_the_memory_block(model: str) -> None:
    """upstream: test_modify_request_no_tag_when_add_cache_control_false and
    test_modify_request_skips_tagging_on_non_anthropic_model."""
    mw = MemoryMiddleware(sources=[], add_cache_control=model == "other")
    result = mw.modify_request(_request(_anthropic() if model == "anthropic" else None))
    assert result.system_message is not None
    assert all("cache_control" not in block for block in result.system_message.content_blocks)


def test_the_system_prompt_must_be_text_with_the_memory_slot() -> None:
    """upstream: test_init_rejects_non_str_system_prompt and
    test_init_rejects_template_missing_agent_memory_slot."""
    with pytest.raises(TypeError, match="must be str or None"):
        MemoryMiddleware(sources=[], system_prompt=cast(Any, 0))
    with pytest.raises(ValueError, match="agent_memory"):
        MemoryMiddleware(sources=[], system_prompt="no slot here")


def test_without_a_system_prompt_the_request_is_unchanged() -> None:
    # upstream: test_modify_request_returns_unchanged_when_system_prompt_none
    request = _request()
    assert MemoryMiddleware(sources=[], system_prompt=None).modify_request(request) is request


def test_a_custom_template_is_used() -> None:
    # upstream: test_modify_request_uses_custom_template
    mw = MemoryMiddleware(sources=[], system_prompt="CUSTOM-START\n{agent_memory}\nCUSTOM-END")
    result = mw.modify_request(_request())
    assert result.system_message is not None
    assert "CUSTOM-START" in result.system_message.text
    assert "CUSTOM-END" in result.system_message.text


@pytest.mark.parametrize(
    ("text", "kept", "dropped"),
    [
        (
            "<!-- onboarding:start -->\n- Preferred name: Alice.\n<!-- onboarding:end -->\n\nMore.",
            ["Alice", "More."],
            ["<!--", "-->"],
        ),
        ("<!-- start -->\n<!-- end -->\n", ["(no memory files yet)"], ["/AGENTS.md", "<!--"]),
        (
            "preamble\n<!--\n  line one\n  line two\n-->\npostamble",
            ["preamble", "postamble"],
            ["line one"],
        ),
    ],
)
def test_html_comments_are_left_out_of_the_prompt(
    text: str, kept: list[str], dropped: list[str]
) -> None:
    """upstream: test_html_comments_stripped_from_memory_before_injection,
    test_comment_only_memory_file_produces_no_phantom_section and
    test_multiline_html_comment_stripped_from_memory."""
    mw = MemoryMiddleware(sources=["/AGENTS.md"], system_prompt="{agent_memory}")
    result = mw.modify_request(_request(contents={"/AGENTS.md": text}))
    assert result.system_message is not None
    injected = result.system_message.text.removeprefix("base")
    assert all(k in injected for k in kept) and not any(d in injected for d in dropped)
