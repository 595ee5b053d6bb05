"""How many failures a run had: each counted once, where it started."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["count_failures"]


def count_failures(errors: Mapping[str, str | None], parent: Mapping[str, str | None]) -> int:
    """Failed steps (id -> error text) counted where each failure started.

    A step whose error text ends with the error of one of its failed children (``parent`` maps
    each failed step to its nearest visible parent) is that child's failure passing up:
    ``"Sub-agent 'w' failed: ValueError: boom"`` above ``"ValueError: boom"``.
    """
    below: dict[str, list[str]] = {}
    for sid, error in errors.items():
        up = parent.get(sid)
        if up is not None and error:
            below.setdefault(up, []).append(error)
    return sum(
        1
        for sid, error in errors.items()
        if not (error and any(error.endswith(child) for child in below.get(sid, ())))
    )
