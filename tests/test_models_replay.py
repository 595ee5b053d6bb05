"""Record/replay: ``RecordingChatModel`` and its JSON cassettes."""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from nbagents.models import (
    CassetteFormatError,
    CassetteMissError,
    RecordingChatModel,
    ScriptedChatModel,
    recorded,
)
from nbagents.models._cassette import CASSETTE_VERSION, Cassette
from nbagents.models.replay import MODE_ENV

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _import(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


research = _import("research")
sys.path.insert(0, str(EXAMPLES))
record_cassette = _import("record_cassette")


def plain_state(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages without what differs between any two runs: ids (uuid4) and durations."""
    out = []
    for message in state["messages"]:
        data = message.model_dump()
        data.pop("id")
        artifact = data.get("artifact")
        if isinstance(artifact, dict):
            data["artifact"] = {k: v for k, v in artifact.items() if k != "duration_s"}
        out.append(data)
    return out


def run(model: BaseChatModel, question: str = research.QUESTION) -> dict[str, Any]:
    result: dict[str, Any] = research.build_agent(model).invoke({"messages": [("user", question)]})
    return result


async def arun(model: BaseChatModel) -> dict[str, Any]:
    agent = research.build_agent(model)
    result: dict[str, Any] = await agent.ainvoke({"messages": [("user", research.QUESTION)]})
    return result


@pytest.fixture(autouse=True)
def _no_mode_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MODE_ENV, raising=False)


@pytest.fixture
def recording(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A cassette recorded from the scripted research run, and that run's final state."""
    path = tmp_path / "run.json"
    state = run(recorded(research.scripted_model(), path, "record"))
    return path, state


class SpyModel(BaseChatModel):
    """A provider-like model: list content, provider ids, llm_output; counts its calls."""

    reply: AIMessage
    calls: list[dict[str, Any]] = Field(default_factory=list)
    bound: list[list[str]] = Field(default_factory=list)
    llm_output: dict[str, Any] | None = None

    @property
    def _llm_type(self) -> str:
        return "spy"

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        schemas = [convert_to_openai_tool(t) for t in tools]
        self.bound.append([s["function"]["name"] for s in schemas])
        return self.bind(tools=schemas, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(kwargs)
        return ChatResult(
            generations=[
                ChatGeneration(message=self.reply.model_copy(), generation_info={"logprobs": None})
            ],
            llm_output=self.llm_output,
        )


def spy(**kwargs: Any) -> SpyModel:
    return SpyModel(**kwargs)


# -- a full run, recorded then replayed ---------------------------------------------------------


def test_record_then_replay_gives_an_identical_final_state(
    recording: tuple[Path, dict[str, Any]],
) -> None:
    path, recorded_state = recording
    replayed_state = run(recorded(None, path, "replay"))
    assert plain_state(replayed_state) == plain_state(recorded_state)
    tasks = [m for m in replayed_state["messages"] if isinstance(m, ToolMessage)]
    assert len(tasks) == 3
    for message in tasks:
        assert message.artifact["status"] == "ok"
        assert message.artifact["tokens"]["total"] > 0
    usage = [m.usage_metadata for m in replayed_state["messages"] if isinstance(m, AIMessage)]
    assert all(u and u["total_tokens"] > 0 for u in usage)
    assert replayed_state["messages"][-1].response_metadata["model_name"] == "scripted-model"


def test_recording_run_matches_a_plain_scripted_run(
    recording: tuple[Path, dict[str, Any]],
) -> None:
    _, recorded_state = recording
    assert plain_state(recorded_state) == plain_state(run(research.scripted_model()))


def test_parallel_subagents_replay_under_invoke_and_ainvoke(
    recording: tuple[Path, dict[str, Any]],
) -> None:
    path, recorded_state = recording
    expected = plain_state(recorded_state)
    for _ in range(3):
        assert plain_state(run(recorded(None, path, "replay"))) == expected
    assert plain_state(asyncio.run(arun(recorded(None, path, "replay")))) == expected


async def test_replay_under_ainvoke_inside_a_running_loop(
    recording: tuple[Path, dict[str, Any]],
) -> None:
    path, recorded_state = recording
    results = await asyncio.gather(*(arun(recorded(None, path, "replay")) for _ in range(2)))
    for state in results:
        assert plain_state(state) == plain_state(recorded_state)


def test_replay_streams_and_ends_in_the_same_state(
    recording: tuple[Path, dict[str, Any]],
) -> None:
    path, recorded_state = recording
    model = recorded(None, path, "replay", note=None)
    model.stream_chunk_chars = 8
    agent = research.build_agent(model)
    chunks, final = [], None
    for mode, data in agent.stream(
        {"messages": [("user", research.QUESTION)]}, stream_mode=["messages", "values"]
    ):
        if mode == "messages":
            chunks.append(data[0])
        else:
            final = data
    assert final is not None
    assert plain_state(final) == plain_state(recorded_state)
    answer_pieces = [c.content for c in chunks if isinstance(c.content, str) and c.content]
    assert len(answer_pieces) > 5
    assert "".join(answer_pieces).endswith(research.FINAL)


def test_model_level_stream_of_a_recorded_response(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    scripted = ScriptedChatModel(script={"solo": ["a fairly long answer to stream"]})
    first = recorded(scripted, path, "record").invoke([HumanMessage("hi")])
    replay = recorded(None, path, "replay", note=None)
    replay.stream_chunk_chars = 5
    pieces = list(replay.stream([HumanMessage("hi")]))
    assert len(pieces) > 3
    merged = pieces[0]
    for piece in pieces[1:]:
        merged += piece
    assert merged.content == first.content == "a fairly long answer to stream"
    assert merged.usage_metadata == first.usage_metadata


def test_the_committed_cassette_replays_offline() -> None:
    state = run(recorded("openai:gpt-4.1-mini", research.CASSETTE, "replay"))
    assert state["messages"][-1].content == research.FINAL
    subagents = sorted(
        m.artifact["subagent"] for m in state["messages"] if isinstance(m, ToolMessage)
    )
    assert subagents == ["critic", "researcher", "researcher"]
    data = json.loads(research.CASSETTE.read_text())
    assert "ScriptedChatModel" in data["note"]


def test_the_committed_cassette_is_up_to_date(tmp_path: Path) -> None:
    fresh = tmp_path / "research.json"
    record_cassette.record(fresh)
    assert fresh.read_text() == research.CASSETTE.read_text(), (
        "examples/cassettes/research.json is stale: the prompts, sub-agents or task tool "
        "changed. Regenerate it with: python examples/record_cassette.py"
    )


# -- misses ------------------------------------------------------------------------------------


def test_a_missing_request_names_agent_message_key_and_the_fix(
    recording: tuple[Path, dict[str, Any]],
) -> None:
    path, _ = recording
    with pytest.raises(CassetteMissError) as info:
        run(recorded(None, path, "replay"), question="A different question")
    error = info.value
    message = str(error)
    assert error.agent == "main"
    assert error.key in message
    assert "agent 'main'" in message
    assert "'A different question'" in message
    assert str(path) in message
    assert "first differs at message 2, a human message" in message
    assert "mode='auto'" in message and MODE_ENV in message


def test_a_subagent_miss_is_reported_by_the_next_main_miss(
    recording: tuple[Path, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = recording
    monkeypatch.setitem(research._RESULTS, "DuckDB analytical query performance", "changed")
    with pytest.raises(CassetteMissError) as info:
        run(recorded(None, path, "replay"))
    message = str(info.value)
    assert info.value.agent == "main"
    assert "were missing too; the first was agent 'researcher'" in message


def test_misses_are_shared_by_the_models_of_one_cassette(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recorded(spy(reply=AIMessage("x")), path, "record").invoke("recorded")
    sub_model, main_model = recorded(None, path, "replay"), recorded(None, path, "replay")
    with pytest.raises(CassetteMissError) as first:
        sub_model.invoke("a", config={"metadata": {"lc_agent_name": "researcher"}})
    with pytest.raises(CassetteMissError, match="1 earlier request") as second:
        main_model.invoke("b", config={"metadata": {"lc_agent_name": "main"}})
    assert f"the first was agent 'researcher', key {first.value.key}" in str(second.value)


def test_other_tools_are_a_miss_with_a_hint(tmp_path: Path) -> None:
    @tool
    def alpha(x: str) -> str:
        """Alpha."""
        return x

    @tool
    def beta(x: str) -> str:
        """Beta."""
        return x

    path = tmp_path / "c.json"
    recorded(spy(reply=AIMessage("ok")), path, "record").bind_tools([alpha]).invoke("hi")
    replay = recorded(None, path, "replay").bind_tools([alpha, beta])
    with pytest.raises(CassetteMissError, match=r"same messages but other tools: \['alpha'\]"):
        replay.invoke("hi")


def test_unknown_agent_lists_recorded_agents(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recorded(spy(reply=AIMessage("ok")), path, "record").invoke("hi")
    with pytest.raises(CassetteMissError, match="has no request of this agent; it has: "):
        recorded(None, path, "replay").invoke("hi", config={"metadata": {"lc_agent_name": "x"}})


def test_replay_of_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="Record it first"):
        recorded(None, tmp_path / "none.json", "replay")


# -- modes -------------------------------------------------------------------------------------


def test_auto_replays_hits_and_records_misses(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    inner = spy(reply=AIMessage("first"))
    model = recorded(inner, path, "auto")
    assert model.effective_mode == "auto"
    assert model.invoke("one").content == "first"
    inner.reply = AIMessage("second")
    assert model.invoke("one").content == "first"
    assert model.invoke("two").content == "second"
    assert len(inner.calls) == 2
    assert len(Cassette(path)) == 2


def test_record_always_calls_and_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    inner = spy(reply=AIMessage("first"))
    recorded(inner, path, "record").invoke("one")
    inner.reply = AIMessage("second")
    assert recorded(inner, path, "record").invoke("one").content == "second"
    assert recorded(None, path, "replay").invoke("one").content == "second"
    assert len(inner.calls) == 2


def test_auto_without_a_model_is_a_miss(tmp_path: Path) -> None:
    with pytest.raises(CassetteMissError, match="no inner model to record it with"):
        recorded(None, tmp_path / "c.json").invoke("hi")


def test_mode_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODE_ENV, "Replay")
    recorded(spy(reply=AIMessage("x")), tmp_path / "c.json", "record").invoke("hi")
    assert recorded(None, tmp_path / "c.json").effective_mode == "replay"
    assert recorded(None, tmp_path / "c.json", "auto").effective_mode == "auto"
    monkeypatch.setenv(MODE_ENV, "sometimes")
    with pytest.raises(ValueError, match=f"{MODE_ENV}='sometimes'"):
        recorded(None, tmp_path / "c.json")


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Input should be 'record', 'replay' or 'auto'"):
        recorded(None, tmp_path / "c.json", "rewind")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a model to record"):
        recorded(None, tmp_path / "c.json", "record")
    with pytest.raises(TypeError, match="needs a cassette_path"):
        RecordingChatModel(spy(reply=AIMessage("x")))


def test_a_model_string_is_only_initialised_to_record(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recorded(spy(reply=AIMessage("x")), path, "record").invoke("hi")
    assert recorded("no-such-provider:model", path, "auto").invoke("hi").content == "x"
    with pytest.raises(CassetteMissError, match="could not be created: ValueError") as info:
        recorded("no-such-provider:model", path, "auto").invoke("other")
    assert "no-such-provider" in str(info.value)
    with pytest.raises(ValueError, match="no-such-provider"):
        recorded("no-such-provider:model", path, "record").invoke("other")


# -- what is recorded --------------------------------------------------------------------------


def test_bind_tools_reaches_the_inner_model_and_the_key(tmp_path: Path) -> None:
    @tool
    def lookup(term: str) -> str:
        """Look a term up."""
        return term

    path = tmp_path / "c.json"
    inner = spy(
        reply=AIMessage("", tool_calls=[{"name": "lookup", "args": {"term": "x"}, "id": "c1"}])
    )
    reply = recorded(inner, path, "record").bind_tools([lookup], tool_choice="any").invoke("hi")
    assert inner.bound == [["lookup"]]
    assert inner.calls[0]["tool_choice"] == "any"
    assert [t["function"]["name"] for t in inner.calls[0]["tools"]] == ["lookup"]
    assert reply.tool_calls == [
        {"name": "lookup", "args": {"term": "x"}, "id": "c1", "type": "tool_call"}
    ]
    [entry] = json.loads(path.read_text())["interactions"].values()
    assert entry["request"]["tools"] == ["lookup"]
    replay = recorded(None, path, "replay").bind_tools([lookup], tool_choice="any")
    assert replay.invoke("hi").tool_calls == reply.tool_calls
    with pytest.raises(CassetteMissError):
        recorded(None, path, "replay").bind_tools([lookup]).invoke("hi")


def test_provider_responses_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    content: list[str | dict[str, Any]] = [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"term": "x"}},
    ]
    reply = AIMessage(
        content=content,
        id="msg_provider_1",
        tool_calls=[{"name": "lookup", "args": {"term": "x"}, "id": "toolu_1"}],
        invalid_tool_calls=[
            {"name": "broken", "args": "{not json", "id": "toolu_2", "error": "bad JSON"}
        ],
        usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        response_metadata={"model_name": "provider-model", "stop_reason": "tool_use"},
        additional_kwargs={"refusal": None},
    )
    inner = spy(reply=reply, llm_output={"system_fingerprint": "fp_1"})
    live = recorded(inner, path, "record").invoke("hi")
    replayed = recorded(None, path, "replay").invoke("hi")
    for message in (live, replayed):
        assert message.id == "msg_provider_1"
        assert message.content == content
        assert message.tool_calls == reply.tool_calls
        assert message.invalid_tool_calls == reply.invalid_tool_calls
        assert message.usage_metadata == reply.usage_metadata
        assert message.response_metadata == {
            "model_name": "provider-model",
            "stop_reason": "tool_use",
            "system_fingerprint": "fp_1",
            "logprobs": None,
        }
        assert message.additional_kwargs == {"refusal": None}
    streamed = list(recorded(None, path, "replay").stream("hi"))
    merged = streamed[0]
    for piece in streamed[1:]:
        merged += piece
    assert merged.content == content
    assert merged.tool_calls == reply.tool_calls


def test_langchain_run_ids_are_not_recorded(recording: tuple[Path, dict[str, Any]]) -> None:
    path, _ = recording
    text = path.read_text()
    assert "lc_run" not in text
    assert "duration" not in text


def test_cassette_file_is_sorted_and_versioned(recording: tuple[Path, dict[str, Any]]) -> None:
    path, _ = recording
    text = path.read_text()
    data = json.loads(text)
    assert data["format"] == "nbagents-cassette"
    assert data["version"] == CASSETTE_VERSION
    assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    agents = sorted(e["request"]["agent"] for e in data["interactions"].values())
    assert agents == ["critic", "main", "main", "main"] + ["researcher"] * 4


def test_concurrent_recording_into_one_file(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    models = [recorded(spy(reply=AIMessage(f"m{i}")), path, "record") for i in range(2)]
    barrier = threading.Barrier(8)

    def work(n: int) -> None:
        barrier.wait()
        for j in range(5):
            models[n % 2].invoke(f"request {n}-{j}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(json.loads(path.read_text())["interactions"]) == 40
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    replay = recorded(None, path, "replay")
    assert replay.invoke("request 3-4").content == "m1"


def test_a_second_model_sees_entries_recorded_after_it_was_made(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recorded(spy(reply=AIMessage("x")), path, "record").invoke("first")
    replay = recorded(None, path, "replay")
    recorded(spy(reply=AIMessage("y")), path, "record").invoke("second")
    assert replay.invoke("second").content == "y"


def test_copies_share_the_cassette(tmp_path: Path) -> None:
    model = recorded(spy(reply=AIMessage("x")), tmp_path / "c.json", "auto")
    assert copy.deepcopy(model).invoke("hi").content == "x"
    assert model.model_copy().invoke("hi").content == "x"
    assert len(model.inner.calls) == 1  # type: ignore[union-attr]


# -- corrupt and foreign files -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('{"format": "nbagents-cassette", "version": 1, "interactions": {', "is not valid JSON"),
        ("[1, 2]", "is not an nbagents cassette"),
        ('{"interactions": {}}', "is not an nbagents cassette"),
        (
            '{"format": "nbagents-cassette", "version": "1", "interactions": {}}',
            "invalid cassette version",
        ),
        ('{"format": "nbagents-cassette", "version": 99, "interactions": {}}', "newer nbagents"),
        ('{"format": "nbagents-cassette", "version": 1}', "no 'interactions' object"),
        (
            '{"format": "nbagents-cassette", "version": 1, "interactions": {"k": {"request": {}}}}',
            "interaction 'k' has no 'response'",
        ),
        (
            '{"format": "nbagents-cassette", "version": 1, "interactions": {"k": 3}}',
            "is not an object",
        ),
    ],
)
def test_unreadable_cassettes(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(CassetteFormatError, match=match) as info:
        recorded(None, path, "replay")
    assert str(path) in str(info.value)
    assert isinstance(info.value, ValueError)
