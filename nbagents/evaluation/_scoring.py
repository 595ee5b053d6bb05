"""A scorer is a plain function that asks by parameter name for what it needs and returns a
bool, a number or ``{"score", "comment"}``; this module calls one and reads what it said.

openevals / agentevals evaluators (``inputs, outputs, reference_outputs`` → ``{"key", "score",
"comment"}``) are scorers as they are: ``reference_outputs`` is the case's ``expected``.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ARGUMENTS", "Score", "Scorer", "as_scorers"]

ARGUMENTS = ("inputs", "outputs", "expected", "reference_outputs", "answer", "trace")
"""What a scorer may ask for: the case's inputs, what the agent returned, the case's expected
answer (also as openevals' ``reference_outputs``), the text of the agent's final answer, and
the run's :class:`~nbagents.Trace`."""


@dataclass(frozen=True)
class Score:
    """What one scorer said of one run."""

    value: float | None
    """The score as a number (a bool as 1.0 or 0.0); ``None`` when the scorer failed."""
    passed: bool | None = None
    """For a scorer that answers yes or no; ``None`` for a numeric score."""
    comment: str | None = None
    error: str | None = None
    """Why the scorer failed (``"ValueError: ..."``); ``None`` unless it did."""

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Score:
        return cls(data.get("value"), data.get("passed"), data.get("comment"), data.get("error"))


class Scorer:
    """A function with the name its column goes by and the arguments it asks for."""

    def __init__(self, function: Callable[..., Any], name: str) -> None:
        self.function = function
        self.name = name
        self.wants = _arguments(function, name)

    def __repr__(self) -> str:
        return f"Scorer({self.name!r}, asks for {', '.join(self.wants) or 'nothing'})"

    @property
    def needs_trace(self) -> bool:
        return "trace" in self.wants

    async def score(self, available: Mapping[str, Any]) -> Score:
        """Call the scorer with what it asks for; never raises (a failure is the score's
        ``error``). A synchronous scorer runs in a worker thread: an LLM judge must not hold
        up the other cases."""
        given = {name: available.get(name) for name in self.wants}
        try:
            if inspect.iscoroutinefunction(self.function):
                said = await self.function(**given)
            else:
                said = await asyncio.to_thread(self.function, **given)
                if inspect.isawaitable(said):
                    said = await said
            return read_score(said)
        except Exception as error:
            return Score(None, error=f"{type(error).__name__}: {error}")


def read_score(said: Any) -> Score:
    """What a scorer returned, as a :class:`Score`."""
    if isinstance(said, Sequence) and not isinstance(said, str) and len(said) == 1:
        said = said[0]  # openevals' multi-key evaluators answer a list
    comment = None
    if isinstance(said, Mapping):
        if "score" not in said:
            raise ValueError(f"a scorer's dict needs a 'score' key, got {sorted(said)}")
        comment = said.get("comment")
        comment = None if comment is None else str(comment)
        said = said["score"]
    if said is None:
        return Score(None, comment=comment)
    if isinstance(said, bool):
        return Score(1.0 if said else 0.0, said, comment)
    if isinstance(said, int | float):
        value = float(said)
        return Score(None if math.isnan(value) else value, None, comment)
    raise TypeError(
        f"a scorer returns a bool, a number or {{'score': ..., 'comment': ...}}, not "
        f"{type(said).__name__}"
    )


def as_scorers(scorers: Any) -> list[Scorer]:
    """``scorers`` as :class:`Scorer` objects: a list of functions (named after them) or a dict
    of name → function. Checks each asks only for what there is."""
    if isinstance(scorers, Mapping):
        pairs = [(str(name), function) for name, function in scorers.items()]
    elif callable(scorers):
        pairs = [(_name_of(scorers, 0), scorers)]
    else:
        pairs = [(_name_of(function, n), function) for n, function in enumerate(scorers)]
    for name, function in pairs:
        if not isinstance(function, Scorer) and not callable(function):
            raise TypeError(f"scorer {name!r} is a {type(function).__name__}, not a function")
    made = [f if isinstance(f, Scorer) else Scorer(f, name) for name, f in pairs]
    names = [s.name for s in made]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(
            f"two scorers are named {', '.join(map(repr, twice))}: pass a dict "
            "{'name': scorer, ...} to name them apart."
        )
    clash = sorted(set(names) & _RESERVED)
    if clash:
        raise ValueError(f"scorer names {clash} are taken by result columns: rename them.")
    return made


_RESERVED = {"case_id", "repeat", "status", "error", "tokens", "cost", "seconds", "run_id"}


def _name_of(function: Any, n: int) -> str:
    name = getattr(function, "name", None) if isinstance(function, Scorer) else None
    name = name or getattr(function, "__name__", None)
    if not isinstance(name, str) or not name or name.startswith("_") or name == "<lambda>":
        # openevals' factories return functions all named _wrapped_evaluator
        return f"scorer_{n + 1}"
    return name


def _arguments(function: Callable[..., Any], name: str) -> tuple[str, ...]:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        raise TypeError(f"scorer {name!r}: cannot read which arguments it takes") from None
    wants: list[str] = []
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.name in ARGUMENTS:
            wants.append(parameter.name)
        elif parameter.default is parameter.empty:
            raise TypeError(
                f"scorer {name!r} asks for {parameter.name!r}; a scorer may ask for "
                f"{', '.join(ARGUMENTS)} (by parameter name)."
            )
    return tuple(wants)
