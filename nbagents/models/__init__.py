"""Chat models that need no key: the scripted model and turn helpers."""

from nbagents.models.cassette import (
    Cassette,
    CassetteError,
    CassetteFormatError,
    CassetteMissError,
)
from nbagents.models.replay import RecordingChatModel, recorded
from nbagents.models.scripted import ScriptedChatModel, ScriptExhaustedError, estimate_tokens
from nbagents.models.turns import Turn, call, delegate, fail, parallel, say

__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMissError",
    "RecordingChatModel",
    "ScriptExhaustedError",
    "ScriptedChatModel",
    "Turn",
    "call",
    "delegate",
    "estimate_tokens",
    "fail",
    "parallel",
    "recorded",
    "say",
]
