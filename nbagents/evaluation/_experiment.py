"""``Experiment``: an agent run over many cases, each run scored and kept in the run history;
its results as a DataFrame, its summary with intervals, and its scores redone from saved runs."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from nbagents.evaluation._cases import Case
from nbagents.evaluation._html import HtmlView
from nbagents.evaluation._results import Result, answer_of
from nbagents.evaluation._scoring import Scorer, as_scorers
from nbagents.evaluation._stats import (
    correlation,
    mean_interval,
    pass_at_k,
    proportion_interval,
)
from nbagents.history import RunStore, StoreLike, reading_store

if TYPE_CHECKING:
    import pandas as pd

    from nbagents.tracing.model import Trace

__all__ = ["Experiment", "experiments", "load_experiment"]

NAN = float("nan")
_SCORER_COLUMNS = ["scorer", "kind", "n", "value", "ci_low", "ci_high", "pass_at_k", "k", "errors"]
_TYPE_COLUMNS = [
    "type",
    "runs_with",
    "spawns_per_run",
    "tokens_per_run",
    "cost_per_run",
    "failure_rate",
]


class Experiment(HtmlView):
    """An agent run over a set of cases, ``repeats`` times each, every run scored.

    Made by :func:`nbagents.evaluate`; reopened by :func:`nbagents.load_experiment`. Each run is
    an ordinary traced run in the history (``nbagents.runs(tag="experiment:<id>")``).
    """

    def __init__(
        self,
        *,
        id: str,
        name: str,
        cases: Sequence[Case],
        repeats: int = 1,
        scorers: Sequence[str] = (),
        tags: Sequence[str] = (),
        created_at: float = 0.0,
        status: str = "running",
        agent: str = "",
        store: RunStore | None = None,
    ) -> None:
        self.id = id
        self.name = name
        self.cases = list(cases)
        self.repeats = repeats
        self.scorers = list(scorers)
        self.tags = tuple(tags)
        self.created_at = created_at
        self.status = status
        """``"running"``, ``"done"``, or ``"interrupted"`` (stopped before every case ran)."""
        self.agent = agent
        self.store = store
        self._results: dict[tuple[str, int], Result] = {}
        # Only without a history: then a run's trace has nowhere else to be read back from.
        self._traces: dict[tuple[str, int], Trace] = {}
        self._lock = threading.Lock()

    # -- what it holds -------------------------------------------------------------------------

    @property
    def results(self) -> list[Result]:
        """The runs so far, in case order, then repeat."""
        order = {case.id: n for n, case in enumerate(self.cases)}
        with self._lock:
            found = list(self._results.values())
        return sorted(found, key=lambda r: (order.get(r.case_id, len(order)), r.repeat))

    def result(self, case_id: str, repeat: int = 0) -> Result:
        """The run of one case and repeat."""
        try:
            return self._results[(case_id, repeat)]
        except KeyError:
            raise KeyError(
                f"no run of case {case_id!r}, repeat {repeat} in experiment {self.name!r}"
            ) from None

    def missing(self) -> list[tuple[Case, int]]:
        """The case and repeat pairs not run yet (what ``evaluate(..., resume=exp)`` runs)."""
        return [
            (case, repeat)
            for case in self.cases
            for repeat in range(self.repeats)
            if (case.id, repeat) not in self._results
        ]

    def trace(self, case_id: str, repeat: int = 0) -> Trace:
        """The trace of one run, from the history (or from memory where none is kept)."""
        key = (case_id, repeat)
        if key in self._traces:
            return self._traces[key]
        found = self.result(case_id, repeat)
        if self.store is None or found.run_id is None:
            raise LookupError(
                f"the trace of case {case_id!r}, repeat {repeat} was not kept (the experiment "
                "ran without a run history)."
            )
        return self.store.load(found.run_id)

    def outputs(self, case_id: str, repeat: int = 0) -> Any:
        """What the agent returned in one run (read back from the history, where it is kept)."""
        found = self.result(case_id, repeat)
        if self.store is None:
            return found.outputs
        return self._saved()[(case_id, repeat)].outputs

    def add(self, result: Result, trace: Trace | None = None) -> None:
        """Record one run (the runner's call). With a history, its outputs and trace stay there
        and not in memory, which then holds a few figures per run however many there are."""
        key = (result.case_id, result.repeat)
        with self._lock:
            if self.store is None:
                self._results[key] = result
                if trace is not None:
                    self._traces[key] = trace
            else:
                self._results[key] = replace(result, outputs=None)

    def _saved(self) -> dict[tuple[str, int], Result]:
        """Every run as saved in the history, outputs included."""
        if self.store is None:
            return dict(self._results)
        _, texts = self.store.experiment(self.id)
        found = (Result.from_json(text) for text in texts)
        return {(r.case_id, r.repeat): r for r in found}

    # -- tables --------------------------------------------------------------------------------

    def to_dataframe(self, *, comments: bool = False) -> pd.DataFrame:
        """One row per case and repeat: ``case_id``, ``repeat``, ``status``, one column per
        scorer (named after it; NaN where it could not score), ``tokens``, ``cost``,
        ``seconds``, ``run_id`` and ``error``. ``comments=True`` adds each scorer's comment as
        ``<scorer>_comment``."""
        import pandas as pd

        rows = []
        for r in self.results:
            row: dict[str, Any] = {"case_id": r.case_id, "repeat": r.repeat, "status": r.status}
            for name in self.scorers:
                score = r.scores.get(name)
                row[name] = NAN if score is None or score.value is None else score.value
                if comments:
                    row[f"{name}_comment"] = None if score is None else score.comment
            row |= {
                "tokens": r.tokens,
                "cost": NAN if r.cost is None else r.cost,
                "seconds": r.seconds,
                "run_id": r.run_id,
                "error": r.error,
            }
            rows.append(row)
        columns = ["case_id", "repeat", "status"]
        for name in self.scorers:
            columns += [name, f"{name}_comment"] if comments else [name]
        columns += ["tokens", "cost", "seconds", "run_id", "error"]
        return pd.DataFrame(rows, columns=columns)

    def summary(self, by: Literal["scorer", "subagent"] = "scorer") -> pd.DataFrame:
        """``by="scorer"``: per scorer, the pass rate (a yes/no scorer) or the mean, its 95 %
        interval, pass@k over the repeats, and how often the scorer itself failed. A run that
        failed counts as a fail (0). ``by="subagent"``: per sub-agent type, how often it is
        spawned, what it costs, how often it fails, and how its spawns go with each score
        (Spearman's correlation)."""
        import pandas as pd

        if by == "scorer":
            rows = [self._scorer_row(name) for name in self.scorers]
            return pd.DataFrame(rows, columns=_SCORER_COLUMNS)
        if by == "subagent":
            columns = [*_TYPE_COLUMNS, *(f"corr_{name}" for name in self.scorers)]
            return pd.DataFrame(self._type_rows(), columns=columns)
        raise ValueError(f"by must be 'scorer' or 'subagent', not {by!r}")

    def values(self, scorer: str) -> dict[tuple[str, int], float]:
        """Each run's value of ``scorer``: a failed run as 0, a scorer that failed left out."""
        if scorer not in self.scorers:
            raise KeyError(f"no scorer {scorer!r}; the scorers are {self.scorers}")
        found: dict[tuple[str, int], float] = {}
        for r in self.results:
            score = r.scores.get(scorer)
            if r.status != "ok":
                found[(r.case_id, r.repeat)] = 0.0
            elif score is not None and score.value is not None:
                found[(r.case_id, r.repeat)] = score.value
        return found

    def is_yes_no(self, scorer: str) -> bool:
        said = [r.scores[scorer] for r in self.results if scorer in r.scores]
        scored = [s for s in said if s.value is not None]
        return bool(scored) and all(s.passed is not None for s in scored)

    def _scorer_row(self, name: str) -> dict[str, Any]:
        values = self.values(name)
        errors = sum(
            1 for r in self.results if r.status == "ok" and (s := r.scores.get(name)) and s.error
        )
        n = len(values)
        k = self.repeats if self.repeats > 1 else None
        row: dict[str, Any] = {"scorer": name, "n": n, "errors": errors, "k": k}
        if self.is_yes_no(name):
            passed = sum(1 for v in values.values() if v >= 1.0)
            low, high = proportion_interval(passed, n)
            per_case: dict[str, list[bool]] = {}
            for (case_id, _), value in values.items():
                per_case.setdefault(case_id, []).append(value >= 1.0)
            at_k = pass_at_k(list(per_case.values()), k) if k else NAN
            kind, value = "pass rate", passed / n if n else NAN
        else:
            low, high = mean_interval(list(values.values()))
            kind, value, at_k = "mean", sum(values.values()) / n if n else NAN, NAN
        figures = {"kind": kind, "value": value, "ci_low": low, "ci_high": high}
        return row | figures | {"pass_at_k": at_k}

    def _type_rows(self) -> list[dict[str, Any]]:
        ran = [r for r in self.results if r.status == "ok"]
        rows = []
        for type_, figures in type_figures(ran).items():
            spawns = [r.types[type_].spawns if type_ in r.types else 0 for r in ran]
            row: dict[str, Any] = {"type": type_, **figures}
            for name in self.scorers:
                values = self.values(name)
                pairs = [
                    (s, values[(r.case_id, r.repeat)])
                    for r, s in zip(ran, spawns, strict=True)
                    if (r.case_id, r.repeat) in values
                ]
                row[f"corr_{name}"] = correlation([p[0] for p in pairs], [p[1] for p in pairs])
            rows.append(row)
        return rows

    # -- scoring again -------------------------------------------------------------------------

    def rescore(self, scorers: Any, *, max_concurrency: int = 8) -> Experiment:
        """Score the saved runs again with ``scorers`` (a list of functions or a dict of name
        → function), without calling the agent: from the outputs kept with each run, and from
        its trace in the history for a scorer that asks for ``trace``. A scorer of the same
        name replaces the old one's scores. Returns this experiment, saved."""
        made = as_scorers(scorers)
        if not made:
            raise ValueError("rescore needs at least one scorer")
        from nbagents.evaluation._run import run_coroutine

        run_coroutine(lambda: self._rescore(made, max_concurrency))
        return self

    async def _rescore(self, scorers: list[Scorer], max_concurrency: int) -> None:
        gate = asyncio.Semaphore(max_concurrency)
        cases = {case.id: case for case in self.cases}
        wants_trace = any(s.needs_trace for s in scorers)

        async def one(result: Result) -> Result:
            if result.status != "ok":
                return result
            async with gate:
                trace = None
                if wants_trace:
                    trace = await asyncio.to_thread(self.trace, result.case_id, result.repeat)
                given = arguments(cases[result.case_id], result.outputs, trace)
                said = await asyncio.gather(*(s.score(given) for s in scorers))
            return result.rescored({s.name: score for s, score in zip(scorers, said, strict=True)})

        saved = await asyncio.to_thread(self._saved)
        done = await asyncio.gather(*(one(saved[(r.case_id, r.repeat)]) for r in self.results))
        for result in done:
            self.add(result)
        self.scorers += [s.name for s in scorers if s.name not in self.scorers]
        await asyncio.to_thread(self.save, done)

    # -- keeping -------------------------------------------------------------------------------

    def save(self, results: Iterable[Result] = ()) -> None:
        """Write the experiment's record, and ``results``, to its history (if it has one)."""
        if self.store is None:
            return
        self.store.save_experiment(
            self.id,
            created_at=self.created_at,
            name=self.name,
            tags=self.tags,
            status=self.status,
            record=self._record(),
        )
        batch = [(r.case_id, r.repeat, r.to_json()) for r in results]
        if batch:
            self.store.save_results(self.id, batch)

    def _record(self) -> str:
        return json.dumps(
            {
                "id": self.id,
                "name": self.name,
                "tags": list(self.tags),
                "created_at": self.created_at,
                "status": self.status,
                "repeats": self.repeats,
                "scorers": self.scorers,
                "agent": self.agent,
                "cases": [case.to_dict() for case in self.cases],
            },
            ensure_ascii=False,
            default=repr,
        )

    @classmethod
    def from_saved(cls, record: str, results: Iterable[str], store: RunStore) -> Experiment:
        data = json.loads(record)
        made = cls(
            id=data["id"],
            name=data["name"],
            tags=data.get("tags", ()),
            cases=[Case.from_dict(c) for c in data["cases"]],
            repeats=int(data["repeats"]),
            scorers=data.get("scorers", ()),
            created_at=float(data["created_at"]),
            status=data["status"],
            agent=data.get("agent", ""),
            store=store,
        )
        for text in results:
            made.add(Result.from_json(text))
        return made

    # -- display -------------------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"<Experiment {self.describe()}>"

    def describe(self) -> str:
        """One line: name, cases run, failures and each scorer's headline figure."""
        results = self.results
        failed = sum(r.status != "ok" for r in results)
        parts = [
            f"{self.name!r}: {len(results)} of {len(self.cases) * self.repeats} runs "
            f"({len(self.cases)} cases x {self.repeats}), {failed} failed, {self.status}"
        ]
        for row in (self._scorer_row(name) for name in self.scorers):
            value, kind = row["value"], row["kind"]
            figure = f"{value:.0%}" if kind == "pass rate" else f"{value:.3g}"
            shown = "—" if value != value else figure
            parts.append(f"{row['scorer']} {shown}")
        return "; ".join(parts)

    def to_html(self) -> str:
        """The results view: summary, sub-agent types and every run, as self-contained HTML."""
        from nbagents.evaluation._html import experiment_html

        return experiment_html(self)


def arguments(case: Case, outputs: Any, trace: Trace | None) -> dict[str, Any]:
    """What a scorer may ask for, for one run."""
    return {
        "inputs": case.inputs,
        "outputs": outputs,
        "expected": case.expected,
        "reference_outputs": case.expected,
        "answer": answer_of(outputs),
        "trace": trace,
    }


def type_figures(ran: list[Result]) -> dict[str, dict[str, float]]:
    """Per sub-agent type, over runs that finished: the runs that spawned it, its spawns, tokens
    and cost per run, and the share of its spawns that failed."""
    found: dict[str, dict[str, float]] = {}
    for type_ in sorted({t for r in ran for t in r.types}):
        figures = [r.types[type_] for r in ran if type_ in r.types]
        spawns = sum(f.spawns for f in figures)
        costs = [f.cost for f in figures]
        found[type_] = {
            "runs_with": sum(1 for f in figures if f.spawns),
            "spawns_per_run": spawns / len(ran),
            "tokens_per_run": sum(f.tokens for f in figures) / len(ran),
            "cost_per_run": NAN if None in costs else sum(c or 0.0 for c in costs) / len(ran),
            "failure_rate": sum(f.failures for f in figures) / spawns if spawns else NAN,
        }
    return found


def load_experiment(experiment_id: str, *, store: StoreLike = None) -> Experiment:
    """Reopen a saved experiment by id (``nbagents.experiments()`` lists them), in this or any
    later process: its results, scores and, through the history, each run's trace."""
    chosen = reading_store(store)
    record, results = chosen.experiment(experiment_id)
    return Experiment.from_saved(record, results, chosen)


def experiments(*, store: StoreLike = None) -> pd.DataFrame:
    """The saved experiments, newest first: id, name, tags, status, when, cases, repeats, runs,
    failures and each scorer's headline figure (``scores``)."""
    import pandas as pd

    chosen = reading_store(store)
    rows = []
    for _, record, results in chosen.experiments():
        exp = Experiment.from_saved(record, results, chosen)
        runs = exp.results
        rows.append(
            {
                "id": exp.id,
                "name": exp.name,
                "tags": list(exp.tags),
                "status": exp.status,
                "created": pd.Timestamp(exp.created_at, unit="s", tz="UTC"),
                "cases": len(exp.cases),
                "repeats": exp.repeats,
                "runs": len(runs),
                "failed": sum(r.status != "ok" for r in runs),
                "scores": {
                    row["scorer"]: row["value"] for row in exp.summary().to_dict(orient="records")
                },
            }
        )
    columns = [
        "id",
        "name",
        "tags",
        "status",
        "created",
        "cases",
        "repeats",
        "runs",
        "failed",
        "scores",
    ]
    return pd.DataFrame(rows, columns=columns)
