"""A word-level diff of two texts: what a changed sub-agent now answers, against before."""

from __future__ import annotations

import difflib
import re

MAX_WORDS = 5_000
"""Words of each text compared; past them the rest is shown as removed and inserted whole."""

_TOKENS = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """``old`` turned into ``new`` as runs of ``("same" | "del" | "ins", text)``, whitespace
    kept, so joining the ``same`` and ``ins`` parts gives ``new`` back."""
    left, right = _TOKENS.findall(old), _TOKENS.findall(new)
    tail: list[tuple[str, str]] = []
    if len(left) > MAX_WORDS or len(right) > MAX_WORDS:
        tail = [("del", "".join(left[MAX_WORDS:])), ("ins", "".join(right[MAX_WORDS:]))]
        left, right = left[:MAX_WORDS], right[:MAX_WORDS]
    out: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(("same", "".join(left[i1:i2])))
            continue
        if i2 > i1:
            out.append(("del", "".join(left[i1:i2])))
        if j2 > j1:
            out.append(("ins", "".join(right[j1:j2])))
    return _joined([(kind, text) for kind, text in out + tail if text])


def _joined(parts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Changes separated only by whitespace as one change: ``-login +and -is +Firefox`` reads
    as ``-login is +and Firefox``."""
    out: list[tuple[str, str]] = []
    gone: list[str] = []
    came: list[str] = []

    def flush() -> None:
        if gone:
            out.append(("del", "".join(gone)))
        if came:
            out.append(("ins", "".join(came)))
        gone.clear()
        came.clear()

    for position, (kind, text) in enumerate(parts):
        between = 0 < position < len(parts) - 1 and (gone or came)
        if kind == "same" and between and not text.strip() and parts[position + 1][0] != "same":
            gone.append(text)
            came.append(text)
        elif kind == "del":
            gone.append(text)
        elif kind == "ins":
            came.append(text)
        else:
            flush()
            out.append((kind, text))
    flush()
    return out
