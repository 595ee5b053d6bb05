"""Versioned JSON files: the checks a trace file and a cassette share.

Both are one JSON object with a ``"format"`` marker and an integer ``"version"``; a reader takes
its own version and older ones, and names what is wrong with anything else in its own words
(the templates of :class:`VersionedJSON`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["VersionedJSON", "escape_surrogates"]


@dataclass(frozen=True)
class VersionedJSON:
    """One versioned JSON format, and the wording of its reader's errors.

    The templates are ``str.format`` strings; they may use ``{where}`` (e.g. the file's path),
    ``{format}``, ``{current}`` (the version this code writes), ``{version}`` (the file's),
    ``{error}`` (the ``JSONDecodeError``) and ``{hint}`` (a note when the text looks cut short).
    """

    format: str
    version: int
    error: type[ValueError]
    not_json: str
    not_ours: str
    bad_version: str
    too_new: str
    empty: str | None = None
    """For empty text; None reports it as invalid JSON."""

    def header(self) -> dict[str, Any]:
        """The fields that start every file of this format."""
        return {"format": self.format, "version": self.version}

    def parse(self, text: str, where: str = "") -> dict[str, Any]:
        """The JSON object in ``text``, checked to be this format in a version this code reads."""
        words: dict[str, Any] = {"where": where, "format": self.format, "current": self.version}
        if self.empty is not None and not text.strip():
            raise self.error(self.empty.format(**words))
        try:
            payload = json.loads(
                text, parse_constant=_no_constant, parse_int=_bounded_int, parse_float=_finite_float
            )
        except json.JSONDecodeError as error:
            truncated = _cut_short(text, error)
            hint = " (the file looks truncated)" if truncated else ""
            raise self.error(self.not_json.format(error=error, hint=hint, **words)) from error
        except (ValueError, RecursionError) as error:
            # NaN/Infinity, numbers no one writes, or arrays nested thousands deep: JSON the
            # decoder takes but nothing this format writes.
            reason = "nested too deep" if isinstance(error, RecursionError) else str(error)
            raise self.error(self.not_json.format(error=reason, hint="", **words)) from error
        if not isinstance(payload, dict) or payload.get("format") != self.format:
            raise self.error(self.not_ours.format(**words))
        version = payload.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise self.error(self.bad_version.format(version=version, **words))
        if version > self.version:
            raise self.error(self.too_new.format(version=version, **words))
        return payload


MAX_INT_DIGITS = 30
"""Integers longer than this are refused: token counts and times never come close."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number this format writes")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is too large a number for this format")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"a {len(text)}-digit integer is not a number this format writes")
    return int(text)


def escape_surrogates(text: str) -> str:
    """JSON text with every lone surrogate written as its ``\\uXXXX`` escape.

    A string from the file system (``os.fsdecode`` of a non-UTF-8 name) can hold lone surrogates,
    which UTF-8 cannot encode. JSON can: the escape reads back as the same character, so saving
    and loading stays lossless. Surrogates only occur inside JSON strings, so replacing them in
    the serialised text is safe.
    """
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _cut_short(text: str, error: json.JSONDecodeError) -> bool:
    """Whether the decoder ran out of text rather than met a wrong character: it failed on the
    last character, inside a string, or inside a ``true``/``false``/``null`` cut off."""
    rest = text[error.pos :].rstrip()
    return (
        len(rest) <= 1
        or error.msg.startswith("Unterminated string")
        or any(word.startswith(rest) for word in ("true", "false", "null"))
    )
