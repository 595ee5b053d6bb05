"""Which tools a run called: how often, by which agents, how the calls went, and what the model
turns that asked for them used.

A *tool call* is a span of kind ``tool``, ``task`` (the ``task`` tool, which spawns a sub-agent)
or ``skill`` (a ``read_file`` of a skill's ``SKILL.md``, counted under the tool that read it).
Its *turn* is the model call whose reply asked for it, which the tracer records as the call's
``batch`` attribute; a tool called some other way (from code, or by a graph whose tool calls
carry no id) has none.

Tokens and cost are the turn's, each turn counted once per tool: a reply that asked for
``search`` three times counts once in ``search``'s row, and a reply that asked for ``search``
and ``fetch`` counts in both rows. A row then says what the turns that asked for that tool used,
as the model reported it; nothing is split, which would have to guess how a reply's tokens
divide between its calls. So the rows may add up to more than the run's tool-asking turns,
which :func:`tool_turns` counts once each. Replies that asked for no tool (an agent's answer)
belong to no tool.

The views (:mod:`nbagents.display._toolbook`) and :func:`tool_usage_frame` use the same rules,
from this module: :func:`tool_name`, :func:`turn_of`, :func:`is_failure`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from nbagents._contract import READ_FILE_TOOL
from nbagents.cost import Cost, Prices, PriceSource, as_price_source
from nbagents.tracing._attributes import typed_attribute
from nbagents.tracing.cost import span_cost
from nbagents.tracing.messages import message_text
from nbagents.tracing.messages import tool_result as tool_message
from nbagents.tracing.model import Span, SpanKind, TokenUsage, Trace

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TOOL_KINDS",
    "ToolCall",
    "agents_by_calls",
    "is_failure",
    "tool_arguments",
    "tool_calls",
    "tool_name",
    "tool_result",
    "tool_turns",
    "tool_usage_frame",
    "tools_by_calls",
    "turn_of",
]

TOOL_KINDS: tuple[SpanKind, ...] = ("tool", "task", "skill")
"""The kinds of span that are a tool call."""

_TURN_COLUMNS = [
    "turn_input_tokens",
    "turn_output_tokens",
    "turn_total_tokens",
    "turn_cost",
    "unknown_models",
]
"""What a row says of the turns that asked for its calls."""
TOOL_COLUMNS = ["tool", "calls", "agents", "failures", "seconds", "turns", *_TURN_COLUMNS]
_CALL = ["tool", "agent", "status", "seconds", "arguments", "result", "error"]
CALL_COLUMNS = [*_CALL, *_TURN_COLUMNS, "turn_span_id", "span_id"]


def tool_name(span: Span) -> str:
    """The tool a call ran: its span's name, but for a skill load (named by the skill it
    opened) the tool that read the skill's file."""
    if span.kind == "skill":
        return typed_attribute(span.attributes, "tool") or READ_FILE_TOOL
    return span.name


def turn_of(span: Span) -> str | None:
    """The id of the model call whose reply asked for this tool call, if the trace knows it."""
    turn: str | None = typed_attribute(span.attributes, "batch")
    return turn


def is_failure(span: Span) -> bool:
    """Whether a tool call failed: it raised, or answered with an error ``ToolMessage``. A call
    stopped by a limit, or paused, did not fail."""
    return span.status == "error"


def tool_arguments(span: Span) -> Any:
    """What the call was given, as JSON data: LangChain records a tool's input either as its
    arguments or as their JSON text (or wrapped as ``{"input": …}``)."""
    return _arguments(span.inputs)


def _arguments(inputs: Any) -> Any:
    if isinstance(inputs, str):
        try:
            return json.loads(inputs)
        except ValueError:
            return inputs
    if isinstance(inputs, Mapping) and inputs and set(inputs) <= {"input", "args", "inputs"}:
        inner = inputs.get("args", inputs.get("input", inputs.get("inputs")))
        return _arguments(inner) if isinstance(inner, str) else inner
    return inputs


def tool_result(span: Span) -> str | None:
    """What the call answered, as the agent read it: its ``ToolMessage``'s text (also from a
    ``Command`` update); other outputs as JSON; ``None`` before it answered."""
    outputs = span.outputs
    if outputs is None:
        return None
    message = tool_message(outputs, str(typed_attribute(span.attributes, "tool_call_id") or ""))
    if message is not None:
        return message_text(message)
    return json.dumps(outputs, ensure_ascii=False, sort_keys=True, default=str)


@dataclass(frozen=True)
class ToolCall:
    """One tool call and the model turn that asked for it."""

    span: Span
    tool: str
    """:func:`tool_name` of the span."""
    turn: Span | None
    """The model call whose reply asked for it; ``None`` when the trace does not say."""


def tool_calls(trace: Trace) -> list[ToolCall]:
    """Every tool call of the trace, depth first in call order (the same for equal runs)."""
    with trace.lock:
        calls = []
        for span in trace.walk():
            if span.kind not in TOOL_KINDS:
                continue
            turn_id = turn_of(span)
            turn = trace.get(turn_id) if turn_id is not None and turn_id in trace else None
            is_turn = turn is not None and turn.kind == "model"
            calls.append(ToolCall(span, tool_name(span), turn if is_turn else None))
        return calls


