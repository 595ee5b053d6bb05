"""Checks for the tutorials' workshop exercises."""

from __future__ import annotations

__all__ = ["ExerciseError", "check"]


class ExerciseError(AssertionError):
    """An exercise's answer is not right yet; the message is a hint."""


def check(correct: bool, *, hint: str) -> None:
    """Print a tick when ``correct``, else raise :class:`ExerciseError` carrying ``hint``."""
    if not correct:
        raise ExerciseError(f"Not yet. Hint: {hint}")
    print("✓ Correct.")
