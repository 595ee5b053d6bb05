"""How big a state value is, in words: the wording of every state diff, recorded or inferred."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["describe_size"]


def describe_size(value: Any) -> str:
    """A short, human size of a state value: ``"12 items"``, ``"340 chars"``, ``"int"``."""
    if isinstance(value, str):
        return f"{len(value)} chars"
    if isinstance(value, bytes):
        return f"{len(value)} bytes"
    if isinstance(value, Mapping | Sequence | set | frozenset):
        n = len(value)
        return f"{n} item" if n == 1 else f"{n} items"
    return type(value).__name__
