"""More than two runs: one table of totals, and of tokens, cost and time per agent type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nbagents.comparison._compare import Totals, totals
from nbagents.cost import Prices
from nbagents.tracing.model import Trace

if TYPE_CHECKING:
    import pandas as pd


class RunsTable:
    """Several runs' totals side by side, and per agent type (main agent and each sub-agent
    type): tokens, cost and seconds, summed over its spawns."""

    def __init__(self, runs: Sequence[tuple[Trace, str]], prices: Prices | None = None) -> None:
        self.runs = list(runs)
        self.totals: list[Totals] = [totals(t, label, prices) for t, label in self.runs]
        self.per_type: dict[str, list[tuple[int, float | None, float]]] = {}
        for position, (trace, _) in enumerate(self.runs):
            frame = trace.token_usage(cost=True, prices=prices)
            for _, row in frame.iterrows():
                agent, role = str(row["agent"]), str(row["role"])
                cells = self.per_type.setdefault(agent, [(0, None, 0.0)] * len(self.runs))
                cost = row["cost"]
                cells[position] = (
                    int(row["total_tokens"]),
                    None if cost != cost else float(cost),  # NaN: a price unknown
                    _seconds(trace, agent, "agent" if role == "main" else "subagent"),
                )

    def to_dataframe(self) -> pd.DataFrame:
        """One row per run: totals, then ``<type> tokens`` / ``cost`` / ``seconds`` columns."""
        import pandas as pd

        records: list[dict[str, Any]] = []
        for position, total in enumerate(self.totals):
            record: dict[str, Any] = {"run": total.label, **vars(total)}
            del record["label"]
            for agent, cells in self.per_type.items():
                figures = zip(("tokens", "cost", "seconds"), cells[position], strict=True)
                record |= {f"{agent} {what}": value for what, value in figures}
            records.append(record)
        return pd.DataFrame.from_records(records)

    def to_html(self) -> str:
        from nbagents.comparison._html import runs_table_html

        return runs_table_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.summary(), "text/html": self.to_html()}

    def summary(self) -> str:
        return f"{len(self.runs)} runs: " + ", ".join(
            f"{t.label} {t.tokens:,} tokens" for t in self.totals
        )

    def __repr__(self) -> str:
        return f"<RunsTable {self.summary()}>"


def _seconds(trace: Trace, name: str, kind: str) -> float:
    """Wall seconds of the agent's spans of that name, summed (parallel spawns overlap)."""
    return sum(s.duration or 0.0 for s in trace.spans if s.kind == kind and s.name == name)
