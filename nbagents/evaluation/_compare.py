"""Two experiments compared case by case: per scorer the wins, losses and ties with a paired
interval and test, and per sub-agent type how spawns, tokens, cost and failures moved."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbagents.comparison import Comparison
from nbagents.comparison import compare as compare_runs
from nbagents.evaluation._experiment import Experiment, type_figures
from nbagents.evaluation._html import HtmlView
from nbagents.evaluation._stats import paired

if TYPE_CHECKING:
    import pandas as pd

    from nbagents.comparison import RunsTable

__all__ = ["ExperimentComparison", "compare"]

NAN = float("nan")


def compare(*runs: Any, **options: Any) -> ExperimentComparison | Comparison | RunsTable:
    """Two experiments compared case by case (an :class:`ExperimentComparison`), or runs side by
    side as :func:`nbagents.comparison.compare` lines them up."""
    if any(isinstance(run, Experiment) for run in runs):
        if len(runs) != 2 or not all(isinstance(run, Experiment) for run in runs):
            raise TypeError("compare takes two experiments (or runs, not both)")
        if options:
            raise TypeError(f"compare of experiments takes no options, got {sorted(options)}")
        return ExperimentComparison(runs[0], runs[1])
    return compare_runs(*runs, **options)


class ExperimentComparison(HtmlView):
    """Experiment ``b`` against experiment ``a``, paired by case id (each case's repeats
    averaged). A win is a case that scored higher in ``b``."""

    def __init__(self, a: Experiment, b: Experiment) -> None:
        self.a, self.b = a, b
        ids_b = {case.id for case in b.cases}
        self.case_ids = [case.id for case in a.cases if case.id in ids_b]
        if not self.case_ids:
            raise ValueError(
                f"experiments {a.name!r} and {b.name!r} share no case: cases pair by id (given, "
                "or made from the inputs), so run both over the same cases."
            )
        self.scorers = [name for name in a.scorers if name in b.scorers]

    def _per_case(self, exp: Experiment, scorer: str) -> dict[str, float]:
        sums: dict[str, list[float]] = {}
        for (case_id, _), value in exp.values(scorer).items():
            sums.setdefault(case_id, []).append(value)
        return {case: sum(v) / len(v) for case, v in sums.items()}

    def scores(self) -> pd.DataFrame:
        """Per scorer: the pairs, each side's mean, the delta ``b - a`` with its 95 % paired
        t interval, wins, losses and ties, and the sign test's p-value."""
        import pandas as pd

        rows = []
        for name in self.scorers:
            per_a, per_b = self._per_case(self.a, name), self._per_case(self.b, name)
            ids = [c for c in self.case_ids if c in per_a and c in per_b]
            xs, ys = [per_a[c] for c in ids], [per_b[c] for c in ids]
            low, high, p = paired(xs, ys)
            n = len(ids)
            rows.append(
                {
                    "scorer": name,
                    "pairs": n,
                    "a": sum(xs) / n if n else NAN,
                    "b": sum(ys) / n if n else NAN,
                    "delta": (sum(ys) - sum(xs)) / n if n else NAN,
                    "ci_low": low,
                    "ci_high": high,
                    "wins": sum(y > x for x, y in zip(xs, ys, strict=True)),
                    "losses": sum(y < x for x, y in zip(xs, ys, strict=True)),
                    "ties": sum(y == x for x, y in zip(xs, ys, strict=True)),
                    "p_value": p,
                }
            )
        columns = [
            "scorer",
            "pairs",
            "a",
            "b",
            "delta",
            "ci_low",
            "ci_high",
            "wins",
            "losses",
            "ties",
            "p_value",
        ]
        return pd.DataFrame(rows, columns=columns)

    def subagents(self) -> pd.DataFrame:
        """Per sub-agent type, over the paired cases: spawns, tokens and cost per run and the
        failure rate, in ``a`` and in ``b``, and the change."""
        import pandas as pd

        wanted = set(self.case_ids)
        sides = [
            type_figures([r for r in e.results if r.status == "ok" and r.case_id in wanted])
            for e in (self.a, self.b)
        ]
        types = sorted(set(sides[0]) | set(sides[1]))
        figures = ("spawns_per_run", "tokens_per_run", "cost_per_run", "failure_rate")
        rows = []
        for type_ in types:
            row: dict[str, Any] = {"type": type_}
            for figure in figures:
                a = sides[0].get(type_, {}).get(figure, 0.0)
                b = sides[1].get(type_, {}).get(figure, 0.0)
                row |= {f"{figure}_a": a, f"{figure}_b": b, f"{figure}_delta": b - a}
            rows.append(row)
        columns = ["type"] + [f"{f}_{side}" for f in figures for side in ("a", "b", "delta")]
        return pd.DataFrame(rows, columns=columns)

    def to_dataframe(self) -> pd.DataFrame:
        """One row per paired case: each scorer's score in ``a``, in ``b`` and the delta."""
        import pandas as pd

        rows = []
        per = {
            name: (self._per_case(self.a, name), self._per_case(self.b, name))
            for name in self.scorers
        }
        for case_id in self.case_ids:
            row: dict[str, Any] = {"case_id": case_id}
            for name, (per_a, per_b) in per.items():
                a, b = per_a.get(case_id, NAN), per_b.get(case_id, NAN)
                row |= {f"{name}_a": a, f"{name}_b": b, f"{name}_delta": b - a}
            rows.append(row)
        return pd.DataFrame(rows)

    def case(self, case_id: str, repeat: int = 0) -> Comparison:
        """The two runs of one case, compared agent by agent (``nbagents.compare`` of their
        traces)."""
        found = compare_runs(self.a.trace(case_id, repeat), self.b.trace(case_id, repeat))
        if not isinstance(found, Comparison):  # two runs always give one
            raise TypeError(f"expected a Comparison, got {type(found).__name__}")
        return found

    def headline(self) -> list[str]:
        """What changed, one line per scorer and per sub-agent type that moved."""
        lines = []
        for row in self.scores().to_dict(orient="records"):
            lines.append(
                f"{row['scorer']}: {row['a']:.2f} -> {row['b']:.2f} ({row['delta']:+.2f}, 95% CI "
                f"{row['ci_low']:+.2f} to {row['ci_high']:+.2f}); {row['wins']} better, "
                f"{row['losses']} worse, {row['ties']} tied of {row['pairs']} cases"
            )
        for row in self.subagents().to_dict(orient="records"):
            moved = []
            if (
                abs(row["failure_rate_delta"]) > 1e-9
                and row["failure_rate_delta"] == row["failure_rate_delta"]
            ):
                moved.append(f"fails {row['failure_rate_a']:.0%} -> {row['failure_rate_b']:.0%}")
            if abs(row["spawns_per_run_delta"]) > 1e-9:
                moved.append(
                    f"spawns/run {row['spawns_per_run_a']:.2g} -> {row['spawns_per_run_b']:.2g}"
                )
            if row["tokens_per_run_a"] and abs(row["tokens_per_run_delta"]) > 1e-9:
                change = row["tokens_per_run_delta"] / row["tokens_per_run_a"]
                moved.append(f"tokens/run {change:+.0%}")
            if moved:
                lines.append(f"sub-agent {row['type']}: " + ", ".join(moved))
        return lines

    def __repr__(self) -> str:
        head = f"<ExperimentComparison {self.a.name!r} -> {self.b.name!r}"
        return "\n  ".join([head, *self.headline()]) + ">"

    def to_html(self) -> str:
        from nbagents.evaluation._html import comparison_html

        return comparison_html(self)
