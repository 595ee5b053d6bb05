"""Runs side by side: two runs' agent trees aligned row by row, or several runs' totals."""

from __future__ import annotations

from typing import Any

from nbagents.comparison._align import Pair, align
from nbagents.comparison._compare import Comparison, Row, RunLike, Side, Totals, labelled
from nbagents.comparison._table import RunsTable
from nbagents.comparison._words import word_diff
from nbagents.cost import Prices
from nbagents.tracing.model import Trace

__all__ = [
    "Comparison",
    "Pair",
    "Row",
    "RunLike",
    "RunsTable",
    "Side",
    "Totals",
    "align",
    "compare",
    "word_diff",
]


def compare(
    *runs: RunLike, store: Any = None, prices: Prices | None = None
) -> Comparison | RunsTable:
    """Runs side by side. Each run is a ``Trace`` or the id of a run in the history.

    Two runs give a :class:`Comparison`: their agents aligned (a sub-agent matched by its path
    of sub-agent types and its task, else by order), each row with both runs' status,
    tokens, cost and time and the deltas, the result's word-level diff where it changed, and
    agents only one run has marked added or removed. More runs give a :class:`RunsTable` of
    totals and per-agent-type figures. Both display in the notebook and have
    ``to_dataframe()``. ``store`` is the history run ids are read from. One argument that
    is a list of runs, or a (filtered) ``nbagents.runs()`` table, compares those runs.
    """
    if len(runs) == 1 and not isinstance(runs[0], Trace | str):
        runs = _listed(runs[0])
    if len(runs) < 2:
        raise ValueError(f"compare needs two runs or more, got {len(runs)}")
    found = labelled(runs, store)
    if len(found) == 2:
        (a, label_a), (b, label_b) = found
        return Comparison(a, b, (label_a, label_b), prices)
    return RunsTable(found, prices)


def _listed(runs: Any) -> tuple[RunLike, ...]:
    column = getattr(runs, "columns", None)
    if column is not None:  # a table from nbagents.runs(): its run ids, oldest first
        if "run_id" not in column:
            raise TypeError("compare takes a table from nbagents.runs(), with a run_id column")
        return tuple(reversed(list(runs["run_id"])))
    try:
        return tuple(runs)
    except TypeError:
        raise TypeError(
            f"compare takes traces or run ids (str), not {type(runs).__name__}"
        ) from None
