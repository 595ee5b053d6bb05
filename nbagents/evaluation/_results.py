"""One run of one case (a :class:`Result`), and what the agent returned, kept as JSON so that a
saved experiment can be scored again in another process."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, message_to_dict, messages_from_dict

from nbagents.evaluation._scoring import Score

__all__ = ["Result", "TypeFigures", "answer_of", "decode_outputs", "encode_outputs"]

_MESSAGE = "__nbagents_message__"


@dataclass(frozen=True)
class TypeFigures:
    """What the spawns of one sub-agent type did in one run."""

    spawns: int = 0
    failures: int = 0
    tokens: int = 0
    cost: float | None = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Result:
    """One case run once: its status, scores, figures and where its trace is kept."""

    case_id: str
    repeat: int
    status: str
    """``"ok"``, or ``"error"`` when the agent raised."""
    outputs: Any = None
    """What the agent returned; ``None`` in an experiment kept in a history, which holds it
    (``exp.outputs(case_id, repeat)`` reads it back)."""
    error: str | None = None
    scores: Mapping[str, Score] = field(default_factory=dict)
    tokens: int = 0
    cost: float | None = None
    seconds: float = 0.0
    run_id: str | None = None
    types: Mapping[str, TypeFigures] = field(default_factory=dict)
    """Per sub-agent type: spawns, failures, tokens and cost in this run."""

    def rescored(self, scores: Mapping[str, Score]) -> Result:
        return replace(self, scores={**self.scores, **scores})

    def to_json(self) -> str:
        data = {
            **vars(self),
            "outputs": encode_outputs(self.outputs),
            "scores": {name: s.to_dict() for name, s in self.scores.items()},
            "types": {name: t.to_dict() for name, t in self.types.items()},
        }
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Result:
        data = json.loads(text)
        return cls(
            case_id=data["case_id"],
            repeat=int(data["repeat"]),
            status=data["status"],
            outputs=decode_outputs(data.get("outputs")),
            error=data.get("error"),
            scores={k: Score.from_dict(v) for k, v in (data.get("scores") or {}).items()},
            tokens=int(data.get("tokens") or 0),
            cost=data.get("cost"),
            seconds=float(data.get("seconds") or 0.0),
            run_id=data.get("run_id"),
            types={k: TypeFigures(**v) for k, v in (data.get("types") or {}).items()},
        )


def encode_outputs(value: Any) -> Any:
    """``value`` as JSON data; messages keep their type so that they come back as messages."""
    if isinstance(value, BaseMessage):
        return {_MESSAGE: message_to_dict(value)}
    if isinstance(value, Mapping):
        return {str(k): encode_outputs(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode_outputs(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    dump = getattr(value, "model_dump", None)  # a structured response
    if callable(dump):
        return encode_outputs(dump())
    return repr(value)


def decode_outputs(value: Any) -> Any:
    if isinstance(value, Mapping):
        if _MESSAGE in value:
            return messages_from_dict([value[_MESSAGE]])[0]
        return {k: decode_outputs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_outputs(v) for v in value]
    return value


def answer_of(outputs: Any) -> str | None:
    """The agent's final answer as text: its structured response as JSON when it set one,
    else the text of its last non-empty AI message (the task tool's rule), else the output
    itself when it is text."""
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, BaseMessage):
        return outputs.text
    if not isinstance(outputs, Mapping):
        return None
    structured = outputs.get("structured_response")
    if structured is not None:
        return json.dumps(encode_outputs(structured), ensure_ascii=False, sort_keys=True)
    for message in reversed(list(outputs.get("messages") or ())):
        if isinstance(message, AIMessage) and message.text.strip():
            return message.text
    for key in ("answer", "output", "result"):
        if isinstance(outputs.get(key), str):
            return str(outputs[key])
    return None
