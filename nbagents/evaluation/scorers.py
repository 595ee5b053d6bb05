"""Scorers that come with nbagents: on the answer, on the delegation tree (which sub-agents
were spawned, who called which tool, how deep, what failed or hit a limit), on the budget, and
an LLM judge.

Each call returns a plain function, named after what it checks, that an experiment calls with
what it asks for::

    nbagents.evaluate(agent, cases, scorers=[
        scorers.answer_contains(),
        scorers.spawned("researcher", min=1, max=3),
        scorers.tool_called("search", by="researcher"),
        scorers.no_failures(),
        scorers.max_tokens(20_000),
    ])
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from nbagents.cost import Prices
from nbagents.tracing.cost import total_cost

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = [
    "answer_contains",
    "answer_equals",
    "llm_judge",
    "max_cost",
    "max_depth",
    "max_tokens",
    "no_failures",
    "no_limits",
    "spawn_count",
    "spawned",
    "tool_called",
]

Check = Callable[..., Any]


def _named(function: Check, name: str) -> Check:
    function.__name__ = function.__qualname__ = name
    return function


def _within(count: int, least: int, most: int | None) -> bool:
    return count >= least and (most is None or count <= most)


def _slug(text: str) -> str:
    return re.sub(r"\W+", "_", text).strip("_") or "x"


# -- the answer ------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def answer_contains(*, case_sensitive: bool = False) -> Check:
    """Passes when the case's ``expected`` text (or each item of a list of them) is in the
    agent's final answer."""

    def answer_contains(answer: str | None, expected: Any) -> dict[str, Any]:
        if expected is None:
            raise ValueError("answer_contains needs the case's 'expected'")
        wanted = [_text(e) for e in expected] if isinstance(expected, list) else [_text(expected)]
        said = answer or ""
        if not case_sensitive:
            said, wanted = said.lower(), [w.lower() for w in wanted]
        absent = [w for w in wanted if w not in said]
        return {"score": not absent, "comment": f"missing {absent}" if absent else None}

    return answer_contains


def answer_equals(*, case_sensitive: bool = False) -> Check:
    """Passes when the agent's final answer is the case's ``expected``, whitespace aside."""

    def answer_equals(answer: str | None, expected: Any) -> bool:
        if expected is None:
            raise ValueError("answer_equals needs the case's 'expected'")
        said, wanted = " ".join((answer or "").split()), " ".join(_text(expected).split())
        return said == wanted if case_sensitive else said.lower() == wanted.lower()

    return answer_equals


# -- the delegation tree ---------------------------------------------------------------------------


def spawned(subagent_type: str, *, min: int = 1, max: int | None = None) -> Check:
    """Passes when sub-agents of ``subagent_type`` were spawned ``min`` to ``max`` times, at any
    depth."""

    def check(trace: Trace) -> dict[str, Any]:
        count = sum(1 for s in trace.subagents if s.type == subagent_type)
        return {"score": _within(count, min, max), "comment": f"spawned {count} times"}

    return _named(check, f"spawned_{_slug(subagent_type)}")


def spawn_count(subagent_type: str | None = None) -> Check:
    """How many sub-agents (of ``subagent_type``, or of any type) the run spawned."""

    def check(trace: Trace) -> int:
        return sum(1 for s in trace.subagents if subagent_type in (None, s.type))

    return _named(check, "spawns" if subagent_type is None else f"spawns_{_slug(subagent_type)}")


def tool_called(
    tool: str,
    *,
    by: str | None = None,
    min: int = 1,
    max: int | None = None,
) -> Check:
    """Passes when tool ``tool`` was called ``min`` to ``max`` times, by the agent or
    sub-agent type ``by`` (``"main"`` for the main agent), or by anyone."""

    def check(trace: Trace) -> dict[str, Any]:
        calls = [s for s in trace.walk() if s.kind == "tool" and s.name == tool]
        agents = sorted({s.agent for s in calls})
        count = sum(1 for s in calls if by in (None, s.agent))
        return {"score": _within(count, min, max), "comment": f"{count} calls; by {agents}"}

    return _named(check, f"called_{_slug(tool)}" + (f"_by_{_slug(by)}" if by else ""))


def max_depth(depth: int) -> Check:
    """Passes when no sub-agent was nested deeper than ``depth`` (1: only the main agent's own
    sub-agents)."""

    def check(trace: Trace) -> dict[str, Any]:
        deepest = max((s.depth for s in trace.subagents), default=0)
        return {"score": deepest <= depth, "comment": f"deepest {deepest}"}

    return _named(check, f"max_depth_{depth}")


