"""The static HTML of an experiment and of two experiments compared: self-contained, no script,
readable where the stylesheet is stripped (an untrusted notebook), every text from a case, a
model or a scorer escaped. Times, costs and ids vary between runs: they sit in the spans the
sanitize rules nbagents ships mask (``nba-t``, ``nba-cost``, ``nba-id``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from html import escape
from typing import TYPE_CHECKING, Any

from nbagents.display import WRAP_LONG_WORDS, stylesheet

if TYPE_CHECKING:
    from nbagents.evaluation._compare import ExperimentComparison
    from nbagents.evaluation._experiment import Experiment

__all__ = ["ROW_LIMIT", "comparison_html", "experiment_html"]

ROW_LIMIT = 500
"""Runs drawn in the results table; the rest are counted (``to_dataframe()`` has them all)."""
PASS, FAIL = "#cfe8cf", "#f2cccc"


class HtmlView:
    """Displays as its ``repr`` and its ``to_html()``, only those IPython asks for built."""

    def to_html(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(
        self, include: Collection[str] | None = None, exclude: Collection[str] | None = None
    ) -> dict[str, str]:
        renderers: dict[str, Callable[[], str]] = {
            "text/plain": self.__repr__,
            "text/html": self.to_html,
        }
        return {
            mime: render()
            for mime, render in renderers.items()
            if (include is None or mime in include) and (exclude is None or mime not in exclude)
        }


def _open(kind: str) -> list[str]:
    return [
        f'<div class="nba-root {kind} tex2jax_ignore mathjax_ignore" style="{WRAP_LONG_WORDS}">',
        stylesheet(),
    ]


def _text(value: Any) -> str:
    return escape(str(value), quote=True)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _number(value: Any, fmt: str = ".3g") -> str:
    return "—" if _missing(value) else format(value, fmt)


def _share(value: Any) -> str:
    return "—" if _missing(value) else f"{value:.0%}"


def _cost(value: Any) -> str:
    return "—" if _missing(value) else f'<span class="nba-cost">${value:,.6f}</span>'


def _cell(text: str, colour: str | None = None, right: bool = False) -> str:
    styles = [f"background-color:{colour}"] if colour else []
    if right:
        styles.append("text-align:right")
    style = f' style="{";".join(styles)}"' if styles else ""
    return f"<td{style}>{text}</td>"


def _table(head: list[str], rows: list[str]) -> str:
    heads = "".join(f"<th>{_text(h)}</th>" for h in head)
    body = "".join(rows)
    return f'<table class="nba-table"><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>'


def _section(title: str, head: list[str], rows: list[str]) -> str:
    table = _table(head, rows)
    return f'<details class="nba-sec" open><summary>{title}</summary>{table}</details>'


def experiment_html(exp: Experiment) -> str:
    results = exp.results
    failed = sum(r.status != "ok" for r in results)
    out = _open("nba-exp")
    out.append(
        f'<div class="nba-header"><b>Experiment</b> {_text(exp.name)} '
        f'<code class="nba-id">{_text(exp.id)}</code>: {len(results)} of '
        f"{len(exp.cases) * exp.repeats} runs ({len(exp.cases)} cases \u00d7 {exp.repeats}), "
        f"{failed} failed, {_text(exp.status)}</div>"
    )
    summary = exp.summary().to_dict(orient="records")
    if summary:
        rows = [
            "<tr>"
            + _cell(_text(row["scorer"]))
            + _cell(_text(row["kind"]))
            + _cell(str(row["n"]), right=True)
            + _cell(
                _share(row["value"]) if row["kind"] == "pass rate" else _number(row["value"]),
                right=True,
            )
            + _cell(_interval(row), right=True)
            + _cell(_share(row["pass_at_k"]) + (f" (k={row['k']})" if row["k"] else ""), right=True)
            + _cell(str(row["errors"]), FAIL if row["errors"] else None, right=True)
            + "</tr>"
            for row in summary
        ]
        head = ["scorer", "kind", "runs", "value", "95% interval", "pass@k", "scorer errors"]
        out.append(_section("Scores", head, rows))
    types = exp.summary(by="subagent").to_dict(orient="records")
    if types:
        rows = []
        for row in types:
            corr = ", ".join(
                f"{_text(name)} {_number(row[f'corr_{name}'], '+.2f')}" for name in exp.scorers
            )
            rows.append(
                "<tr>"
                + _cell(_text(row["type"]))
                + _cell(f"{row['spawns_per_run']:.2f}", right=True)
                + _cell(f"{row['tokens_per_run']:,.0f}", right=True)
                + _cell(_cost(row["cost_per_run"]), right=True)
                + _cell(
                    _share(row["failure_rate"]),
                    FAIL if not _missing(row["failure_rate"]) and row["failure_rate"] > 0 else None,
                    right=True,
                )
                + _cell(corr or "—")
                + "</tr>"
            )
        head = ["type", "spawns/run", "tokens/run", "cost/run", "failed", "correlation with scores"]
        out.append(_section("Sub-agent types", head, rows))
    out.append(
        f'<details class="nba-sec"><summary>Runs ({len(results)})</summary>'
        "<div>A run's trace: <code>exp.trace(case_id, repeat)</code>.</div>"
    )
    head = ["case", "repeat", "status", *exp.scorers, "tokens", "cost", "time", "run", "error"]
    out.append(_table(head, [_run_row(exp, r) for r in results[:ROW_LIMIT]]))
    if len(results) > ROW_LIMIT:
        out.append(
            f"<div>{len(results) - ROW_LIMIT:,} more runs: <code>exp.to_dataframe()</code> "
            "has them all.</div>"
        )
    out.append("</details></div>")
    return "".join(out)


def _interval(row: Mapping[Any, Any]) -> str:
    if _missing(row["ci_low"]):
        return "—"
    show = _share if row["kind"] == "pass rate" else _number
    return f"{show(row['ci_low'])} \u2013 {show(row['ci_high'])}"


def _run_row(exp: Experiment, r: Any) -> str:
    cells = [_cell(_text(r.case_id)), _cell(str(r.repeat), right=True)]
    cells.append(_cell(_text(r.status), FAIL if r.status != "ok" else None))
    for name in exp.scorers:
        score = r.scores.get(name)
        if score is None or score.value is None:
            shown = "error" if score is not None and score.error else "—"
            cells.append(_cell(shown, FAIL if shown == "error" else None))
        elif score.passed is not None:
            cells.append(_cell("pass" if score.passed else "fail", PASS if score.passed else FAIL))
        else:
            cells.append(_cell(_number(score.value), right=True))
    cells.append(_cell(f"{r.tokens:,}", right=True))
    cells.append(_cell(_cost(r.cost), right=True))
    cells.append(_cell(f'<span class="nba-t">{r.seconds:.2f} s</span>', right=True))
    cells.append(_cell(f'<code class="nba-id">{_text(r.run_id or "—")}</code>'))
    problems = [r.error] if r.error else []
    problems += [f"{n}: {s.error}" for n, s in r.scores.items() if s.error]
    cells.append(_cell(_text("; ".join(problems)[:300])))
    return "<tr>" + "".join(cells) + "</tr>"


def comparison_html(comparison: ExperimentComparison) -> str:
    a, b = comparison.a, comparison.b
    out = _open("nba-exp nba-exp-compare")
    out.append(
        f'<div class="nba-header"><b>Compare experiments</b> {_text(a.name)} (a) with '
        f"{_text(b.name)} (b): {len(comparison.case_ids)} cases paired</div>"
    )
    rows = []
    for row in comparison.scores().to_dict(orient="records"):
        delta = row["delta"]
        colour = None if _missing(delta) or delta == 0 else (PASS if delta > 0 else FAIL)
        rows.append(
            "<tr>"
            + _cell(_text(row["scorer"]))
            + _cell(_number(row["a"]), right=True)
            + _cell(_number(row["b"]), right=True)
            + _cell(_number(delta, "+.3g"), colour, right=True)
            + _cell(
                f"{_number(row['ci_low'], '+.3g')} \u2013 {_number(row['ci_high'], '+.3g')}",
                right=True,
            )
            + _cell(str(row["wins"]), right=True)
            + _cell(str(row["losses"]), right=True)
            + _cell(str(row["ties"]), right=True)
            + _cell(_number(row["p_value"], ".3f"), right=True)
            + "</tr>"
        )
    head = ["scorer", "a", "b", "b \u2212 a", "95% interval", "b better", "b worse", "tied"]
    out.append(_section("Scores, paired by case", [*head, "sign test p"], rows))
    rows = []
    for row in comparison.subagents().to_dict(orient="records"):
        cells = [_cell(_text(row["type"]))]
        for figure, show in (
            ("spawns_per_run", _number),
            ("tokens_per_run", _number),
            ("cost_per_run", _cost),
            ("failure_rate", _share),
        ):
            cells.append(
                _cell(f"{show(row[f'{figure}_a'])} → {show(row[f'{figure}_b'])}", right=True)
            )
        rows.append("<tr>" + "".join(cells) + "</tr>")
    if rows:
        head = ["type", "spawns/run", "tokens/run", "cost/run", "failed"]
        out.append(_section("Sub-agent types, a → b", head, rows))
    out.append("<div>One case's two runs, agent by agent: <code>cmp.case(case_id)</code>.</div>")
    out.append("</div>")
    return "".join(out)
