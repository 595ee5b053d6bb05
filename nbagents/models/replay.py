"""Record any chat model's responses to a JSON cassette, and replay them offline.

Wrap a model once, run the agent with a key to record, commit the cassette, and the same code
replays it in CI with no key and no network::

    model = recorded("openai:gpt-4.1-mini", "cassettes/research.json")
    agent = create_deep_agent(model, tools, subagents=...)

A response is keyed by its request: the agent's name (``lc_agent_name``), the names of the bound
tools and the conversation (message types, text, tool calls and tool results; not message or
tool call ids, which providers draw at random). Equal requests get the same response, so a
replay does not depend on the order in which parallel sub-agents run.

Modes (argument ``mode``, else the ``NBAGENTS_CASSETTE_MODE`` environment variable, else
``"auto"``): ``"replay"`` never calls the model and fails on a request the cassette lacks;
``"record"`` calls the model for every request and stores the answer; ``"auto"`` replays what
the cassette has and records the rest.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast, get_args

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.base import LangSmithParams
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable, RunnableBinding
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

from nbagents.models._caller import calling_agent
from nbagents.models._canned import Call, CannedChatModel
from nbagents.models._cassette import Cassette, CassetteMissError
from nbagents.models._entries import (
    Request,
    closest,
    count,
    plain,
    response_entry,
    response_message,
)
from nbagents.models._providers import init_model

__all__ = ["MODE_ENV", "CassetteMode", "RecordingChatModel", "recorded"]

CassetteMode: TypeAlias = Literal["record", "replay", "auto"]
MODE_ENV = "NBAGENTS_CASSETTE_MODE"

_BIND_KEY = "nbagents_bind_tools"


class RecordingChatModel(CannedChatModel):
    """A chat model that records another model's responses to a cassette, or replays them.

    ``inner`` is the model to record: a chat model, a ``"provider:model"`` string (only turned
    into a model, through ``init_chat_model``, when a request has to be recorded, so replaying
    needs neither the provider's package nor its key), or ``None`` for replay only.

    In record mode the response returned to the agent is the one stored, read back from the
    cassette format, so a recording run and its replays see the same messages. Streaming works
    in every mode; while recording, the chunks come once the wrapped model has answered.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel | str | None = None
    cassette_path: Path
    mode: CassetteMode | None = None
    """``None`` reads ``NBAGENTS_CASSETTE_MODE``, and defaults to ``"auto"``."""
    note: str | None = None
    """Written at the top of the cassette when recording, e.g. where the responses came from."""

    _cassette: Cassette = PrivateAttr()
    _mode: CassetteMode = PrivateAttr(default="auto")
    _model: BaseChatModel | None = PrivateAttr(default=None)
    _model_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def __init__(
        self,
        inner: BaseChatModel | str | None = None,
        cassette_path: str | os.PathLike[str] | None = None,
        mode: CassetteMode | None = None,
        **kwargs: Any,
    ) -> None:
        if cassette_path is None:
            raise TypeError("RecordingChatModel needs a cassette_path (the JSON file to use).")
        fields: dict[str, Any] = {
            "inner": inner,
            "cassette_path": Path(cassette_path),
            "mode": mode,
        }
        super().__init__(**fields, **kwargs)
        # Checked here rather than in a validator so that the errors keep their own types
        # instead of becoming a pydantic ValidationError.
        self._mode = _resolve_mode(self.mode)
        self._cassette = Cassette(self.cassette_path)
        if self._mode == "replay" and not self._cassette.exists:
            raise FileNotFoundError(
                f"No cassette at {self.cassette_path}, and mode is 'replay'. Record it first: "
                f"run once with mode='record' (or {MODE_ENV}=record) and a model that can "
                f"answer."
            )
        if self._mode == "record" and self.inner is None:
            raise ValueError("mode='record' needs a model to record: pass inner=...")

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> RecordingChatModel:
        # Locks cannot be copied, and a copy should share the cassette and the wrapped model
        # anyway: a shallow copy does both.
        return self.model_copy()

    @property
    def effective_mode(self) -> CassetteMode:
        """The mode in force: the argument, else the environment variable, else ``"auto"``."""
        return self._mode

    @property
    def _llm_type(self) -> str:
        return "recorded"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        # Independent of the mode, so a recording run and its replay report the same params.
        return {"cassette": self.cassette_path.name}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        if isinstance(self.inner, str) and ":" in self.inner:
            provider, name = self.inner.split(":", 1)
            return LangSmithParams(ls_provider=provider, ls_model_name=name, ls_model_type="chat")
        if isinstance(self.inner, BaseChatModel):
            return self.inner._get_ls_params(stop=stop)
        return LangSmithParams(ls_provider="cassette", ls_model_type="chat")

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools: their names join the request key; recording binds them to ``inner``."""
        options = dict(kwargs)
        if tool_choice is not None:
            options["tool_choice"] = tool_choice
        schemas = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=schemas, **{_BIND_KEY: options})

    # -- answering -------------------------------------------------------------------------------

    def _lookup(self, call: Call) -> tuple[Request, Mapping[str, Any] | None]:
        options = call.kwargs.get(_BIND_KEY) or {}
        request = Request(
            call.messages,
            calling_agent(call.run_manager) or "",
            _tool_names(call.kwargs.get("tools")),
            plain(options.get("tool_choice")),
        )
        if self._mode == "record":
            return request, None
        found = self._cassette.interaction(request.key)
        if found is not None:
            return request, found["response"]
        if self._mode == "replay" or self.inner is None:
            raise self._miss(request)
        return request, None

    def _store(self, request: Request, result: ChatResult) -> dict[str, Any]:
        entry = response_entry(_final_message(result))
        self._cassette.record(request.key, request.summary(), entry, self.note)
        return entry

    def _inner_call(
        self, request: Request, kwargs: Mapping[str, Any]
    ) -> tuple[BaseChatModel, dict[str, Any]]:
        try:
            model = self._inner_model()
        except Exception as error:
            if self._mode != "auto":
                raise
            # In CI a stale cassette would otherwise surface as a missing provider package or
            # key, hiding that the real problem is an unrecorded request.
            raise self._miss(request, cause=error) from error
        call = {k: v for k, v in kwargs.items() if k not in ("tools", _BIND_KEY)}
        tools = kwargs.get("tools")
        if tools is None:
            return model, call
        bound = model.bind_tools(tools, **(kwargs.get(_BIND_KEY) or {}))
        if not isinstance(bound, RunnableBinding) or not isinstance(bound.bound, BaseChatModel):
            raise TypeError(
                f"{type(model).__name__}.bind_tools returned {type(bound).__name__}, not a "
                f"binding of a chat model; RecordingChatModel cannot record it."
            )
        return bound.bound, {**call, **bound.kwargs}

    def _inner_model(self) -> BaseChatModel:
        with self._model_lock:
            if self._model is None:
                if self.inner is None:
                    raise ValueError("RecordingChatModel has no inner model to record with.")
                self._model = (
                    init_model(self.inner, "RecordingChatModel")
                    if isinstance(self.inner, str)
                    else self.inner
                )
            return self._model

    def _miss(self, request: Request, cause: Exception | None = None) -> CassetteMissError:
        if self._mode == "replay":
            why = f"mode is {self._mode!r}"
        elif cause is not None:
            why = (
                f"the model {self.inner!r} to record it with could not be created: "
                f"{type(cause).__name__}: {cause}"
            )
        else:
            why = "there is no inner model to record it with"
        lines = [
            f"No recorded response for this request of agent {request.agent or '(unnamed)'!r} "
            f"in cassette {self.cassette_path} ({why}).",
            f"  key: {request.key}; {count(len(request.digests), 'message')}, the last "
            f"{request.last}; tools: {request.tools or 'none'}.",
        ]
        nearest = closest(self._cassette, request)
        if nearest:
            lines.append(f"  {nearest}")
        earlier = self._cassette.note_miss(request.agent, request.key)
        if earlier:
            agent, key = earlier[0]
            lines.append(
                f"  {len(earlier)} earlier request(s) to this cassette were missing too; the "
                f"first was agent {agent!r}, key {key}."
            )
        lines.append(
            "  The run differs from the recorded one (a changed prompt, tool, tool result or "
            "sub-agent). To record what is missing, run once with a model that can answer and "
            f"mode='auto' (records only missing requests) or mode='record' (records all), e.g. "
            f"{MODE_ENV}=auto."
        )
        return CassetteMissError(
            "\n".join(lines), key=request.key, agent=request.agent, path=self.cassette_path
        )

    # -- CannedChatModel hooks -------------------------------------------------------------------

    def _respond(self, call: Call) -> AIMessage:
        request, entry = self._lookup(call)
        if entry is None:
            model, options = self._inner_call(request, call.kwargs)
            if model.rate_limiter:
                model.rate_limiter.acquire(blocking=True)
            # The wrapped model answers inside this model's run (its tokens and metadata
            # included), so a trace shows one model call whether it was recorded or replayed.
            result = model._generate(
                call.messages, stop=call.stop, run_manager=call.run_manager, **options
            )
            entry = self._store(request, result)
        return response_message(entry)

    async def _arespond(self, call: Call) -> AIMessage:
        request, entry = self._lookup(call)
        if entry is None:
            model, options = self._inner_call(request, call.kwargs)
            if model.rate_limiter:
                await model.rate_limiter.aacquire(blocking=True)
            result = await model._agenerate(
                call.messages, stop=call.stop, run_manager=call.run_manager, **options
            )
            entry = self._store(request, result)
        return response_message(entry)


def recorded(
    model: BaseChatModel | str | None,
    cassette_path: str | os.PathLike[str],
    mode: CassetteMode | None = None,
    *,
    note: str | None = None,
) -> RecordingChatModel:
    """Wrap ``model`` so that its responses are recorded to, or replayed from, ``cassette_path``.

    ``model`` may be a ``"provider:model"`` string: it is only initialised when a request has to
    be recorded, so a replay in CI needs no key.
    """
    return RecordingChatModel(model, cassette_path, mode, note=note)


def _resolve_mode(mode: CassetteMode | None) -> CassetteMode:
    if mode is not None:
        return mode  # pydantic has checked it against CassetteMode
    allowed = get_args(CassetteMode)
    value = os.environ.get(MODE_ENV, "").strip().lower() or "auto"
    if value not in allowed:
        raise ValueError(f"{MODE_ENV}={value!r}; it must be one of {list(allowed)}.")
    return cast(CassetteMode, value)


def _tool_names(tools: Any) -> list[str]:
    names = []
    for tool in tools or []:
        if isinstance(tool, Mapping):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
        else:
            name = getattr(tool, "name", None) or getattr(tool, "__name__", None)
        names.append(str(name))
    return names


def _final_message(result: ChatResult) -> BaseMessage:
    generation = result.generations[0]
    message = generation.message
    # What BaseChatModel would fold into response_metadata after the call; folded in before
    # storing so the replayed message carries it too.
    extra = {**(result.llm_output or {}), **(generation.generation_info or {})}
    if extra:
        message = message.model_copy(
            update={"response_metadata": {**extra, **message.response_metadata}}
        )
    return message
