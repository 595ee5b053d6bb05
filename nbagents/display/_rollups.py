"""Tokens and costs rolled up from model calls: per step, per agent and for the whole trace.

Each model call's usage is added along its ancestors only when it changes, as a difference: a
live update costs the depth of the call, not the size of the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nbagents._tokens import TokenUsage
from nbagents.display._costview import CostBook
from nbagents.tracing.span import AGENT_KINDS

if TYPE_CHECKING:
    from nbagents.tracing.model import Span

__all__ = ["ZERO", "UsageRollups"]

ZERO = TokenUsage()


class UsageRollups:
    """Token sums including descendants (per visible span), own token sums per agent, the
    trace's total, and the same for costs (``costs``)."""

    def __init__(self) -> None:
        self.total = TokenUsage()
        self.costs = CostBook()
        self._incl: dict[str, TokenUsage] = {}
        """Absent while zero."""
        self._own: dict[str, TokenUsage] = {}
        self._running: dict[str, TokenUsage] = {}
        """What was added of each model call that may still change."""

    def including(self, sid: str) -> TokenUsage:
        """The tokens of ``sid`` and everything below it."""
        return self._incl.get(sid, ZERO)

    def own(self, agent: str) -> TokenUsage:
        """The tokens of ``agent``'s own model calls (not its sub-agents')."""
        return self._own.get(agent, ZERO)

    def take_call(self, call: Span, ancestors: Sequence[Span], final: bool) -> bool:
        """Roll up model ``call`` into ``ancestors`` (hidden ones too, nearest first); returns
        whether its tokens changed. ``final``: the call will not change again."""
        agents = [a.id for a in ancestors if a.kind in AGENT_KINDS]
        self.costs.set(call, agents, final=final)
        # A finished call's usage is not kept: nothing will be taken back from it.
        before = self._running.pop(call.id, ZERO) if final else self._running.get(call.id, ZERO)
        if call.usage == before:
            return False
        delta = call.usage - before
        if not final:
            self._running[call.id] = call.usage
        self.total = self.total + delta
        self._incl[call.id] = call.usage
        for ancestor in ancestors:
            if not ancestor.hidden:
                self._incl[ancestor.id] = self._incl.get(ancestor.id, ZERO) + delta
        if agents:
            self._own[agents[0]] = self._own.get(agents[0], ZERO) + delta
        return True
