"""What each agent's model calls cost, as the views show it: own and including sub-agents.

Prices come from :func:`nbagents.export.default_prices` (genai-prices with the ``cost`` extra).
The views show cost only when at least one model call of the trace is priced, so a run on the
scripted model (or on models no table knows) shows tokens alone rather than a column of
unknowns. A cost that includes an unpriced call is shown as unknown (``?``), never as a smaller
number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nbagents._tokens import TokenUsage
from nbagents.export._cost import Cost, default_prices, span_cost
from nbagents.tracing.model import Span, Trace

__all__ = ["AgentCosts", "agent_costs", "format_cost", "load_prices"]

_AGENT_KINDS = ("agent", "subagent")


@dataclass(frozen=True)
class AgentCosts:
    """Cost per agent span id: of its own model calls, and with every sub-agent under it."""

    own: Mapping[str, Cost]
    total: Mapping[str, Cost]
    trace: Cost


def agent_costs(trace: Trace) -> AgentCosts | None:
    """Costs per agent, or ``None`` when no model call of the trace has a known price."""
    prices = default_prices()
    own: dict[str, Cost] = {}
    total: dict[str, Cost] = {}
    whole = Cost()
    priced_any = False
    for span in trace.spans:
        if span.kind != "model" or not span.usage:
            continue
        cost = span_cost(span, prices)
        priced_any = priced_any or cost.known
        whole = whole + cost
        agents = list(_agent_ancestors(trace, span))
        if agents:
            own[agents[0].id] = own.get(agents[0].id, Cost()) + cost
        for agent in agents:
            total[agent.id] = total.get(agent.id, Cost()) + cost
    if not priced_any:
        return None
    return AgentCosts(own, total, whole)


def load_prices() -> None:
    """Load the price table now: its first use imports genai-prices' data (~0.2 s), which must
    not land in the first live update, whose build time sets how often the view refreshes."""
    prices = default_prices()
    prices.price_of("gpt-4o", TokenUsage(1, 1))


def format_cost(cost: Cost | None) -> str:
    """``$0.0123`` (four significant digits below a cent), or ``?`` when a price is unknown."""
    if cost is None:
        return "$0"
    if not cost.known:
        return "?"
    amount = float(cost.amount)
    if amount == 0:
        return "$0"
    if amount >= 0.01:
        return f"${amount:,.2f}"
    return f"${amount:.4g}"


def _agent_ancestors(trace: Trace, span: Span) -> list[Span]:
    out: list[Span] = []
    parent = trace.parent(span)
    while parent is not None:
        if parent.kind in _AGENT_KINDS:
            out.append(parent)
        parent = trace.parent(parent)
    return out
