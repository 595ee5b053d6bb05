"""Chat models that need no key: the scripted model and turn helpers."""

from nbagents.models._cassette import (
    Cassette,
    CassetteError,
    CassetteFormatError,
    CassetteMissError,
)
from nbagents.models._providers import MissingAPIKeyError, init_model
from nbagents.models._scripted import ScriptedChatModel, ScriptExhaustedError, estimate_tokens
from nbagents.models._turns import Turn, call, delegate, fail, parallel, say
from nbagents.models.replay import RecordingChatModel, recorded

__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMissError",
    "MissingAPIKeyError",
    "RecordingChatModel",
    "ScriptExhaustedError",
    "ScriptedChatModel",
    "Turn",
    "call",
    "delegate",
    "estimate_tokens",
    "fail",
    "init_model",
    "parallel",
    "recorded",
    "say",
]
