"""What each agent's model calls cost, as the views show it: own and including sub-agents.

Prices come from :func:`nbagents.cost.default_prices`. The views show cost only when a model
call of the trace is priced (a run on the scripted model shows tokens alone, not a column of
unknowns). A cost that includes an unpriced call is unknown (``?``), never a smaller number.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from nbagents._tokens import TokenUsage
from nbagents.cost import Cost, default_prices
from nbagents.tracing.cost import priced_call
from nbagents.tracing.model import Span

__all__ = ["CostBook", "CostSum", "format_cost", "load_prices"]


@dataclass
class CostSum:
    """A running sum of costs that can also take one back (a call's cost can change)."""

    amount: Decimal = Decimal(0)
    unknown: Counter[str] = field(default_factory=Counter)

    def add(self, cost: Cost, sign: int) -> None:
        self.amount += sign * cost.amount
        for model in cost.unknown:
            self.unknown[model] += sign
            if not self.unknown[model]:
                del self.unknown[model]

    def cost(self) -> Cost:
        return Cost(self.amount, frozenset(self.unknown))


class CostBook:
    """Cost per agent span id, own and including sub-agents, updated one model call at a time;
    ``priced`` says whether any call that used tokens has a known price (the views show cost
    only then)."""

    def __init__(self) -> None:
        self._prices = default_prices()
        self._calls: dict[str, tuple[Cost, tuple[str, ...]]] = {}
        self._own: defaultdict[str, CostSum] = defaultdict(CostSum)
        self._total: defaultdict[str, CostSum] = defaultdict(CostSum)
        self._trace = CostSum()
        self._priced: set[str] = set()

    def set(self, call: Span, agents: Sequence[str], *, final: bool = False) -> None:
        """Record ``call``'s cost; ``agents`` are its agent ancestors, nearest first. ``final``:
        the call will not change again, so its cost is not kept to be taken back."""
        cost = priced_call(call, self._prices) if call.usage else Cost()
        if call.usage and cost.known:
            self._priced.add(call.id)
        else:
            self._priced.discard(call.id)
        before = self._calls.pop(call.id, None)
        if before is not None:
            self._book(*before, sign=-1)
        if not final:
            self._calls[call.id] = (cost, tuple(agents))
        self._book(cost, tuple(agents), sign=1)

    def _book(self, cost: Cost, agents: tuple[str, ...], sign: int) -> None:
        self._trace.add(cost, sign)
        if agents:
            self._own[agents[0]].add(cost, sign)
        for agent in agents:
            self._total[agent].add(cost, sign)

    @property
    def priced(self) -> bool:
        return bool(self._priced)

    def own(self, agent_id: str) -> Cost:
        return self._own[agent_id].cost()

    def total(self, agent_id: str) -> Cost:
        return self._total[agent_id].cost()

    def trace(self) -> Cost:
        return self._trace.cost()


def load_prices() -> None:
    """Load the price table now: its first use imports genai-prices' data, which must
    not land in the first live update, whose build time sets how often the view refreshes."""
    default_prices().price_of("gpt-4o", TokenUsage(1, 1))


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
    # four significant digits, never in exponent notation ($0.000075, not $7.5e-05)
    places = 3 - math.floor(math.log10(amount))
    return f"${amount:.{places}f}".rstrip("0")