def no_failures() -> Check:
    """Passes when no step of the run failed (a sub-agent, a tool, a model call)."""

    def no_failures(trace: Trace) -> dict[str, Any]:
        failed = [f"{s.agent}/{s.name}" for s in trace.walk() if s.status == "error"]
        return {"score": not failed, "comment": f"failed: {failed}" if failed else None}

    return no_failures


def no_limits() -> Check:
    """Passes when no agent was stopped by a limit (model calls, tokens, cost, time, depth)."""

    def no_limits(trace: Trace) -> dict[str, Any]:
        stopped = [f"{s.agent}: {s.error}" for s in trace.walk() if s.status == "limit"]
        return {"score": not stopped, "comment": "; ".join(stopped) or None}

    return no_limits


# -- the budget ------------------------------------------------------------------------------------


def max_tokens(tokens: int) -> Check:
    """Passes when the whole run, sub-agents included, used at most ``tokens`` tokens."""

    def check(trace: Trace) -> dict[str, Any]:
        used = trace.total_usage().total
        return {"score": used <= tokens, "comment": f"{used:,} tokens"}

    return _named(check, "max_tokens")


def max_cost(cost: float, *, prices: Prices | None = None) -> Check:
    """Passes when the run cost at most ``cost`` (US dollars by the default price table, or
    ``prices`` as :func:`nbagents.tracing.cost.trace_cost` takes them). A run whose cost is unknown
    cannot be scored: its score is missing, with the reason."""

    def check(trace: Trace) -> dict[str, Any]:
        spent = total_cost(trace, prices)
        if not spent.known:
            raise ValueError(f"no price for {', '.join(sorted(spent.unknown))}")
        value = float(spent.amount)
        return {"score": value <= cost, "comment": f"${value:.6f}"}

    return _named(check, "max_cost")


# -- an LLM judge ----------------------------------------------------------------------------------

_JUDGE = (
    "You grade an AI agent's answer. Criteria: {criteria}\n"
    "Reply with one JSON object and nothing else: "
    '{{"score": true or false, "comment": "one sentence why"}}.'
)
_VERDICT = re.compile(r"\{.*\}", re.S)


def llm_judge(
    model: BaseChatModel | str,
    criteria: str = "the answer is correct and complete for the question",
    *,
    name: str = "judge",
    cassette: str | None = None,
) -> Check:
    """A scorer that asks a chat model whether the answer meets ``criteria``, seeing the case's
    inputs, the agent's answer and the expected answer. ``model`` is any chat model or a
    ``"provider:model"`` string; with ``cassette`` (a JSON path) its answers are recorded once
    and replayed after, so CI needs no key (:func:`nbagents.models.replay.recorded`)."""
    from nbagents.models.replay import recorded

    judge: Any = recorded(model, cassette) if cassette is not None else model
    if isinstance(judge, str):
        from langchain.chat_models import init_chat_model

        judge = init_chat_model(judge)
    system = SystemMessage(_JUDGE.format(criteria=criteria))

    async def check(inputs: Any, answer: str | None, expected: Any) -> dict[str, Any]:
        asked = f"Question: {_text(inputs)}\nAgent's answer: {answer or '(none)'}"
        if expected is not None:
            asked += f"\nExpected answer: {_text(expected)}"
        reply = await judge.ainvoke([system, HumanMessage(asked)])
        return read_verdict(reply.text if hasattr(reply, "text") else str(reply))

    return _named(check, name)


def read_verdict(text: str) -> dict[str, Any]:
    """A judge's reply as ``{"score", "comment"}``: its JSON object, else a yes/no word."""
    found = _VERDICT.search(text)
    if found:
        try:
            data = json.loads(found.group(0))
        except ValueError:
            data = None
        if isinstance(data, dict) and "score" in data:
            score = data["score"]
            if isinstance(score, str):
                score = score.strip().lower() in ("true", "yes", "pass", "1")
            return {"score": score, "comment": data.get("comment")}
    word = text.strip().split()[0].lower().strip(".:,!") if text.strip() else ""
    if word in ("yes", "pass", "true", "correct"):
        return {"score": True, "comment": text.strip()}
    if word in ("no", "fail", "false", "incorrect"):
        return {"score": False, "comment": text.strip()}
    raise ValueError(f"the judge's reply is not a verdict: {text[:200]!r}")