def tool_turns(calls: Iterable[ToolCall]) -> list[Span]:
    """The model turns that asked for ``calls``, each once, in the order first met."""
    seen: dict[str, Span] = {}
    for call in calls:
        if call.turn is not None:
            seen.setdefault(call.turn.id, call.turn)
    return list(seen.values())


def tool_usage_frame(
    trace: Trace,
    per: Literal["tool", "agent", "call"] = "tool",
    prices: Prices | None = None,
) -> pd.DataFrame:
    """What ``trace.tool_usage(per, prices=prices)`` returns: one row per tool, per tool and
    agent (``per="agent"``) or per call (``per="call"``).

    Per tool: ``tool``, ``calls``, ``agents`` (those that made the most calls first),
    ``failures``, ``seconds`` (of the finished calls), ``turns`` (the model turns that asked for
    it), their ``turn_input_tokens``, ``turn_output_tokens``, ``turn_total_tokens`` and
    ``turn_cost``, and ``unknown_models``; the most called tool first. Each turn counts once per
    tool it asked for (see the module docstring), so the rows may add up to more than the run's.
    Per call: ``tool``, ``agent``, ``status``, ``seconds``, ``arguments`` (JSON data),
    ``result`` (the text the agent read), ``error``, its turn's tokens and cost,
    ``turn_span_id`` and ``span_id``, depth first in call order.

    ``prices`` is what ``token_usage(prices=...)`` takes; a cost is NaN, never a smaller
    number, when a model's price is unknown, and ``unknown_models`` names it.
    """
    import pandas as pd

    if per not in ("tool", "agent", "call"):
        raise ValueError(f"per must be 'tool', 'agent' or 'call', got {per!r}.")
    table = as_price_source(prices)
    calls = tool_calls(trace)
    costs = _TurnCosts(table)
    if per == "call":
        return pd.DataFrame([_call_row(c, costs) for c in calls], columns=CALL_COLUMNS)
    groups: dict[tuple[str, str], list[ToolCall]] = {}
    for call in calls:
        key = (call.tool, "" if per == "tool" else call.span.agent)
        groups.setdefault(key, []).append(call)
    rank = tools_by_calls(Counter(c.tool for c in calls))
    rows = []
    for key, group in groups.items():
        row = _group_row(group, costs)
        if per == "agent":
            del row["agents"]
            row["agent"] = key[1]
        rows.append(row)
    rows.sort(key=lambda r: (rank[r["tool"]], -r["calls"], r.get("agent", "")))
    if per == "tool":
        return pd.DataFrame(rows, columns=TOOL_COLUMNS)
    columns = ["tool", "agent", *(c for c in TOOL_COLUMNS[1:] if c != "agents")]
    return pd.DataFrame(rows, columns=columns)


def tools_by_calls(calls: Counter[str]) -> dict[str, int]:
    """Each tool's place in the tables: the most called first, then by name. Equal runs give
    equal tables, whatever order their parallel calls started in."""
    order = sorted(calls, key=lambda t: (-calls[t], t))
    return {tool: i for i, tool in enumerate(order)}


def agents_by_calls(agents: Counter[str]) -> list[str]:
    """Agent names, those that made the most calls first, then by name."""
    return sorted(agents, key=lambda a: (-agents[a], a))


class _TurnCosts:
    """Each turn priced once, however many calls and rows it appears in."""

    def __init__(self, table: PriceSource) -> None:
        self._table = table
        self._costs: dict[str, Cost] = {}

    def __call__(self, turn: Span) -> Cost:
        cost = self._costs.get(turn.id)
        if cost is None:
            cost = self._costs[turn.id] = span_cost(turn, self._table)
        return cost


def _group_row(group: list[ToolCall], costs: _TurnCosts) -> dict[str, Any]:
    turns = tool_turns(group)
    usage = sum((t.usage for t in turns), TokenUsage())
    cost = sum((costs(t) for t in turns), Cost())
    agents = Counter(c.span.agent for c in group)
    return {
        "tool": group[0].tool,
        "calls": len(group),
        "agents": ", ".join(agents_by_calls(agents)),
        "failures": sum(is_failure(c.span) for c in group),
        "seconds": sum(c.span.duration or 0.0 for c in group),
        "turns": len(turns),
        "turn_input_tokens": usage.input,
        "turn_output_tokens": usage.output,
        "turn_total_tokens": usage.total,
        "turn_cost": _amount(cost),
        "unknown_models": ", ".join(sorted(cost.unknown)),
    }


def _call_row(call: ToolCall, costs: _TurnCosts) -> dict[str, Any]:
    span, turn = call.span, call.turn
    usage = turn.usage if turn is not None else TokenUsage()
    cost = costs(turn) if turn is not None else Cost()
    return {
        "tool": call.tool,
        "agent": span.agent,
        "status": span.status,
        "seconds": span.duration,
        "arguments": tool_arguments(span),
        "result": tool_result(span),
        "error": span.error,
        "turn_input_tokens": usage.input,
        "turn_output_tokens": usage.output,
        "turn_total_tokens": usage.total,
        "turn_cost": _amount(cost),
        "unknown_models": ", ".join(sorted(cost.unknown)),
        "turn_span_id": turn.id if turn is not None else None,
        "span_id": span.id,
    }


def _amount(cost: Cost) -> float:
    """A cost as the frames show it: NaN, never a smaller number, when a price is unknown."""
    return float(cost.amount) if cost.known else math.nan
