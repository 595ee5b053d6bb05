"""Versioned JSON files: the checks a trace file and a cassette share.

Both are one JSON object with a ``"format"`` marker and an integer ``"version"``; a reader takes
its own version and older ones, and names what is wrong with anything else in its own words
(the templates of :class:`VersionedJSON`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["VersionedJSON"]


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
            payload = json.loads(text)
        except json.JSONDecodeError as error:
            truncated = error.pos >= len(text.rstrip()) - 1 or error.msg.startswith(
                "Unterminated string"
            )
            hint = " (the file looks truncated)" if truncated else ""
            raise self.error(self.not_json.format(error=error, hint=hint, **words)) from error
        if not isinstance(payload, dict) or payload.get("format") != self.format:
            raise self.error(self.not_ours.format(**words))
        version = payload.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise self.error(self.bad_version.format(version=version, **words))
        if version > self.version:
            raise self.error(self.too_new.format(version=version, **words))
        return payload
