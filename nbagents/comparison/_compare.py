"""``nbagents.compare``: runs side by side, as rows a table, a DataFrame and the snapshot share."""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbagents.comparison._align import Change, Pair, align
from nbagents.comparison._words import word_diff
from nbagents.cost import Prices
from nbagents.history import load_run, resolve_store, run_name_of
from nbagents.tracing.cost import cost_of_spans, total_cost
from nbagents.tracing.model import AgentRecord, Trace

if TYPE_CHECKING:
    import pandas as pd

RunLike = Trace | str
"""A trace, or the id of a run in the history (``nbagents.runs()``)."""


@dataclass(frozen=True)
class Side:
    """What one run shows on a row; all ``None`` when the run has no such agent."""

    status: str | None
    tokens: int | None
    cost: float | None
    seconds: float | None
    result: str | None


@dataclass(frozen=True)
class Row:
    """One aligned agent: its place in the tree, both runs' figures, and what changed."""

    depth: int
    type: str
    description: str
    change: Change
    a: Side
    b: Side
    diff: list[tuple[str, str]] | None
    """The result, word by word (``("same"|"del"|"ins", text)``), when the results differ."""

    def delta(self, what: str) -> float | None:
        left, right = getattr(self.a, what), getattr(self.b, what)
        return None if left is None or right is None else right - left


@dataclass(frozen=True)
class Totals:
    label: str
    status: str
    tokens: int
    cost: float | None
    seconds: float
    spawns: int
    failures: int


def _side(run: AgentRecord | None, trace: Trace, prices: Prices | None) -> Side:
    if run is None:
        return Side(None, None, None, None, None)
    models = [s for s in trace.descendants(trace.get(run.span_id)) if s.kind == "model"]
    cost = cost_of_spans(models, prices).value()
    return Side(run.status, run.tokens_total.total, cost, run.duration, run.result)


def _row(pair: Pair, runs: tuple[Trace, Trace], prices: Prices | None) -> Row:
    a, b = pair.a, pair.b
    differs = a is not None and b is not None and (a.result or "") != (b.result or "")
    return Row(
        depth=pair.depth,
        type=pair.either.type,
        description=pair.either.description,
        change=pair.change,
        a=_side(a, runs[0], prices),
        b=_side(b, runs[1], prices),
        diff=word_diff(a.result or "", b.result or "") if differs else None,  # type: ignore[union-attr]
    )


def totals(trace: Trace, label: str, prices: Prices | None = None) -> Totals:
    return Totals(
        label=label,
        status=trace.status,
        tokens=trace.total_usage().total,
        cost=total_cost(trace, prices).value(),
        seconds=trace.duration,
        spawns=len(trace.subagents),
        failures=trace.failures(),
    )


class Comparison:
    """Two runs aligned agent by agent. Shows itself in a notebook (a static snapshot that
    reads the same untrusted, on nbviewer and in the docs); ``rows`` and ``to_dataframe()``
    hold the same facts."""

    def __init__(
        self, a: Trace, b: Trace, labels: tuple[str, str], prices: Prices | None = None
    ) -> None:
        self.a, self.b = a, b
        self.labels = labels
        pairs = align(a.agents(), b.agents())
        self.rows: list[Row] = [_row(p, (a, b), prices) for top in pairs for p in top.walk()]
        self.totals = (totals(a, labels[0], prices), totals(b, labels[1], prices))

    def changed(self) -> list[Row]:
        """The rows that differ: changed, added or removed agents."""
        return [r for r in self.rows if r.change != "same"]

    def to_dataframe(self) -> pd.DataFrame:
        """One row per aligned agent: type, task, change, and for each run status, tokens,
        cost and seconds, with the deltas (B minus A)."""
        import pandas as pd

        records: list[dict[str, Any]] = []
        for row in self.rows:
            record: dict[str, Any] = {
                "depth": row.depth,
                "agent": row.type,
                "description": row.description,
                "change": row.change,
            }
            for what in ("status", "tokens", "cost", "seconds"):
                record[f"{what}_a"] = getattr(row.a, what)
                record[f"{what}_b"] = getattr(row.b, what)
                if what != "status":
                    record[f"{what}_delta"] = row.delta(what)
            record["result_a"], record["result_b"] = row.a.result, row.b.result
            records.append(record)
        return pd.DataFrame.from_records(records)

    def to_html(self) -> str:
        from nbagents.comparison._html import comparison_html

        return comparison_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.summary(), "text/html": self.to_html()}

    def summary(self) -> str:
        a, b = self.totals
        changed = self.changed()
        return (
            f"{a.label} vs {b.label}: {len(changed)} of {len(self.rows)} agents differ; "
            f"tokens {a.tokens:,} -> {b.tokens:,} ({b.tokens - a.tokens:+,})"
        )

    def __repr__(self) -> str:
        return f"<Comparison {self.summary()}>"


def labelled(runs: Sequence[RunLike], store: Any) -> list[tuple[Trace, str]]:
    """Each run's trace and its label: a letter, and its name in the history or its title."""
    out: list[tuple[Trace, str]] = []
    for i, run in enumerate(runs):
        if isinstance(run, Trace):
            trace, label = run, run_name_of(run) or run.title
        elif isinstance(run, str):
            chosen = resolve_store(store)
            trace = load_run(run, store=store)
            label = (chosen.info(run).name if chosen is not None else "") or run
        else:
            raise TypeError(f"compare takes traces or run ids (str), not {type(run).__name__}")
        letter = string.ascii_uppercase[i] if i < 26 else str(i + 1)
        out.append((trace, f"{letter}: {label}" if label else letter))
    return out
