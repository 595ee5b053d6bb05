"""A chat model from a ``"provider:model"`` string, with a missing API key named at build time.

Without its key OpenAI's and Google's models refuse to be built, each with its own exception,
and Anthropic's fails only at its first call, mid-run. For the providers in :data:`KEY_VARIABLES`
a missing key is reported one way, when the agent is built; other failures are left as they are.
"""

from __future__ import annotations

import os
from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

__all__ = ["MissingAPIKeyError", "init_model"]

KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google_genai": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
}
"""Per provider prefix, the environment variables any of which supplies its key."""

# Providers whose model is built without a key; built so, it could only fail its first call.
_BUILT_WITHOUT_KEY = frozenset({"anthropic"})


class MissingAPIKeyError(ValueError):
    """A model given as a string needs an API key that no environment variable supplies."""

    def __init__(self, model: str, variables: tuple[str, ...], owner: str) -> None:
        self.model = model
        self.variables = variables
        first = variables[0]
        unset = (
            f"{first} is not set"
            if len(variables) == 1
            else f"none of {', '.join(variables)} is set"
        )
        super().__init__(
            f"{owner}: the model {model!r} needs an API key, and {unset}. Set {first} (in a "
            f"notebook without writing the key into it: os.environ[{first!r}] = "
            f"getpass.getpass()), or pass a chat model built with api_key=... instead of the "
            f"string."
        )


def init_model(model: str, owner: str) -> BaseChatModel:
    """``init_chat_model(model)``; raises :class:`MissingAPIKeyError` when its key is missing.

    ``owner`` (what the model is for, e.g. ``"Sub-agent 'researcher'"``) starts the message.
    """
    provider = model.partition(":")[0] if ":" in model else ""
    variables = KEY_VARIABLES.get(provider, ())
    try:
        chat_model = init_chat_model(model)
    except ImportError:
        raise  # the provider's package is missing: that comes first, whatever the key
    except Exception as error:
        # Only when the provider says so: a misconfigured alternative (Vertex AI instead of a
        # Gemini key, say) fails without a key too, and its own message is the useful one.
        unset = not any(os.environ.get(v) for v in variables)
        if unset and any(v in str(error) for v in variables):
            raise MissingAPIKeyError(model, variables, owner) from error
        raise
    if provider in _BUILT_WITHOUT_KEY and _lacks_key(chat_model):
        raise MissingAPIKeyError(model, variables, owner)
    return chat_model


def _lacks_key(chat_model: BaseChatModel) -> bool:
    """Whether the model has API key fields and all are empty (a gateway's key would fill one).

    A model without such fields says nothing either way, so it is not reported.
    """
    fields = [f for f in chat_model.lc_secrets if f.endswith("api_key")]
    values: list[Any] = [getattr(chat_model, f, None) for f in fields]
    secrets = [v.get_secret_value() if isinstance(v, SecretStr) else v for v in values]
    return bool(fields) and not any(secrets)
