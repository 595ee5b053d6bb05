"""What the snapshot's panes draw alike: escaped text, the marks the sanitize rules look for,
status dots, and a table of formatted rows (the token table's and the Tools pane's). Every text
goes through ``html.escape(…, quote=True)``; class names come from fixed sets.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import KW_ONLY, dataclass
from html import escape
from typing import Any

from nbagents.display._records import KINDS, STATUSES

__all__ = ["BREAK_ANYWHERE", "Columns", "cost", "dot", "e", "kind_cls", "status_cls", "t"]

BREAK_ANYWHERE = ' style="word-break:break-all"'
"""Inline on a table's name and task cells: a table is as wide as its longest word unless words
may break anywhere. (The stylesheet cuts these cells with an ellipsis instead.)"""


def e(value: Any) -> str:
    return escape(str(value), quote=True)


def t(text: str) -> str:
    """A time: varies between runs, so it is wrapped for the sanitizer."""
    return f'<span class="nba-t">{e(text)}</span>'


def cost(text: str) -> str:
    """A cost: the same run costs what the installed price table says, so it is wrapped too."""
    return f'<span class="nba-cost">{e(text)}</span>'


def status_cls(status: Any) -> str:
    return f"nba-s-{status if status in STATUSES else 'running'}"


def kind_cls(kind: Any) -> str:
    return f"nba-k-{kind if kind in KINDS else 'chain'}"


def dot(status: str, glyph: str) -> str:
    name = status if status in STATUSES else "running"
    return f'<span class="nba-dot" title="{name}">{e(glyph)}</span>'


@dataclass
class Columns:
    """A table of rows of formatted texts: its head, its rows (the first cell indented, with the
    row's status dot) and its total.

    Cells from ``numeric_from`` on are right-aligned figures; those in ``times`` and ``costs``
    are wrapped for the sanitize rules; in a row, the first two (a name, a task: any length)
    may break anywhere.
    """

    names: Sequence[str]
    _: KW_ONLY
    numeric_from: int
    times: Collection[int]
    costs: Collection[int]

    def _attr(self, i: int, in_row: bool = False) -> str:
        if i >= self.numeric_from:
            return ' class="nba-num"'
        return BREAK_ANYWHERE if in_row and i < 2 else ""

    def _value(self, i: int, text: str) -> str:
        if i in self.costs:
            return cost(text)
        return t(text) if i in self.times and text else e(text)

    def row(
        self, status: str, glyph: str, depth: int, cells: Sequence[str], attrs: str = ""
    ) -> str:
        """A ``<tr>``; ``attrs`` are more attributes of it, of our making."""
        indent = "\u2003" * depth
        first = f"<td{BREAK_ANYWHERE}>{indent}{dot(status, glyph)} {e(cells[0])}</td>"
        rest = "".join(
            f"<td{self._attr(i, True)}>{self._value(i, c)}</td>" for i, c in enumerate(cells) if i
        )
        return f'<tr class="{status_cls(status)}"{attrs}>{first}{rest}</tr>'

    def total(self, cells: Sequence[str]) -> str:
        tds = "".join(f"<td{self._attr(i)}>{self._value(i, c)}</td>" for i, c in enumerate(cells))
        return f'<tr class="nba-total">{tds}</tr>'

    def table(self, cls: str, rows: Sequence[str]) -> str:
        head = "".join(f"<th{self._attr(i)}>{e(c)}</th>" for i, c in enumerate(self.names))
        return (
            f'<table class="{cls}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
