"""A model given as a ``"provider:model"`` string: a missing API key is named at build time.

Real provider packages build their models here (langchain-openai, langchain-anthropic,
langchain-google-genai are in the test environment); no request is sent, so no network is used.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import CassetteMissError, MissingAPIKeyError, _providers, recorded

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*KEYS, "GOOGLE_GENAI_USE_VERTEXAI", "LANGSMITH_GATEWAY"):
        monkeypatch.delenv(name, raising=False)


def spec(model: str) -> dict[str, str]:
    return {"name": "researcher", "description": "Re.", "system_prompt": "Re.", "model": model}


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        # OpenAI's and Google's models refuse to be built without a key, in their own words
        ("openai:gpt-4.1-mini", "OPENAI_API_KEY"),
        ("google_genai:gemini-2.5-flash", "GOOGLE_API_KEY"),
        # Anthropic's is built, and would fail only at its first call, in the middle of a run
        ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY"),
    ],
)
def test_a_missing_key_is_named_when_the_agent_is_built(model: str, variable: str) -> None:
    with pytest.raises(MissingAPIKeyError) as main:
        create_deep_agent(model)
    assert str(main.value).startswith(f"Agent 'main': the model {model!r} needs an API key")
    assert f"os.environ[{variable!r}] = getpass.getpass()" in str(main.value)
    assert main.value.variables[0] == variable

    with pytest.raises(MissingAPIKeyError, match=f"^Sub-agent 'researcher': .*{variable}"):
        create_deep_agent(ScriptedChatModel(), subagents=[spec(model)])


@pytest.mark.parametrize("model", ["openai:gpt-4.1-mini", "anthropic:claude-haiku-4-5"])
def test_with_the_key_set_the_model_is_built(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEYS:
        monkeypatch.setenv(name, "test-key-never-sent")
    assert create_deep_agent(model, subagents=[spec(model)]) is not None


def test_a_key_from_elsewhere_is_not_reported_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    # Vertex AI authenticates Gemini without an API key: the model builds, nothing is claimed.
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "test-project")
    assert create_deep_agent("google_genai:gemini-2.5-flash") is not None


def test_a_missing_provider_package_comes_before_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # langchain-fireworks is in no extra; were it known, its key would be unset too.
    monkeypatch.setitem(_providers.KEY_VARIABLES, "fireworks", ("FIREWORKS_API_KEY",))
    monkeypatch.delenv("FIREWORKS_API_KEY", raising=False)
    with pytest.raises(ImportError, match="langchain-fireworks"):
        create_deep_agent("fireworks:llama-v3p1-8b-instruct")


def test_recording_without_the_key_says_which_variable(tmp_path: Path) -> None:
    model = recorded("openai:gpt-4.1-mini", tmp_path / "cassette.json", mode="auto")
    with pytest.raises(CassetteMissError, match="OPENAI_API_KEY is not set"):
        model.invoke("hello")
